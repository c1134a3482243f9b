"""Telling systemd how the daemon is (sd_notify(3)): ready, alive, stopping.

The protocol is one datagram of ``KEY=VALUE`` lines to the unix socket
named by ``$NOTIFY_SOCKET`` (an abstract one when the name starts with
``@``); ``$WATCHDOG_USEC`` says how often systemd wants ``WATCHDOG=1``
(``WatchdogSec=``), and ``$WATCHDOG_PID``, when set, which process it
means. Outside systemd neither is set and every call does nothing.

Written here rather than taken from PyPI: the pure-Python clients there
are unmaintained (sdnotify, last released 2017) or cannot send
``STOPPING=1`` (systemd-watchdog), and systemd-python needs libsystemd's
headers to build; the whole protocol is the few lines below.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from datetime import timedelta

log = logging.getLogger(__name__)


class Notifier:
    """A client of systemd's notification socket (none: a no-op)."""

    def __init__(self, address: str | None, watchdog: timedelta | None) -> None:
        #: Where the datagrams go; an abstract name starts with a NUL byte.
        self.address = "\0" + address[1:] if address and address[0] == "@" else address
        #: How long systemd waits for a ``WATCHDOG=1`` before it kills the
        #: daemon, or None when it does not watch.
        self.watchdog = watchdog if self.address else None
        self._failed = False

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> Notifier:
        address = env.get("NOTIFY_SOCKET") or None
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        mine = not pid or pid == str(os.getpid())
        watchdog = (timedelta(microseconds=int(usec))
                    if usec.isdigit() and int(usec) > 0 and mine else None)
        return cls(address, watchdog)

    def send(self, *states: str) -> bool:
        """Send ``KEY=VALUE`` states in one datagram; whether it went.

        A socket that is gone is logged once at WARNING, not raised: the
        referee's work does not depend on systemd hearing of it.
        """
        if not self.address:
            return False
        message = "\n".join(states).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto(message, self.address)
        except OSError as e:
            if not self._failed:
                log.warning("cannot tell systemd (NOTIFY_SOCKET %s): %s",
                            self.address.replace("\0", "@"), e.strerror or e)
            self._failed = True
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.send("READY=1", f"STATUS={_one_line(status)}")

    def alive(self) -> bool:
        return self.send("WATCHDOG=1")

    def status(self, status: str) -> bool:
        return self.send(f"STATUS={_one_line(status)}")

    def stopping(self) -> bool:
        return self.send("STOPPING=1", "STATUS=stopping")


def _one_line(text: str) -> str:
    """A STATUS value ends at the datagram's next newline."""
    return " ".join(text.split())
