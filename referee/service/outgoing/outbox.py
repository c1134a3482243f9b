"""The outbox sender: mails queued rows through the relay (or into a
Maildir) and keeps their books.

A row is marked sent only after the server's 250, which is written to the
sent journal (``journal``) at once, before its connection sends another
row: a crash resends at most the rows in flight (one per connection), each
the same message with the same Message-ID, as the next send books what the
journal holds. Transient failures are retried with
backoff and jitter until ``give_up_after``; permanent ones fail the row at
once. Rows go out over several connections at once (``[smtp]
connections``; a player's rows over one, in order), a batch of them per
transaction, each batch claimed row by row (on PostgreSQL ``FOR UPDATE SKIP
LOCKED``), so several workers never send one row twice.

How a chunk of rows is shared over the connections: rows that share a
recipient, or a game, fall into one lane, in queue order, and a lane never leaves its
connection, which sends its rows one after another, so a player never gets
two mails out of order. Lanes are dealt to connections biggest first, each
to the connection with the fewest rows so far (:func:`lanes`, :func:`deal`).
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.mail.compose import Composer
from referee.mail.maildir import MaildirSink
from referee.mail.smtp import Refused, RelayUnavailable, SmtpRelay
from referee.service.outgoing.bounces import mark_bounced
from referee.service.outgoing.journal import Journal, checksum, leftovers
from referee.store import models as m
from referee.store.db import DATABASE_AWAY

log = logging.getLogger(__name__)

#: A relay back after a short outage drains the outbox within seconds; one
#: down for hours is still asked only every few minutes.
FIRST_RETRY = timedelta(seconds=5)
MAX_RETRY = timedelta(minutes=5)
#: Outbox rows sent, and marked, in one transaction (shared over the
#: connections, so it is enough to keep them all busy); each 250 is in the
#: sent journal before that.
ROWS_PER_TRANSACTION = 200
#: The tags of some games (``ids``), built once.
TAGS = select(m.Game.id, m.Game.tag).where(m.Game.id.in_(bindparam("ids", expanding=True)))


def backoff(attempts: int, rng: random.Random | None = None) -> timedelta:
    """Delay before the next try: doubling from seconds, capped, with jitter."""
    base: timedelta = min(FIRST_RETRY * 2 ** max(attempts - 1, 0), MAX_RETRY)
    jitter: float = 0.75 + 0.5 * (rng or random.Random()).random()
    return base * jitter


def composer_for(config: Config, sessions: sessionmaker[Session]) -> Composer:
    """The composer of this referee, with the key that signs its ids (made
    at ``init``; "" if none)."""
    with sessions() as db:
        row = db.get(m.Secret, "mac")
        key = row.value if row else ""
    return Composer(config.referee.address, config.referee.name, key=key.encode())


class OutboxSender:
    """Sends due outbox rows, a batch per transaction."""

    def __init__(self, config: Config, sessions: sessionmaker[Session],
                 composer: Composer | None = None) -> None:
        self.config = config
        self.sessions = sessions
        self.composer = composer or composer_for(config, sessions)
        #: Why the relay could not be reached in the last send, for poll and the daemon.
        self.relay_error: RelayUnavailable | None = None
        #: The tags of the games whose mail was sent, by id, for the log lines.
        self._tags: dict[int, str] = {}

    def game_of(self, db: Session, row: m.Outbox) -> str:
        """The tag of the game ``row`` is mail of, "" for none: each log line
        of a send names it (``game=TAG``), so one game's mail can be found."""
        if row.game_id is None:
            return ""
        if row.game_id not in self._tags:
            self._fetch_tags(db, {row.game_id})
        return self._tags[row.game_id]

    def learn_tags(self, db: Session, rows: Sequence[m.Outbox]) -> None:
        """The tags of the games of ``rows`` not known yet, in one query,
        where the log lines of their sending are read (INFO)."""
        wanted = {r.game_id for r in rows if r.game_id is not None} - self._tags.keys()
        if wanted and log.isEnabledFor(logging.INFO):
            self._fetch_tags(db, wanted)

    def _fetch_tags(self, db: Session, ids: set[int]) -> None:
        found: dict[int, str] = {i: t for i, t in db.execute(TAGS, {"ids": sorted(ids)})}
        self._tags.update({i: found.get(i) or "" for i in ids})

    def log_row(self, db: Session, level: int, row: m.Outbox, text: str, *args: object,
                exc_info: bool = False) -> None:
        """Log ``text`` about ``row``, with its game."""
        if not log.isEnabledFor(level):
            return  # no query for a line nobody reads
        tag = self.game_of(db, row)
        log.log(level, f"outbox %s {text}%s", row.id, *args, f" game={tag}" if tag else "",
                exc_info=exc_info, extra={"game": tag or None, "outbox": row.id})

    def due(self, now: datetime, limit: int = 500) -> list[int]:
        """The rows to send now, in the order they were queued (the order of
        the events they tell). A row waits while an earlier row to one of its
        recipients still waits (a retry after a failure, whose backoff has a
        jitter of its own): a player never gets "Round 2" before "Round 1"."""
        with self.sessions() as db:
            q = (select(m.Outbox.id, m.Outbox.recipients, m.Outbox.next_attempt_at)
                 .where(m.Outbox.sent_at.is_(None), m.Outbox.failed_at.is_(None))
                 .order_by(m.Outbox.id))
            ids: list[int] = []
            waiting: set[str] = set()  # recipients of an earlier row not yet due
            for oid, recipients, next_attempt_at in db.execute(q):
                to = set(recipients)
                if next_attempt_at > now or to & waiting:
                    waiting |= to
                    continue
                ids.append(oid)
                if len(ids) >= limit:
                    break
            return ids

    def send(self, now: datetime) -> int:
        """Send everything due, in batches; returns how many were sent."""
        self.book_journal(now)
        total, tried = 0, set[int]()
        while True:
            ids = [i for i in self.due(now) if i not in tried]
            if not ids:
                return total
            tried.update(ids)
            total += self._send_batch(ids, now)

    def book_journal(self, now: datetime) -> int:
        """Mark sent the rows that processes gone (killed) left in their sent
        journals (``journal``) unmarked, then drop the journals; returns how
        many."""
        booked = 0
        with leftovers(self.config) as journals:
            entries = {oid: said for _, sent in journals for oid, said in sent.items()}
            for chunk in _chunks(sorted(entries), 500):
                with self.sessions.begin() as db:
                    for row in self._claim(db, chunk):
                        crc, refused = entries[row.id]
                        if checksum(row.raw) != crc:
                            continue  # not this database's row
                        self.mark_sent(db, row, now, refused)
                        booked += 1
        if booked:
            log.info("%d mails the relay took before a pass ended marked sent", booked)
        return booked

    def _claim(self, db: Session, ids: Sequence[int]) -> list[m.Outbox]:
        """The rows of ``ids`` still to send, claimed for this transaction: on
        PostgreSQL locked (``FOR UPDATE SKIP LOCKED``), so a row another
        worker is sending is left to it, and once sent it is no longer due.
        Read afresh, whatever ``db`` read of them before."""
        q = (select(m.Outbox).where(m.Outbox.id.in_(ids), m.Outbox.sent_at.is_(None),
                                    m.Outbox.failed_at.is_(None)).order_by(m.Outbox.id)
             .execution_options(populate_existing=True))
        if db.get_bind().dialect.name == "postgresql":
            q = q.with_for_update(skip_locked=True)
        return list(db.scalars(q))

    def _claim_one(self, db: Session, oid: int) -> m.Outbox | None:
        """Row ``oid`` if it is still to send, claimed (:meth:`_claim`); None
        when it is sent, failed, or another worker has it."""
        return next(iter(self._claim(db, [oid])), None)

    def _send_batch(self, ids: list[int], now: datetime) -> int:
        if self.config.smtp.kind == "maildir":
            sink = MaildirSink(self.config.resolve(self.config.smtp.path))
            sent = 0
            with self.sessions() as db:
                for oid in ids:
                    # A row per transaction, committed right after its file
                    # is written: a crash writes at most that one again.
                    row = self._claim_one(db, oid)
                    if row is None:
                        db.rollback()
                        continue
                    try:
                        sink.deliver(row.raw.encode("utf-8"))
                    except Exception as e:
                        self._unsendable(db, row, now, e)
                    else:
                        row.sent_at, row.attempts = now, row.attempts + 1
                        self.log_row(db, logging.INFO, row, "written to the Maildir for %s",
                                     ", ".join(row.recipients))
                        sent += 1
                    db.commit()
            return sent
        return asyncio.run(self._send_smtp(ids, now))

    def _unsendable(self, db: Session, row: m.Outbox, now: datetime, error: Exception) -> None:
        """A row that cannot be sent at all (a fault of ours, a header no
        relay takes) fails alone, for good; the rows behind it go out."""
        self.log_row(db, logging.ERROR, row, "cannot be sent", exc_info=True)
        self.fail(db, row, now, f"cannot be sent: {type(error).__name__}: {error}",
                   permanent=True)

    async def _send_smtp(self, ids: Sequence[int], now: datetime) -> int:
        """Send over up to ``[smtp] connections`` connections at once, a
        transaction per :data:`ROWS_PER_TRANSACTION` rows: each row is marked
        sent after its 250, and all of them commit together once every
        connection is done with them. Each 250 is written to this process's
        sent journal (``journal``) first: a crash before that commit resends
        only the rows in flight (one a connection), with their Message-IDs,
        as the next send books the journal. The rows of a chunk are split into
        lanes (:func:`lanes`): a player's rows share one, sent in order over
        one connection. Only the first connection failing means the relay
        is away; without an extra one, the rows go over those there are."""
        first = SmtpRelay(self.config.smtp)
        try:
            await first.connect()
        except RelayUnavailable as e:
            # The daemon says it once, and once when the relay is back; poll in its line.
            log.debug("SMTP connection failed: %s", e)
            self.relay_error = e
            for chunk in _chunks(list(ids), ROWS_PER_TRANSACTION):
                with self.sessions.begin() as db:
                    for row in self._claim(db, chunk):
                        self.fail(db, row, now, f"connection: {e}", permanent=False, away=True)
            return 0
        batch = _Batch(now, [first], Journal(self.config))
        sent, booked = 0, False
        try:
            for chunk in _chunks(list(ids), ROWS_PER_TRANSACTION):
                with self.sessions.begin() as db:
                    rows = self._claim(db, chunk)
                    self.learn_tags(db, rows)
                    # A game's rows share a lane too: a player reads the
                    # list's posts and their own mails of a game in order.
                    planned = lanes([[*row.recipients, f"game {row.game_id}"]
                                     if row.game_id else row.recipients for row in rows])
                    await self._open(batch, connections_for(
                        len(rows), len(planned), self.config.smtp.connections))
                    dealt = deal(planned, len(batch.relays))
                    done = await asyncio.gather(*(
                        self._send_lane(db, relay, [rows[i] for i in mine], batch)
                        for relay, mine in zip(batch.relays, dealt, strict=False)),
                        return_exceptions=True)
                    for result in done:
                        if isinstance(result, BaseException):
                            raise result
                        sent += result
                if batch.stop:
                    break
            booked = True
        finally:
            batch.journal.close(booked)
            await asyncio.gather(*(relay.quit() for relay in batch.relays))
        return sent

    async def _open(self, batch: _Batch, wanted: int) -> None:
        """Open connections up to ``wanted``; one that fails is left out (and
        no more are tried in this batch)."""
        if batch.no_more or len(batch.relays) >= wanted:
            return
        extra = [SmtpRelay(self.config.smtp) for _ in range(wanted - len(batch.relays))]
        opened = await asyncio.gather(*(r.connect() for r in extra), return_exceptions=True)
        batch.relays += [r for r, result in zip(extra, opened, strict=True) if result is None]
        for relay, result in zip(extra, opened, strict=True):
            if isinstance(result, BaseException):
                batch.no_more = True
                await relay.quit()
                if not isinstance(result, Exception):
                    raise result
                log.warning("another SMTP connection failed, sending over %d: %s",
                            len(batch.relays), result)

    async def _send_lane(self, db: Session, relay: SmtpRelay, rows: list[m.Outbox],
                         batch: _Batch) -> int:
        """Send ``rows`` one after another over ``relay``, until the relay is
        lost here or on another connection; returns how many were sent."""
        now, sent = batch.now, 0
        try:
            for row in rows:
                if batch.stop:
                    break
                if batch.held & set(row.recipients):
                    batch.held.update(row.recipients)  # and their later rows wait too
                    continue
                sender = self.config.referee.address
                if self.config.smtp.verp:
                    sender = self.composer.verp_address(row.id)
                try:
                    refused = await relay.send(row.raw, sender, list(row.recipients))
                except Refused as e:
                    self.fail(db, row, now, e.error, permanent=e.permanent, refused=e.refused)
                    if row.failed_at is None:
                        batch.held.update(row.recipients)
                    continue
                except RelayUnavailable as e:
                    self.fail(db, row, now, str(e), permanent=False, away=True)
                    batch.stop = True
                    break
                except DATABASE_AWAY:
                    raise
                except Exception as e:
                    self._unsendable(db, row, now, e)
                    continue
                batch.journal.sent(row.id, row.raw, refused)
                self.mark_sent(db, row, now, refused)
                sent += 1
        except BaseException:
            batch.stop = True
            raise
        return sent

    def mark_sent(self, db: Session, row: m.Outbox, now: datetime,
                  refused: dict[str, tuple[int, str]]) -> None:
        """Mark a row sent. Partial refusals are recorded on it, and the same
        message is queued again, with the same Message-ID, for those refused
        for now (4xx)."""
        row.sent_at, row.attempts = now, row.attempts + 1
        self.log_row(db, logging.INFO, row, "sent to %s", ", ".join(row.recipients))
        row.last_error = "; ".join(f"{a}: {code} {said}"
                                   for a, (code, said) in refused.items())
        retry = [a for a, (code, _) in refused.items() if code < 500]
        mark_bounced(db, {a: f"{code} {said}" for a, (code, said) in refused.items()
                          if code >= 500}, now)
        if retry:
            db.add(m.Outbox(game_id=row.game_id, recipients=retry, raw=row.raw,
                            created_at=row.created_at, attempts=row.attempts,
                            next_attempt_at=now + backoff(row.attempts)))

    def fail(self, db: Session, row: m.Outbox, now: datetime, error: str, permanent: bool,
             refused: dict[str, str] | None = None, away: bool = False) -> None:
        """Record a row that was not sent: failed for good, or retried later.
        ``away``: the relay could not be reached, which is said once for all
        the rows (by the daemon, or poll's line), so each row's retry is debug."""
        mark_bounced(db, refused or {}, now)
        row.attempts += 1
        row.last_error = error[:2000]
        if permanent or now - row.created_at >= self.config.smtp.give_up_after:
            row.failed_at = now
            self.log_row(db, logging.ERROR, row, "failed for good: %s", error)
        else:
            row.next_attempt_at = now + backoff(row.attempts)
            self.log_row(db, logging.DEBUG if away else logging.WARNING, row,
                         "will be retried: %s", error)


