"""Sending while reading: during ``referee poll``, the mail each inbound
message queued goes out as soon as its transaction commits, instead of
after the last message. The waits for the relay's replies, and the SMTP
work itself, then overlap the refereeing.

The SMTP side runs in a child process (forked, so it costs no start-up),
over a few connections in one event loop: in a thread of this process it
took the interpreter lock from the refereeing thousands of times a second
and slowed the pass down. The child only talks SMTP; this process picks
the rows to send and books what came of them, in short transactions of
its own between two inbound messages, so the database is never shared.

The outbox's rules hold: a row is marked sent only after its 250, and the
child writes each 250 down in its sent journal (``journal``) at once, so
a pass killed before it booked them resends none of them (the next send
books them first, once the child is gone); the child stops when the pass is gone, after the mail
each connection has in flight. The mails of one
recipient go over one connection, in the order they were queued; a
recipient with an earlier row still waiting (a retry not yet due, or one
refused for now in this pass) gets nothing more here, and the outbox's own
send after the intake keeps their order. Rows to several recipients, and
all that is left, go by that send too. Used by a single-threaded pass of
the one worker ([referee] workers = "one"): the rows it sends are its own.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import threading
import time
import zlib
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from queue import SimpleQueue
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config, SmtpSection
from referee.mail.smtp import Refused, RelayUnavailable, SmtpRelay
from referee.service.outgoing.journal import Journal
from referee.service.outgoing.outbox import OutboxSender
from referee.store import models as m
from referee.store.db import now_utc

log = logging.getLogger(__name__)

#: Results booked in one transaction, between two inbound messages.
BOOK_EVERY = 50
#: The outbox is looked at for new rows at most this often (seconds).
FEED_EVERY = 0.05

#: (outbox row, what came of it, detail): "sent" with the recipients
#: refused, "refused" with (error, permanent, refused), "lost" or "error"
#: with words, "skipped" (not tried: the row waits for the outbox's send).
Result = tuple[int, str, Any]


@dataclass(frozen=True)
class Item:
    row_id: int
    raw: str
    sender: str
    recipient: str
    lane: int


class OutboxStream:
    """Sends committed outbox rows while the pass goes on (see the module)."""

    def __init__(self, config: Config, sessions: sessionmaker[Session],
                 outbox: OutboxSender, now: datetime | None) -> None:
        self.config, self.sessions, self.outbox = config, sessions, outbox
        self.now = now
        #: Rows sent and booked.
        self.sent = 0
        #: Why the relay could not be reached, when it could not.
        self.broken: str | None = None
        self._fed_upto = 0
        self._fed_at = 0.0
        #: Recipients whose mail waits for the outbox's own send.
        self._held: set[str] = set()
        self._lanes = max(1, config.smtp.connections)
        self._waiting: list[Result] = []
        self._to_child: Connection | None = None
        self._from_child: Connection | None = None
        self._child: Any = None
        self._journal = Journal(config)  # the child's, named and opened there
        self._journal_booked = False

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        items_out, items_in = context.Pipe(duplex=False)
        results_out, results_in = context.Pipe(duplex=False)
        self._child = context.Process(
            target=_child, name="referee-outbox-stream", daemon=True,
            args=(self.config.smtp, self._lanes, items_out, results_in, (items_in, results_out),
                  self._journal))
        self._child.start()
        items_out.close()
        results_in.close()
        self._to_child, self._from_child = items_in, results_out

    def feed(self, force: bool = False) -> None:
        """Hand the rows committed since the last look to the child (a look
        every :data:`FEED_EVERY` at most, unless ``force``), and book what
        came back when there is enough of it."""
        self._collect()
        if not force and time.monotonic() - self._fed_at < FEED_EVERY:
            return
        self._fed_at = time.monotonic()
        if not self._journal_booked:
            # A killed pass's 250s first: their rows are not to go again.
            self.outbox.book_journal(self.now or now_utc())
            self._journal_booked = True
        if self.broken is None:
            with self.sessions() as db:
                q = (select(m.Outbox.id, m.Outbox.recipients, m.Outbox.raw,
                            m.Outbox.next_attempt_at)
                     .where(m.Outbox.id > self._fed_upto, m.Outbox.sent_at.is_(None),
                            m.Outbox.failed_at.is_(None)).order_by(m.Outbox.id))
                rows = db.execute(q).all()
            now = self.now or now_utc()
            for row_id, recipients, raw, next_attempt_at in rows:
                self._fed_upto = row_id
                to = {r.lower() for r in recipients}
                if len(to) != 1 or next_attempt_at > now or to & self._held:
                    self._held |= to
                    continue
                (recipient,) = recipients
                sender = self.config.referee.address
                if self.config.smtp.verp:
                    sender = self.outbox.composer.verp_address(row_id)
                lane = zlib.crc32(recipient.lower().encode()) % self._lanes
                if self._to_child is None:
                    self._start()  # for the first row to send, not for a pass without mail
                assert self._to_child is not None
                self._to_child.send(Item(row_id, raw, sender, recipient, lane))
        if len(self._waiting) >= BOOK_EVERY:
            self._book()

    def close(self) -> int:
        """Let the child finish what it was given, book it all and end it;
        returns the rows sent."""
        if self._to_child is not None and self._from_child is not None:
            try:
                self._to_child.send(None)
                while (result := self._from_child.recv()) is not None:
                    self._take(result)
            except (EOFError, OSError) as e:
                log.warning("the outbox stream ended early (%s); the outbox sends the rest", e)
            self._to_child.close()
            self._from_child.close()
            self._to_child = self._from_child = None
        if self._child is not None:
            self._child.join(timeout=30)
            if self._child.is_alive():
                self._child.kill()
            self._child = None
        self._book()
        if self._journal_booked:
            # All booked, from the child's answers or (if they were lost on
            # the way) from its journal, the child gone; then it goes.
            self.sent += self.outbox.book_journal(self.now or now_utc())
        return self.sent

    def _collect(self) -> None:
        while self._from_child is not None and self._from_child.poll():
            result = self._from_child.recv()
            if result is not None:
                self._take(result)

    def _take(self, result: Result) -> None:
        if result[1] == "lost":
            self.broken = str(result[2])
        if result[1] == "broken":
            self.broken = str(result[2])
            return
        self._waiting.append(result)

    def _book(self) -> None:
        done = [r for r in self._waiting if r[1] != "skipped"]
        self._waiting = []
        if not done:
            return
        now = self.now or now_utc()
        with self.sessions.begin() as db:
            rows = {r.id: r for r in db.scalars(select(m.Outbox).where(
                m.Outbox.id.in_([i for i, _, _ in done])))}
            for row_id, what, detail in done:
                row = rows.get(row_id)
                if row is None or row.sent_at is not None or row.failed_at is not None:
                    continue
                if what == "sent":
                    self.outbox.mark_sent(db, row, now, detail)
                    self.sent += 1
                elif what == "refused":
                    error, permanent, refused = detail
                    self.outbox.fail(db, row, now, error, permanent=permanent, refused=refused)
                elif what == "lost":
                    self.outbox.fail(db, row, now, detail, permanent=False, away=True)
                else:
                    self.outbox.log_row(db, logging.ERROR, row, "cannot be sent: %s", detail)
                    self.outbox.fail(db, row, now, f"cannot be sent: {detail}", permanent=True)


# -- the child ---------------------------------------------------------------------

def _child(settings: SmtpSection, lanes: int, items: Connection, results: Connection,
           parents: tuple[Connection, Connection], journal: Journal) -> None:
    """The child's whole life: send what comes over ``items``, say what came
    of each row over ``results``, and None when ``items`` said None. It
    touches nothing else of the parent's (its database, its mailbox)."""
    for end in parents:  # the parent's ends: a parent gone then reads as the end
        end.close()
    # Ctrl-C and a closing terminal reach the whole process group: the
    # parent decides (it stops after the mail it reads, and says None here),
    # and this child finishes the rows it was given rather than die with a
    # traceback in the middle of a send.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        asyncio.run(_serve(settings, lanes, items, results, journal))
    finally:
        # Kept: the parent books it when this process is gone.
        journal.close(booked=False)
        results.close()


