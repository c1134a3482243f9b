"""Each game as its table, for its page: the engine's own table
(:meth:`Game.page_table`, shown by the ``page.html`` among the game's
templates), with its scores over the rounds laid out as a chart. Built
from the engine's view for no seat and the public events alone, so a page
can show nothing a seat keeps secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import Game
from referee.web.chart import Chart, chart


@dataclass(frozen=True)
class Table:
    """A game's table: its template, the data it shows, its score chart."""

    template: str
    data: dict[str, Any]
    chart: Chart | None
    #: Commitments and what was revealed, beyond the seed's (which every game has).
    fairness: dict[str, Any] = field(default_factory=dict)


def table(engine: Game[Any], view: Mapping[str, Any],
          events: Sequence[Mapping[str, Any]]) -> Table | None:
    """The table of a game of ``engine``'s kind (None for a kind with none:
    its page shows its summary)."""
    page = engine.page_table(view, events)
    if page is None:
        return None
    course = page.course
    return Table(f"{engine.templates or engine.kind}/page.html", page.data,
                 chart(course.title, course.unit, course.labels, course.series)
                 if course else None, page.fairness)
