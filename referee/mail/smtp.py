"""The SMTP relay (aiosmtplib): one connection, one message at a time, and
the server's answers translated into what the outbox needs to know.

RFC 5321 §4.2.1: a 5xx reply is permanent, a 4xx reply transient; a partial
refusal of some recipients does not fail the message. A non-ASCII address
needs SMTPUTF8 (RFC 6531): to a relay without it, that address is refused
for good, by us, and the message goes to the others. The outbox's book-
keeping (which rows, when to retry) is ``referee.service.outgoing.outbox``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email import message_from_bytes, message_from_string
from email.policy import SMTP

import aiosmtplib

from referee.config import SmtpSection

#: What a non-ASCII address gets from a relay without SMTPUTF8: RFC 6531's
#: 553 5.6.7, "non-ASCII addresses not permitted", given by the referee (the
#: relay was never asked).
NO_SMTPUTF8 = aiosmtplib.SMTPResponse(
    553, "5.6.7 not sent: the relay does not offer SMTPUTF8, which this non-ASCII "
         "address needs")


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
        others were accepted, with the server's code and words.

        The stored text goes out as it is (its UTF-8 bytes: aiosmtplib ends
        lines with CRLF and doubles leading dots), with BODY=8BITMIME when the
        server offers it, as ``send_message`` would after parsing and
        flattening it again. Only 8-bit text to a server without 8BITMIME is
        parsed, so that the flattening makes it 7-bit, and so are 8-bit
        headers, which flattening refuses."""
        try:
            errors = await self._send(raw, sender, recipients)
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
        except aiosmtplib.SMTPNotSupported as e:
            # Something this message needs and the relay lacks: the message
            # fails, not the relay.
            raise Refused(f"not sent: {e}", permanent=True) from e
        except (aiosmtplib.SMTPException, OSError) as e:
            raise RelayUnavailable(str(e)) from e
        return {a: (r.code, r.message) for a, r in errors.items()}

    async def _send(self, raw: str, sender: str,
                    recipients: list[str]) -> dict[str, aiosmtplib.SMTPResponse]:
        client = self.client
        if client.is_ehlo_or_helo_needed:
            try:
                await client.ehlo()
            except aiosmtplib.SMTPHeloError:
                await client.helo()
        unfit: dict[str, aiosmtplib.SMTPResponse] = {}
        if not client.supports_extension("smtputf8"):
            if not sender.isascii():
                raise Refused(f"{NO_SMTPUTF8.code} {NO_SMTPUTF8.message} (the envelope "
                              f"sender {sender})", permanent=True)
            unfit = {r: NO_SMTPUTF8 for r in recipients if not r.isascii()}
            recipients = [r for r in recipients if r.isascii()]
            if not recipients:
                said = {r: f"{code} {words}" for r, (code, words) in unfit.items()}
                raise Refused("recipients refused: " + "; ".join(
                    f"{r}: {words}" for r, words in said.items()), permanent=True, refused=said)
        errors = await self._send_to(raw, sender, recipients)
        return {**errors, **unfit}

    async def _send_to(self, raw: str, sender: str,
                       recipients: list[str]) -> dict[str, aiosmtplib.SMTPResponse]:
        client = self.client
        options: list[str] = []
        ascii_head = raw.isascii() or _head(raw).isascii()
        if client.supports_extension("8BITMIME") and ascii_head:
            options.append("BODY=8BITMIME")
        elif not raw.isascii():
            # 8-bit headers need SMTPUTF8, which stored mail never asks for:
            # parsing and flattening says so (the row fails alone). An 8bit
            # body is parsed from its bytes, and so flattens to base64.
            msg = (message_from_bytes(raw.encode("utf-8"), policy=SMTP) if ascii_head
                   else message_from_string(raw, policy=SMTP))
            errors, _ = await client.send_message(msg, sender=sender, recipients=recipients)
            return errors
        if not (sender.isascii() and all(r.isascii() for r in recipients)):
            options.append("SMTPUTF8")  # offered: ``_send`` kept no such address otherwise
        errors, _ = await client.sendmail(sender, recipients, raw.encode("utf-8"),
                                          mail_options=options)
        return errors

    async def quit(self) -> None:
        try:
            await self.client.quit()
        except (aiosmtplib.SMTPException, OSError):
            self.client.close()


def _head(raw: str) -> str:
    """The header section of a stored message."""
    ends = [i for i in (raw.find("\r\n\r\n"), raw.find("\n\n")) if i >= 0]
    return raw[:min(ends)] if ends else raw
