"""A game's public history folded by round for its page: the newest round
first and open, each round's events newest first, the older rounds closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Per kind: the events that open a round (the word the game uses for it),
#: or those that end one ("after").
OPENS: dict[str, tuple[str, frozenset[str]]] = {
    "goofspiel": ("Round", frozenset({"prize"})),
    "pure-skill": ("Round", frozenset({"prize"})),
    "spades": ("Round", frozenset({"deal"})),
}
ENDS: dict[str, tuple[str, frozenset[str]]] = {
    "miser": ("Turn", frozenset({"resolved"})),
    "loatcg": ("Round", frozenset({"round_report", "freeze"})),
}


@dataclass(frozen=True)
class Fold:
    """The events of one round, newest first."""

    label: str
    events: tuple[Mapping[str, Any], ...]

    @property
    def size(self) -> int:
        return len(self.events)


def fold(kind: str, events: Sequence[Mapping[str, Any]]) -> list[Fold]:
    """``events`` (oldest first) as rounds, the newest first. What comes
    before the first round is "The start"; a kind with no rounds is one fold."""
    groups: list[list[Mapping[str, Any]]] = [[]]
    labels = ["The start"]
    if kind in OPENS:
        word, opens = OPENS[kind]
        for e in events:
            if e["kind"] in opens:
                groups.append([])
                labels.append(f"{word} {len(labels)}")
            groups[-1].append(e)
    elif kind in ENDS:
        word, ends = ENDS[kind]
        labels = [f"{word} 1"]
        for e in events:
            groups[-1].append(e)
            if e["kind"] in ends:
                groups.append([])
                labels.append(f"{word} {len(labels) + 1}")
    else:
        groups = [list(events)]
        labels = ["Every event"]
    folds = [Fold(label, tuple(reversed(g))) for label, g in zip(labels, groups, strict=True)
             if g]
    return list(reversed(folds))
