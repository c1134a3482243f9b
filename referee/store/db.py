"""Database engine and sessions: SQLite (WAL) by default, PostgreSQL by URL.

``upgrade`` brings any database to the newest Alembic revision; it is what
``referee init`` runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker

#: Inside the package (a link to the checkout's migrations/ folder, copied into a wheel).
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, foreign keys and a busy timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def is_current(url: str) -> bool:
    """Whether the database at ``url`` is at the newest revision."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            current = MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    return current == head


def upgrade(url: str) -> None:
    """Create or upgrade the database at ``url`` to the newest revision."""
    command.upgrade(alembic_config(url), "head")


def sqlite_folder_problem(url: str) -> str | None:
    """What keeps an SQLite database file from being made at ``url``: its
    folder missing or not writable (SQLite says only "unable to open
    database file"); None when it can be, or for another database."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    folder = Path(str(parsed.database)).resolve().parent
    if not folder.is_dir():
        return f"the database's folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the database's folder {folder} is not writable by this user"
    return None
