"""The Scoring Instructions of the Land of Agora trading-card tournament
(rule text 002, rule 4): a small line-oriented language the Dealor writes,
its parser, its evaluation on a hand, its plain-English rendering and the
salted hash the Dealor publishes at the start (rulings TCG-17 … TCG-19,
docs/rulings.md).

Each instruction is numbered from 1 in order: the Dealor's own words (the
words are the instruction, ruling TCG-19), which may go on over indented
lines, then the rule the referee scores them by on a line starting with
``=``::

    6. Matching Earrings: Each pair of diamonds in a hand is worth 5
       points, but having a single remaining diamond (i.e. an odd number
       of diamonds) loses 15 points.
       = pairs diamond 5 odd -15

An instruction may also be the rule alone, after its number and an
optional title ending in a colon (``6. Matching Earrings: pairs diamond 5
odd -15``); its words are then the rule in plain English (:meth:`Rule.english`).
The rules:

=============================  ==============================================
``points TYPES P``             each card of those types scores P
``set TYPES P``                each set of one card of every type scores P
                               (a card belongs to one set only)
``pairs TYPE P [odd Q]``       each pair scores P; an odd one left scores Q
``count TYPE as TYPE``         from here on the first type counts as the
                               second (and no longer as itself)
``hoard N TYPES P``            each of those types held N or more times
                               scores P
=============================  ==============================================

TYPES are card types (``ore wool lumber apple diamond steel paper fabric``,
singular or plural) or the groups ``basic``, ``refined`` and ``all``. Points
are whole numbers and may be negative. Blank lines and lines starting with
``#`` are comments. ``docs/loatcg-instructions.md`` is the operator's guide.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Rule 2: the basic currencies, then the refined ones.
BASIC: tuple[str, ...] = ("ore", "wool", "lumber", "apple", "diamond")
REFINED: tuple[str, ...] = ("steel", "paper", "fabric")
CARD_TYPES: tuple[str, ...] = BASIC + REFINED
GROUPS: dict[str, tuple[str, ...]] = {"all": CARD_TYPES, "basic": BASIC, "refined": REFINED}

#: How a card type reads in the plural ("each pair of diamonds").
PLURALS: dict[str, str] = {
    "ore": "ore", "wool": "wool", "lumber": "lumber", "apple": "apples",
    "diamond": "diamonds", "steel": "steel", "paper": "paper", "fabric": "fabric",
}  # fmt: skip

MAX_INSTRUCTIONS = 100
MAX_NUMBER = 1_000_000  # points and thresholds: a typo, not a rule, beyond this

#: The EXAMPLE scoring instruction set of rule text 002 in its canonical
#: form: its words (spaces made single), and the rules ruling TCG-18 reads
#: them as.
EXAMPLE_INSTRUCTIONS = (
    "1. Each ore is worth 1 point.\n"
    "   = points ore 1\n"
    "2. Each wool is worth 2 points.\n"
    "   = points wool 2\n"
    "3. Each lumber is worth 3 points.\n"
    "   = points lumber 3\n"
    "4. Each set of (ore-wool-lumber) is worth 5 points (a card only belongs to one such set).\n"
    "   = set ore wool lumber 5\n"
    "5. Each Steel, Paper, or Fabric is worth 4 points.\n"
    "   = points steel paper fabric 4\n"
    "6. Matching Earrings: Each pair of diamonds in a hand is worth 5 points, but having a "
    "single remaining diamond (i.e. an odd number of diamonds) loses 15 points.\n"
    "   = pairs diamond 5 odd -15\n"
    "7. Spoilage: For the remainder of the scoring, all apples are considered to be ore.\n"
    "   = count apple as ore\n"
    "8. No Hoarding: For each card type, if a hand has 7 or more of that type, the hand loses "
    "10 points.\n"
    "   = hoard 7 all -10\n"
)

_NUMBERED = re.compile(r"^\s*(\d{1,4})\s*[.)]\s*(.*?)\s*$")
_INTEGER = re.compile(r"^[+-]?\d{1,7}$")


class InstructionError(ValueError):
    """The instruction text cannot be read; the message names the line."""

    def __init__(self, line: int | None, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


def card_type(word: str) -> str | None:
    """The card type a word names, singular or plural, any case; else None."""
    w = word.strip().lower()
    if w in PLURALS:
        return w
    for singular, plural in PLURALS.items():
        if w in (plural, singular + "s"):
            return singular
    return None


def _points_text(points: int) -> str:
    if points < 0:
        return f"loses {-points} point{'s' if points != -1 else ''}"
    return f"is worth {points} point{'s' if points != 1 else ''}"


def _or_list(words: Sequence[str], joiner: str = "or") -> str:
    if len(words) == 1:
        return words[0]
    return f"{', '.join(words[:-1])} {joiner} {words[-1]}"




# -- the rules ------------------------------------------------------------------


@dataclass(frozen=True)
class Points:
    """``points TYPES P``: each card of those types scores P."""

    types: tuple[str, ...]
    points: int
    spelled: str = ""  # the types as written, a group's name kept ("refined")

    def evaluate(self, counts: dict[str, int]) -> int:
        return self.points * sum(counts[t] for t in self.types)

    def canonical(self) -> str:
        return f"points {self.spelled or ' '.join(self.types)} {self.points}"

    def english(self) -> str:
        return f"Each {_or_list(self.types)} {_points_text(self.points)}."


@dataclass(frozen=True)
class Sets:
    """``set TYPES P``: each set of one card of every type scores P; a card
    belongs to one set only, so there are as many sets as the scarcest type
    has cards (ruling TCG-18)."""

    types: tuple[str, ...]
    points: int
    spelled: str = ""

    def evaluate(self, counts: dict[str, int]) -> int:
        return self.points * min(counts[t] for t in self.types)

    def canonical(self) -> str:
        return f"set {self.spelled or ' '.join(self.types)} {self.points}"

    def english(self) -> str:
        return (
            f"Each set of ({'-'.join(self.types)}) {_points_text(self.points)} "
            "(a card only belongs to one such set)."
        )


@dataclass(frozen=True)
class Pairs:
    """``pairs TYPE P odd Q``: each pair scores P, and an odd one left over
    scores Q (ruling TCG-18: 5⌊d/2⌋, minus 15 if d is odd)."""

    type: str
    points: int
    odd: int = 0

    def evaluate(self, counts: dict[str, int]) -> int:
        n = counts[self.type]
        return self.points * (n // 2) + (self.odd if n % 2 else 0)

    def canonical(self) -> str:
        odd = f" odd {self.odd}" if self.odd else ""
        return f"pairs {self.type} {self.points}{odd}"

    def english(self) -> str:
        plural = PLURALS[self.type]
        text = f"Each pair of {plural} in a hand {_points_text(self.points)}"
        if self.odd:
            verb = "scores" if self.odd > 0 else "loses"
            text += (
                f", but having a single remaining {self.type} (an odd number of {plural}) "
                f"{verb} {abs(self.odd)} point{'s' if abs(self.odd) != 1 else ''}"
            )
        return text + "."


@dataclass(frozen=True)
class CountAs:
    """``count TYPE as TYPE``: for the rest of the scoring the first type
    counts as the second, and no longer as itself (ruling TCG-18: after
    Spoilage apples are ore, not apples)."""

    source: str
    target: str

    def evaluate(self, counts: dict[str, int]) -> int:
        counts[self.target] += counts[self.source]
        counts[self.source] = 0
        return 0

    def canonical(self) -> str:
        return f"count {self.source} as {self.target}"

    def english(self) -> str:
        return (
            f"For the remainder of the scoring, all {PLURALS[self.source]} are considered "
            f"to be {self.target}."
        )


@dataclass(frozen=True)
class Hoard:
    """``hoard N TYPES P``: for each of those types held N or more times the
    hand scores P (ruling TCG-18: all 8 types, refined ones included)."""

    threshold: int
    types: tuple[str, ...]
    points: int
    spelled: str = ""

    def evaluate(self, counts: dict[str, int]) -> int:
        return self.points * sum(1 for t in self.types if counts[t] >= self.threshold)

    def canonical(self) -> str:
        return f"hoard {self.threshold} {self.spelled or ' '.join(self.types)} {self.points}"

    def english(self) -> str:
        which = (
            "For each card type"
            if self.types == CARD_TYPES
            else f"For each of {_or_list(self.types, 'and')}"
        )
        verb = f"the hand {'loses' if self.points < 0 else 'gains'} {abs(self.points)} point"
        plural = "s" if abs(self.points) != 1 else ""
        return (
            f"{which}, if a hand has {self.threshold} or more of that type, {verb}{plural}."
        )


Rule = Points | Sets | Pairs | CountAs | Hoard


@dataclass(frozen=True)
class Instruction:
    """One numbered Scoring Instruction: its number, its rule, and the
    Dealor's words for it (or, written as a rule alone, an optional title
    such as "Spoilage")."""

    number: int
    rule: Rule
    title: str = ""
    #: The Dealor's words, on one line with single spaces; "" for an
    #: instruction written as its rule alone.
    words: str = ""

    def canonical(self) -> str:
        """The instruction as the canonical text writes it, without the
        final newline: its words, then a line ``   = RULE``; or, written as a
        rule alone, one line ``7. Spoilage: count apple as ore``."""
        if self.words:
            return f"{self.number}. {self.words}\n   = {self.rule.canonical()}"
        title = f"{self.title}: " if self.title else ""
        return f"{self.number}. {title}{self.rule.canonical()}"

    def english(self) -> str:
        """The instruction as reports quote it, without its number: the
        Dealor's words verbatim, else the rule in plain English."""
        if self.words:
            return self.words
        title = f"{self.title}: " if self.title else ""
        return f"{title}{self.rule.english()}"

    def worded(self) -> Instruction:
        """The instruction with words: its own, else its plain English
        (what a new tournament commits to, so that the words a member is
        told are the words hashed)."""
        return self if self.words else dataclasses.replace(
            self, words=" ".join(self.english().split()), title="")


