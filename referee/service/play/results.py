"""The club's standings kept (issue 40): each finished game's result read
from its stored state (``Game.placings``), rated into the ``standings``
rows when the game ends, rebuilt from every finished game at will, and
read back as tables. Runs in its caller's transaction.

What counts: a finished game (never a cancelled one) not started with
``rated=no``, whose rules placed its seats; a seat counts for the player
who sat in it, a seat handed to a bot when its player left (resigned) too,
but a seat that was a bot's from the start counts for nobody. A side of
bots alone is left out; a game with fewer than two sides left is not rated.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import title_of
from referee.games.names import local_part
from referee.service.play import pace
from referee.service.play.guests import Unserved, engine_of, serves_again
from referee.service.play.ratings import (
    ALL_TIME,
    Key,
    Outcome,
    Rating,
    ranked,
    rate,
    rebuild,
    season_of,
)
from referee.store import models as m
from referee.store.db import make_engine, sessions

log = logging.getLogger(__name__)

#: Most players a table shows by mail and on the index page.
SHOWN = 20
#: How many times a game is rated again after another worker wrote the
#: same standings rows at the same time.
TRIES = 5


class Raced(Exception):
    """Another transaction changed a standings row between this one's read
    and its write: the game is rated again from what is stored now."""


@dataclass(frozen=True)
class Line:
    """A player's line of a table: their place among those shown, name,
    points, games rated and won; ``hidden``: they asked to be left out of
    published tables (shown to the operator alone)."""

    place: int
    name: str
    points: float
    games: int
    wins: int
    hidden: bool = False
    #: The player's id, never shown.
    player: int = 0


@dataclass(frozen=True)
class Table:
    """One kind's table for one season (:data:`ALL_TIME`: all time)."""

    kind: str
    title: str
    season: str
    lines: tuple[Line, ...]
    #: Players left out beyond :data:`SHOWN`.
    more: int = 0
    #: When the latest game rated into it ended.
    updated: datetime | None = None

    @property
    def label(self) -> str:
        return "all time" if self.season == ALL_TIME else f"season {self.season}"


@dataclass(frozen=True)
class Move:
    """How a game's result moved one of its players in a table: points
    before and after, and their place among the players shown now."""

    name: str
    before: float
    after: float
    place: int
    of: int


def outcome_of(db: Session, game: m.Game) -> Outcome | None:
    """``game``'s result as the standings take it; None where it does not
    count (see the module's docstring)."""
    if game.status != "finished" or game.finished_at is None or not pace.rated(game.options):
        return None
    try:
        engine = engine_of(db, game)
    except Unserved as e:
        log.warning("%s is left out of the standings: %s", game.tag, e)
        return None
    placings = engine.placings(engine.load(game.state))
    if not placings:
        return None
    players = {s.position: s.player_id for s in game.seats}
    # A player who held two seats (left and came back) counts once, by the
    # seat they held last.
    last = {pid: pos for pos, pid in sorted(players.items()) if pid is not None}
    sides = []
    for placing in placings:
        ids = tuple(pid for pos in placing.seats if (pid := players.get(pos)) is not None
                    and last[pid] == pos)
        if ids:
            sides.append((ids, placing.place))
    if len(sides) < 2:
        return None
    return Outcome(game.id, game.kind, game.finished_at, tuple(sides))


def rebuild_all(db: Session, config: Config) -> int:
    """Every table worked out again from every finished game, stored in place
    of what was, with the settings it was worked out under (:func:`stale`);
    how many games were rated."""
    db.execute(delete(m.Standing))
    if not config.club.standings:
        _record(db, {"standings": False})
        return 0
    games = db.scalars(select(m.Game).where(m.Game.status == "finished")
                       .order_by(m.Game.finished_at, m.Game.id))
    outcomes = []
    left: dict[str, dict[str, Any]] = {}
    for game in games:
        try:
            engine_of(db, game)
        except Unserved as e:
            if pace.rated(game.options):
                was = left.setdefault(game.kind, {"games": 0, "package": e.package})
                was["games"] += 1
            continue
        if (o := outcome_of(db, game)) is not None:
            outcomes.append(o)
    for (kind, season, player), r in rebuild(outcomes, config.club.season).items():
        db.add(_row(kind, season, player, r))
    _record(db, {"standings": True, "season": config.club.season, "left_out": left})
    db.flush()
    return len(outcomes)


