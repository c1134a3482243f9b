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
command grammar and the help in :mod:`referee.games.miser.words` (the rules
read by their words), what each seat and the public may see and the data
of each mail in :mod:`referee.games.miser.views` (an object the game holds
and gives the rules), the sensible bot in :mod:`referee.games.miser.bot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from referee.games.base import JSON, Action, IllegalAction, PageTable
from referee.games.draws import Draws
from referee.games.mailcheck import MailCheck
from referee.games.miser.bot import choose_move
from referee.games.miser.rules import MiserState, owed_step
from referee.games.miser.verify import MiserMailCheck
from referee.games.miser.views import MiserViews, seat_view
from referee.games.miser.words import MiserWords

__all__ = ["Miser"]


class Miser(MiserWords):
    """Rule text 004, read by its words and shown by its views
    (:attr:`views`). Options: ``pennies`` (20 each) and ``wager`` (3, the
    most a player may wager on a contract or an attack)."""

    kind = "miser"
    title = "Miser"
    state_type = MiserState
    mail_check: ClassVar[MailCheck] = MiserMailCheck()
    demo_with_bots: ClassVar[bool] = True
    #: The page folds its history into turns at these events.
    history_ends: ClassVar[frozenset[str]] = frozenset({"resolved"})
    history_word: ClassVar[str] = "Turn"
    #: Its mails number no turn (rule text 004 has none).
    shows_turn_numbers: ClassVar[bool] = False
    views: MiserViews
    #: The steps of an exchange (an attack declared, a contract accepted, a
    #: card put face down, a bid or raise in an auction, a side's flip):
    #: lines in the next mail of a player in ``mail turns``, and never a post
    #: to the list, which hears what the turn came to in the turn's report.
    #: A player's prompt, not sent when a standing order moves for them.
    prompt_notices: ClassVar[frozenset[str]] = frozenset({"your_move"})
    routine_notices: ClassVar[frozenset[str]] = frozenset(
        {"attack", "contract", "down", "auction", "flip"})

    def __init__(
        self,
        *,
        deal: Sequence[Sequence[str]] | None = None,
        draw: Sequence[str] | None = None,
    ) -> None:
        super().__init__(deal=deal, draw=draw)
        self.views = MiserViews(self)

    def sensible_bot_action(self, state: MiserState, seat: int, draws: Draws) -> Action:
        """The step the seat owes, chosen from its own view
        (:func:`~referee.games.miser.views.seat_view`)."""
        player = self._player(state, seat)
        if owed_step(state, player) is None:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        rng = self.move_rng(state, seat, draws, "bot")
        return choose_move(seat_view(state, player), rng)

    # -- what people see: the views ---------------------------------------------

    def view(self, state: MiserState, seat: int | None) -> dict[str, JSON]:
        return self.views.view(state, seat)

    def summary(self, state: MiserState) -> dict[str, JSON]:
        return self.views.summary(state)

    def status(self, state: MiserState) -> str:
        return self.views.status(state)

    def asks(self, state: MiserState, seat: int) -> str | None:
        return self.views.asks(state, seat)

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        return self.views.page_table(view, events)
