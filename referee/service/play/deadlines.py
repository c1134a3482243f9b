"""The deadline sweep: reminders before a deadline, and the rules' move for
every seat past one (MI-15, SP-15, 000 rule 8), in the order they fell due;
then the day's digests of mail held for players (``quiet``).

A sweep costs what is due, not what is stored: one indexed query finds the
games with a deadline or a reminder due (``deadlines.due_at`` and
``deadlines.remind_at``), and nothing is written unless something fires.
Each due game is its own transaction: a fault in one game rolls back only
that game, and the clocks of the others keep running. A game whose package
cannot serve it now (``guests``) is left as it is, and its deadlines fire
once the package is back. On PostgreSQL the
game's row is claimed with ``FOR UPDATE SKIP LOCKED``, so several referee
processes share the sweep and never fire one deadline twice.

When a player is reminded (``Deadline.remind_at``) is set where a deadline
is made or moved, by ``GameSession.schedule_reminder``; a reminder sent
clears it here.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select, union
from sqlalchemy.orm import Session, sessionmaker

from referee.games import PackageFault
from referee.mail.compose import Composer
from referee.service.outgoing.delivery import Delivery
from referee.service.play.guests import Unserved, faulted
from referee.service.play.session import GameSession
from referee.store import models as m
from referee.store.db import cannot_use, now_utc

log = logging.getLogger(__name__)


class DeadlineSweep:
    """Fires due reminders and timeouts across all games."""

    def __init__(self, sessions: sessionmaker[Session], composer: Composer,
                 delivery: Delivery) -> None:
        self.sessions, self.composer, self.delivery = sessions, composer, delivery
        #: The kinds whose games' deadlines were found waiting for their package.
        self.stalled: set[str] = set()

    def due_games(self, now: datetime) -> list[int]:
        """The active games with a deadline or a reminder due at ``now``:
        one query, through the indexes on ``due_at`` and ``remind_at``."""
        # Joined, not ``IN (the active games)``: that read the id of every
        # active game; this reads the due deadlines and their games alone.
        active = m.Game.status == "active"
        q = union(
            select(m.Deadline.game_id).join(m.Game, m.Game.id == m.Deadline.game_id)
            .where(m.Deadline.due_at <= now, active),
            select(m.Deadline.game_id).join(m.Game, m.Game.id == m.Deadline.game_id)
            .where(m.Deadline.remind_at <= now, active),
        )
        with self.sessions() as db:
            return sorted(db.scalars(q))

    def fire(self, now: datetime | None = None) -> int:
        """Send due reminders and act for seats past their deadline; returns
        how many timeouts fired."""
        now = now or now_utc()
        fired = 0
        for game_id in self.due_games(now):
            try:
                fired += self._fire_game(game_id, now)
            except Unserved as e:
                # Its package cannot serve it now: no move is made for
                # anyone; once it is back, what fell due meanwhile fires.
                self._stalled(e)
            except PackageFault as e:
                # Its package raised (its bot, its timeout move): rolled
                # back, and the same as above from now on.
                self._stalled(faulted(e, self._tag(game_id), game_id))
            except Exception as e:
                if cannot_use(e):
                    raise  # away, full or damaged: the clock of every game waits
                # A fault in one game must not stop the clock of the others;
                # its transaction rolled back, so the next pass tries again.
                log.exception("deadlines of game %s failed", game_id)
        with self.sessions.begin() as db:
            # Mail held for players who asked for less (``mail digest``)
            # goes out once it is a day old.
            self.delivery.quiet.send_stale(db, now)
        return fired

    def _tag(self, game_id: int) -> str | None:
        with self.sessions() as db:
            return db.scalar(select(m.Game.tag).where(m.Game.id == game_id))

    def _stalled(self, unserved: Unserved) -> None:
        """Say once a process, a line a kind, that a kind's deadlines wait."""
        if unserved.kind in self.stalled:
            return
        self.stalled.add(unserved.kind)
        log.warning("the deadlines of %s wait: %s", unserved.tag, unserved.what,
                    extra={"game": unserved.tag})

    def _fire_game(self, game_id: int, now: datetime) -> int:
        fired = 0
        with self.sessions.begin() as db:
            game = claim_game(db, game_id)
            if game is None or game.status != "active":
                return 0  # gone, finished, or being refereed by another process
            gs = GameSession(self.delivery.config, self.composer, db, game, now)
            for d in gs.deadlines():
                if d.due_at <= now or not d.seat:
                    continue
                self._remind(gs, d)
            # Act for absent seats in the order their deadlines fell due;
            # each timeout may change what is pending, so look again.
            while not gs.engine.is_over(gs.state):
                due = [d for d in gs.deadlines() if d.due_at <= now]
                if not due:
                    break
                log.info("%s: the deadline of %s passed; the rules move for them",
                         game.tag, gs.seat_name(due[0].seat))
                gs.timeout(due[0].seat, due[0].due_at)
                fired += 1
                gs.run_bots()
                gs.reconcile_deadlines()
            self.delivery.deliver(db, gs.finish())
        return fired

    def _remind(self, gs: GameSession, d: m.Deadline) -> None:
        """Remind a seat's player once, ``reminder`` before the deadline."""
        game, now = gs.row, gs.now
        if d.remind_at is None or d.remind_at > now or d.reminded_at is not None:
            return
        seat = game.seats[d.seat - 1]
        if seat.bot or not seat.player:
            d.remind_at = None  # a bot is never reminded: not due again
            return
        d.reminded_at = now
        gs.schedule_reminder(d)  # reminded: not due again
        subject, body = self.composer.render(
            gs.engine.templates or gs.engine.kind, "reminder",
            {**gs.context(d.seat), "what": d.what, "help": gs.engine.help(gs.state, d.seat)},
        )
        # For the player alone: in verified mode marked secret, as the
        # private address it carries is.
        self.delivery.queue.to_player(gs.db, game, seat.player, subject, body, alone=True,
                                      auto="auto-generated", now=now, kind="reminder")


def claim_game(db: Session, game_id: int) -> m.Game | None:
    """Load a game to change it. On PostgreSQL its row is locked for the
    transaction, and a game another process holds is skipped (None)."""
    q = select(m.Game).where(m.Game.id == game_id)
    if db.get_bind().dialect.name == "postgresql":
        q = q.with_for_update(skip_locked=True)
    return db.scalar(q)
