"""The sealed-bid games: the one engine of rule text 000 (Game of Pure Skill)
and rule text 003 (Goofspiel).

Each round a prize is drawn at random from the referee's pack (the Pot) and
shown to everyone; every player bids one card of their own pack in secret;
the single highest bid takes the prize. The kinds differ only in their
option defaults, set by :class:`referee.games.pure_skill.PureSkill` and
:class:`referee.games.goofspiel.Goofspiel`. The rules are in
:mod:`referee.games.bidding.rules`, the grammar and help in
:mod:`referee.games.bidding.words`, what each seat sees and the mails' data
in :mod:`referee.games.bidding.views`.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.bidding.rules import BiddingState
from referee.games.bidding.verify import BiddingMailCheck
from referee.games.bidding.views import BiddingViews
from referee.games.bidding.words import BiddingWords
from referee.games.mailcheck import MailCheck

__all__ = ["BiddingGame"]


class BiddingGame(BiddingWords, BiddingViews):
    """Pure Skill and Goofspiel: simultaneous sealed bids for a shown prize.
    A kind sets ``kind``, ``title``, ``rule_text``, ``rank_names`` and
    ``defaults``."""

    state_type: ClassVar[type] = BiddingState
    mail_check: ClassVar[MailCheck] = BiddingMailCheck()
    templates: ClassVar[str] = "bidding"
    turn_word: ClassVar[str] = "round"
