"""A player away (issue 37): ``away 10d`` or ``away until 2026-12-27``
said to no game is an absence from every game in progress where they hold
a seat; ``back`` ends it early; ``away`` alone tells the bank and the
absences. Every absence, and ``away 3d`` in one game's mail too, draws
whole days from the player's bank (``bank.py``).

An absence from all games, in each game that allows absence (not
``away=no``): its open deadlines move later by the absence, and a deadline
made for the player's seat meanwhile runs from their return
(``GameSession.due``); each table is told (``away``, a public notice and
event). ``back`` at time t gives the bank the days not begun, and moves
each deadline the absence moved (those open when it began, and the
player's own made meanwhile) earlier by the time left, but never sooner
than :data:`GRACE` after t: nobody's deadline falls due unannounced.

Runs inside the caller's transaction (intake's, or the table's).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Audience, Notice
from referee.mail.compose import format_when
from referee.service.outgoing.delivery import Delivery
from referee.service.play import bank, guests, pace
from referee.service.play.session import GameSession
from referee.store import models as m

#: A deadline moved back by ``back`` falls no sooner than this after it.
GRACE = timedelta(days=1)


class Refused(Exception):
    """An absence that cannot be taken or ended; the message says why and
    what would do."""


@dataclass(frozen=True)
class Taken:
    """An absence from all games, taken: until when, the days drawn and
    left, and the games it covers and skips (by tag)."""

    until: datetime
    days: int
    left: int
    games: tuple[str, ...]
    skipped: tuple[str, ...]


def left(db: Session, config: Config, player: m.Player, now: datetime) -> int:
    """The days left in ``player``'s bank this year."""
    rows = db.scalars(select(m.Absence).where(m.Absence.player_id == player.id))
    return bank.balance(config.deadlines.away_days_per_year,
                        [bank.Drawn(a.start_at, a.days) for a in rows], now)


def current(db: Session, player: m.Player, now: datetime) -> list[m.Absence]:
    """``player``'s absences not over at ``now`` (those to come too), the soonest first."""
    return list(db.scalars(select(m.Absence).where(
        m.Absence.player_id == player.id, m.Absence.ended_at.is_(None),
        m.Absence.end_at > now).order_by(m.Absence.start_at, m.Absence.id)))


def summary(db: Session, config: Config, player: m.Player, now: datetime) -> str:
    """The answer to ``away`` alone: the bank, and the absences now."""
    per_year = config.deadlines.away_days_per_year
    lines = [f"You have {_days(left(db, config, player, now))} away left in {now.year}, "
             f"of {per_year} a year, for all your games together."]
    for a in current(db, player, now):
        where = ("all your games" if a.whole
                 else next(iter(_tags(db, [a.game_id] if a.game_id else [])), "a game"))
        lines.append(f"You are away from {where} until {format_when(a.end_at)}.")
    if len(lines) == 1:
        lines.append("You are not away. Write 'away 10d' or 'away until 2026-12-27' "
                     "to be away from all your games; 'back' when you return.")
    return "\n".join(lines)


def in_game(db: Session, game: m.Game, now: datetime) -> dict[int, datetime]:
    """The seats of ``game`` whose player is away from it at ``now`` (an
    ``away`` said in its mail, or one from all games that moved its
    deadlines), each until when: public, as the table was told of each."""
    seats = {s.player_id: s.position for s in game.seats if s.player_id is not None
             and not s.bot}
    if not seats:
        return {}
    out: dict[int, datetime] = {}
    for a in db.scalars(select(m.Absence).where(
            m.Absence.player_id.in_(list(seats)), m.Absence.ended_at.is_(None),
            m.Absence.start_at <= now, m.Absence.end_at > now)):
        if a.game_id == game.id or (a.whole and game.id in (a.games or [])):
            seat = seats[a.player_id]
            out[seat] = max(out.get(seat, a.end_at), a.end_at)
    return dict(sorted(out.items()))


