"""Read one inbound mail: RFC 5322 bytes -> :class:`InboundMessage`.

Says who sent it, whether a person or a machine did (auto-reply, bounce, our own
mail come back), and which lines the person typed as commands, leaving out
quotes, attributions, signatures and forwards. Pure functions: no I/O, no clock.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import email
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.headerregistry import Address
from email.message import Message
from email.parser import HeaderParser
from email.utils import getaddresses, parsedate_to_datetime
from enum import StrEnum
from html.parser import HTMLParser

from inscriptis import get_text
from inscriptis.model.config import ParserConfig

#: Values read from a mail are made safe here, at the edge, so that storing
#: or echoing them can never fail: one line, no control characters, capped.
MAX_SUBJECT = 1000
MAX_NAME = 200
#: An address longer than SMTP allows (RFC 5321 §4.5.3.1.3) is no address.
MAX_ADDRESS = 254
#: A message id longer than this, or not plain ASCII, is kept as a digest.
MAX_ID = 250
#: In-Reply-To and References ids kept (References: the most recent).
MAX_IDS = 20
#: The most of an address header (To, Cc, From...; all of one name
#: together) that is read, and of In-Reply-To and References: ids and
#: addresses past it are not looked at. Thousands of addresses.
MAX_LIST_HEADER = 64 * 1024
#: Authentication-Results headers kept, topmost first: the server's own is
#: on top, and parsing each costs a third of a millisecond.
MAX_AUTH_RESULTS = 50
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: The most of a Subject or display name that is decoded: enough for
#: ``MAX_SUBJECT`` characters in any encoding (Q of 4-byte UTF-8 is 12 a
#: character, and each encoded-word adds its charset and delimiters).
MAX_ENCODED = 24 * MAX_SUBJECT

#: The work one mail's body may cost, whatever its size. At most
#: ``commands.MAX_LINES`` (100) command lines are read, so what lies beyond
#: these bounds is never looked at: text of all parts together (characters),
#: HTML of all parts together converted to text (the conversion takes seconds a
#: megabyte), and lines examined for commands.
MAX_TEXT = 1024 * 1024
MAX_HTML = 256 * 1024
MAX_BODY_LINES = 20_000

#: MIME parts nested deeper than this make a mail unreadable (the value of
#: Postfix's mime_nesting_limit): the parts are read by recursion, which
#: must stay far from Python's limit wherever it is called.
MAX_MIME_DEPTH = 100

#: The local part every Message-ID the referee sends starts with (see
#: ``compose.Composer.message_id``: ``pbm.<outbox id>.<tag>@<domain>``).
OUR_MESSAGE_ID_PREFIX = "pbm."


class Unreadable(ValueError):
    """A mail the referee will not read, and why: its From is not one
    sender it can answer, or its parts are nested too deep."""


class Automation(StrEnum):
    """Who wrote a message: a person, or which kind of machine."""

    NONE = "none"
    AUTO_REPLY = "auto-reply"
    BOUNCE = "bounce"
    LOOP = "loop"  # our own mail come back


@dataclass(frozen=True)
class Bounce:
    """What a delivery status notification (RFC 3464) reports as failed.

    ``failed`` holds (address, what the server said) per recipient that
    failed for good (``Action: failed``); delays are not failures.
    ``message_ids`` are those of the returned message (or its headers).
    """

    failed: tuple[tuple[str, str], ...]
    message_ids: tuple[str, ...]


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
    if _nesting(msg) > MAX_MIME_DEPTH:
        raise Unreadable(f"MIME parts nested more than {MAX_MIME_DEPTH} deep")
    headers = _headers(msg)
    sender_name, sender = _sender(headers.get("from", []))
    body = _body_text(msg, _Budget()) or ""
    message_id = _first_id(_first(headers, "message-id"))
    subject = one_line(_decode_words((_first(headers, "subject") or "")[:MAX_ENCODED]))
    subject = subject[:MAX_SUBJECT]
    lines = _command_lines(body)
    automation = _automation(
        msg, headers, sender, subject, message_id, lines,
        referee_address=referee_address, list_address=list_address, our_domain=our_domain,
    )
    return InboundMessage(
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        to=_addresses(headers.get("to", [])),
        cc=_addresses(headers.get("cc", [])),
        subject=subject,
        in_reply_to=_ids((_first(headers, "in-reply-to") or "")[:MAX_LIST_HEADER])[:MAX_IDS],
        references=_ids(" ".join(headers.get("references", []))[-MAX_LIST_HEADER:])[-MAX_IDS:],
        list_id=_list_id(_first(headers, "list-id")),
        automation=automation,
        lines=lines,
        size=len(raw),
        tnef_only=not body.strip() and any(_tnef_parts(msg)),  # Outlook's winmail.dat
        date=_date(_first(headers, "date")),
        auth_results=tuple(headers.get("authentication-results", [])[:MAX_AUTH_RESULTS]),
        bounce=_bounce(msg) if automation is Automation.BOUNCE else None,
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
    headers = _headers(HeaderParser(policy=policy.compat32).parsestr(
        head.decode("utf-8", "surrogateescape"), headersonly=True))
    try:
        _, sender = _sender(headers.get("from", []))
    except Unreadable:
        sender = ""
    subject = one_line(_decode_words((_first(headers, "subject") or "")[:MAX_ENCODED]))
    return Heading(sender, _addresses([*headers.get("to", []), *headers.get("cc", [])]),
                   find_tag(subject[:MAX_SUBJECT]), "x-referee-mail" in headers)


def recipients(msg: InboundMessage) -> frozenset[str]:
    """Every address on To and Cc."""
    return frozenset((*msg.to, *msg.cc))


_TAG = re.compile(r"\[\s*([a-z][a-z0-9-]*-[0-9]+)\s*\]", re.IGNORECASE)


def find_tag(subject: str) -> str | None:
    """The game tag in a subject: ``"Re: [goofspiel-7] Round 2"`` -> ``"goofspiel-7"``."""
    m = _TAG.search(subject)
    return m.group(1).lower() if m else None


# -- headers -----------------------------------------------------------------

_Headers = Mapping[str, list[str]]


#: A byte the parser could not decode, kept as a lone surrogate.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _headers(msg: Message) -> dict[str, list[str]]:
    """Header values by lower-cased name, in order, unfolded, 8-bit bytes decoded.

    RFC 2047 encoded-words are left in place: addresses must be split first.
    """
    out: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        text = re.sub(r"[\r\n]", "", str(value)).strip()
        if _ESCAPED_BYTE.search(text):  # raw 8-bit header (RFC 6532)
            text = _decode_bytes(text.encode("utf-8", "surrogateescape"), None)
        out.setdefault(name.lower(), []).append(text)
    return out


def _first(headers: _Headers, name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def one_line(text: str) -> str:
    """``text`` with every run of control characters (CR, LF, VT, FF, FS,
    NUL, C1, line separators) made one space, and trimmed."""
    return _CONTROL.sub(" ", text).strip()


def _parsed_addresses(values: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(decoded display name, lower-cased address) for each address with an
    ``@``; an address with spaces or control characters, or over SMTP's
    length, is skipped. Past :data:`MAX_LIST_HEADER` nothing is read (the
    list is cut at the comma before it)."""
    text = ", ".join(values)
    if len(text) > MAX_LIST_HEADER:
        text = text[:MAX_LIST_HEADER].rpartition(",")[0]
    for name, addr in getaddresses([text]):
        addr = addr.strip().lower()
        if "@" in addr and len(addr) <= MAX_ADDRESS and not re.search(r"[\s\x00-\x1f\x7f]", addr):
            yield one_line(_decode_words(name[:MAX_ENCODED]))[:MAX_NAME], addr


