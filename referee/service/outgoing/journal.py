"""The sent journal: the relay's 250s, written down by the streaming
child (``streaming``) the moment they come, before the pass books them.

The pass books a stream's results in the database between two inbound
messages; a kill before that would leave rows the relay took unmarked, to
be sent again. Each 250 is first one line here (a single ``write``, which
a kill of the process does not undo), and whatever the database does not
show as sent yet is booked from it before the next send (the outbox's
:meth:`~referee.service.outgoing.outbox.OutboxSender.book_journal`). Only
"sent" is written: a row whose refusal was lost is just tried again.

A line: the outbox row id, the CRC-32 of its stored text (a journal left
beside another database marks none of its rows), and the recipients the
relay refused while it took the others, as JSON (``{}`` mostly), apart by
spaces. No mail text, no address but a refused one. The file lies beside
the lock file (``referee.lock.sent``), which the one worker that streams
holds.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

from referee.config import Config

#: What the relay said of the recipients it refused while it took the message.
Refusals = dict[str, tuple[int, str]]


def journal_path(config: Config) -> Path:
    lock = config.resolve(config.referee.lock_file)
    return lock.with_name(lock.name + ".sent")


def open_journal(path: Path) -> int:
    """A descriptor to append lines to (the file made, for the owner alone)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def checksum(raw: str) -> int:
    return zlib.crc32(raw.encode("utf-8", errors="replace"))


def write_sent(fd: int, row_id: int, raw: str, refused: Refusals) -> None:
    """One row taken by the relay: one line in one ``write``."""
    detail = json.dumps(refused, separators=(",", ":"))
    os.write(fd, f"{row_id} {checksum(raw)} {detail}\n".encode())


def read_sent(path: Path) -> dict[int, tuple[int, Refusals]]:
    """The rows the journal says were sent: their checksum and refusals;
    none when there is no journal. A line cut short by a kill is left out."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except FileNotFoundError:
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


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)
