"""Row ids known before the row is inserted, so a row whose id is in what
it holds (an outbox mail's Message-ID), or that other rows point at before
it is complete (a mail's record, which its moves name), is one INSERT.

On PostgreSQL each id is the table's sequence's next value; on SQLite
``max(id)`` once per transaction, then counted on: the transaction holds
the write lock from its first insert (a batch of mails from its start), so
the next ids are its own, as long as every row of the table it inserts
comes through here."""

from __future__ import annotations

from sqlalchemy import Executable, Table, func, select, text
from sqlalchemy.orm import Session

#: Ids counted on from one ``max(id)`` on SQLite.
IDS_PER_BLOCK = 64
#: Each table's statement for its next ids, built once (by dialect).
_NEXT: dict[tuple[str, str], Executable] = {}


def _next_statement(dialect: str, table: Table) -> Executable:
    stmt = _NEXT.get((dialect, table.name))
    if stmt is None:
        stmt = (text(f"select nextval(pg_get_serial_sequence('{table.name}', 'id'))")
                if dialect == "postgresql"
                else select(func.coalesce(func.max(table.c.id), 0)))
        _NEXT[dialect, table.name] = stmt
    return stmt


def next_id(db: Session, table: Table) -> int:
    """The id of the next row of ``table`` (its integer primary key ``id``)."""
    # Asked of the connection: nothing the session holds bears on it, so
    # nothing need be flushed first.
    conn = db.connection()  # begins the transaction if nothing has yet
    if conn.dialect.name == "postgresql":
        return int(conn.execute(_next_statement("postgresql", table)).scalar_one())
    tx = db.get_transaction()
    key = f"{table.name}_ids"
    held = db.info.get(key)
    if held is None or held[0] is not tx or not held[1]:
        first = conn.execute(_next_statement(conn.dialect.name, table)).scalar_one() + 1
        held = (tx, list(range(first, first + IDS_PER_BLOCK)))
        db.info[key] = held
    taken: int = held[1].pop(0)
    return taken
