"""The databases the service is tested on: SQLite in a temporary folder, and
a fresh database in the local PostgreSQL (skipped where none answers)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
KINDS = ["sqlite", "postgresql"]


def postgres_url() -> Iterator[str]:
    """A fresh database in the local PostgreSQL, dropped afterwards, or a
    skip where none answers (a user's fresh machine)."""
    try:
        admin = create_engine(PG_ADMIN, connect_args={"connect_timeout": 3})
        with admin.connect() as conn:
            conn.execute(text("select 1"))
    except Exception as e:
        pytest.skip(f"no PostgreSQL on 127.0.0.1:5432 ({type(e).__name__})")
    name = f"referee_{uuid.uuid4().hex[:12]}"
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f'create database "{name}"'))
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'drop database "{name}" with (force)'))
        admin.dispose()


def database_url(kind: str, folder: Path) -> Iterator[str]:
    """A database of ``kind`` (one of :data:`KINDS`) for one test."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'r.db'}"
    else:
        yield from postgres_url()
