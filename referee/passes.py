"""One pass of the referee: fetch new mail, process it, fire deadlines, send.

``referee poll`` runs one pass (for cron); the daemon runs the same steps on
its schedule. Each message is processed in its own transaction, and the
mailbox is marked only after that commit.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from referee.mail.imap import MAX_HEADER_BYTES, ImapSource, fetch_plan
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
    #: Failed mail read again, as the operator asked (``referee inbound --retry``).
    reread: int = 0
    #: Of ``sent``, the mail sent while the pass read.
    streamed: int = 0

    def __str__(self) -> str:
        failed = (f" ({self.failed} failed: see the log, and referee inbound)"
                  if self.failed else "")
        again = f", read again {self.reread}" if self.reread else ""
        return (f"read {self.read} message(s), processed {self.processed}{failed}{again}, "
                f"timeouts {self.timeouts}, sent {self.sent}")


#: Committed messages marked ``\\Seen`` with one IMAP STORE.
SEEN_BATCH = 200


def many_workers(referee: Referee) -> bool:
    """Whether this process is one of several sharing the database and the
    mailbox: ``[referee] workers = "many"`` on PostgreSQL."""
    cfg = referee.config
    return cfg.referee.workers == "many" and cfg.database_url.startswith("postgresql")


def intake(referee: Referee, now: datetime | None = None,
           imap: ImapSource | None = None,
           after_each: Callable[[], None] | None = None) -> tuple[int, int, int]:
    """Read and process every new message; returns (read, processed, failed).

    Each message commits in its own transaction; ``\\Seen`` is set after
    those commits, in batches. With several workers each message is claimed
    by the one that reads it first, and the cursor moves past what is done.
    ``after_each`` runs after each message's commit (the pass sends its mail).
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
            if after_each is not None:
                after_each()
        return read, processed, failed
    own = imap is None
    shared = many_workers(referee)
    src = imap or ImapSource(cfg.mailbox, cfg.referee.max_message_size)
    done: list[int] = []
    fetched: list[tuple[int, str]] = []
    try:
        src.connect()
        for f in src.messages(referee.intake.cursor(src.mailbox)):
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
            if after_each is not None:
                after_each()
        src.mark_seen(done)
        if shared and fetched:
            referee.intake.settle_cursor(src.mailbox, src.uidvalidity, fetched)
    finally:
        if own:
            src.close()
    return read, processed, failed


def reread(referee: Referee, now: datetime | None = None,
           imap: ImapSource | None = None) -> list[tuple[int, str]]:
    """Read again each failed mail the operator asked for (``referee inbound
    --retry``), fetched from the mailbox by its source key; returns (record
    id, what came of it). A mail no longer in the mailbox (expunged, or the
    mailbox was reset or renamed since) is recorded failed again, saying so.
    Connects to the mailbox only when there is mail to read again."""
    wanted = referee.intake.retries()
    if not wanted:
        return []
    cfg = referee.config
    done: list[tuple[int, str]] = []
    own = imap is None and cfg.mailbox.kind == "imap"
    src = ImapSource(cfg.mailbox, cfg.referee.max_message_size) if own else imap
    try:
        for iid, key in wanted:
            if cfg.mailbox.kind == "maildir":
                fetched = _from_maildir(cfg.resolve(cfg.mailbox.path), key)
            else:
                assert src is not None
                fetched = _from_imap(src, key)
            if isinstance(fetched, str):
                referee.intake.not_read_again(iid, fetched)
                done.append((iid, "failed"))
                log.warning("mail %s (%s) not read again: %s", iid, key, fetched)
                continue
            raw, size = fetched
            outcome = referee.intake.process(raw, key, now or now_utc(), size=size, again=iid)
            done.append((iid, outcome.status))
            log.info("mail %s (%s) read again: %s", iid, key, outcome.status,
                     extra={"source": key, "outcome": outcome.status, "game": outcome.tag})
    finally:
        if own and src is not None:
            src.close()
    return done