def _first_address(values: Sequence[str]) -> tuple[str, str]:
    return next(_parsed_addresses(values), ("", ""))


def _sender(values: Sequence[str]) -> tuple[str, str]:
    """(display name, address) of the one mailbox of the From header; ("", "")
    when it names no address ("<>", a bare "MAILER-DAEMON": a bounce is
    still read as one) or one SMTP cannot take (see :func:`_parsed_addresses`).

    Only the one mailbox counts: an address inside a quoted name, a
    comment or a group is never the sender. ``getaddresses`` reads
    ``Mallory: victim@example.org; <mallory@evil.test>`` as the group
    "Mallory" holding victim@example.org, then another address.

    :raises Unreadable: there are several From headers, or the From is a
        group, names more than one address, or one no mail can be sent to.
    """
    given = [v for v in values if v.strip()]
    if not given:
        return "", ""
    if len(given) > 1:
        raise Unreadable(f"{len(given)} From headers, not one sender")
    text = given[0]
    if len(text) > MAX_LIST_HEADER:
        raise Unreadable("a From header too long to read")
    if re.search(r"[:;]", _outside_quotes(text)):
        raise Unreadable("the From is a group of addresses, not one sender")
    found = [addr for _, addr in getaddresses([text]) if "@" in addr]
    if len(found) > 1:
        raise Unreadable(f"the From names {len(found)} addresses, not one sender")
    name, address = _first_address([text])
    if address and not _writable(address):
        raise Unreadable("the From address is one no mail can be sent to")
    return name, address


