"""Spades by mail, as rule text 001 (Spades) and rulings SP-1 … SP-18
(docs/rulings.md) describe it.

Four players in two teams: a secret deal of 13 cards each, public bids
(0 = nil, 2 … 13, never 1), thirteen tricks with spades trumping, team
contracts doubled at a team bid of 10 or more, nil bonuses, cumulative
sandbags, a -100 penalty for each misplay with forfeits, and a game to 500.

The state, the moves and the scoring are in :mod:`.rules`, the command
grammar and the help in :mod:`.words` (the rules read by their words), and
what each seat and the public may see, with the data of each mail, in
:mod:`.views`: an object the game holds and gives the rules. The sensible
bot is :mod:`.bot`, a function of the seat's own view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from referee.games.base import JSON, Action, PageTable
from referee.games.draws import Draws
from referee.games.mailcheck import MailCheck
from referee.games.spades.bot import choose_bid, choose_card
from referee.games.spades.rules import BIDDING, SpadesState
from referee.games.spades.verify import SpadesMailCheck
from referee.games.spades.views import SpadesViews, seat_view
from referee.games.spades.words import SpadesWords


class Spades(SpadesWords):
    """Rule text 001, the game the registry names: its rules
    (:class:`~referee.games.spades.rules.SpadesRules`), read by its words
    and shown by its views (:attr:`views`, a
    :class:`~referee.games.spades.views.SpadesViews`).
    ``Spades(deals=..., seating=...)`` fixes the deals and the playing order
    for tests."""

    kind = "spades"
    title = "Spades"
    mail_check: ClassVar[MailCheck] = SpadesMailCheck()
    demo_with_bots: ClassVar[bool] = True  # a game to 500 is some 1,300 mails
    #: A card played, a bid, a trick taken: lines in a player's next mail
    #: ("your turn", the round report) unless they ask for ``mail all``.
    routine_notices: ClassVar[frozenset[str]] = frozenset({"play", "bid", "trick"})
    default_mail_mode: ClassVar[str] = "turns"
    #: A player's prompt, not sent when their card is played for them.
    prompt_notices: ClassVar[frozenset[str]] = frozenset({"your_turn"})
    #: Its mails name the bidding and the tricks, never a turn's number.
    shows_turn_numbers: ClassVar[bool] = False
    #: Ruling SP-17: hands are never published, not even after the hand, and
    #: the seed would give them all: each deal is committed per hand instead.
    reveals_seed: ClassVar[bool] = False
    state_type = SpadesState
    views: SpadesViews
    #: The page folds its history into rounds at these events.
    history_opens: ClassVar[frozenset[str]] = frozenset({"deal"})

    def __init__(
        self,
        *,
        deals: Sequence[Sequence[str | Sequence[str]]] | None = None,
        seating: Sequence[int] | None = None,
    ) -> None:
        super().__init__(deals=deals, seating=seating)
        self.views = SpadesViews(self)

    def sensible_bot_action(self, state: SpadesState, seat: int, draws: Draws) -> Action:
        """A bid from the hand, or a card played as a partner, from the
        seat's own view (:func:`~referee.games.spades.views.seat_view`)."""
        self._due(state, seat)
        rng = self.move_rng(state, seat, draws, "bot")
        view = seat_view(state, state.order.index(seat))
        if state.phase == BIDDING:
            return Action("bid", (choose_bid(view, rng),))
        return Action("play", (choose_card(view, rng),))

    # -- what people see: the views ---------------------------------------------

    def view(self, state: SpadesState, seat: int | None) -> dict[str, JSON]:
        return self.views.view(state, seat)

    def summary(self, state: SpadesState) -> dict[str, JSON]:
        return self.views.summary(state)

    def status(self, state: SpadesState) -> str:
        return self.views.status(state)

    def asks(self, state: SpadesState, seat: int) -> str | None:
        return self.views.asks(state, seat)

    def receipt(self, state: SpadesState, seat: int, moves: Sequence[Action]) -> str:
        return self.views.receipt(state, seat, moves)

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        return self.views.page_table(view, events)


__all__ = ["Spades"]
