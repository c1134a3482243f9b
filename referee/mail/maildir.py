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
from email.message import EmailMessage
from pathlib import Path


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

    def _files(self) -> Iterator[tuple[str, Path]]:
        """(key, path) of every message in ``new/`` and ``cur/``."""
        for sub in ("new", "cur"):
            with os.scandir(self.path / sub) as entries:
                for entry in entries:
                    if entry.is_file() and not entry.name.startswith("."):
                        yield entry.name.split(":", 1)[0], Path(entry.path)

    def messages(self) -> Iterator[tuple[str, bytes]]:
        """(source key, raw bytes) of each message not yet marked seen."""
        waiting = []
        for key, path in self._files():
            if "S" not in _flags(path.name):
                with contextlib.suppress(FileNotFoundError):
                    waiting.append((path.stat().st_mtime, key, path))
        for _, key, path in sorted(waiting):
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
