"""One pass of the referee: fetch new mail, process it, fire deadlines, send.

``referee poll`` runs one pass (for cron); the daemon runs the same steps on
its schedule. Each message is processed in its own transaction, and the
mailbox is marked only after that commit.
"""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from referee.mail.imap import ImapSource
from referee.mail.maildir import MaildirSource
from referee.service import Referee, now_utc

log = logging.getLogger(__name__)


@dataclass
class PassReport:
    read: int = 0
    processed: int = 0
    failed: int = 0
    timeouts: int = 0
    sent: int = 0

    def __str__(self) -> str:
        failed = f" ({self.failed} failed: see the log)" if self.failed else ""
        return (f"read {self.read} message(s), processed {self.processed}{failed}, "
                f"timeouts {self.timeouts}, sent {self.sent}")


#: Committed messages marked ``\\Seen`` with one IMAP STORE.
SEEN_BATCH = 200


def many_workers(referee: Referee) -> bool:
    """Whether this process is one of several sharing the database and the
    mailbox: ``[referee] workers = "many"`` on PostgreSQL."""
    cfg = referee.config
    return cfg.referee.workers == "many" and cfg.database_url.startswith("postgresql")


def intake(referee: Referee, now: datetime | None = None,
           imap: ImapSource | None = None) -> tuple[int, int, int]:
    """Read and process every new message; returns (read, processed, failed).

    Each message commits in its own transaction; ``\\Seen`` is set after
    those commits, in batches. With several workers each message is claimed
    by the one that reads it first, and the cursor moves past what is done.
    """
    cfg = referee.config
    read = processed = failed = 0
    if cfg.mailbox.kind == "maildir":
        source = MaildirSource(cfg.resolve(cfg.mailbox.path))
        for key, raw in source.messages():
            read += 1
            outcome = referee.process(raw, key, now=now or now_utc())
            processed += outcome.status not in ("duplicate", "elsewhere")
            failed += outcome.status == "failed"
            source.mark_done(key)
        return read, processed, failed
    own = imap is None
    shared = many_workers(referee)
    src = imap or ImapSource(cfg.mailbox, cfg.referee.max_message_size)
    done: list[int] = []
    fetched: list[tuple[int, str]] = []
    try:
        src.connect()
        for f in src.messages(referee.cursor(src.mailbox)):
            read += 1
            cursor = None if shared else (src.mailbox, f.uidvalidity, f.uid)
            outcome = referee.process(f.raw, f.source_key, now=now or now_utc(),
                                      cursor=cursor, size=f.size)
            processed += outcome.status not in ("duplicate", "elsewhere")
            failed += outcome.status == "failed"
            fetched.append((f.uid, f.source_key))
            if outcome.status != "elsewhere":
                done.append(f.uid)
            if len(done) >= SEEN_BATCH:
                src.mark_seen(done)
                done = []
        src.mark_seen(done)
        if shared and fetched:
            referee.intake.settle_cursor(src.mailbox, src.uidvalidity, fetched)
    finally:
        if own:
            src.close()
    return read, processed, failed


def run_pass(referee: Referee, now: datetime | None = None,
             imap: ImapSource | None = None) -> PassReport:
    """Intake, deadlines, outbox: the whole of ``referee poll``."""
    report = PassReport()
    report.read, report.processed, report.failed = intake(referee, now, imap)
    report.timeouts = referee.fire_deadlines(now)
    report.sent = send_outbox(referee, now)
    publish_pages(referee)
    return report


def publish_pages(referee: Referee) -> None:
    """Rewrite the game pages, when ``[web] path`` is set."""
    cfg = referee.config
    if cfg.web.path is not None:
        from referee.web import write_pages

        write_pages(referee, cfg.resolve(cfg.web.path))


def send_outbox(referee: Referee, now: datetime | None = None) -> int:
    return referee.send_outbox(now)


@contextmanager
def exclusive(referee: Referee) -> Iterator[bool]:
    """Hold the referee's lock file and the database's pass lease while the
    block runs; yields False, and holds nothing, when another pass or the
    daemon has either. Two passes that overlapped (a slow cron run, or cron
    beside the daemon) would each send the same outbox rows. The lease is the
    guard that stays when a tmp cleaner deletes the lock file."""
    config = referee.config
    if many_workers(referee):
        # Several workers share the work, claiming mail, games and outbox
        # rows one by one: neither the lock file nor the pass lease.
        referee.lease.shared = True
        yield True
        return
    path = config.resolve(config.referee.lock_file)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            if not referee.lease.acquire():
                yield False
                return
            try:
                yield True
            finally:
                referee.lease.release()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


__all__ = ["PassReport", "exclusive", "intake", "many_workers", "publish_pages", "run_pass",
           "send_outbox"]
