"""At ``--log-level debug`` no log line holds a secret (issue 24): whole
games of every kind that has secrets, played by mail through the service
with every logger at debug as ``referee --log-level debug`` sets them, and
each captured line searched for what the test knows to be secret: the key
that signs Message-IDs and VERP addresses, the mail password, the seed,
hands and hand salts, sealed bids (the mail that sealed them), the Scoring
Instructions and their salt, private reply addresses, and mail bodies.

Goofspiel goes over the real Postfix and Dovecot (``tests/test_e2e.py``),
so IMAP's and SMTP's protocol logging is on the path; the others over
Maildir (``tests/test_referee.py``).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee.games import get_game
from referee.games.draws import KeyedDraws
from referee.games.loatcg.instructions import parse_instructions
from referee.logs import TEXT_FORMAT, JsonFormatter, setup_logging
from referee.passes import run_pass
from referee.service import Referee
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import Post
from tests.test_referee import T0, Club, body

CLUB = {name: f"{name.capitalize()} <{name}@club.test>"
        for name in ("alice", "bob", "carol", "dave")}
LIST = "players@club.test"
INSTRUCTIONS = ("1. Ripe orchards pay handsomely\n   = points apple 3\n"
                "2. Diamonds in pairs are worth plenty\n   = pairs diamond 7 odd -11\n"
                "3. points ore wool lumber 2\n")
#: A line of a secret mail is looked for in the log only if it is this long
#: (shorter ones, like "Your mail", are in every kind of mail).
LONG_LINE = 16


# -- the log ---------------------------------------------------------------------------


class Capture(logging.Handler):
    """Every record the root logger handles, as a text line and a JSON line
    (with its ``extra`` fields and traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.text, self.json = logging.Formatter(TEXT_FORMAT), JsonFormatter()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines += [self.text.format(record), self.json.format(record)]


@dataclass
class DebugLog:
    file: Path
    capture: Capture

    def lines(self) -> list[str]:
        """What the log file got (a forked child's lines too) and what the
        capture saw, a line each (a record of several lines is one)."""
        return [*self.file.read_text(encoding="utf-8").splitlines(), *self.capture.lines]


@pytest.fixture
def debug_log(tmp_path: Path) -> Iterator[DebugLog]:
    """Logging as ``--log-level debug --log-file FILE`` sets it up, plus a
    capture on the root logger; all as it was afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    loggers = {name: (lg.level, list(lg.filters))
               for name, lg in logging.root.manager.loggerDict.items()
               if isinstance(lg, logging.Logger)}
    setup_logging("debug", tmp_path / "debug.log")
    capture = Capture()
    root.addHandler(capture)
    yield DebugLog(tmp_path / "debug.log", capture)
    for h in list(root.handlers):
        root.removeHandler(h)
        if h not in handlers:
            h.close()
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)
    for name, lg in logging.root.manager.loggerDict.items():
        if isinstance(lg, logging.Logger):
            lg.setLevel(loggers.get(name, (logging.NOTSET, []))[0])
            lg.filters = list(loggers.get(name, (0, []))[1])


# -- what is secret ----------------------------------------------------------------------


@dataclass
class Secrets:
    """Each secret the test knows, with what it is (for the failure)."""

    known: dict[str, str] = field(default_factory=dict)

    def add(self, value: str, what: str) -> None:
        value = value.strip()
        if value:
            self.known.setdefault(value, what)

    def hands(self, state: dict[str, Any], tag: str) -> None:
        """The hands and hand salts of a state, as they would show in a log:
        a JSON list and a line of cards."""
        hands = state.get("hands") or [mb.get("hand") for mb in state.get("members", [])]
        for seat, hand in enumerate(hands):
            if isinstance(hand, list) and len(hand) >= 2:
                self.add(json.dumps(hand), f"{tag}: hand of seat {seat + 1}")
                self.add(" ".join(hand), f"{tag}: hand of seat {seat + 1}")
            elif isinstance(hand, dict) and sum(hand.values()) >= 2:
                self.add(json.dumps(hand)[1:-1], f"{tag}: hand of member {seat + 1}")
        for seat, salt in enumerate(state.get("hand_salts") or []):
            self.add(str(salt), f"{tag}: hand salt of seat {seat + 1}")
        if state.get("salt"):
            self.add(str(state["salt"]), f"{tag}: the instructions' salt")

    def sent_mail(self, command: str, what: str) -> None:
        """A mail a player sent: its body and its lines, those with an
        argument (a bare "pass" or "hand" is a word of many a log line)."""
        for line in [command, *command.splitlines()]:
            if " " in line.strip():
                self.add(line, what)

    def stored(self, referee: Referee) -> None:
        """The referee's key, every seed and private address, every mail it
        queued (its body whole, and each long line of a secret mail that no
        public mail has: the hands, sealed bids and reveals it tells)."""
        with referee.sessions() as db:
            for key in db.scalars(select(m.Secret)):
                self.add(key.value, f"the key {key.name!r}")
            for game in db.scalars(select(m.Game)):
                self.add(game.seed, f"the seed of {game.tag}")
                if game.kind == "loatcg":
                    for i in parse_instructions(str(game.options["instructions"])):
                        self.add(i.canonical(), f"{game.tag}: instruction {i.number}")
                        self.add(i.english(), f"{game.tag}: instruction {i.number}")
                        self.add(i.rule.canonical(), f"{game.tag}: instruction {i.number}")
                for seat in game.seats:
                    if seat.token:
                        self.add(seat.token, f"{game.tag}: the private address of {seat.name}")
            for player in db.scalars(select(m.Player)):
                if player.token:
                    self.add(player.token, f"the private address of {player.address}")
            rows = [(row.id, row.secret, _text(row.raw), _encoded(row.raw))
                    for row in db.scalars(select(m.Outbox))]
        public = {line for _, secret, text, raw in rows if not secret
                  for line in (text + raw).splitlines()}
        for oid, secret, text, raw in rows:
            self.add(text, f"the body of outbox {oid}")
            if secret:  # as read, and as stored (base64, quoted-printable)
                for line in (text + raw).splitlines():
                    if len(line.strip()) >= LONG_LINE and line not in public:
                        self.add(line, f"a line of secret outbox {oid}")

    def found_in(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        return [f"{what}: {next(ln for ln in lines if value in ln)[:300]}"
                for value, what in self.known.items() if value in text]


def _encoded(raw: str) -> str:
    """The body of a stored mail as stored, transfer-encoded."""
    return raw.replace("\r\n", "\n").partition("\n\n")[2]


def _text(raw: str) -> str:
    msg = message_from_bytes(raw.encode("utf-8"), policy=default)
    assert isinstance(msg, EmailMessage)
    return body(msg)


# -- playing a whole game by mail --------------------------------------------------------


Mail = Callable[[str, str, str], None]  # (address, body, subject)


def play(referee: Referee, tag: str, mail: Mail, poll: Callable[[datetime], None],
         secrets: Secrets, now: datetime) -> datetime:
    """Play ``tag`` to its end: each seat that owes a move mails what a bot
    would do, to the referee alone, and every fifth turn (or when no mail
    moves the game on) the deadline passes and the referee moves. Returns
    the time of the last pass."""
    done, step = -1, 0
    while True:
        with referee.sessions() as db:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            assert game is not None
            engine = get_game(game.kind)
            state = engine.load(game.state)
            secrets.hands(dict(game.state), tag)
            if engine.is_over(state):
                return now
            people = {s.position: s.player.address for s in game.seats
                      if s.player is not None and not s.bot}
            due = min((d.due_at for d in db.scalars(
                select(m.Deadline).where(m.Deadline.game_id == game.id))), default=None)
            moved, done = game.step > done, game.step
        step += 1
        assert step < 1500, f"{tag} does not end"
        owing = {p.seat for p in engine.pending(state) if p.seat in people}
        if owing and moved and step % 5:
            for seat in sorted(owing):
                action = engine.bot_action(state, seat, KeyedDraws(f"{tag}/{step}"))
                command = engine.read_as(action)
                secrets.sent_mail(command, f"{tag}: the mail of seat {seat}")
                mail(people[seat], command, f"[{tag}] my move")
            now += timedelta(minutes=30)
        else:
            assert due is not None, f"{tag} waits for nothing"
            now = max(now, due) + timedelta(seconds=1)
        poll(now)


def assert_no_secret(log: DebugLog, secrets: Secrets) -> None:
    lines = log.lines()
    assert any(" DEBUG " in line for line in lines)  # debug was on
    assert secrets.known
    found = secrets.found_in(lines)
    assert not found, f"{len(found)} secrets in the debug log, such as:\n" + "\n".join(found[:15])


# -- the games ---------------------------------------------------------------------------


@pytest.mark.mailstack
def test_a_goofspiel_game_over_imap_and_smtp_logs_no_secret_at_debug(
        debug_log: DebugLog, mailstack: MailStack, tmp_path: Path) -> None:
    post = Post(mailstack, tmp_path)
    secrets = Secrets()
    try:
        tag = post.referee.operator.create_game(
            "goofspiel", ["Alice <alice@example.test>", "Bob <bob@example.test>"], now=T0)
        post.poll(T0)

        def mail(address: str, text: str, subject: str) -> None:
            post.write(address.split("@")[0], text, subject=subject)

        play(post.referee, tag, mail, post.poll, secrets, T0)
        secrets.stored(post.referee)
    finally:
        post.close()
    password, user = mailstack.password, post.config.mailbox.username
    # The password is a common word ("secret"): it is looked for as a
    # login or a setting would show it.
    for shown in (f"{user} {password}", f'{user} "{password}"', f"password='{password}'",
                  f'password = "{password}"', f'"password": "{password}"'):
        secrets.add(shown, "the IMAP password")
    secrets.add(base64.b64encode(f"\0{user}\0{password}".encode()).decode(), "AUTH PLAIN")
    assert_no_secret(debug_log, secrets)
    # Each send says its game: an operator can follow one game's mail.
    assert any(f"sent to alice@example.test game={tag}" in line for line in debug_log.lines())


def _club_game(root: Path, kind: str, players: list[str], options: dict[str, str],
               **club: Any) -> tuple[Club, str, Secrets]:
    c = Club(root, **club)
    tag = c.referee.operator.create_game(kind, players, options=options, now=T0)
    run_pass(c.referee, T0)
    return c, tag, Secrets()


def _finish(c: Club, tag: str, secrets: Secrets, log: DebugLog,
            first: Sequence[tuple[str, str]] = ()) -> None:
    def mail(address: str, text: str, subject: str) -> None:
        c.send(address, text, subject=subject)

    now = T0 + timedelta(minutes=5)
    for address, text in first:
        secrets.sent_mail(text, f"{tag}: a mail of {address}")
        mail(address, text, f"[{tag}] hello")
        now += timedelta(minutes=5)
        run_pass(c.referee, now)
    play(c.referee, tag, mail, lambda t: run_pass(c.referee, t), secrets, now)
    secrets.stored(c.referee)
    c.referee.close()
    assert_no_secret(log, secrets)


@pytest.mark.parametrize(("kind", "players", "options"), [
    ("spades", [CLUB[n] for n in ("alice", "bob", "carol", "dave")], {"target": "100"}),
    ("pure-skill", [CLUB[n] for n in ("alice", "bob", "carol")], {"cards": "6"}),
    ("miser", [CLUB[n] for n in ("alice", "bob", "carol")], {}),
])
def test_a_whole_game_by_mail_logs_no_hand_bid_seed_or_key_at_debug(
        debug_log: DebugLog, tmp_path: Path, kind: str, players: list[str],
        options: dict[str, str]) -> None:
    c, tag, secrets = _club_game(tmp_path, kind, players, options)
    first = [(p.split("<")[1].rstrip(">"), "hand") for p in players if kind != "pure-skill"]
    _finish(c, tag, secrets, debug_log, first)


def test_a_tournament_logs_no_scoring_instruction_hand_or_salt_at_debug(
        debug_log: DebugLog, tmp_path: Path) -> None:
    c, tag, secrets = _club_game(
        tmp_path, "loatcg", [CLUB["alice"], CLUB["bob"]], {"instructions": INSTRUCTIONS},
        public_list=LIST, auth={"authserv_id": "mx.club.test"}, vouch=True)
    alice, bob, carol = "alice@club.test", "bob@club.test", "carol@club.test"
    _finish(c, tag, secrets, debug_log, [
        (carol, "deal me in"), (alice, "hand"), (bob, "reveal random"),
        (alice, "offer 1 apple for 1 ore"), (carol, "hand")])
