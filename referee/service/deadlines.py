"""The deadline sweep: reminders before a deadline, and the rules' move for
every seat past one (MI-15, SP-15, 000 rule 8), in the order they fell due.

Each game is its own transaction: a fault in one game rolls back only that
game, and the clocks of the others keep running.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from referee.mail.compose import Composer
from referee.service.common import DATABASE_AWAY
from referee.service.delivery import Delivery
from referee.service.session import GameSession
from referee.store import models as m

log = logging.getLogger(__name__)


class DeadlineSweep:
    """Fires due reminders and timeouts across all games."""

    def __init__(self, sessions: sessionmaker[Session], composer: Composer,
                 delivery: Delivery) -> None:
        self.sessions, self.composer, self.delivery = sessions, composer, delivery

    def fire(self, now: datetime) -> int:
        """Send due reminders and act for seats past their deadline; returns
        how many timeouts fired."""
        fired = 0
        with self.sessions() as db:
            game_ids = sorted(set(db.scalars(select(m.Deadline.game_id))))
        for game_id in game_ids:
            try:
                fired += self._fire_game(game_id, now)
            except DATABASE_AWAY:
                raise
            except Exception:
                # A fault in one game must not stop the clock of the others;
                # its transaction rolled back, so the next pass tries again.
                log.exception("deadlines of game %s failed", game_id)
        return fired

    def _fire_game(self, game_id: int, now: datetime) -> int:
        fired = 0
        with self.sessions.begin() as db:
            game = db.get(m.Game, game_id)
            if game is None or game.status != "active":
                return 0
            gs = GameSession(self.delivery, db, game, now)
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
                gs.timeout(due[0].seat)
                fired += 1
                gs.run_bots()
                gs.reconcile_deadlines()
            gs.finish()
        return fired

    def _remind(self, gs: GameSession, d: m.Deadline) -> None:
        """Remind a seat's player once, ``reminder`` before the deadline."""
        game, now = gs.row, gs.now
        remind_at = d.due_at - timedelta(seconds=game.reminder_seconds)
        seat = game.seats[d.seat - 1]
        if d.reminded_at is None and remind_at <= now and not seat.bot and seat.player:
            d.reminded_at = now
            subject, body = self.composer.render(
                gs.engine.templates or gs.engine.kind, "reminder",
                {**gs.context(d.seat), "what": d.what,
                 "help": gs.engine.help(gs.state, d.seat)},
            )
            self.delivery.queue_to_player(gs.db, game, seat.player, subject, body,
                                          auto="auto-generated", now=now, kind="reminder")
