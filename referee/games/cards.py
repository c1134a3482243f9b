"""Playing cards: ranks, suits, and reading the ways players write them.

Ranks are named 2-10, J, Q, K, A; suits S, H, D, C. Players may write ``QH``,
``Q♥``, ``qh``, ``queen of hearts``, ``10d``, ``td`` or ``T♦``. Ranks alone
("K", "king", "13") are what the bidding games use. Values belong to each
game (Pure Skill counts A as 1, Spades ranks A high), so this module only
names and parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RANKS: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

_RANK_WORDS = {
    "ace": "A", "a": "A", "1": "A", "one": "A",
    "king": "K", "k": "K", "13": "K",
    "queen": "Q", "q": "Q", "12": "Q",
    "jack": "J", "j": "J", "knave": "J", "11": "J",
    "ten": "10", "t": "10", "10": "10",
    "nine": "9", "eight": "8", "seven": "7", "six": "6", "five": "5",
    "four": "4", "three": "3", "two": "2", "deuce": "2",
}
for _n in range(2, 10):
    _RANK_WORDS[str(_n)] = str(_n)

_SUIT_WORDS = {
    "s": "S", "spade": "S", "spades": "S", "♠": "S", "♤": "S",
    "h": "H", "heart": "H", "hearts": "H", "♥": "H", "♡": "H",
    "d": "D", "diamond": "D", "diamonds": "D", "♦": "D", "♢": "D",
    "c": "C", "club": "C", "clubs": "C", "♣": "C", "♧": "C",
}


def parse_rank(text: str) -> str | None:
    """The rank named by ``text`` ("k", "King", "13", "t"), or None."""
    return _RANK_WORDS.get(text.strip().lower().rstrip(".!,;"))


def rank_value_ace_low(rank: str) -> int:
    """Pure Skill's values (000 rule 4b): A=1, 2-10 face value, J=11, Q=12, K=13."""
    return {"A": 1, "J": 11, "Q": 12, "K": 13}.get(rank) or int(rank)


def rank_value_ace_high(rank: str) -> int:
    """Rank order with the ace high (SP-2): 2 lowest, A=14."""
    return RANKS.index(rank) + 2


@dataclass(frozen=True, order=True)
class Card:
    """One card of a 52-card deck, written ``10D``, ``AS``."""

    rank: str
    suit: str

    def __str__(self) -> str:
        return f"{self.rank}{self.suit}"

    @property
    def symbol(self) -> str:
        return f"{self.rank}{SUIT_SYMBOLS[self.suit]}"

    @classmethod
    def parse(cls, text: str) -> Card | None:
        """Read a card name in any of the accepted spellings, or None."""
        # Phones send a suit symbol in emoji style, "♥" and then U+FE0F:
        # the selector only chooses how the symbol looks.
        t = text.replace("\ufe0f", "").replace("\ufe0e", "")
        t = t.strip().lower().rstrip(".!,;")
        m = re.fullmatch(r"(\w+)\s+of\s+(\w+)", t)
        if m:
            rank, suit = parse_rank(m.group(1)), _SUIT_WORDS.get(m.group(2))
        else:
            m = re.fullmatch(r"(10|[2-9akqjt])\s*([shdc♠♤♥♡♦♢♣♧])", t)
            if not m:
                return None
            rank, suit = parse_rank(m.group(1)), _SUIT_WORDS.get(m.group(2))
        if rank is None or suit is None:
            return None
        return cls(rank, suit)


def full_deck() -> list[Card]:
    """The 52 cards, no jokers, in a fixed order (suit by suit)."""
    return [Card(r, s) for s in SUITS for r in RANKS]


def card_face(code: str) -> dict[str, str]:
    """A card (``QH``) as a game page shows it: its rank and suit symbol
    always written out (``Q♥``), the suit's name for screen readers, and
    whether it is a red suit (coloured too, never by colour alone)."""
    rank, suit = code[:-1], code[-1]
    return {"code": code, "text": f"{rank}{SUIT_SYMBOLS[suit]}",
            "title": f"{rank} of {SUIT_NAMES[suit]}", "red": str(suit in "HD").lower()}
