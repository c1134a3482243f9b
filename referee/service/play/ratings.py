"""The club's standings worked out (issue 40): each player's rating per kind
of game and season, from the results of the finished games, in the order
they ended, by the ``openskill`` library (Plackett-Luce, made for games of
many players and of teams). Pure: no I/O, no database, no clock.

A player's points are openskill's ordinal, mu - 3 sigma: 0 for a newcomer,
rising as they win and as the ratings grow sure of them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

#: How the standings are cut into seasons (``[club] season``).
Scheme = Literal["quarter", "year", "none"]
#: The season key of the all-time table.
ALL_TIME = ""


@functools.cache
def _model() -> PlackettLuce:
    """The rating model, made on first use: a pass that ends no game never
    imports the library (some 30 ms of a start)."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


@dataclass(frozen=True)
class Outcome:
    """One finished game as the standings take it: its kind, when it ended,
    and each side its rules placed (a player, or partners together) as the
    players' ids and the side's place (1 the best; equal places tie)."""

    game_id: int
    kind: str
    at: datetime
    sides: tuple[tuple[tuple[int, ...], int], ...]

    @property
    def winners(self) -> frozenset[int]:
        """The players of the sides placed first, unless every side tied."""
        places = {place for _, place in self.sides}
        if len(places) < 2:
            return frozenset()
        return frozenset(p for players, place in self.sides if place == min(places)
                         for p in players)


@dataclass(frozen=True)
class Rating:
    """A player's rating in one table: openskill's mu and sigma, the games
    rated and won, and the last game rated (its id and when it ended)."""

    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    last_game_id: int = 0
    last_at: datetime | None = None

    @property
    def points(self) -> float:
        """What the tables show and sort by: mu - 3 sigma (openskill's ordinal)."""
        return self.mu - 3 * self.sigma


def newcomer() -> Rating:
    """The rating of a player no game has rated yet."""
    fresh = _model().rating()
    return Rating(fresh.mu, fresh.sigma)


#: A table's row: the kind, the season (:data:`ALL_TIME` or a season's
#: key) and the player's id.
Key = tuple[str, str, int]


def season_of(at: datetime, scheme: Scheme) -> str | None:
    """The season a game that ended ``at`` counts in: "2026-Q4", "2026";
    None where the club keeps no seasons."""
    if scheme == "quarter":
        return f"{at.year}-Q{(at.month - 1) // 3 + 1}"
    if scheme == "year":
        return str(at.year)
    return None


def tables_of(at: datetime, scheme: Scheme) -> tuple[str, ...]:
    """The tables a game that ended ``at`` counts in: all time, and its season."""
    season = season_of(at, scheme)
    return (ALL_TIME,) if season is None else (ALL_TIME, season)


def rate(table: MutableMapping[Key, Rating], outcome: Outcome,
         scheme: Scheme) -> dict[Key, tuple[Rating, Rating]]:
    """Take ``outcome`` into ``table``: each of its players' ratings, in the
    all-time table and its season's, moved as openskill moves them. Returns
    each row moved, before and after."""
    moved: dict[Key, tuple[Rating, Rating]] = {}
    winners = outcome.winners
    for season in tables_of(outcome.at, scheme):
        keys = [[(outcome.kind, season, p) for p in players] for players, _ in outcome.sides]
        before = [[table.get(k) or newcomer() for k in side] for side in keys]
        teams = [[_model().rating(mu=r.mu, sigma=r.sigma) for r in side] for side in before]
        after = _model().rate(teams, ranks=[float(place) for _, place in outcome.sides])
        for side_keys, side_before, side_after in zip(keys, before, after, strict=True):
            for key, old, new in zip(side_keys, side_before, side_after, strict=True):
                rating = Rating(new.mu, new.sigma, old.games + 1,
                                old.wins + (key[2] in winners), outcome.game_id, outcome.at)
                table[key] = rating
                moved[key] = (old, rating)
    return moved


def rebuild(outcomes: Iterable[Outcome], scheme: Scheme) -> dict[Key, Rating]:
    """Every table from nothing: the outcomes taken in the order the games
    ended (then by game), so the same record always gives the same tables."""
    table: dict[Key, Rating] = {}
    for outcome in sorted(outcomes, key=lambda o: (o.at, o.game_id)):
        rate(table, outcome, scheme)
    return table


def ranked(table: Mapping[int, Rating]) -> list[tuple[int, Rating]]:
    """One table's players, best first: by points, then more games, then id."""
    return sorted(table.items(), key=lambda item: (-item[1].points, -item[1].games, item[0]))
