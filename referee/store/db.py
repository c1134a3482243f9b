"""Database engine and sessions: SQLite (WAL) by default, PostgreSQL by URL;
the database errors that mean "try again later", and the time as stored.

``upgrade`` brings any database to the newest Alembic revision; it is what
``referee init`` runs. Alembic is imported only there: every other command
only asks :func:`schema_problem`, which reads the revision without it
(Alembic and its templates cost each cron start a tenth of a second).
:func:`database_problem` says in one line why a database cannot be used,
and :func:`safe_url` is the only form in which a URL is ever printed.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.exc import ArgumentError, DBAPIError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from referee.problems import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_DATAERR,
    EX_IOERR,
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
SCHEMA_HEAD = "0021"
#: Alembic's own table of the revision a database is at.
VERSION_TABLE = "alembic_version"
#: The database errors that mean "away or busy, try again later" (a lost
#: connection, a locked SQLite file). Any other database error is about the
#: data in hand, and trying again would fail the same way for ever.
DATABASE_AWAY = (OperationalError, InterfaceError)
#: Any error of the database's driver, as SQLAlchemy raises it (for the
#: command line, which speaks no SQLAlchemy): :func:`cannot_use` tells
#: which say the database cannot be used.
DATABASE_ERROR = DBAPIError
#: What SQLite says of a file that is not a database, or is one no more.
DAMAGED = ("file is not a database", "file is encrypted", "database disk image is malformed",
           "malformed database schema")
#: What a database says when the disk or quota holding it is full.
FULL = ("database or disk is full", "no space left on device", "disk quota exceeded")
#: Less room than this on the disk of an SQLite database is a full disk:
#: SQLite makes and grows its journal (the -wal and -shm files) beside it.
ROOM_NEEDED = 1 << 20


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


def known_revisions() -> set[str]:
    """The revisions this code's migrations know, read from their files'
    names (``0013_draw_scheme.py``: tests/store/test_db.py checks each name
    against its revision), so that no Alembic is needed to tell them."""
    return {name.partition("_")[0] for name in os.listdir(MIGRATIONS / "versions")
            if name.endswith(".py")}


def revisions(target: str | Engine) -> list[str]:
    """The revisions the database at ``target`` (a URL, or an engine to go
    on using) is at; none when it has no version table (not set up)."""
    engine = make_engine(target) if isinstance(target, str) else target
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table(VERSION_TABLE):
                return []
            return list(conn.execute(text(f"select version_num from {VERSION_TABLE}")).scalars())
    finally:
        if engine is not target:
            engine.dispose()


def is_current(target: str | Engine) -> bool:
    """Whether the database at ``target`` (a URL, or an engine to go on
    using) is at the newest revision, :data:`SCHEMA_HEAD`."""
    return revisions(target) == [SCHEMA_HEAD]


def schema_problem(target: str | Engine, url: str, init: str) -> Problem | None:
    """Why this code cannot use the database at ``target`` as it is (None:
    it is at :data:`SCHEMA_HEAD`): not set up, or older (``init``, the
    command that upgrades it, is named), or at a revision this code does
    not know, a later release's, that no ``init`` of this one can undo.
    Each is 78: the database does not match what is installed."""
    found = revisions(target)
    if found == [SCHEMA_HEAD]:
        return None
    if newer := newer_problem(url, found):
        return newer
    where = f"[referee] database: {safe_url(url)}"
    if not found:
        return Problem(f"{where} is not set up; run: {init}", EX_CONFIG)
    return Problem(f"{where} is at schema revision {', '.join(found)}, older than this "
                   f"referee's {SCHEMA_HEAD}; run: {init}", EX_CONFIG)


def newer_problem(url: str, found: list[str]) -> Problem | None:
    """A database at a revision this code does not know: a later release
    upgraded it (a rollback), and this one can neither use it nor undo that."""
    unknown = sorted(set(found) - known_revisions())
    if not unknown:
        return None
    return Problem(f"[referee] database: {safe_url(url)} is at schema revision "
                   f"{', '.join(unknown)}, newer than this referee knows (its newest is "
                   f"{SCHEMA_HEAD}): a later release upgraded it; install that release (or a "
                   "later one) again, or restore a backup from before the upgrade", EX_CONFIG)


def upgrade(url: str) -> None:
    """Create or upgrade the database at ``url`` to the newest revision.
    Raises :class:`Problem` (78) for a database a later release upgraded
    (Alembic would fail on the revision it cannot find)."""
    from alembic import command

    _require_driver(url)
    if newer := newer_problem(url, revisions(url)):
        raise newer
    command.upgrade(alembic_config(url), "head")


def try_write(engine: Engine, url: str) -> None:
    """Do what a pass does first, for ``check``: write to the database (its
    version row, written as it is, and rolled back: nothing changes), and
    for SQLite see that its disk has room for the journal it grows as it
    writes, and that its pages read whole (``PRAGMA quick_check``: a
    half-copied file). Raises :class:`Problem` for a full disk (74) or a
    damaged file (65), or the database's own error (read-only, locked), which
    :func:`database_problem` says."""
    room = room_left(url)
    if room is not None and room < ROOM_NEEDED:
        raise _full(url, f"{room // 1024} KiB free, less than the {ROOM_NEEDED >> 20} MiB its "
                    "journal may need")
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            said = conn.execute(text("PRAGMA quick_check")).scalars().first()
            if said != "ok":
                raise _damaged(url, f"PRAGMA quick_check: {' '.join(str(said).split())}")
        conn.execute(text(f"update {VERSION_TABLE} set version_num = version_num"))
        conn.rollback()


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
    from sqlalchemy.exc import NoSuchModuleError

    try:
        make_url(url).get_dialect().import_dbapi()
    except (ArgumentError, NoSuchModuleError) as e:
        raise Problem(f"[referee] database: {safe_url(url)} is not a database URL this referee "
                      f"knows ({e}); write sqlite:///FILE or postgresql+psycopg://USER@HOST/DB",
                      EX_CONFIG) from None
    except ImportError as e:
        driver = e.name or "its driver"
        extra = "pip install 'pbm-referee[postgres]'"
        fix = (f"install the postgres extra: {extra}" if driver.startswith("psycopg")
               else f"install {driver}, or write postgresql+psycopg:// and {extra}")
        raise Problem(f"[referee] database: the driver of {safe_url(url)} ({driver}) is not "
                      f"installed; {fix}", EX_CONFIG) from None


def safe_url(url: str) -> str:
    """``url`` as it may be printed or logged: a password in it (after the
    user, or as a ``password=`` of its query) as ``***``."""
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # not a URL: mask what looks like a login
        shown = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", shown, flags=re.I)


def cannot_use(error: BaseException) -> bool:
    """Whether ``error`` says the database cannot be used (away, busy,
    full, forbidden, damaged), which :func:`database_problem` says in one
    line, rather than something about the data in hand (a bug)."""
    said = _reason(error).lower()
    return isinstance(error, DATABASE_AWAY) or (isinstance(error, DBAPIError) and any(
        words in said for words in (*DAMAGED, *FULL, "read-only transaction")))


def damaged(error: BaseException) -> bool:
    """Whether ``error`` says the database file is not one, or is one no
    more (a half-copied backup, a garbled page): no retry mends it."""
    return isinstance(error, DBAPIError) and any(
        words in _reason(error).lower() for words in DAMAGED)


def room_left(url: str) -> int | None:
    """The bytes this user may still write on the disk of the SQLite
    database at ``url``; None for another database, or where it cannot be
    told. (A quota is not seen here: a write that meets it says so.)"""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    try:
        disk = os.statvfs(Path(str(parsed.database)).resolve().parent)
    except OSError:
        return None
    return disk.f_bavail * disk.f_frsize


def _passwords(url: str) -> list[str]:
    """The passwords written in ``url``: after the user, or in its query."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return []
    given = [parsed.password]
    for key, value in parsed.query.items():
        if key.lower() == "password":
            given += [value] if isinstance(value, str) else list(value)
    return [str(p) for p in given if p]


