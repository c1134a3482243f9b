"""Reading a bid, and the help a seat gets, in the sealed-bid games.

A bid names one card of the bidder's pack: "bid 5", "I bid K", "my bid is
queen". Pure Skill's packs are suits (ruling PS-5, docs/rulings.md), so
"bid QH" and "bid queen of hearts" name a card there too; whether the
bidder holds it is for the rules (:mod:`referee.games.bidding.rules`).
"""

from __future__ import annotations

import re
from typing import ClassVar

from referee.games.base import HOUSE_RULE, JSON, Action, DeadlineMove, ParseError, Result
from referee.games.bidding.rules import BiddingRules, BiddingState
from referee.games.cards import SUITS, Card, parse_rank, rank_value_ace_low


class BiddingWords(BiddingRules):
    """The command grammar of the sealed-bid games, and their help text."""

    verbs: ClassVar[frozenset[str]] = frozenset({"bid", "bids", "play"})
    spelt_verbs: ClassVar[tuple[str, ...]] = ("bid", "play")

    #: Why the referee bids for a player whose bid did not come: the rule
    #: text's rule that says so, else the house rule (Goofspiel's text is
    #: silent: ruling G2-8).
    deadline_rule: ClassVar[str] = HOUSE_RULE

    _BID = re.compile(r"^(?:i\s+)?(?:bid|bids|play|my bid is)\s*[:=]?\s*(.*?)[.!]*$", re.I)

    def parse(self, line: str) -> Action | None:
        m = self._BID.match(line.strip())
        if not m:
            return None
        word = m.group(1).strip()
        rank = parse_rank(word)
        if rank is not None:
            return Action("bid", (rank_value_ace_low(rank),))
        # Pure Skill's packs are suits (PS-5), so "bid QH" and "bid queen of
        # hearts" name a card too; apply() refuses a suit the player lacks.
        card = Card.parse(re.sub(r"^the\s+", "", word, flags=re.I)) if self.rank_names else None
        if card is None:
            raise ParseError(
                f"I could not read {word!r} as a card; bid one card of your pack, "
                f"for example 'bid {self._name(3)}'."
            )
        return Action("bid", (rank_value_ace_low(card.rank), card.suit))

    order_help: ClassVar[tuple[str, ...]] = (
        "bid 6 if prize 6   that bid, in the round whose prize is that card",
    )

    _IF_PRIZE = re.compile(r"^(?:i\s+)?(?:bid|play)\s+(.+?)\s+(?:if|when)\s+(?:the\s+)?"
                           r"prize\s+(?:is\s+)?(?:the\s+)?(\S+)[.!]*$", re.I)

    def parse_order(self, line: str) -> JSON | None:
        """A standing bid (issue 37): ``bid 6 if prize 6``, a bid kept secret
        for the round whose prize is that card. Followed by the rules
        (:meth:`follow_orders`)."""
        m = self._IF_PRIZE.match(line.strip())
        if not m:
            return None
        bid = self.parse(f"bid {m.group(1)}")
        rank = parse_rank(m.group(2))
        if bid is None or rank is None:
            raise ParseError(f"I could not read {m.group(2)!r} as a prize; write, for example, "
                             f"'bid {self._name(3)} if prize {self._name(3)}'.")
        prize = rank_value_ace_low(rank)
        return {"kind": "if_prize", "bid": list(bid.args), "prize": prize,
                "text": f"{self.read_as(bid)} if the prize is {self._name(prize)}"}

    def read_as(self, action: Action) -> str:
        """A bid as its bidder writes it: ``bid 5``, ``bid QH`` (the referee's
        own choice at a deadline, marked in its arguments, reads the same)."""
        if action.verb == "bid" and action.args:
            suit = action.args[1] if len(action.args) > 1 and action.args[1] in SUITS else ""
            return f"bid {self._name(int(action.args[0]))}{suit}"
        return super().read_as(action)

    def deadline_move(self, before: BiddingState, seat: int, action: Action,
                      result: Result[BiddingState]) -> DeadlineMove:
        """A card drawn at random from the player's pack as their bid: sealed
        like any bid, so the table learns the card with the round's report,
        the player now."""
        return DeadlineMove(
            "bid", "drew a card at random from {their} pack as {their} bid",
            did_secret=f"bid {self._name(int(action.args[0]))} for {{them}}, a card drawn "
                       "at random from {their} pack",
            rule=self.deadline_rule)

    def help(self, state: BiddingState, seat: int | None) -> str:
        if state.over:
            return "The game is over; the final report has the result."
        lines = [f"Round {state.round} of {state.options['cards']}: the prize is "
                 f"{self._prize(state.prize or 0)}."]
        if state.carry:
            lines.append(f"Carried over from tied rounds: {self._cards(state.carry)} "
                         f"({sum(state.carry)} points).")
        if seat is not None:
            i = seat - 1
            lines.append(f"Your pack: {self._cards(state.packs[i])}.")
            if str(seat) in state.bids:
                lines.append(f"You have bid {self._name(state.bids[str(seat)])} "
                             "this round; bids are final. Wait for the round report.")
            else:
                lines.append("Bid one card of your pack in a mail to the referee alone, "
                             f"for example:\n\n  bid {self._name(state.packs[i][-1])}\n")
        return "\n".join(lines)
