"""A game package lost at an upgrade stops only its own games: over the real
Postfix and Dovecot, with the referee and the example game (``pbm-highcard``)
installed from wheels in a fresh virtual environment, as a club would.

With the package uninstalled, a mail to the Goofspiel game is refereed and
its deadline fires; the mail to the High Card game waits in ``inbound``,
unanswered, and its deadlines wait; ``poll``, ``check``, ``status``,
``replay``, ``verify`` and ``pages`` each say the line that names the kind
and the package to install. Installed again, the waiting mail is refereed
and answered once, and the game's deadlines fire.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.service import now_utc
from tests.mailstack import MailStack
from tests.test_check import write
from tests.test_e2e import REF
from tests.test_install import _run, fresh_venv, wheel  # noqa: F401 (wheel: a fixture)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pbm-highcard"
#: What every command names while the package is away.
GONE = ("its game package is not installed (kind highcard, from the distribution "
        "pbm-highcard: pip install pbm-highcard)")


@pytest.fixture(scope="module")
def highcard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example game's wheel, built from a copy outside the checkout."""
    source = tmp_path_factory.mktemp("example") / "pbm-highcard"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.egg-info", "build"))
    out = tmp_path_factory.mktemp("highcard-dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "-w", out, source], cwd=source)
    (built,) = out.glob("pbm_highcard-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, highcard: Path,  # noqa: F811
         tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment for the module: the referee's wheel and the game's."""
    return fresh_venv(tmp_path_factory, wheel, highcard)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _pip(venv: Path, *args: str | Path) -> None:
    _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args], cwd=venv)


def _ref(venv: Path, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` as the club runs it, whatever its exit code."""
    return subprocess.run([str(venv / "bin" / "referee"), "-c", "referee.toml", *args],
                          cwd=work, env=_env(), capture_output=True, text=True, timeout=120,
                          check=False)


def _mail(stack: MailStack, sender: str, subject: str, text: str, mid: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = stack.address(sender), REF, subject
    msg["Message-ID"] = mid
    msg.set_content(text)
    stack.send(msg, stack.address(sender), REF)


def _text(msg: EmailMessage) -> str:
    body = msg.get_body(("plain",))
    assert body is not None
    return str(body.get_content())


def _answers(stack: MailStack, user: str, mid: str) -> list[str]:
    return [_text(m) for m in stack.fetch_all(user) if m["In-Reply-To"] == mid]


def test_a_lost_game_package_stops_only_its_games_and_its_mail_waits_for_it(
        venv: Path, highcard: Path, mailstack: MailStack, tmp_path: Path) -> None:
    mailstack.clear_all()  # the stack is the session's: mail of earlier tests would be read
    work = tmp_path / "club"
    work.mkdir()
    config = write(work / "referee.toml", mailstack)
    config.write_text(config.read_text(encoding="utf-8") + '[web]\npath = "web"\n',
                      encoding="utf-8")
    alice, bob, carol = (mailstack.address(u) for u in ("alice", "bob", "carol"))
    start = now_utc()

    def at(hours: float) -> str:
        return (start + timedelta(hours=hours)).isoformat()

    assert _ref(venv, work, "init").returncode == 0
    made = [_ref(venv, work, "game", "new", "--at-once", kind, "--player", alice, "--player", other,
                 "--now", at(0)) for kind, other in (("highcard", bob), ("goofspiel", carol))]
    assert [r.stdout for r in made] == ["highcard-1\n", "goofspiel-2\n"]
    hand = next(re.search(r"^Your hand: (.+)$", _text(m), re.M)
                for m in mailstack.wait_for("alice", 2)
                if "[highcard-1]" in str(m["Subject"]) and "Your hand:" in _text(m))
    assert hand is not None
    card = hand.group(1).split()[0]

    _pip(venv, "uninstall", "-q", "-y", "pbm-highcard")
    _mail(mailstack, "alice", "Re: [highcard-1] your card", f"play {card}\n", "<hc@x.test>")
    _mail(mailstack, "alice", "Re: [goofspiel-2] your bid", "bid 6\n", "<gs@x.test>")
    mailstack.wait_for("referee", 2)

    # The pass referees Goofspiel, keeps the High Card mail, and says so as check does.
    poll = _ref(venv, work, "poll", "--now", at(1))
    assert (poll.returncode, poll.stdout, poll.stderr) == (
        78, "", f"referee: 1 active game(s) of kind highcard wait, with 1 mail(s): {GONE}\n")
    (answer,) = _answers(mailstack, "alice", "<gs@x.test>")
    assert "DONE (bid 6)" in answer
    assert _answers(mailstack, "alice", "<hc@x.test>") == []

    status = _ref(venv, work, "status")
    assert status.returncode == 0, status.stderr
    assert f"\nhighcard-1  (highcard, active)  round 1\n  highcard-1: {GONE}\n" in status.stdout
    assert re.search(r"^inbound: 0 failed, 1 waiting for their game's package \(see: "
                     r"referee inbound\)$", status.stdout, re.M), status.stdout
    inbound = _ref(venv, work, "inbound")
    assert f"        waiting: highcard-1: {GONE}\n" in inbound.stdout

    check = _ref(venv, work, "check")
    assert check.returncode == 78, check.stdout
    assert (f"games    FAIL 1 active game(s) of kind highcard wait, with 1 mail(s): {GONE}\n"
            in check.stdout)
    for audit in ("replay", "verify"):
        run = _ref(venv, work, audit, "highcard-1")
        assert (run.returncode, run.stdout, run.stderr) == (
            78, "", f"referee: highcard-1: {GONE}\n"), audit
    assert _ref(venv, work, "replay", "goofspiel-2").returncode == 0

    pages = _ref(venv, work, "pages", "pages")
    assert (pages.returncode, pages.stdout, pages.stderr) == (
        78, "1 game page(s) and index.html written to pages\n",
        f"referee: highcard-1: {GONE}; its page is left as it was\n")
    assert sorted(p.name for p in (work / "pages").glob("*.html")) == [
        "goofspiel-2.html", "index.html"]
    index = (work / "pages" / "index.html").read_text(encoding="utf-8")
    assert "<td>active, waiting for its package</td>" in index

    # Past every deadline: Goofspiel's fire, High Card's wait (no bot moves for it).
    late = _ref(venv, work, "-v", "poll", "--now", at(24 * 4))
    assert late.returncode == 78 and "timeouts 1," in late.stdout, late.stdout
    assert not [m for m in mailstack.fetch_all("bob") if "Round 1" in str(m["Subject"])]

    # Back: the mail that waited is refereed and answered once; the deadlines fire.
    _pip(venv, "install", "-q", "--no-deps", "--no-index", highcard)
    back = _ref(venv, work, "-v", "poll", "--now", at(24 * 4 + 1))
    assert back.returncode == 0 and not re.search("^referee:", back.stderr, re.M), back.stderr
    assert "read again 1, timeouts 1," in back.stdout, back.stdout
    (answer,) = _answers(mailstack, "alice", "<hc@x.test>")
    assert f"DONE (play {card})" in answer
    again = _ref(venv, work, "poll", "--now", at(24 * 4 + 2))
    assert (again.returncode, again.stderr) == (0, "")
    assert len(_answers(mailstack, "alice", "<hc@x.test>")) == 1
    status = _ref(venv, work, "status", "highcard-1")
    assert "round 2" in status.stdout and "its game package" not in status.stdout
    assert "game's package" not in status.stdout  # no mail waits
