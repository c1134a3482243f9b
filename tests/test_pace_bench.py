"""The pace benchmark's reusable parts (``bench/pace.py``): the standing
orders its reasonable Spades player sends, and the players' delays. The
benchmark itself is not run here: it plays a year of Spades."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

from bench import pace
from referee.games import get_game
from referee.games.base import Action
from referee.games.spades.rules import PLAYING, SpadesState

HANDS = [
    ["2C", "5C", "3D", "9D", "KH", "AS"],
    ["AC", "KC", "QD", "2H", "3H", "2S"],
    ["3C", "4C", "5D", "6D", "4H", "3S"],
    ["6C", "7C", "8D", "10D", "5H", "4S"],
]


def state(**changes: object) -> SpadesState:
    base = SpadesState(order=[1, 2, 3, 4], names=["A", "B", "C", "D"], phase=PLAYING,
                       hands=[list(h) for h in HANDS], bids=[3, 3, 3, 3], turn=0)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_small_side_suits_get_a_card_if_led_after_the_card_written() -> None:
    lines = pace.spades_orders(None, state(), 1, Action("play", ("AS",)))
    assert lines == ["cancel orders", "play 2C if clubs led", "play 3D if diamonds led"]


def test_a_card_named_in_the_move_is_not_ordered_again() -> None:
    lines = pace.spades_orders(None, state(), 1, Action("play", ("2C",)))
    assert lines == ["cancel orders", "play 3D if diamonds led"]


def test_nil_bidder_and_a_team_that_made_its_bid_play_low() -> None:
    nil = state(bids=[0, 3, 3, 3])
    assert pace.spades_orders(None, nil, 1, Action("play", ("AS",)))[-1] == "play low"
    made = state(tricks_won=[4, 0, 2, 0])
    assert pace.spades_orders(None, made, 1, Action("play", ("AS",)))[-1] == "play low"


def test_no_orders_while_bidding_or_for_the_last_card() -> None:
    assert pace.spades_orders(None, state(phase="bidding"), 1, Action("bid", (3,))) == []
    last = state(hands=[["AS"], ["2S"], ["3S"], ["4S"]])
    assert pace.spades_orders(None, last, 1, Action("play", ("AS",))) == []


def test_every_order_is_one_the_game_reads() -> None:
    engine = get_game("spades")
    for st in (state(), state(bids=[0, 3, 3, 3])):
        for line in pace.spades_orders(None, st, 1, Action("play", ("AS",)))[1:]:
            assert engine.parse_order(line) is not None, line


def test_delays_are_within_the_pace_and_seeded() -> None:
    steady = pace.Pace(quiet=0.0)
    rng = random.Random("x")
    waits = [steady.delay(rng) for _ in range(200)]
    assert all(timedelta(hours=2) <= w <= timedelta(hours=30) for w in waits)
    assert waits == [steady.delay(r) for r in [random.Random("x")] for _ in range(200)]
    gone = pace.Pace(quiet=1.0)
    assert all(gone.delay(rng) >= timedelta(days=3, hours=2) for _ in range(50))
