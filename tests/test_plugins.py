"""A club's own game as a package of its own: the example in
``examples/pbm-highcard`` is installed into a fresh virtual environment
beside the referee's wheel, listed by ``referee games``, played to its end
by Maildir through the command line, and its own tests pass with the kit.
A game package that fails to load, or clashes with another kind, is one
line, and the other games play on.

Offline, as ``tests/test_install.py``: the wheels are built without build
isolation and installed without their dependencies, which the new
environment reads from the project's own ``.venv``.
"""

from __future__ import annotations

import json
import mailbox
import os
import re
import shutil
import sys
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest

import referee.games
from referee.cli import main
from referee.games import KINDS, GameUnavailable, PackageFault, Registry
from referee.games.base import ParseError
from tests.test_install import _run, fresh_venv, wheel  # noqa: F401 (wheel: a fixture)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pbm-highcard"
#: The last round's report says the result.
OVER = r"wins the game\.|there is no winner\."
CLUB = ('[referee]\naddress = "referee@club.test"\n'
        '[mailbox]\nkind = "maildir"\npath = "in"\n'
        '[smtp]\nkind = "maildir"\npath = "out"\n')


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """A new environment with the referee's wheel and the example game,
    each installed as a club would, from a copy outside the checkout."""
    source = tmp_path_factory.mktemp("example") / "pbm-highcard"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.egg-info", "build"))
    return fresh_venv(tmp_path_factory, wheel, source)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_referee_games_lists_the_installed_game_and_its_package(venv: Path,
                                                                tmp_path: Path) -> None:
    out = _run([venv / "bin" / "referee", "games"], cwd=tmp_path, env=_env())
    assert out.stderr == ""
    assert "highcard: High Card, 2 to 5 players (from the package pbm-highcard)" in out.stdout
    assert "goofspiel: Goofspiel, 2 players (built in)" in out.stdout
    listed = json.loads(_run([venv / "bin" / "referee", "games", "--json"], cwd=tmp_path,
                             env=_env()).stdout)
    (highcard,) = [g for g in listed if g["kind"] == "highcard"]
    assert highcard["package"] == "pbm-highcard" and highcard["seats"] == [2, 5]
    assert highcard["options"]["cards"] == {"default": 5, "help": "cards in each hand, 2 to 10"}


def _mails(box: Path, seen: set[str]) -> list[EmailMessage]:
    """The mail in the Maildir ``box`` not read before, in the order sent."""
    out = []
    folder = mailbox.Maildir(box, create=True)
    for key in folder.iterkeys():
        if key not in seen:
            seen.add(key)
            msg = message_from_bytes(folder.get_bytes(key), policy=default)
            assert isinstance(msg, EmailMessage)
            out.append(msg)
    return sorted(out, key=lambda m: int(str(m["Message-ID"]).split(".")[1]))


def test_the_installed_game_is_played_to_its_end_by_maildir_through_the_cli(
        venv: Path, tmp_path: Path) -> None:
    """Each player reads their hand in their own mail and answers with a
    card; ``referee poll`` referees; the last report names the winner, and
    ``referee verify`` replays the game from its seed; a player verifies it
    from their own mailbox (``referee verify TAG --mail``)."""
    referee = [venv / "bin" / "referee"]
    work = tmp_path / "club"
    work.mkdir()
    (work / "referee.toml").write_text(CLUB, encoding="utf-8")
    _run([*referee, "init"], cwd=work, env=_env())
    now = "2026-03-02T12:00:00"
    tag = _run([*referee, "game", "new", "--at-once", "highcard", "--player",
                "Alice <alice@club.test>",
                "--player", "Bob <bob@club.test>", "--option", "cards=3", "--seed", "club",
                "--now", now], cwd=work, env=_env()).stdout.strip()
    assert tag == "highcard-1"
    inbox = mailbox.Maildir(work / "in", create=True)
    seen: set[str] = set()
    reports: list[str] = []
    for hour in range(1, 10):
        _run([*referee, "poll", "--now", now], cwd=work, env=_env())
        for msg in _mails(work / "out", seen):
            text = msg.get_body(("plain",)).get_content()  # type: ignore[union-attr]
            if "takes the round" in text and "alice@" in str(msg["To"]):
                reports.append(text)  # the round's report heads each player's mail
            if hand := re.search(r"^Your hand: (.+)$", text, re.M):
                reply = EmailMessage()
                reply["From"], reply["To"] = msg["To"], "referee@club.test"
                reply["Subject"] = f"Re: {msg['Subject']}"
                reply.set_content(f"play {hand.group(1).split()[-1]}\n")
                inbox.add(reply.as_bytes())
        if reports and re.search(OVER, reports[-1]):
            break
        now = f"2026-03-02T{12 + hour}:00:00"
    rounds = {n for r in reports for n in re.findall(r"^ROUND (\d+)$", r, re.M)}
    assert rounds == {"1", "2", "3"}, reports  # a report a round, of three
    assert re.search(OVER, reports[-1]) and "THE SEED" in reports[-1]
    (game,) = json.loads(_run([*referee, "status", tag, "--json"], cwd=work,
                              env=_env()).stdout)
    assert game["status"] == "finished"
    assert _run([*referee, "verify", tag], cwd=work, env=_env()).stdout == (
        f"{tag}: the seed fingerprint matches; the replay matches; 0 commitments match\n"
        "verified\n")
    # Alice verifies the game from her own mailbox: no database, no config.
    alice = mailbox.mbox(tmp_path / "alice.mbox", create=True)
    for key in mailbox.Maildir(work / "out", create=False).iterkeys():
        raw = mailbox.Maildir(work / "out", create=False).get_bytes(key)
        if "alice@club.test" in str(message_from_bytes(raw, policy=default)["To"]):
            alice.add(raw)
    alice.close()
    assert _run([*referee, "verify", tag, "--mail", tmp_path / "alice.mbox"], cwd=tmp_path,
                env=_env()).stdout == "verified\n"


