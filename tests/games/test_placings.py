"""How each game's result ranks its seats for the club's standings
(``Game.placings``, issue 40), against each rule text: games of bots
played to their end, several seeds each, every seat placed once and the
places those the rules give. Pure: engines alone."""

from __future__ import annotations

from typing import Any

import pytest

from referee.games import get_game
from referee.games.base import Game, Placing, SeatInfo, winners_first
from referee.games.draws import KEYED, draws_for

#: Kind: its seats and options for a short game.
GAMES: dict[str, tuple[int, dict[str, str]]] = {
    "goofspiel": (2, {}), "pure-skill": (3, {}), "miser": (3, {}),
    "spades": (4, {"target": "100"}), "loatcg": (4, {}),
}


def played_out(kind: str, seed: str) -> tuple[Game[Any], Any]:
    """A game of ``kind`` whose every seat is a bot, played to its end."""
    engine = get_game(kind)
    seats, raw = GAMES[kind]
    options = engine.parse_options(raw)
    result = engine.new(options, [SeatInfo(i, f"Bot {i}", bot=True)
                                  for i in range(1, seats + 1)], draws_for(KEYED, seed, 0))
    state, step = result.state, 0
    assert engine.placings(state) is None  # nothing to rank before the end
    while not engine.is_over(state):
        step += 1
        assert step < 20_000, f"{kind} {seed} does not end"
        owed = engine.pending(state)[0]
        draws = draws_for(KEYED, seed, step)
        action = (engine.timeout_action(state, 0, draws) if owed.seat == 0
                  else engine.bot_action(state, owed.seat, draws))
        state = engine.apply(state, owed.seat, action, draws).state
    return engine, state


def every_seat_once(placings: list[Placing], seats: int) -> None:
    placed = sorted(seat for p in placings for seat in p.seats)
    assert placed == list(range(1, seats + 1))
    assert {p.place for p in placings} <= {1, 2}


@pytest.mark.parametrize("seed", ["a", "b", "c"])
def test_goofspiel_and_pure_skill_one_winner_the_rest_lose_none_on_a_tie(seed: str) -> None:
    for kind in ("goofspiel", "pure-skill"):
        engine, state = played_out(kind, seed)
        placings = engine.placings(state)
        assert placings is not None
        every_seat_once(placings, GAMES[kind][0])
        winner = engine.winner(state)  # type: ignore[attr-defined]
        firsts = [p.seats[0] for p in placings if p.place == 1]
        assert firsts == ([winner] if winner else [1, 2, 3][:GAMES[kind][0]])


@pytest.mark.parametrize("seed", ["a", "b", "c"])
def test_miser_one_player_won_and_the_rest_lost_no_second_place(seed: str) -> None:
    engine, state = played_out("miser", seed)
    placings = engine.placings(state)
    assert placings is not None
    every_seat_once(placings, 3)
    firsts = [p.seats[0] for p in placings if p.place == 1]
    if len(state.winners) == 1:
        assert firsts == [state.seats[state.winners[0]]]
    else:  # a tie for most pennies: no single winner, so none won
        assert len(firsts) == 3


@pytest.mark.parametrize("seed", ["a", "b"])
def test_spades_places_the_winning_partners_together(seed: str) -> None:
    engine, state = played_out("spades", seed)
    placings = engine.placings(state)
    assert placings is not None
    every_seat_once(placings, 4)
    assert all(len(p.seats) == 2 for p in placings)
    (won,) = [p for p in placings if p.place == 1]
    partners = {state.order[0], state.order[2]} if state.winner == 1 else {
        state.order[1], state.order[3]}
    assert set(won.seats) == partners


def test_the_tournament_ranks_the_highest_hand_scores_first() -> None:
    engine, state = played_out("loatcg", "a")
    placings = engine.placings(state)
    assert placings is not None
    every_seat_once(placings, 4)
    top = max(points for _, points in state.final_scores)
    firsts = {p.seats[0] for p in placings if p.place == 1}
    assert firsts == {m.seat for m, (_, points) in zip(state.members, state.final_scores,
                                                        strict=True) if points == top}


def test_several_winners_share_first_place_and_no_winner_is_a_tie() -> None:
    assert winners_first([1, 2, 3, 4], [1, 3]) == [
        Placing((1,), 1), Placing((2,), 2), Placing((3,), 1), Placing((4,), 2)]
    assert {p.place for p in winners_first([1, 2], [])} == {1}


def test_a_game_that_does_not_say_is_not_rated() -> None:
    assert Game.placings(get_game("goofspiel"), object()) is None
