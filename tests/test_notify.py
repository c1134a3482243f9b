"""sd_notify(3) over a real unix datagram socket: a path, an abstract name,
the watchdog's interval from the environment, a socket that is gone."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from referee.notify import Notifier


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """systemd's end: a datagram socket bound to a path."""
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(10)
        yield sock, path


def test_each_call_is_one_datagram_of_states(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": path})
    assert notifier.ready("running for referee@example.org")
    assert sock.recv(4096) == b"READY=1\nSTATUS=running for referee@example.org"
    assert notifier.alive()
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert notifier.status("read 2 message(s)\nprocessed 2")  # a newline would end it
    assert sock.recv(4096) == b"STATUS=read 2 message(s) processed 2"
    assert notifier.stopping()
    assert sock.recv(4096) == b"STOPPING=1\nSTATUS=stopping"


def test_a_name_starting_with_at_is_an_abstract_socket() -> None:
    name = f"referee-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(10)
        assert Notifier.from_environment({"NOTIFY_SOCKET": "@" + name}).alive()
        assert sock.recv(4096) == b"WATCHDOG=1"


def test_the_watchdog_is_the_one_systemd_set_for_this_process() -> None:
    mine = {"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "600000000"}
    assert Notifier.from_environment(mine).watchdog == timedelta(minutes=10)
    here = {**mine, "WATCHDOG_PID": str(os.getpid())}
    assert Notifier.from_environment(here).watchdog == timedelta(minutes=10)
    # Set for another process (the one that started this one): not ours.
    assert Notifier.from_environment({**mine, "WATCHDOG_PID": "1"}).watchdog is None
    assert Notifier.from_environment({**mine, "WATCHDOG_USEC": "0"}).watchdog is None
    assert Notifier.from_environment({"WATCHDOG_USEC": "600000000"}).watchdog is None


def test_outside_systemd_nothing_is_sent() -> None:
    notifier = Notifier.from_environment({})
    assert not notifier.ready("running") and not notifier.alive()


def test_a_socket_that_is_gone_is_one_warning_and_no_fault(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    with caplog.at_level(logging.WARNING, logger="referee.notify"):
        assert not notifier.alive()
        assert not notifier.alive()
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith(
        f"cannot tell systemd (NOTIFY_SOCKET {tmp_path / 'gone'}): ")