def draw(db: Session, config: Config, player: m.Player, game: m.Game, by: timedelta,
         now: datetime) -> None:
    """Book ``away`` in one game's mail (``by`` from ``now``) against the
    bank. Raises :class:`Refused` when the game refuses absence, or the
    bank has not the days."""
    if pace.refuses_absence(game.options):
        raise Refused(no_absence(game.tag))
    days = bank.days_drawn(now, now + by)
    _check_bank(db, config, player, days, now)
    db.add(m.Absence(player_id=player.id, game_id=game.id, start_at=now, end_at=now + by,
                     days=days, games=[game.id]))


def take(db: Session, config: Config, delivery: Delivery, player: m.Player,
         until: datetime, now: datetime) -> Taken:
    """``player`` away from all their games until ``until``: the bank drawn,
    each game's deadlines moved and its table told. Raises :class:`Refused`."""
    if until <= now:
        raise Refused(f"{format_when(until)} is past: say how long, like 'away 10d', "
                      "or until a day to come, like 'away until 2026-12-27'.")
    if any(a.whole for a in current(db, player, now)):
        raise Refused("You are away from all your games already; write 'back' first, then "
                      "'away' again for the new dates. Nothing was changed.")
    games = _games(db, player)
    if not games:
        raise Refused("You have no game in progress to be away from; nothing was changed.")
    days = bank.days_drawn(now, until)
    remaining = _check_bank(db, config, player, days, now)
    absence = m.Absence(player_id=player.id, game_id=None, start_at=now, end_at=until,
                        days=days, games=[])
    db.add(absence)
    covered: list[int] = []
    tags: list[str] = []
    skipped: list[str] = []
    for game in games:
        if pace.refuses_absence(game.options):
            skipped.append(game.tag)
            continue
        try:
            gs = GameSession(config, delivery.composer, db, game, now)
        except guests.Unserved:
            continue  # it waits for its package: its deadlines wait too
        seat = gs.seat_of(player)
        assert seat is not None
        gs.move_deadlines(until - now)
        _tell(gs, seat.position, until, back=False)
        delivery.deliver(db, gs.decide())
        covered.append(game.id)
        tags.append(game.tag)
    absence.games = covered
    return Taken(until, days, remaining - days, tuple(tags), tuple(skipped))


def end(db: Session, config: Config, delivery: Delivery, player: m.Player,
        now: datetime) -> str:
    """``back`` to no game: every absence of ``player`` not over ends now,
    the days not begun go back to the bank, the deadlines it moved move
    back (never sooner than :data:`GRACE` from now) and each table is told.
    Returns the answer; raises :class:`Refused` when they are not away."""
    absences = current(db, player, now)
    if not absences:
        raise Refused("You are not away from any game; nothing was changed.")
    returned = 0
    tags: list[str] = []
    for a in absences:
        returned += _close(a, now)
        for game in _locked(db, select(m.Game).where(m.Game.id.in_(a.games),
                                                     m.Game.status == "active")):
            try:
                gs = GameSession(config, delivery.composer, db, game, now)
            except guests.Unserved:
                continue
            if _return(gs, a, player):
                delivery.deliver(db, gs.decide())
                tags.append(game.tag)
    return _welcome(db, config, player, now, returned, tags)


def end_in(gs: GameSession, player: m.Player) -> str:
    """``back`` in one game's mail: the absence from that game alone
    (``away 3d`` said in it) ends, as :func:`end`. Raises :class:`Refused`
    when there is none (an absence from all games ends by ``back`` to no game)."""
    mine = [a for a in current(gs.db, player, gs.now) if a.game_id == gs.row.id]
    if not mine:
        whole = any(a.whole for a in current(gs.db, player, gs.now))
        raise Refused("You are away from all your games: write 'back' in a mail to the "
                      "referee with no game's tag in the subject to end it." if whole else
                      "You are not away from this game; nothing was changed.")
    returned = 0
    for a in mine:
        returned += _close(a, gs.now)
        _return(gs, a, player)
    return _welcome(gs.db, gs.config, player, gs.now, returned, [gs.row.tag])


def _close(a: m.Absence, now: datetime) -> int:
    """End ``a`` at ``now``; the days it gives back to the bank."""
    given = bank.days_back(a.start_at, a.end_at, now)
    a.days -= given
    a.ended_at = now
    return given


