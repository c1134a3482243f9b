"""Remake the upgrade fixtures: a club's database as an earlier main left it.

Each fixture is the SQLite database of a club run by the command line of
one earlier main, as an operator runs it: ``init``, ``game new`` for games
of every kind, the players' mails written into the referee's Maildir and
``poll --now``, a deadline passing now and then (the referee moves for the
silent), an operator's ``game resign``. Of each kind one game is played to
its end and one is left in progress. The fixture is kept as text:

* ``fixtures/COMMIT.sql``: the database, as SQL (Python's ``iterdump``,
  what ``sqlite3 DB .dump`` writes);
* ``fixtures/COMMIT.json``: the main's commit and schema, the time of its
  last pass, and each game's tag, kind and status.

``tests/upgrades/test_upgrades.py`` loads each one, upgrades it with the
real ``referee init``, replays and verifies every game and plays each game
in progress on by mail over the test suite's mail servers. The players are
the mail stack's (alice@example.test ... frank@example.test) and the referee
is referee@example.test, so the same addresses work there.

How: each main's tree is taken out of git (``git archive COMMIT``, the
files ``git worktree add --detach /tmp/old-COMMIT COMMIT`` would lay out,
without touching the repository's list of worktrees) into a temporary
folder, and its command line is run as ``python -m referee.cli`` with
PYTHONPATH pointing at that tree. A dependency the main had that this venv
lacks (``html2text`` of 8f1a3fd) is installed there first with ``pip
install --target``. The moves the players write are those a random bot
would make, chosen by the old main's own engines (``bot_action``,
``read_as``), by this script run under the old tree with ``--moves``.
Seeds, options and the players' choices are fixed, so a remade fixture
plays the same games; Message-IDs, private reply addresses and keys differ.

When: add a fixture for every release (a main the clubs' operators run),
once it is made: put its commit in :data:`MAINS`, run from the checkout::

    PYTHONPATH=$PWD .venv/bin/python tests/upgrades/make_fixtures.py COMMIT

and add its games, with what ``referee verify`` says of each, to
``VERIFIED`` in test_upgrades.py. No COMMIT remakes every one of
:data:`MAINS`, which a kept fixture never needs: it is what that release
left, and stays so, so that every later schema change and every change to
a game's rules is tried against it. A main takes 5 to 15 minutes (each
pass is a process of the old main). If a main cannot be run as it was (a
dependency gone from the index), keep its fixture as it is.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import mailbox
import os
import random
import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from io import BytesIO
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
REPO = HERE.parent.parent

#: The mains whose databases are kept, oldest first: commit -> what it was.
MAINS: dict[str, str] = {
    "8f1a3fd": "schema 0009: one generator per action (counter draws), no seed "
               "fingerprint, no per-seat reply addresses, no aliases",
    "ec58850": "schema 0013: keyed draws, seed fingerprints, Spades' hand "
               "commitments, per-seat reply addresses",
}

DOMAIN = "example.test"
REFEREE = f"referee@{DOMAIN}"
#: The mail stack's players (tests/mailstack.py), in seat order.
ALICE, BOB, CAROL, DAVE, ERIN, FRANK = (f"{n.capitalize()} <{n}@{DOMAIN}>" for n in
                                        ("alice", "bob", "carol", "dave", "erin", "frank"))
T0 = datetime(2026, 3, 2, 12, 0)
#: Longer than any deadline the games have (the config's default, 3 days).
PAST_DEADLINES = timedelta(days=3, hours=1)

#: Short Scoring Instructions for the tournament played to its end.
SHORT_INSTRUCTIONS = "1. points ore 1\n2. points wool 2\n3. set ore wool lumber 5\n"


#: The games, in the order made: (kind, players, bots, options, played to
#: its end). Those played to the end take short options.
GAMES: tuple[tuple[str, tuple[str, ...], int, dict[str, str], bool], ...] = (
    ("goofspiel", (ALICE, BOB), 0, {"cards": "4"}, True),
    ("pure-skill", (ALICE, BOB, CAROL), 0, {"cards": "4"}, True),
    ("spades", (ALICE,), 3, {"target": "60"}, True),
    ("miser", (ALICE, BOB, CAROL), 0, {"pennies": "3"}, True),
    ("loatcg", (ALICE, BOB), 0, {"instructions": SHORT_INSTRUCTIONS}, True),
    ("goofspiel", (ALICE, BOB), 0, {"cards": "13"}, False),
    ("pure-skill", (CAROL, DAVE, ERIN), 0, {}, False),
    ("spades", (ALICE, BOB, CAROL, DAVE), 0, {}, False),
    ("miser", (BOB, CAROL, DAVE), 1, {}, False),
    ("loatcg", (ERIN, FRANK), 1, {}, False),
)


# -- the old main's side: run under its tree with --moves -------------------------


def moves(db: Path, tags: Sequence[str], seed: int) -> list[dict[str, Any]]:
    """What the players of the games ``tags`` write next: the move a random
    bot would make for each seat that owes one (in a tournament, where a
    member owes nothing, one member now and then), by the engines of the
    tree this runs under. Each: tag, seat, the line, and whether it goes to
    the whole table (a move the rules do not take in secret)."""
    try:
        from referee.games import get_game  # ec58850 and later
        from referee.games.base import Scope, ScopeError
        from referee.games.draws import SequentialDraws
        wrap: Any = SequentialDraws
    except ImportError:
        from referee.engine import get_game  # type: ignore[no-redef]  # 8f1a3fd
        from referee.engine.base import Scope, ScopeError  # type: ignore[no-redef]
        wrap = None
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    with sqlite3.connect(db) as con:
        for tag in tags:
            game_id, kind, raw = con.execute(
                "SELECT id, kind, state FROM games WHERE tag = ? AND status = 'active'",
                (tag,)).fetchone() or (None, None, None)
            if game_id is None:
                continue
            engine = get_game(kind)
            state = engine.load(json.loads(raw))
            humans = {pos for pos, in con.execute(
                "SELECT position FROM seats WHERE game_id = ? AND NOT bot "
                "AND player_id IS NOT NULL", (game_id,))}
            owing = sorted({p.seat for p in engine.pending(state)} & humans)
            if not owing and humans and rng.random() < 0.5:
                owing = [rng.choice(sorted(humans))]
            for seat in owing:
                try:
                    action = engine.bot_action(state, seat, wrap(rng) if wrap else rng)
                except Exception:  # the old engine found nothing this seat may do now
                    continue
                try:
                    engine.accepts(action, Scope.SECRET)
                    public = False
                except ScopeError:
                    public = True
                out.append({"tag": tag, "seat": seat, "line": engine.read_as(action),
                            "public": public})
    return out


# -- this checkout's side: drive the old main's command line ----------------------


class OldMain:
    """An earlier main's tree in ``tree``, and a club run by its command line
    in ``club`` (a Maildir in, a dry run out, SQLite)."""

    def __init__(self, commit: str, tree: Path, deps: Path, club: Path) -> None:
        self.commit, self.tree, self.club = commit, tree, club
        self.env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{deps}"}
        self.config = club / "referee.toml"
        self.config.write_text(
            f'[referee]\naddress = "{REFEREE}"\nname = "Club Referee"\n'
            f'database = "sqlite:///{club / "referee.db"}"\n'
            f'[mailbox]\nkind = "maildir"\npath = "{club / "in"}"\n'
            f'[smtp]\nkind = "maildir"\npath = "{club / "out"}"\n', encoding="utf-8")
        self.now = T0
        self.rng = random.Random(f"fixtures-{commit}")
        self.sent = 0

    def cli(self, *args: str) -> str:
        """``referee ARGS`` as the old main; what it printed. A failure stops
        the script."""
        done = subprocess.run([sys.executable, "-m", "referee.cli", "-c", str(self.config),
                               *args], cwd=self.club, env=self.env, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{self.commit}: referee {' '.join(args)} exited "
                             f"{done.returncode}: {done.stdout}{done.stderr}")
        return done.stdout

    def new_game(self, kind: str, players: Sequence[str], bots: int,
                 options: dict[str, str]) -> str:
        args = ["game", "new", kind, "--seed", f"fixture-{kind}-{len(self.games())}",
                "--now", self.now.isoformat()]
        for address in players:
            args += ["--player", address]
        args += ["--bot"] * bots
        for key, value in options.items():
            if key == "instructions":
                path = self.club / "instructions.txt"
                path.write_text(value, encoding="utf-8")
                args += ["--instructions", str(path)]
            else:
                args += ["--option", f"{key}={value}"]
        return self.cli(*args).strip()

    def games(self) -> list[tuple[str, str, str]]:
        """(tag, kind, status) of every game, in the order made."""
        with sqlite3.connect(self.club / "referee.db") as con:
            return con.execute("SELECT tag, kind, status FROM games ORDER BY id").fetchall()

    def address(self, tag: str, seat: int) -> str:
        with sqlite3.connect(self.club / "referee.db") as con:
            name, address = con.execute(
                "SELECT seats.name, players.address FROM seats JOIN games ON games.id = "
                "seats.game_id JOIN players ON players.id = seats.player_id WHERE games.tag = ? "
                "AND seats.position = ?", (tag, seat)).fetchone()
        return f"{name} <{address}>"

    def others(self, tag: str, seat: int) -> list[str]:
        with sqlite3.connect(self.club / "referee.db") as con:
            return [a for a, in con.execute(
                "SELECT players.address FROM seats JOIN games ON games.id = seats.game_id "
                "JOIN players ON players.id = seats.player_id WHERE games.tag = ? "
                "AND seats.position != ?", (tag, seat))]

    def write(self, sender: str, line: str, tag: str, cc: Sequence[str] = ()) -> None:
        """A player's mail into the referee's Maildir, dated now."""
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = REFEREE
        if cc:
            msg["Cc"] = ", ".join(cc)
        msg["Subject"] = f"Re: [{tag}] my move"
        msg["Date"] = format_datetime(self.now.replace(tzinfo=None), usegmt=False)
        msg["Message-ID"] = make_msgid(idstring=f"fixture{self.sent}", domain=DOMAIN)
        msg.set_content(f"{line}\n")
        mailbox.Maildir(self.club / "in", create=True).add(msg.as_bytes())
        self.sent += 1

    def moves(self, tags: Sequence[str]) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--moves",
             str(self.club / "referee.db"), str(self.rng.getrandbits(32)), *tags],
            cwd=self.club, env=self.env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{self.commit}: the moves could not be chosen: {done.stderr}")
        found: list[dict[str, Any]] = json.loads(done.stdout)
        return found

    def play(self, tags: Sequence[str], passes: int, to_the_end: bool) -> None:
        """Passes of the club: now and then the day passes (deadlines with
        it), else each player who owes a move mails it, mostly."""
        for _ in range(passes):
            active = [t for t, _, status in self.games() if t in tags and status == "active"]
            if to_the_end and not active:
                return
            written = 0
            if self.rng.random() < 0.8:
                for move in self.moves(active):
                    if self.rng.random() < 0.9:
                        cc = self.others(move["tag"], move["seat"]) if move["public"] else []
                        self.write(self.address(move["tag"], move["seat"]), move["line"],
                                   move["tag"], cc)
                        written += 1
            self.now += timedelta(hours=1) if written else PAST_DEADLINES
            self.cli("poll", "--now", self.now.isoformat())
        if to_the_end:
            left = [t for t, _, status in self.games() if t in tags and status == "active"]
            if left:
                raise SystemExit(f"{self.commit}: not over after {passes} passes: {left}")


def old_tree(commit: str, into: Path) -> Path:
    """The files of ``commit``, in ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="tar")
    return into


