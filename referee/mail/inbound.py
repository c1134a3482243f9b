"""Read one inbound mail: RFC 5322 bytes -> :class:`InboundMessage`, or a
first look at its header -> :class:`Heading`.

Says who sent it, whether a person or a machine did (auto-reply, bounce, our own
mail come back), and which lines the person typed as commands, leaving out
quotes, attributions, signatures and forwards. Each is read by a module of
its own (``headers``, ``automation``, ``mime``, ``quotes``); this one puts
them together. Pure functions: no I/O, no clock.
"""

from __future__ import annotations

import email
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.parser import HeaderParser

from referee.mail import automation, headers, mime, quotes
from referee.mail.automation import Automation, Bounce
from referee.mail.headers import MAX_AUTH_RESULTS, MAX_IDS, MAX_LIST_HEADER, Unreadable
from referee.mail.mime import MAX_MIME_DEPTH


@dataclass(frozen=True)
class InboundMessage:
    """One inbound mail, parsed once. Addresses are lower-cased."""

    message_id: str | None  # without angle brackets, e.g. "abc@host"
    sender: str  # the From address
    sender_name: str  # the From display name, may be ""
    to: tuple[str, ...]
    cc: tuple[str, ...]
    subject: str  # RFC 2047 decoded, unfolded
    in_reply_to: tuple[str, ...]  # message ids, without angle brackets
    references: tuple[str, ...]  # message ids, in order
    list_id: str | None  # the id inside the List-Id's <>, or None
    automation: Automation
    lines: tuple[str, ...]  # the command lines: stripped, non-empty
    size: int  # len(raw)
    tnef_only: bool  # the only body is application/ms-tnef (winmail.dat)
    date: datetime | None  # the Date header, timezone aware
    #: The Authentication-Results headers (RFC 8601), topmost first, for
    #: :func:`referee.mail.auth.verify`; empty when there are none.
    auth_results: tuple[str, ...] = ()
    #: For a bounce, what it reports; None for any other mail.
    bounce: Bounce | None = None


def parse_message(
    raw: bytes,
    *,
    referee_address: str,
    list_address: str | None = None,
    our_domain: str | None = None,
) -> InboundMessage:
    """Parse the raw bytes of one message, as fetched from IMAP or Maildir.

    ``referee_address`` is the bot's own address, ``list_address`` the game's
    public list (if any), ``our_domain`` the domain of the Message-IDs we send.
    Unreadable parts read as no text; a From that names no address, or
    one over SMTP's length, reads as no sender.

    :raises Unreadable: the From is a group, names more than one address,
        or one no mail can be addressed to (a local part outside ASCII);
        or the MIME parts are nested more than :data:`MAX_MIME_DEPTH` deep.
        Nothing else is raised on malformed mail.
    """
    try:
        msg = email.message_from_bytes(raw, policy=policy.compat32)
    except RecursionError:  # the stdlib's parser recurses a level a part
        raise Unreadable(f"MIME parts nested more than {MAX_MIME_DEPTH} deep") from None
    if mime.nesting(msg) > MAX_MIME_DEPTH:
        raise Unreadable(f"MIME parts nested more than {MAX_MIME_DEPTH} deep")
    fields = headers.read_headers(msg)
    sender_name, sender = headers.sender(fields.get("from", []))
    body = mime.body_text(msg, mime.Budget()) or ""
    message_id = headers.first_id(headers.first(fields, "message-id"))
    subject = headers.subject(fields)
    lines = quotes.command_lines(body)
    who = automation.classify(
        msg, fields, sender, subject, message_id, lines,
        referee_address=referee_address, list_address=list_address, our_domain=our_domain,
    )
    return InboundMessage(
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        to=headers.addresses(fields.get("to", [])),
        cc=headers.addresses(fields.get("cc", [])),
        subject=subject,
        in_reply_to=headers.ids(
            (headers.first(fields, "in-reply-to") or "")[:MAX_LIST_HEADER])[:MAX_IDS],
        references=headers.ids(
            " ".join(fields.get("references", []))[-MAX_LIST_HEADER:])[-MAX_IDS:],
        list_id=headers.list_id(headers.first(fields, "list-id")),
        automation=who,
        lines=lines,
        size=len(raw),
        tnef_only=not body.strip() and any(mime.tnef_parts(msg)),  # Outlook's winmail.dat
        date=headers.date(headers.first(fields, "date")),
        auth_results=tuple(fields.get("authentication-results", [])[:MAX_AUTH_RESULTS]),
        bounce=automation.read_bounce(msg) if who is Automation.BOUNCE else None,
    )


@dataclass(frozen=True)
class Heading:
    """What a first look at a mail's header says, before its body is
    fetched: enough to tell a player's mail from a stranger's."""

    sender: str  # the From address, "" when there is none or it is unreadable
    recipients: tuple[str, ...]  # To and Cc
    tag: str | None  # the game tag in the subject
    #: It carries X-Referee-Mail: a mail a referee sent (its list copy, a
    #: reply forwarded back), which no player's mail client writes.
    referee_mail: bool = False


def read_heading(head: bytes) -> Heading:
    """The :class:`Heading` of a mail's header, or of some of its fields
    (From, To, Cc, Subject, X-Referee-Mail). Never raises: what cannot be
    read is left out, as :func:`parse_message` leaves it out or refuses the
    mail."""
    fields = headers.read_headers(HeaderParser(policy=policy.compat32).parsestr(
        head.decode("utf-8", "surrogateescape"), headersonly=True))
    try:
        _, sender = headers.sender(fields.get("from", []))
    except Unreadable:
        sender = ""
    return Heading(sender, headers.addresses([*fields.get("to", []), *fields.get("cc", [])]),
                   headers.find_tag(headers.subject(fields)), "x-referee-mail" in fields)


def recipients(msg: InboundMessage) -> frozenset[str]:
    """Every address on To and Cc."""
    return frozenset((*msg.to, *msg.cc))
