"""IMAP source (imapclient): a UIDVALIDITY + UID cursor, IDLE with a poll fallback.

Messages are fetched with ``BODY.PEEK[]`` so a human reading the mailbox
neither hides mail from the referee nor sees it marked read too early; they
are selected by ``UID > last_uid``, never by UNSEEN (RFC 3501 §2.3.1.1). The
cursor is stored by the service in the message's own transaction; the
``\\Seen`` flag is set after commit and is only advisory.

New mail is looked at first (:meth:`ImapSource.waiting`: its size and its
From, To, Cc and Subject), so that a pass can choose which to read first;
then bodies are fetched in the order asked (:meth:`ImapSource.fetch`).
Memory stays flat whatever arrives: bodies come in batches of at most
:data:`FETCH_BYTES` in all (a bigger mail is fetched alone), and a mail over
the size cap brings only its header. A
closed connection is never taken for "nothing new": EOF or BYE during IDLE
raises :class:`ConnectionLost`; nor is news the server sent along with
IDLE's continuation, which sits read already (:func:`read_ahead`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientError

from referee.config import MailboxSection

log = logging.getLogger(__name__)

#: The most message bytes one FETCH asks for; a single larger mail is fetched alone.
FETCH_BYTES = 8 * 1024 * 1024
#: UIDs per FETCH of ``RFC822.SIZE`` (a few dozen bytes of answer each).
SIZE_BATCH = 1000
#: The most of an over-cap mail's header that is fetched (``BODY.PEEK[HEADER]<0.n>``).
MAX_HEADER_BYTES = 256 * 1024
#: The header fields of the first look at new mail, and the most bytes of
#: them fetched for one mail.
HEADING_FIELDS = "FROM TO CC SUBJECT X-REFEREE-MAIL"
MAX_HEADING_BYTES = 16 * 1024
#: How often IDLE looks at the stop flag and at the connection.
IDLE_CHECK_SECONDS = 1.0


class ConnectionLost(ConnectionError):
    """The server closed the connection (EOF, or an untagged BYE): reconnect."""


@dataclass(frozen=True)
class Fetched:
    source_key: str
    raw: bytes
    uidvalidity: int
    uid: int
    size: int  # RFC822.SIZE; raw holds only the header when it is over the cap


@dataclass(frozen=True)
class Waiting:
    """A new mail as first looked at: its UID, size, heading fields and
    when the server received it."""

    uid: int
    size: int  # RFC822.SIZE
    head: bytes  # From, To, Cc, Subject, X-Referee-Mail (at most MAX_HEADING_BYTES)
    #: INTERNALDATE (RFC 3501 §2.3.3), naive UTC: the server's own clock
    #: when the mail arrived, which no sender writes.
    arrived: datetime | None = None


def fetch_plan(sizes: Sequence[tuple[int, int]], max_size: int,
               budget: int = FETCH_BYTES) -> Iterator[tuple[str, list[int]]]:
    """Group ``(uid, size)`` pairs, in order, into FETCH commands.

    Yields ``("body", uids)`` for runs whose sizes add up to at most ``budget``
    (a mail bigger than the budget alone) and ``("header", [uid])`` for each
    mail over ``max_size``.
    """
    batch: list[int] = []
    total = 0
    for uid, size in sizes:
        if size > max_size:
            if batch:
                yield "body", batch
                batch, total = [], 0
            yield "header", [uid]
            continue
        if batch and total + size > budget:
            yield "body", batch
            batch, total = [], 0
        batch.append(uid)
        total += size
    if batch:
        yield "body", batch


def _utc(when: object) -> datetime | None:
    """An INTERNALDATE as the project keeps times: naive UTC."""
    if not isinstance(when, datetime):
        return None
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def _said_bye(responses: Sequence[Any]) -> bytes | None:
    """The text of an untagged BYE among IDLE responses, if there is one."""
    for r in responses:
        if isinstance(r, tuple) and r and r[0] == b"BYE":
            return b" ".join(x for x in r[1:] if isinstance(x, bytes)) or b"BYE"
    return None


def socket_at_eof(sock: socket.socket) -> bool:
    """True when the peer has closed (or reset) the connection.

    Peeks at the TCP stream through a duplicate of the descriptor, so it works
    under TLS too and never takes bytes from the IMAP reader.
    """
    try:
        fd = os.dup(sock.fileno())
    except OSError:
        return True  # closed on our side
    with socket.socket(fileno=fd) as raw:
        try:
            return raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False  # open, nothing to read
        except OSError:
            return True  # reset


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context of every connection this process makes: made once,
    as loading the system's certificates costs some 25 ms of CPU, and only
    when a connection asks for TLS."""
    return ssl.create_default_context()


def _keepalive(sock: socket.socket) -> None:
    """TCP keepalive, so that a peer gone without a word (a NAT that forgot us,
    a host switched off) shows as a dead socket during IDLE in about 90 s."""
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)


