"""Plain mail written directly: the text ``EmailMessage`` would flatten
to, for a mail whose every part is short plain ASCII (most of the
referee's mail), at a fraction of the cost of building and flattening it.

Anything else (a non-ASCII name or body, a line to fold, a name to quote)
gets ``None``, and the caller takes the ``email`` package's way.
``tests/mail/test_plain.py`` holds the two ways to the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: A display name that needs no quoting: atoms (RFC 5322 atext) and single spaces.
_ATOMS = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?: [A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*")
#: An address written as it is: a dot-atom local part (no dot first, last
#: or twice) at a domain of plain labels.
_ADDRESS = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*"
                      r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
#: What the fast way leaves to the ``email`` package: any character but
#: printable ASCII, tab and newline.
_ODD = re.compile(r"[^\t\n\x20-\x7e]")
#: The line length under which the ``email`` package writes a header as it is
#: and a body in 7bit (``policy.SMTP.max_line_length``).
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


def flatten(headers: Sequence[tuple[str, str]], body: str) -> str | None:
    """The mail of ``headers`` (values as ``set_raw`` takes them, folds as
    ``"\\n "``) and a text/plain UTF-8 ``body``, with CRLF line ends; None
    when a header or a line is too long or not plain ASCII."""
    if not body.endswith("\n") or _ODD.search(body):
        return None
    lines = body[:-1].split("\n")
    if any(len(line) > WIDTH for line in lines):
        return None
    out = []
    for name, value in headers:
        parts = value.split("\n")
        if (_ODD.search(value) or not value
                or any(not p.strip() or p[0] not in " \t" for p in parts[1:])
                or len(name) + 2 + len(parts[0]) > WIDTH
                or any(len(p) > WIDTH for p in parts[1:])):
            return None
        out.append(f"{name}: " + "\r\n".join(parts) + "\r\n")
    out.append('Content-Type: text/plain; charset="utf-8"\r\n'
               "Content-Transfer-Encoding: 7bit\r\nMIME-Version: 1.0\r\n\r\n")
    out.append("".join(line + "\r\n" for line in lines))
    return "".join(out)
