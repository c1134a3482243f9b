"""How the ``away`` link reads the first line of a mail that names no
game (issue 37): ``away 10d``, ``away until DAY``, ``away``, ``back``."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from referee.service.intake.absence import Asked, read_line

NOW = datetime(2026, 12, 1, 9, 30)


@pytest.mark.parametrize(("line", "asked"), [
    ("away 10d", Asked("away", NOW + timedelta(days=10))),
    ("Away 1d12h.", Asked("away", NOW + timedelta(days=1, hours=12))),
    ("away 2 w", Asked("away", NOW + timedelta(weeks=2))),
    ("away until 2026-12-27", Asked("away", datetime(2026, 12, 27))),
    ("away", Asked("away")),
    ("back", Asked("back")),
    ("Back!", Asked("back")),
])
def test_each_absence_line(line: str, asked: Asked) -> None:
    assert read_line(line, NOW) == asked


@pytest.mark.parametrize("line", ["bid 3", "back to the game", "awaytime", ""])
def test_other_lines_are_no_absence(line: str) -> None:
    assert read_line(line, NOW) is None


@pytest.mark.parametrize(("line", "said"), [
    ("away soon", "Say for how long, like 'away 10d'"),
    ("away 10", "Say for how long"),
    ("away until 27/12", "'27/12' is no day; write it as 2026-12-27."),
])
def test_an_absence_line_that_cannot_be_read_says_what_would_do(line: str, said: str) -> None:
    found = read_line(line, NOW)
    assert found is not None and found.until is None and said in found.problem
