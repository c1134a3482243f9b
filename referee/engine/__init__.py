"""The rules engines, and the registry of game kinds."""

from __future__ import annotations

from typing import Any

from referee.engine.base import Game
from referee.engine.goofspiel import Goofspiel, PureSkill
from referee.engine.loatcg import Loatcg
from referee.engine.miser import Miser
from referee.engine.spades import Spades

GAMES: dict[str, Game[Any]] = {
    g.kind: g for g in (PureSkill(), Goofspiel(), Spades(), Loatcg(), Miser())
}


def get_game(kind: str) -> Game[Any]:
    """The engine for ``kind``; raises KeyError naming the known kinds."""
    try:
        return GAMES[kind]
    except KeyError:
        raise KeyError(f"unknown game kind {kind!r}; known: {', '.join(sorted(GAMES))}") from None