# -- parsing --------------------------------------------------------------------


def _integer(word: str, what: str, line: int) -> int:
    if not _INTEGER.match(word) or abs(int(word)) > MAX_NUMBER:
        raise InstructionError(line, f"{what} must be a whole number, like 5 or -15; got {word!r}")
    return int(word)


def _types(words: Sequence[str], line: int) -> tuple[tuple[str, ...], str]:
    """Card types and groups, in the order written, each once; and their
    canonical spelling (types singular, groups by name)."""
    found: list[str] = []
    spelled: list[str] = []
    for word in words:
        if word.lower() in GROUPS:
            named: tuple[str, ...] = GROUPS[word.lower()]
            spelled.append(word.lower())
        elif (one := card_type(word)) is not None:
            named = (one,)
            spelled.append(one)
        else:
            raise InstructionError(
                line,
                f"{word!r} is not a card type; the types are {', '.join(CARD_TYPES)} "
                "(or basic, refined, all)",
            )
        for t in named:
            if t in found:
                raise InstructionError(line, f"{t} is named twice")
            found.append(t)
    if not found:
        raise InstructionError(line, "no card type is named")
    return tuple(found), " ".join(spelled)


def _one_type(word: str, line: int) -> str:
    found = card_type(word)
    if found is None:
        raise InstructionError(
            line, f"{word!r} is not a card type; the types are {', '.join(CARD_TYPES)}"
        )
    return found