@dataclass
class _Batch:
    """One send's connections, and what its lanes share."""

    now: datetime
    relays: list[SmtpRelay]
    #: Where each 250 is written first.
    journal: Journal
    #: Recipients of a row that failed for now (or waits behind one): their
    #: later rows wait for it (see ``due``), so they keep their order.
    held: set[str] = field(default_factory=set)
    #: The relay was lost: no lane starts another row.
    stop: bool = False
    #: An extra connection failed: no more are opened.
    no_more: bool = False


def _chunks(ids: list[int], size: int) -> list[list[int]]:
    return [ids[i:i + size] for i in range(0, len(ids), size)]


# -- lanes: a chunk's rows shared over the connections ----------------------------

#: An extra connection is opened only for this many rows of a chunk.
ROWS_PER_CONNECTION = 8


def lanes(recipients: Sequence[Iterable[str]]) -> list[list[int]]:
    """The positions of the rows, grouped so that any two rows sharing a
    recipient (directly, or through other rows) are in one lane; each lane
    in queue order, the lanes in the order of their first row."""
    parent = list(range(len(recipients)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}  # recipient -> the first row to them
    for i, to in enumerate(recipients):
        for address in to:
            j = first.setdefault(address.lower(), i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    grouped: dict[int, list[int]] = {}
    for i in range(len(recipients)):
        grouped.setdefault(root(i), []).append(i)
    return list(grouped.values())


def connections_for(rows: int, lanes: int, most: int) -> int:
    """How many connections a chunk of ``rows`` rows in ``lanes`` lanes
    uses: at most ``most``, one per lane, one per
    :data:`ROWS_PER_CONNECTION` rows begun, and one at least."""
    return max(1, min(most, lanes, -(-rows // ROWS_PER_CONNECTION)))


def deal(lanes: Sequence[Sequence[int]], connections: int) -> list[list[int]]:
    """The rows each connection sends, in queue order: lanes dealt biggest
    first to the connection with the fewest rows yet (the first of them on
    a tie). Connections left without rows are left out."""
    load = [(0, c) for c in range(max(connections, 1))]
    heapq.heapify(load)
    rows: list[list[int]] = [[] for _ in load]
    for lane in sorted(lanes, key=lambda lane: (-len(lane), lane[0] if lane else 0)):
        n, c = heapq.heappop(load)
        rows[c].extend(lane)
        heapq.heappush(load, (n + len(lane), c))
    return [sorted(r) for r in rows if r]
