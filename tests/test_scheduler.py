"""The daemon's mail watcher outlives any one failed pass, and reads mail that
arrives during a pass without waiting for more; under systemd the daemon
says it is ready, alive (only while the watcher shows life) and stopping."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient

from referee import passes, scheduler
from referee.cli import main
from referee.notify import Notifier
from referee.passes import LOOK_EVERY
from referee.scheduler import Daemon
from referee.service import Referee
from tests.mailstack import GIVE_UP, MailStack
from tests.test_e2e import Post, opened_game
from tests.test_passes import STRANGER, flood, records
from tests.test_referee import Club


def test_the_mail_watcher_lives_on_after_a_pass_that_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    club = Club(tmp_path)
    daemon = Daemon(club.referee)
    calls: list[str] = []

    def intake(referee: Referee, **_: object) -> tuple[int, int, int]:
        calls.append("pass")
        if len(calls) == 1:
            raise RuntimeError("database is locked")
        daemon.stop.set()
        return 0, 0, 0

    monkeypatch.setattr(scheduler, "intake", intake)
    monkeypatch.setattr(scheduler, "MAX_BACKOFF", 0.01)
    daemon.watch_mail()  # returns once the second pass sets stop
    assert calls == ["pass", "pass"]
    club.referee.close()


def test_a_job_waiting_for_the_lock_runs_between_passes_that_read_mail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Passes follow one another at once while they read mail (a flood), but
    not so close that the outbox or the deadlines never get the lock."""
    club = Club(tmp_path)
    daemon = Daemon(club.referee)
    passes: list[int] = []
    job_ran_after: list[int] = []
    waiting: list[threading.Thread] = []

    def job() -> None:
        with daemon.lock:
            job_ran_after.append(len(passes))

    def intake(referee: Referee, **_: object) -> tuple[int, int, int]:
        passes.append(1)
        if len(passes) == 1:
            waiting.append(threading.Thread(target=job))
            waiting[0].start()
            time.sleep(0.2)  # it waits for the lock this pass holds
        if len(passes) == 50:
            daemon.stop.set()
            return 0, 0, 0
        return 1, 1, 0  # every pass read a mail

    monkeypatch.setattr(scheduler, "intake", intake)
    monkeypatch.setattr(Daemon, "_send", lambda self: None)
    monkeypatch.setattr(Daemon, "_note_pass", lambda self, text: None)
    monkeypatch.setattr(scheduler, "publish_pages", lambda referee: None)
    # On one CPU, where the waiting thread wakes only when this one lets it.
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    try:
        daemon.watch_mail()
    finally:
        os.sched_setaffinity(0, cpus)
    waiting[0].join(timeout=GIVE_UP)
    assert len(passes) == 50
    assert job_ran_after == [1]  # right after the first pass
    club.referee.close()


