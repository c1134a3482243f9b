"""An aiosmtpd server on a free loopback port, for the tests of what the
referee says to an SMTP relay (refusals, SMTPUTF8, AUTH, many connections)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiosmtpd.controller import Controller


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def smtpd(handler: Any, **options: Any) -> Iterator[int]:
    """Serve ``handler`` (aiosmtpd's ``handle_*`` hooks) while the block runs;
    yields the port. ``options`` go to aiosmtpd's Controller."""
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()
