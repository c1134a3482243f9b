"""The IMAP source against the suite's real Dovecot: a closed connection is never
"nothing new", and bodies are fetched in batches bounded by bytes."""

from __future__ import annotations

import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from imapclient import IMAPClient

from referee.config import MailboxSection
from referee.mail import imap as imap_module
from referee.mail.imap import (
    FETCH_BYTES,
    ConnectionLost,
    ImapSource,
    fetch_plan,
    socket_at_eof,
)
from tests.mailstack import GIVE_UP, MailStack

USER = "erin"  # a mailbox no other test of this file's neighbours counts on


def small_mail(n: int, body: bytes = b"help\r\n") -> bytes:
    return (f"From: Frank <frank@example.test>\r\nTo: {USER}@example.test\r\n"
            f"Subject: mail {n}\r\nMessage-ID: <imap-{n}-{time.time_ns()}@example.test>\r\n"
            "\r\n").encode() + body


@pytest.fixture
def source(mailstack: MailStack) -> Iterator[ImapSource]:
    mailstack.clear(USER)
    cfg = MailboxSection(kind="imap", host=mailstack.host, port=mailstack.imap_port,
                         username=USER, password=mailstack.password, security="none")
    src = ImapSource(cfg, max_size=1_000_000)
    yield src
    src.close()


def idle_until_lost(source: ImapSource, act: Any) -> tuple[BaseException | None, int]:
    """IDLE (up to :data:`GIVE_UP`, a hang guard) while ``act`` runs half a second
    in; returns the error idle raised and how many of its checks of the server
    came back with nothing once the connection had reached its end (EOF).

    That count is the spinning of a watcher that takes a dead socket for "nothing
    new": imapclient's ``idle_check`` returns at once, every time, at EOF. It is
    a count, not a time, so a busy machine cannot raise it.
    """
    client = source.connect()
    check = client.idle_check
    empty_at_eof = 0

    def counted(timeout: float | None = None) -> list[Any]:
        nonlocal empty_at_eof
        responses: list[Any] = check(timeout)
        if not responses and socket_at_eof(client.socket()):
            empty_at_eof += 1
        return responses

    client.idle_check = counted  # type: ignore[method-assign]
    timer = threading.Timer(0.5, act)
    timer.start()
    error: BaseException | None = None
    try:
        source.idle(GIVE_UP, lambda: False)
    except Exception as e:
        error = e
    finally:
        timer.join()
    return error, empty_at_eof


@pytest.mark.parametrize("how", ["kick", "crash"])
def test_a_connection_closed_during_idle_raises_connection_lost_at_once(
        mailstack: MailStack, source: ImapSource, how: str) -> None:
    # kick: Dovecot's imap process says "* BYE" and closes; crash: SIGKILL, the
    # socket just reaches EOF, which imapclient's idle_check swallows. "At once":
    # idle raises, where waiting out its time would end it another way, and it
    # looks at the dead socket at most once.
    act = ((lambda: mailstack.kick(USER)) if how == "kick"
           else (lambda: mailstack.crash_sessions(USER)))
    error, spins = idle_until_lost(source, act)
    assert isinstance(error, ConnectionLost), error
    assert ("BYE" in str(error)) == (how == "kick")
    assert spins <= 1, f"IDLE spun: {spins} checks of a closed connection"
    assert source.client is None  # dropped: the next use connects afresh
    mailstack.send(small_mail(1), "frank", USER)
    mailstack.wait_for(USER, 1)
    [got] = list(source.messages(None))
    assert got.raw.endswith(b"help\r\n")


def test_a_restart_of_dovecot_during_idle_raises_connection_lost(
        mailstack: MailStack, source: ImapSource) -> None:
    error, spins = idle_until_lost(
        source, lambda: mailstack.restart_server("dovecot", crash=True))
    assert isinstance(error, ConnectionLost), error
    assert spins <= 1, f"IDLE spun: {spins} checks of a closed connection"
    assert list(source.messages(None)) == []  # Dovecot is back: a new connection reads


