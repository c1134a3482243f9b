"""Lanes: rows sharing a recipient stay together, in order; lanes are dealt
biggest first to the least loaded connection."""

from __future__ import annotations

from referee.service.outgoing.outbox import connections_for, deal, lanes


def test_rows_sharing_a_recipient_share_a_lane_in_queue_order() -> None:
    rows = [["alice"], ["bob"], ["carol"], ["alice", "dave"], ["dave"], ["erin"], ["bob"]]
    assert lanes(rows) == [[0, 3, 4], [1, 6], [2], [5]]


def test_rows_are_joined_through_other_rows_and_addresses_in_any_case() -> None:
    # 0 and 2 share nothing, but 1 joins them; 3 is 0's recipient in capitals.
    rows = [["a"], ["a", "b"], ["b"], ["A"], ["c"], ["c", "d"], ["d", "e"], ["e"]]
    assert lanes(rows) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_no_rows_no_lanes() -> None:
    assert lanes([]) == []


def test_lanes_are_dealt_biggest_first_to_the_least_loaded_connection() -> None:
    dealt = deal([[0, 4, 5], [1], [2, 6], [3], [7]], 2)
    assert dealt == [[0, 3, 4, 5], [1, 2, 6, 7]]  # each connection's rows in queue order
    assert sorted(len(d) for d in dealt) == [4, 4]


def test_a_connection_without_rows_is_left_out() -> None:
    assert deal([[0, 1, 2]], 4) == [[0, 1, 2]]
    assert deal([[1], [0]], 1) == [[0, 1]]


def test_more_connections_only_for_enough_rows_and_lanes() -> None:
    assert connections_for(rows=1, lanes=1, most=4) == 1
    assert connections_for(rows=8, lanes=8, most=4) == 1
    assert connections_for(rows=9, lanes=9, most=4) == 2
    assert connections_for(rows=200, lanes=3, most=4) == 3  # one a lane
    assert connections_for(rows=200, lanes=200, most=4) == 4
    assert connections_for(rows=0, lanes=0, most=4) == 1