def _reason(error: BaseException) -> str:
    """The database's own words for ``error``, in one line."""
    return " ".join(str(getattr(error, "orig", None) or error).split()) or type(error).__name__


def _full(url: str, reason: str) -> Problem:
    return Problem(f"[referee] database: {safe_url(url)}: the disk (or quota) holding it is "
                   f"full ({reason}); make room there, or move the database", EX_IOERR)


def _damaged(url: str, reason: str) -> Problem:
    what = "is not an SQLite database" if "not a database" in reason else "is damaged"
    return Problem(f"[referee] database: {safe_url(url)} {what} ({reason}); restore it from a "
                   "backup or point [referee] database elsewhere", EX_DATAERR)


def database_problem(error: BaseException, url: str) -> Problem:
    """A database that could not be used, as one line with the exit code that
    tells the faults apart: busy (75, try again), a file or folder this user
    may not write (77) or cannot make (73), a refused login (77), a full
    disk (74), a file that is no database or a damaged one (65: no retry
    mends it), a server that takes no writes (78), a server that does not
    answer (69). No password of the URL is in it, even where the server
    echoed it."""
    reason = _reason(error)
    for password in _passwords(url):
        reason = reason.replace(password, "***")
    lower = reason.lower()
    where = f"[referee] database: {safe_url(url)}"
    if any(d in lower for d in DAMAGED):
        return _damaged(url, reason)
    if any(f in lower for f in FULL):
        return _full(url, reason)
    if "disk i/o error" in lower:
        # SQLite's word when it cannot make its -shm file on a full disk.
        room = room_left(url)
        if room is not None and room < ROOM_NEEDED:
            return _full(url, f"{reason}; {room // 1024} KiB free")
        return Problem(f"{where}: reading or writing it failed ({reason}); check the disk "
                       "holding it", EX_IOERR)
    if "locked" in lower or "busy" in lower:
        return Problem(f"{where} is busy ({reason}); try again", EX_TEMPFAIL)
    if "read-only transaction" in lower:
        return Problem(f"{where}: the server takes no writes here ({reason}); point the URL "
                       "at a server that does (the primary, not a standby)", EX_CONFIG)
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
