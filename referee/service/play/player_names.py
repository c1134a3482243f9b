"""Players' names: what a name is made of, and when it reads as another's.

A name comes from a mail's From (a player dealing themselves in) or from
the operator (``game new --player``). It is normalised (NFKC: "Ａlice" is
"Alice"), and stripped of what no reader sees or what moves the rest
(Unicode's control and format characters: a zero-width space, a direction
override; a line break or a tab is a space), so a name is one line that
shows as it is stored.

A name reads as a seated player's when their confusable skeletons are the
same (Unicode Technical Standard 39, as ICU's SpoofChecker computes them),
in their case or folded: "Аlice" with a Cyrillic А, "A1ice", "aIice" read
as "Alice". A name written with direction controls is read as a mail
reader shows it too (the bidi skeleton: "ecilA" after a right-to-left
override shows as "Alice"). Only a namesake as plainly written ("Ann"
beside "Ann", or "ann") is not refused: the seat gets a number ("Ann 2").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import icu

#: Characters no name keeps: the noncharacters (U+FFFE, U+FDD0...), which
#: no text may hold (they make a feed ill-formed XML).
_NONCHARACTER = re.compile("[\ufdd0-\ufdef\ufffe\uffff\U0001fffe\U0001ffff\U0002fffe"
                           "\U0002ffff\U0003fffe\U0003ffff\U0010fffe\U0010ffff]")


def clean(name: str) -> str:
    """``name`` as it is stored and shown: NFKC, each control character
    (Cc: a line break, a tab, NUL) and line or paragraph separator a
    space, each format character (Cf: zero-width, direction controls),
    surrogate and noncharacter dropped, each run of spaces one, trimmed."""
    shown = "".join(c for c in _as_written(name) if unicodedata.category(c) != "Cf")
    return " ".join(shown.split())


def _as_written(name: str) -> str:
    """``name`` in NFKC with its format characters (direction controls)
    kept, each control character and line or paragraph separator a space,
    its surrogates and noncharacters dropped."""
    out = []
    for c in unicodedata.normalize("NFKC", _NONCHARACTER.sub("", name)):
        category = unicodedata.category(c)
        if category in ("Cc", "Zl", "Zp"):
            out.append(" ")
        elif category != "Cs":
            out.append(c)
    return "".join(out)


def reads_as(written: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` (the names of the other seats of a game)
    that ``written``, a name as it came, reads as, or None. A namesake as
    plainly written (the same name in any case, with nothing normalised or
    stripped) reads as none: the seat numbers tell those apart."""
    plain = " ".join(written.split())
    name = clean(written)
    honest = name == plain
    mine = _readings(written)
    for other in others:
        if honest and name.casefold() == other.casefold():
            continue
        if mine & _readings(other):
            return other
    return None


def first_alike(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of ``names`` (the players of a game being made) that
    read alike, the same name included; None if no two do."""
    seen: list[tuple[str, frozenset[str]]] = []
    for name in names:
        mine = _readings(name)
        for other, theirs in seen:
            if mine & theirs:
                return other, name
        seen.append((name, mine))
    return None


@lru_cache(maxsize=4096)
def _readings(name: str) -> frozenset[str]:
    """The skeletons ``name`` may be read as: of the name as stored, in
    its case and folded, and as a left-to-right reader shows it as written
    (its direction controls applied)."""
    checker = _checker()
    stored = clean(name)
    shown = " ".join(_as_written(name).split())
    ltr = _ltr()
    return frozenset({
        checker.getSkeleton(0, stored), checker.getSkeleton(0, stored.casefold()),
        checker.getBidiSkeleton(ltr, shown), checker.getBidiSkeleton(ltr, shown.casefold()),
    })


@cache
def _checker() -> icu.SpoofChecker:
    # Imported here: ICU's data takes a tenth of a second to load, and only
    # a pass that seats someone needs it.
    import icu

    return icu.SpoofChecker()


@cache
def _ltr() -> int:
    import icu

    return int(icu.UBiDiDirection.LTR)
