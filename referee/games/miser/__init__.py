"""Miser by mail: rule text 004 (Miser) and its rulings MI-1 … MI-15
(docs/rulings.md).

Three or more players, as many as the deck deals a card each, 20 pennies
each and the deck dealt equally, 52 mod n cards removed face down (ruling
MI-1). On her turn a player passes (3 pennies to the centre, ruling
MI-4), takes out a contract with a partner against a victim (ruling MI-6),
attacks another player (rulings MI-7, MI-12) or bids for the centre (rulings
MI-8, MI-9). The game ends after the first exchange that leaves a player
with no pennies; the most pennies wins, and a tie for most is a tie (ruling
MI-10).

The state and the rules are in :mod:`referee.games.miser.rules`, the
command grammar and the help in :mod:`referee.games.miser.words`, what each
seat and the public may see and the data of each mail in
:mod:`referee.games.miser.views`.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.mailcheck import MailCheck
from referee.games.miser.rules import MiserState
from referee.games.miser.verify import MiserMailCheck
from referee.games.miser.views import MiserViews
from referee.games.miser.words import MiserWords

__all__ = ["Miser"]


class Miser(MiserWords, MiserViews):
    """Rule text 004. Options: ``pennies`` (20 each) and ``wager`` (3, the
    most a player may wager on a contract or an attack)."""

    kind = "miser"
    title = "Miser"
    state_type = MiserState
    mail_check: ClassVar[MailCheck] = MiserMailCheck()
    demo_with_bots: ClassVar[bool] = True
    #: The steps of an exchange (an attack declared, a contract accepted, a
    #: card put face down, a bid or raise in an auction, a side's flip):
    #: lines in the next mail of a player in ``mail turns``, and never a post
    #: to the list, which hears what the turn came to in the turn's report.
    routine_notices: ClassVar[frozenset[str]] = frozenset(
        {"attack", "contract", "down", "auction", "flip"})
