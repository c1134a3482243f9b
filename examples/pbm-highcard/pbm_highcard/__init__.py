"""High Card, a game refereed by mail by pbm-referee, from a package of
its own: the example of docs/plugins.md in the referee's checkout.

Each player is dealt a hand of cards from a shuffled 52-card deck. Every
round each plays one card of their hand, sealed, by mail to the referee
alone; when all are in, the highest card (ace high, and on equal ranks
spades over hearts over diamonds over clubs) takes the round. When the
hands are played out, the most rounds taken wins.
"""

from pbm_highcard.game import HighCard, HighCardState

__all__ = ["HighCard", "HighCardState"]