def test_a_quiet_idle_returns_nothing_new_and_the_connection_lives_on(
        mailstack: MailStack, source: ImapSource) -> None:
    source.connect()
    started = time.monotonic()
    assert source.idle(1.5, lambda: False) is False
    # It waited its time out (a lower bound, which a busy machine only helps).
    assert time.monotonic() >= started + 1.5
    client = source.client
    assert client is not None
    # new mail during IDLE is news, on the same connection
    timer = threading.Timer(0.3, lambda: mailstack.send(small_mail(2), "frank", USER))
    timer.start()
    assert source.idle(GIVE_UP, lambda: False) is True, f"no news of the mail in {GIVE_UP} s"
    timer.join()
    assert source.client is client
    assert [f.raw.endswith(b"help\r\n") for f in source.messages(None)] == [True]
    # asked to stop: leaves IDLE at its next look at the flag (each second),
    # connection intact, not when its time runs out. (A NOOP first takes any
    # late word of the mail just read, such as its flags, which a busy Dovecot
    # may send after the fetch: that is news too.)
    client.noop()
    flag = threading.Event()
    threading.Timer(0.2, flag.set).start()
    started = time.monotonic()
    assert source.idle(GIVE_UP, flag.is_set) is False
    assert time.monotonic() < started + GIVE_UP, "IDLE did not stop when asked"
    assert source.client is client
    client.noop()


def until_sent(client: IMAPClient, word: bytes) -> None:
    """Wait (up to :data:`GIVE_UP`, a hang guard) until the server has sent
    ``word`` on ``client``'s connection, unread yet: peeks at the socket."""
    sock = client.socket()
    give_up = time.monotonic() + GIVE_UP
    while word not in sock.recv(65536, socket.MSG_PEEK):
        assert time.monotonic() < give_up, f"the server did not send {word!r}"
        time.sleep(0.01)


def test_mail_come_after_the_last_search_is_news_to_the_idle_that_follows(
        mailstack: MailStack, source: ImapSource) -> None:
    # The daemon's pass found nothing; a mail comes before its IDLE starts.
    # Dovecot tells it just after "+ idling", and when both lines are in by
    # the time the client reads (a busy machine, or one packet), the read
    # that takes the continuation takes the EXISTS into imaplib's buffer,
    # where polling the socket never sees it: the mail waited out the IDLE
    # (25 minutes in the daemon). Here the client reads IDLE's answer only
    # once the EXISTS is sent, so it is in that buffer every time.
    assert list(source.messages(None)) == []
    client = source.client
    assert client is not None
    mailstack.send(small_mail(1), "frank", USER)
    mailstack.wait_for(USER, 1)
    imap = client._imap
    send = imap._command

    def command(name: str, *args: Any) -> Any:
        tag = send(name, *args)
        if name == "IDLE":
            until_sent(client, b"EXISTS")
        return tag

    imap._command = command  # type: ignore[method-assign]
    # The IDLE's length only bounds a failure: the news is known before it waits.
    assert source.idle(5, lambda: False) is True, "the mail was not news to IDLE"
    assert source.client is client
    assert [f.raw.endswith(b"help\r\n") for f in source.messages(None)] == [True]


def test_fetch_plan_bounds_each_fetch_by_bytes_and_fetches_a_big_mail_alone() -> None:
    mb = 1024 * 1024
    sizes = [(1, 100), (2, 3 * mb), (3, 4 * mb), (4, 2 * mb), (5, 9 * mb), (6, 10),
             (7, 30 * mb), (8, 20), (9, 8 * mb)]
    plan = list(fetch_plan(sizes, max_size=25 * mb, budget=8 * mb))
    assert plan == [("body", [1, 2, 3]), ("body", [4]), ("body", [5]), ("body", [6]),
                    ("header", [7]), ("body", [8]), ("body", [9])]
    assert [u for _, uids in plan for u in uids] == [u for u, _ in sizes]  # order kept
    assert list(fetch_plan([], 10)) == []