#: The :class:`~referee.store.models.Setting` that says what the stored
#: tables were worked out under.
BASIS = "standings"


def stale(db: Session, config: Config) -> str | None:
    """Why the stored tables are not what the config gives now, if they are
    not: ``[club] standings`` turned on again after a game ended unrated,
    ``[club] season`` changed, a package whose finished games were left out
    installed again, or tables never worked out whole under any recorded
    settings. None where they hold (they are then kept up game by game),
    and while the club keeps no standings (nothing is shown; nothing is read)."""
    if not config.club.standings:
        return None
    row = db.get(m.Setting, BASIS)
    if row is None:
        if db.scalar(select(m.Game.id).where(m.Game.status == "finished").limit(1)) is None:
            return None
        return "the tables were not worked out under the settings of this release"
    was = json.loads(row.value)
    if not was.get("standings"):
        return ("[club] standings was turned on again: games that ended while it was off "
                "are not in the tables")
    if was.get("season") != config.club.season:
        return (f'the tables were worked out with [club] season = "{was.get("season")}", '
                f'and the config now says "{config.club.season}"')
    back = sorted(k for k in was.get("left_out", {}) if serves_again(k))
    if back:
        return (f"the games of {', '.join(back)} were left out for want of their package, "
                "installed since")
    return None


def stale_in(config: Config) -> str | None:
    """:func:`stale` of the database ``config`` names, opened for it alone
    (``check``, which runs no referee)."""
    db_engine = make_engine(config.database_url)
    try:
        with sessions(db_engine)() as db:
            return stale(db, config)
    finally:
        db_engine.dispose()


def refresh(db: Session, config: Config) -> str | None:
    """The tables worked out again where :func:`stale` says so; why, if they were."""
    why = stale(db, config)
    if why is not None:
        rated = rebuild_all(db, config)
        log.info("standings rebuilt from %d rated game(s): %s", rated, why)
    return why


def left_out(db: Session) -> dict[str, tuple[int, str | None]]:
    """The finished games the tables leave out for want of their package, as
    of the last rebuild: per kind, how many and the package's name."""
    row = db.get(m.Setting, BASIS)
    if row is None:
        return {}
    found = json.loads(row.value).get("left_out", {})
    return {k: (int(v["games"]), v.get("package")) for k, v in sorted(found.items())}


def _ended_unrated(db: Session) -> None:
    """A game ended while the club keeps no standings: the tables kept from
    before miss it, so they are recorded as no longer whole (:func:`stale`
    says so once standings are on again)."""
    row = db.get(m.Setting, BASIS)
    if row is not None and json.loads(row.value).get("standings"):
        _record(db, {"standings": False})


def _record(db: Session, basis: Mapping[str, object]) -> None:
    value = json.dumps(basis, sort_keys=True)
    row = db.get(m.Setting, BASIS)
    if row is None:
        db.add(m.Setting(name=BASIS, value=value))
    else:
        row.value = value


