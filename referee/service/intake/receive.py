"""One inbound mail, one transaction: advance the mailbox cursor, skip what
was seen before (source key, digest, or Message-ID with the same sender and
body), record the mail, work out its facts (``letter``), take it through the
``chain`` of checks and, if they let it through, play it (``Chain.play``).

A Message-ID is the sender's word, and anyone may send any: a mail under a
Message-ID seen before is a copy (delivered twice, or the list's copy of a
mail also sent to the referee) only when it comes from the same sender and
says the same (the same command lines: a list's headers, subject prefix and
footer change none). Any other is a mail of its own, read and answered.

``Intake.process`` opens the message's transaction and commits it with the
mailbox cursor, or, in a pass, a savepoint of the pass's :class:`Batch`,
which commits a few dozen mails at once; a fault of ours rolls the mail
back (alone) and records it as failed in a transaction (or savepoint) of
its own, so it never blocks the mail behind it.

A failed mail is not kept, only its record (the mailbox keeps the mail). The
operator may ask for it to be read again (``referee inbound --retry``): its
record is marked :data:`RETRY`, the next pass fetches the mail by its source
key and hands it back here with ``again``, and the record itself becomes the
mail's record, in one transaction, so the mail is refereed once.

A mail about a game whose package cannot serve it now (``play.guests``) is
neither failed nor answered: its record waits (``WAITING``), and is marked
:data:`RETRY` by itself once the package is back (:meth:`Intake.wake`).
A package that raises while a mail is read (:class:`PackageFault`) has its
kind unavailable from then on, and the mail is read again from the start:
a mail about its game then waits, and any other goes on without it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.games import PackageFault
from referee.mail.automation import Automation
from referee.mail.inbound import InboundMessage, parse_message
from referee.service.club.tables import Tables
from referee.service.intake.budgets import content_digest
from referee.service.intake.chain import Chain, ToPlay
from referee.service.intake.letter import Letter, Outcome
from referee.service.intake.ownership import Ownership
from referee.service.intake.triage import Triage
from referee.service.outgoing.bounces import Bounces
from referee.service.outgoing.delivery import Delivery
from referee.service.play.guests import WAITING, Unserved, serves_again
from referee.service.play.operator import Operator
from referee.store import cursors, game_rows
from referee.store import models as m
from referee.store.db import cannot_use
from referee.store.ids import next_id

log = logging.getLogger(__name__)

#: (mailbox, UIDVALIDITY, UID) of an IMAP message, stored with its outcome.
Cursor = tuple[str, int, int]
#: How often a message whose transaction lost a unique-key race to another
#: worker is read again before it counts as failed.
RACE_RETRIES = 2
#: The status of a failed mail's record that the operator asked to be read again.
RETRY = "retry"
#: How many game packages may raise while one mail is read (each is then
#: left out, and the mail read again) before it counts as failed.
FAULTS = 3
#: A :class:`Batch` commits once it holds this many mails...
BATCH_MAILS = 20
#: ... or once its first mail is this many seconds old, so that the mail it
#: queued goes out (and the write lock is let go) soon after.
BATCH_SECONDS = 0.25


class Batch:
    """Mails of one pass refereed in one transaction, each in a savepoint of
    its own: a mail that fails rolls back alone, and the batch commits every
    :data:`BATCH_MAILS` mails (or :data:`BATCH_SECONDS`). The pass marks
    the mails read in the mailbox only after :meth:`commit`, so a pass
    killed before it reads them all again, and each is then a duplicate of
    what was committed or refereed anew: none lost, none doubled.

    While the batch is open no other session of this process may write
    (SQLite has one writer: it would wait for the batch's lock): the pass
    commits before it does anything else with the database or the network.
    On SQLite the transaction begins with ``BEGIN IMMEDIATE``: the write
    lock is taken at once (waiting for another process's, as a write
    would), and the savepoints nest inside it (the driver would otherwise
    let the first savepoint begin, and its release end, the transaction)."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self._db: Session | None = None
        self.mails = 0
        self._began = 0.0

    @property
    def db(self) -> Session:
        """The batch's session, its transaction begun."""
        if self._db is None:
            db = self.sessions()
            if db.get_bind().dialect.name == "sqlite":
                db.connection().exec_driver_sql("BEGIN IMMEDIATE")
            else:
                db.begin()
            self._db, self.mails, self._began = db, 0, time.monotonic()
        return self._db

    @contextmanager
    def mail(self) -> Iterator[Session]:
        """One mail's savepoint: released when the block ends, rolled back
        (the mail alone) when it raises; its game's row written in one
        statement (``store.game_rows``). The session forgets the mail's
        objects after it, as a session of its own would."""
        db = self.db
        try:
            with db.begin_nested():
                yield db
                game_rows.write_changed(db)
        finally:
            self.mails += 1
            db.expunge_all()

    def full(self) -> bool:
        """Whether the batch should commit now."""
        return self._db is not None and (
            self.mails >= BATCH_MAILS or time.monotonic() - self._began >= BATCH_SECONDS)

    def commit(self) -> bool:
        """Commit what the batch holds (nothing: nothing done); whether it held any."""
        if self._db is None:
            return False
        db, self._db = self._db, None
        try:
            db.commit()
        finally:
            db.close()
        return True

    def close(self) -> None:
        """Roll back what was not committed (the pass failed, or was killed
        between two commits): its mails are read again by the next pass."""
        if self._db is not None:
            db, self._db = self._db, None
            db.close()


class Intake:
    """Referees inbound mail, one message per transaction."""

    def __init__(self, config: Config, sessions: sessionmaker[Session],
                 delivery: Delivery) -> None:
        self.config, self.sessions, self.delivery = config, sessions, delivery
        # The club's tables, for its command lines by mail (``gamesmaster``):
        # a game a table fills is made in the mail's transaction.
        tables = Tables(config, Operator(config, sessions, delivery))
        self.chain = Chain(config, delivery, Bounces(delivery.composer), tables)
        #: Which new mail to read first (a pass reads players' mail first).
        self.triage = Triage(sessions, delivery.addresses)
        #: Whether a fresh database may read the mailbox it meets.
        self.ownership = Ownership(sessions)

    def process(self, raw: bytes, source_key: str, now: datetime,
                cursor: Cursor | None = None, size: int | None = None,
                again: int | None = None, batch: Batch | None = None) -> Outcome:
        """Process one raw message in one transaction (with ``batch``, in a
        savepoint of the batch's: the caller commits it, :class:`Batch`).

        ``cursor`` (mailbox, UIDVALIDITY, UID) is stored in the same
        transaction, so the mailbox position and the game never disagree.
        ``size`` is the server's size of a message fetched only in part.
        ``again`` is the id of the failed mail's record the operator asked to
        be read again (:data:`RETRY`); anything else reads it as "duplicate".
        """
        for faults in range(FAULTS + 1):
            try:
                return self._attempt(raw, source_key, now, cursor, size, again, batch)
            except PackageFault as e:
                # Rolled back; the package's kind is unavailable now (its
                # line logged): read again, a mail about one of its games
                # waits, and any other goes on without it.
                if faults == FAULTS:
                    return self._failed(raw, source_key, now, cursor, e, again, batch)
                log.warning("message %s read again without the game package that raised: %s",
                            source_key, e.package)
        raise AssertionError("unreachable")

    @contextmanager
    def _transaction(self, batch: Batch | None) -> Iterator[Session]:
        """A transaction of its own, or a savepoint of ``batch``'s."""
        if batch is None:
            with self.sessions.begin() as db:
                yield db
                game_rows.write_changed(db)
        else:
            with batch.mail() as db:
                yield db

    def _attempt(self, raw: bytes, source_key: str, now: datetime, cursor: Cursor | None,
                 size: int | None, again: int | None, batch: Batch | None) -> Outcome:
        """One reading of a message (:meth:`process`)."""
        try:
            for attempt in range(RACE_RETRIES + 1):
                try:
                    with self._transaction(batch) as db:
                        return self._process(db, raw, source_key, now, cursor, size, again)
                except IntegrityError:
                    # Another worker committed the same mail, or a row this
                    # one also made (a player, a budget): done elsewhere.
                    # Rolled back; read again, it is a duplicate or goes on.
                    if attempt == RACE_RETRIES:
                        raise
                    log.info("message %s raced another worker; reading it again", source_key)
            raise AssertionError("unreachable")
        except Unserved as e:
            # Neither the player's fault nor a fault of ours: the game's
            # package cannot serve it now. Rolled back; the mail waits.
            return self._waiting(raw, source_key, now, cursor, e, again, batch)
        except PackageFault:
            raise  # read again without it (process)
        except Exception as e:
            if cannot_use(e):
                # The database is away, busy, full or damaged: no fault of
                # the mail's, which is read again by the next pass.
                raise
            # A fault of ours (an engine, a template, a value the database
            # refused) rolled the message's transaction back. It must not
            # block the mail behind it, so it is recorded as failed in a
            # transaction of its own.
            log.exception("processing message %s failed", source_key)
            return self._failed(raw, source_key, now, cursor, e, again, batch)

    def batch(self) -> Batch:
        """A batch of mails to referee in one transaction (:class:`Batch`)."""
        return Batch(self.sessions)

    def wake(self) -> int:
        """Make the mail that waits for a game's package ready to be read
        again (:data:`RETRY`) where the package is back (installed since,
        or mended), so the next reading of such mail (``passes.reread``,
        before any new mail) referees it in the order it came. How many."""
        with self.sessions.begin() as db:
            kinds = db.scalars(select(m.Game.kind).distinct()
                               .join(m.Inbound, m.Inbound.game_id == m.Game.id)
                               .where(m.Inbound.status == WAITING)).all()
            back = [kind for kind in kinds if serves_again(kind)]
            if not back:
                return 0
            woken: CursorResult[Any] = db.execute(  # type: ignore[assignment]
                update(m.Inbound).where(
                    m.Inbound.status == WAITING,
                    m.Inbound.game_id.in_(select(m.Game.id).where(m.Game.kind.in_(back))))
                .values(status=RETRY))
        log.info("the game package of %s is back: %s waiting mail(s) to read again",
                 ", ".join(back), woken.rowcount)
        return int(woken.rowcount)

    def to_read_again(self, iid: int) -> bool:
        """Whether the mail ``iid`` is still to be read again (one of its
        game's kind that came before it may have sent it back to wait)."""
        with self.sessions() as db:
            return db.scalar(select(m.Inbound.status).where(m.Inbound.id == iid)) == RETRY

    def retries(self) -> list[tuple[int, str]]:
        """(record id, source key) of each mail to read again, oldest first."""
        with self.sessions() as db:
            q = (select(m.Inbound.id, m.Inbound.source_key)
                 .where(m.Inbound.status == RETRY).order_by(m.Inbound.id))
            return [(iid, key) for iid, key in db.execute(q)]

    def not_read_again(self, iid: int, reason: str) -> None:
        """A mail to read again that could not be fetched: failed again, saying why."""
        with self.sessions.begin() as db:
            row = db.get(m.Inbound, iid)
            if row is not None and row.status == RETRY:
                row.status = "failed"
                before = row.note if row.note.startswith("waiting: ") else \
                    f"it had failed: {row.note}"
                row.note = f"not read again: {reason} ({before})"[:1000]

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
                cursors.advance(db, mailbox, uidvalidity, last)

    def _parse(self, raw: bytes) -> InboundMessage:
        ref = self.config.referee
        return parse_message(raw, referee_address=ref.address,
                             list_address=ref.public_list, our_domain=ref.domain)

    def _process(self, db: Session, raw: bytes, source_key: str, now: datetime,
                 cursor: Cursor | None, size: int | None, again: int | None) -> Outcome:
        postgresql = db.get_bind().dialect.name == "postgresql"
        # With several workers ([referee] workers = "many"; one alone holds
        # the pass lease), a mail is claimed by the first to read it.
        if postgresql and self.config.referee.workers == "many" and not db.scalar(
                select(func.pg_try_advisory_xact_lock(func.hashtext(source_key)))):
            return Outcome("elsewhere")  # another worker is reading this very mail
        failed = None
        if again is not None:
            # Locked on PostgreSQL: a worker that waited for this one finds it done.
            failed = db.get(m.Inbound, again, with_for_update=postgresql)
            if failed is None or failed.status != RETRY or failed.source_key != source_key:
                return Outcome("duplicate")  # read again meanwhile, or not this mail
        if cursor is not None:
            cursors.advance(db, *cursor)
        try:
            msg = self._parse(raw)
        except Exception as e:  # a message we cannot read must not block the queue
            if failed is not None:
                failed.status, failed.note = "failed", f"unreadable: {e}"[:1000]
                return Outcome("failed")
            if db.scalar(select(m.Inbound.id).where(m.Inbound.source_key == source_key)):
                return Outcome("duplicate")
            log.warning("unreadable message %s: %s", source_key, e)
            db.add(m.Inbound(id=next_id(db, INBOUND), source_key=source_key, sender="",
                             status="failed",
                             note=f"unreadable: {e}", received_at=now))
            return Outcome("failed")
        if size is not None and size > msg.size:
            msg = dataclasses.replace(msg, size=size)
        record = failed or m.Inbound(source_key=source_key, received_at=now)
        record.message_id, record.digest = msg.message_id, mail_digest(msg, raw)
        record.body_digest = content_digest(msg)
        record.sender, record.subject = msg.sender, msg.subject
        record.status, record.note = "processed", ""
        # One query for every way this mail may have been seen: its mailbox
        # position; its Message-ID, from the same sender saying the same (a
        # record from before bodies were kept: the same sender); or, read
        # again after a mailbox reset or replayed under a new Message-ID, the
        # same sender, Date and commands. A mail read again is not its own
        # duplicate, nor a copy of it that came while it had failed.
        q = SEEN_AS_SENT if msg.message_id else SEEN
        if failed is not None:
            q = q.where(m.Inbound.id != failed.id,
                        m.Inbound.note != f"duplicate of inbound {failed.id}")
        seen_rows = db.connection().execute(q, {
            "key": source_key, "digest": record.digest, "mid": msg.message_id,
            "sender": msg.sender, "body": record.body_digest}).all()
        if any(key == source_key for _, key in seen_rows):
            return Outcome("duplicate")
        if seen_rows:
            record.status, record.note = "ignored", f"duplicate of inbound {seen_rows[0][0]}"
            if failed is None:
                record.id = next_id(db, INBOUND)
                _insert_record(db, record)
            return Outcome("duplicate")
        if failed is None:
            # The record is one row, inserted once what it says is known: at
            # the end, or, for a mail the chain lets through, before its moves
            # (which name it) as a played mail's record says; it is written
            # again only when the play ends otherwise.
            record.id = next_id(db, INBOUND)
        letter = Letter.read(msg, record, now, self.config, self.delivery.addresses,
                             self.delivery.composer)
        judged = self.chain.run(db, letter)
        inserted = None
        if isinstance(judged, ToPlay):
            if failed is None:
                record.status, record.note = "processed", record.note or "processed"
                inserted = _insert_record(db, record)
            # A mail the chain let through is played, after it.
            outcome = self.chain.play(db, letter, judged)
        else:
            outcome = judged
        record.status = outcome.status
        record.note = record.note or outcome.status
        if failed is None:
            if inserted is None:
                _insert_record(db, record)
            elif (changed := {k: v for k, v in _record_row(record).items()
                              if inserted[k] != v}):
                db.connection().execute(UPDATE_RECORD, [{"record": record.id, **changed}])
        return outcome

    def _waiting(self, raw: bytes, source_key: str, now: datetime, cursor: Cursor | None,
                 unserved: Unserved, again: int | None, batch: Batch | None) -> Outcome:
        """Record a mail whose game's package cannot serve it now as
        :data:`WAITING` (its game, and why), unanswered: :meth:`wake` has
        it read again once the package is back. One line of the log."""
        note = f"waiting: {unserved}"[:1000]
        try:
            msg = self._parse(raw)  # it parsed before, so it parses now
        except Exception:
            msg = None
        log.warning("mail from %s waits: %s", msg.sender if msg else "(no sender)", unserved,
                    extra={"game": unserved.tag, "source": source_key})
        try:
            with self._transaction(batch) as db:
                if again is not None:
                    row = db.get(m.Inbound, again)
                    if row is not None and row.status == RETRY:
                        row.status, row.note = WAITING, note
                    # The rest of its kind's mail woken with it waits on,
                    # not fetched again for nothing in this pass.
                    db.execute(update(m.Inbound).where(
                        m.Inbound.status == RETRY, m.Inbound.note.startswith(
                            "waiting: ", autoescape=True),
                        m.Inbound.game_id.in_(select(m.Game.id)
                                              .where(m.Game.kind == unserved.kind)))
                        .values(status=WAITING))
                    return Outcome(WAITING, unserved.tag)
                if cursor is not None:
                    cursors.advance(db, *cursor)
                db.add(m.Inbound(
                    id=next_id(db, INBOUND), source_key=source_key,
                    message_id=msg and msg.message_id,
                    digest=mail_digest(msg, raw) if msg else None,
                    body_digest=content_digest(msg) if msg else None,
                    sender=msg.sender if msg else "", subject=msg.subject if msg else "",
                    game_id=unserved.game_id, status=WAITING, note=note, received_at=now))
        except IntegrityError:
            return Outcome("duplicate")  # recorded meanwhile by another worker
        return Outcome(WAITING, unserved.tag)

    def _failed(self, raw: bytes, source_key: str, now: datetime,
                cursor: Cursor | None, error: Exception, again: int | None = None,
                batch: Batch | None = None) -> Outcome:
        """Record a message whose processing failed, then tell a player who
        wrote it. The record comes first and alone: if even the answer
        fails, the message is still recorded and the mailbox moves on. A
        mail read again that fails again is recorded so; its writer was told
        the first time."""
        note = f"internal error: {type(error).__name__}: {error}"[:1000]
        if again is not None:
            with self._transaction(batch) as db:
                row = db.get(m.Inbound, again)
                if row is not None and row.status == RETRY:
                    row.status, row.note = "failed", note
            return Outcome("failed")
        try:
            msg = self._parse(raw)  # it parsed before the fault, so it parses now
        except Exception:
            msg = None
        try:
            with self._transaction(batch) as db:
                if cursor is not None:
                    cursors.advance(db, *cursor)
                db.add(m.Inbound(id=next_id(db, INBOUND), source_key=source_key,
                                 message_id=msg and msg.message_id,
                                 body_digest=content_digest(msg) if msg else None,
                                 sender=msg.sender if msg else "",
                                 subject=msg.subject if msg else "", status="failed",
                                 note=note, received_at=now))
        except IntegrityError:
            return Outcome("duplicate")  # recorded meanwhile by another worker
        if msg is None or msg.automation is not Automation.NONE:
            return Outcome("failed")
        try:
            with self._transaction(batch) as db:
                player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
                if player is not None:
                    self.delivery.reply(db, player, msg, "internal_error", {}, now)
        except Exception as e:
            if cannot_use(e):
                raise
            log.exception("answering failed message %s failed too", source_key)
        return Outcome("failed")

#: The records' table, and the statements that write a mail's record, built once.
INBOUND = m.table_of(m.Inbound)
INSERT_RECORD = insert(INBOUND)
UPDATE_RECORD = update(INBOUND).where(INBOUND.c.id == bindparam("record"))
#: The records of a mail seen before (``Intake._process``): by its mailbox
#: position or its digest, and with a Message-ID, by it from the same
#: sender saying the same (or a record from before bodies were kept).
_SEEN_WHERE = (INBOUND.c.source_key == bindparam("key"), INBOUND.c.digest == bindparam("digest"))
SEEN = (select(INBOUND.c.id, INBOUND.c.source_key).where(or_(*_SEEN_WHERE))
        .order_by(INBOUND.c.id).limit(5))
SEEN_AS_SENT = (select(INBOUND.c.id, INBOUND.c.source_key).where(or_(
    *_SEEN_WHERE, and_(INBOUND.c.message_id == bindparam("mid"),
                       INBOUND.c.sender == bindparam("sender"),
                       or_(INBOUND.c.body_digest == bindparam("body"),
                           INBOUND.c.body_digest.is_(None)))))
    .order_by(INBOUND.c.id).limit(5))


def _record_row(record: m.Inbound) -> dict[str, Any]:
    """The columns of a mail's record, as the row to insert."""
    return {c.key: getattr(record, c.key) for c in INBOUND.columns}


def _insert_record(db: Session, record: m.Inbound) -> dict[str, Any]:
    """Insert a new mail's record (its id taken, ``store.ids``), one
    statement past the session's unit of work; returns the row inserted."""
    row = _record_row(record)
    db.connection().execute(INSERT_RECORD, [row])
    return row


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
