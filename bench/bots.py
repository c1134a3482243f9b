"""Benchmark: how strong the sensible bots are against random ones.

Plays seeded games on the engines alone (no mail, no database): one seat
plays the sensible bot (``--option bot=sensible``, the default), the others
the random bot (``bot=random``), each move drawn from the game's keyed
draws, as the service draws a bot's. The sensible seat takes each position
in turn. Per game it prints one line,
``goofspiel: 81.2 % of 1000 games (95 % CI 78.6-83.5)``: the share of games
the sensible side won, with its Wilson score interval, then what was
measured:

* goofspiel: 2 players; a win is the higher total (G2-5).
* pure-skill: 3 players, the sensible one against two random; a win is the
  single highest total (rule 4h). All three seats count for the win here:
  each is seated as a player, not a bot (PS-11 would leave bots out).
* spades: a team of two sensible bots against a team of two random bots,
  to 500 (rule 5); a win is the sensible team winning the game.
* miser: 3 players, the sensible one against two random; a win is ending
  with the most pennies when a player is knocked out (MI-10).
* loatcg: a tournament of the EXAMPLE instructions (8 rounds, a Round
  Report every 7 days, every member acting once a day), the sensible member
  against three random members; a win is the highest Hand Score at the
  Freeze (rule 6).

A tie for first counts as half a win. Usage::

    .venv/bin/python bench/bots.py [--games 1000] [--spades-games 200]
        [--only goofspiel,spades] [--seed bots]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games import get_game
from referee.games.base import Action, Game, SeatInfo
from referee.games.draws import KeyedDraws

DAY = 24 * 60 * 60
#: z for a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Tally:
    """Games played and games won (a tie for first is half)."""

    games: int
    wins: float

    def line(self, kind: str) -> str:
        low, high = wilson(self.wins, self.games)
        share = 100 * self.wins / self.games if self.games else 0.0
        return (f"{kind}: {share:.1f} % of {self.games} games "
                f"(95 % CI {100 * low:.1f}-{100 * high:.1f})")


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share ``wins / n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def outcome(scores: Sequence[float], ours: Sequence[int]) -> float:
    """1 if one of ``ours`` alone has the top score, 1/2 if it shares the top
    with others, else 0."""
    top = max(scores)
    best = [i for i, s in enumerate(scores) if s == top]
    if not any(i in ours for i in best):
        return 0.0
    return 1.0 if len(best) == 1 or all(i in ours for i in best) else 0.5


Chooser = Callable[[Any, int], Action]


def players(engine: Game[Any], options: dict[str, Any], count: int,
            seed: str) -> tuple[Any, KeyedDraws]:
    """A new game of ``count`` seats, none flagged a bot (each seat's total
    counts), with the keyed draws of ``seed``."""
    draws = KeyedDraws(seed)
    seats = [SeatInfo(p, f"P{p}") for p in range(1, count + 1)]
    return engine.new(options, seats, draws).state, draws


def choosers(engine: Any, draws: KeyedDraws, sensible: Callable[[int], bool]) -> Chooser:
    """Each seat's move: the sensible bot's where ``sensible(seat)``, else the random bot's."""
    def choose(state: Any, seat: int) -> Action:
        how = engine.sensible_bot_action if sensible(seat) else engine.random_bot_action
        action: Action = how(state, seat, draws)
        return action
    return choose


def play_turns(engine: Game[Any], state: Any, draws: KeyedDraws, choose: Chooser,
               limit: int = 100_000) -> Any:
    """Play until the game is over: the first seat owing a move moves."""
    for _ in range(limit):
        if engine.is_over(state):
            return state
        seat = engine.pending(state)[0].seat
        state = engine.apply(state, seat, choose(state, seat), draws).state
    raise RuntimeError("the game did not end")


# -- the games ---------------------------------------------------------------------


def bidding(kind: str, count: int) -> Callable[[int, str], float]:
    engine: Any = get_game(kind)

    def one(number: int, seed: str) -> float:
        ours = number % count + 1
        state, draws = players(engine, engine.parse_options({}), count, seed)
        state = play_turns(engine, state, draws, choosers(engine, draws, lambda s: s == ours))
        return outcome(engine.scores(state), [ours - 1])
    return one


def spades(number: int, seed: str) -> float:
    engine: Any = get_game("spades")
    state, draws = players(engine, engine.parse_options({}), 4, seed)
    team = number % 2  # the sensible team: players 1 and 3, or 2 and 4
    ours = {seat for i, seat in enumerate(state.order) if i % 2 == team}
    state = play_turns(engine, state, draws, choosers(engine, draws, lambda s: s in ours))
    return 1.0 if state.winner == team + 1 else 0.0


def miser(number: int, seed: str) -> float:
    engine: Any = get_game("miser")
    state, draws = players(engine, engine.parse_options({}), 3, seed)
    ours = number % 3 + 1
    state = play_turns(engine, state, draws, choosers(engine, draws, lambda s: s == ours))
    return outcome(state.pennies, [state.seats.index(ours)])


def loatcg(number: int, seed: str) -> float:
    """Every member, a bot, acts once a day (its turn, ``BOT_TURN``), in an
    order that turns daily; the Dealor reports every ``report_days`` days."""
    engine: Any = get_game("loatcg")
    draws = KeyedDraws(seed)
    seats = [SeatInfo(p, f"P{p}", bot=True) for p in range(1, 5)]
    state = engine.new(engine.parse_options({}), seats, draws).state
    ours = number % 4 + 1
    choose = choosers(engine, draws, lambda s: s == ours)
    day = 0
    while not engine.is_over(state):
        day += 1
        for i in range(4):
            seat = (day + i) % 4 + 1
            state = engine.apply(state, seat, choose(state, seat), draws).state
        if day % state.report_days == 0:
            state = engine.apply(state, 0, engine.timeout_action(state, 0, draws), draws).state
    scores = dict(state.final_scores)
    return outcome([scores[f"P{p}"] for p in range(1, 5)], [ours - 1])


GAMES: dict[str, Callable[[int, str], float]] = {
    "goofspiel": bidding("goofspiel", 2),
    "pure-skill": bidding("pure-skill", 3),
    "spades": spades,
    "miser": miser,
    "loatcg": loatcg,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per short game")
    parser.add_argument("--spades-games", type=int, default=200, help="Spades games to 500")
    parser.add_argument("--only", default="", help="comma-separated kinds (default: all)")
    parser.add_argument("--seed", default="bots", help="prefix of each game's seed")
    args = parser.parse_args(argv)
    kinds = [k for k in args.only.split(",") if k] or list(GAMES)
    for kind in kinds:
        play = GAMES[kind]
        n = args.spades_games if kind == "spades" else args.games
        wins = sum(play(i, f"{args.seed}-{kind}-{i}") for i in range(n))
        print(Tally(n, wins).line(kind), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