def game_ended(db: Session, config: Config, game: m.Game) -> tuple[str, list[Move]]:
    """Rate ``game``, just finished, into the stored tables (rebuilding them
    when it ended before a game already rated: a clock set back); how it
    moved its players, in the table its last mail shows (its season's, else
    all time) and that table's label, players who hide left out. Nothing
    where the club keeps no standings or the game does not count."""
    if not config.club.standings:
        _ended_unrated(db)
        return "", []
    if (outcome := outcome_of(db, game)) is None:
        return "", []
    # Two games of the same players may end at once in two workers (on
    # PostgreSQL): both read a row not there yet, or the same row, and the
    # second write would clash on the row's key or undo the first. Each try
    # runs in a savepoint: the second is rolled back and tried again on what
    # the first committed (READ COMMITTED: each statement reads the latest).
    for tries in range(1, TRIES + 1):
        try:
            with db.begin_nested():
                moved = _rate(db, config, game.kind, outcome)
            break
        except (IntegrityError, Raced) as e:
            if tries == TRIES:
                raise
            log.info("%s: standings written by another worker meanwhile (%s); rating again",
                     game.tag, type(e).__name__)
    season = season_of(outcome.at, config.club.season) or ALL_TIME
    shown = tables(db, config, game.kind, season)
    places = {line.player: (line.place, len(t.lines)) for t in shown for line in t.lines}
    hidden = _hidden(db)
    names = _names(db, _ids(outcome))
    moves = []
    for (_, s, pid), (old, new) in sorted(moved.items(), key=lambda kv: -kv[1][1].points):
        if s != season or pid in hidden:
            continue
        place, of = places.get(pid, (0, 0))
        moves.append(Move(names[pid], old.points if old else 0.0, new.points, place, of))
    return (shown[0].label if shown else ""), moves


def _rate(db: Session, config: Config, kind: str,
          outcome: Outcome) -> dict[Key, tuple[Rating | None, Rating]]:
    """One try at rating ``outcome`` into the stored tables of ``kind``:
    each row it moved, before and after."""
    table = _stored(db, kind)
    later = [r for r in table.values() if r.last_at is not None
             and (r.last_at, r.last_game_id) >= (outcome.at, outcome.game_id)]
    if later or not table:
        # Rebuilt when out of order, when the game is rated already (a
        # rebuild by another worker took it in), and when the kind has no
        # table yet (standings just turned on): games already over count too.
        before: dict[Key, Rating] = table
        rebuild_all(db, config)
        table = _stored(db, kind)
        ours = _ids(outcome)
        moved: dict[Key, tuple[Rating | None, Rating]] = {
            k: (before.get(k), table[k]) for k in table if k[2] in ours}
    else:
        changed = rate(table, outcome, config.club.season)
        _store(db, changed)
        moved = dict(changed)
    return moved


def tables(db: Session, config: Config, kind: str | None = None, season: str | None = None,
           published: bool = True) -> list[Table]:
    """The stored tables of ``kind`` (every kind rated, by default) for
    ``season`` (:data:`ALL_TIME`, or a season's key); ``published``: as
    mails and pages show them, players who hide left out, at most
    :data:`SHOWN` lines; else all, for the operator."""
    if not config.club.standings:
        return []
    season = ALL_TIME if season is None else season
    query = (select(m.Standing).where(m.Standing.season == season)
             .order_by(m.Standing.kind))
    if kind is not None:
        query = query.where(m.Standing.kind == kind)
    rows = list(db.scalars(query))
    names = _names(db, {r.player_id for r in rows})
    hidden = _hidden(db)
    out = []
    for k in sorted({r.kind for r in rows}):
        ratings = {r.player_id: _rating(r) for r in rows if r.kind == k}
        order = [(pid, r) for pid, r in ranked(ratings)
                 if not (published and pid in hidden)]
        shown = order[:SHOWN] if published else order
        lines = tuple(Line(i, names[pid], round(r.points, 1), r.games, r.wins, pid in hidden, pid)
                      for i, (pid, r) in enumerate(shown, start=1))
        out.append(Table(k, title_of(k), season, lines, len(order) - len(shown),
                         max(r.last_at for r in rows if r.kind == k)))
    return out


def seasons(db: Session, kind: str | None = None) -> list[str]:
    """The seasons there are tables of, the latest first (all time last)."""
    query = select(m.Standing.season).distinct()
    if kind is not None:
        query = query.where(m.Standing.kind == kind)
    found = set(db.scalars(query))
    return sorted(found - {ALL_TIME}, reverse=True) + ([ALL_TIME] if ALL_TIME in found else [])


def current_season(config: Config, now: datetime) -> str | None:
    """The season ``now`` falls in; None where the club keeps none."""
    return season_of(now, config.club.season)


