"""The characters a page or a feed may hold: those of XML 1.0's ``Char``
production (section 2.2). Any other (NUL and the C0 controls but tab and
the line ends, a lone surrogate, U+FFFE and U+FFFF) makes an XML document
ill-formed, and a feed reader drops the whole feed; each is written as
U+FFFD, the replacement character, by every page and feed written.
"""

from __future__ import annotations

import re

#: What XML 1.0 forbids: not ``#x9 | #xA | #xD | [#x20-#xD7FF] |
#: [#xE000-#xFFFD] | [#x10000-#x10FFFF]``.
_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
REPLACEMENT = "\ufffd"


def xml_text(text: str) -> str:
    """``text`` with each character XML 1.0 forbids made U+FFFD."""
    return _FORBIDDEN.sub(REPLACEMENT, text)