def test_a_job_that_waited_for_the_lock_does_nothing_once_the_daemon_stops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM during a long pass: the outbox job that waited for its lock
    leaves the outbox to the next start, so the daemon stops at once."""
    club = Club(tmp_path)
    daemon = Daemon(club.referee)
    sent: list[int] = []
    monkeypatch.setattr(scheduler, "send_outbox", lambda referee, now=None: sent.append(1))
    with daemon.lock:  # the pass
        job = threading.Thread(target=daemon.outbox)
        job.start()
        daemon.stop.set()
    job.join(timeout=GIVE_UP)
    assert not job.is_alive() and sent == []
    daemon.outbox()
    assert sent == []
    club.referee.close()


def test_the_watchdog_hears_from_the_daemon_only_while_its_mail_watcher_shows_life(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass stuck for good (here: in the middle of its mail) stops the
    WATCHDOG=1 pings half a watchdog after its last sign of life, so systemd
    restarts the daemon; asking whether to stop, between two mails, is one."""
    club = Club(tmp_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(str(tmp_path / "notify"))
        systemd.setblocking(False)
        daemon = Daemon(club.referee, Notifier(str(tmp_path / "notify"), timedelta(seconds=40)))
        assert daemon.beat == 10
        stuck, release = threading.Event(), threading.Event()

        def intake(referee: Referee, stop: Any, **_: object) -> tuple[int, int, int]:
            stop()  # after a mail
            stuck.set()
            release.wait(30)  # the next mail never comes back
            return 1, 1, 0

        monkeypatch.setattr(scheduler, "intake", intake)
        watcher = threading.Thread(target=daemon.watch_mail)
        watcher.start()
        try:
            assert stuck.wait(30)
            last = daemon.mail_alive
            assert daemon.heartbeat(now=last + 19)
            assert systemd.recv(64) == b"WATCHDOG=1"
            assert not daemon.heartbeat(now=last + 21)
            with pytest.raises(BlockingIOError):
                systemd.recv(64)
        finally:
            daemon.stop.set()
            release.set()
            watcher.join(timeout=30)
    club.referee.close()


def test_under_systemd_the_daemon_says_ready_then_alive_and_stopping_on_sigterm(
        tmp_path: Path) -> None:
    """``referee run`` as systemd starts it (Type=notify, WatchdogSec=2):
    NOTIFY_SOCKET an abstract socket, WATCHDOG_USEC in the environment."""
    config = tmp_path / "referee.toml"
    shutil.copy(Path(__file__).resolve().parents[1] / "config.example.toml", config)
    assert main(["-c", str(config), "init"]) == 0
    name = f"referee-test-{os.getpid()}-{id(tmp_path)}"
    env = {**os.environ, "NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "2000000"}
    env.pop("WATCHDOG_PID", None)
    heard: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind("\0" + name)
        systemd.settimeout(60)  # a bound on a hang, not a measure of speed
        with subprocess.Popen([sys.executable, "-m", "referee.cli", "-c", str(config), "run"],
                              env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) as proc:
            try:
                while b"WATCHDOG=1" not in heard:
                    heard.append(systemd.recv(4096))
                proc.send_signal(signal.SIGTERM)
                while not heard[-1].startswith(b"STOPPING=1"):
                    heard.append(systemd.recv(4096))
                assert proc.wait(timeout=60) == 0
            finally:
                if proc.poll() is None:
                    proc.kill()
            assert proc.stderr is not None and proc.stderr.read() == b""
    assert heard[0] == b"READY=1\nSTATUS=running for referee@example.org"
    assert b"STATUS=daemon: deadlines swept (0 fired), outbox sent" in heard
    assert heard[-1] == b"STOPPING=1\nSTATUS=stopping"


# -- on the real servers --------------------------------------------------------------

@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def test_a_mail_that_arrives_during_a_pass_is_read_without_another_mail_or_a_keepalive(
        post: Post, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: Dovecot announces a mail that arrives during a pass at the
    end of the pass's next command (here the STORE of \\Seen), not to the
    IDLE after it, so a daemon that went to IDLE read it only when another
    mail or the server's keepalive woke it (17-113 s; a whole idle_timeout
    with a server that sends none)."""
    assert post.config.mailbox.idle_timeout >= timedelta(minutes=10)
    tag = opened_game(post)
    process = post.referee.process
    arrived: list[str] = []

    def process_while_bob_writes(raw: bytes, source_key: str, **kw: Any) -> Any:
        # The pass has fetched Alice's mail: Bob's bid reaches the mailbox now.
        if not arrived:
            arrived.append(post.write("bob", "bid 2", subject=f"[{tag}]"))
            post.stack.wait_for("referee", post.in_referee_inbox)
        return process(raw, source_key, **kw)

    monkeypatch.setattr(post.referee, "process", process_while_bob_writes)
    daemon = Daemon(post.referee)  # its mail watcher alone: no other job wakes it
    watcher = threading.Thread(target=daemon.watch_mail, name="mail", daemon=True)
    watcher.start()
    try:
        post.write("alice", "bid 4", subject=f"[{tag}]")
        give_up = time.monotonic() + GIVE_UP
        while len(post.actions(tag)) < 2 and time.monotonic() < give_up:
            time.sleep(0.1)
    finally:
        daemon.stop.set()
        watcher.join(timeout=GIVE_UP)
    assert not watcher.is_alive()
    assert arrived, "Alice's mail was never processed"
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [4]), ("bid", [2])], (
        "Bob's bid, which arrived during the pass that read Alice's, was not read")
    assert post.inbound_notes()[arrived[0].strip("<>")] == "processed"


def test_a_mail_that_arrives_during_the_search_of_a_pass_that_reads_nothing_is_read(
        post: Post, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dovecot's SEARCH does not see a mail that came after the pass's NOOP,
    and announces it with the SEARCH's answer, not to the IDLE after it: a
    pass that read nothing looks again when the server announced mail."""
    tag = opened_game(post)
    search = IMAPClient.search
    arrived: list[str] = []

    def search_while_alice_writes(client: IMAPClient, *args: Any, **kw: Any) -> Any:
        if threading.current_thread().name == "mail" and not arrived:
            arrived.append(post.write("alice", "bid 4", subject=f"[{tag}]"))
            post.stack.wait_for("referee", post.in_referee_inbox)
        return search(client, *args, **kw)

    monkeypatch.setattr(IMAPClient, "search", search_while_alice_writes)
    daemon = Daemon(post.referee)
    watcher = threading.Thread(target=daemon.watch_mail, name="mail", daemon=True)
    watcher.start()
    try:
        give_up = time.monotonic() + GIVE_UP
        while not post.actions(tag) and time.monotonic() < give_up:
            time.sleep(0.1)
    finally:
        daemon.stop.set()
        watcher.join(timeout=GIVE_UP)
    assert not watcher.is_alive()
    assert arrived, "the daemon made no pass"
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [4])], (
        "Alice's bid, which arrived during the SEARCH of an empty pass, was not read")