def _from_maildir(path: Path, key: str) -> tuple[bytes, int | None] | str:
    """A mail of the Maildir by its source key (``maildir:<name>``), read or
    not, or why there is none."""
    name = key.removeprefix("maildir:")
    if name == key:
        return "it did not come from this Maildir"
    for sub in ("cur", "new"):
        try:
            with os.scandir(path / sub) as entries:
                found = [e.path for e in entries if e.name.split(":", 1)[0] == name]
        except FileNotFoundError:
            continue
        for file in found:
            try:
                return Path(file).read_bytes(), None
            except FileNotFoundError:
                continue  # taken away meanwhile
    return "it is no longer in the Maildir"


def _from_imap(src: ImapSource, key: str) -> tuple[bytes, int | None] | str:
    """A mail of the IMAP folder by its source key
    (``imap:<user>/<folder>;UIDVALIDITY=<n>;UID=<n>``), or why there is none.
    A mail over the size cap brings only its header, as it did the first time."""
    mailbox, _, rest = key.partition(";UIDVALIDITY=")
    validity, _, uid_text = rest.partition(";UID=")
    if mailbox != src.mailbox or not validity.isdigit() or not uid_text.isdigit():
        return f"it did not come from {src.mailbox}"
    client = src.connect()
    uid = int(uid_text)
    if int(validity) != src.uidvalidity:
        return f"{src.mailbox} was reset since (a new UIDVALIDITY)"
    answer = client.fetch([uid], ["RFC822.SIZE"])
    if b"RFC822.SIZE" not in answer.get(uid, {}):
        return f"it is no longer in {src.mailbox}"
    size = int(answer[uid][b"RFC822.SIZE"])
    ((part, _),) = fetch_plan([(uid, size)], src.max_size)
    item, found = (("BODY.PEEK[]", b"BODY[]") if part == "body" else
                   (f"BODY.PEEK[HEADER]<0.{MAX_HEADER_BYTES}>", b"BODY[HEADER]<0>"))
    data = client.fetch([uid], [item]).get(uid, {})
    if found not in data:
        return f"it is no longer in {src.mailbox}"
    return data[found], size


def run_pass(referee: Referee, now: datetime | None = None,
             imap: ImapSource | None = None) -> PassReport:
    """Mail to read again, intake, deadlines, outbox: the whole of ``referee poll``.

    To a relay on another machine, with one worker, the mail of each message
    goes out while the next ones are read (``service/streaming``); the
    outbox's own send follows, for whatever is left."""
    report = PassReport()
    stream = None
    if send_while_reading(referee):
        stream = referee.outbox_stream(now)
    try:
        report.reread = len(reread(referee, now, imap))

        def after_each() -> None:
            referee.lease.keep()
            if stream is not None:
                stream.feed()

        report.read, report.processed, report.failed = intake(referee, now, imap, after_each)
        report.timeouts = referee.sweep.fire(now)
        if stream is not None:
            stream.feed(force=True)
    finally:
        report.streamed = stream.close() if stream is not None else 0
    report.sent = report.streamed + send_outbox(referee, now)
    publish_pages(referee)
    return report


def send_while_reading(referee: Referee) -> bool:
    """Whether a pass sends its mail while it reads: over SMTP, with one
    worker, to a relay on another machine. A relay far away answers each
    command in milliseconds, which the refereeing then fills (a relay 10 ms
    away: 200 moves in 5.6 s instead of 6.8 s); one on this machine answers
    at once and shares its CPUs, and sending alongside made a pass slower
    (300 moves over the loopback: 7.1 s instead of 5.3 s on 2 CPUs)."""
    smtp = referee.config.smtp
    return smtp.kind == "smtp" and not many_workers(referee) and not _on_this_machine(smtp.host)


def _on_this_machine(host: str) -> bool:
    return host.lower() in ("localhost", "::1", "ip6-localhost") or host.startswith("127.")


def publish_pages(referee: Referee) -> None:
    """Write the game pages that are behind, when ``[web] path`` is set."""
    cfg = referee.config
    if cfg.web.path is not None:
        from referee.web import publish

        publish(referee, cfg.resolve(cfg.web.path))


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
            if not referee.lease.take():
                yield False
                return
            try:
                yield True
            finally:
                referee.lease.release()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


__all__ = ["PassReport", "exclusive", "intake", "many_workers", "publish_pages", "reread",
           "run_pass", "send_outbox", "send_while_reading"]
