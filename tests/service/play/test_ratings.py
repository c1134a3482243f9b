"""The standings worked out (referee/service/play/ratings.py): results
of every shape rated by openskill, seasons, and the same record giving
the same tables whatever order it is read in. Pure."""

from __future__ import annotations

from datetime import datetime

from referee.service.play.ratings import (
    ALL_TIME,
    Outcome,
    Rating,
    newcomer,
    ranked,
    rate,
    rebuild,
    season_of,
    tables_of,
)

T = datetime(2026, 11, 2, 12, 0)


def test_a_newcomer_has_no_points() -> None:
    assert newcomer().points == 0.0 and newcomer().games == 0


def test_seasons_are_quarters_or_years_beside_all_time() -> None:
    assert season_of(T, "quarter") == "2026-Q4"
    assert season_of(datetime(2026, 3, 31), "quarter") == "2026-Q1"
    assert season_of(T, "year") == "2026"
    assert season_of(T, "none") is None
    assert tables_of(T, "quarter") == (ALL_TIME, "2026-Q4")
    assert tables_of(T, "none") == (ALL_TIME,)


def test_partners_move_together_and_the_winners_up() -> None:
    table: dict[tuple[str, str, int], Rating] = {}
    moved = rate(table, Outcome(1, "spades", T, (((1, 3), 1), ((2, 4), 2))), "none")
    after = {k[2]: new for k, (_, new) in moved.items()}
    assert after[1] == after[3] and after[2] == after[4]
    assert after[1].points > 0 > after[2].points
    assert (after[1].wins, after[2].wins) == (1, 0)


def test_several_winners_share_the_win_and_a_tie_wins_nobody() -> None:
    table: dict[tuple[str, str, int], Rating] = {}
    rate(table, Outcome(1, "loatcg", T, (((1,), 1), ((2,), 1), ((3,), 2))), "none")
    wins = {k[2]: r.wins for k, r in table.items()}
    assert wins == {1: 1, 2: 1, 3: 0}
    assert table[("loatcg", ALL_TIME, 1)].mu == table[("loatcg", ALL_TIME, 2)].mu
    rate(table, Outcome(2, "loatcg", T, (((1,), 1), ((3,), 1))), "none")
    assert table[("loatcg", ALL_TIME, 3)].wins == 0
    assert table[("loatcg", ALL_TIME, 1)].games == 2


def test_the_same_record_gives_the_same_tables_in_any_order() -> None:
    outcomes = [Outcome(i, "miser", T.replace(day=1 + i), (((i % 3 + 1,), 1),
                                                           (((i + 1) % 3 + 1,), 2),
                                                           (((i + 2) % 3 + 1,), 2)))
                for i in range(1, 9)]
    once = rebuild(outcomes, "quarter")
    assert rebuild(list(reversed(outcomes)), "quarter") == once
    table = {k[2]: r for k, r in once.items() if k[1] == ALL_TIME}
    assert [pid for pid, _ in ranked(table)] == sorted(
        table, key=lambda pid: -table[pid].points)
    # Taken one by one as the games end, the same.
    stepwise: dict[tuple[str, str, int], Rating] = {}
    for o in outcomes:
        rate(stepwise, o, "quarter")
    assert stepwise == once
