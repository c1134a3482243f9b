"""Mails for the tests of reading one inbound mail (``referee/mail``), and
reading them as the referee does."""

from __future__ import annotations

import base64

from referee.mail.inbound import InboundMessage, parse_message

REFEREE = "referee@pbm.example.org"
LIST = "players@pbm.example.org"
DOMAIN = "pbm.example.org"


def parse(raw: bytes, *, crlf: bool = True) -> InboundMessage:
    """Parse as the referee does; ``crlf`` turns LF line ends into the wire's CRLF."""
    if crlf:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return parse_message(raw, referee_address=REFEREE, list_address=LIST, our_domain=DOMAIN)


def b64(text: str, charset: str) -> bytes:
    """A body as Outlook sends it: base64 in lines of 76."""
    return base64.encodebytes(text.encode(charset))


def simple(headers: bytes = b"", *, subject: bytes = b"Re: [goofspiel-7] Round 2",
           sender: bytes = b"Alice Martin <alice@example.com>", body: bytes = b"bid 5\n") -> bytes:
    """A one-part plain message with extra ``headers``, for single-header rules."""
    return (
        b"From: " + sender + b"\n"
        b"To: Goofspiel Referee <referee@pbm.example.org>\n"
        b"Subject: " + subject + b"\n"
        b"Date: Mon, 3 Jun 2024 11:02:17 +0200\n"
        b"Message-ID: <20240603090217.12345@mail.example.com>\n"
        + headers
        + b"MIME-Version: 1.0\n"
        b"Content-Type: text/plain; charset=utf-8\n"
        b"\n" + body
    )
