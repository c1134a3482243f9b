"""Text from a mail's bytes, whatever charset they claim: a part's
content, a raw 8-bit header, RFC 2047 encoded-words. Never raises: what no
charset reads is read as Latin-1."""

from __future__ import annotations

import base64
import binascii
import codecs
import re

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=")


def decode_words(text: str) -> str:
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
            out.append(decode_bytes(bytes(run), charset) if run else "")
            out.append("" if after_word and not gap.strip() else gap)
            charset, run = word_charset, bytearray()
        run += data
        pos, after_word = m.end(), True
    out.append(decode_bytes(bytes(run), charset) if run else "")
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


def decode_bytes(data: bytes, charset: str | None) -> str:
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
