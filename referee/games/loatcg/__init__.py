"""The Land of Agora trading-card tournament (LoAtTCG), rule text 002, as
its rulings TCG-1 … TCG-22 read it (docs/rulings.md).

The referee is the Dealor (seat 0). Members deal themselves in at any time
and draw 5 basic cards; they discard, draw, take from the Discard Pile,
craft refined cards, pay apples for the Dealor to reveal Scoring
Instructions, and trade among themselves, publicly, privately or secretly
(definition F). A Round Report ends each round but the last; the Freeze
ends the tournament, and the highest Hand Scores win.

:mod:`.rules` holds the state and the rules, :mod:`.words` the command
grammar and the help, :mod:`.views` what each member and the public may see
and the data of each mail; :mod:`.instructions` is the Scoring Instructions
language of rule 4.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.loatcg.rules import LoatcgState
from referee.games.loatcg.verify import LoatcgMailCheck
from referee.games.loatcg.views import LoatcgViews
from referee.games.loatcg.words import LoatcgWords
from referee.games.mailcheck import MailCheck


class Loatcg(LoatcgWords, LoatcgViews):
    """Rule text 002. Options: ``instructions`` (the Scoring Instructions in
    the language of :mod:`referee.games.loatcg.instructions`; default the rule text's
    EXAMPLE set) and ``report_days`` (4 to 7, default 7)."""

    kind = "loatcg"
    title = "Land of Agora tournament"
    state_type = LoatcgState
    mail_check: ClassVar[MailCheck] = LoatcgMailCheck()
    demo_with_bots: ClassVar[bool] = True
    #: A member's public act on their own hand (joining, a discard, a draw,
    #: crafting, a take, a withdrawn offer): lines in the next mail of a
    #: member in ``mail turns``, and never a post to the list. An offer and
    #: its trade are dealings others answer ("accept 3"): mails of their
    #: own, like the Round Reports.
    routine_notices: ClassVar[frozenset[str]] = frozenset(
        {"joined", "discard", "draw", "craft", "withdrawn", "take"})
    takes_members_by_mail: ClassVar[bool] = True
    join_command: ClassVar[str] = "deal me in"
    #: A transcript says only what the request's audience saw (ruling TCG-15).
    secret_transcripts: ClassVar[bool] = False