def read_ahead(client: IMAPClient) -> bool:
    """Whether the server's words already wait in this process, read from
    the socket along with an earlier line (imaplib's buffered reader, or
    TLS's own buffer), where polling the socket does not see them.

    Mail that came after a pass's last command is told right after IDLE's
    ``+ idling``, often in the same packet: the read that takes the
    continuation takes the ``EXISTS`` too, and imapclient's ``idle_check``,
    which polls the socket, would wait out the IDLE (25 minutes) without it.
    Peeks without blocking and without taking a byte from the reader.
    """
    sock = client.socket()
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    imap = client._imap
    reader = getattr(imap, "_file", None) or getattr(imap, "file", None)
    if reader is None or not hasattr(reader, "peek"):
        return False
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        # A line held in the buffer, or bytes just come (which polling would
        # have seen too); nothing (b"") on a quiet or closed socket.
        return bool(reader.peek(1))
    except (BlockingIOError, ssl.SSLWantReadError, InterruptedError):
        return False
    finally:
        sock.settimeout(timeout)


def _pending(client: IMAPClient) -> dict[str, Any]:
    """Untagged responses imaplib keeps aside for no one in particular (an
    EXISTS that came with a FETCH), by name: ``{"EXISTS": [b"12"]}``."""
    pending: dict[str, Any] = client._imap.untagged_responses
    return pending


