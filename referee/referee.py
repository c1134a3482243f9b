"""The service: one inbound message becomes one database transaction.

This is the only module that opens transactions. For each message it skips
what was seen before, refuses what must not be answered, hands each command
line to the game's engine, stores the actions, events and new state,
reconciles deadlines, and queues every mail that must go out in the outbox,
all before one commit (DESIGN.md, "The flow of one message").
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import getaddresses
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config, format_duration, parse_duration
from referee.engine import get_game
from referee.engine.base import (
    Action,
    Audience,
    EngineError,
    IllegalAction,
    Notice,
    OptionError,
    ParseError,
    Scope,
    SeatInfo,
    rng_for,
)
from referee.engine.base import (
    Game as Engine,
)
from referee.mail.auth import Verdict, verify
from referee.mail.compose import Composer, format_when, verp_outbox_id
from referee.mail.inbound import Automation, Bounce, InboundMessage, find_tag, parse_message
from referee.store import models as m
from referee.store.db import make_engine, sessions

log = logging.getLogger(__name__)

#: Lines the referee understands in every game, besides the game's own.
GENERIC_COMMANDS = ("help", "resign")
#: Stop reading a mail after this many lines in a row that are no command.
MAX_UNKNOWN_LINES = 5
#: An address in no game is answered at most this often.
STRANGER_INTERVAL = timedelta(days=1)


class RefereeError(Exception):
    """An operator's request cannot be done; the message says why."""


@dataclass
class TranscriptLine:
    text: str
    read_as: str
    result: str  # applied | penalty | refused | ignored
    message: str


@dataclass
class Outcome:
    """What processing one message did, for logs and tests."""

    status: str
    tag: str | None = None
    transcript: list[TranscriptLine] = field(default_factory=list)


