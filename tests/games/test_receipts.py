"""Each game's receipt (``Game.receipt``, issue 37): the few lines that
answer a mail whose moves were all done and brought its player no other
mail. Played at random, every kind words one after each move of a player;
a sealed bid's receipt names its maker's bid and no other seat's."""

from __future__ import annotations

import random

import pytest

from referee.games import KINDS, get_game
from referee.games.base import EngineError, SeatInfo
from referee.games.draws import SequentialDraws

SEATS = {"goofspiel": 2, "pure-skill": 3, "spades": 4, "miser": 3}


@pytest.mark.parametrize("kind", sorted(set(KINDS) & set(SEATS)))
def test_every_move_of_a_random_game_has_a_receipt(kind: str) -> None:
    game = get_game(kind)
    rng = random.Random(kind)
    seats = [SeatInfo(i + 1, f"P{i + 1}") for i in range(SEATS[kind])]
    state = game.new(game.parse_options({}), seats, SequentialDraws(rng)).state
    for _ in range(60):
        if game.is_over(state):
            break
        owing = [p.seat for p in game.pending(state) if p.seat]
        if not owing:
            break
        seat = owing[0]
        try:
            action = game.random_bot_action(state, seat, SequentialDraws(rng))
        except EngineError:
            break
        state = game.apply(state, seat, action, SequentialDraws(rng)).state
        said = game.receipt(state, seat, [action])
        assert said and said.strip() == said and "\n" not in said, (kind, said)


def test_a_sealed_bids_receipt_names_its_makers_bid_and_counts_the_rest() -> None:
    game = get_game("pure-skill")
    seats = [SeatInfo(i + 1, name) for i, name in enumerate(["Ann", "Ben", "Cy"])]
    state = game.new(game.parse_options({}), seats, SequentialDraws(random.Random(1))).state
    bid = game.parse("bid 7")
    assert bid is not None
    state = game.apply(state, 2, bid, SequentialDraws(random.Random(2))).state
    said = game.receipt(state, 2, [bid])
    assert said.startswith("Your bid of 7 for round 1 is in, sealed; 1 of 3 bids are in.")
    assert "Still to bid: Ann, Cy." in said
    other = game.parse("bid 9")
    assert other is not None
    state = game.apply(state, 1, other, SequentialDraws(random.Random(3))).state
    said = game.receipt(state, 1, [other])
    assert "2 of 3 bids are in" in said and "7" not in said  # never Ben's bid
