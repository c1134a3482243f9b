"""Which worker writes the game pages (``referee.service.pages``): with
several on PostgreSQL, one at a time; alone, always."""

from __future__ import annotations

from pathlib import Path

from referee.service.pages import Pages, behind_query
from referee.store.db import make_engine, sessions, upgrade
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


def test_the_games_behind_are_found_through_their_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            q = behind_query().compile(engine)
            plan = conn.exec_driver_sql(f"explain query plan {q}",
                                        tuple(q.params.values())).all()
        assert any("USING INDEX ix_games_page_due" in str(row) for row in plan), plan
    finally:
        engine.dispose()
