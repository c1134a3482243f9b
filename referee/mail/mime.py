"""The text of a mail's MIME tree: which parts are the author's (not
attachments, forwards or reports), each decoded to text, ``format=flowed``
joined, HTML read as text; and how deep the tree is nested, and whether its
only body is Outlook's winmail.dat. The work one mail may cost is bounded
(:class:`Budget`).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.message import Message

from referee.mail.charset import decode_bytes
from referee.mail.htmltext import html_text

#: The work one mail's body may cost, whatever its size. At most
#: ``commands.MAX_LINES`` (100) command lines are read, so what lies beyond
#: these bounds is never looked at: text of all parts together (characters)
#: and HTML of all parts together converted to text (the conversion takes
#: seconds a megabyte); ``quotes.MAX_BODY_LINES`` bounds the lines examined.
MAX_TEXT = 1024 * 1024
MAX_HTML = 256 * 1024

#: MIME parts nested deeper than this make a mail unreadable (the value of
#: Postfix's mime_nesting_limit): the parts are read by recursion, which
#: must stay far from Python's limit wherever it is called.
MAX_MIME_DEPTH = 100


def nesting(msg: Message) -> int:
    """How deep the parts of ``msg`` are nested, counted without recursion
    and only as far as :data:`MAX_MIME_DEPTH` and one more."""
    deepest, todo = 0, [(msg, 0)]
    while todo and deepest <= MAX_MIME_DEPTH:
        part, depth = todo.pop()
        deepest = max(deepest, depth)
        todo += [(child, depth + 1) for child in children(part)]
    return deepest

_TNEF_TYPES = frozenset({"application/ms-tnef", "application/vnd.ms-tnef"})


def children(part: Message) -> list[Message]:
    if not part.is_multipart():  # a multipart without its boundary is one text blob
        return []
    payload = part.get_payload()
    return [p for p in payload if isinstance(p, Message)] if isinstance(payload, list) else []


class Budget:
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


def body_text(part: Message, budget: Budget) -> str | None:
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
        return html_text(budget.take_html(decoded(part)))
    if maintype != "multipart" or ctype == "multipart/encrypted":
        return None
    parts = children(part)
    if ctype == "multipart/signed":  # PGP/MIME, S/MIME: the first part is the signed one
        return body_text(parts[0], budget) if parts else None
    if ctype == "multipart/alternative":
        readable = [(c.get_content_type(), t) for c in parts
                    if (t := body_text(c, budget))]
        found = [(kind, text) for kind, text in readable if text.strip()]
        plain = [text for kind, text in found if kind == "text/plain"]
        return plain[0] if plain else (found[0][1] if found else None)
    texts = [text for c in parts if (text := body_text(c, budget)) is not None]
    return "\n".join(texts) if texts else None


def decoded(part: Message) -> str:
    """A text part's content: transfer encoding undone, charset decoded, LF line ends."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    text = decode_bytes(payload, part.get_content_charset())
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _plain_text(part: Message, budget: Budget) -> str:
    text = budget.take_text(decoded(part))
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


def tnef_parts(part: Message) -> Iterator[Message]:
    filename = part.get_filename() or ""
    if part.get_content_type() in _TNEF_TYPES or filename.lower() == "winmail.dat":
        yield part
    if part.get_content_maintype() == "multipart":
        for child in children(part):
            yield from tnef_parts(child)

