"""The command grammar of a Land of Agora trading-card tournament (rule text
002): how a member writes each action of rule 8 and each trade of rule 10,
how the transcript reads an offer back, and the help a seat gets.
"""

from __future__ import annotations

import re
from typing import ClassVar

from referee.games.base import Action, ParseError, polite
from referee.games.loatcg.instructions import PLURALS, card_type
from referee.games.loatcg.rules import (
    CARDS_HELP,
    INSTRUCTION_APPLES,
    JOIN_CARDS,
    NUMBER_APPLES,
    RECIPES,
    REVEAL_APPLES,
    TAKE_APPLES,
    LoatcgRules,
    LoatcgState,
    cards_text,
    counted,
    member_at,
    seat_name,
)

_NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}

#: Rule 1: dealing oneself in, anywhere in a line ("Is it too late? Deal me
#: in, please"), as long as the sentence does not say the opposite.
_DEAL_ME_IN = re.compile(r"(?<![\w'])deal\s+(?:me|myself)\s+in(?![\w'])")
_NOT = re.compile(r"(?<![\w'])(?:not|don'?t|do not|never|won'?t|no longer|rather not)(?![\w'])")

_BUY_HELP = (
    "Write 'buy random' (3 apples: a random instruction, with its number), 'buy number "
    "report 2' (3 apples: the number of the instruction Round Report 2 published) or 'buy "
    "instruction 5' (7 apples: instruction 5), as rule 8 allows."
)


def _parse_cards(text: str) -> dict[str, int]:
    """``2 wool, an ore and 1 apple`` -> {"wool": 2, "ore": 1, "apple": 1};
    ``nothing`` -> {}."""
    text = text.strip().lower()
    if text in ("nothing", "none", "no cards"):
        return {}
    cards: dict[str, int] = {}
    for item in re.split(r"\s*(?:,|\+|&|\band\b)\s*", text):
        words = item.split()
        if not words:
            continue
        count = 1
        if len(words) > 1:
            first = words[0]
            if first.isdecimal() and len(first) <= 3:
                count = int(first)
            elif first in _NUMBER_WORDS:
                count = _NUMBER_WORDS[first]
            elif first not in ("a", "an"):
                raise ParseError(f"I cannot read {item!r} as cards. {CARDS_HELP}")
            words = words[1:]
        kind = card_type(" ".join(words).removesuffix(" cards").removesuffix(" card"))
        if kind is None or count < 1:
            raise ParseError(f"I cannot read {item!r} as cards. {CARDS_HELP}")
        cards[kind] = cards.get(kind, 0) + count
    if not cards:
        raise ParseError(f"No cards are named. {CARDS_HELP}")
    return cards


def _one_card(words: str) -> str:
    text = re.sub(r"^(?:a|an|one|1)\s+", "", words.strip().lower())
    text = re.sub(r"\s+(?:card)$", "", text)
    kind = card_type(text)
    if kind is None:
        raise ParseError(f"I cannot read {words.strip() or 'nothing'!r} as one card. {CARDS_HELP}")
    return kind


def _number(word: str, what: str) -> int:
    word = word.strip().lstrip("#")
    if word.isdecimal() and len(word) <= 6:
        return int(word)
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    raise ParseError(f"I cannot read {word or 'nothing'!r} as {what}.")


def asks_to_be_dealt_in(text: str) -> bool:
    """Whether a line says "deal me in" in a sentence of its own words
    ("Is it too late? Deal me in, please"), not "please don't deal me in"."""
    for found in _DEAL_ME_IN.finditer(text.lower()):
        sentence = re.split(r"[.!?;]", text.lower()[:found.start()])[-1]
        if not _NOT.search(sentence):
            return True
    return False


def _parse_offer(rest: str) -> Action:
    """``2 wool, an ore for 1 steel to Bob, Cat`` -> give, want, names."""
    m = re.fullmatch(r"(.+?)\s+for\s+(.+?)(?:\s+to\s+(.+))?", rest.strip(), re.IGNORECASE)
    if m is None:
        raise ParseError(
            "Write an offer like 'offer 2 wool, 1 ore for 1 steel', optionally "
            "'to Bob, Cat' at the end."
        )
    names = [n.strip() for n in re.split(r",|\band\b", m.group(3) or "") if n.strip()]
    return Action("offer", (_parse_cards(m.group(1)), _parse_cards(m.group(2)), names))


