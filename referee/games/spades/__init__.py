"""Spades by mail, as rule text 001 (Spades) and rulings SP-1 … SP-18
(docs/rulings.md) describe it.

Four players in two teams: a secret deal of 13 cards each, public bids
(0 = nil, 2 … 13, never 1), thirteen tricks with spades trumping, team
contracts doubled at a team bid of 10 or more, nil bonuses, cumulative
sandbags, a -100 penalty for each misplay with forfeits, and a game to 500.

The state, the moves and the scoring are in :mod:`.rules`, the command
grammar and the help in :mod:`.words`, and what each seat and the public
may see, with the data of each mail, in :mod:`.views`.
"""

from __future__ import annotations

from typing import ClassVar

from referee.games.mailcheck import MailCheck
from referee.games.spades.rules import SpadesState
from referee.games.spades.verify import SpadesMailCheck
from referee.games.spades.views import SpadesViews
from referee.games.spades.words import SpadesWords


class Spades(SpadesWords, SpadesViews):
    """Rule text 001, the game the registry names: its rules
    (:class:`~referee.games.spades.rules.SpadesRules`), read by its words
    and shown by its views. ``Spades(deals=..., seating=...)`` fixes the
    deals and the playing order for tests."""

    kind = "spades"
    title = "Spades"
    mail_check: ClassVar[MailCheck] = SpadesMailCheck()
    demo_with_bots: ClassVar[bool] = True  # a game to 500 is some 1,300 mails
    #: A card played, a bid, a trick taken: lines in a player's next mail
    #: ("your turn", the round report) unless they ask for ``mail all``.
    routine_notices: ClassVar[frozenset[str]] = frozenset({"play", "bid", "trick"})
    default_mail_mode: ClassVar[str] = "turns"
    #: Its mails name the bidding and the tricks, never a turn's number.
    shows_turn_numbers: ClassVar[bool] = False
    #: Ruling SP-17: hands are never published, not even after the hand, and
    #: the seed would give them all: each deal is committed per hand instead.
    reveals_seed: ClassVar[bool] = False
    state_type = SpadesState


__all__ = ["Spades"]
