"""Which game pages are behind the games, and booking them written.

Each game counts the changes to what its page does not show yet
(``Game.page_due``: counted by ``GameSession.changed`` when an action was
applied, a deadline moved or the game was cancelled; None when the page
shows them all). A pass writes only the pages that are behind, found
through the index on ``page_due``, so what publishing costs follows what
changed, not how many games there are. A page written is booked only if
the count is still the one read with it: a change meanwhile counts one
more, and only the one writer of pages sets the count back to None. Each
game also keeps its line of the index page as last written
(``Game.listing``), so the index is written again only when a line of it
changed; and the club's open tables, which it shows as they are (the
index carries a mark of those it shows, so a change to them writes it
again); and the club's standings, marked the same way.

With several workers on PostgreSQL, one writes pages at a time: a worker
that wrote a game's page from an older read after another wrote a newer one
would leave the page behind while booked as shown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, bindparam, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.service.play import results
from referee.service.play.ratings import ALL_TIME
from referee.service.play.results import Table
from referee.store import models as m

if TYPE_CHECKING:
    from referee.service.club.tables import Tables, TableView


@dataclass(frozen=True)
class Behind:
    """A game whose page is behind: the count of changes it does not show
    yet when read (None: it shows them all, in a write of every page), and
    its line of the index as last written (None: never)."""

    id: int
    tag: str
    due: int | None
    listing: dict[str, Any] | None


@dataclass(frozen=True)
class Written:
    """A page written: the count read with the game, and its line of the index."""

    id: int
    due: int | None
    listing: dict[str, Any]


def behind_query(every: bool = False) -> Select[Any]:
    """The games whose page is behind (``every``: all games), in no order."""
    g = m.table_of(m.Game).c
    q = select(g.id, g.tag, g.page_due, g.listing)
    if not every:
        # A range, and no order: SQLite reads it through ix_games_page_due
        # then (for "is not null", or sorted by id, it read every game).
        q = q.where(g.page_due > 0)
    return q


class Pages:
    """The bookkeeping of the game pages; the pages themselves are ``referee.web``'s."""

    def __init__(self, sessions: sessionmaker[Session], many_workers: bool = False) -> None:
        self.sessions = sessions
        self.many_workers = many_workers

    @contextmanager
    def alone(self) -> Iterator[bool]:
        """Whether this process may write the pages while the block runs:
        with several workers on PostgreSQL, if no other is writing them (an
        advisory lock, held by a transaction of its own until the block
        ends); else always."""
        if not self.many_workers:
            yield True
            return
        with self.sessions() as db:
            if db.get_bind().dialect.name != "postgresql":
                yield True
                return
            yield bool(db.scalar(select(func.pg_try_advisory_xact_lock(
                func.hashtext("referee pages")))))

    def behind(self, every: bool = False) -> list[Behind]:
        """The games whose page is behind (``every``: all games), in id order.
        Read before the games themselves: a change after this read leaves
        the game behind for the next pass, never marked as shown."""
        with self.sessions() as db:
            return sorted((Behind(*row) for row in db.connection().execute(behind_query(every))),
                          key=lambda b: b.id)

    def written(self, pages: Sequence[Written]) -> None:
        """Book ``pages`` written: each game's page shows all its changes
        unless one came after the count read with it (the game stays
        behind then), and its line of the index is the one given."""
        g = m.table_of(m.Game)
        rows = [{"game": p.id, "count": p.due, "line": p.listing} for p in pages
                if p.due is not None]  # None: shown already, and listed
        if not rows:
            return
        with self.sessions.begin() as db:
            db.connection().execute(
                update(g).where(g.c.id == bindparam("game"), g.c.page_due == bindparam("count"))
                .values(page_due=None, listing=bindparam("line")), rows)

    def listings(self, new: Mapping[int, dict[str, Any]] | None = None
                 ) -> list[dict[str, Any]]:
        """Every game's line of the index, in id order: as last written,
        or as given in ``new`` (by game id) for the pages just written and
        not booked yet (a game with neither has none, and is not listed)."""
        new = new or {}
        g = m.table_of(m.Game).c
        with self.sessions() as db:
            rows = db.connection().execute(
                select(g.id, g.listing).where(g.listing.is_not(None)).order_by(g.id)).all()
        lines = {**{id_: line for id_, line in rows}, **new}
        return [lines[id_] for id_ in sorted(lines)]

    def open_tables(self, club: Tables) -> list[TableView]:
        """The club's open tables, as the index lists them (``club``'s
        listing, read in a session of its own)."""
        with self.sessions() as db:
            return club.listing(db)

    def standings(self, config: Config, now: datetime) -> list[Table]:
        """The club's standings as the index shows them: the season's tables
        (where the club keeps seasons) and the all-time ones, players who
        hide left out; none while the club keeps none."""
        wanted = [s for s in (results.current_season(config, now), ALL_TIME) if s is not None]
        with self.sessions() as db:
            return [t for season in wanted for t in results.tables(db, config, None, season)]
