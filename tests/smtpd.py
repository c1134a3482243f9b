"""An aiosmtpd server on a free loopback port, for the tests of what the
referee says to an SMTP relay (refusals, SMTPUTF8, AUTH, many connections)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Refusing:
    """An aiosmtpd handler's RCPT hook: 451 for the addresses in
    ``transient``, 550 for those in ``permanent``, the rest taken."""

    def __init__(self) -> None:
        self.transient: set[str] = set()
        self.permanent: set[str] = set()

    async def handle_RCPT(self, server: SMTPServer, session: Session, envelope: Envelope,
                          address: str, rcpt_options: list[str]) -> str:
        if address in self.transient:
            return "451 4.3.0 try again later"
        if address in self.permanent:
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"


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
