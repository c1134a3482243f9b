"""IMAP source (imapclient): a UIDVALIDITY + UID cursor, IDLE with a poll fallback.

Messages are fetched with ``BODY.PEEK[]`` so a human reading the mailbox
neither hides mail from the referee nor sees it marked read too early; they
are selected by ``UID > last_uid``, never by UNSEEN (RFC 3501 §2.3.1.1). The
cursor is stored by the service in the message's own transaction; the
``\\Seen`` flag is set after commit and is only advisory.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from referee.config import MailboxSection

log = logging.getLogger(__name__)
FETCH_BATCH = 50


@dataclass(frozen=True)
class Fetched:
    source_key: str
    raw: bytes
    uidvalidity: int
    uid: int
    size: int  # RFC822.SIZE; raw holds only the header when it is over the cap


class ImapSource:
    """One connection to the referee's mailbox folder."""

    def __init__(self, cfg: MailboxSection, max_size: int) -> None:
        self.cfg = cfg
        self.max_size = max_size
        self.client: IMAPClient | None = None
        self.uidvalidity = 0

    @property
    def mailbox(self) -> str:
        return f"imap://{self.cfg.username}@{self.cfg.host}:{self.cfg.port}/{self.cfg.folder}"

    def connect(self) -> IMAPClient:
        if self.client is not None:
            return self.client
        cfg = self.cfg
        context = ssl.create_default_context()
        client = IMAPClient(cfg.host, port=cfg.port, ssl=cfg.security == "ssl",
                            ssl_context=context if cfg.security == "ssl" else None, timeout=60)
        if cfg.security == "starttls":
            client.starttls(context)
        client.login(cfg.username, cfg.password)
        info = client.select_folder(cfg.folder)
        self.uidvalidity = int(info[b"UIDVALIDITY"])
        self.client = client
        return client

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(IMAPClientError, OSError):
                self.client.logout()
            self.client = None

    def messages(self, cursor: tuple[int, int] | None) -> Iterator[Fetched]:
        """Messages after the cursor. A changed UIDVALIDITY rescans the folder;
        the service drops what it has seen by Message-ID."""
        client = self.connect()
        client.noop()
        if cursor and cursor[0] == self.uidvalidity:
            uids = [u for u in client.search(["UID", f"{cursor[1] + 1}:*"]) if u > cursor[1]]
        else:
            if cursor:
                log.warning("UIDVALIDITY of %s changed; rescanning", self.mailbox)
            uids = client.search(["ALL"])
        uids = sorted(uids)
        for i in range(0, len(uids), FETCH_BATCH):
            batch = uids[i:i + FETCH_BATCH]
            sizes = client.fetch(batch, ["RFC822.SIZE"])
            small = [u for u in batch if sizes.get(u, {}).get(b"RFC822.SIZE", 0) <= self.max_size]
            bodies = client.fetch(small, ["BODY.PEEK[]"]) if small else {}
            large = [u for u in batch if u not in small]
            heads = client.fetch(large, ["BODY.PEEK[HEADER]"]) if large else {}
            for uid in batch:
                if uid in bodies:
                    raw = bodies[uid][b"BODY[]"]
                elif uid in heads:
                    raw = heads[uid][b"BODY[HEADER]"]
                else:
                    continue  # expunged meanwhile
                yield Fetched(f"{self.mailbox};UIDVALIDITY={self.uidvalidity};UID={uid}", raw,
                              self.uidvalidity, uid, int(sizes[uid][b"RFC822.SIZE"]))

    def mark_seen(self, uid: int) -> None:
        if self.client is not None:
            self.client.add_flags([uid], [b"\\Seen"], silent=True)

    def has_idle(self) -> bool:
        return self.client is not None and self.client.has_capability("IDLE")

    def idle(self, seconds: float, stop: Callable[[], bool]) -> bool:
        """IDLE (RFC 2177) up to ``seconds``, checking ``stop`` every second.

        Returns True when the server reported something, such as new mail.
        """
        client = self.connect()
        client.idle()
        end = time.monotonic() + seconds
        try:
            while not stop() and time.monotonic() < end:
                if client.idle_check(timeout=1.0):
                    return True
            return False
        finally:
            client.idle_done()