def _outside_quotes(text: str) -> str:
    """``text`` without its quoted strings, comments, domain literals and what
    is between ``<`` and ``>``: what is left of an address header is its
    structure (names, commas, a group's colon and semicolon)."""
    out: list[str] = []
    quoted = escaped = False
    comment = angle = 0
    literal = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\" and (quoted or comment or literal):
            escaped = True
        elif quoted:
            quoted = c != '"'
        elif comment:
            comment += {"(": 1, ")": -1}.get(c, 0)
        elif literal:
            literal = c != "]"
        elif c == '"':
            quoted = True
        elif c == "(":
            comment = 1
        elif c == "[":
            literal = True
        elif c == "<":
            angle += 1
        elif c == ">" and angle:
            angle -= 1
        elif not angle:
            out.append(c)
    return "".join(out)


def _writable(address: str) -> bool:
    """Whether a mail can be addressed to ``address``: Python's email, which
    writes the referee's mail, cannot write a local part outside ASCII
    (RFC 6532), nor one that is no dot-atom ("a..b")."""
    try:
        Address(addr_spec=address)
    except Exception:  # the stdlib raises defects, parse errors, even AttributeError
        return False
    return True


def _nesting(msg: Message) -> int:
    """How deep the parts of ``msg`` are nested, counted without recursion
    and only as far as :data:`MAX_MIME_DEPTH` and one more."""
    deepest, todo = 0, [(msg, 0)]
    while todo and deepest <= MAX_MIME_DEPTH:
        part, depth = todo.pop()
        deepest = max(deepest, depth)
        todo += [(child, depth + 1) for child in _children(part)]
    return deepest


def _addresses(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(addr for _, addr in _parsed_addresses(values)))


_MSG_ID = re.compile(r"<([^<>\s]+)>")


def _ids(value: str | None) -> tuple[str, ...]:
    """The message ids in In-Reply-To or References; comments and phrases skipped."""
    return tuple(safe_id(i) for i in _MSG_ID.findall(value or ""))


def _first_id(value: str | None) -> str | None:
    """A Message-ID without its brackets; a bare ``id@host`` is accepted too."""
    ids = _ids(value)
    if ids:
        return ids[0]
    bare = (value or "").strip()
    return safe_id(bare) if bare and not re.search(r"[\s<>]", bare) else None


def safe_id(value: str) -> str:
    """A message id as stored and echoed: itself when it is printable ASCII
    of a sane length, else a digest of it in id form, the same for the same
    id, so duplicates are still recognised and nothing unsafe travels on."""
    if len(value) <= MAX_ID and re.fullmatch(r"[\x21-\x7e]+", value):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return f"{digest}@digest.invalid"


def _list_id(value: str | None) -> str | None:
    """The id part of a List-Id (RFC 2919): ``Players <players.example.test>``."""
    if value is None:
        return None
    m = re.search(r"<([^<>]+)>", value)
    found = m.group(1).strip() if m else value.strip()
    ok = found and len(found) <= MAX_ID and not re.search(r"[\s\x00-\x1f\x7f]", found)
    return found.lower() if ok else None


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)  # "-0000": UTC, zone unknown


_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=")


def _decode_words(text: str) -> str:
    """Decode RFC 2047 encoded-words, tolerantly.

    Whitespace between adjacent encoded-words is dropped (RFC 2047 §6.2), and
    adjacent words in one charset are decoded together, since some mailers
    split a multi-byte character across two words. A malformed word stays as
    it was typed.
    """
    out: list[str] = []
    charset, run = "", bytearray()  # a bytearray grows in place: linear, not quadratic
    pos, after_word = 0, False
    for m in _ENCODED_WORD.finditer(text):
        data = _word_bytes(m.group(2), m.group(3))
        if data is None:
            continue  # left in place: it becomes part of the next gap
        gap = text[pos : m.start()]
        word_charset = m.group(1).split("*")[0].lower()  # RFC 2231 may add "*language"
        if gap.strip() or not after_word or word_charset != charset:
            out.append(_decode_bytes(bytes(run), charset) if run else "")
            out.append("" if after_word and not gap.strip() else gap)
            charset, run = word_charset, bytearray()
        run += data
        pos, after_word = m.end(), True
    out.append(_decode_bytes(bytes(run), charset) if run else "")
    out.append(text[pos:])
    return "".join(out)


def _word_bytes(encoding: str, payload: str) -> bytes | None:
    try:
        if encoding in "qQ":
            return binascii.a2b_qp(payload.encode("utf-8"), header=True)
        return base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return None


# WHATWG practice: mail labelled Latin-1 is in practice Windows-1252,
# and GB2312 mail is GBK/GB18030.
_CHARSET_ALIASES = {"iso8859-1": "cp1252", "gb2312": "gb18030", "gbk": "gb18030"}
# Python's own codecs, which no mailer sends: unicode_escape would turn a
# typed backslash and "n" into a line break, and warns on other backslashes.
_NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "punycode", "idna", "charmap"})