def set_hidden(db: Session, player: m.Player, hidden: bool) -> None:
    """``standings hide`` (True) or ``standings show`` (False) for ``player``."""
    player.standings_hidden = hidden


def as_text(found: Sequence[Table],
            left: Mapping[str, tuple[int, str | None]] | None = None) -> str:
    """Tables as plain text, for a mail and the command line; ``left``
    (:func:`left_out`): the games not counted for want of their package,
    said after the tables."""
    out = []
    for t in found:
        out.append(f"{t.title}, {t.label}:")
        if not t.lines:
            out.append("  no game rated yet")
        else:
            width = max(len("Player"), *(len(line.name) for line in t.lines))
            out.append(f"  {'#':>3}  {'Player':<{width}}  {'Points':>6}  {'Games':>5}  "
                       f"{'Won':>3}")
            for line in t.lines:
                mark = "  (hidden)" if line.hidden else ""
                out.append(f"  {line.place:>3}  {line.name:<{width}}  {line.points:>6.1f}  "
                           f"{line.games:>5}  {line.wins:>3}{mark}")
        if t.more:
            out.append(f"  and {t.more} more")
        out.append("")
    for kind, (games, package) in (left or {}).items():
        whose = f" ({package})" if package else ""
        out.append(f"Not counted: {games} finished game{'s' if games != 1 else ''} of {kind}, "
                   f"whose package{whose} the referee cannot load.")
    return "\n".join(out).rstrip("\n")


def _ids(outcome: Outcome) -> set[int]:
    return {p for players, _ in outcome.sides for p in players}


def _stored(db: Session, kind: str) -> dict[Key, Rating]:
    # Read afresh: a try rolled back left the rows as an earlier read saw them.
    return {(r.kind, r.season, r.player_id): _rating(r)
            for r in db.scalars(select(m.Standing).where(m.Standing.kind == kind)
                                .execution_options(populate_existing=True))}


def _store(db: Session, changed: dict[Key, tuple[Rating, Rating]]) -> None:
    """Write the rows ``changed``: a row read is updated only as it was read
    (its games and last game), else :class:`Raced`; a row not read is added,
    an :class:`IntegrityError` where another transaction added it first."""
    rows = {(r.kind, r.season, r.player_id): r.id for r in db.scalars(
        select(m.Standing).where(tuple_(m.Standing.kind, m.Standing.season,
                                        m.Standing.player_id).in_(list(changed))))}
    for key, (old, new) in changed.items():
        assert new.last_at is not None
        row = rows.get(key)
        if row is None:
            if old.games:
                raise Raced(key)
            db.add(_row(*key, new))
            continue
        done = db.execute(
            update(m.Standing)
            .where(m.Standing.id == row, m.Standing.games == old.games,
                   m.Standing.last_game_id == old.last_game_id)
            .values(mu=new.mu, sigma=new.sigma, games=new.games, wins=new.wins,
                    last_game_id=new.last_game_id, last_at=new.last_at)
            .execution_options(synchronize_session=False))
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise Raced(key)
    db.flush()


def _row(kind: str, season: str, player: int, r: Rating) -> m.Standing:
    assert r.last_at is not None
    return m.Standing(kind=kind, season=season, player_id=player, mu=r.mu, sigma=r.sigma,
                      games=r.games, wins=r.wins, last_game_id=r.last_game_id,
                      last_at=r.last_at)


def _rating(row: m.Standing) -> Rating:
    return Rating(row.mu, row.sigma, row.games, row.wins, row.last_game_id, row.last_at)


def _hidden(db: Session) -> set[int]:
    return set(db.scalars(select(m.Player.id).where(m.Player.standings_hidden.is_(True))))


def _names(db: Session, ids: set[int] | Sequence[int]) -> dict[int, str]:
    rows = db.execute(select(m.Player.id, m.Player.name, m.Player.address)
                      .where(m.Player.id.in_(list(ids))))
    return {pid: name or local_part(address).capitalize() for pid, name, address in rows}


