"""Maildir source and sink: the embedded default, no mail server needed.

A message's source key is its Maildir unique name. It is moved from ``new/``
to ``cur/`` with the Seen flag only after its transaction has committed; the
database, not the flag, decides whether it was processed.
"""

from __future__ import annotations

import contextlib
import mailbox
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from referee.mail.inbound import Heading, read_heading

#: The most of a mail's header read for its heading (as over IMAP).
MAX_HEADING_BYTES = 16 * 1024


def open_maildir(path: Path) -> mailbox.Maildir:
    """The Maildir at ``path``, created with its parent folders if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(path, create=True)


class MaildirSource:
    """Yields unprocessed messages of a Maildir, oldest first.

    Flags are read from and written to the file names (the Maildir spec's
    ``:2,`` info), so no message is parsed or rewritten here: a mail of any
    shape costs one read of its bytes and one rename.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        open_maildir(path)
        #: Where each message yielded by :meth:`messages` lies, by key.
        self._where: dict[str, Path] = {}
        #: When the newest mail :meth:`messages` found was written (naive
        #: UTC): the delivery agent's clock when it arrived.
        self.newest: datetime | None = None

    def _files(self) -> Iterator[tuple[str, Path]]:
        """(key, path) of every message in ``new/`` and ``cur/``."""
        for sub in ("new", "cur"):
            with os.scandir(self.path / sub) as entries:
                for entry in entries:
                    if entry.is_file() and not entry.name.startswith("."):
                        yield entry.name.split(":", 1)[0], Path(entry.path)

    def _waiting(self) -> list[tuple[float, str, Path]]:
        """(modification time, key, path) of each message not yet marked
        seen, oldest first."""
        waiting = []
        for key, path in self._files():
            if "S" not in _flags(path.name):
                with contextlib.suppress(FileNotFoundError):
                    waiting.append((path.stat().st_mtime, key, path))
        return sorted(waiting)

    def headings(self) -> Iterator[Heading]:
        """The heading of each message not yet marked seen, read from the
        start of its file; nothing is marked."""
        for _, _, path in self._waiting():
            try:
                with open(path, "rb") as f:
                    head = f.read(MAX_HEADING_BYTES)
            except FileNotFoundError:
                continue  # taken away meanwhile
            yield read_heading(head)

    def pass_over(self) -> int:
        """Mark every message not yet marked seen as done, unread (the mail
        a database that adopts the Maildir leaves alone); returns how many."""
        waiting = self._waiting()
        for _, key, path in waiting:
            self._where[key] = path
            self.mark_done(f"maildir:{key}")
        return len(waiting)

    def newest_arrival(self) -> datetime | None:
        """When the newest mail of the Maildir, read or not, was written."""
        times = []
        for _, path in self._files():
            with contextlib.suppress(FileNotFoundError):
                times.append(path.stat().st_mtime)
        return _utc(max(times)) if times else None

    def messages(self) -> Iterator[tuple[str, bytes]]:
        """(source key, raw bytes) of each message not yet marked seen."""
        waiting = self._waiting()
        if waiting:
            self.newest = _utc(max(t for t, _, _ in waiting))
        for _, key, path in waiting:
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                continue  # taken away meanwhile
            self._where[key] = path
            yield f"maildir:{key}", raw

    def mark_done(self, source_key: str) -> None:
        key = source_key.removeprefix("maildir:")
        path = self._where.pop(key, None)
        if path is None:
            return
        flags = "".join(sorted(set(_flags(path.name)) | {"S"}))
        with contextlib.suppress(FileNotFoundError):
            path.rename(self.path / "cur" / f"{key}:2,{flags}")


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC).replace(tzinfo=None)


def _flags(name: str) -> str:
    """The flags of a Maildir file name: ``key:2,FS`` -> ``FS``."""
    _, sep, info = name.partition(":2,")
    return info if sep else ""


class MaildirSink:
    """Delivers outgoing mail into a Maildir (dry runs and the demo)."""

    def __init__(self, path: Path) -> None:
        self.box = open_maildir(path)

    def deliver(self, raw: bytes) -> None:
        self.box.add(mailbox.MaildirMessage(raw))


def deliver_to(path: Path, message: EmailMessage | bytes) -> str:
    """Put one message into the Maildir at ``path``; returns its key."""
    raw = message if isinstance(message, bytes) else message.as_bytes()
    return open_maildir(path).add(mailbox.MaildirMessage(raw))
