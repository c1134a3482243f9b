"""A game's public history folded by round for its page: the newest round
first and open, each round's events newest first, the older rounds closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.base import Game


@dataclass(frozen=True)
class Fold:
    """The events of one round, newest first."""

    label: str
    events: tuple[Mapping[str, Any], ...]

    @property
    def size(self) -> int:
        return len(self.events)


def fold(engine: Game[Any], events: Sequence[Mapping[str, Any]]) -> list[Fold]:
    """``events`` (oldest first) as rounds, the newest first, as the game
    folds them (:attr:`Game.history_opens`, :attr:`Game.history_ends`).
    What comes before the first round is "The start"; a game with no
    rounds is one fold."""
    groups: list[list[Mapping[str, Any]]] = [[]]
    labels = ["The start"]
    word = engine.history_word
    if engine.history_opens:
        for e in events:
            if e["kind"] in engine.history_opens:
                groups.append([])
                labels.append(f"{word} {len(labels)}")
            groups[-1].append(e)
    elif engine.history_ends:
        labels = [f"{word} 1"]
        for e in events:
            groups[-1].append(e)
            if e["kind"] in engine.history_ends:
                groups.append([])
                labels.append(f"{word} {len(labels) + 1}")
    else:
        groups = [list(events)]
        labels = ["Every event"]
    folds = [Fold(label, tuple(reversed(g))) for label, g in zip(labels, groups, strict=True)
             if g]
    return list(reversed(folds))