_USAGE = {
    "points": "points TYPES P, like 'points ore 1'",
    "set": "set TYPES P, like 'set ore wool lumber 5'",
    "pairs": "pairs TYPE P [odd Q], like 'pairs diamond 5 odd -15'",
    "count": "count TYPE as TYPE, like 'count apple as ore'",
    "hoard": "hoard N TYPES P, like 'hoard 7 all -10'",
}


def _rule(text: str, line: int) -> Rule:
    words = text.replace(",", " ").replace("+", " ").split()
    if not words:
        raise InstructionError(line, "the instruction has no rule after its number")
    verb, args = words[0].lower(), words[1:]
    if verb not in _USAGE:
        raise InstructionError(
            line, f"unknown rule {words[0]!r}; a rule starts with points, set, pairs, count or "
            "hoard",
        )
    usage = f"write {_USAGE[verb]}"
    if verb in ("points", "set"):
        if len(args) < 2:
            raise InstructionError(line, usage)
        types, spelled = _types(args[:-1], line)
        points = _integer(args[-1], "the points", line)
        if verb == "points":
            return Points(types, points, spelled)
        if len(types) < 2:
            raise InstructionError(line, f"a set needs at least two card types; {usage}")
        return Sets(types, points, spelled)
    if verb == "pairs":
        if len(args) not in (2, 4) or (len(args) == 4 and args[2].lower() != "odd"):
            raise InstructionError(line, usage)
        odd = _integer(args[3], "the points for an odd one", line) if len(args) == 4 else 0
        return Pairs(_one_type(args[0], line), _integer(args[1], "the points", line), odd)
    if verb == "count":
        if len(args) != 3 or args[1].lower() != "as":
            raise InstructionError(line, usage)
        source, target = _one_type(args[0], line), _one_type(args[2], line)
        if source == target:
            raise InstructionError(line, f"{source} cannot count as itself")
        return CountAs(source, target)
    if len(args) < 3:
        raise InstructionError(line, usage)
    threshold = _integer(args[0], "the number of cards", line)
    if threshold < 1:
        raise InstructionError(line, "the number of cards must be at least 1")
    types, spelled = _types(args[1:-1], line)
    return Hoard(threshold, types, _integer(args[-1], "the points", line), spelled)


