"""The command grammar of Spades, rule text 001 (Spades): how a line of a
player's mail reads as a bid, a card played, a request for one's hand or a
concession, and the help a seat gets. Ruling SP-14 (docs/rulings.md): text
that cannot be read is refused, never a misplay.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from referee.games.base import JSON, Action, DeadlineMove, ParseError, Result
from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS, Card
from referee.games.spades.rules import (
    BIDDING,
    CARD_HELP,
    OVER,
    VALID_BIDS_TEXT,
    SpadesRules,
    SpadesState,
    card_of,
    card_text,
    legal_plays,
)

#: Rule 7 (Time Limit): what the referee does for a player who fails to act.
TIME_LIMIT_RULE = "as rule 7 says"

_NUMBER_WORDS = {
    **dict.fromkeys(("zero", "nil"), 0),
    **{w: n for n, w in enumerate(("two", "three", "four", "five", "six", "seven"), start=2)},
    **{w: n for n, w in enumerate(("eight", "nine", "ten", "eleven", "twelve", "thirteen"), 8)},
    "one": 1,
}


class SpadesWords(SpadesRules):
    """The commands a player writes, and the help that says how."""

    verbs: ClassVar[frozenset[str]] = frozenset({"bid", "nil", "play", "hand", "concede"})
    spelt_verbs: ClassVar[tuple[str, ...]] = ("bid", "play", "hand", "concede")

    def parse(self, line: str) -> Action | None:
        """Read ``bid 4``, ``bid nil``, ``nil``, ``play QH`` (any card spelling),
        ``hand`` and ``concede``.

        House reading: a card alone on a line is not a play. A stray line
        like "as" or "ah" must never cost a team 100 points as a misplay.
        """
        text = line.strip().lower().rstrip(".!,;")
        words = text.split()
        if not words:
            return None
        verb, rest = words[0].rstrip(":"), words[1:]
        if text in ("nil", "bid nil"):
            return Action("bid", (0,))
        if verb == "bid":
            return Action("bid", (_parse_bid(rest),))
        if verb == "play":
            if rest and rest[0] == "the":
                rest = rest[1:]
            card = Card.parse(" ".join(rest)) if rest else None
            if card is None:
                shown = " ".join(rest) or "nothing"
                raise ParseError(f"I cannot read {shown!r} as a card. {CARD_HELP}")
            return Action("play", (str(card),))
        if text in ("hand", "my hand", "show hand"):
            return Action("hand")
        if text == "concede":
            return Action("concede")
        if text in _WITHDRAWALS:
            # Ruling SP-20 (house): a concession stands for the rest of the game.
            raise ParseError(
                "A concession cannot be withdrawn: it stands for the rest of the game, and "
                "your team loses as soon as your partner concedes too (rule 5).")
        return None

    order_help: ClassVar[tuple[str, ...]] = (
        "play 2H if hearts led   that card, when that suit is led to you (this round)",
        "play low                your lowest legal card, next time you play (spades last)",
        "play 2H, 3H, 4D         these cards in this order, each as your turn comes, "
        "while each is legal",
    )

    def parse_order(self, line: str) -> JSON | None:
        """A standing order (issue 37): ``play CARD if SUIT led``, ``play
        low``, or ``play CARD, CARD, ...`` (also with ``then`` or spaces
        between, two cards or more). Any other line is none: a single card
        is a move, never an order."""
        text = line.strip().lower().rstrip(".!,;")
        words = text.split()
        if not words or words[0].rstrip(":") != "play" or len(words) < 2:
            return None
        rest = " ".join(words[1:])
        if rest in ("low", "lowest", "my lowest", "lowest card", "low card"):
            return {"kind": "low", "text": "play low"}
        if m := _IF_LED.match(rest):
            card = Card.parse(m.group(1))
            suit = _SUIT_WORDS.get(m.group(2).rstrip("s"))
            if card is None:
                raise ParseError(f"I cannot read {m.group(1)!r} as a card. {CARD_HELP}")
            if suit is None:
                raise ParseError(f"I cannot read {m.group(2)!r} as a suit: write spades, "
                                 "hearts, diamonds or clubs, as in 'play 2H if hearts led'.")
            return {"kind": "if", "cards": [str(card)], "suit": suit,
                    "text": f"play {card_text(str(card))} if {SUIT_NAMES[suit]} are led"}
        parts = [p for p in re.split(r"\s*(?:,|;|\bthen\b|\band\b|\s)\s*", rest) if p]
        cards = [Card.parse(p) for p in parts]
        if len(parts) < 2 or any(c is None for c in cards):
            return None
        codes = [str(c) for c in cards]
        if len(set(codes)) != len(codes):
            raise ParseError("A card is named twice in this list; name each card once.")
        return {"kind": "list", "cards": codes,
                "text": "play " + ", ".join(card_text(c) for c in codes)}

    def deadline_move(self, before: SpadesState, seat: int, action: Action,
                      result: Result[SpadesState]) -> DeadlineMove:
        """Rule 7 in its words: a bid of 2, or a card chosen at random among
        those the player could legally play; both public, as every bid and
        card is."""
        if action.verb == "bid":
            return DeadlineMove("bid", f"bid {action.args[0]} for {{them}}", rule=TIME_LIMIT_RULE)
        return DeadlineMove("card", f"played {card_text(str(action.args[0]))} for {{them}}, "
                            "chosen at random among the cards {they} could legally play",
                            rule=TIME_LIMIT_RULE)

    def help(self, state: SpadesState, seat: int | None) -> str:
        lines: list[str] = []
        player = state.order.index(seat) if seat is not None and seat in state.order else None
        if state.phase == OVER:
            lines.append(f"The game is over: {self._result_text(state)}")
        elif player is not None and state.turn == player and state.phase == BIDDING:
            lines.append(
                "It is your turn to bid. Write, for example, 'bid 4', or 'bid nil' to bid 0. "
                f"The valid bids are {VALID_BIDS_TEXT}; a bid of 1 is not allowed."
            )
        elif player is not None and state.turn == player:
            legal = legal_plays(state.hands[player], state.trick)
            example = legal[0]
            lines.append(
                f"It is your turn to play a card to trick {len(state.tricks) + 1}. Write, for "
                f"example, 'play {example}' ('play {card_text(example)}' and "
                f"'play {_long_name(example)}' work too). You may play: "
                f"{' '.join(card_text(c) for c in legal)}. A card you do not hold, or one off "
                "suit while you hold the suit led, is a misplay: your team scores -100."
            )
        else:
            due = state.names[state.turn]
            doing = "bid" if state.phase == BIDDING else "play a card"
            lines.append(f"It is {due}'s turn to {doing}.")
        if player is not None:
            lines.append("'hand' shows your cards in a secret reply.")
            if state.phase != OVER:
                lines.append(
                    "'concede' concedes the game for your team once your partner concedes too; "
                    "a concession stands for the rest of the game and cannot be withdrawn."
                )
        return "\n".join(lines)


#: "2h if hearts led", "2h if hearts are led", "2h if a heart is led".
_IF_LED = re.compile(r"^(?:the\s+)?(.+?)\s+if\s+(?:an?\s+)?(\S+)\s+(?:(?:is|are)\s+)?led$")
_SUIT_WORDS = {**{name.rstrip("s"): code for code, name in SUIT_NAMES.items()},
               **{code.lower(): code for code in SUIT_NAMES},
               **{sym: code for code, sym in SUIT_SYMBOLS.items()}}
#: What a player writes to take back a concession, which cannot be (SP-20).
_WITHDRAWALS = frozenset({
    f"{verb} {whose}concession" for verb in ("withdraw", "retract", "cancel", "revoke", "undo")
    for whose in ("", "my ", "the ")} | {"unconcede", "take back my concession"})


def _parse_bid(words: Sequence[str]) -> int:
    """A bid written as a number or a word ("4", "four", "nil"); whether
    rule 2 allows it is the rules' to say, except a number above 13."""
    word = " ".join(words)
    # isdecimal, not isdigit: "²" is a digit that int() cannot read, and
    # int() refuses a number of thousands of digits. Either is text that
    # cannot be read as a bid, to refuse, never a fault of ours (ruling SP-14).
    if word.isdecimal() and len(word) <= 9:
        bid = int(word)
    elif word in _NUMBER_WORDS:
        bid = _NUMBER_WORDS[word]
    else:
        raise ParseError(
            f"I cannot read {word or 'nothing'!r} as a bid. Write, for example, 'bid 4' or "
            f"'bid nil'. The valid bids are {VALID_BIDS_TEXT}."
        )
    if bid > 13:
        raise ParseError(f"{bid} is not a valid bid. The valid bids are {VALID_BIDS_TEXT}.")
    return bid


def _long_name(code: str) -> str:
    """A card as the help shows it in full: "queen of hearts"."""
    card = card_of(code)
    rank = {"A": "ace", "K": "king", "Q": "queen", "J": "jack"}.get(card.rank, card.rank)
    return f"{rank} of {SUIT_NAMES[card.suit]}"
