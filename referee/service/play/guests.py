"""Whether a game's package can serve its games now: the one place that
decides it, and the line that says so.

A game from a package of its own (docs/plugins.md) is the referee's guest:
a virtual environment rebuilt without it, a package that fails to load, or
one that raises where the referee calls it (its ``parse``, ``apply``,
views, page, bot: a :class:`~referee.games.PackageFault`, after which its
kind is unavailable for the rest of the process) stops its own games and
no other. :func:`engine` gives a kind's engine or
raises :class:`Unserved`, and each caller turns that into waiting: intake
keeps the mail unanswered in ``inbound`` (:data:`WAITING`) and reads it
again once the package is back, the deadline sweep leaves the game's
clock alone, the pages leave its page as it was, and the operator's
commands (``replay``, ``verify``, ``game resign``...) end in the one line,
exit 78. :meth:`Guests.stalled` finds, without importing any engine, the
kinds whose games wait, for ``check``, ``poll`` and the daemon's start.

Which distribution provided each installed kind is remembered in the
database (:meth:`Guests.remember`, a named row of ``leases`` each, as
``health`` keeps the last pass there: no table for a few names), so the
line names what to install once it is gone. A kind gone before it was
remembered is named by its kind and the entry-point group alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select
from sqlalchemy.orm import Session, sessionmaker

from referee import games
from referee.games import GROUP, GameUnavailable, PackageFault, Source
from referee.games.base import Game
from referee.problems import EX_CONFIG, Problem
from referee.store import models as m
from referee.store.db import make_engine, sessions

log = logging.getLogger(__name__)

#: The status of an inbound mail whose game's package cannot serve it now:
#: not answered, and read again once it can (``intake.receive``).
WAITING = "waiting"
#: The named rows of ``leases`` that remember the distribution of a kind:
#: ``package.KIND``, the distribution's name in ``holder``.
REMEMBERED = "package."
#: The named rows of ``leases`` that remember that a kind's package raised
#: at a pass: ``fault.KIND``, its line in ``holder``; gone once a pass
#: loads the kind and it raises no more.
FAULT = "fault."


class Unserved(Problem):
    """A game's package cannot serve it now: ``kind`` is declared by no
    installed package (``why`` None), or its package is there but fails
    (``why``: its line). ``package`` is the distribution that provides
    or provided the kind, when known. Exit 78: what is installed does not
    match the games (sysexits' EX_CONFIG)."""

    def __init__(self, kind: str, package: str | None = None, why: str | None = None,
                 tag: str | None = None, game_id: int | None = None) -> None:
        self.kind, self.package, self.why = kind, package, why
        self.tag, self.game_id = tag, game_id
        super().__init__(f"{tag}: {self.what}" if tag else self.what, EX_CONFIG)

    @property
    def what(self) -> str:
        """The line without the game's tag: what is wrong, and what to do."""
        if self.why is not None:
            return f"its game package cannot serve it (kind {self.kind}): {self.why}"
        if self.package:
            return (f"its game package is not installed (kind {self.kind}, from the "
                    f"distribution {self.package}: pip install {self.package})")
        return (f"its game package is not installed (kind {self.kind}: install the package "
                f"that declares it under the entry-point group {GROUP})")


def engine(kind: str, db: Session | Connection | None = None, tag: str | None = None,
           game_id: int | None = None) -> Game[Any]:
    """The engine of ``kind``, or :class:`Unserved` (for the game ``tag``,
    ``game_id`` when given) naming the package to install or mend; ``db``
    is read for the distribution remembered for a kind no longer declared."""
    try:
        return games.get_game(kind)
    except GameUnavailable as e:
        raise Unserved(kind, _declared_by(kind), str(e), tag, game_id) from None
    except KeyError:
        raise Unserved(kind, remembered(db, kind) if db is not None else None,
                       None, tag, game_id) from None


def faulted(fault: PackageFault, tag: str | None = None,
            game_id: int | None = None) -> Unserved:
    """The :class:`Unserved` of a game whose package raised ``fault``."""
    return Unserved(fault.kind, fault.package, fault.line, tag, game_id)


def engine_of(db: Session, game: m.Game) -> Game[Any]:
    """The engine of the stored ``game``, or :class:`Unserved` saying why not."""
    return engine(game.kind, db, game.tag, game.id)


def cannot_serve(kind: str, packages: Mapping[str, str],
                 load: bool = False) -> Unserved | None:
    """Why ``kind``'s games cannot be served now: no package declares it,
    or its package clashes, is missing its module or failed to load; None
    as far as is known. Known without importing its engine (a cron pass
    pays for each module it imports), unless ``load``: then an installed
    kind's engine is loaded to see (``check``). ``packages``: the
    distributions remembered (:func:`remembered_all`)."""
    if kind not in games.GAMES:
        return Unserved(kind, packages.get(kind))
    if load and _declared_by(kind) is not None:
        try:
            engine(kind)
        except Unserved as e:
            return e
    if (why := games.GAMES.broken(kind)) is not None:
        return Unserved(kind, _declared_by(kind) or packages.get(kind), why)
    return None


def unserved_kinds(kinds: Iterable[str], db: Session | Connection,
                   load: bool = False) -> dict[str, Unserved]:
    """:func:`cannot_serve` of each of ``kinds`` that cannot be served now;
    ``db`` is read for the distributions remembered only if one is declared
    by no installed package."""
    kinds = sorted(set(kinds))
    packages = remembered_all(db) if any(k not in games.GAMES for k in kinds) else {}
    return {kind: u for kind in kinds
            if (u := cannot_serve(kind, packages, load)) is not None}


def serves_again(kind: str) -> bool:
    """Whether ``kind``'s engine can be had now, looking again for a
    package installed since the packages were read (the daemon's)."""
    if not games.GAMES.look_again(kind):
        return False
    try:
        games.get_game(kind)
    except KeyError:
        return False
    return True


def _declared_by(kind: str) -> str | None:
    source = games.GAMES.sources().get(kind)
    return source.package if source is not None else None


def remembered(db: Session | Connection, kind: str) -> str | None:
    """The distribution remembered as providing ``kind``, if any."""
    return db.execute(select(m.Lease.holder)
                      .where(m.Lease.name == REMEMBERED + kind)).scalar_one_or_none()


def remembered_all(db: Session | Connection) -> dict[str, str]:
    """Every kind's remembered distribution."""
    rows = db.execute(select(m.Lease.name, m.Lease.holder)
                      .where(m.Lease.name.startswith(REMEMBERED, autoescape=True)))
    return {name.removeprefix(REMEMBERED): holder for name, holder in rows}


@dataclass(frozen=True)
class Stall:
    """A kind whose games cannot be served now: why, and how many games of
    it are active (stalled: no move, no deadline), how many are over, and
    how many mails wait for it."""

    unserved: Unserved
    active: int
    finished: int
    mails: int

    def __str__(self) -> str:
        said = (f"{self.active} active game(s) of kind {self.unserved.kind} wait"
                if self.active else
                f"{self.finished} finished game(s) of kind {self.unserved.kind} cannot be "
                "replayed, verified or shown")
        mails = f", with {self.mails} mail(s)" if self.mails else ""
        return f"{said}{mails}: {self.unserved.what}"


class Guests:
    """What the operator is told of the game packages the games need."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def remember(self, sources: Mapping[str, Source], now: datetime) -> None:
        """Remember the distribution of each installed kind (built-in ones
        need none); writes only what changed."""
        wanted = {kind: s.package for kind, s in sources.items() if s.package is not None}
        with self.sessions() as db:
            known = remembered_all(db)
        changed = {kind: package for kind, package in wanted.items()
                   if known.get(kind) != package[:200]}
        if not changed:
            return
        with self.sessions.begin() as db:
            for kind, package in changed.items():
                row = db.get(m.Lease, REMEMBERED + kind)
                if row is None:
                    db.add(m.Lease(name=(REMEMBERED + kind)[:64], holder=package[:200],
                                   expires_at=now))
                else:
                    row.holder, row.expires_at = package[:200], now

    def keep_faults(self, faults: Mapping[str, str], served: Iterable[str],
                    now: datetime) -> None:
        """Remember the line of each kind whose package raised in this
        process (``faults``), so that ``check`` names it; forget it for
        each kind ``served`` without a fault. Writes only what changed."""
        gone = [FAULT + kind for kind in served if kind not in faults]
        with self.sessions() as db:
            known = {name: holder for name, holder in db.execute(
                select(m.Lease.name, m.Lease.holder)
                .where(m.Lease.name.startswith(FAULT, autoescape=True)))}
        wanted = {(FAULT + kind)[:64]: line[:200] for kind, line in faults.items()}
        changed = {name: line for name, line in wanted.items() if known.get(name) != line}
        gone = [name for name in gone if name in known]
        if not changed and not gone:
            return
        with self.sessions.begin() as db:
            for name, line in changed.items():
                row = db.get(m.Lease, name)
                if row is None:
                    db.add(m.Lease(name=name, holder=line, expires_at=now))
                else:
                    row.holder, row.expires_at = line, now
            for name in gone:
                row = db.get(m.Lease, name)
                if row is not None:
                    db.delete(row)

    def stalled(self, load: bool = False) -> list[Stall]:
        """The kinds of stored games that cannot be served now, by kind:
        one query over the games, and one over the waiting mail when a kind
        is found; no engine is imported unless ``load`` (see
        :func:`cannot_serve`)."""
        with self.sessions() as db:
            kinds = stored_kinds(db)
            found = unserved_kinds(kinds, db, load)
            # A kind whose package loads but raised at a pass before: its
            # mail waits, until a pass reads it again without a fault.
            mails: dict[str, int] = {}
            for kind, n, newest in db.execute(
                    select(m.Game.kind, func.count(), func.max(m.Inbound.id))
                    .select_from(m.Inbound).join(m.Game, m.Inbound.game_id == m.Game.id)
                    .where(m.Inbound.status == WAITING).group_by(m.Game.kind)):
                mails[kind] = n
                if kind not in found:
                    note = db.get(m.Inbound, newest)
                    found[kind] = Unserved(kind, _declared_by(kind), _why(kind, note.note
                                                                         if note else ""))
            for name, line in db.execute(select(m.Lease.name, m.Lease.holder).where(
                    m.Lease.name.startswith(FAULT, autoescape=True))):
                kind = name.removeprefix(FAULT)
                if kind in kinds and kind not in found:
                    found[kind] = Unserved(kind, _declared_by(kind), line)
            if not found:
                return []
            # Counted only for a kind that waits: the games of that kind.
            counts: dict[str, dict[str, int]] = {kind: {} for kind in found}
            for kind, status, n in db.execute(
                    select(m.Game.kind, m.Game.status, func.count())
                    .where(m.Game.kind.in_(found)).group_by(m.Game.kind, m.Game.status)):
                counts[kind][status] = n
        return [Stall(u, counts[kind].get("active", 0),
                      sum(n for s, n in counts[kind].items() if s != "active"),
                      mails.get(kind, 0)) for kind, u in found.items()]


def stored_kinds(db: Session | Connection) -> list[str]:
    """The kinds of the stored games: a seek on ``ix_games_kind`` a kind
    (the next kind after the last), never a read of every game."""
    kinds: list[str] = []
    while (kind := db.scalar(select(func.min(m.Game.kind)).where(
            m.Game.kind > kinds[-1]) if kinds else select(func.min(m.Game.kind)))) is not None:
        kinds.append(kind)
    return kinds


def _why(kind: str, note: str) -> str:
    """Why the mail of ``kind`` waits, from a waiting mail's note (its
    :class:`Unserved` line); the note itself if it says no more."""
    said = note.partition(f"(kind {kind}): ")[2]
    return said or note.removeprefix("waiting: ") or "its mail waits"


def stalled_in(database_url: str) -> list[Stall]:
    """:meth:`Guests.stalled` of the database at ``database_url``, opened
    for it alone, each installed kind's engine loaded to see (``check``,
    which runs no referee)."""
    db_engine = make_engine(database_url)
    try:
        return Guests(sessions(db_engine)).stalled(load=True)
    finally:
        db_engine.dispose()