def _decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset, then UTF-8, Windows-1252, Latin-1 (MAIL.md)."""
    candidates = [charset] if charset else []
    for name in [*candidates, "utf-8", "cp1252"]:
        try:
            codec = codecs.lookup(name.strip().strip('"')).name
            if codec in _NOT_CHARSETS:
                continue
            text = data.decode(_CHARSET_ALIASES.get(codec, codec))
            text.encode("utf-8")  # UTF-7 can decode to lone surrogates
        except (LookupError, UnicodeError, ValueError):
            continue
        return text.lstrip("\ufeff")
    return data.decode("latin-1", errors="replace").lstrip("\ufeff")


# -- classification ------------------------------------------------------------

_BOUNCE_LOCALS = frozenset({"mailer-daemon", "mailerdaemon", "postmaster"})
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "auto_reply", "auto-reply"})

# Out-of-office subjects, at the very start. "Vacation" only as a whole
# subject or label ("Vacation: ...", "Vacation reply"): "Vacation next week,
# bid 5 for me" is a person writing.
_OOO_SUBJECT = re.compile(
    r"^\[?\s*(?:"
    r"out of (?:the )?office|automatic reply|automatic response|auto[- ]?reply"
    r"|auto[- ]?response|abwesenheitsnotiz|automatische antwort|réponse automatique"
    r"|respuesta automática|risposta automatica|automatisch antwoord|resposta automática"
    r"|autosvar|automaattinen vastaus|automatyczna odpowiedź|автоответ|自动回复|自動応答"
    r"|vacation(?:\s*(?:auto)?(?:reply|response|message|notice))?\s*(?::|$)"
    # Outlook's and Lotus Notes' short label; vacation(1)'s subjects.
    r"|auto(?=\s*:)|away from (?:my )?(?:e-?)?mail|(?:i am|i['’]m) on vacation"
    r")(?!\w)",
    re.IGNORECASE,
)
# The first line of out-of-office bodies: vacation(1)'s ("I will not be
# reading my mail for a while. Your mail concerning "..." will be read when
# I'm back.") and those that say what they are. Never a person's "I am away
# till Monday, bid 5": only a program says it is automatic, or that it is
# "currently out of the office".
_OOO_BODY = re.compile(
    r"^(?:i will not be reading my (?:e-?)?mail for a while"
    r"|your (?:e-?)?mail concerning .* will be read when i(?:['’]| a)m back"
    r"|this is an? (?:automatic|automated|auto-?generated)(?: \w+)?"
    r" (?:reply|response|message|notice)"
    r"|(?:i am|i['’]m) currently out of (?:the )?office"
    r"|thank you for your (?:e-?)?mail\. i am (?:currently )?out of (?:the )?office"
    r")(?!\w)",
    re.IGNORECASE,
)
#: Headers only auto-responders write (arp242.net/autoreply.html), and
#: Feedback-ID, which only bulk senders do.
_AUTO_HEADERS = ("x-autorespond", "x-autogenerated", "x-mail-autoreply", "x-vacation",
                 "delivered-by-the-graces-of", "feedback-id")
#: A salutation ("Hello,", "Dear sender,"): :data:`_OOO_BODY` looks at the
#: line after it, else at the first line alone.
_SALUTATION = re.compile(r"^[^,.:;!?]{1,40},$")
# Subjects of Outlook receipts and meeting responses; a person may write them
# too, so they count only together with X-Auto-Response-Suppress.
_RECEIPT_SUBJECT = re.compile(
    r"^(?:read|not read|delivered|undeliverable|recall|accepted|declined|tentative)\s*:",
    re.IGNORECASE,
)


def _automation(
    msg: Message,
    headers: _Headers,
    sender: str,
    subject: str,
    message_id: str | None,
    lines: Sequence[str],
    *,
    referee_address: str,
    list_address: str | None,
    our_domain: str | None,
) -> Automation:
    """Who wrote the message (MAIL.md "Inbound classification").

    Our own echo wins over a bounce, a bounce over an auto-reply: our reports
    carry Auto-Submitted and Precedence themselves.
    """
    if _is_loop(headers, sender, message_id, referee_address, list_address, our_domain):
        return Automation.LOOP
    if _is_bounce(msg, headers, sender):
        return Automation.BOUNCE
    if _is_auto_reply(msg, headers, subject, lines):
        return Automation.AUTO_REPLY
    return Automation.NONE


def _mailbox(address: str) -> str:
    """An address without its ``+detail``: ``referee+x@host`` -> ``referee@host``."""
    local, _, domain = address.strip().lower().rpartition("@")
    return f"{local.split('+')[0]}@{domain}"


def _is_loop(
    headers: _Headers,
    sender: str,
    message_id: str | None,
    referee_address: str,
    list_address: str | None,
    our_domain: str | None,
) -> bool:
    """Our own mail come back (RT, debbugs, Mailman, Discourse).

    A Message-ID counts only in the shape we send: players may share our
    domain, and their clients name Message-IDs after it. ``List-Post`` naming
    our list is no sign by itself (every public move carries it); the list
    counts only when it rewrote From to itself and the original author it
    kept (X-Original-From, X-Original-Sender, Reply-To) is the referee.
    """
    me = _mailbox(referee_address)
    if sender and _mailbox(sender) == me:
        return True
    if any(_mailbox(a) == me for _, a in _parsed_addresses(headers.get("x-loop", []))):
        return True
    if message_id and our_domain:
        local, _, domain = message_id.lower().rpartition("@")
        if local.startswith(OUR_MESSAGE_ID_PREFIX) and domain == our_domain.lower():
            return True
    if list_address and sender == list_address.lower():
        for name in ("x-original-from", "x-original-sender", "reply-to"):
            _, author = _first_address(headers.get(name, []))
            if author:
                return _mailbox(author) == me
    return False


def _is_bounce(msg: Message, headers: _Headers, sender: str) -> bool:
    """A delivery report: null envelope sender, RFC 3464 report, or a mailer daemon."""
    return_path = _first(headers, "return-path")
    if return_path is not None:
        if return_path.strip() in ("<>", ""):
            return True
        _, rp = _first_address([return_path])
        if (rp or return_path.strip("<> ")).lower().partition("@")[0] in _BOUNCE_LOCALS:
            return True
    if msg.get_content_type() == "multipart/report":
        report_type = msg.get_param("report-type")
        if isinstance(report_type, str) and report_type.lower() == "delivery-status":
            return True
    return sender.partition("@")[0] in _BOUNCE_LOCALS


def _bounce(msg: Message) -> Bounce:
    """The failed recipients and returned Message-IDs of a delivery report.

    Fields are read through :func:`_headers`: a reporting MTA may copy 8-bit
    bytes into them, which ``Message.get`` would hand back as a ``Header``.
    """
    failed: list[tuple[str, str]] = []
    ids: list[str] = []
    for part in msg.walk():
        kind = part.get_content_type()
        if kind in ("message/delivery-status", "message/global-delivery-status"):
            for block in map(_headers, _children(part)):
                action = (_first(block, "action") or "").lower()
                # The address as we sent to it: Original-Recipient when an
                # alias or forward changed it on the way (RFC 3464 §2.3.1).
                recipient = (_first(block, "original-recipient") or _first(block, "final-recipient")
                             or "").partition(";")[2].strip()
                if action == "failed" and "@" in recipient:
                    said = " ".join(x for x in (
                        _first(block, "status") or "",
                        (_first(block, "diagnostic-code") or "").partition(";")[2].strip(),
                    ) if x)
                    failed.append((recipient.strip("<>").lower(), re.sub(r"\s+", " ", said)))
        elif kind in ("message/rfc822", "message/global"):
            for returned in _children(part):
                ids += _ids(_first(_headers(returned), "message-id"))
        elif kind == "text/rfc822-headers":
            headers = _headers(HeaderParser(policy=policy.compat32).parsestr(_decoded(part)))
            ids += _ids(_first(headers, "message-id"))
    return Bounce(tuple(dict.fromkeys(failed)), tuple(dict.fromkeys(ids)))


def _is_auto_reply(msg: Message, headers: _Headers, subject: str,
                   lines: Sequence[str]) -> bool:
    """An auto-reply, a receipt or bulk mail, never a person (RFC 3834 and
    practice): the one place that says so, for every check that asks.

    ``Precedence: list`` is automation only on mail that came through no
    list (no ``List-Id``): public moves arrive through the game's list,
    and mail from another list is the chain's to drop.
    ``X-Auto-Response-Suppress`` asks *us* not to auto-answer
    and Outlook stamps it on some mail people write, so it counts only with an
    Outlook receipt or meeting-response subject.
    """
    for value in headers.get("auto-submitted", []):
        if _token(value) != "no":
            return True
    if any(_token(v) not in ("", "no") for v in headers.get("x-autoreply", [])):
        return True
    if any(name in headers for name in _AUTO_HEADERS):
        return True
    precedence = {_token(v) for v in (*headers.get("precedence", []),
                                      *headers.get("x-precedence", []))}
    if precedence & _BULK_PRECEDENCE or ("list" in precedence and "list-id" not in headers):
        return True
    if msg.get_content_type() == "multipart/report":  # read receipts (RFC 8098), ARF
        return True
    if _OOO_SUBJECT.search(subject):
        return True
    first = 1 if lines and _SALUTATION.match(lines[0]) else 0
    if len(lines) > first and _OOO_BODY.match(lines[first]):
        return True
    suppress = {
        t.strip().lower() for v in headers.get("x-auto-response-suppress", []) for t in v.split(",")
    }
    return bool(suppress & {"all", "dr", "autoreply"}) and bool(_RECEIPT_SUBJECT.search(subject))


def _token(value: str) -> str:
    """The first word of a structured header: ``auto-replied; x=y (comment)``."""
    return re.split(r"[\s;(]", value.strip(), maxsplit=1)[0].lower()


# -- body ----------------------------------------------------------------------

_TNEF_TYPES = frozenset({"application/ms-tnef", "application/vnd.ms-tnef"})


def _children(part: Message) -> list[Message]:
    if not part.is_multipart():  # a multipart without its boundary is one text blob
        return []
    payload = part.get_payload()
    return [p for p in payload if isinstance(p, Message)] if isinstance(payload, list) else []


class _Budget:
    """What is left of one mail's :data:`MAX_TEXT` and :data:`MAX_HTML`:
    each part read takes its share, and a part past the budget reads as
    only what is left (often nothing)."""

    def __init__(self) -> None:
        self.text, self.html = MAX_TEXT, MAX_HTML

    def take_text(self, text: str) -> str:
        text = text[:self.text]
        self.text -= len(text)
        return text

    def take_html(self, html: str) -> str:
        html = html[:self.html]
        self.html -= len(html)
        return html


def _body_text(part: Message, budget: _Budget) -> str | None:
    """What the author wrote in ``part``, or None where it holds nothing we read.

    Attachments and ``message/*`` parts (forwards, reports) are never read.
    """
    if part.get_content_disposition() == "attachment":
        return None
    ctype = part.get_content_type()
    maintype = part.get_content_maintype()
    if ctype == "text/plain":
        return _plain_text(part, budget)
    if ctype == "text/html":
        return _html_text(budget.take_html(_decoded(part)))
    if maintype != "multipart" or ctype == "multipart/encrypted":
        return None
    children = _children(part)
    if ctype == "multipart/signed":  # PGP/MIME, S/MIME: the first part is the signed one
        return _body_text(children[0], budget) if children else None
    if ctype == "multipart/alternative":
        readable = [(c.get_content_type(), t) for c in children
                    if (t := _body_text(c, budget))]
        found = [(kind, text) for kind, text in readable if text.strip()]
        plain = [text for kind, text in found if kind == "text/plain"]
        return plain[0] if plain else (found[0][1] if found else None)
    texts = [text for c in children if (text := _body_text(c, budget)) is not None]
    return "\n".join(texts) if texts else None


def _decoded(part: Message) -> str:
    """A text part's content: transfer encoding undone, charset decoded, LF line ends."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    text = _decode_bytes(payload, part.get_content_charset())
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _plain_text(part: Message, budget: _Budget) -> str:
    text = budget.take_text(_decoded(part))
    fmt = part.get_param("format")
    if isinstance(fmt, str) and fmt.lower() == "flowed":
        delsp = part.get_param("delsp")
        return _unflow(text, delsp=isinstance(delsp, str) and delsp.lower() == "yes")
    return text


def _unflow(text: str, *, delsp: bool) -> str:
    """Join the soft line breaks of ``format=flowed`` text (RFC 3676 §4)."""
    out: list[str] = []
    para: list[str] = []  # the paragraph's pieces, joined once: linear time
    para_depth = 0

    def flush() -> None:
        if para:
            out.append(">" * para_depth + "".join(para))
            para.clear()

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):  # space-stuffing (§4.4)
            content = content[1:]
        soft = content.endswith(" ") and content != "-- "
        if depth != para_depth or content == "-- ":
            flush()
        if soft and delsp:
            content = content[:-1]
        para.append(content)
        para_depth = depth
        if not soft:
            flush()
    flush()
    return "\n".join(out)


def _tnef_parts(part: Message) -> Iterator[Message]:
    filename = part.get_filename() or ""
    if part.get_content_type() in _TNEF_TYPES or filename.lower() == "winmail.dat":
        yield part
    if part.get_content_maintype() == "multipart":
        for child in _children(part):
            yield from _tnef_parts(child)


# -- HTML ----------------------------------------------------------------------

# Elements that hold quoted mail, signatures or forwards (Gmail, Thunderbird,
# Yahoo, Proton, Apple, Outlook mobile): dropped with their content.
_DROP_CLASSES = frozenset({
    "gmail_quote", "gmail_attr", "gmail_signature", "gmail_quote_container",
    "moz-cite-prefix", "moz-signature", "moz-forward-container",
    "yahoo_quoted", "protonmail_quote", "protonmail_signature_block",
})
_DROP_IDS = frozenset({"ms-outlook-mobile-signature", "signature"})
# Outlook's markers where the quoted original starts: everything after them
# is the original (OWA, new Outlook, Hotmail).
_CUT_IDS = frozenset({
    "appendonsend", "divrplyfwdmsg", "x_divrplyfwdmsg", "stopspelling",
    "mail-editor-reference-message-container",
})
# Outlook desktop and Outlook for Mac put the quoted header block in a div
# styled "border:none;border-top:solid #E1E1E1 1.0pt": the original starts
# there, whatever the language of the block's labels.
_CUT_STYLE = re.compile(r"border\s*:\s*none\s*;\s*border-top\s*:\s*solid", re.IGNORECASE)
_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
    "param", "source", "track", "wbr",
})

#: A list's items are lines as typed: no bullet or number is put before them.
_LISTS = frozenset({"ul", "ol", "li", "dl", "dt", "dd"})


class _QuoteStripper(HTMLParser):
    """Re-emits HTML without quotes, signatures and Outlook's quoted tail."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._stopped = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._stopped:
            return
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        found = dict(attrs)
        classes = set((found.get("class") or "").split())
        ident = (found.get("id") or "").lower()
        if ident in _CUT_IDS or (tag == "div" and _CUT_STYLE.search(found.get("style") or "")):
            self._stopped = True
        elif tag == "blockquote" or classes & _DROP_CLASSES or ident in _DROP_IDS:
            if tag not in _VOID:
                self._skip_tag, self._skip_depth = tag, 1
        elif tag == "hr":
            self.out.append("<br>")
        elif tag in _LISTS:
            self.out.append("<div>")
        else:
            self.out.append(self.get_starttag_text() or "")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self.handle_starttag(tag, attrs)
        elif not self._stopped and self._skip_tag is None:
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._stopped:
            return
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth == 0:
                    self._skip_tag = None
            return
        if tag in ("td", "th"):  # a table's cells are read as one line, a space apart
            self.out.append(" ")
        self.out.append("</div>" if tag in _LISTS else f"</{tag}>")
        if tag == "tr":
            self.out.append("<br>")

    def _emit(self, text: str) -> None:
        if not self._stopped and self._skip_tag is None:
            self.out.append(text)

    def handle_data(self, data: str) -> None:
        self._emit(data)

    def handle_entityref(self, name: str) -> None:
        self._emit(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._emit(f"&#{name};")


#: Text as a reader sees it, tables as lines (the stripper ends each row).
_LAYOUT = ParserConfig(display_links=False, display_images=False, table_cell_separator=" ")


def _html_text(html: str) -> str:
    """HTML mail as plain text, without its quoted part (TAL, Discourse extractors).

    The caller caps ``html`` (:data:`MAX_HTML`): the conversion costs seconds
    a megabyte.
    """
    stripper = _QuoteStripper()
    stripper.feed(html)
    stripper.close()
    text: str = get_text("".join(stripper.out), _LAYOUT)
    return text


# -- command lines ---------------------------------------------------------------

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))

# "On Mon, 3 Jun 2024 at 10:00, Referee <x@y> wrote:" and its translations;
# a date or an address must be in it, so "On reflection I wrote:" is prose.
# German, Dutch and Scandinavian put the author after the verb. Read in two
# steps (verb, then what comes before it) rather than one regex, whose nested
# ".*" took seconds per crafted line.
_WROTE_LAST = re.compile(
    r"\s(?:wrote|a écrit|escribió|ha scritto|escreveu|napisał|написал|het volgende geschreven)"
    r"\s*:$",
    re.IGNORECASE,
)
_WROTE_BEFORE_AUTHOR = re.compile(r"\s(?:schrieb|schreef|skrev)\b", re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"(?:on|le|am|el|il|op|em|den|w dniu)\s", re.IGNORECASE)
_ATTRIBUTION_MAX = 400  # characters; a longer line is prose
_CUT_MARKERS = re.compile(
    r"^(?:-{2,}\s*(?:original message|ursprüngliche nachricht|message d'origine"
    r"|mensaje original|messaggio originale|oorspronkelijk bericht"
    r"|forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado"
    r"|messaggio inoltrato|doorgestuurd bericht)\s*-{2,}"
    r"|begin forwarded message:|anfang der weitergeleiteten nachricht:"
    r"|début du message réexpédié\s?:"
    r"|_{20,}"  # Outlook's separator line, and a mailing list's footer
    r")$",
    re.IGNORECASE,
)
_MOBILE_SIGNATURE = re.compile(
    r"^(?:sent from my \S.*|sent from (?:outlook|yahoo mail|mail for windows|proton mail)\b.*"
    r"|sent with proton mail\b.*|get outlook for \S.*|von meinem \S.* gesendet"
    r"|envoyé de mon \S.*|enviado desde mi \S.*|enviado do meu \S.*|inviato da(?:l mio)? \S.*"
    r"|(?:verzonden|verstuurd) (?:met|vanaf) (?:mijn )?\S.*|skickat från min \S.*"
    r"|obtenir outlook pour \S.*|obtener outlook para \S.*"
    r"|outlook (?:für|voor) (?:android|ios)\b.*(?:herunterladen|downloaden))$",
    re.IGNORECASE,
)
# Outlook's plain header block: "From: ..." then "Sent: ..." or "Date: ...",
# each on its line, or run onto one line by a client that rewrapped it.
_FROM_LABEL = r"(?:from|von|de|da|van|från|fra|od)\s?:"
_WHEN_LABEL = (
    r"(?:sent|date|gesendet|datum|envoyé|enviado|fecha|inviato|data|verzonden|skickat|sendt)\s?:"
)
_SUBJECT_LABEL = r"(?:subject|betreff|objet|asunto|oggetto|onderwerp|ämne|emne|assunto)\s?:"
_HEADER_FROM = re.compile(rf"^{_FROM_LABEL}\s*\S", re.IGNORECASE)
_HEADER_WHEN = re.compile(rf"^{_WHEN_LABEL}", re.IGNORECASE)
_HEADER_RUN_ON = re.compile(
    rf"^{_FROM_LABEL}\s*\S.*?\s{_WHEN_LABEL}.*?\s{_SUBJECT_LABEL}", re.IGNORECASE
)


def _clean(line: str) -> str:
    return line.translate(_INVISIBLE).replace("\xa0", " ").strip()


def _command_lines(text: str) -> tuple[str, ...]:
    """The lines a person typed, without quotes, attributions, signatures and forwards.

    Reading stops at a signature separator, a mobile signature, a forward or
    "Original Message" marker, Outlook's header block and separator line, a
    list footer's line of underscores, or after :data:`MAX_BODY_LINES` lines.

    A quote introduced by ``On ... wrote:`` and marked with ``>`` is skipped
    rather than cut, so bottom-posted and interleaved answers (Thunderbird's
    default) keep their commands; an attribution followed by unmarked text
    ends the reply, as everything below it is the original.
    """
    # Only the first MAX_BODY_LINES lines are looked at: split no further.
    head = text.split("\n", MAX_BODY_LINES)[:MAX_BODY_LINES]
    lines = _clearsigned([_clean(line) for line in head])
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line or line.startswith(">"):
            i += 1
            continue
        if line == "--" or _CUT_MARKERS.match(line) or _MOBILE_SIGNATURE.match(line):
            break
        if _HEADER_FROM.match(line) and (
            any(_HEADER_WHEN.match(n) for n in lines[i + 1 : i + 5])
            or _HEADER_RUN_ON.match(line[:_ATTRIBUTION_MAX])
        ):
            break
        span = _attribution_span(lines, i)
        if span:
            if not _next_text(lines, i + span).startswith(">"):
                break
            i += span
            continue
        kept.append(line)
        i += 1
    return tuple(kept)


def _attribution_span(lines: Sequence[str], i: int) -> int:
    """How many lines (1 to 3) an attribution starting at ``i`` spans, or 0.

    An attribution without a date or an address counts only above a quote.
    """
    joined = ""
    for k in range(i, min(i + 3, len(lines))):
        if not lines[k] or lines[k].startswith(">"):
            break
        joined = f"{joined} {lines[k]}".strip()
        if len(joined) > _ATTRIBUTION_MAX:  # also bounds the regex's backtracking
            break
        if joined.endswith(":") and _is_attribution(joined, _next_text(lines, k + 1)):
            return k - i + 1
    return 0


def _is_attribution(text: str, below: str) -> bool:
    """Whether ``text``, ending in ":", says who wrote what follows (``below``).

    Without a date or an address ("Goofspiel Referee wrote:") only when a
    quote follows.
    """
    verb = _WROTE_LAST.search(text) or _WROTE_BEFORE_AUTHOR.search(text)
    if verb is None or not verb.start():
        return False
    head = text[: verb.start()]
    start = _ATTRIBUTION_START.match(head)
    if "@" in head or (start and any(c.isdigit() for c in head[start.end() :])):
        return True
    return below.startswith(">")


def _next_text(lines: Sequence[str], start: int) -> str:
    """The first non-empty line from ``start`` on, or ""."""
    return next((lines[k] for k in range(start, len(lines)) if lines[k]), "")


def _clearsigned(lines: list[str]) -> list[str]:
    """The signed text of an inline PGP message (RFC 4880 §7), or ``lines`` as they are."""
    try:
        start = lines.index("-----BEGIN PGP SIGNED MESSAGE-----")
    except ValueError:
        return lines
    body = start + 1
    while body < len(lines) and lines[body]:  # armor headers ("Hash: SHA256")
        body += 1
    end = next(
        (k for k in range(body, len(lines)) if lines[k] == "-----BEGIN PGP SIGNATURE-----"),
        len(lines),
    )
    return [line[2:] if line.startswith("- ") else line for line in lines[body:end]]
