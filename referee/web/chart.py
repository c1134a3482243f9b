"""A game's scores over its rounds as a line chart, laid out here and drawn
as inline SVG by ``templates/web/_chart.html``: no script, so a page reads
without one, and the same numbers as a table for screen readers.

Each line differs from the others by its dash and its marker as well as its
colour, so the chart reads in grey too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The drawing's size in its own units (it scales to the page's width).
WIDTH, HEIGHT = 400, 220
#: Room for the axes' numbers: left, right, top, bottom.
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 10, 26
#: Colours with 4.5:1 contrast or more on white, then dashes and markers.
COLOURS = ("#1f5fa8", "#b3261e", "#2e7d32", "#6a3d9a", "#8a5a00", "#00707a", "#444444")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "12 4", "1 2", "4 2 1 2")
MARKERS = ("circle", "square", "diamond", "triangle")


@dataclass(frozen=True)
class Line:
    """One series: its name, its values (None where it has none: a member
    who had not joined yet) and how it is drawn."""

    name: str
    values: tuple[int | None, ...]
    colour: str
    dash: str
    marker: str
    points: tuple[tuple[float, float], ...]

    @property
    def path(self) -> str:
        """The SVG path through the values it has (a member who joined late
        starts late)."""
        return " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}"
                        for i, (x, y) in enumerate(self.points))


@dataclass(frozen=True)
class Tick:
    value: int | str
    at: float


@dataclass(frozen=True)
class Chart:
    """A chart laid out: what the template draws and the table beside it."""

    title: str
    unit: str
    labels: tuple[str, ...]
    lines: tuple[Line, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    zero: float | None
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def chart(title: str, unit: str, labels: Sequence[str],
          series: Sequence[tuple[str, Sequence[int | None]]]) -> Chart | None:
    """Lay out ``series`` (a name and a value per label each) over
    ``labels`` (the rounds, turns or reports); None with fewer than two
    labels, where there is no course to show."""
    values = [v for _, vs in series for v in vs if v is not None]
    if len(labels) < 2 or not values:
        return None
    low, high = min(0, *values), max(0, *values)
    step = _step(high - low)
    low, high = step * (low // step), step * -(-high // step)
    if high == low:
        high = low + step
    span_x = (WIDTH - RIGHT) - LEFT
    span_y = (HEIGHT - BOTTOM) - TOP

    def x(i: int) -> float:
        return LEFT + span_x * i / (len(labels) - 1)

    def y(v: int) -> float:
        return TOP + span_y * (high - v) / (high - low)

    lines = tuple(
        Line(name, tuple(vs), COLOURS[i % len(COLOURS)], DASHES[i % len(DASHES)],
             MARKERS[i % len(MARKERS)],
             tuple((x(j), y(v)) for j, v in enumerate(vs) if v is not None))
        for i, (name, vs) in enumerate(series))
    every = max(1, -(-len(labels) // 10))  # at most ten numbers under the axis
    x_ticks = tuple(Tick(label, x(i)) for i, label in enumerate(labels)
                    if i % every == 0 or i == len(labels) - 1)
    y_ticks = tuple(Tick(v, y(v)) for v in range(low, high + 1, step))
    return Chart(title, unit, tuple(labels), lines, x_ticks, y_ticks,
                 y(0) if low < 0 < high else None)


def _step(span: int) -> int:
    """A round step giving four to eight lines across ``span``."""
    step = 1
    while span / step > 8:
        for factor in (2, 2.5, 2):
            step = int(step * factor)
            if span / step <= 8:
                break
    return step
