"""Deadlines that stand still at weekends (issue 37): the clock of a game
with ``weekends=off`` does not run Saturday and Sunday, UTC."""

from datetime import datetime, timedelta

from referee.service.play.weekends import in_weekend, out_of_weekend, run_clock

# 2026-12-02 is a Wednesday; 2026-12-05 and 06 the weekend.
WED = datetime(2026, 12, 2, 10, 0)
FRI = datetime(2026, 12, 4, 10, 0)
SAT = datetime(2026, 12, 5, 10, 0)
MON = datetime(2026, 12, 7, 10, 0)


def test_saturday_and_sunday_are_the_weekend() -> None:
    assert not in_weekend(FRI)
    assert in_weekend(SAT)
    assert in_weekend(datetime(2026, 12, 6, 23, 59))
    assert not in_weekend(datetime(2026, 12, 7, 0, 0))


def test_a_deadline_within_the_week_is_not_moved() -> None:
    assert run_clock(WED, timedelta(days=2)) == FRI


def test_a_deadline_across_a_weekend_is_pushed_by_its_two_days() -> None:
    # Three days from Friday 10:00: Friday's 14 hours, then Monday on.
    assert run_clock(FRI, timedelta(days=3)) == datetime(2026, 12, 9, 10, 0)


def test_a_deadline_that_would_fall_at_the_weekend_falls_after_it() -> None:
    assert run_clock(FRI, timedelta(days=1)) == MON


def test_a_clock_started_at_the_weekend_starts_on_monday() -> None:
    assert run_clock(SAT, timedelta(days=1)) == datetime(2026, 12, 8, 0, 0)


def test_a_deadline_of_two_weeks_crosses_two_weekends() -> None:
    assert run_clock(WED, timedelta(days=10)) == datetime(2026, 12, 16, 10, 0)


def test_a_deadline_ending_at_saturday_midnight_stays_there() -> None:
    assert run_clock(FRI, timedelta(hours=14)) == datetime(2026, 12, 5, 0, 0)


def test_a_deadline_moved_into_a_weekend_is_pushed_out_of_it() -> None:
    assert out_of_weekend(SAT) == MON
    assert out_of_weekend(FRI) == FRI
