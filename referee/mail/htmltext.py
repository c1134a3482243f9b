"""HTML mail as the plain text its author typed: quoted mail,
signatures and forwards dropped (by the markers of Gmail, Thunderbird,
Yahoo, Proton, Apple and Outlook), Outlook's quoted tail cut, tables and
lists read as lines.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from inscriptis import get_text
from inscriptis.model.config import ParserConfig

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


def html_text(html: str) -> str:
    """HTML mail as plain text, without its quoted part (TAL, Discourse extractors).

    The caller caps ``html`` (``mime.MAX_HTML``): the conversion costs seconds
    a megabyte.
    """
    stripper = _QuoteStripper()
    stripper.feed(html)
    stripper.close()
    text: str = get_text("".join(stripper.out), _LAYOUT)
    return text
