"""The club's work that comes from no mail: the operator's commands
(``referee tables``, ``table cancel``, ``member add``) and the expiry of
the tables past ``[club] table_days`` (run where the deadline sweep runs,
by a pass and the daemon). Each is one transaction; the mails it causes
(``club_closed`` to those seated or invited) are queued in it, as the
operator's other commands queue theirs."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.service.club import letters
from referee.service.club.sending import send
from referee.service.club.tables import Done, Refused, Tables, TableView
from referee.service.outgoing.delivery import Delivery
from referee.service.play import results
from referee.service.play.operator import move_deadline
from referee.service.play.ratings import ALL_TIME
from referee.store import models as m
from referee.store.db import now_utc

log = logging.getLogger(__name__)


class ClubOffice:
    """The club's tables as the operator and the clock act on them."""

    def __init__(self, config: Config, sessions: sessionmaker[Session], delivery: Delivery,
                 tables: Tables) -> None:
        self.config, self.sessions, self.delivery, self.tables = (
            config, sessions, delivery, tables)

    def listing(self) -> list[TableView]:
        """The open tables, oldest first (what ``tables`` answers by mail)."""
        with self.sessions() as db:
            return self.tables.listing(db)

    def cancel(self, tag: str, now: datetime | None = None) -> TableView:
        """Close the open table ``tag``; those seated or invited are told.
        Raises :class:`~referee.service.club.tables.Refused` (nothing done)
        for a table that is not open. Returns the table as closed."""
        now = now or now_utc()
        with self.sessions.begin() as db:
            done = self.tables.cancel(db, tag, now)
            return self._tell(db, done, now)

    def open_for_operator(self, kind: str, players: list[str], bots: int = 0,
                          options: dict[str, str] | None = None, now: datetime | None = None,
                          start_by: datetime | None = None,
                          seed: str | None = None) -> TableView:
        """The operator's ``game new`` (issue 38): a table with every seat
        filled, its seed committed to now; each player is mailed that they
        are seated and how to give entropy. It starts when all have, or at
        ``start_by`` (by default, the game's move deadline from now).
        Raises :class:`~referee.service.club.tables.Refused` (nothing done)
        for what the game would refuse. Returns the table."""
        now = now or now_utc()
        options = dict(options or {})
        if start_by is None:
            start_by = now + move_deadline(options, self.config)
        with self.sessions.begin() as db:
            done = self.tables.open_for_operator(db, kind, players, bots, options, now,
                                                 start_by, seed)
            return self._tell(db, done, now)

    def add_member(self, address: str, now: datetime | None = None) -> m.Player:
        """Make ``address`` ("Name <addr>" or addr) a member: they may open
        tables and be invited. Returns the player (detached)."""
        now = now or now_utc()
        with self.sessions.begin() as db:
            player = self.tables.add_member(db, address, now)
            db.flush()
            db.expunge(player)
            return player

    def expire(self, now: datetime | None = None) -> int:
        """Close the open tables past ``[club] table_days``, telling those
        seated or invited; how many closed."""
        now = now or now_utc()
        with self.sessions.begin() as db:
            closed = self.tables.expire(db, now)
            for done in closed:
                self._tell(db, done, now)
        if closed:
            log.info("%d open table(s) expired or started at their start deadline: %s",
                     len(closed), ", ".join(d.table + (f" as {d.game}" if d.game else "")
                                            for d in closed))
        return len(closed)

    def standings(self, kind: str | None = None, season: str | None = None,
                  now: datetime | None = None, rebuild: bool = False) -> list[results.Table]:
        """The club's stored standings of ``kind`` (every kind rated, by
        default) for ``season`` ("all" for all time; by default the season
        ``now`` falls in, or all time where the club keeps none), as the
        operator sees them (players who hide marked, every line);
        ``rebuild``: worked out again from every finished game first.
        Raises :class:`~referee.service.club.tables.Refused` while the club
        keeps no standings."""
        if not self.config.club.standings:
            raise Refused("The club keeps no standings: set [club] standings = true.")
        wanted = self._season(season, now or now_utc())
        with self.sessions.begin() as db:
            if rebuild:
                rated = results.rebuild_all(db, self.config)
                log.info("standings rebuilt from %d rated game(s)", rated)
            return results.tables(db, self.config, kind, wanted, published=False)

    def standings_stale(self) -> str | None:
        """Why the stored standings are not what the config gives now (a
        changed ``[club] season``, standings turned on or off, a package
        back whose games were left out), if they are not: the next pass
        works them out again, or ``referee standings --rebuild`` now."""
        with self.sessions() as db:
            return results.stale(db, self.config)

    def refresh_standings(self) -> str | None:
        """The standings worked out again where :meth:`standings_stale`
        says so (each pass, before its mail); why, if they were."""
        with self.sessions.begin() as db:
            return results.refresh(db, self.config)

    def standings_left_out(self) -> dict[str, tuple[int, str | None]]:
        """The finished games not counted for want of their package, per kind."""
        with self.sessions() as db:
            return results.left_out(db) if self.config.club.standings else {}

    def _season(self, season: str | None, now: datetime) -> str:
        if season is None:
            return results.current_season(self.config, now) or ALL_TIME
        return ALL_TIME if season.casefold() in ("all", "all-time", "") else season.upper()

    def _tell(self, db: Session, done: Done, now: datetime) -> TableView:
        """Queue the ``club_closed`` mails of a table the operator or the
        clock closed (no writer: nobody at the table did it)."""
        table = self.tables.view(db, done.table)
        assert table is not None
        send(db, self.delivery,
             letters.letters(done, table, "", "", self.config.referee.public_list,
                             self.config.club.table_days), now)
        return table
