"""Maildir source and sink: the embedded default, no mail server needed.

A message's source key is its Maildir unique name. It is moved from ``new/``
to ``cur/`` with the Seen flag only after its transaction has committed; the
database, not the flag, decides whether it was processed.
"""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path


def open_maildir(path: Path) -> mailbox.Maildir:
    """The Maildir at ``path``, created with its parent folders if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(path, create=True)


class MaildirSource:
    """Yields unprocessed messages of a Maildir, oldest first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.box = open_maildir(path)

    def messages(self) -> Iterator[tuple[str, bytes]]:
        """(source key, raw bytes) of each message not yet marked seen."""
        self.box = open_maildir(self.path)
        keys = []
        for key in self.box.iterkeys():
            msg = self.box.get_message(key)
            if "S" not in msg.get_flags():
                keys.append((msg.get_date(), key))
        for _, key in sorted(keys):
            yield f"maildir:{key}", self.box.get_bytes(key)

    def mark_done(self, source_key: str) -> None:
        key = source_key.removeprefix("maildir:")
        try:
            msg = self.box.get_message(key)
        except KeyError:
            return
        msg.set_subdir("cur")
        msg.add_flag("S")
        self.box[key] = msg


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