def test_the_example_passes_its_own_tests_with_the_kit(venv: Path, tmp_path: Path) -> None:
    """The example's tests, run from a copy of it in the new environment:
    the referee's contract, through ``referee.testing`` as installed."""
    tests = tmp_path / "pbm-highcard"
    shutil.copytree(EXAMPLE, tests, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.rmtree(tests / "pbm_highcard")  # the installed package is the one tested
    out = _run([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "-p", "no:xdist", "tests"], cwd=tests, env=_env())
    # The kit's contract tests, the mailbox check, the start by mail and how
    # a card played at the deadline is said among them.
    assert re.search(r"\b14 passed\b", out.stdout), out.stdout


# -- a broken game package ----------------------------------------------------------


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    """An installed package whose entry point names a module that is not
    there, and another that declares a built-in kind: the registry as the
    referee would have it."""
    site = tmp_path / "site"
    for name, lines in (("broken_game", "nowhere = no_such_module:Game\n"),
                        ("clashing_game", "goofspiel = clashing_game:Goofspiel\n")):
        info = site / f"{name}-0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}"
                                       "\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[pbm_referee.games]\n{lines}")
    monkeypatch.syspath_prepend(str(site))
    registry = Registry(KINDS)
    monkeypatch.setattr(referee.games, "GAMES", registry)
    return registry


def test_a_broken_or_clashing_game_package_is_one_line_and_the_rest_play(
        broken: Registry) -> None:
    problems = broken.problems()
    assert len(problems) == 2, problems
    assert "the game package clashing-game declares kind 'goofspiel', which the referee " \
           "has already (built in)" in problems[0]
    assert "the game package broken-game failed to load kind 'nowhere' " \
           "(no_such_module:Game): no module named 'no_such_module'" in problems[1]
    with pytest.raises(GameUnavailable, match="broken-game"):
        broken["nowhere"]
    assert broken["goofspiel"].title == "Goofspiel"  # the built-in one
    assert "nowhere" in broken and "nowhere" not in dict(broken.items())


def test_the_cli_says_each_broken_package_once_and_plays_the_other_games(
        broken: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "referee.toml"
    config.write_text(CLUB, encoding="utf-8")
    assert main(["--config", str(config), "init"]) == 0
    assert main(["games"]) == 1  # a kind cannot be loaded
    out, err = capsys.readouterr()
    assert "nowhere: cannot be loaded (from the package broken-game)" in out
    assert "goofspiel: Goofspiel, 2 players (built in)" in out
    assert len(err.splitlines()) == 2 and all("game package" in ln for ln in err.splitlines())
    cli = ["--config", str(config)]
    assert main([*cli, "game", "new", "--at-once", "nowhere", "--player", "a@club.test",
                 "--player", "b@club.test"]) == 1
    assert "broken-game failed to load" in capsys.readouterr().err
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "a@club.test",
                 "--player", "b@club.test"]) == 0
    for sub in ("cur", "new", "tmp"):
        (tmp_path / "in" / sub).mkdir(parents=True, exist_ok=True)
    assert main([*cli, "poll"]) == 0
    assert any((tmp_path / "out" / "new").iterdir())  # the goofspiel opening went out


