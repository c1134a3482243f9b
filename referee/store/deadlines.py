"""A game's deadline rows on the per-mail path, in SQL built once: read,
dropped and made at once, past the session's unit of work, and kept in the
session as rows read (so a later change to one, an extension or a
reminder, is an UPDATE of its own, as before)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.orm import Session, make_transient_to_detached

from referee.store import ids
from referee.store import models as m

_TABLE = m.table_of(m.Deadline)
#: A game's deadline rows (``game``).
OF_GAME = select(m.Deadline).where(m.Deadline.game_id == bindparam("game"))
#: Rows gone, by id (``ids``).
DROP = delete(_TABLE).where(_TABLE.c.id.in_(bindparam("ids", expanding=True)))
#: Rows made, their ids known (``store.ids``).
ADD = insert(_TABLE)
#: A read that flushes nothing first.
NO_FLUSH = {"autoflush": False}
_COLUMNS = tuple(c.key for c in _TABLE.columns)


def of_game(db: Session, game_id: int) -> list[m.Deadline]:
    """The deadline rows of game ``game_id``, as the session's objects.
    Nothing is flushed first: every deadline row is written here, at once,
    or changed on the session's own objects (which a read leaves as they are)."""
    return list(db.scalars(OF_GAME, {"game": game_id}, execution_options=NO_FLUSH))


def next_id(db: Session) -> int:
    """The id of the next deadline row (``store.ids``)."""
    return ids.next_id(db, _TABLE)


def forget(db: Session, rows: Sequence[m.Deadline]) -> None:
    """Delete ``rows`` (the session's) at once, and out of the session."""
    db.connection().execute(DROP, {"ids": [r.id for r in rows]})
    for row in rows:
        db.expunge(row)


def insert_rows(db: Session, rows: Sequence[m.Deadline]) -> None:
    """Insert ``rows`` (new objects, their ids set) in one statement, then
    take them into the session as rows read."""
    db.connection().execute(ADD, [{k: getattr(r, k) for k in _COLUMNS} for r in rows])
    for row in rows:
        make_transient_to_detached(row)
        db.add(row)
