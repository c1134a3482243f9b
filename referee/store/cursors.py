"""A mailbox's cursor moved on, in the mail's own transaction: one upsert,
built once for each dialect (bound parameters; the compiled cache does the
rest)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from referee.store import models as m

_TABLE = m.table_of(m.Cursor)
#: The upsert of each dialect, made on first use.
_ADVANCE: dict[str, Any] = {}


def _advance(dialect: str) -> Any:
    stmt = _ADVANCE.get(dialect)
    if stmt is None:
        if dialect == "postgresql":
            # Imported here: the PostgreSQL dialects cost each start on SQLite 35-50 ms.
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            insert_: Any = pg_insert
        else:
            insert_ = sqlite_insert
        c = _TABLE.c
        stmt = insert_(_TABLE).values(mailbox=bindparam("mailbox"),
                                      uidvalidity=bindparam("uidvalidity"),
                                      last_uid=bindparam("uid"))
        new = stmt.excluded
        stmt = stmt.on_conflict_do_update(
            index_elements=["mailbox"],
            set_={"uidvalidity": new.uidvalidity, "last_uid": new.last_uid},
            where=(c.uidvalidity != new.uidvalidity) | (c.last_uid < new.last_uid))
        _ADVANCE[dialect] = stmt
    return stmt


def advance(db: Session, mailbox: str, uidvalidity: int, uid: int) -> None:
    """Move the mailbox's cursor to ``uid`` (never back, but to a new
    UIDVALIDITY): one statement, an upsert."""
    conn = db.connection()
    conn.execute(_advance(conn.dialect.name),
                 {"mailbox": mailbox, "uidvalidity": uidvalidity, "uid": uid})