def test_the_daemon_reads_a_mail_that_arrives_during_a_floods_pass_before_the_floods_tail(
        post: Post, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: a stranger's flood is being read when Carol, in no game,
    writes (through Postfix): the daemon reads her mail, her first, at the
    pass's first look, before the flood's sender's later ones, not after the
    whole flood and the next pass (17-18 s on a loaded machine)."""
    monkeypatch.setattr(passes, "LOOK_SECONDS", 3600.0)  # counted in mails, however loaded
    opened_game(post)
    count = 3 * LOOK_EVERY
    flood(post, count)
    post.in_referee_inbox += count
    process = post.referee.process
    arrived: list[str] = []

    def process_while_carol_writes(raw: bytes, source_key: str, **kw: Any) -> Any:
        if not arrived:  # the pass has begun: Carol's mail reaches the mailbox now
            arrived.append(post.write("carol", "Can I play?", subject="hello carol"))
            post.stack.wait_for("referee", post.in_referee_inbox)
        return process(raw, source_key, **kw)

    monkeypatch.setattr(post.referee, "process", process_while_carol_writes)
    daemon = Daemon(post.referee)
    watcher = threading.Thread(target=daemon.watch_mail, name="mail", daemon=True)
    watcher.start()
    try:
        give_up = time.monotonic() + GIVE_UP
        while len(records(post)) < count + 1 and time.monotonic() < give_up:
            time.sleep(0.1)
    finally:
        daemon.stop.set()
        watcher.join(timeout=GIVE_UP)
    assert not watcher.is_alive()
    got = records(post)
    carol = [i for i, r in enumerate(got) if r[0] == post.stack.address("carol")]
    assert carol == [LOOK_EVERY], "Carol's mail was not read at the pass's first look"
    assert [r[1] for r in got if r[0] == STRANGER] == [f"hello {i}" for i in range(count)]