def test_the_built_in_kinds_are_declared_in_the_entry_point_group_too() -> None:
    """One path finds every kind: pyproject.toml declares the built-in five
    as a game package declares its own, the same as ``KINDS``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["entry-points"][referee.games.GROUP]
    assert declared == {kind: f"{module}:{name}" for kind, (module, name) in KINDS.items()}


def test_a_game_package_installed_while_the_daemon_runs_is_found_for_its_waiting_mail(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon reads the packages once, at its start: a kind whose mail
    waits is looked for again (``guests.serves_again``, each minute), so a
    package installed meanwhile serves it without a restart."""
    from referee.service.play import guests

    registry = Registry(KINDS)
    monkeypatch.setattr(referee.games, "GAMES", registry)
    assert "late" not in registry  # the packages are read now: none declares it
    missing = guests.cannot_serve("late", {})
    assert missing is not None and missing.what == (
        "its game package is not installed (kind late: install the package that declares "
        "it under the entry-point group pbm_referee.games)")
    assert guests.cannot_serve("late", {"late": "pbm-late"}).what == (  # type: ignore[union-attr]
        "its game package is not installed (kind late, from the distribution pbm-late: "
        "pip install pbm-late)")
    site = tmp_path / "site"
    info = site / "pbm_late-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pbm-late\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pbm_referee.games]\nlate = late_game:Late\n")
    (site / "late_game.py").write_text("from referee.games.goofspiel import Goofspiel\n\n\n"
                                       "class Late(Goofspiel):\n    kind = 'late'\n")
    monkeypatch.syspath_prepend(str(site))
    assert "late" not in registry  # read once: not seen unless looked for again
    assert guests.serves_again("late")
    assert registry.sources()["late"].package == "pbm-late"
    assert guests.cannot_serve("late", {}) is None
    assert registry["late"].kind == "late"


# -- a game package is a guest --------------------------------------------------------

GUEST = '''\
import sys

from referee.games.base import ParseError
from referee.games.goofspiel import Goofspiel

if {exit}:
    sys.exit(3)


class Guest(Goofspiel):
    kind = "guest"

    def parse(self, line):
        if line == "bid 99":
            raise ParseError("Bid a card of your hand.")
        if line == "bid 7":
            raise ValueError("seven")
        return super().parse(line)
'''


@pytest.fixture
def guest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Registry, Path]:
    """The registry as the referee has it, with a package ``pbm-guest``
    installed (kind ``guest``, module ``guest_game``); and its module's file."""
    site = tmp_path / "site"
    info = site / "pbm_guest-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pbm-guest\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pbm_referee.games]\nguest = guest_game:Guest\n")
    module = site / "guest_game.py"
    module.write_text(GUEST.format(exit=False))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "guest_game", raising=False)
    registry = Registry(KINDS)
    monkeypatch.setattr(referee.games, "GAMES", registry)
    return registry, module


def test_a_package_that_exits_at_import_is_its_line_and_the_referee_goes_on(
        guest: tuple[Registry, Path]) -> None:
    registry, module = guest
    module.write_text(GUEST.format(exit=True))
    with pytest.raises(GameUnavailable) as caught:
        registry["guest"]
    assert str(caught.value) == ("the game package pbm-guest failed to load kind 'guest' "
                                 "(guest_game:Guest): SystemExit: 3")
    assert registry["goofspiel"].title == "Goofspiel"


def test_what_a_package_raises_is_its_fault_but_the_players_errors_are_theirs(
        guest: tuple[Registry, Path]) -> None:
    registry, _ = guest
    engine = registry["guest"]
    assert engine.parse("bid 5") is not None and engine.title == "Goofspiel"
    with pytest.raises(ParseError, match="Bid a card of your hand"):
        engine.parse("bid 99")  # the player's mistake, answered as such
    assert registry.faults() == {} and registry.served() == ["guest"]
    with pytest.raises(PackageFault) as caught:
        engine.parse("bid 7")
    line = ("the game package pbm-guest raised in parse (kind 'guest', guest_game:Guest): "
            "ValueError: seven")
    assert (str(caught.value), caught.value.kind, caught.value.package) == (
        line, "guest", "pbm-guest")
    assert registry.faults() == {"guest": line} and registry.served() == []
    assert registry.broken("guest") == line
    with pytest.raises(GameUnavailable, match="raised in parse"):
        registry["guest"]  # for the rest of the process
    assert registry["goofspiel"].parse("bid 7") is not None


def test_a_package_template_that_fails_is_its_fault_a_built_in_one_ours(
        guest: tuple[Registry, Path]) -> None:
    registry, _ = guest
    registry["guest"]
    with pytest.raises(ValueError, match="ours"), registry.guard("bidding", "its template"):
        raise ValueError("ours")  # Goofspiel's own templates: a fault of the referee's
    with pytest.raises(PackageFault, match=r"raised in its template x.txt \(kind 'guest'"), \
            registry.guard("guest", "its template x.txt"):
        raise ValueError("theirs")
    assert "guest" in registry.faults()


def test_a_mended_package_is_loaded_anew_without_a_restart(
        guest: tuple[Registry, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon: a package that failed is imported again once its files
    change (reinstalled, upgraded), and its mail is read again."""
    registry, module = guest
    monkeypatch.setattr(referee.games, "LOOK_AGAIN", 0.0)
    with pytest.raises(PackageFault):
        registry["guest"].parse("bid 7")
    with pytest.raises(GameUnavailable):
        registry["guest"]  # nothing changed
    module.write_text(GUEST.format(exit=False).replace('"seven"', '"mended"')
                      .replace('line == "bid 7"', 'line == "never"'))
    later = module.stat().st_mtime + 2
    os.utime(module, (later, later))
    assert registry.broken("guest") is None
    assert registry["guest"].parse("bid 7") is not None
    assert registry.faults() == {}
