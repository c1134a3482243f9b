"""Joining by mail: anyone, a stranger included, who writes a game's join
command ("deal me in", 002 rule 1) to the referee or the list becomes a
member of a game that takes members by mail
(``Game.takes_members_by_mail``). They get a player row if they have none,
and a seat at the next position; the join itself then runs through
``play.commands.run_commands`` like any other line, as
``Action("join", (name, former))`` (``GameSession.join_args``).

Which game: the one the subject's tag (or the thread) names, else the only
active game that takes members by mail. Games that take no members by mail
are untouched: a stranger writing to them still gets the stranger answer.

Runs inside intake's transaction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import GAMES, get_game
from referee.games.base import Game, ParseError
from referee.service.intake.letter import Letter
from referee.service.intake.senders import Senders
from referee.service.play.commands import MAX_LINES
from referee.service.play.session import MAX_SEAT_NAME, GameSession, unique_name
from referee.store import models as m

#: A stranger is told of at most so many games to join.
OPEN_GAMES_TOLD = 5
#: A name that holds an address ("victim@example.org", from a From's
#: quoted name or comment) is no name of a player (:func:`own_name`).
_ADDRESS = re.compile(r"[^\s@]@[^\s@]")


class Joining:
    """Finds the game a mail deals its sender into, and seats them."""

    def __init__(self, config: Config, senders: Senders) -> None:
        self.config, self.senders = config, senders

    @cached_property
    def kinds(self) -> list[str]:
        """The kinds that take members by mail: known at the first mail, so
        a pass with none imports no engine for it."""
        return sorted(k for k, g in GAMES.items() if g.takes_members_by_mail)

    def asks_to_join(self, letter: Letter) -> bool:
        """Whether a line of the mail is the join command of a game that takes
        members by mail (the rest need not look for a game to join)."""
        return any(asks_to_join(get_game(kind), letter.msg.lines) for kind in self.kinds)

    def game_to_join(self, db: Session, letter: Letter,
                     player: m.Player | None) -> m.Game | None:
        """The active game the mail deals its sender into, or None: the mail
        writes no join command of that game, names another game, or its
        sender plays a seat of it already (the engine answers them)."""
        msg = letter.msg
        if not self.kinds or not msg.sender or letter.from_referee:
            return None
        if msg.sender == self.config.referee.public_list:
            return None  # a list that rewrote From
        tag = letter.tag
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

    def open_games(self, db: Session, letter: Letter) -> list[dict[str, str]]:
        """What a stranger may join by mail, to be told how: the game the
        mail names if it takes members by mail (none if it names another),
        else every active one (a few, oldest first); each its tag, title and
        the line that joins it."""
        if not self.kinds:
            return []
        q = select(m.Game).where(m.Game.status == "active", m.Game.kind.in_(self.kinds))
        if letter.tag:
            q = q.where(m.Game.tag == letter.tag)
        games = db.scalars(q.order_by(m.Game.id).limit(OPEN_GAMES_TOLD))
        return [{"tag": g.tag, "title": get_game(g.kind).title,
                 "join": get_game(g.kind).join_command} for g in games]

    def newcomer(self, db: Session, letter: Letter) -> m.Player | None:
        """A player row for a stranger dealing themselves in; None, and
        nothing stored, if verified mode cannot vouch for the sender (they
        are then a stranger like any other)."""
        msg = letter.msg
        player = m.Player(address=msg.sender, name=own_name(msg.sender_name),
                          created_at=letter.now)
        verdict = self.senders.verify(letter, player)
        if self.config.auth.require == "verified" and not verdict.passed:
            return None
        db.add(player)
        db.flush()
        return player

    @staticmethod
    def seat(gs: GameSession, player: m.Player, sender_name: str) -> tuple[m.Seat, str | None]:
        """A seat for ``player`` at the next position, under their name
        (their name, else the mail's From name, else their address's local
        part; never a name that holds an address, which the others would
        read as the player's). Another person's seat of the same name adds a
        number to it ("Ann 2"); the person's own earlier seat does not:
        someone who comes back keeps their name, and the earlier seat, a
        bot's now, gets another (``GameSession.join_args``).

        Returns the seat and, when the name had to be shortened to fit
        (:data:`MAX_SEAT_NAME`, with its number), a note that tells the
        player so, else None."""
        game = gs.row
        base = (own_name(player.name) or own_name(sender_name)
                or player.address.partition("@")[0].strip() or "Member")
        taken = {s.name.strip().casefold() for s in game.seats if s.player_id != player.id}
        name = unique_name(base, taken)
        seat = m.Seat(position=len(game.seats) + 1, player=player, name=name)
        game.seats.append(seat)
        gs.db.flush()
        if name.startswith(base):
            return seat, None
        return seat, (f"Your name is too long for a seat here (at most {MAX_SEAT_NAME} "
                      f"characters), so you play as: {name}")


def own_name(name: str) -> str:
    """``name`` stripped, or "" if it holds an address: a From's quoted name
    or comment ("victim@example.org") is no name to seat or greet anyone by."""
    name = name.strip()
    return "" if _ADDRESS.search(name) else name


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