def _return(gs: GameSession, a: m.Absence, player: m.Player) -> bool:
    """The game's deadlines that ``a`` moved, moved back by the time it had
    left, and the table told; False if the player sits there no more."""
    seat = gs.seat_of(player)
    if seat is None:
        return False
    unused = a.end_at - max(gs.now, a.start_at)
    _move_back(gs, seat.position if a.whole else 0, a.start_at, unused)
    _tell(gs, seat.position, gs.now, back=True, whole=a.whole)
    return True


def _welcome(db: Session, config: Config, player: m.Player, now: datetime, returned: int,
             tags: list[str]) -> str:
    said = (f"Welcome back. {_days(returned)} went back to your bank" if returned else
            "Welcome back. No whole day was left to go back to your bank")
    said += f"; you have {_days(left(db, config, player, now))} away left in {now.year}."
    if tags:
        said += f" The deadlines are moved back in {_list(tags)}; the table is told."
    return said


def _check_bank(db: Session, config: Config, player: m.Player, days: int,
                now: datetime) -> int:
    """The days left in the bank, if ``days`` fit in them; else :class:`Refused`."""
    have = left(db, config, player, now)
    if days > have:
        raise Refused(f"That is {_days(days)} away, and you have {_days(have)} left in "
                      f"{now.year} (of {config.deadlines.away_days_per_year} a year, all "
                      "your games together). Nothing was changed.")
    return have


def _games(db: Session, player: m.Player) -> list[m.Game]:
    """The games in progress where ``player`` holds a seat, oldest first."""
    seated = select(m.Seat.game_id).where(m.Seat.player_id == player.id,
                                          m.Seat.bot.is_(False))
    return _locked(db, select(m.Game).where(m.Game.id.in_(seated), m.Game.status == "active"))


def _locked(db: Session, q: Select[Any]) -> list[m.Game]:
    """The games of ``q``, oldest first, read afresh; on PostgreSQL locked
    in that order, as intake locks the game of a mail: another worker
    refereeing one of them is waited for, and read as it left it."""
    q = q.order_by(m.Game.id).execution_options(populate_existing=True)
    if db.get_bind().dialect.name == "postgresql":
        q = q.with_for_update()
    return list(db.scalars(q))


def _move_back(gs: GameSession, seat: int, start: datetime, unused: timedelta) -> None:
    """Each deadline the absence moved (open when it began, or made for
    ``seat`` since: 0 for an absence from one game, which moved only those
    open) earlier by ``unused``, never sooner than GRACE from now."""
    floor = gs.now + GRACE
    moved = False
    for d in gs.deadlines():
        if d.since > start and (not seat or d.seat != seat):
            continue  # made since, for another seat: the absence never moved it
        due = max(d.due_at - unused, floor)
        if due < d.due_at:
            d.due_at, moved = due, True
            if d.due_at - timedelta(seconds=gs.row.reminder_seconds) > gs.now:
                d.reminded_at = None
            gs.schedule_reminder(d)
    if moved:
        gs.changed()


def _tell(gs: GameSession, seat: int, until: datetime, back: bool,
          whole: bool = True) -> None:
    """The table told of the absence (or the return), with the deadlines as
    they are now: a public event and notice."""
    name = gs.seat_name(seat)
    text = (f"{name} is back: the deadlines the absence moved are moved back." if back else
            f"{name} is away until {format_when(until)}: the deadlines are moved.")
    gs.db.add(m.Event(game_id=gs.row.id, step=gs.row.step, kind="back" if back else "away",
                      public=True, text=text, data={"seat": seat, "whole": whole},
                      at=gs.now))
    gs.notices.append(Notice(Audience.everyone(), "away", {
        "name": name, "until": format_when(until), "back": back, "whole": whole,
        "deadlines": gs.listed_deadlines()}))


def no_absence(tag: str) -> str:
    """Why ``away`` is refused in the game ``tag``."""
    return (f"{tag} allows no absence (it was made with away=no, as tournaments are): "
            "its deadlines run as they are.")


def _tags(db: Session, ids: list[int]) -> list[str]:
    return list(db.scalars(select(m.Game.tag).where(m.Game.id.in_(ids)).order_by(m.Game.id)))


def _days(n: int) -> str:
    return f"{n} day{'s' if n != 1 else ''}"


def _list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"