class ImapSource:
    """One connection to the referee's mailbox folder."""

    def __init__(self, cfg: MailboxSection, max_size: int) -> None:
        self.cfg = cfg
        self.max_size = max_size
        self.client: IMAPClient | None = None
        self.uidvalidity = 0
        #: A pass left mail it found for the next one (see :meth:`announced`).
        self.left = False

    @property
    def mailbox(self) -> str:
        """The account and folder, not the server's address: a host renamed
        or moved keeps its cursor and its source keys."""
        return f"imap:{self.cfg.username}/{self.cfg.folder}"

    def connect(self) -> IMAPClient:
        if self.client is not None:
            return self.client
        cfg = self.cfg
        client = IMAPClient(cfg.host, port=cfg.port, ssl=cfg.security == "ssl",
                            ssl_context=_tls() if cfg.security == "ssl" else None, timeout=60)
        try:
            if cfg.security == "starttls":
                client.starttls(_tls())
            client.login(cfg.username, cfg.password)
            info = client.select_folder(cfg.folder)
        except BaseException:
            with contextlib.suppress(Exception):
                client.shutdown()
            raise
        self.uidvalidity = int(info[b"UIDVALIDITY"])
        # INTERNALDATE with its zone, not turned into this machine's local time.
        client.normalise_times = False
        _keepalive(client.socket())
        self.client = client
        return client

    def close(self) -> None:
        """Log out (a polite end; use :meth:`drop` for a connection known dead)."""
        if self.client is not None:
            with contextlib.suppress(IMAPClientError, OSError):
                self.client.logout()
            self.drop()

    def drop(self) -> None:
        """Forget the connection without a word to the server (it is gone)."""
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.shutdown()

    def key_of(self, uid: int) -> str:
        """The source key of a mail of this folder."""
        return f"{self.mailbox};UIDVALIDITY={self.uidvalidity};UID={uid}"

    def waiting(self, cursor: tuple[int, int] | None, after: int = 0
                ) -> Iterator[list[Waiting]]:
        """The mail after the cursor (and after UID ``after``), oldest first,
        as first looked at, :data:`SIZE_BATCH` a FETCH. A changed
        UIDVALIDITY rescans the folder; the service drops what it has seen
        by Message-ID."""
        client = self.connect()
        client.noop()
        # Whatever the server announces from here on may be mail this SEARCH
        # does not find: see :meth:`announced`.
        _pending(client).pop("EXISTS", None)
        if cursor and cursor[0] == self.uidvalidity:
            after = max(after, cursor[1])
        elif cursor:
            log.warning("UIDVALIDITY of %s changed; rescanning", self.mailbox)
        if after:
            uids = [u for u in client.search(["UID", f"{after + 1}:*"]) if u > after]
        else:
            uids = client.search(["ALL"])
        uids = sorted(uids)
        heading = f"BODY.PEEK[HEADER.FIELDS ({HEADING_FIELDS})]<0.{MAX_HEADING_BYTES}>"
        for i in range(0, len(uids), SIZE_BATCH):
            chunk = uids[i:i + SIZE_BATCH]
            answer = client.fetch(chunk, ["RFC822.SIZE", "INTERNALDATE", heading])
            found = []
            for u in chunk:
                items = answer.pop(u, {})
                if b"RFC822.SIZE" not in items:
                    continue  # expunged meanwhile
                head = next((v for k, v in items.items()
                             if k.startswith(b"BODY[HEADER.FIELDS")), b"")
                found.append(Waiting(u, int(items[b"RFC822.SIZE"]), head or b"",
                                     _utc(items.get(b"INTERNALDATE"))))
            del answer
            yield found

    def newest_arrival(self) -> datetime | None:
        """When the server received the newest mail of the folder (the
        INTERNALDATE of its highest UID), or None in an empty folder."""
        client = self.connect()
        last = client.search(["UID", "*"])  # "*": the highest UID; none in an empty folder
        if not last:
            return None
        answer = client.fetch(last, ["INTERNALDATE"])
        return max((w for w in (_utc(v.get(b"INTERNALDATE")) for v in answer.values()) if w),
                   default=None)

    def fetch(self, mails: Sequence[Waiting],
              before: Callable[[], object] | None = None) -> Iterator[Fetched]:
        """The bodies of ``mails``, in the order given (a mail expunged
        meanwhile is left out). Lazy: at most one FETCH's worth of bodies
        (:data:`FETCH_BYTES`, or one bigger mail) is held at a time.
        ``before`` runs before each FETCH (the pass commits what it did,
        holding no lock while the server answers)."""
        client = self.connect()
        size_of = {w.uid: w.size for w in mails}
        for part, batch in fetch_plan([(w.uid, w.size) for w in mails], self.max_size,
                                      FETCH_BYTES):
            if before is not None:
                before()
            for uid, raw in self._fetch(client, part, batch):
                yield Fetched(self.key_of(uid), raw, self.uidvalidity, uid, size_of[uid])

    def messages(self, cursor: tuple[int, int] | None) -> Iterator[Fetched]:
        """Every mail after the cursor, oldest first (:meth:`waiting`, then
        :meth:`fetch`)."""
        for mails in self.waiting(cursor):
            yield from self.fetch(mails)

    def _fetch(self, client: IMAPClient, part: str, batch: list[int]
               ) -> Iterator[tuple[int, bytes]]:
        """One FETCH of bodies (or of one header); hands each over and lets it go."""
        if part == "body":
            item, key = "BODY.PEEK[]", b"BODY[]"
        else:
            item, key = f"BODY.PEEK[HEADER]<0.{MAX_HEADER_BYTES}>", b"BODY[HEADER]<0>"
        answer = client.fetch(batch, [item])
        for uid in batch:
            data = answer.pop(uid, None)
            if data is None or key not in data:
                continue  # expunged meanwhile
            raw = data.pop(key)
            del data
            yield uid, raw
            del raw

    def mark_seen(self, uids: int | Sequence[int]) -> None:
        """``\\Seen`` on messages whose transactions have committed: one
        STORE for a whole batch (the flag is advisory; the database decides)."""
        uids = [uids] if isinstance(uids, int) else list(uids)
        if self.client is not None and uids:
            self.client.add_flags(uids, [b"\\Seen"], silent=True)

    def announced(self) -> bool:
        """Whether the server announced new mail (an untagged EXISTS) since
        the last pass's SEARCH, and so perhaps mail that SEARCH did not find.

        A server tells a client of new mail once, at the end of whichever
        command comes next (a FETCH, a STORE, the SEARCH itself); imaplib
        keeps such news aside, and IDLE would never tell it again. Forgets
        the news: the next pass looks for the mail itself. True also when
        the last pass left mail it found to the next (:attr:`left`).
        """
        left, self.left = self.left, False
        if self.client is None:
            return left
        return _pending(self.client).pop("EXISTS", None) is not None or left

    def news(self) -> bool:
        """Ask the server (NOOP) whether mail came since the last SEARCH,
        without forgetting the news (:meth:`waiting` does)."""
        client = self.connect()
        client.noop()
        return "EXISTS" in _pending(client)

    def has_idle(self) -> bool:
        return self.client is not None and self.client.has_capability("IDLE")

    def idle(self, seconds: float, stop: Callable[[], bool]) -> bool:
        """IDLE (RFC 2177) up to ``seconds``, checking ``stop`` every second.

        Returns True when the server reported something, such as new mail
        (mail that came since the last command is told at once, with the
        continuation: :func:`read_ahead`).
        Raises :class:`ConnectionLost` when the server says BYE or closes the
        connection (a restart), and any error of a dead connection as it comes;
        the connection is dropped first either way.
        """
        client = self.connect()
        try:
            client.idle()
            end = time.monotonic() + seconds
            news = False
            while not stop():
                left = end - time.monotonic()
                if left <= 0:
                    break
                if read_ahead(client):
                    # Read already, with "+ idling" or a line before: the
                    # socket stays quiet. Whatever it is (news of mail, a
                    # BYE), leaving IDLE takes it and the next pass looks.
                    news = True
                    break
                responses = client.idle_check(timeout=min(IDLE_CHECK_SECONDS, left))
                bye = _said_bye(responses)
                if bye is not None:
                    raise ConnectionLost(f"server said BYE: {bye.decode('ascii', 'replace')}")
                if responses:
                    news = True
                    break
                # imapclient swallows EOF during IDLE and returns nothing at
                # once, every time: look at the socket itself.
                if socket_at_eof(client.socket()):
                    raise ConnectionLost("connection closed by the server during IDLE")
            client.idle_done()
            return news
        except (IMAPClientError, OSError):
            self.drop()
            raise
