"""A whole game by mail, through the real referee: a Maildir in and out and
SQLite, in a folder of its own, with time injected, so nothing waits.

:class:`Club` is the referee and the players' side of the mail; the
players write the move a random bot would make (``Game.bot_action``) in the
words the game reads (``Game.read_as``), to the referee alone where the
rules take it so, else to the table. :func:`play_by_mail` plays one game to
its end and says what did not hold: the game ended, every mail a player got
holds no secret of another seat (``Contract.secrets``), the public pages
render and hold no secret, the audit (``referee verify``) finds the
replay from the seed and the action log equal to the stored state, and a
player's mailbox verifies (``referee verify TAG --mail``, the game's
``Game.mail_check``).
"""

from __future__ import annotations

import html
import mailbox
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from referee.config import Config, config_from_dict
from referee.games import GAMES
from referee.games.base import EngineError, Game, Scope, ScopeError
from referee.games.draws import SequentialDraws
from referee.passes import run_pass
from referee.service import Referee
from referee.store.db import upgrade
from referee.testing.contract import Contract, Secrets
from referee.verify_mail import verify_mailbox
from referee.web import write_pages

T0 = datetime(2026, 3, 2, 12, 0)
DOMAIN = "club.test"
REFEREE = f"referee@{DOMAIN}"


class Club:
    """A referee on Maildir + SQLite in ``root``, and the players' side of
    the mail: :meth:`send` drops a player's mail into the referee's inbox,
    :meth:`poll` runs one pass, :meth:`new_mail` reads what it sent."""

    def __init__(self, root: Path, **referee: str) -> None:
        self.root = root
        self.config: Config = config_from_dict({
            "referee": {"address": REFEREE, "name": "Club Referee",
                        "database": f"sqlite:///{root / 'referee.db'}", **referee},
            "mailbox": {"kind": "maildir", "path": str(root / "in")},
            "smtp": {"kind": "maildir", "path": str(root / "out")},
        }, base_dir=root)
        upgrade(self.config.database_url)
        self.referee = Referee(self.config)
        self.read = 0
        self.now = T0

    def close(self) -> None:
        self.referee.close()

    def send(self, sender: str, body: str, subject: str = "move",
             cc: list[str] | None = None) -> None:
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = REFEREE
        if cc:
            msg["Cc"] = ", ".join(cc)
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(domain=DOMAIN)
        msg.set_content(body)
        mailbox.Maildir(self.root / "in", create=True).add(msg.as_bytes())

    def poll(self, now: datetime | None = None) -> list[EmailMessage]:
        """One pass at ``now`` (else the club's time); the mail it sent."""
        self.now = now or self.now
        run_pass(self.referee, self.now)
        return self.new_mail()

    def new_mail(self) -> list[EmailMessage]:
        """The mail sent since the last look, in the order it was written."""
        box = mailbox.Maildir(self.root / "out", create=True)
        msgs = []
        for key in box.iterkeys():
            msg = message_from_bytes(box.get_bytes(key), policy=default)
            assert isinstance(msg, EmailMessage)
            msgs.append(msg)
        msgs.sort(key=lambda x: int(str(x["Message-ID"]).split(".")[1]))
        fresh, self.read = msgs[self.read:], len(msgs)
        return fresh


def body(msg: EmailMessage) -> str:
    """A mail's plain-text body."""
    part = msg.get_body(("plain",))
    return str(part.get_content()).replace("\r\n", "\n") if part is not None else ""


def player(seat: int) -> str:
    """The address of the player in ``seat`` of a game :func:`play_by_mail` makes."""
    return f"player{seat}@{DOMAIN}"


@dataclass
class MailGame:
    """What :func:`play_by_mail` did, and what did not hold."""

    tag: str
    passes: int = 0
    mails_sent: int = 0
    moves_written: int = 0
    status: str = "active"
    problems: list[str] = field(default_factory=list)


@contextmanager
def registered(engine: Game[Any]) -> Iterator[None]:
    """``engine`` plays its kind in the referee for a while: a game tested
    from its own checkout, not installed, or an engine a test changed."""
    previous = GAMES.get(engine.kind)
    GAMES[engine.kind] = engine
    try:
        yield
    finally:
        if previous is not None:
            GAMES[engine.kind] = previous
        else:
            del GAMES[engine.kind]


def play_by_mail(engine: Game[Any], contract: Contract, root: Path,
                 seed: str = "by-mail", max_passes: int = 3000) -> MailGame:
    """Play a game of ``engine`` (``Contract.by_mail``) to its end by mail
    through a referee in ``root``; see the module's docstring."""
    raw, count, bots = contract.by_mail or (*contract.setups[0], 0)
    with registered(engine):
        club = Club(root)
        try:
            return _play(club, engine, contract, dict(raw), count, bots, seed, max_passes)
        finally:
            club.close()


