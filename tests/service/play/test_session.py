"""A game's deadlines keep the time of their reminder where they are made,
moved and reminded (``GameSession``), with no hook on the database session."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.store import models as m
from tests.test_referee import T0, Club, new_goofspiel


def _deadlines(club: Club) -> list[tuple[int, object, object, object]]:
    with club.referee.sessions() as db:
        return [(d.seat, d.due_at, d.remind_at, d.reminded_at)
                for d in db.scalars(select(m.Deadline).order_by(m.Deadline.seat))]


def test_a_deadline_is_reminded_a_day_before_from_when_it_is_made(tmp_path: Path) -> None:
    club = Club(tmp_path)
    new_goofspiel(club, reminder="1d")
    due = T0 + timedelta(days=3)
    assert _deadlines(club) == [(1, due, due - timedelta(days=1), None),
                                (2, due, due - timedelta(days=1), None)]


def test_a_moved_deadline_moves_its_reminder_and_a_reminded_one_is_not_due_again(
        tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = new_goofspiel(club, reminder="1d")
    due = T0 + timedelta(days=3)
    club.referee.operator.extend_deadlines(tag, timedelta(days=2), now=T0)
    moved = due + timedelta(days=2)
    assert _deadlines(club) == [(1, moved, moved - timedelta(days=1), None),
                                (2, moved, moved - timedelta(days=1), None)]
    reminded = moved - timedelta(hours=12)
    club.referee.sweep.fire(reminded)
    assert _deadlines(club) == [(1, moved, None, reminded), (2, moved, None, reminded)]
    # Moved again past the reminder's time: reminded again before the new deadline.
    club.referee.operator.extend_deadlines(tag, timedelta(days=2), now=reminded)
    later = moved + timedelta(days=2)
    assert _deadlines(club) == [(1, later, later - timedelta(days=1), None),
                                (2, later, later - timedelta(days=1), None)]


def test_no_hook_of_the_referee_listens_on_every_database_session() -> None:
    """The sweep once set ``remind_at`` from a process-wide ``before_flush``
    listener on every Session; a new Session now carries none of ours."""
    import referee.service  # noqa: F401  (everything the service is made of)

    hooks = [getattr(h, "__module__", "") for h in Session().dispatch.before_flush]
    assert not [h for h in hooks if h.startswith("referee")]
