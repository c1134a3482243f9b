"""Plain mail written directly: the text ``EmailMessage`` would flatten to
(``as_bytes``, as it goes out by SMTP), at a fraction of the cost of building
and flattening it, for every text mail the referee writes.

Headers of short plain ASCII are written as they are; any other header (a
non-ASCII or quoted display name, a long line to fold) is folded by the
``email`` package's header registry, one header at a time, so its RFC 2047
encoded-words are the package's own. The body is UTF-8 text: 7bit or 8bit
when every line fits, quoted-printable when a line is too long (never
base64, which a reader cannot read in the raw mail). ``tests/mail/test_plain.py``
holds the two ways to the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.headerregistry import Address
from email.policy import SMTP
from email.quoprimime import body_encode

#: A display name that needs no quoting: atoms (RFC 5322 atext) and single spaces.
_ATOMS = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?: [A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*")
#: An address written as it is: a dot-atom local part (no dot first, last
#: or twice) at a domain of plain labels.
_ADDRESS = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*"
                      r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
#: The line length under which the ``email`` package writes a header as it is
#: and a body in 7bit or 8bit (``policy.SMTP.max_line_length``).
WIDTH = 78


def address(name: str, addr: str) -> str | None:
    """``Name <addr>`` (or ``addr``) as the header registry writes it, or None."""
    if not _ADDRESS.fullmatch(addr):
        return None
    if not name:
        return addr
    return f"{name} <{addr}>" if _ATOMS.fullmatch(name) else None


def addresses(pairs: Sequence[tuple[str, str]]) -> str | None:
    """A list of (name, address) as one header value, or None."""
    out = [address(name, addr) for name, addr in pairs]
    return None if not out or None in out else ", ".join(a for a in out if a)


def raw_header(name: str, value: str) -> str:
    """A header set as it is (``set_raw``; folds as ``"\\n "``), as the
    generator writes it, CRLF included: as it is when its lines fit, else
    refolded by the registry."""
    if len(name) + 2 + len(value) <= WIDTH and value.isascii() and value.isprintable():
        return f"{name}: {value}\r\n"  # what the policy writes, without asking it
    folded: str = SMTP.fold(name, value)
    return folded


def parsed_header(name: str, value: object) -> str:
    """A header set through the registry (``msg[name] = value``), as the
    generator writes it: encoded-words and folds of the ``email`` package."""
    folded: str = SMTP.fold(name, SMTP.header_store_parse(name, value)[1])
    return folded


def address_header(name: str, pairs: Sequence[tuple[str, str]]) -> str:
    """``name`` of (display name, address) pairs, as the generator writes it."""
    value = addresses(pairs)
    if value is not None and len(name) + 2 + len(value) <= WIDTH:
        return f"{name}: {value}\r\n"
    return parsed_header(name, [Address(n, addr_spec=a) for n, a in pairs])


def _lines(body: str) -> list[bytes]:
    return body.encode("utf-8").splitlines()


def transfer_encoding(body: str) -> str:
    """How a UTF-8 text body goes out: ``7bit`` or ``8bit`` when no line
    passes :data:`WIDTH` bytes (as the ``email`` package chooses), else
    ``quoted-printable``."""
    return _encoding(body, _lines(body))


def _encoding(body: str, lines: list[bytes]) -> str:
    if max(map(len, lines), default=0) > WIDTH:
        return "quoted-printable"
    return "7bit" if body.isascii() else "8bit"


def flatten(headers: Sequence[str], body: str) -> str:
    """The mail of ``headers`` (each as written, CRLF included) and a
    text/plain UTF-8 ``body``, with CRLF line ends, as ``as_bytes`` writes it
    (decoded from UTF-8)."""
    lines = _lines(body)  # encoded and split once, for both uses
    cte = _encoding(body, lines)
    text = b"\n".join(lines).decode("utf-8") + "\n"
    if cte == "quoted-printable":
        text = body_encode(text.encode("utf-8").decode("latin-1"), WIDTH)
    out = [*headers, 'Content-Type: text/plain; charset="utf-8"\r\n'
           f"Content-Transfer-Encoding: {cte}\r\nMIME-Version: 1.0\r\n\r\n"]
    out.append(text.replace("\n", "\r\n"))
    return "".join(out)
