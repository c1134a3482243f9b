"""Deadlines that stand still at weekends (``--option weekends=off``,
issue 37): a game's clock does not run from Saturday 00:00 to Monday
00:00 UTC, so a deadline that would fall in or across a weekend is pushed
by the weekend's days. Pure: times in, times out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

#: The game option that pauses its deadlines at weekends, and its values.
OPTION = "weekends"
OFF, ON = "off", "on"
#: Saturday, in ``datetime.weekday()``; the weekend runs two days from it.
SATURDAY = 5
WEEKEND = timedelta(days=2)


def paused(options: dict[str, object]) -> bool:
    """Whether a game with these options pauses its deadlines at weekends."""
    return options.get(OPTION) == OFF


def in_weekend(t: datetime) -> bool:
    """Whether ``t`` is on a Saturday or a Sunday (UTC)."""
    return t.weekday() >= SATURDAY


def _monday(t: datetime) -> datetime:
    """The Monday 00:00 that ends the weekend ``t`` is in."""
    day = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=7 - t.weekday())


def _next_saturday(t: datetime) -> datetime:
    """The Saturday 00:00 that begins the next weekend after ``t`` (a weekday)."""
    day = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=SATURDAY - t.weekday())


def run_clock(start: datetime, time: timedelta) -> datetime:
    """When a clock started at ``start`` has run ``time`` that stands still
    at weekends: a start at a weekend waits for Monday, and each weekend
    the time crosses is added to it. A deadline that would fall exactly at
    Saturday 00:00 stays there (the week's time is used up by then)."""
    at = _monday(start) if in_weekend(start) else start
    left = time
    while True:
        saturday = _next_saturday(at)
        if at + left <= saturday:
            return at + left
        left -= saturday - at
        at = saturday + WEEKEND


def out_of_weekend(t: datetime) -> datetime:
    """``t``, or, if it falls in a weekend, pushed by the weekend's days
    (Saturday 10:00 to Monday 10:00): a deadline moved later by calendar
    time (an absence) never falls due at a weekend."""
    return t + WEEKEND if in_weekend(t) else t
