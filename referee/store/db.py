"""Database engine and sessions: SQLite (WAL) by default, PostgreSQL by URL;
the database errors that mean "try again later", and the time as stored.

``upgrade`` brings any database to the newest Alembic revision; it is what
``referee init`` runs. Alembic is imported only there: every other command
only asks :func:`is_current`, which reads the revision without it (Alembic
and its templates cost each cron start a tenth of a second).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from referee.problems import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_NOPERM,
    EX_TEMPFAIL,
    EX_UNAVAILABLE,
    Problem,
)

if TYPE_CHECKING:
    from alembic.config import Config

#: Inside the package (a link to the checkout's migrations/ folder, copied into a wheel).
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"
#: The newest revision in ``migrations/versions``: bump it with each new
#: migration (tests/store/test_db.py checks it against Alembic's head).
SCHEMA_HEAD = "0013"
#: Alembic's own table of the revision a database is at.
VERSION_TABLE = "alembic_version"
#: The database errors that mean "away or busy, try again later" (a lost
#: connection, a locked SQLite file). Any other database error is about the
#: data in hand, and trying again would fail the same way for ever.
DATABASE_AWAY = (OperationalError, InterfaceError)


def now_utc() -> datetime:
    """The current UTC time as stored: naive, in UTC, to the second (deadlines
    and ``status`` show whole seconds)."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, foreign keys and a busy timeout.
    A statement's parameters (game states, seeds, keys, mail) stay out of its
    log lines and error messages. Raises :class:`Problem` (78) when the URL's
    driver is not installed."""
    if not url.startswith("sqlite"):
        _require_driver(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30}, hide_parameters=True)

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, hide_parameters=True)


def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def is_current(target: str | Engine) -> bool:
    """Whether the database at ``target`` (a URL, or an engine to go on
    using) is at the newest revision, :data:`SCHEMA_HEAD` (no version
    table: not set up)."""
    engine = make_engine(target) if isinstance(target, str) else target
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table(VERSION_TABLE):
                return False
            revisions = conn.execute(text(f"select version_num from {VERSION_TABLE}")).scalars()
            return list(revisions) == [SCHEMA_HEAD]
    finally:
        if engine is not target:
            engine.dispose()


def upgrade(url: str) -> None:
    """Create or upgrade the database at ``url`` to the newest revision."""
    from alembic import command

    _require_driver(url)
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


def _require_driver(url: str) -> None:
    """Fail in one line, naming the fix, when the driver of ``url`` (psycopg
    for ``postgresql+psycopg://``) is not installed."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        make_url(url).get_dialect().import_dbapi()
    except (ArgumentError, NoSuchModuleError) as e:
        raise Problem(f"[referee] database: {_safe(url)} is not a database URL this referee "
                      f"knows ({e}); write sqlite:///FILE or postgresql+psycopg://USER@HOST/DB",
                      EX_CONFIG) from None
    except ImportError as e:
        driver = e.name or "its driver"
        extra = "pip install 'pbm-referee[postgres]'"
        fix = (f"install the postgres extra: {extra}" if driver.startswith("psycopg")
               else f"install {driver}, or write postgresql+psycopg:// and {extra}")
        raise Problem(f"[referee] database: the driver of {_safe(url)} ({driver}) is not "
                      f"installed; {fix}", EX_CONFIG) from None

def _safe(url: str) -> str:
    """A database URL without its password."""
    return make_url(url).render_as_string(hide_password=True)


def database_problem(error: BaseException, url: str) -> Problem:
    """A database that could not be used, as one line with the exit code that
    tells the faults apart: busy (75, try again), a file or folder this user
    may not write (77) or cannot make (73), a refused login (77), a server
    that does not answer (69)."""
    reason = " ".join(str(getattr(error, "orig", error)).split()) or type(error).__name__
    lower = reason.lower()
    where = f"[referee] database: {_safe(url)}"
    if "locked" in lower or "busy" in lower:
        return Problem(f"{where} is busy ({reason}); try again", EX_TEMPFAIL)
    if "readonly" in lower or "read-only" in lower or "permission denied" in lower:
        return Problem(f"{where}: this user may not write it ({reason}); make the file and "
                       "its folder writable by the referee's user", EX_NOPERM)
    if "unable to open database file" in lower:
        folder = sqlite_folder_problem(url) or reason
        code = EX_NOPERM if "not writable" in folder else EX_CANTCREAT
        return Problem(f"{where}: cannot open it ({folder}); make the folder, writable by "
                       "the referee's user", code)
    if "password authentication failed" in lower or "authentication failed" in lower:
        return Problem(f"{where}: the server refused the login ({reason}); check the user "
                       "and password in the URL", EX_NOPERM)
    if "does not exist" in lower:
        return Problem(f"{where}: {reason}; create it, or fix the URL", EX_CONFIG)
    return Problem(f"{where}: the server does not answer ({reason}); start it, or fix the "
                   "host and port in the URL", EX_UNAVAILABLE)
