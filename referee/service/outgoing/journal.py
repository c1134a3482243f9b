"""The sent journal: each relay's 250, written down the moment it comes,
before the database books it.

The outbox books a batch of rows sent in one transaction, and a stream's
results are booked between two inbound messages; a kill before that would
leave rows the relay took unmarked, to be sent again. Each 250 is first one
line in a journal of the sending process's own (a single ``write``, which a
kill of the process does not undo), and whatever the database does not
show as sent yet is booked from the journals of processes gone before the
next send (:meth:`~referee.service.outgoing.outbox.OutboxSender.book_journal`).
A kill then resends only the mails in flight, one per connection. Only
"sent" is written: a row whose refusal was lost is just tried again.

A journal is ``<lock file>.<pid>-<random>.sent`` beside the lock file, held
(flock) by its process while it lives: another process books it only once it is
gone. A line: the outbox row id, the CRC-32 of its stored text (a journal
left beside another database marks none of its rows), and the recipients
the relay refused while it took the others, as JSON (``{}`` mostly), apart
by spaces. No mail text, no address but a refused one. A journal is on
its machine: with workers on several, one killed is covered when a
referee on its machine sends next.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import zlib
from collections.abc import Iterator
from pathlib import Path

from referee.config import Config

log = logging.getLogger(__name__)

#: What the relay said of the recipients it refused while it took the message.
Refusals = dict[str, tuple[int, str]]


def checksum(raw: str) -> int:
    return zlib.crc32(raw.encode("utf-8", errors="replace"))


def _lock_path(config: Config) -> Path:
    return config.resolve(config.referee.lock_file)


class Journal:
    """This process's journal, made at its first line and held while open."""

    def __init__(self, config: Config) -> None:
        self.lock = _lock_path(config)
        self.path: Path | None = None
        self.fd: int | None = None
        self.broken = False

    def sent(self, row_id: int, raw: str, refused: Refusals) -> None:
        """One row taken by the relay: one line in one ``write``. A journal
        that cannot be written (a full disk) is given up, with a warning:
        the rows are still booked as before, only a kill resends more."""
        if self.broken:
            return
        detail = json.dumps(refused, separators=(",", ":"))
        try:
            if self.fd is None:
                # Named at its first line, by the process that writes it,
                # a file of its own (two threads may send at once).
                self.path = self.lock.with_name(
                    f"{self.lock.name}.{os.getpid()}-{secrets.token_hex(4)}.sent")
                self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                                  | os.O_EXCL, 0o600)
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(self.fd, f"{row_id} {checksum(raw)} {detail}\n".encode())
        except OSError as e:
            self.broken = True
            log.warning("the sent journal %s cannot be written (%s): a kill now would "
                        "resend the mails sent since the last commit", self.path, e)

    def close(self, booked: bool) -> None:
        """Let go; ``booked``: all it says is in the database, so it goes."""
        if self.fd is None:
            return
        if booked and self.path is not None:
            self.path.unlink(missing_ok=True)
        os.close(self.fd)
        self.fd = None


@contextlib.contextmanager
def leftovers(config: Config) -> Iterator[list[tuple[Path, dict[int, tuple[int, Refusals]]]]]:
    """The journals of processes gone (none held), with what each says: the
    rows sent, their checksum and refusals. Held while the caller books
    them; removed after, unless booking raised."""
    lock = _lock_path(config)
    held: list[tuple[Path, int]] = []
    found: list[tuple[Path, dict[int, tuple[int, Refusals]]]] = []
    try:
        for path in sorted(lock.parent.glob(f"{lock.name}.*.sent")):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # its process lives (or it is this one's own)
                os.close(fd)
                continue
            held.append((path, fd))
            found.append((path, read_sent(path)))
        yield found
        for path, _ in held:
            path.unlink(missing_ok=True)
    finally:
        for _, fd in held:
            os.close(fd)


def read_sent(path: Path) -> dict[int, tuple[int, Refusals]]:
    """The rows a journal says were sent: their checksum and refusals. A
    line cut short by a kill is left out."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return {}
    sent: dict[int, tuple[int, Refusals]] = {}
    for line in text.splitlines():
        oid, crc, detail = [*line.split(" ", 2), "", ""][:3]
        try:
            refused = {str(a): (int(code), str(said))
                       for a, (code, said) in json.loads(detail).items()}
            sent[int(oid)] = (int(crc), refused)
        except (ValueError, TypeError, AttributeError):
            continue
    return sent
