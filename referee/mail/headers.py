"""A mail's header fields and the addresses, ids and dates in them, read
tolerantly and made safe at the edge: one line, no control characters,
capped. Which one mailbox sent it (:func:`sender`), whom it is to, what it
replies to, its subject and the game tag in it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime
from functools import lru_cache

from referee.mail.charset import decode_bytes, decode_words

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


class Unreadable(ValueError):
    """A mail the referee will not read, and why: its From is not one
    sender it can answer, or its parts are nested too deep."""


#: An address the header registry surely takes (as ``plain`` writes them):
#: a dot-atom local part at a domain of plain labels, in ASCII.
_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*"
                       r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")

_TAG = re.compile(r"\[\s*([a-z][a-z0-9-]*-[0-9]+)\s*\]", re.IGNORECASE)


def find_tag(subject: str) -> str | None:
    """The game tag in a subject: ``"Re: [goofspiel-7] Round 2"`` -> ``"goofspiel-7"``."""
    m = _TAG.search(subject)
    return m.group(1).lower() if m else None


#: Header values by lower-cased name, in order (see :func:`read_headers`).
Headers = Mapping[str, list[str]]


#: What no address we read holds: spaces, control characters.
_NOT_IN_ADDRESS = re.compile(r"[\s\x00-\x1f\x7f]")
#: A byte the parser could not decode, kept as a lone surrogate.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def read_headers(msg: Message) -> dict[str, list[str]]:
    """Header values by lower-cased name, in order, unfolded, 8-bit bytes decoded.

    RFC 2047 encoded-words are left in place: addresses must be split first.
    """
    out: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        text = str(value).replace("\r", "").replace("\n", "").strip()
        if _ESCAPED_BYTE.search(text):  # raw 8-bit header (RFC 6532)
            text = decode_bytes(text.encode("utf-8", "surrogateescape"), None)
        out.setdefault(name.lower(), []).append(text)
    return out


def first(headers: Headers, name: str) -> str | None:
    """The first value of the header ``name``, or None when there is none."""
    values = headers.get(name)
    return values[0] if values else None


def subject(headers: Headers) -> str:
    """The Subject, encoded-words decoded, made one line and capped."""
    text = one_line(decode_words((first(headers, "subject") or "")[:MAX_ENCODED]))
    return text[:MAX_SUBJECT]


def one_line(text: str) -> str:
    """``text`` with every run of control characters (CR, LF, VT, FF, FS,
    NUL, C1, line separators) made one space, and trimmed."""
    return _CONTROL.sub(" ", text).strip()


def parsed_addresses(values: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(decoded display name, lower-cased address) for each address with an
    ``@``; an address with spaces or control characters, or over SMTP's
    length, is skipped. Past :data:`MAX_LIST_HEADER` nothing is read (the
    list is cut at the comma before it)."""
    text = ", ".join(values)
    if len(text) > MAX_LIST_HEADER:
        text = text[:MAX_LIST_HEADER].rpartition(",")[0]
    return _readable(_pairs(text))


@lru_cache(maxsize=4096)
def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``getaddresses`` of one header's text, kept: the same From and To
    come back in mail after mail (a player's, the referee's), and reading
    them is the slow part of reading a heading."""
    return tuple(getaddresses([text]))


def _readable(pairs: Sequence[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """:func:`parsed_addresses` of the pairs ``getaddresses`` read."""
    for name, addr in pairs:
        addr = addr.strip().lower()
        if "@" in addr and len(addr) <= MAX_ADDRESS and not _NOT_IN_ADDRESS.search(addr):
            yield one_line(decode_words(name[:MAX_ENCODED]))[:MAX_NAME], addr


def first_address(values: Sequence[str]) -> tuple[str, str]:
    """The first of :func:`parsed_addresses`, or ("", "")."""
    return next(parsed_addresses(values), ("", ""))


def sender(values: Sequence[str]) -> tuple[str, str]:
    """(display name, address) of the one mailbox of the From header; ("", "")
    when it names no address ("<>", a bare "MAILER-DAEMON": a bounce is
    still read as one) or one SMTP cannot take (see :func:`parsed_addresses`).

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
    pairs = _pairs(text)  # the slow part of reading a From
    found = [addr for _, addr in pairs if "@" in addr]
    if len(found) > 1:
        raise Unreadable(f"the From names {len(found)} addresses, not one sender")
    name, address = next(_readable(pairs), ("", ""))  # first_address([text])
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
    if _DOT_ATOM.fullmatch(address):
        return True  # what the registry takes, without building it
    try:
        Address(addr_spec=address)
    except Exception:  # the stdlib raises defects, parse errors, even AttributeError
        return False
    return True


def addresses(values: Sequence[str]) -> tuple[str, ...]:
    """Each address of :func:`parsed_addresses` once, in order."""
    return tuple(dict.fromkeys(addr for _, addr in parsed_addresses(values)))


_MSG_ID = re.compile(r"<([^<>\s]+)>")


def ids(value: str | None) -> tuple[str, ...]:
    """The message ids in In-Reply-To or References; comments and phrases skipped."""
    return tuple(safe_id(i) for i in _MSG_ID.findall(value or ""))


def first_id(value: str | None) -> str | None:
    """A Message-ID without its brackets; a bare ``id@host`` is accepted too."""
    found = ids(value)
    if found:
        return found[0]
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


def list_id(value: str | None) -> str | None:
    """The id part of a List-Id (RFC 2919): ``Players <players.example.test>``."""
    if value is None:
        return None
    m = re.search(r"<([^<>]+)>", value)
    found = m.group(1).strip() if m else value.strip()
    ok = found and len(found) <= MAX_ID and not re.search(r"[\s\x00-\x1f\x7f]", found)
    return found.lower() if ok else None


def date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)  # "-0000": UTC, zone unknown

