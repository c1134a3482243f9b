"""What the referee answered one address lately (``Correspondent``), read
and written on the per-mail path in SQL built once: a row read is a plain
value, changed in place, and written back in one statement (an INSERT for
a row new, else an UPDATE of the columns that changed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session

from referee.store import models as m

TABLE = m.table_of(m.Correspondent)
#: One address's row (``key``).
READ = select(TABLE).where(TABLE.c.address == bindparam("key"))
ADD = insert(TABLE)
#: The columns an UPDATE may set, bound as ``v_<column>``.
_COLUMNS = tuple(c.key for c in TABLE.columns if c.key != "address")
#: The UPDATE of each set of changed columns, built once.
_UPDATES: dict[frozenset[str], Any] = {}


@dataclass
class Budget:
    """One address's row, as a value: change it, then :func:`write` it."""

    address: str
    hour_start: datetime
    hour_count: int
    day_start: datetime
    day_count: int
    last_digest: str
    repeats: int
    told_at: datetime | None
    not_verified_at: datetime | None
    #: Not in the table yet.
    new: bool = False
    #: The values as read (or last written), to write only what changed.
    stored: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _COLUMNS}


def read(db: Session, address: str, now: datetime) -> Budget:
    """The row of ``address``; a fresh one (counts at zero, windows opening
    ``now``) when it has none yet."""
    row = db.connection().execute(READ, {"key": address}).mappings().first()
    if row is None:
        return Budget(address, now, 0, now, 0, "", 0, None, None, new=True)
    found = Budget(**{k: row[k] for k in ("address", *_COLUMNS)})
    found.stored = found.values()
    return found


def write(db: Session, budget: Budget) -> None:
    """Store ``budget`` (nothing when nothing changed)."""
    values = budget.values()
    conn = db.connection()
    if budget.new:
        conn.execute(ADD, {"address": budget.address, **values})
        budget.new = False
    else:
        changed = frozenset(k for k, v in values.items() if budget.stored.get(k) != v)
        if not changed:
            return
        stmt = _UPDATES.get(changed)
        if stmt is None:
            stmt = update(TABLE).where(TABLE.c.address == bindparam("key")).values(
                {k: bindparam(f"v_{k}") for k in sorted(changed)})
            _UPDATES[changed] = stmt
        conn.execute(stmt, {"key": budget.address, **{f"v_{k}": values[k] for k in changed}})
    budget.stored = values