class LoatcgWords(LoatcgRules):
    """The rules with their words: ``parse``, ``read_as`` and ``help``."""

    verbs: ClassVar[frozenset[str]] = frozenset(
        {"deal", "join", "hand", "discard", "draw", "take", "craft", "buy", "reveal", "offer",
         "accept", "withdraw"})
    spelt_verbs: ClassVar[tuple[str, ...]] = (
        "hand", "accept", "offer", "withdraw", "discard", "draw", "take", "craft", "purchase",
        "reveal")
    #: Questions, not moves: a refused ``score`` stops no later line (MI-19).
    untimed_verbs: ClassVar[frozenset[str]] = frozenset({"hand", "score"})

    def parse(self, line: str) -> Action | None:
        """Read one command of rule 8 or rule 10 (see :meth:`help`)."""
        original = polite(line.strip().rstrip(".!;"))
        text = " ".join(original.lower().split())
        if not text:
            return None
        words = text.split()
        verb, rest = words[0].rstrip(":"), " ".join(words[1:])
        if text in ("deal me in", "deal myself in", "deal in", "deal themselves in", "join"):
            return Action("join")
        if asks_to_be_dealt_in(text):
            return Action("join")
        if text in ("hand", "my hand", "show hand", "show my hand"):
            return Action("hand")
        if text in ("score", "my score", "hand score", "my hand score", "show my score"):
            return Action("score")
        if re.fullmatch(
            r"(?:discard (?:an? |one |1 )?apples? )?(?:to )?draw(?: (?:2|two)(?: cards)?)?", text
        ):
            return Action("draw")
        m = re.fullmatch(
            r"(?:discard (?:2|two) apples (?:to )?)?(?:take|draw) (.+?)"
            r"(?: from the discard pile| from discard pile| from the pile)?",
            text,
        )
        if m and (verb in ("take", "discard") or m.group(1) not in ("2", "two", "2 cards")):
            return Action("take", (_one_card(m.group(1)),))
        if verb == "discard":
            if re.match(r"^(?:[2-9]|\d\d+|two|three|four|five|six|seven)\s", rest):
                raise ParseError("Discard one card at a time: write 'discard wool'.")
            return Action("discard", (_one_card(rest),))
        if verb in ("craft", "make", "create"):
            kind = _one_card(rest)
            if kind not in RECIPES:
                raise ParseError(
                    f"Only refined cards are crafted: steel (ore + lumber), paper (ore + wool) "
                    f"or fabric (lumber + wool); not {PLURALS[kind]}."
                )
            return Action("craft", (kind,))
        if verb in ("buy", "reveal"):
            if not rest:
                # A stray word must not spend 3 apples: a purchase says what it buys.
                raise ParseError(f"'{verb}' alone buys nothing, and no apples were spent. "
                                 f"{_BUY_HELP}")
            return self._parse_buy(rest)
        if verb == "offer":
            return _parse_offer(original.split(None, 1)[1] if " " in original else "")
        if verb in ("accept", "execute"):
            number = re.sub(r"^(?:offer|trade)\s+", "", rest)
            return Action("execute", (_number(number, "an offer number, like 'accept 3'"),))
        if verb == "withdraw":
            number = re.sub(r"^(?:offer|trade)\s+", "", rest)
            return Action("withdraw", (_number(number, "an offer number, like 'withdraw 3'"),))
        return None

    def _parse_buy(self, rest: str) -> Action:
        if re.fullmatch(r"(?:a )?random(?: instruction)?", rest):
            return Action("reveal")
        m = re.fullmatch(r"(?:the )?number(?: of)?(?: the instruction)?(?: in| of)?(?: round)?"
                         r" report (\S+)|number (\S+)", rest)
        if m:
            return Action("number", (_number(m.group(1) or m.group(2), "a report number"),))
        m = re.fullmatch(r"(?:instruction|number instruction) (\S+)|(\S+)", rest)
        if m:
            return Action("instruction", (_number(m.group(1) or m.group(2),
                                                  "an instruction number"),))
        raise ParseError(_BUY_HELP)

    def read_as(self, action: Action) -> str:
        """An offer as its maker would write it: ``offer 1 diamond for 1 wool
        to Bob``."""
        if action.verb == "offer" and len(action.args) == 3:
            give, want, names = action.args
            if isinstance(give, dict) and isinstance(want, dict):
                to = f" to {', '.join(str(n) for n in names)}" if names else ""
                return f"offer {cards_text(give)} for {cards_text(want)}{to}"
        return super().read_as(action)

    def help(self, state: LoatcgState, seat: int | None) -> str:
        if state.frozen:
            return (
                "The tournament has frozen and ended (rule 6): nothing more is accepted. The "
                "Final Report lists every instruction, hand and score."
            )
        member = member_at(state, seat) if seat is not None else None
        if member is None:
            return (
                "Write 'deal me in' to the referee or the list to become a Member (rule 1); a "
                f"person who has never been a Member draws {JOIN_CARDS} cards (rule 3)."
            )
        hand = member.hand
        lines = [
            f"You hold {cards_text(hand)}.",
            "Write one action a line, publicly, privately or secretly (rule 8, definition F):",
            "  discard wool              discard one card",
        ]
        a = hand["apple"]

        def can(n: int) -> str:
            if a >= n:
                return ""
            return f"  (needs {counted(n, 'apple')}; you hold {counted(a, 'apple')})"

        lines += [
            f"  draw                      discard an apple to draw 2 cards{can(1)}",
            f"  take steel                discard 2 apples to take a steel from the Discard "
            f"Pile{can(TAKE_APPLES)}",
            "  craft steel               ore + lumber -> steel; paper: ore + wool; fabric: "
            "lumber + wool",
            f"  buy random                3 apples: a random instruction, with its number"
            f"{can(REVEAL_APPLES)}",
        ]
        if state.reports:
            lines.append(
                f"  buy number report 1       3 apples: the number of the instruction Round "
                f"Report 1 published (reports so far: {len(state.reports)}){can(NUMBER_APPLES)}"
            )
        lines += [
            f"  buy instruction 5         7 apples: instruction 5 (1 to {state.rounds})"
            f"{can(INSTRUCTION_APPLES)}",
            "  hand                      your hand, in a secret reply",
            "Trades (rule 10), publicly or privately:",
            "  offer 2 wool for 1 steel [to Bob]     the offer gets a number",
            "  accept 3                  execute offer 3; privately only if every party is in "
            "the mail",
            "  withdraw 3                withdraw your own offer 3",
        ]
        open_to_you = [
            o for o in state.offers
            if o.maker != member.seat and (not o.takers or member.seat in o.takers)
            and (not o.audience or member.seat in o.audience)
        ]
        if open_to_you:
            lines.append("Open offers you may accept: " + "; ".join(
                f"#{o.number} {seat_name(state, o.maker)} gives {cards_text(o.give)} for "
                f"{cards_text(o.want)}" for o in open_to_you
            ) + ".")
        return "\n".join(lines)