def _play(club: Club, engine: Game[Any], contract: Contract, raw: dict[str, str], count: int,
          bots: int, seed: str, max_passes: int) -> MailGame:
    referee = club.referee
    names = [f"Player {n} <{player(n)}>" for n in range(1, count + 1)]
    tag = referee.operator.create_game(engine.kind, names, bots=bots, options=raw, seed=seed,
                                       now=club.now)
    game = MailGame(tag)
    rng = random.Random(seed)
    pages = club.root / "pages"
    # A card the mails' fixed text names ("for example: play QH") is no leak.
    written = template_text(engine)
    held: Secrets | None = None  # before the first pass: as after it
    shown: set[str] = set()
    told = 0
    for _ in range(max_passes):
        sent = club.poll()
        game.passes += 1
        game.mails_sent += len(sent)
        state = referee.reading.stored_state(tag)
        # What a seat held secret before the pass and holds still: a card
        # played in the pass, then dealt again, is named by its report.
        now_held = contract.secrets(state)
        secrets, held = _kept(now_held if held is None else held, now_held), now_held
        # What this pass made public history (a trick played, a round's
        # cards) is everyone's: the contract's playouts check the events.
        history = referee.reading.public_histories([tag])[tag]
        public = written + "\n".join(e["text"] for e in history[told:])
        told = len(history)
        for msg in sent:
            _check_mail(game, msg, secrets, public)
        write_pages(referee, pages)
        # The page's lines new in this pass (the history names past cards,
        # which a new deal holds again).
        lines = html.unescape((pages / f"{tag}.html").read_text(encoding="utf-8")).splitlines()
        page, shown = "\n".join(ln for ln in lines if ln not in shown), shown | set(lines)
        for word in _leaked(secrets, set(), page, public):
            game.problems.append(f"pass {game.passes}: the game's page shows {word!r}")
        status = referee.reading.status(tag)[0]
        game.status = status["status"]
        if game.status != "active" or len(game.problems) > 5:
            break
        humans = sorted(p["seat"] for p in status["players"] if not p["bot"])
        owing = sorted({d["seat"] for d in status["deadlines"]} & set(humans))
        loaded = engine.load(state)
        if not owing or rng.random() < 0.1:
            # Nobody owes (a tournament's member), or a player is late: a
            # player who owes nothing may write now and then; the day passes,
            # and deadlines with it.
            if humans and not owing and rng.random() < 0.5:
                seat = rng.choice(humans)
                game.moves_written += _write_move(club, engine, loaded, seat, count, tag, rng)
            club.now += timedelta(days=1)
            continue
        for seat in owing:
            game.moves_written += _write_move(club, engine, loaded, seat, count, tag, rng)
        club.now += timedelta(hours=1)
    else:
        game.problems.append(f"{tag}: not over after {max_passes} passes")
    if game.status == "active" and not game.problems:
        game.problems.append(f"{tag}: still active")
    game.problems += referee.reading.audit(tag)
    game.problems += verified_by_mail(club, tag, humans_of(referee, tag))
    return game


@dataclass
class MailStart:
    """What :func:`start_by_mail` did, and what did not hold."""

    table: str = ""
    game: str = ""
    problems: list[str] = field(default_factory=list)


def start_by_mail(engine: Game[Any], contract: Contract, root: Path) -> MailStart:
    """Start a game of ``engine`` the way a club does, by mail
    (``referee.service.intake.gamesmaster``): the first player, a member,
    opens a table with ``new KIND`` and the options and seats of
    ``Contract.by_mail`` (else its first setup; a bot's seat taken by a
    player; an option no ``KEY=VALUE`` word can hold left at its
    default), the others take the seats with ``join TAG``, and the game
    starts when the table is full. Says what did not hold: the table
    opened, the start mailed to every player, the game active with them
    seated."""
    raw, count, bots = contract.by_mail or (*contract.setups[0], 0)
    seats = count + bots
    with registered(engine):
        club = Club(root)
        try:
            return _start(club, engine, dict(raw), seats)
        finally:
            club.close()


def _start(club: Club, engine: Game[Any], raw: dict[str, str], seats: int) -> MailStart:
    referee = club.referee
    names = [f"Player {n} <{player(n)}>" for n in range(1, seats + 1)]
    for name in names:
        referee.club.add_member(name, club.now)
    # An option a line cannot hold (a value of more than one word or line)
    # is left at the game's default: a table is opened by one line.
    words = [f"{k}={v}" for k, v in raw.items() if v and not any(c.isspace() for c in v)]
    if "players" not in raw:
        words.append(f"players={seats}")
    started = MailStart()
    club.send(names[0], f"new {engine.kind} {' '.join(words)}\n", "a table")
    opened = [x for x in club.poll() if " is open" in str(x["Subject"])]
    if len(opened) != 1:
        started.problems.append(f"'new {engine.kind}' opened no table")
        return started
    started.table = str(opened[0]["Subject"]).split("]")[0].lstrip("[")
    for name in names[1:]:
        club.send(name, f"join {started.table}\n", "a seat")
    sent = club.poll(club.now + timedelta(minutes=5))
    told = {a.addr_spec: str(x["Subject"]) for x in sent if " starts: " in str(x["Subject"])
            for a in x["To"].addresses}
    if sorted(told) != sorted(player(n) for n in range(1, seats + 1)):
        started.problems.append(f"{started.table}: the start was mailed to {sorted(told)}, "
                                f"not to the {seats} players")
        return started
    started.game = next(iter(told.values())).split("]")[0].lstrip("[")
    status = referee.reading.status(started.game)[0]
    seated = sorted(p["name"] for p in status["players"] if not p["bot"])
    if status["status"] != "active" or seated != sorted(n.split(" <")[0] for n in names):
        started.problems.append(f"{started.game}: {status['status']} with {seated} seated")
    if referee.club.listing():
        started.problems.append(f"{started.table} is open still")
    return started


