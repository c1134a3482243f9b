"""Naming a seat as people do, for every game: a player writes "Bob" for
Bob Baker, "baker", "bob baker", or "bbaker" (the part of his address
before the @), and the game finds his seat or says why it cannot.

The games keep each seat's display name and, from the service, the other
names its player goes by (:attr:`Nameable.aliases`: the local part of their
address; an engine never sees an address). A written name means, in this
order, the first that fits: a seat number (where the game numbers its
seats), the whole name, an alias or one or more whole words of a name
("Ann" or "Lee" for Ann Lee), then the start of a name or of one of its
words ("Bo" for Bob). More than one seat at the first that fits is refused
with the candidates; no seat at all, with who may be named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from referee.games.base import IllegalAction

#: A word of a name: letters and digits, with inner apostrophes, dots or
#: hyphens ("O'Neil", "Jean-Luc", "J.R.").
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
#: A seat number as written: "3", "#3", "seat 3".
_SEAT_NUMBER = re.compile(r"(?:seat\s*|#\s*)?(\d{1,4})")


@dataclass(frozen=True)
class Nameable:
    """A seat as players may name it: its number, display name and aliases."""

    seat: int
    name: str
    aliases: tuple[str, ...] = ()


class UnknownName(IllegalAction):
    """A written name fits no seat; the message lists who may be named."""


class AmbiguousName(IllegalAction):
    """A written name fits several seats; the message lists them."""


def words(text: str) -> list[str]:
    """The words of a name, in lower case: ``"Lee, Ann"`` -> ``["lee", "ann"]``."""
    return _WORD.findall(text.casefold())


def local_part(address: str) -> str:
    """The part of a mail address before the @, in lower case."""
    return address.strip().rpartition("@")[0].casefold() if "@" in address else ""


def name_words(people: Iterable[Nameable]) -> frozenset[str]:
    """Every word that names someone here by itself: each word of each name
    and each alias (a grammar that skips filler words keeps these)."""
    return frozenset(w for p in people for n in (p.name, *p.aliases) for w in words(n))


def find_seat(written: str, people: Sequence[Nameable], *, who: str = "player",
              numbered: bool = False) -> int:
    """The seat ``written`` names among ``people``, by the rules above.
    ``numbered``: a seat number names its seat too; ``who`` is what the
    people are called in a refusal ("player", "Member").

    :raises AmbiguousName: it fits more than one seat at the first rule that
        fits any; the message lists them and how to tell them apart.
    :raises UnknownName: it fits nobody; the message lists who may be named.
    """
    text = " ".join(str(written).split()).strip(" \t\"'“”‘’,.;:!?()<>")
    # An address names its player by the part before the @, all the
    # referee's games know of it.
    wanted = words(local_part(text) or text)
    for rule in _rules(local_part(text) or text, wanted, numbered):
        found = _unique([p for p in people if rule(p)])
        if len(found) == 1:
            return found[0].seat
        if found:
            raise AmbiguousName(_ambiguous(text, found, numbered))
    if not people:
        raise UnknownName(f"There is no {who} '{text}': there are none yet.")
    raise UnknownName(f"There is no {who} '{text}'. You may name {_listed(people, numbered)}.")


def _rules(text: str, wanted: list[str], numbered: bool
           ) -> list[Callable[[Nameable], bool]]:
    """The tests a seat passes to be named by ``text``, strongest first."""
    if not wanted:
        return []
    rules: list[Callable[[Nameable], bool]] = []
    number = _SEAT_NUMBER.fullmatch(text.casefold())
    if numbered and number:
        rules.append(lambda p: p.seat == int(number.group(1)))
    rules += [
        lambda p: words(p.name) == wanted,
        lambda p: (any(a.casefold() == text.casefold() for a in p.aliases)
                   or _run_of(wanted, words(p.name))),
        lambda p: " ".join(words(p.name)).startswith(" ".join(wanted))
        or (len(wanted) == 1 and any(w.startswith(wanted[0]) for w in words(p.name))),
    ]
    return rules


def _run_of(part: list[str], whole: list[str]) -> bool:
    """Whether ``part`` is one or more whole words of ``whole``, in a row."""
    n = len(part)
    return any(whole[i:i + n] == part for i in range(len(whole) - n + 1))


def _unique(found: list[Nameable]) -> list[Nameable]:
    seats: dict[int, Nameable] = {}
    for p in found:
        seats.setdefault(p.seat, p)
    return list(seats.values())


def _ambiguous(text: str, found: Sequence[Nameable], numbered: bool) -> str:
    names = [p.name for p in found]
    if len({" ".join(words(n)) for n in names}) == len(names):
        return f"'{text}' could be {_or(names)}: write the whole name."
    if numbered:
        return f"'{text}' could be {_or(_numbered(found))}: write the seat number."
    return (f"'{text}' could be {_or(names)}: write the part of their address before "
            "the @.")


def _listed(people: Sequence[Nameable], numbered: bool) -> str:
    return _or(_numbered(people) if numbered else [p.name for p in people])


def _numbered(people: Sequence[Nameable]) -> list[str]:
    return [f"{p.name} (seat {p.seat})" for p in people]


def _or(items: Sequence[str]) -> str:
    """``Ann, Ben or Cat``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
