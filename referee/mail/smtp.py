"""The SMTP relay (aiosmtplib): one connection, one message at a time, and
the server's answers translated into what the outbox needs to know.

RFC 5321 §4.2.1: a 5xx reply is permanent, a 4xx reply transient; a partial
refusal of some recipients does not fail the message. The outbox's book-
keeping (which rows, when to retry) is ``referee.service.outbox``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email import message_from_string
from email.policy import SMTP

import aiosmtplib

from referee.config import SmtpSection


class RelayUnavailable(Exception):
    """The relay cannot be reached, or the connection was lost: try later."""


@dataclass
class Refused(Exception):
    """The relay refused this message; ``permanent`` for a 5xx. ``refused``
    names the recipients refused for good, with what the server said."""

    error: str
    permanent: bool
    refused: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.error


class SmtpRelay:
    """An open connection to the configured relay."""

    def __init__(self, settings: SmtpSection) -> None:
        self.settings = settings
        self.client = aiosmtplib.SMTP(
            hostname=settings.host, port=settings.port, use_tls=settings.security == "ssl",
            start_tls=settings.security == "starttls", timeout=settings.timeout,
        )

    async def connect(self) -> None:
        try:
            await self.client.connect()
            if self.settings.username:
                await self.client.login(self.settings.username, self.settings.password)
        except (aiosmtplib.SMTPException, OSError) as e:
            raise RelayUnavailable(str(e)) from e

    async def send(self, raw: str, sender: str,
                   recipients: list[str]) -> dict[str, tuple[int, str]]:
        """Send one stored message; returns the recipients refused while the
        others were accepted, with the server's code and words."""
        msg = message_from_string(raw, policy=SMTP)
        try:
            errors, _ = await self.client.send_message(msg, sender=sender, recipients=recipients)
        except aiosmtplib.SMTPRecipientsRefused as e:
            raise Refused(
                "recipients refused: " + "; ".join(
                    f"{r.recipient}: {r.code} {r.message}" for r in e.recipients),
                permanent=all(r.code >= 500 for r in e.recipients),
                refused={r.recipient: f"{r.code} {r.message}" for r in e.recipients
                         if r.code >= 500},
            ) from e
        except aiosmtplib.SMTPResponseException as e:
            raise Refused(f"{e.code} {e.message}", permanent=e.code >= 500) from e
        except (aiosmtplib.SMTPException, OSError) as e:
            raise RelayUnavailable(str(e)) from e
        return {a: (r.code, r.message) for a, r in errors.items()}

    async def quit(self) -> None:
        try:
            await self.client.quit()
        except (aiosmtplib.SMTPException, OSError):
            self.client.close()