async def _serve(settings: SmtpSection, count: int, items: Connection,
                 results: Connection, journal: Journal) -> None:
    loop = asyncio.get_running_loop()
    queues: list[asyncio.Queue[Item | None]] = [asyncio.Queue() for _ in range(count)]
    # Results go out through a thread of the child's: the loop never blocks
    # on a full pipe while the parent is busy refereeing.
    out: SimpleQueue[Result | None] = SimpleQueue()
    writer = threading.Thread(target=_write, args=(out, results), daemon=True)
    writer.start()

    def readable() -> None:
        try:
            while items.poll():
                item = items.recv()
                if item is None:
                    for q in queues:
                        q.put_nowait(None)
                    loop.remove_reader(items.fileno())
                    return
                queues[item.lane].put_nowait(item)
        except (EOFError, OSError):  # the parent is gone: no row starts any more
            state["broken"] = "the pass is gone"
            loop.remove_reader(items.fileno())
            for q in queues:
                q.put_nowait(None)

    state: dict[str, str | None] = {"broken": None}
    loop.add_reader(items.fileno(), readable)
    await asyncio.gather(*(_lane(settings, q, out, state, journal) for q in queues))
    out.put(None)
    writer.join()


def _write(out: SimpleQueue[Result | None], results: Connection) -> None:
    while True:
        result = out.get()
        try:
            results.send(result)
        except OSError:
            return
        if result is None:
            return


async def _lane(settings: SmtpSection, q: asyncio.Queue[Item | None],
                out: SimpleQueue[Result | None], state: dict[str, str | None],
                journal: Journal) -> None:
    """One connection, opened for its first row: its rows in order, each
    250 in the journal before anything else. A recipient refused for now
    gets no more here; after a lost connection, or the parent gone, no lane
    starts another row."""
    relay: SmtpRelay | None = None
    held: set[str] = set()
    try:
        while (item := await q.get()) is not None:
            if state["broken"] is not None or item.recipient.lower() in held:
                out.put((item.row_id, "skipped", None))
                continue
            if relay is None:
                relay = SmtpRelay(settings)
                try:
                    await relay.connect()
                except RelayUnavailable as e:
                    state["broken"], relay = str(e), None
                    out.put((item.row_id, "broken", str(e)))
                    continue
            try:
                refused = await relay.send(item.raw, item.sender, [item.recipient])
            except Refused as e:
                if not e.permanent:
                    held.add(item.recipient.lower())
                out.put((item.row_id, "refused", (e.error, e.permanent, e.refused)))
            except RelayUnavailable as e:
                state["broken"] = str(e)
                out.put((item.row_id, "lost", str(e)))
            except Exception as e:  # a fault of ours: this row fails alone
                held.add(item.recipient.lower())
                out.put((item.row_id, "error", f"{type(e).__name__}: {e}"))
            else:
                journal.sent(item.row_id, item.raw, refused)
                out.put((item.row_id, "sent", refused))
    finally:
        if relay is not None:
            await relay.quit()
