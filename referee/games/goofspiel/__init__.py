"""Goofspiel, as rule text 003 describes it: two players bid for each of six
prizes with their own cards 1 to 6, and the winner of a round takes the
prize and both bids (ruling G2-1, docs/rulings.md).

The shared rules of the sealed-bid games are in :mod:`referee.games.bidding`;
this class sets only what makes them Goofspiel. Rule text 003 has no rule
numbers: the comments quote its words.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.base import JSON
from referee.games.bidding import BiddingGame

__all__ = ["Goofspiel"]


class Goofspiel(BiddingGame):
    """Goofspiel (rule text 003) on the shared rules of :mod:`referee.games.bidding`."""

    kind = "goofspiel"
    title = "Goofspiel"
    rule_text = "003"
    rank_names = False  # "6 cards labeled 1 through 6": numbers, no suits
    defaults: ClassVar[dict[str, JSON]] = {
        "players": 2,  # "2 Players (A and B)"
        "cards": 6,  # "each given 6 cards labeled 1 through 6"
        "tie": "carry",  # "all the cards remain in the pot" (G2-2, G2-3, G2-4)
        "take_bids": True,  # "wins all 3 cards" (G2-1)
        "bots_win": True,  # the text has no bots: a bot seat's total counts
        "prize_order": "random",  # "one of the Pot's cards is randomly selected" (G2-11)
    }
