"""Intake: one inbound mail, one transaction. Skip what was seen before,
leave unanswered what must not be answered (bounces, auto-replies, other
lists), answer strangers at most once a day, check the sender, find the game
and seat, run the command lines, reply, and queue the reports they caused.

``Intake.process`` opens the message's transaction and commits it with the
mailbox cursor; a fault of ours rolls it back and records the message as
failed in a transaction of its own, so it never blocks the mail behind it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.engine import get_game
from referee.mail.inbound import Automation, InboundMessage, parse_message
from referee.service.bounces import Bounces
from referee.service.budgets import Allowance, Budgets
from referee.service.commands import MAX_LISTED, run_commands
from referee.service.common import DATABASE_AWAY, Outcome
from referee.service.delivery import Delivery, new_token
from referee.service.joining import Joining, asks_to_join
from referee.service.routing import Routing
from referee.service.senders import Senders
from referee.service.session import GameSession
from referee.store import models as m

log = logging.getLogger(__name__)

#: (mailbox, UIDVALIDITY, UID) of an IMAP message, stored with its outcome.
Cursor = tuple[str, int, int]
#: How often a message whose transaction lost a unique-key race to another
#: worker is read again before it counts as failed.
RACE_RETRIES = 2


class Intake:
    """Referees inbound mail, one message per transaction."""

    def __init__(self, config: Config, sessions: sessionmaker[Session], delivery: Delivery,
                 senders: Senders, bounces: Bounces, routing: Routing) -> None:
        self.config, self.sessions, self.delivery = config, sessions, delivery
        self.senders, self.bounces, self.routing = senders, bounces, routing
        self.budgets = Budgets(config.limits)
        self.joining = Joining(config, routing.composer, senders)

    def process(self, raw: bytes, source_key: str, now: datetime,
                cursor: Cursor | None = None, size: int | None = None) -> Outcome:
        """Process one raw message in one transaction.

        ``cursor`` (mailbox, UIDVALIDITY, UID) is stored in the same
        transaction, so the mailbox position and the game never disagree.
        ``size`` is the server's size of a message fetched only in part.
        """
        try:
            for attempt in range(RACE_RETRIES + 1):
                try:
                    with self.sessions.begin() as db:
                        return self._process(db, raw, source_key, now, cursor, size)
                except IntegrityError:
                    # Another worker committed the same mail, or a row this
                    # one also made (a player, a budget): done elsewhere.
                    # Rolled back; read again, it is a duplicate or goes on.
                    if attempt == RACE_RETRIES:
                        raise
                    log.info("message %s raced another worker; reading it again", source_key)
            raise AssertionError("unreachable")
        except DATABASE_AWAY:
            raise  # the database is away or busy: the next pass tries again
        except Exception as e:
            # A fault of ours (an engine, a template, a value the database
            # refused) rolled the message's transaction back. It must not
            # block the mail behind it, so it is recorded as failed in a
            # transaction of its own.
            log.exception("processing message %s failed", source_key)
            return self._failed(raw, source_key, now, cursor, e)

    def cursor(self, mailbox: str) -> tuple[int, int] | None:
        """The (UIDVALIDITY, last UID) processed in ``mailbox``, if any."""
        with self.sessions() as db:
            row = db.get(m.Cursor, mailbox)
            return (row.uidvalidity, row.last_uid) if row else None

    def settle_cursor(self, mailbox: str, uidvalidity: int,
                      fetched: Sequence[tuple[int, str]]) -> None:
        """Several workers ([referee] workers = "many"): move the cursor past
        the longest run of ``fetched`` (uid, source key), oldest first, that
        is recorded; a mail another worker still holds stops it, so a worker
        that dies with it leaves it to be read again."""
        keys = [k for _, k in fetched]
        with self.sessions.begin() as db:
            done: set[str] = set()
            for i in range(0, len(keys), 500):
                done.update(db.scalars(select(m.Inbound.source_key)
                                       .where(m.Inbound.source_key.in_(keys[i:i + 500]))))
            last = None
            for uid, key in fetched:
                if key not in done:
                    break
                last = uid
            if last is not None:
                _advance_cursor(db, mailbox, uidvalidity, last)

    def _parse(self, raw: bytes) -> InboundMessage:
        ref = self.config.referee
        return parse_message(raw, referee_address=ref.address,
                             list_address=ref.public_list, our_domain=ref.domain)

    def _process(self, db: Session, raw: bytes, source_key: str, now: datetime,
                 cursor: Cursor | None, size: int | None) -> Outcome:
        if db.get_bind().dialect.name == "postgresql" and not db.scalar(
                select(func.pg_try_advisory_xact_lock(func.hashtext(source_key)))):
            return Outcome("elsewhere")  # another worker is reading this very mail
        if cursor is not None:
            _advance_cursor(db, *cursor)
        try:
            msg = self._parse(raw)
        except Exception as e:  # a message we cannot read must not block the queue
            if db.scalar(select(m.Inbound.id).where(m.Inbound.source_key == source_key)):
                return Outcome("duplicate")
            log.warning("unreadable message %s: %s", source_key, e)
            db.add(m.Inbound(source_key=source_key, sender="", status="failed",
                             note=f"unreadable: {e}", received_at=now))
            return Outcome("failed")
        if size is not None and size > msg.size:
            msg = dataclasses.replace(msg, size=size)
        record = m.Inbound(source_key=source_key, message_id=msg.message_id,
                           digest=mail_digest(msg, raw), sender=msg.sender, subject=msg.subject,
                           status="processed", received_at=now)
        # One query for every way this mail may have been seen: its mailbox
        # position; its Message-ID; or, read again after a mailbox reset or
        # replayed under a new Message-ID, the same sender, Date and commands.
        same = [m.Inbound.source_key == source_key, m.Inbound.digest == record.digest]
        if msg.message_id:
            same.append(m.Inbound.message_id == msg.message_id)
        seen_rows = db.execute(select(m.Inbound.id, m.Inbound.source_key)
                               .where(or_(*same)).order_by(m.Inbound.id).limit(5)).all()
        if any(key == source_key for _, key in seen_rows):
            return Outcome("duplicate")
        if seen_rows:
            record.status, record.note = "ignored", f"duplicate of inbound {seen_rows[0][0]}"
            db.add(record)
            return Outcome("duplicate")
        db.add(record)
        db.flush()
        outcome = self._handle(db, msg, record, now)
        record.status = outcome.status
        record.note = record.note or outcome.status
        return outcome

    def _failed(self, raw: bytes, source_key: str, now: datetime,
                cursor: Cursor | None, error: Exception) -> Outcome:
        """Record a message whose processing failed, then tell a player who
        wrote it. The record comes first and alone: if even the answer
        fails, the message is still recorded and the mailbox moves on."""
        note = f"internal error: {type(error).__name__}: {error}"[:1000]
        try:
            msg = self._parse(raw)  # it parsed before the fault, so it parses now
        except Exception:
            msg = None
        try:
            with self.sessions.begin() as db:
                if cursor is not None:
                    _advance_cursor(db, *cursor)
                db.add(m.Inbound(source_key=source_key, message_id=msg and msg.message_id,
                                 sender=msg.sender if msg else "",
                                 subject=msg.subject if msg else "", status="failed",
                                 note=note, received_at=now))
        except IntegrityError:
            return Outcome("duplicate")  # recorded meanwhile by another worker
        if msg is None or msg.automation is not Automation.NONE:
            return Outcome("failed")
        try:
            with self.sessions.begin() as db:
                player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
                if player is not None:
                    self.delivery.reply(db, None, player, msg, "internal_error", {}, now)
        except DATABASE_AWAY:
            raise
        except Exception:
            log.exception("answering failed message %s failed too", source_key)
        return Outcome("failed")

    def _asks_to_join(self, msg: InboundMessage) -> bool:
        """Whether a line of ``msg`` is the join command of a game that takes
        members by mail (the rest need not look for a game to join)."""
        return any(asks_to_join(get_game(kind), msg.lines) for kind in self.joining.kinds)

    def _rotate_shown_addresses(self, db: Session, msg: InboundMessage, now: datetime) -> None:
        """A private reply address works like a password: one that this mail
        showed to anyone but its owner stops counting at once, and the owner
        is told the new one, secretly."""
        tokens = self.senders.tokens_on(msg)
        if not tokens:
            return
        for owner in db.scalars(select(m.Player).where(m.Player.token.in_(tokens))):
            if not self.senders.shown_to_others(msg, owner):
                continue
            old = self.delivery.private_address(owner)
            owner.token = new_token()
            log.warning("private address of %s was shown to others; rotated", owner.address)
            self.delivery.reply(db, None, owner, msg, "private_address_shown", {
                "old": old, "sender": msg.sender,
                "others": sorted({a for a in (*msg.to, *msg.cc)
                                  if not self.senders.is_referee(a) and a != owner.address}),
            }, now)

    def _handle(self, db: Session, msg: InboundMessage, record: m.Inbound,
                now: datetime) -> Outcome:
        ref = self.config.referee
        if any(self.senders.is_bounce_address(a) for a in (*msg.to, *msg.cc)):
            # Only a bounce is ever sent to a VERP address; whatever it says,
            # it is never answered. Only one signed by us names a mail.
            record.note = "not answered: bounce to a VERP address"
            verp = next((oid for a in (*msg.to, *msg.cc)
                         if (oid := self.delivery.composer.verp_outbox_id(a)) is not None),
                        None) if self.config.smtp.verp else None
            bounce = self.bounces.of_verp(db, verp, msg) if verp is not None else None
            if bounce is not None:
                record.note += "".join(self.bounces.record(db, bounce, now))
            return Outcome("ignored")
        if msg.automation is not Automation.NONE:
            record.note = f"not answered: {msg.automation.value}"
            if msg.bounce is not None:
                record.note += "".join(self.bounces.record(db, msg.bounce, now))
            return Outcome("ignored")
        if msg.list_id and msg.list_id != self.senders.list_id():
            record.note = f"not answered: mail from another list ({msg.list_id})"
            return Outcome("ignored")
        player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
        # Anyone, a stranger too, may deal themselves in where a game takes
        # members by mail (002 rule 1): seated below, joined by the commands.
        joining = (self.joining.game_to_join(db, msg, player)
                   if self._asks_to_join(msg) else None)
        if joining is not None and player is None:
            player = self.joining.newcomer(db, msg, now)
        games = self.routing.games_of(db, player) if player else []
        if joining is not None and joining not in games:
            games.append(joining)
        # Judged with the private addresses as they were when it was sent.
        verdict = self.senders.verify(msg, player) if player else None
        self._rotate_shown_addresses(db, msg, now)
        if player is None or verdict is None or not games:
            return self.routing.stranger(db, msg, now)
        seated = [g for g in games if g.status == "active"]
        if not verdict.passed and self.config.auth.require == "verified":
            record.note = f"sender not verified: {verdict.detail}"
            # Answered at the registered address only, once a day: the real
            # player learns that mail in their name was refused, a forger
            # learns nothing, and forged floods do not reach the player.
            if self.budgets.once_a_day(db, player.address, now):
                sent = msg.date.astimezone(UTC).replace(tzinfo=None) if msg.date else None
                self.delivery.reply(db, None, player, msg, "not_verified", {"date": sent}, now)
            return Outcome("refused")
        allowance = self.budgets.charge(db, player.address, content_digest(msg), now)
        if allowance is Allowance.LOOP:
            record.note = "not answered: the same mail again and again (a loop?)"
            return Outcome("ignored")
        if allowance is not Allowance.ANSWER:
            reopens = self.budgets.reopens_at(db, player.address)
            record.note = f"not read: over the reply budget until {reopens:%Y-%m-%d %H:%M} UTC"
            if allowance is Allowance.TELL:
                limits = self.config.limits
                self.delivery.reply(db, None, player, msg, "over_budget", {
                    "per_hour": limits.replies_per_hour, "per_day": limits.replies_per_day,
                    "reopens": reopens}, now)
            return Outcome("refused")
        if msg.size > ref.max_message_size:
            self.delivery.reply(db, None, player, msg, "too_large",
                                {"limit": ref.max_message_size}, now)
            return Outcome("refused")
        if msg.tnef_only:
            self.delivery.reply(db, None, player, msg, "plain_text_please", {}, now)
            return Outcome("refused")
        game = joining if joining is not None else self.routing.find_game(db, msg, seated)
        if isinstance(game, str):
            self.delivery.reply(db, None, player, msg, "which_game", {
                "problem": game, "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        # The whole row in one statement (the sender's games were listed
        # without their states). On PostgreSQL it is locked: another worker
        # refereeing a mail of this game is waited for, and read as it left it.
        db.refresh(game, with_for_update=db.get_bind().dialect.name == "postgresql")
        record.game_id = game.id
        gs = GameSession(self.delivery, db, game, now)
        seat = gs.seat_of(player)
        if seat is None and game is joining:
            seat = self.joining.seat(gs, player, msg)
        if seat is None:
            self.delivery.reply(db, None, player, msg, "which_game", {
                "problem": f"You have no seat in {game.tag}.", "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        scope, seen_by = self.senders.scope(msg, game)
        transcript = run_commands(gs, seat.position, msg.lines, scope, seen_by, record.id,
                                  msg.in_reply_to or msg.references[::-1])
        gs.settle()
        self.delivery.reply(db, gs, player, msg, "transcript", {
            "lines": [t.__dict__ for t in transcript[:MAX_LISTED]],
            "more": max(len(transcript) - MAX_LISTED, 0),
            # Asked for, or owed: after a refusal the player sees what they
            # can do now (for a bid, the cards they still hold; PS-7).
            "help": gs.engine.help(gs.state, seat.position)
            if not transcript or any(t.read_as == "help" or t.result == "refused"
                                     for t in transcript) else None,
            "over": gs.engine.is_over(gs.state) or game.status != "active",
        }, now, seat=seat.position)
        gs.send_notices()  # the answer first, then the reports it caused
        return Outcome("processed", game.tag, transcript)


def content_digest(msg: InboundMessage) -> str:
    """What a mail says: its command lines."""
    return hashlib.sha256("\n".join(msg.lines).encode("utf-8", "surrogatepass")).hexdigest()


def mail_digest(msg: InboundMessage, raw: bytes) -> str:
    """Which mail this is, whatever its Message-ID: for a person's dated mail
    with commands, its sender, Date, recipients, subject, thread and commands (a replay
    under a new Message-ID is the same mail, and changing the subject breaks
    the DKIM signature a verified mail counts on); for any other, its bytes."""
    if msg.lines and msg.date and msg.automation is Automation.NONE:
        text = "\n".join((msg.sender, msg.date.isoformat(), msg.subject,
                          " ".join(sorted({*msg.to, *msg.cc})), " ".join(msg.in_reply_to),
                          content_digest(msg)))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return hashlib.sha256(raw).hexdigest()


def _advance_cursor(db: Session, mailbox: str, uidvalidity: int, uid: int) -> None:
    """Move the mailbox's cursor to ``uid`` (never back, but to a new
    UIDVALIDITY): one statement, an upsert."""
    insert_ = pg_insert if db.get_bind().dialect.name == "postgresql" else sqlite_insert
    stmt = insert_(m.Cursor).values(mailbox=mailbox, uidvalidity=uidvalidity, last_uid=uid)
    db.execute(stmt.on_conflict_do_update(
        index_elements=["mailbox"],
        set_={"uidvalidity": uidvalidity, "last_uid": uid},
        where=(m.Cursor.uidvalidity != uidvalidity) | (m.Cursor.last_uid < uid)))