def parse_instructions(text: str) -> tuple[Instruction, ...]:
    """Read an instruction text. Raises :class:`InstructionError` naming the
    first line that cannot be read and what is wrong with it."""
    found: list[Instruction] = []
    # The instruction being read: its number, the line it starts on, its
    # words so far, and the line of its rule (0 while none is written).
    number, start, rule_text, rule_line = 0, 0, "", 0
    words: list[str] = []

    def finish() -> None:
        if not number:
            return
        if rule_line:
            said = " ".join(" ".join(words).split())
            if not said:
                raise InstructionError(start, "the instruction has no words before its '= rule'")
            found.append(Instruction(number, _rule(rule_text, rule_line), words=said))
            return
        body = " ".join(words)
        title = ""
        if ":" in body:
            title, _, body = (part.strip() for part in body.partition(":"))
            if not title:
                raise InstructionError(start, "a title before ':' cannot be empty")
            title = " ".join(title.split())
        if len(words) > 1:
            raise InstructionError(
                start + 1, "an instruction in words needs its rule on a line starting "
                "with '=', like '   = points ore 1'")
        found.append(Instruction(number, _rule(body, start), title))

    for line_no, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("="):
            if not number:
                raise InstructionError(line_no, "a '= rule' line must follow the words of "
                                       "its instruction")
            if rule_line:
                raise InstructionError(line_no, f"instruction {number} has a second '= rule' "
                                       "line")
            rule_text, rule_line = stripped[1:].strip(), line_no
            continue
        m = _NUMBERED.match(stripped)
        if m is not None and (not raw[:1].isspace() or not number or rule_line
                              or int(m.group(1)) == number + 1):
            finish()
            new_number = int(m.group(1))
            if new_number != len(found) + 1:
                raise InstructionError(
                    line_no,
                    f"expected instruction {len(found) + 1} here, found {new_number}: number "
                    "the instructions 1, 2, 3 … in order",
                )
            if new_number > MAX_INSTRUCTIONS:
                raise InstructionError(line_no, f"at most {MAX_INSTRUCTIONS} instructions")
            number, start, words, rule_text, rule_line = new_number, line_no, [m.group(2)], "", 0
            continue
        if number and raw[:1].isspace() and not rule_line:
            words.append(stripped)  # the words go on, on an indented line
            continue
        raise InstructionError(
            line_no, "an instruction starts with its number and a dot, like '1. points ore 1'; "
            "its words may go on over indented lines, then '   = RULE'"
        )
    finish()
    if not found:
        raise InstructionError(None, "there are no instructions: write at least one line "
                               "like '1. points ore 1'")
    return tuple(found)


def canonical_text(instructions: Sequence[Instruction]) -> str:
    """The instructions as one text, a line each, each line ending in a newline."""
    return "".join(f"{i.canonical()}\n" for i in instructions)


def canonicalize(text: str) -> str:
    """The canonical text of an instruction text (comments and spacing gone)."""
    return canonical_text(parse_instructions(text))


def committed_text(instructions: Sequence[Instruction]) -> str:
    """What a new tournament commits to: the canonical text of the
    instructions, each with its words (:meth:`Instruction.worded`)."""
    return canonical_text([i.worded() for i in instructions])


# -- evaluation -----------------------------------------------------------------


def score_breakdown(instructions: Sequence[Instruction], hand: Mapping[str, int]) -> list[int]:
    """The points each instruction gives ``hand`` (card type -> count),
    applied in numerical order (rule 4, ruling TCG-17): a pure function of the
    counts. A ``count … as`` gives 0 and changes what later ones see."""
    counts = {t: int(hand.get(t, 0)) for t in CARD_TYPES}
    return [i.rule.evaluate(counts) for i in sorted(instructions, key=lambda i: i.number)]


def score(instructions: Sequence[Instruction], hand: Mapping[str, int]) -> int:
    """The Hand Score of ``hand``, in Points; it may be negative (ruling TCG-17)."""
    return sum(score_breakdown(instructions, hand))


# -- the published hash ---------------------------------------------------------


def commitment(text: str, salt: str) -> str:
    """The exact text whose SHA-256 the Dealor publishes (ruling TCG-19): a line
    ``salt: `` and the 256-bit salt in 64 hex digits, then the canonical
    instructions (a new tournament's with the words of each,
    :func:`committed_text`), every line ending in a newline."""
    return f"salt: {salt}\n{canonicalize(text)}"


def digest(text: str, salt: str) -> str:
    """SHA-256 of the UTF-8 :func:`commitment`, in hex."""
    return hashlib.sha256(commitment(text, salt).encode("utf-8")).hexdigest()
