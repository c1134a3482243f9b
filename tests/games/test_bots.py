"""The bots: each sensible bot plays from its own seat's view, and the
``bot`` option chooses it.

A bot must not see another seat's hand, sealed bid or face-down card, nor
an instruction kept from its member: its move is checked unchanged when
everything its seat may not know is drawn again (the contract's ``hide``,
and for the tournament also the instructions neither reported nor revealed
to the member), with the same draws.
"""

from __future__ import annotations

import inspect
import random
import re
from typing import Any

import pytest

from bench import bots as bench
from referee.games import GAMES, get_game
from referee.games.base import Action, Game, SeatInfo
from referee.games.bidding import bot as bidding_bot
from referee.games.draws import KeyedDraws
from referee.games.loatcg import bot as loatcg_bot
from referee.games.loatcg.instructions import parse_instructions
from referee.games.miser import bot as miser_bot
from referee.games.spades import bot as spades_bot
from referee.testing.contract import knowing
from tests.games.test_contract import LOATCG_INSTRUCTIONS, LOATCG_OTHERS, TABLE

SEATS = {"goofspiel": 2, "pure-skill": 3, "spades": 4, "miser": 3, "loatcg": 3}


def _hide_instructions(state: dict[str, Any], seat: int, rng: random.Random) -> dict[str, Any]:
    """The tournament's instructions that no report published and the
    member in ``seat`` was not shown, drawn again."""
    member = next(m for m in state["members"] if m["seat"] == seat)
    told = {r["instruction"] for r in state["reports"]} | set(member["known"])
    bodies = [i.canonical().split(". ", 1)[1] for i in parse_instructions(state["instructions"])]
    text = "".join(f"{n}. {body if n in told else rng.choice(LOATCG_OTHERS)}\n"
                   for n, body in enumerate(bodies, start=1))
    return {**state, "instructions": text}


def _unseen_drawn_again(kind: str, engine: Game[Any], state: Any, seat: int,
                        rng: random.Random) -> Any:
    data = TABLE[kind].hide(engine.dump(state), knowing(seat), rng)
    if kind == "loatcg":
        data = _hide_instructions(data, seat, rng)
    return engine.load(data)


def _playout(kind: str, number: int) -> list[tuple[Any, int, str]]:
    """A seeded game with sensible bots in every seat but one random one:
    each state where a seat owes a move, with the seat and the seed."""
    engine: Any = get_game(kind)
    seed = f"bots-{kind}-{number}"
    options = engine.parse_options({"instructions": LOATCG_INSTRUCTIONS}
                                   if kind == "loatcg" else {})
    seats = [SeatInfo(p, f"P{p}", bot=kind == "loatcg") for p in range(1, SEATS[kind] + 1)]
    draws = KeyedDraws(seed)
    state = engine.new(options, seats, draws).state
    rng = random.Random(seed)
    owed: list[tuple[Any, int, str]] = []
    for step in range(400):
        if engine.is_over(state):
            break
        pending = [p for p in engine.pending(state) if p.seat]
        if kind == "loatcg" and (not pending or step % 12 == 11):
            state = engine.apply(state, 0, engine.timeout_action(state, 0, draws), draws).state
            continue
        seat = rng.choice(pending).seat
        owed.append((state, seat, seed))
        how = engine.random_bot_action if seat == 1 else engine.bot_action
        action: Action = how(state, seat, draws)
        state = engine.apply(state, seat, action, draws).state
    return owed


@pytest.mark.parametrize("kind", sorted(SEATS))
def test_a_sensible_bot_moves_the_same_whatever_its_seat_may_not_see(kind: str) -> None:
    engine: Any = get_game(kind)
    checked = differed = 0
    for number in range(3):
        for state, seat, seed in _playout(kind, number):
            rng = random.Random(f"{seed}:{checked}")
            hidden = _unseen_drawn_again(kind, engine, state, seat, rng)
            differed += engine.dump(hidden) != engine.dump(state)
            mine = engine.bot_action(state, seat, KeyedDraws(seed))
            assert engine.bot_action(hidden, seat, KeyedDraws(seed)) == mine, (
                f"{kind} seat {seat}: the bot's move depends on what it may not see")
            checked += 1
    assert checked >= 20 and differed >= checked // 3


