"""The rules engines, and the registry of game kinds.

An engine's module is imported the first time its kind is asked for: a
pass that touches no game of a kind does not load its rules (a cron pass
pays for every module it imports, at every start).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

from referee.games.base import Game

#: Each kind of game, and the module and class of its engine.
KINDS: dict[str, tuple[str, str]] = {
    "pure-skill": ("referee.games.pure_skill", "PureSkill"),
    "goofspiel": ("referee.games.goofspiel", "Goofspiel"),
    "spades": ("referee.games.spades", "Spades"),
    "loatcg": ("referee.games.loatcg", "Loatcg"),
    "miser": ("referee.games.miser", "Miser"),
}


class Registry(MutableMapping[str, Game[Any]]):
    """Kind -> engine, each made (and its module imported) at first use."""

    def __init__(self, kinds: dict[str, tuple[str, str]]) -> None:
        self._kinds = dict(kinds)
        self._games: dict[str, Game[Any]] = {}

    def __getitem__(self, kind: str) -> Game[Any]:
        if kind not in self._games:
            module, name = self._kinds[kind]
            self._games[kind] = getattr(importlib.import_module(module), name)()
        return self._games[kind]

    def __setitem__(self, kind: str, game: Game[Any]) -> None:
        self._kinds.setdefault(kind, (type(game).__module__, type(game).__name__))
        self._games[kind] = game

    def __delitem__(self, kind: str) -> None:
        del self._kinds[kind]
        self._games.pop(kind, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)


GAMES: MutableMapping[str, Game[Any]] = Registry(KINDS)


def get_game(kind: str) -> Game[Any]:
    """The engine for ``kind``; raises KeyError naming the known kinds."""
    try:
        return GAMES[kind]
    except KeyError:
        raise KeyError(f"unknown game kind {kind!r}; known: {', '.join(sorted(GAMES))}") from None
