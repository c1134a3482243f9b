"""The bank of days away a player has (issue 37): ``[deadlines]
away_days_per_year`` a calendar year (UTC), all their games together.
Every ``away`` draws the whole days it covers (a day begun counts: ``away
12h`` draws one), counted in the year the absence starts; an early
``back`` gives the days not begun back. Pure: times in, days out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

DAY = timedelta(days=1)


def days_drawn(start: datetime, end: datetime) -> int:
    """The whole days an absence from ``start`` to ``end`` draws: each day
    begun counts (none for an absence that never began)."""
    if end <= start:
        return 0
    return math.ceil((end - start) / DAY)


def year_of(t: datetime) -> int:
    """The bank's year an absence starting at ``t`` draws from."""
    return t.year


@dataclass(frozen=True)
class Drawn:
    """One absence as the bank sees it: when it starts and the days it draws."""

    start: datetime
    days: int


def balance(per_year: int, absences: Iterable[Drawn], now: datetime) -> int:
    """The days left in the bank at ``now``: the year's allowance less the
    days drawn by the absences that start in ``now``'s year."""
    year = year_of(now)
    return max(0, per_year - sum(a.days for a in absences if year_of(a.start) == year))


def days_back(start: datetime, end: datetime, back: datetime) -> int:
    """The days an absence planned from ``start`` to ``end`` gives back to
    the bank when ``back`` ends it early: those it drew but has not begun."""
    return days_drawn(start, end) - days_drawn(start, max(start, min(back, end)))
