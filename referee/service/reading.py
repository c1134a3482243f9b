"""The read side: ``status``, the public history of the game pages, a
game's stored state, and ``replay`` from the seed and the action log.

Each call reads in a session of its own and writes nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from referee.engine import get_game
from referee.engine.base import Action, SeatInfo, rng_for
from referee.service.common import RefereeError
from referee.service.session import REFEREE_SEAT_NAME
from referee.store import models as m


class Reading:
    """Answers questions about games without changing them."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def status(self, tag: str | None = None) -> list[dict[str, Any]]:
        """Public facts about games: whose move, deadlines, scores."""
        with self.sessions() as db:
            q = select(m.Game).order_by(m.Game.id)
            if tag:
                q = q.where(m.Game.tag == tag)
            out = []
            for game in db.scalars(q):
                engine = get_game(game.kind)
                state = engine.load(game.state)
                deadlines = list(db.scalars(select(m.Deadline).where(
                    m.Deadline.game_id == game.id).order_by(m.Deadline.due_at)))
                out.append({
                    "tag": game.tag, "kind": game.kind, "status": game.status,
                    "players": [{"seat": s.position, "name": s.name, "bot": s.bot,
                                 "address": s.player.address if s.player else None,
                                 "bounced": _bounced(s.player)}
                                for s in game.seats],
                    "deadlines": [{"seat": d.seat, "name": _seat_name(game, d.seat),
                                   "what": d.what, "due_at": d.due_at.isoformat() + "Z"}
                                  for d in deadlines],
                    **engine.summary(state),
                })
            if tag and not out:
                raise RefereeError(f"There is no game {tag}.")
            return out

    def public_history(self, tag: str) -> list[dict[str, Any]]:
        """The public events of a game, oldest first: what its web page shows.
        Secret facts (sealed bids, deals) are left out here, at the source."""
        with self.sessions() as db:
            q = (select(m.Event).join(m.Game).where(m.Game.tag == tag, m.Event.public)
                 .order_by(m.Event.id))
            return [{"at": e.at, "kind": e.kind, "text": e.text} for e in db.scalars(q)]

    def secret(self, name: str) -> str:
        """A key the referee made for itself at ``init`` ("" if none)."""
        with self.sessions() as db:
            row = db.get(m.Secret, name)
            return row.value if row else ""

    def stored_state(self, tag: str) -> Any:
        """The game's state as stored (JSON), for audits and the demo."""
        with self.sessions() as db:
            return self._game(db, tag).state

    def replay(self, tag: str) -> Any:
        """Rebuild a game's state from its seed and action log (an audit)."""
        with self.sessions() as db:
            game = self._game(db, tag)
            engine = get_game(game.kind)
            opts = {k: v for k, v in game.options.items() if k not in ("deadline", "reminder")}
            bots = {s.position for s in game.seats if s.bot and s.player is None}
            infos = [SeatInfo(s.position, s.name, s.position in bots, s.team) for s in game.seats]
            actions = list(db.scalars(select(m.ActionLog).where(m.ActionLog.game_id == game.id)
                                      .order_by(m.ActionLog.step)))
            if engine.takes_members_by_mail:
                # A seat whose member joined by mail was not there at the start.
                joined = {a.seat for a in actions if a.action.get("verb") == "join"}
                infos = [i for i in infos if i.position not in joined]
            state = engine.new(opts, infos, rng_for(game.seed, 0)).state
            for a in actions:
                act = Action.from_json(a.action)
                if act.verb == "resign":
                    state = engine.replace_with_bot(state, a.seat).state
                else:
                    state = engine.apply(state, a.seat, act, rng_for(game.seed, a.step)).state
            return engine.dump(state)

    @staticmethod
    def _game(db: Session, tag: str) -> m.Game:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        if game is None:
            raise RefereeError(f"There is no game {tag}.")
        return game


def _seat_name(game: m.Game, position: int) -> str:
    return game.seats[position - 1].name if position else REFEREE_SEAT_NAME


def _bounced(player: m.Player | None) -> dict[str, str] | None:
    """A player's last bounce, for ``status``; None if their mail never bounced."""
    if player is None or player.bounced_at is None:
        return None
    return {"at": player.bounced_at.isoformat() + "Z", "said": player.bounce}
