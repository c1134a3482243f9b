"""The database: migrations reach head on SQLite and PostgreSQL, and match the models."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import create_engine, func, inspect, select, text

from referee.store import models as m
from referee.store.db import (
    SCHEMA_HEAD,
    alembic_config,
    is_current,
    known_revisions,
    upgrade,
)
from referee.store.models import Base
from tests.databases import KINDS, database_url


@pytest.fixture(params=KINDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database_url(request.param, tmp_path)


def test_init_creates_every_table_and_is_idempotent(db_url: str) -> None:
    upgrade(db_url)
    upgrade(db_url)  # a second init changes nothing
    engine = create_engine(db_url)
    assert set(inspect(engine).get_table_names()) == {*Base.metadata.tables, "alembic_version"}
    engine.dispose()


def test_schema_head_names_the_newest_migration() -> None:
    """``is_current`` reads the revision without Alembic, against SCHEMA_HEAD:
    a new migration must bump it."""
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head == SCHEMA_HEAD, (f"the newest migration is {head}: set SCHEMA_HEAD in "
                                 "referee/store/db.py to it")


def test_each_migrations_file_is_named_by_its_revision() -> None:
    """``known_revisions`` reads the revisions from the files' names, without
    Alembic: a file named otherwise would make its revision unknown."""
    scripts = ScriptDirectory.from_config(alembic_config("sqlite://"))
    for script in scripts.walk_revisions():
        assert script.path is not None
        assert Path(script.path).name.startswith(f"{script.revision}_"), script.path
    assert known_revisions() == {s.revision for s in scripts.walk_revisions()}


def test_is_current_only_at_the_newest_revision(db_url: str) -> None:
    assert not is_current(db_url)  # not set up: no version table
    scripts = ScriptDirectory.from_config(alembic_config(db_url))
    previous = scripts.get_revision(SCHEMA_HEAD).down_revision
    assert isinstance(previous, str)
    command.upgrade(alembic_config(db_url), previous)
    assert not is_current(db_url)
    upgrade(db_url)
    assert is_current(db_url)


def test_the_migrations_match_the_models(db_url: str) -> None:
    upgrade(db_url)
    try:
        command.check(alembic_config(db_url))
    except CommandError as e:  # pragma: no cover - the message is the diff
        pytest.fail(f"models and migrations differ; write a migration: {e}")


def test_a_database_of_the_first_release_upgrades_and_keeps_its_players(db_url: str) -> None:
    command.upgrade(alembic_config(db_url), "0001")
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("insert into players (address, name, created_at) "
                          "values ('alice@club.test', 'Alice', '2026-03-02 12:00:00')"))
    upgrade(db_url)
    with engine.connect() as conn:
        rows = conn.execute(text("select address, name, token from players")).all()
    engine.dispose()
    assert [tuple(r) for r in rows] == [("alice@club.test", "Alice", None)]


def test_a_whole_game_is_refereed_on_either_database(db_url: str, tmp_path: Path) -> None:
    """The whole pipeline on the database: bids, a message seen twice, a
    deadline, the final report and the replay audit."""
    from tests.test_referee import ALICE, BOB, T0, Club, new_goofspiel

    club = Club(tmp_path, database=db_url)
    try:
        tag = new_goofspiel(club, order="ascending")
        club.poll()
        twice = club.send(ALICE, "bid 1")
        club.send(ALICE, "bid 1", message_id=twice)  # the same mail delivered again
        club.send(BOB, "bid 2")
        # A reply to Alice (once), then the round report to her; to Bob, whose
        # bid ended the round, the reply and the report in one mail: three
        # mails, where each was a mail of its own before (four).
        assert [(str(x["To"]), str(x["X-Referee-Mail"])) for x in club.poll()] == [
            (f"Alice <{ALICE}>", "transcript"), (f"Alice <{ALICE}>", "round_report"),
            (f"Bob <{BOB}>", "table transcript round_report")]
        assert club.referee.reading.status(tag)[0]["round"] == 2
        club.poll(T0 + timedelta(days=3, seconds=1))  # the referee bids round 2 for both
        while (status := club.referee.reading.status(tag)[0])["status"] == "active":
            for seat, player in enumerate((ALICE, BOB)):
                club.send(player, f"bid {_packs(club, tag)[seat][0]}")
            club.poll()
        assert status["round"] == 6 and status["result"] is not None
        assert sum(status["scores"].values()) <= 63
        with club.referee.sessions() as db:
            stored = db.scalar(select(m.Game.state).where(m.Game.tag == tag))
            # Five rounds of two bids; round 6 plays itself (G2-10).
            assert db.scalar(select(func.count()).select_from(m.ActionLog)) == 10
        assert club.referee.reading.replay(tag) == stored
    finally:
        club.referee.close()


def _packs(club: Any, tag: str) -> list[list[int]]:
    with club.referee.sessions() as db:
        state = db.scalar(select(m.Game.state).where(m.Game.tag == tag))
        return [list(p) for p in state["packs"]]


def test_the_migrations_make_exactly_the_tables_of_the_models(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    url = f"sqlite:///{tmp_path / 'drift.db'}"
    upgrade(url)
    engine = create_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), m.Base.metadata)
    engine.dispose()
    assert diff == []


def test_the_club_tables_migration_goes_down_and_up_again(db_url: str) -> None:
    """0014 (the club's tables, issue 36) is reversible: down to 0013 its
    tables and the members' column are gone, the players kept."""
    upgrade(db_url)
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("insert into players (address, name, created_at, member_since) "
                          "values ('ann@club.test', 'Ann', '2026-03-02 12:00:00', "
                          "'2026-03-03 12:00:00')"))
    command.downgrade(alembic_config(db_url), "0013")
    tables = set(inspect(engine).get_table_names())
    assert not tables & {"club_tables", "club_seats"}
    assert "member_since" not in {c["name"] for c in inspect(engine).get_columns("players")}
    upgrade(db_url)
    with engine.connect() as conn:
        rows = conn.execute(text("select address, member_since from players")).all()
    engine.dispose()
    assert [tuple(r) for r in rows] == [("ann@club.test", None)]
    assert is_current(db_url)


def test_the_absences_migration_goes_down_and_up_again(db_url: str) -> None:
    """0016 (absences, issue 37) is reversible: down to 0015 its table is gone."""
    upgrade(db_url)
    engine = create_engine(db_url)
    assert "absences" in set(inspect(engine).get_table_names())
    command.downgrade(alembic_config(db_url), "0015")
    assert "absences" not in set(inspect(engine).get_table_names())
    upgrade(db_url)
    engine.dispose()
    assert is_current(db_url)