def humans_of(referee: Referee, tag: str) -> list[int]:
    """The seats of game ``tag`` a person plays, not a bot."""
    return sorted(p["seat"] for p in referee.reading.status(tag)[0]["players"] if not p["bot"])


def verified_by_mail(club: Club, tag: str, seats: list[int]) -> list[str]:
    """What ``referee verify TAG --mail`` finds amiss in the mailbox of the
    first player in ``seats``: every mail addressed to them (To or Cc),
    gathered in an mbox file as they would keep it."""
    if not seats:
        return []
    address = player(seats[0])
    path = club.root / f"player{seats[0]}.mbox"
    box = mailbox.mbox(path, create=True)
    for key in mailbox.Maildir(club.root / "out", create=True).iterkeys():
        raw = mailbox.Maildir(club.root / "out", create=False).get_bytes(key)
        msg = message_from_bytes(raw, policy=default)
        heard = [a.addr_spec for h in ("To", "Cc") if msg[h] for a in msg[h].addresses]
        if address in heard:
            box.add(raw)
    box.close()
    return [f"{tag}: verify from {address}'s mail: {problem}"
            for problem in verify_mailbox(tag, path)]


def _write_move(club: Club, engine: Game[Any], state: Any, seat: int, count: int, tag: str,
                rng: random.Random) -> int:
    """The player in ``seat`` writes the move a random bot would make, to
    the referee alone if the rules take it so, else to the table too."""
    try:
        action = engine.bot_action(state, seat, SequentialDraws(rng))
    except EngineError:
        return 0
    others = [player(n) for n in range(1, count + 1) if n != seat]
    cc: list[str] | None = None
    try:
        engine.accepts(action, Scope.SECRET)
    except ScopeError:
        cc = others
    line = engine.read_as(action)
    club.send(f"Player {seat} <{player(seat)}>", f"{line}\n", f"Re: [{tag}] my move", cc)
    return 1


def _kept(before: Secrets, after: Secrets) -> Secrets:
    """Each seat's secrets of ``after`` that were its secrets in ``before`` too."""
    return {seat: [x for x in own if x in before.get(seat, [])] for seat, own in after.items()}


def _check_mail(game: MailGame, msg: EmailMessage, secrets: Secrets, public: str) -> None:
    """A mail to one player shows no secret of another seat; one to more
    than one player, no seat's secret."""
    to = [a.addr_spec for a in msg["To"].addresses] if msg["To"] else []
    seats = {int(m.group(1)) for a in to if (m := re.fullmatch(r"player(\d+)@.*", a))}
    audience = seats if len(to) == 1 else set()
    for word in _leaked(secrets, audience, body(msg), public):
        game.problems.append(f"pass {game.passes}: {msg['X-Referee-Mail']} to {', '.join(to)} "
                             f"shows {word!r}")


def _leaked(secrets: Secrets, audience: set[int], text: str, public: str) -> list[str]:
    """The ways of writing a secret of a seat outside ``audience`` (and
    seat 0's) that ``text`` holds as a whole word, but for those ``public``
    holds (the templates' own text, the public history of the pass)."""
    found = set()
    for seat, own in secrets.items():
        if seat and seat in audience:
            continue
        for secret in own:
            for word in secret:
                whole = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])")
                if whole.search(text) and not whole.search(public):
                    found.add(word)
    return sorted(found)


def template_text(engine: Game[Any]) -> str:
    """The text of every mail template ``engine`` may use: its own and the
    common ones."""
    from importlib.resources import files

    from referee.mail.compose import TEMPLATES

    folder = engine.templates or engine.kind
    roots: list[Any] = [TEMPLATES / "common"]
    roots.append(files(engine.templates_package) / "templates" if engine.templates_package
                 else TEMPLATES / folder)
    texts = []
    for root in roots:
        if root.is_dir():
            texts += [f.read_text(encoding="utf-8") for f in root.iterdir()
                      if f.name.endswith(".txt")]
    return "\n".join(texts)

