"""Game of Pure Skill, as rule text 000 describes it: three players bid for
the thirteen spades with their own suits, the winner of a round takes the
prize alone, and a bot's total never wins (ruling PS-11, docs/rulings.md).

The shared rules of the sealed-bid games are in :mod:`referee.games.bidding`;
this class sets only what makes them the Game of Pure Skill.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.base import JSON
from referee.games.bidding import BiddingGame

__all__ = ["PureSkill"]


class PureSkill(BiddingGame):
    """Game of Pure Skill (rule text 000) on the shared rules of
    :mod:`referee.games.bidding`."""

    kind = "pure-skill"
    title = "Game of Pure Skill"
    rule_text = "000"
    #: Rule 8: a player who leaves is "replaced by a bot who plays randomly" (PS-13).
    replacement_plays_randomly = True
    #: Rule 4e: "the referee chooses a card randomly from their pack as their bid".
    deadline_rule: ClassVar[str] = "as rule 4e says"
    rank_names = True  # rule 4b: A is 1, J 11, Q 12, K 13; the packs are suits (PS-5)
    defaults: ClassVar[dict[str, JSON]] = {
        "players": 3,  # rule 2: "exactly 3 players"
        "cards": 13,  # rule 4a: a pack is a suit; rule 4c: "13 rounds"
        "tie": "discard",  # rule 4f: "the prize card is discarded" (PS-2)
        "take_bids": False,  # rule 4f: "all cards used for bidding are discarded" (PS-3)
        "bots_win": False,  # rule 8: bots "are not considered players" for 4h (PS-11)
        "prize_order": "random",  # rule 4d: "a random card from his pack of spades"
    }
