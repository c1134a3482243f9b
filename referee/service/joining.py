"""Joining by mail: anyone, a stranger included, who writes a game's join
command ("deal me in", 002 rule 1) to the referee or the list becomes a
member of a game that takes members by mail
(``Game.takes_members_by_mail``). They get a player row if they have none,
and a seat at the next position; the join itself then runs through
``commands.run_commands`` like any other line, as
``Action("join", (name, former))`` (``GameSession.join_args``).

Which game: the one the subject's tag (or the thread) names, else the only
active game that takes members by mail. Games that take no members by mail
are untouched: a stranger writing to them still gets the stranger answer.

Runs inside intake's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import GAMES, get_game
from referee.games.base import Game, ParseError
from referee.mail.compose import Composer
from referee.mail.inbound import InboundMessage, find_tag
from referee.service.commands import MAX_LINES
from referee.service.senders import Senders
from referee.service.session import GameSession
from referee.store import models as m


class Joining:
    """Finds the game a mail deals its sender into, and seats them."""

    def __init__(self, config: Config, composer: Composer, senders: Senders) -> None:
        self.config, self.composer, self.senders = config, composer, senders

    @cached_property
    def kinds(self) -> list[str]:
        """The kinds that take members by mail: known at the first mail, so
        a pass with none imports no engine for it."""
        return sorted(k for k, g in GAMES.items() if g.takes_members_by_mail)

    def game_to_join(self, db: Session, msg: InboundMessage,
                     player: m.Player | None) -> m.Game | None:
        """The active game ``msg`` deals its sender into, or None: the mail
        writes no join command of that game, names another game, or its
        sender plays a seat of it already (the engine answers them)."""
        if not self.kinds or not msg.sender or self.senders.is_referee(msg.sender):
            return None
        if msg.sender == self.config.referee.public_list:
            return None  # a list that rewrote From
        tag = find_tag(msg.subject) or self.composer.tag_from_ids(
            [*msg.references, *msg.in_reply_to])
        if tag:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            if game is None or game.kind not in self.kinds:
                return None
        else:
            open_ = list(db.scalars(select(m.Game).where(
                m.Game.status == "active", m.Game.kind.in_(self.kinds)).limit(2)))
            if len(open_) != 1:
                return None
            game = open_[0]
        if game.status != "active":
            return None
        if player is not None and any(s.player_id == player.id and not s.bot
                                      for s in game.seats):
            return None
        return game if asks_to_join(get_game(game.kind), msg.lines) else None

    def newcomer(self, db: Session, msg: InboundMessage, now: datetime) -> m.Player | None:
        """A player row for a stranger dealing themselves in; None, and
        nothing stored, if verified mode cannot vouch for the sender (they
        are then a stranger like any other)."""
        player = m.Player(address=msg.sender, name=msg.sender_name, created_at=now)
        verdict = self.senders.verify(msg, player)
        if self.config.auth.require == "verified" and not verdict.passed:
            return None
        db.add(player)
        db.flush()
        return player

    @staticmethod
    def seat(gs: GameSession, player: m.Player, msg: InboundMessage) -> m.Seat:
        """A seat for ``player`` at the next position, under a name no other
        seat of the game has (their name, else the mail's From name, else
        their address's local part; a number added if taken)."""
        game = gs.row
        base = (player.name or msg.sender_name or player.address.partition("@")[0]).strip()
        base = base or "Member"
        taken = {s.name.strip().lower() for s in game.seats}
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            name = f"{base} {n}"
        seat = m.Seat(position=len(game.seats) + 1, player=player, name=name)
        game.seats.append(seat)
        gs.db.flush()
        return seat


def asks_to_join(engine: Game[Any], lines: Sequence[str]) -> bool:
    """Whether one of the command lines of a mail is ``engine``'s join command."""
    for line in lines[:MAX_LINES]:
        try:
            action = engine.parse(line)
        except ParseError:
            continue
        if action is not None and action.verb == "join":
            return True
    return False
