"""Which worker writes the game pages (``referee.service.pages``): with
several on PostgreSQL, one at a time; alone, always."""

from __future__ import annotations

from pathlib import Path

from referee.service.pages import Pages
from referee.store.db import make_engine, sessions
from tests.databases import postgres_url


def test_several_workers_on_postgresql_write_the_pages_one_at_a_time() -> None:
    for url in postgres_url():
        engine = make_engine(url)
        try:
            pages = Pages(sessions(engine), many_workers=True)
            with pages.alone() as first, pages.alone() as second:
                assert first and not second
            with pages.alone() as later:
                assert later  # the lock went with the first writer's block
            alone = Pages(sessions(engine))
            with alone.alone() as a, alone.alone() as b:
                assert a and b  # one worker: nothing to take
        finally:
            engine.dispose()


def test_one_worker_on_sqlite_always_writes_them(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        pages = Pages(sessions(engine), many_workers=True)
        with pages.alone() as a, pages.alone() as b:
            assert a and b
    finally:
        engine.dispose()