@pytest.mark.parametrize("choose", [bidding_bot.choose_bid, spades_bot.choose_bid,
                                    spades_bot.choose_card, miser_bot.choose_move,
                                    loatcg_bot.choose_action])
def test_a_bot_chooses_from_a_seat_view_and_its_draws_alone(choose: Any) -> None:
    assert list(inspect.signature(choose).parameters) == ["view", "rng"]


@pytest.mark.parametrize("kind", sorted(SEATS))
def test_the_bot_option_defaults_to_sensible_and_takes_random(kind: str) -> None:
    engine = GAMES[kind]
    assert engine.parse_options({})["bot"] == "sensible"
    assert engine.parse_options({"bot": "random"})["bot"] == "random"
    with pytest.raises(Exception, match="sensible or random"):
        engine.parse_options({"bot": "clever"})


def test_a_game_stored_without_the_option_keeps_its_random_bots() -> None:
    engine: Any = get_game("goofspiel")
    options = engine.parse_options({})
    del options["bot"]
    state = engine.new(options, [SeatInfo(1, "A", True), SeatInfo(2, "B")],
                       KeyedDraws("old")).state
    assert engine.bot_at_random(state, 1)
    for kind in ("spades", "miser", "loatcg"):
        game: Any = get_game(kind)
        data = game.dump(game.new(game.parse_options({}), [SeatInfo(p, f"P{p}")
                                                          for p in range(1, 5)],
                                  KeyedDraws("old")).state)
        assert data["bot"] == "sensible"
        del data["bot"]
        assert game.load(data).bot == "random"


def test_a_pure_skill_player_who_leaves_is_replaced_by_a_random_bot() -> None:
    """000 rule 8: "replaced by a bot who plays randomly" (PS-13); a bot
    seated from the start plays sensibly."""
    engine: Any = get_game("pure-skill")
    seats = [SeatInfo(1, "A", True), SeatInfo(2, "B"), SeatInfo(3, "C")]
    state = engine.new(engine.parse_options({}), seats, KeyedDraws("ps")).state
    assert not engine.bot_at_random(state, 1)
    state = engine.replace_with_bot(state, 2).state
    assert engine.bot_at_random(state, 2)
    goofspiel: Any = get_game("goofspiel")
    state = goofspiel.new(goofspiel.parse_options({}), seats[:2], KeyedDraws("g")).state
    assert not goofspiel.bot_at_random(goofspiel.replace_with_bot(state, 2).state, 2)


def test_the_bench_prints_a_line_per_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--games", "3", "--spades-games", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r"^[a-z-]+: \d+\.\d % of \d+ games \(95 % CI \d+\.\d-\d+\.\d\)$")
    assert [line.split(":")[0] for line in lines] == list(bench.GAMES)
    assert all(pattern.match(line) for line in lines), lines


def test_the_wilson_interval() -> None:
    low, high = bench.wilson(812, 1000)
    assert (round(100 * low, 1), round(100 * high, 1)) == (78.7, 83.5)
    assert bench.outcome([5, 5, 3], [0]) == 0.5
    assert bench.outcome([5, 4], [1]) == 0.0


def test_a_sensible_tournament_bot_keeps_at_most_one_offer_open_and_never_a_like_for_like(
        ) -> None:
    """Issue 26: a bot member never spams offers: one open at a time, one
    card for one card of another type."""
    engine: Any = get_game("loatcg")
    for number in range(3):
        offers = 0
        for state, seat, seed in _playout("loatcg", number):
            if seat == 1:
                continue  # the random one
            action = engine.bot_action(state, seat, KeyedDraws(seed))
            mine = [o for o in state.offers if o.maker == seat]
            assert len(mine) <= 1
            if action.verb == "offer":
                offers += 1
                give, want, _ = action.args
                assert not mine and len(give) == len(want) == 1 and set(give) != set(want)
                assert list(give.values()) == list(want.values()) == [1]
        assert offers <= 40
