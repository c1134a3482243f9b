"""The sealed-bid games: the one engine of rule text 000 (Game of Pure Skill)
and rule text 003 (Goofspiel).

Each round a prize is drawn at random from the referee's pack (the Pot) and
shown to everyone; every player bids one card of their own pack in secret;
the single highest bid takes the prize. The kinds differ only in their
option defaults, set by :class:`referee.games.pure_skill.PureSkill` and
:class:`referee.games.goofspiel.Goofspiel`. The rules are in
:mod:`referee.games.bidding.rules`, the grammar and help in
:mod:`referee.games.bidding.words` (the rules read by their words), what
each seat sees and the mails' data in :mod:`referee.games.bidding.views`
(an object the game holds and gives the rules), the sensible bot in
:mod:`referee.games.bidding.bot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from referee.games.base import JSON, Action, PageTable
from referee.games.bidding.bot import choose_bid
from referee.games.bidding.rules import BiddingState
from referee.games.bidding.verify import BiddingMailCheck
from referee.games.bidding.views import BiddingViews
from referee.games.bidding.words import BiddingWords
from referee.games.draws import Draws
from referee.games.mailcheck import MailCheck

__all__ = ["BiddingGame"]


class BiddingGame(BiddingWords):
    """Pure Skill and Goofspiel: simultaneous sealed bids for a shown prize,
    the rules read by their words and shown by their views (:attr:`views`).
    A kind sets ``kind``, ``title``, ``rule_text``, ``rank_names`` and
    ``defaults``."""

    state_type: ClassVar[type] = BiddingState
    mail_check: ClassVar[MailCheck] = BiddingMailCheck()
    templates: ClassVar[str] = "bidding"
    turn_word: ClassVar[str] = "round"
    #: The page folds its history into rounds at these events.
    history_opens: ClassVar[frozenset[str]] = frozenset({"prize"})
    views: BiddingViews

    def __init__(self) -> None:
        self.views = BiddingViews(self)

    def sensible_bot_action(self, state: BiddingState, seat: int, draws: Draws) -> Action:
        """The card :func:`~referee.games.bidding.bot.choose_bid` weighs best,
        from the seat's own view (:meth:`BiddingViews.bidder_view`)."""
        rng = self.move_rng(state, seat, draws, "bot")
        return Action("bid", (choose_bid(self.views.bidder_view(state, seat), rng),))

    # -- what people see: the views ---------------------------------------------

    def view(self, state: BiddingState, seat: int | None) -> dict[str, JSON]:
        return self.views.view(state, seat)

    def summary(self, state: BiddingState) -> dict[str, JSON]:
        return self.views.summary(state)

    def status(self, state: BiddingState) -> str:
        return self.views.status(state)

    def asks(self, state: BiddingState, seat: int) -> str | None:
        return self.views.asks(state, seat)

    def receipt(self, state: BiddingState, seat: int, moves: Sequence[Action]) -> str:
        return self.views.receipt(state, seat, moves)

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        return self.views.page_table(view, events)
