"""A game's row as a mail leaves it, written past the session's unit of
work: one UPDATE of the columns the mail changed (built once for each set
of them), so the mail's savepoint has nothing left to flush."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, inspect, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from referee.store import models as m

_TABLE = m.table_of(m.Game)
#: The columns an UPDATE may set, bound as ``v_<column>``.
_COLUMNS = tuple(c.key for c in _TABLE.columns if c.key != "id")
#: The UPDATE of each set of changed columns, built once.
_UPDATES: dict[frozenset[str], Any] = {}


def write_changed(db: Session) -> None:
    """Write the game rows the session holds changed, each in one UPDATE,
    and take them (with their seats) out of the session, which flushes
    nothing of them then. Only when they are all it would flush: anything
    else (a row new, deleted or changed) is left to the session's flush, the
    games with it, in its own order."""
    if db.new or db.deleted:
        return
    dirty = db.dirty
    if not dirty or not all(type(row) is m.Game for row in dirty):
        return
    conn = db.connection()
    for game in dirty:
        attrs = inspect(game).attrs
        changed = {k: getattr(game, k) for k in _COLUMNS if attrs[k].history.added}
        if changed:
            key = frozenset(changed)
            stmt = _UPDATES.get(key)
            if stmt is None:
                stmt = update(_TABLE).where(_TABLE.c.id == bindparam("row")).values(
                    {k: bindparam(f"v_{k}") for k in sorted(key)})
                _UPDATES[key] = stmt
            done = conn.execute(stmt, {"row": game.id,
                                       **{f"v_{k}": v for k, v in changed.items()}})
            if done.rowcount != 1:
                # As the flush would: the row is gone, or was never there.
                raise StaleDataError(f"UPDATE of game {game.id} matched "
                                     f"{done.rowcount} row(s), not 1")
        db.expunge(game)
