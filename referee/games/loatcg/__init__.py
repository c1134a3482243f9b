"""The Land of Agora trading-card tournament (LoAtTCG), rule text 002, as
its rulings TCG-1 … TCG-22 read it (docs/rulings.md).

The referee is the Dealor (seat 0). Members deal themselves in at any time
and draw 5 basic cards; they discard, draw, take from the Discard Pile,
craft refined cards, pay apples for the Dealor to reveal Scoring
Instructions, and trade among themselves, publicly, privately or secretly
(definition F). A Round Report ends each round but the last; the Freeze
ends the tournament, and the highest Hand Scores win.

:mod:`.rules` holds the state and the rules, :mod:`.words` the command
grammar and the help (the rules read by their words), :mod:`.views` what
each member and the public may see and the data of each mail (an object the
game holds and gives the rules), :mod:`.bot` the sensible bot;
:mod:`.instructions` is the Scoring Instructions language of rule 4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from referee.games.base import JSON, Action, IllegalAction, PageTable
from referee.games.draws import Draws
from referee.games.loatcg.bot import choose_action
from referee.games.loatcg.rules import LoatcgState, member_at
from referee.games.loatcg.verify import LoatcgMailCheck
from referee.games.loatcg.views import LoatcgViews, member_view
from referee.games.loatcg.words import LoatcgWords
from referee.games.mailcheck import MailCheck


class Loatcg(LoatcgWords):
    """Rule text 002, read by its words and shown by its views
    (:attr:`views`). Options: ``instructions`` (the Scoring Instructions in
    the language of :mod:`referee.games.loatcg.instructions`; default the rule text's
    EXAMPLE set) and ``report_days`` (4 to 7, default 7)."""

    kind = "loatcg"
    title = "Land of Agora tournament"
    state_type = LoatcgState
    mail_check: ClassVar[MailCheck] = LoatcgMailCheck()
    demo_with_bots: ClassVar[bool] = True
    #: A member's public act on their own hand (joining, a discard, a draw,
    #: crafting, a take, a withdrawn offer): lines in the next mail of a
    #: member in ``mail turns``, and no post to the list, but a join. An offer and
    #: its trade are dealings others answer ("accept 3"): mails of their
    #: own, like the Round Reports.
    routine_notices: ClassVar[frozenset[str]] = frozenset(
        {"joined", "discard", "draw", "craft", "withdrawn", "take"})
    #: But a newcomer is posted to the list (the README: "the list hears it").
    listed_notices: ClassVar[frozenset[str]] = frozenset({"joined"})
    takes_members_by_mail: ClassVar[bool] = True
    join_command: ClassVar[str] = "deal me in"
    option_files: ClassVar[Mapping[str, str]] = {
        "instructions": "the Scoring Instructions (see docs/loatcg-instructions.md)"}
    #: A transcript says only what the request's audience saw (ruling TCG-15).
    secret_transcripts: ClassVar[bool] = False
    #: The page folds its history into rounds at these events.
    history_ends: ClassVar[frozenset[str]] = frozenset({"round_report", "freeze"})
    views: LoatcgViews

    def __init__(self) -> None:
        self.views = LoatcgViews()

    def sensible_bot_action(self, state: LoatcgState, seat: int, draws: Draws) -> Action:
        """The member's action, chosen from eir own view
        (:func:`~referee.games.loatcg.views.member_view`)."""
        member = member_at(state, seat)
        if member is None or state.frozen:
            raise IllegalAction("Nothing is open to this seat.")
        rng = self.move_rng(state, seat, draws, "bot")
        return choose_action(member_view(state, member), rng)

    # -- what people see: the views ---------------------------------------------

    def view(self, state: LoatcgState, seat: int | None) -> dict[str, JSON]:
        return self.views.view(state, seat)

    def summary(self, state: LoatcgState) -> dict[str, JSON]:
        return self.views.summary(state)

    def status(self, state: LoatcgState) -> str:
        return self.views.status(state)

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        return self.views.page_table(view, events)
