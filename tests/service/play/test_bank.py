"""The bank of days away (issue 37): ``[deadlines] away_days_per_year`` a
calendar year (UTC), a day begun counting, an early ``back`` giving the
days not begun back."""

from datetime import datetime, timedelta

from referee.service.play.bank import Drawn, balance, days_back, days_drawn

T0 = datetime(2026, 12, 1, 9, 0)


def test_an_absence_draws_each_day_it_begins() -> None:
    assert days_drawn(T0, T0 + timedelta(days=10)) == 10
    assert days_drawn(T0, T0 + timedelta(hours=12)) == 1
    assert days_drawn(T0, T0 + timedelta(days=2, minutes=1)) == 3
    assert days_drawn(T0, T0) == 0


def test_the_balance_is_the_years_days_less_those_drawn_this_year() -> None:
    drawn = [Drawn(T0, 10), Drawn(T0 + timedelta(days=3), 4)]
    assert balance(30, drawn, T0 + timedelta(days=5)) == 16


def test_a_new_year_fills_the_bank_again() -> None:
    drawn = [Drawn(T0, 25)]
    assert balance(30, drawn, datetime(2027, 1, 1, 0, 0)) == 30


def test_an_absence_counts_in_the_year_it_starts() -> None:
    late = Drawn(datetime(2026, 12, 28), 10)
    assert balance(30, [late], datetime(2026, 12, 30)) == 20
    assert balance(30, [late], datetime(2027, 1, 3)) == 30


def test_the_balance_is_never_below_nothing() -> None:
    assert balance(5, [Drawn(T0, 10)], T0) == 0


def test_back_early_gives_the_days_not_begun_back() -> None:
    end = T0 + timedelta(days=10)
    assert days_back(T0, end, T0 + timedelta(days=3, hours=2)) == 6
    assert days_back(T0, end, T0) == 10
    assert days_back(T0, end, end + timedelta(days=1)) == 0
