"""A club's database made by an earlier main, upgraded with ``referee init``,
keeps every game: each replays and verifies, shows in ``status``, and each
game in progress plays on by mail over the suite's Postfix and Dovecot.

The databases are the fixtures of ``make_fixtures.py`` (its docstring says
how and when to make one): games of every kind, in progress and finished,
played by the command line of each main in :data:`VERIFIED`. Every later
schema change and every change to a game's rules must keep them passing.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.games import GAMES, get_game
from referee.games.base import Action, EngineError, Game, Scope, ScopeError
from referee.games.draws import SequentialDraws
from referee.store.db import SCHEMA_HEAD
from tests.mailstack import REPO_ROOT, MailStack
from tests.test_e2e import REF, write_config
from tests.upgrades.make_fixtures import FIXTURES, MAINS

#: What ``verify`` says of a game made before seed fingerprints and editions.
OLDER = ("made before openings published a seed fingerprint: the fingerprint check does not "
         "apply; begun under edition 1 of its rules (now 2), which it keeps; the replay matches")
NEWER = "the seed fingerprint matches; the replay matches"
#: Miser is at edition 3 (MI-16): its earlier games keep the edition they began under.
OLDER_MISER = OLDER.replace("(now 2)", "(now 3)")
NEWER_MISER = ("the seed fingerprint matches; begun under edition 2 of its rules (now 3), which "
               "it keeps; the replay matches")

#: Each fixture's games: tag -> (kind, status, what ``verify`` says held).
VERIFIED: dict[str, dict[str, tuple[str, str, str]]] = {
    "8f1a3fd": {
        "goofspiel-1": ("goofspiel", "finished", f"{OLDER}; 0 commitments match"),
        "pure-skill-2": ("pure-skill", "finished", f"{OLDER}; 0 commitments match"),
        "spades-3": ("spades", "finished", f"{OLDER}; 0 commitments match"),
        "miser-4": ("miser", "finished", f"{OLDER_MISER}; 0 commitments match"),
        "loatcg-5": ("loatcg", "finished", f"{OLDER}; 2 commitments match"),
        "goofspiel-6": ("goofspiel", "active", f"{OLDER}; 0 commitments match"),
        "pure-skill-7": ("pure-skill", "active", f"{OLDER}; 0 commitments match"),
        "spades-8": ("spades", "active", f"{OLDER}; 0 commitments match"),
        "miser-9": ("miser", "active", f"{OLDER_MISER}; 0 commitments match"),
        "loatcg-10": ("loatcg", "active", f"{OLDER}; 1 commitment matches"),
    },
    "ec58850": {
        "goofspiel-1": ("goofspiel", "finished", f"{NEWER}; 0 commitments match"),
        "pure-skill-2": ("pure-skill", "finished", f"{NEWER}; 0 commitments match"),
        "spades-3": ("spades", "finished", f"{NEWER}; 2 commitments match"),
        "miser-4": ("miser", "finished", f"{NEWER_MISER}; 0 commitments match"),
        "loatcg-5": ("loatcg", "finished", f"{NEWER}; 2 commitments match"),
        "goofspiel-6": ("goofspiel", "active", f"{NEWER}; 0 commitments match"),
        "pure-skill-7": ("pure-skill", "active", f"{NEWER}; 0 commitments match"),
        "spades-8": ("spades", "active", f"{NEWER}; 1 commitment matches"),
        "miser-9": ("miser", "active", f"{NEWER_MISER}; 0 commitments match"),
        "loatcg-10": ("loatcg", "active", f"{NEWER}; 1 commitment matches"),
    },
}
COUNT = re.compile(r"; (\d+) commitments? match(?:es)?$")


class Club:
    """A copy of one fixture's database beside a config of the suite's mail
    servers, driven by the real command line."""

    def __init__(self, commit: str, root: Path, stack: MailStack | None) -> None:
        self.commit = commit
        self.about: dict[str, Any] = json.loads((FIXTURES / f"{commit}.json").read_text())
        self.db = root / "referee.db"
        with sqlite3.connect(self.db) as con:
            con.executescript((FIXTURES / f"{commit}.sql").read_text(encoding="utf-8"))
        con.close()
        self.config = root / "referee.toml"
        if stack is not None:
            write_config(self.config, stack)
        else:
            self.config.write_text(
                f'[referee]\naddress = "{REF}"\ndatabase = "sqlite:///{self.db}"\n'
                f'[mailbox]\nkind = "maildir"\npath = "{root / "in"}"\n'
                f'[smtp]\nkind = "maildir"\npath = "{root / "out"}"\n', encoding="utf-8")
        #: The time of the fixture's last pass: the club's clock goes on from there.
        self.now = datetime.fromisoformat(self.about["now"]) + timedelta(minutes=5)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``referee ARGS`` in a process of its own, as an operator runs it."""
        return subprocess.run([sys.executable, "-m", "referee.cli", "-c", str(self.config),
                               *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=300)

    def init(self) -> None:
        done = self.run("init")
        assert (done.returncode, done.stdout, done.stderr) == (
            0, f"database ready: sqlite:///{self.db}\n", "")
        with sqlite3.connect(self.db) as con:
            (head,) = con.execute("SELECT version_num FROM alembic_version").fetchone()
        con.close()
        assert head == SCHEMA_HEAD and self.about["schema"] <= head

    def games(self) -> dict[str, tuple[str, str, int]]:
        """tag -> (kind, status, step)."""
        with sqlite3.connect(self.db) as con:
            rows = con.execute("SELECT tag, kind, status, step FROM games").fetchall()
        con.close()
        return {tag: (kind, status, step) for tag, kind, status, step in rows}

    def state(self, tag: str) -> tuple[str, Any, list[tuple[int, str, bool]]]:
        """The game's kind, its stored state, and its seats: (position,
        address or "", bot)."""
        with sqlite3.connect(self.db) as con:
            game_id, kind, state = con.execute(
                "SELECT id, kind, state FROM games WHERE tag = ?", (tag,)).fetchone()
            seats = con.execute(
                "SELECT seats.position, coalesce(players.address, ''), seats.bot FROM seats "
                "LEFT JOIN players ON players.id = seats.player_id WHERE seats.game_id = ? "
                "ORDER BY seats.position", (game_id,)).fetchall()
        con.close()
        return kind, json.loads(state), [(p, a, bool(b)) for p, a, b in seats]

    def sources(self, tag: str) -> list[tuple[int, str]]:
        """(seat, source) of each action of the game's log, in order."""
        with sqlite3.connect(self.db) as con:
            rows = con.execute(
                "SELECT actions.seat, actions.source FROM actions JOIN games ON games.id = "
                "actions.game_id WHERE games.tag = ? ORDER BY actions.step", (tag,)).fetchall()
        con.close()
        return [(seat, source) for seat, source in rows]


def replays(tag: str, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``referee replay TAG``: the game rebuilt from its seed and action log
    (JSON), then that it matches; exit 0."""
    assert main(["-c", str(config), "replay", tag]) == 0
    out = capsys.readouterr().out
    state, said = out.rsplit("\n}\n", 1)
    assert isinstance(json.loads(state + "\n}"), dict)
    assert said == f"{tag}: the replay matches the stored state\n"


def verifies(tag: str, config: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``referee verify TAG`` exits 0: what it says held, then ``verified``."""
    code = main(["-c", str(config), "verify", tag])
    out = capsys.readouterr().out
    assert code == 0, out
    held, end = out.split("\n", 1)
    assert end == "verified\n"
    assert held.startswith(f"{tag}: ")
    return held.removeprefix(f"{tag}: ")


def shows(club: Club, capsys: pytest.CaptureFixture[str]) -> str:
    """``referee status`` lists every game with its kind and status."""
    assert main(["-c", str(club.config), "status"]) == 0
    out = capsys.readouterr().out
    for tag, (kind, status, _) in club.games().items():
        assert re.search(rf"^{re.escape(tag)}  \({kind}, {status}\)", out, re.M), out
    return out


@pytest.fixture(params=sorted(MAINS))
def commit(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_game_of_an_earlier_main_replays_verifies_and_shows_after_init(
        commit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    club = Club(commit, tmp_path, None)
    games = VERIFIED[commit]
    assert {tag: (kind, status) for tag, (kind, status, _) in club.games().items()} == {
        tag: (kind, status) for tag, (kind, status, _) in games.items()}
    club.init()
    for tag, (_, _, held) in games.items():
        replays(tag, club.config, capsys)
        assert verifies(tag, club.config, capsys) == held
    shows(club, capsys)


def test_a_fixture_holds_games_of_every_kind_in_progress_and_finished() -> None:
    kinds = set(GAMES.sources())  # every kind installed
    for commit, games in VERIFIED.items():
        about = json.loads((FIXTURES / f"{commit}.json").read_text())
        assert {g["tag"]: (g["kind"], g["status"]) for g in about["games"]} == {
            tag: (kind, status) for tag, (kind, status, _) in games.items()}
        for status in ("active", "finished"):
            built_in = {kind for kind, s, _ in games.values() if s == status}
            assert built_in == {"goofspiel", "pure-skill", "spades", "miser", "loatcg"}
            assert built_in <= kinds


@pytest.fixture
def played(mailstack: MailStack) -> Iterator[MailStack]:
    mailstack.clear_all()
    yield mailstack


def test_every_game_in_progress_plays_on_by_mail_after_init(
        commit: str, played: MailStack, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each player who owes a move in a game in progress (in a tournament,
    where a member owes none, each member) mails one to the referee over
    Postfix; one ``referee poll`` reads them over IMAP: every game in
    progress has a move more from a player's mail, each writer is answered,
    and every game still replays and verifies."""
    stack = played
    club = Club(commit, tmp_path, stack)
    club.init()
    before = club.games()
    going = [tag for tag, (_, status, _) in before.items() if status == "active"]
    rng = random.Random(commit)
    written: dict[str, list[int]] = {}
    writers: set[str] = set()
    sent = 0
    for tag in going:
        kind, stored, seats = club.state(tag)
        engine = get_game(kind)
        state = engine.load(stored)
        humans = {pos: address for pos, address, bot in seats if address and not bot}
        owing = sorted({p.seat for p in engine.pending(state)} & set(humans)) or sorted(humans)
        for seat in owing:
            action = a_move(engine, state, seat, rng)
            if action is None:
                continue
            to = [REF]
            try:
                engine.accepts(action, Scope.SECRET)
            except ScopeError:
                to += [a for pos, a in humans.items() if pos != seat]
            msg = EmailMessage()
            msg["From"] = humans[seat]
            msg["To"] = ", ".join(to)
            msg["Subject"] = f"Re: [{tag}] my move"
            # Written at the club's time, as the referee's clock reads it.
            msg["Date"] = format_datetime(club.now.replace(tzinfo=None))
            msg["Message-ID"] = make_msgid(domain="mua.example.test")
            msg.set_content(f"{engine.read_as(action)}\n")
            stack.send(msg, humans[seat], to)
            sent += sum(r == REF for r in to)
            written.setdefault(tag, []).append(seat)
            writers.add(humans[seat])
    assert set(written) == set(going)  # a move for every game in progress
    stack.wait_for("referee", sent)
    done = club.run("poll", "--now", club.now.isoformat())
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    after = club.games()
    for tag in going:
        step = before[tag][2]
        assert after[tag][2] > step, f"{tag} did not move"
        moves = club.sources(tag)[step:]
        # The players' moves came first; bots may have moved after them.
        assert {seat for seat, source in moves if source == "player"} == set(written[tag]), \
            (tag, moves)
    for address in writers:
        assert stack.wait_for(address.split("@")[0], 1), address
    for tag, (_, _, held) in VERIFIED[commit].items():
        replays(tag, club.config, capsys)
        now_held = verifies(tag, club.config, capsys)
        count = COUNT.search(held)
        assert count is not None
        assert now_held == COUNT.sub(_counted(now_held), held)
        assert int(_counted(now_held).split()[1]) >= int(count.group(1))
    shows(club, capsys)


def a_move(engine: Game[Any], state: Any, seat: int, rng: random.Random) -> Action | None:
    """A move a random bot would make for ``seat`` that changes the game
    (not a question like ``hand``), as a player writes it, the written line
    read back to a move the rules take."""
    for _ in range(50):
        try:
            action = engine.random_bot_action(state, seat, SequentialDraws(rng))
            if action.verb in engine.untimed_verbs:
                continue
            written = engine.parse(engine.read_as(action))
            if written is None:
                continue
            engine.apply(state, seat, written, SequentialDraws(random.Random(0)))
        except EngineError:
            continue
        return action
    return None


def _counted(held: str) -> str:
    """The commitments part of what verify said held: ``; 2 commitments match``."""
    found = COUNT.search(held)
    assert found is not None, held
    return found.group(0)