def missing_dependencies(tree: Path) -> list[str]:
    """The old main's dependencies this venv lacks."""
    with open(tree / "pyproject.toml", "rb") as f:
        wanted = tomllib.load(f)["project"]["dependencies"]
    lacking = []
    for requirement in wanted:
        name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0]
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            lacking.append(requirement)
    return lacking


def make(commit: str) -> None:
    with tempfile.TemporaryDirectory(prefix=f"old-{commit}-") as tmp:
        tree = old_tree(commit, Path(tmp) / "tree")
        deps = Path(tmp) / "deps"
        if lacking := missing_dependencies(tree):
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target",
                            str(deps), *lacking], check=True)
        club = Path(tmp) / "club"
        club.mkdir()
        old = OldMain(commit, tree, deps, club)
        old.cli("init")
        ended = [old.new_game(kind, players, bots, options)
                 for kind, players, bots, options, end in GAMES if end]
        old.cli("poll", "--now", old.now.isoformat())
        # A member deals themselves in by mail.
        loatcg = next(t for t in ended if t.startswith("loatcg"))
        old.write(DAVE, "deal me in", loatcg)
        old.play(ended, 400, to_the_end=True)
        going = [old.new_game(kind, players, bots, options)
                 for kind, players, bots, options, end in GAMES if not end]
        old.cli("poll", "--now", old.now.isoformat())
        old.write(FRANK, "deal me in", next(t for t in going if t.startswith("loatcg")))
        old.play(going, 6, to_the_end=False)
        # An operator hands a vanished player's seat to a bot.
        pure = next(t for t in going if t.startswith("pure-skill"))
        old.cli("game", "resign", pure, "erin@example.test", "--now", old.now.isoformat())
        old.play(going, 4, to_the_end=False)
        games = old.games()
        for tag, _, _ in games:
            said = old.cli("replay", tag).strip().splitlines()[-1]
            if not said.endswith("the replay matches the stored state"):
                raise SystemExit(f"{commit}: {said}")
        if not {kind for _, kind, status in games if status == "active"} == \
                {kind for _, kind, status in games if status == "finished"} == \
                {kind for kind, *_ in GAMES}:
            raise SystemExit(f"{commit}: not every kind both in progress and finished: {games}")
        with sqlite3.connect(club / "referee.db") as con:
            schema = con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
            sql = "\n".join(con.iterdump()) + "\n"
        FIXTURES.mkdir(exist_ok=True)
        (FIXTURES / f"{commit}.sql").write_text(sql, encoding="utf-8")
        (FIXTURES / f"{commit}.json").write_text(json.dumps({
            "commit": commit, "schema": schema, "about": MAINS[commit],
            "now": old.now.isoformat(),
            "games": [{"tag": t, "kind": k, "status": s} for t, k, s in games],
        }, indent=2) + "\n", encoding="utf-8")
        print(f"{commit}: schema {schema}, {len(games)} games, last pass {old.now}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("commits", nargs="*", help=f"default: {', '.join(MAINS)}")
    p.add_argument("--moves", nargs="+", metavar=("DB SEED", "TAG"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.moves:
        db, seed, *tags = args.moves
        print(json.dumps(moves(Path(db), tags, int(seed))))
        return 0
    for commit in args.commits or list(MAINS):
        if commit not in MAINS:
            raise SystemExit(f"{commit} is not in MAINS: add it, with what it was")
        make(commit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