class FetchLog:
    """Wraps one IMAPClient's fetch to record what each FETCH asked for."""

    def __init__(self, client: IMAPClient) -> None:
        self.calls: list[tuple[list[int], list[str]]] = []
        inner = client.fetch

        def fetch(messages: Any, data: Any, modifiers: Any = None) -> Any:
            self.calls.append((list(messages), [str(d) for d in data]))
            return inner(messages, data, modifiers)

        client.fetch = fetch  # type: ignore[method-assign]

    def bodies(self) -> list[list[int]]:
        return [uids for uids, data in self.calls if data == ["BODY.PEEK[]"]]


def test_messages_fetch_bodies_within_the_byte_bound_and_only_the_header_over_the_cap(
        mailstack: MailStack, source: ImapSource, monkeypatch: pytest.MonkeyPatch) -> None:
    # A small bound, so that a few hundred kB show the batching; the referee's own
    # bound is tested at full size in tests/test_outages.py.
    bound = 300_000
    monkeypatch.setattr(imap_module, "FETCH_BYTES", bound)
    blob = b"x" * 76 + b"\r\n"
    bodies = {1: 1, 2: 2000, 3: 2000, 4: 1, 5: 5000, 6: 14000, 7: 1}  # lines of 78 bytes
    with mailstack.imap(USER) as client:
        for n, lines in bodies.items():
            client.append("INBOX", small_mail(n, b"help\r\n" + blob * lines))
    source.connect()
    assert source.client is not None
    log = FetchLog(source.client)
    got = list(source.messages(None))
    assert [f.uid for f in got] == sorted(f.uid for f in got) and len(got) == 7
    size = {f.uid: f.size for f in got}
    for f, lines in zip(got, bodies.values(), strict=True):
        if f.size <= source.max_size:
            assert len(f.raw) == f.size and f.raw.count(blob) == lines
        else:  # mail 6, 1.09 MB: its header only, with the server's size
            assert lines == 14000 and f.size > 1_000_000
            assert f.raw.endswith(b"\r\n\r\n") and b"Subject: mail 6" in f.raw
    fetched = log.bodies()
    assert sorted(u for uids in fetched for u in uids) == [
        f.uid for f in got if f.size <= source.max_size]
    for uids in fetched:
        assert len(uids) == 1 or sum(size[u] for u in uids) <= bound, (uids, size)
    number = {f.uid: n for f, n in zip(got, bodies, strict=True)}
    # 156 kB + 156 kB is over the bound; mail 5 (390 kB) alone; mail 6 not at all
    assert [[number[u] for u in uids] for uids in fetched] == [[1, 2], [3, 4], [5], [7]]

def test_the_byte_bound_is_eight_mebibytes() -> None:
    assert FETCH_BYTES == 8 * 1024 * 1024


def test_memory_stays_within_a_batch_whatever_the_mailbox_holds(
        mailstack: MailStack, source: ImapSource, monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 2_000_000
    monkeypatch.setattr(imap_module, "FETCH_BYTES", bound)
    line = b"y" * 76 + b"\r\n"
    with mailstack.imap(USER) as client:
        for n in range(20):  # 18 MB in all, 0.9 MB each (the cap here is 1 MB)
            client.append("INBOX", small_mail(n, b"help\r\n" + line * 11_500))
    source.connect()
    tracemalloc.start()
    try:
        count = total = 0
        for f in source.messages(None):
            count, total = count + 1, total + len(f.raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20 and total > 17_000_000
    # imaplib and imapclient hold a FETCH's answer about three times over (6.4 MB
    # for batches of 1.8 MB here); all of it at once would be over 50 MB.
    assert peak < 5 * bound, f"peak {peak / 1e6:.1f} MB for batches of {bound / 1e6:.1f} MB"