def now_utc() -> datetime:
    """The current UTC time as stored: naive, in UTC, to the second (deadlines
    and ``status`` show whole seconds)."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def parse_player(text: str) -> tuple[str, str]:
    """``"Alice <alice@x.org>"`` or ``alice@x.org`` -> (address, name)."""
    pairs = getaddresses([text])
    if len(pairs) != 1 or "@" not in pairs[0][1]:
        raise RefereeError(f"{text!r} is not a mail address like 'Alice <alice@example.org>'")
    name, addr = pairs[0]
    addr = addr.strip().lower()
    return addr, name.strip() or addr.partition("@")[0].capitalize()


class GameSession:
    """A game loaded inside a transaction, with what it owes the outbox."""

    def __init__(self, referee: Referee, db: Session, game: m.Game, now: datetime) -> None:
        self.referee, self.db, self.row, self.now = referee, db, game, now
        self.engine: Engine[Any] = get_game(game.kind)
        self.state: Any = self.engine.load(game.state)
        self.notices: list[Notice] = []
        #: The seat name the referee moved for, by ``id()`` of each notice
        #: that move caused, so its mails can say the move was the referee's.
        self.timeout_for: dict[int, str] = {}

    @property
    def tag(self) -> str:
        return self.row.tag

    def seat_of(self, player: m.Player) -> m.Seat | None:
        for seat in self.row.seats:
            if seat.player_id == player.id and not seat.bot:
                return seat
        return None

    def apply(
        self, seat: int, action: Action, source: str, inbound_id: int | None
    ) -> tuple[str, str]:
        """Apply one action and log it; returns the transcript's verdict
        ("applied" or "penalty") and line."""
        step = self.row.step + 1
        if action.verb == "resign":
            result = self.engine.replace_with_bot(self.state, seat)
            self.row.seats[seat - 1].bot = True
        else:
            result = self.engine.apply(self.state, seat, action, rng_for(self.row.seed, step))
        self.state = result.state
        self.row.step = step
        self.db.add(
            m.ActionLog(
                game_id=self.row.id, step=step, seat=seat, action=action.to_json(),
                source=source, inbound_id=inbound_id, at=self.now,
            )
        )
        for ev in result.events:
            self.db.add(
                m.Event(
                    game_id=self.row.id, step=step, kind=ev.kind, text=ev.text,
                    public=ev.public, data=dict(ev.data), at=self.now,
                )
            )
        self.notices += result.notices
        verdict = "penalty" if result.penalty else "applied"
        if result.reply:
            return verdict, result.reply
        return verdict, " ".join(e.text for e in result.events if e.public) or "Done."

    def run_bots(self) -> None:
        """Bots move at once when it is their turn."""
        while not self.engine.is_over(self.state):
            bots = [p for p in self.engine.pending(self.state) if self.row.seats[p.seat - 1].bot]
            if not bots:
                return
            seat = bots[0].seat
            rng = rng_for(self.row.seed + ":bot", self.row.step + 1)
            self.apply(seat, self.engine.bot_action(self.state, seat, rng), "bot", None)

    def timeout(self, seat: int) -> None:
        rng = rng_for(self.row.seed + ":timeout", self.row.step + 1)
        before = len(self.notices)
        self.apply(seat, self.engine.timeout_action(self.state, seat, rng), "timeout", None)
        for notice in self.notices[before:]:
            self.timeout_for[id(notice)] = self.row.seats[seat - 1].name

    def finish(self) -> None:
        """Store the state, reconcile deadlines and queue the notices."""
        self.settle()
        self.send_notices()

    def settle(self) -> None:
        """Let bots move, store the state and reconcile deadlines."""
        self.run_bots()
        self.row.state = self.engine.dump(self.state)
        if self.engine.is_over(self.state) and self.row.status == "active":
            self.row.status = "finished"
            self.row.finished_at = self.now
        self.reconcile_deadlines()

    def send_notices(self) -> None:
        for notice in self.notices:
            self.referee.deliver(self.db, self, notice)
        self.notices = []
        self.timeout_for = {}

    def reconcile_deadlines(self) -> None:
        rows = {
            (d.seat, d.key): d
            for d in self.db.scalars(select(m.Deadline).where(m.Deadline.game_id == self.row.id))
        }
        wanted = {(p.seat, p.key): p for p in self.engine.pending(self.state)}
        for k, row in rows.items():
            if k not in wanted:
                self.db.delete(row)
        for k, p in wanted.items():
            if k not in rows:
                self.db.add(
                    m.Deadline(
                        game_id=self.row.id, seat=p.seat, key=p.key, what=p.what,
                        since=self.now,
                        due_at=self.now + timedelta(seconds=self.row.deadline_seconds),
                    )
                )
        self.db.flush()

    def deadlines(self) -> list[m.Deadline]:
        q = select(m.Deadline).where(m.Deadline.game_id == self.row.id).order_by(m.Deadline.due_at)
        return list(self.db.scalars(q))

    def context(self, seat: int | None) -> dict[str, Any]:
        """What every mail of this game can show, for ``seat`` or the public."""
        deadlines = self.deadlines()
        deadlines_for = deadlines if seat is None else [d for d in deadlines if d.seat == seat]
        due = deadlines_for[0] if deadlines_for else None
        return {
            "tag": self.tag,
            "game_title": self.engine.title,
            "seat": seat,
            "seat_name": self.row.seats[seat - 1].name if seat else None,
            "deadline": format_when(due.due_at) if due else None,
            "waiting_for": sorted({self.row.seats[d.seat - 1].name for d in deadlines}),
            "public_list": self.referee.config.referee.public_list,
            # Set in mails caused by the referee's move for an absent seat.
            "timeout_for": None,
        }


class Referee:
    """The referee service over one database, one identity and its outbox."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine = make_engine(config.database_url)
        self.sessions: sessionmaker[Session] = sessions(self.engine)
        self.composer = Composer(config.referee.address, config.referee.name)

    def close(self) -> None:
        self.engine.dispose()

    # -- creating games -----------------------------------------------------
    def create_game(
        self,
        kind: str,
        players: Sequence[str],
        bots: int = 0,
        options: dict[str, str] | None = None,
        now: datetime | None = None,
        seed: str | None = None,
        teams: Sequence[str | None] = (),
    ) -> str:
        """Create a game, mail the opening, and return its tag."""
        now = now or now_utc()
        try:
            engine = get_game(kind)
        except KeyError as e:
            raise RefereeError(str(e.args[0])) from None
        raw = dict(options or {})
        deadline = self._duration_option(raw, "deadline", self.config.deadlines.default)
        reminder = self._duration_option(raw, "reminder", self.config.deadlines.reminder)
        try:
            opts = engine.parse_options(raw)
        except OptionError as e:
            raise RefereeError(str(e)) from None
        low, high = engine.seat_count(opts)
        n = len(players) + bots
        if not low <= n <= high:
            need = str(low) if low == high else f"{low} to {high}"
            raise RefereeError(f"{engine.title} takes {need} seats; got {n}.")
        parsed = [parse_player(p) for p in players]
        if len({a for a, _ in parsed}) != len(parsed):
            raise RefereeError("The same address is given twice.")
        with self.sessions.begin() as db:
            number = (db.scalar(select(m.Game.id).order_by(m.Game.id.desc()).limit(1)) or 0) + 1
            game = m.Game(
                tag=f"{kind}-{number}", kind=kind, options={**opts, "deadline": str(deadline),
                                                             "reminder": str(reminder)},
                seed=seed or secrets.token_hex(16), state={}, step=0, status="active",
                deadline_seconds=int(deadline.total_seconds()),
                reminder_seconds=int(reminder.total_seconds()), created_at=now,
            )
            db.add(game)
            infos: list[SeatInfo] = []
            for i, (addr, name) in enumerate(parsed, start=1):
                player = self._player(db, addr, name, now)
                team = teams[i - 1] if i - 1 < len(teams) else None
                game.seats.append(m.Seat(position=i, player=player, name=name, team=team))
                infos.append(SeatInfo(i, name, False, team))
            for j in range(bots):
                pos = len(parsed) + j + 1
                game.seats.append(m.Seat(position=pos, name=f"Bot {pos}", bot=True))
                infos.append(SeatInfo(pos, f"Bot {pos}", True))
            db.flush()
            try:
                result = engine.new(opts, infos, rng_for(game.seed, 0))
            except OptionError as e:
                raise RefereeError(str(e)) from None
            game.state = engine.dump(result.state)
            gs = GameSession(self, db, game, now)
            for ev in result.events:
                db.add(m.Event(game_id=game.id, step=0, kind=ev.kind, text=ev.text,
                               public=ev.public, data=dict(ev.data), at=now))
            gs.notices = list(result.notices)
            gs.finish()
            return game.tag

    @staticmethod
    def _duration_option(raw: dict[str, str], key: str, default: timedelta) -> timedelta:
        if key not in raw:
            return default
        try:
            return parse_duration(raw.pop(key))
        except ValueError as e:
            raise RefereeError(f"Option {key}: {e}") from None

    def _player(self, db: Session, addr: str, name: str, now: datetime) -> m.Player:
        player = db.scalar(select(m.Player).where(m.Player.address == addr))
        if player is None:
            player = m.Player(address=addr, name=name, created_at=now)
            db.add(player)
        elif name and not player.name:
            player.name = name
        return player

    # -- one inbound message ------------------------------------------------
    def process(
        self,
        raw: bytes,
        source_key: str,
        now: datetime | None = None,
        cursor: tuple[str, int, int] | None = None,
        size: int | None = None,
    ) -> Outcome:
        """Process one raw message in one transaction.

        ``cursor`` (mailbox, UIDVALIDITY, UID) is stored in the same
        transaction, so the mailbox position and the game never disagree.
        ``size`` is the server's size of a message fetched only in part.
        """
        now = now or now_utc()
        try:
            with self.sessions.begin() as db:
                return self._process(db, raw, source_key, now, cursor, size)
        except DBAPIError:
            raise  # the database is away or busy: the next pass tries again
        except Exception as e:
            # A fault of ours (an engine or a template) rolled the message's
            # transaction back. It must not block the mail behind it, so it
            # is recorded as failed in a transaction of its own.
            log.exception("processing message %s failed", source_key)
            return self._failed(raw, source_key, now, cursor, e)

    def _parse(self, raw: bytes) -> InboundMessage:
        ref = self.config.referee
        return parse_message(raw, referee_address=ref.address,
                             list_address=ref.public_list, our_domain=ref.domain)

    def _process(self, db: Session, raw: bytes, source_key: str, now: datetime,
                 cursor: tuple[str, int, int] | None, size: int | None) -> Outcome:
        if cursor is not None:
            self._advance_cursor(db, *cursor)
        if db.scalar(select(m.Inbound.id).where(m.Inbound.source_key == source_key)):
            return Outcome("duplicate")
        try:
            msg = self._parse(raw)
        except Exception as e:  # a message we cannot read must not block the queue
            log.warning("unreadable message %s: %s", source_key, e)
            db.add(m.Inbound(source_key=source_key, sender="", status="failed",
                             note=f"unreadable: {e}", received_at=now))
            return Outcome("failed")
        if size is not None and size > msg.size:
            msg = dataclasses.replace(msg, size=size)
        record = m.Inbound(source_key=source_key, message_id=msg.message_id,
                           sender=msg.sender, subject=msg.subject[:1000],
                           status="processed", received_at=now)
        if msg.message_id and db.scalar(
            select(m.Inbound.id).where(m.Inbound.message_id == msg.message_id)
        ):
            record.status, record.note = "ignored", "duplicate Message-ID"
            db.add(record)
            return Outcome("duplicate")
        db.add(record)
        db.flush()
        outcome = self._handle(db, msg, record, now)
        record.status = outcome.status
        record.note = record.note or outcome.status
        return outcome

    def _failed(self, raw: bytes, source_key: str, now: datetime,
                cursor: tuple[str, int, int] | None, error: Exception) -> Outcome:
        """Record a message whose processing failed; tell a player who wrote it."""
        with self.sessions.begin() as db:
            if cursor is not None:
                self._advance_cursor(db, *cursor)
            msg = self._parse(raw)  # it parsed before the fault, so it parses now
            db.add(m.Inbound(source_key=source_key, message_id=msg.message_id,
                             sender=msg.sender, subject=msg.subject[:1000], status="failed",
                             note=f"internal error: {type(error).__name__}: {error}"[:1000],
                             received_at=now))
            player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
            if player is not None and msg.automation is Automation.NONE:
                self._reply(db, None, player, msg, "internal_error", {}, now)
        return Outcome("failed")

    def _advance_cursor(self, db: Session, mailbox: str, uidvalidity: int, uid: int) -> None:
        row = db.get(m.Cursor, mailbox)
        if row is None:
            db.add(m.Cursor(mailbox=mailbox, uidvalidity=uidvalidity, last_uid=uid))
        elif row.uidvalidity != uidvalidity or uid > row.last_uid:
            row.uidvalidity, row.last_uid = uidvalidity, uid

    def cursor(self, mailbox: str) -> tuple[int, int] | None:
        with self.sessions() as db:
            row = db.get(m.Cursor, mailbox)
            return (row.uidvalidity, row.last_uid) if row else None

    def _handle(self, db: Session, msg: InboundMessage, record: m.Inbound,
                now: datetime) -> Outcome:
        ref = self.config.referee
        verp = next((oid for a in (*msg.to, *msg.cc)
                     if (oid := verp_outbox_id(ref.address, a)) is not None), None)
        if verp is not None:
            # Only a bounce is ever sent to a VERP address; whatever it says.
            record.note = "not answered: bounce to a VERP address"
            bounce = self._verp_bounce(db, verp, msg)
            if bounce is not None:
                record.note += "".join(self._record_bounce(db, bounce, now))
            return Outcome("ignored")
        if msg.automation is not Automation.NONE:
            record.note = f"not answered: {msg.automation.value}"
            if msg.bounce is not None:
                record.note += "".join(self._record_bounce(db, msg.bounce, now))
            return Outcome("ignored")
        if msg.list_id and msg.list_id != self._list_id():
            record.note = f"not answered: mail from another list ({msg.list_id})"
            return Outcome("ignored")
        player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
        seated = self._active_games(db, player) if player else []
        if player is None or not any(True for _ in self._all_games(db, player)):
            return self._stranger(db, msg, now)
        verdict = self._verify(msg, player)
        if not verdict.passed and self.config.auth.require == "verified":
            record.note = f"sender not verified: {verdict.detail}"
            # Answered at the registered address only: the real player learns
            # that a mail in their name was refused, a forger learns nothing.
            sent = msg.date.astimezone(UTC).replace(tzinfo=None) if msg.date else None
            self._reply(db, None, player, msg, "not_verified", {"date": sent}, now)
            return Outcome("refused")
        if msg.size > ref.max_message_size:
            self._reply(db, None, player, msg, "too_large", {"limit": ref.max_message_size}, now)
            return Outcome("refused")
        if msg.tnef_only:
            self._reply(db, None, player, msg, "plain_text_please", {}, now)
            return Outcome("refused")
        game = self._find_game(db, msg, player, seated)
        if isinstance(game, str):
            self._reply(db, None, player, msg, "which_game", {
                "problem": game, "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        record.game_id = game.id
        gs = GameSession(self, db, game, now)
        seat = gs.seat_of(player)
        if seat is None:
            self._reply(db, None, player, msg, "which_game", {
                "problem": f"You have no seat in {game.tag}.", "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        transcript = self._run_commands(gs, seat.position, msg, record.id)
        gs.settle()
        self._reply(db, gs, player, msg, "transcript", {
            "lines": [t.__dict__ for t in transcript],
            # Asked for, or owed: after a refusal the player sees what they
            # can do now (for a bid, the cards they still hold; PS-7).
            "help": gs.engine.help(gs.state, seat.position)
            if not transcript or any(t.read_as == "help" or t.result == "refused"
                                     for t in transcript) else None,
            "over": gs.engine.is_over(gs.state) or game.status != "active",
        }, now, seat=seat.position)
        gs.send_notices()  # the answer first, then the reports it caused
        return Outcome("processed", game.tag, transcript)

    def _scope(self, msg: InboundMessage, gs: GameSession) -> Scope:
        """Secret to the referee alone; private among players; public otherwise."""
        ref = self.config.referee
        others = {a for a in (*msg.to, *msg.cc) if not self._is_referee(a)}
        if (ref.public_list and ref.public_list in others) or (
            msg.list_id and msg.list_id == self._list_id()
        ):
            return Scope.PUBLIC
        others.discard(msg.sender)
        if not others:
            return Scope.SECRET
        members = {s.player.address for s in gs.row.seats if s.player is not None}
        return Scope.PRIVATE if others <= members else Scope.PUBLIC

    def _verp_bounce(self, db: Session, oid: int, msg: InboundMessage) -> Bounce | None:
        """The bounce of outbox row ``oid``: its delivery report if it has one,
        else, for a mail to one recipient, that recipient."""
        row = db.get(m.Outbox, oid)
        if row is None:
            return None
        game = db.get(m.Game, row.game_id) if row.game_id else None
        ours = self.composer.message_id(oid, game.tag if game else None)
        if msg.bounce is not None:
            return dataclasses.replace(msg.bounce,
                                       message_ids=(*msg.bounce.message_ids, ours.strip("<>")))
        if len(row.recipients) != 1:
            return None  # a report in prose about one of several: no one to mark
        return Bounce(failed=((row.recipients[0], f"bounced: {msg.subject}"[:300]),),
                      message_ids=(ours.strip("<>"),))

    def _record_bounce(self, db: Session, bounce: Bounce, now: datetime) -> Iterator[str]:
        """Note on each player whose mail failed for good, and on the outbox
        row. Only a report on one of our own mails that went to that address
        counts; a report on anything else marks nobody. Yields notes."""
        rows = [row for mid in bounce.message_ids
                if (oid := self.composer.outbox_id(mid)) is not None
                and (row := db.get(m.Outbox, oid)) is not None]
        for address, said in bounce.failed:
            for row in rows:
                if address not in row.recipients:
                    continue
                row.last_error = f"bounced: {address}: {said}"
                player = db.scalar(select(m.Player).where(m.Player.address == address))
                if player is not None:
                    player.bounced_at, player.bounce = now, said or "failed"
                yield f"; {address} bounced mail {row.id} ({said or 'failed'})"
                break

    def _verify(self, msg: InboundMessage, player: m.Player) -> Verdict:
        """Whether ``msg`` is really from ``player``: it came to their private
        address, or the trusted Authentication-Results show an aligned pass."""
        private = self.private_address(player) if player.token else None
        if private and private in (*msg.to, *msg.cc):
            return Verdict("token", "sent to the player's private address")
        authserv_id = self.config.auth.authserv_id
        if not authserv_id:
            return Verdict(None, "no [auth] authserv_id to trust")
        list_domain = None
        if msg.list_id and msg.list_id == self._list_id() and self.config.referee.public_list:
            list_domain = self.config.referee.public_list.rpartition("@")[2]
        return verify(msg.auth_results, authserv_id, msg.sender.rpartition("@")[2],
                      also_trusted=list_domain)

    def _is_referee(self, addr: str) -> bool:
        local, _, domain = self.config.referee.address.partition("@")
        a_local, _, a_domain = addr.partition("@")
        return a_domain == domain and a_local.split("+")[0] == local

    def _list_id(self) -> str | None:
        ref = self.config.referee
        if ref.list_id:
            return ref.list_id.strip("<>").lower()
        return ref.public_list.replace("@", ".") if ref.public_list else None

    def _run_commands(
        self, gs: GameSession, seat: int, msg: InboundMessage, inbound_id: int
    ) -> list[TranscriptLine]:
        out: list[TranscriptLine] = []
        scope = self._scope(msg, gs)
        unknown = 0
        for line in msg.lines:
            word = line.strip().lower().rstrip(".!")
            if word in GENERIC_COMMANDS:
                action: Action | None = Action(word)
            else:
                try:
                    action = gs.engine.parse(line)
                except ParseError as e:
                    out.append(TranscriptLine(line, "?", "refused", str(e)))
                    unknown = 0
                    continue
            if action is None:
                unknown += 1
                if unknown >= MAX_UNKNOWN_LINES:
                    out.append(TranscriptLine(line, "", "ignored",
                                              "Not a command; the rest of the mail was ignored."))
                    break
                out.append(TranscriptLine(line, "", "ignored", "Not a command."))
                continue
            unknown = 0
            read_as = " ".join([action.verb, *(str(a) for a in action.args)])
            if action.verb == "help":
                out.append(TranscriptLine(line, "help", "applied", "Help is below."))
                continue
            if gs.row.status == "cancelled":
                out.append(TranscriptLine(line, read_as, "refused", "The game was cancelled."))
                continue
            if gs.engine.is_over(gs.state):
                out.append(TranscriptLine(line, read_as, "refused", "The game is over."))
                continue
            try:
                if action.verb != "resign":
                    gs.engine.accepts(action, scope)
                verdict, text = gs.apply(seat, action, "player", inbound_id)
                out.append(TranscriptLine(line, read_as, verdict, text))
                gs.run_bots()
            except EngineError as e:
                out.append(TranscriptLine(line, read_as, "refused", str(e)))
                if action.verb == "resign":
                    break
            if action.verb == "resign":
                out.append(TranscriptLine("", "", "ignored",
                                          "You have left the game; the rest was ignored."))
                break
        return out

    def _find_game(
        self, db: Session, msg: InboundMessage, player: m.Player, seated: list[m.Game]
    ) -> m.Game | str:
        tag = find_tag(msg.subject) or self.composer.tag_from_ids(
            [*msg.references, *msg.in_reply_to]
        )
        if tag:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            if game is None:
                return f"There is no game {tag}."
            return game
        if len(seated) == 1:
            return seated[0]
        if not seated:
            return "You have no game in progress."
        return "You play in more than one game; put the game's tag in the subject, like [tag]."

    def _active_games(self, db: Session, player: m.Player | None) -> list[m.Game]:
        return [g for g in self._all_games(db, player) if g.status == "active"]

    def _all_games(self, db: Session, player: m.Player | None) -> list[m.Game]:
        if player is None:
            return []
        # A subquery, not DISTINCT: PostgreSQL cannot compare json columns.
        seated = select(m.Seat.game_id).where(m.Seat.player_id == player.id)
        q = select(m.Game).where(m.Game.id.in_(seated)).order_by(m.Game.id)
        return list(db.scalars(q))

    def _stranger(self, db: Session, msg: InboundMessage, now: datetime) -> Outcome:
        """Mail from an address in no game changes nothing; answered once a day."""
        if self._is_referee(msg.sender) or not msg.sender:
            return Outcome("ignored")
        if msg.sender == self.config.referee.public_list:
            # A list that rewrote From: never answer the list itself.
            return Outcome("ignored")
        row = db.get(m.StrangerReply, msg.sender)
        if row is not None and now - row.replied_at < STRANGER_INTERVAL:
            return Outcome("ignored")
        if row is None:
            db.add(m.StrangerReply(address=msg.sender, replied_at=now))
        else:
            row.replied_at = now
        self._queue(db, None, [(msg.sender, msg.sender_name)],
                    *self.composer.render("common", "stranger", {}),
                    auto="auto-replied", in_reply_to=msg.message_id,
                    references=msg.references, now=now, kind="stranger")
        return Outcome("stranger")

    # -- outbox ---------------------------------------------------------------
    def _reply(
        self, db: Session, gs: GameSession | None, player: m.Player, msg: InboundMessage,
        template: str, context: dict[str, Any], now: datetime, seat: int | None = None,
    ) -> None:
        """A secret answer to the sender, at their registered address only."""
        folder = (gs.engine.templates or gs.engine.kind) if gs else "common"
        ctx = {"subject": msg.subject, **(gs.context(seat) if gs else {"tag": None}), **context}
        subject, body = self.composer.render(folder, template, ctx)
        self._queue_to_player(db, gs.row if gs else None, player, subject, body,
                              auto="auto-replied", in_reply_to=msg.message_id,
                              references=msg.references, now=now, kind=template)

    def deliver(self, db: Session, gs: GameSession, notice: Notice) -> None:
        """Mail one engine notice to its audience, never wider."""
        folder = gs.engine.templates or gs.engine.kind
        extra = {"timeout_for": gs.timeout_for.get(id(notice))}
        if notice.audience.public:
            subject, body = self.composer.render(
                folder, notice.template, {**gs.context(None), **notice.context, **extra}
            )
            lst = self.config.referee.public_list
            to = [(lst, "")] if lst else [
                (s.player.address, s.player.name) for s in gs.row.seats
                if s.player is not None and not s.bot
            ]
            if to:
                self._queue(db, gs.row, to, subject, body, auto="auto-generated", now=gs.now,
                            kind=notice.template)
            return
        for position in sorted(notice.audience.seats):
            seat = gs.row.seats[position - 1]
            if seat.bot or seat.player is None:
                continue
            subject, body = self.composer.render(
                folder, notice.template, {**gs.context(position), **notice.context, **extra}
            )
            self._queue_to_player(db, gs.row, seat.player, subject, body,
                                  auto="auto-generated", now=gs.now, kind=notice.template)

    def private_address(self, player: m.Player) -> str:
        """The player's private reply address, ``referee+TOKEN@domain``: mail
        to it from the player's own address is theirs (see :meth:`_verify`).
        Only ever sent to the player, in Reply-To of mail to them alone."""
        if player.token is None:
            player.token = _new_token()
        local, _, domain = self.config.referee.address.partition("@")
        return f"{local}+{player.token}@{domain}"

    def rotate_token(self, address: str) -> None:
        """A new private reply address for a player whose old one got out."""
        with self.sessions.begin() as db:
            player = db.scalar(select(m.Player).where(m.Player.address == address.lower()))
            if player is None:
                raise RefereeError(f"No player has the address {address}.")
            player.token = _new_token()

    def _queue_to_player(self, db: Session, game: m.Game | None, player: m.Player,
                         subject: str, body: str, **kw: Any) -> m.Outbox:
        """Queue a mail to one player alone; their replies go to their private address."""
        return self._queue(db, game, [(player.address, player.name)], subject, body,
                           reply_to=self.private_address(player), **kw)

    def _queue(
        self, db: Session, game: m.Game | None, to: list[tuple[str, str]], subject: str,
        body: str, *, auto: str, now: datetime, in_reply_to: str | None = None,
        references: Iterable[str] = (), kind: str | None = None, reply_to: str | None = None,
    ) -> m.Outbox:
        row = m.Outbox(game_id=game.id if game else None, recipients=[a for a, _ in to], raw="",
                       created_at=now, next_attempt_at=now)
        db.add(row)
        db.flush()
        refs = [f"<{r.strip('<>')}>" for r in references]
        email = self.composer.message(
            outbox_id=row.id, to=to, subject=subject, body=body,
            tag=game.tag if game else None, auto=auto,
            in_reply_to=f"<{in_reply_to.strip('<>')}>" if in_reply_to else None,
            references=refs, now=now, kind=kind, reply_to=reply_to,
        )
        row.raw = email.as_string()
        return row

    # -- the operator's actions -----------------------------------------------
    def _active_game(self, db: Session, tag: str) -> m.Game:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        if game is None:
            raise RefereeError(f"There is no game {tag}.")
        if game.status != "active":
            raise RefereeError(f"{tag} is {game.status}; there is nothing to do.")
        return game

    def resign_player(self, tag: str, address: str, now: datetime | None = None) -> str:
        """The operator hands a player's seat to a bot, as if they had written
        ``resign`` (PS-13's admin action); returns the seat's name."""
        now = now or now_utc()
        addr, _ = parse_player(address)
        with self.sessions.begin() as db:
            game = self._active_game(db, tag)
            seat = next((s for s in game.seats if not s.bot and s.player is not None
                         and s.player.address == addr), None)
            if seat is None:
                raise RefereeError(f"{addr} plays no seat of {tag}.")
            gs = GameSession(self, db, game, now)
            gs.apply(seat.position, Action("resign"), "operator", None)
            gs.finish()
            return seat.name

    def cancel_game(self, tag: str, reason: str = "", now: datetime | None = None) -> None:
        """The operator ends a game with no winner; everyone is told why."""
        now = now or now_utc()
        with self.sessions.begin() as db:
            game = self._active_game(db, tag)
            gs = GameSession(self, db, game, now)
            game.status, game.finished_at = "cancelled", now
            for d in gs.deadlines():
                db.delete(d)
            db.add(m.Event(game_id=game.id, step=game.step, kind="cancelled",
                           text=f"The game was cancelled. {reason}".strip(), public=True,
                           data={"reason": reason}, at=now))
            self.deliver(db, gs, Notice(Audience.everyone(), "cancelled", {"reason": reason}))

    def extend_deadlines(self, tag: str, by: timedelta, reason: str = "",
                         now: datetime | None = None) -> int:
        """The operator moves every open deadline of a game ``by`` later (a
        player away, a holiday); everyone is told. Returns how many moved."""
        now = now or now_utc()
        if by <= timedelta(0):
            raise RefereeError("extend by a positive duration, like 2d")
        with self.sessions.begin() as db:
            game = self._active_game(db, tag)
            gs = GameSession(self, db, game, now)
            deadlines = gs.deadlines()
            if not deadlines:
                raise RefereeError(f"{tag} has no open deadline.")
            for d in deadlines:
                d.due_at += by
                if d.due_at - timedelta(seconds=game.reminder_seconds) > now:
                    d.reminded_at = None  # remind again before the new deadline
            listed = [{"name": game.seats[d.seat - 1].name, "what": d.what,
                       "due": format_when(d.due_at)} for d in deadlines]
            self.deliver(db, gs, Notice(Audience.everyone(), "extended", {
                "by": format_duration(by), "reason": reason, "deadlines": listed}))
            return len(deadlines)

    # -- deadlines ------------------------------------------------------------
    def fire_deadlines(self, now: datetime | None = None) -> int:
        """Send due reminders and act for seats past their deadline.

        Each game is its own transaction. Returns how many timeouts fired.
        """
        now = now or now_utc()
        fired = 0
        with self.sessions() as db:
            game_ids = sorted(set(db.scalars(select(m.Deadline.game_id))))
        for game_id in game_ids:
            try:
                fired += self._fire_game_deadlines(game_id, now)
            except DBAPIError:
                raise
            except Exception:
                # A fault in one game must not stop the clock of the others;
                # its transaction rolled back, so the next pass tries again.
                log.exception("deadlines of game %s failed", game_id)
        return fired

    def _fire_game_deadlines(self, game_id: int, now: datetime) -> int:
        fired = 0
        with self.sessions.begin() as db:
            game = db.get(m.Game, game_id)
            if game is None or game.status != "active":
                return 0
            gs = GameSession(self, db, game, now)
            for d in gs.deadlines():
                if d.due_at <= now:
                    continue
                remind_at = d.due_at - timedelta(seconds=game.reminder_seconds)
                seat = game.seats[d.seat - 1]
                if d.reminded_at is None and remind_at <= now and not seat.bot and seat.player:
                    d.reminded_at = now
                    subject, body = self.composer.render(
                        gs.engine.templates or gs.engine.kind, "reminder",
                        {**gs.context(d.seat), "what": d.what,
                         "help": gs.engine.help(gs.state, d.seat)},
                    )
                    self._queue_to_player(db, game, seat.player, subject, body,
                                          auto="auto-generated", now=now, kind="reminder")
            # Act for absent seats in the order their deadlines fell due;
            # each timeout may change what is pending, so look again.
            while not gs.engine.is_over(gs.state):
                due = [d for d in gs.deadlines() if d.due_at <= now]
                if not due:
                    break
                gs.timeout(due[0].seat)
                fired += 1
                gs.run_bots()
                gs.reconcile_deadlines()
            gs.finish()
        return fired

    # -- reading --------------------------------------------------------------
    def status(self, tag: str | None = None) -> list[dict[str, Any]]:
        """Public facts about games: whose move, deadlines, scores."""
        with self.sessions() as db:
            q = select(m.Game).order_by(m.Game.id)
            if tag:
                q = q.where(m.Game.tag == tag)
            out = []
            for game in db.scalars(q):
                engine = get_game(game.kind)
                state = engine.load(game.state)
                deadlines = list(db.scalars(select(m.Deadline).where(
                    m.Deadline.game_id == game.id).order_by(m.Deadline.due_at)))
                out.append({
                    "tag": game.tag, "kind": game.kind, "status": game.status,
                    "players": [{"seat": s.position, "name": s.name, "bot": s.bot,
                                 "address": s.player.address if s.player else None,
                                 "bounced": _bounced(s.player)}
                                for s in game.seats],
                    "deadlines": [{"seat": d.seat, "name": game.seats[d.seat - 1].name,
                                   "what": d.what, "due_at": d.due_at.isoformat() + "Z"}
                                  for d in deadlines],
                    **engine.summary(state),
                })
            if tag and not out:
                raise RefereeError(f"There is no game {tag}.")
            return out

    def public_history(self, tag: str) -> list[dict[str, Any]]:
        """The public events of a game, oldest first: what its web page shows.
        Secret facts (sealed bids, deals) are left out here, at the source."""
        with self.sessions() as db:
            q = (select(m.Event).join(m.Game).where(m.Game.tag == tag, m.Event.public)
                 .order_by(m.Event.id))
            return [{"at": e.at, "kind": e.kind, "text": e.text} for e in db.scalars(q)]

    def replay(self, tag: str) -> Any:
        """Rebuild a game's state from its seed and action log (an audit)."""
        with self.sessions() as db:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            if game is None:
                raise RefereeError(f"There is no game {tag}.")
            engine = get_game(game.kind)
            opts = {k: v for k, v in game.options.items() if k not in ("deadline", "reminder")}
            infos = [SeatInfo(s.position, s.name, False, s.team) for s in game.seats]
            actions = db.scalars(select(m.ActionLog).where(m.ActionLog.game_id == game.id)
                                 .order_by(m.ActionLog.step))
            bots = {s.position for s in game.seats if s.bot and s.player is None}
            infos = [SeatInfo(i.position, i.name, i.position in bots, i.team) for i in infos]
            state = engine.new(opts, infos, rng_for(game.seed, 0)).state
            for a in actions:
                act = Action.from_json(a.action)
                if act.verb == "resign":
                    state = engine.replace_with_bot(state, a.seat).state
                else:
                    state = engine.apply(state, a.seat, act, rng_for(game.seed, a.step)).state
            return engine.dump(state)


def _new_token() -> str:
    """The secret of a private reply address: 64 random bits, in hex."""
    return secrets.token_hex(8)


def _bounced(player: m.Player | None) -> dict[str, str] | None:
    """A player's last bounce, for ``status``; None if their mail never bounced."""
    if player is None or player.bounced_at is None:
        return None
    return {"at": player.bounced_at.isoformat() + "Z", "said": player.bounce}


__all__ = ["IllegalAction", "Outcome", "Referee", "RefereeError", "parse_player"]
