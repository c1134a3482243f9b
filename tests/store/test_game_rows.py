"""A game's row changed by a mail is written in one UPDATE of what changed,
past the unit of work (``store.game_rows``), or left to the flush."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.orm.exc import StaleDataError

from referee.store import game_rows
from referee.store import models as m
from referee.store.db import make_engine, sessions, upgrade
from tests.databases import KINDS, database_url

T0 = datetime(2026, 3, 2, 12, 0)


@pytest.fixture(params=KINDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    for url in database_url(request.param, tmp_path):
        upgrade(url)
        engine = make_engine(url)
        with sessions(engine).begin() as setup:
            setup.add(m.Game(id=1, tag="g1", kind="goofspiel", options={}, seed="s",
                             state={"bids": []}, deadline_seconds=60, reminder_seconds=30,
                             created_at=T0, step=0))
        with sessions(engine)() as session:
            yield session
        engine.dispose()


def statements(db: Session) -> list[str]:
    """The SQL the session's connection runs from now on."""
    sent: list[str] = []
    event.listen(db.connection(), "before_cursor_execute",
                 lambda *args: sent.append(args[2].split()[0].upper()))
    return sent


def test_a_changed_game_row_is_one_update_of_what_changed_and_nothing_is_flushed(
        db: Session) -> None:
    game = db.get(m.Game, 1)
    assert game is not None
    page_due = game.page_due
    sent = statements(db)
    game.state = {"bids": [3]}
    game.step += 1
    game.status = "active"  # set, but to what it was: not written
    game_rows.write_changed(db)
    assert sent == ["UPDATE"]
    assert game not in db
    db.flush()
    assert sent == ["UPDATE"]
    db.commit()
    row = db.execute(select(m.Game.state, m.Game.step, m.Game.page_due)).one()
    assert tuple(row) == ({"bids": [3]}, 1, page_due)


def test_a_game_row_changed_beside_a_row_new_is_left_to_the_flush(db: Session) -> None:
    game = db.get(m.Game, 1)
    assert game is not None
    game.step = 5
    db.add(m.Player(address="ann@example.test", name="Ann", created_at=T0))
    sent = statements(db)
    game_rows.write_changed(db)
    assert sent == [] and game in db and game in db.dirty
    db.commit()
    assert db.scalar(select(m.Game.step)) == 5


def test_a_game_row_gone_meanwhile_is_an_error_as_the_flush_says_it(db: Session) -> None:
    ghost = m.Game(id=99, tag="g99", kind="goofspiel", options={}, seed="s", state={},
                   deadline_seconds=60, reminder_seconds=30, created_at=T0)
    make_transient_to_detached(ghost)  # as if read, though no row has its id
    db.add(ghost)
    ghost.step = 3
    with pytest.raises(StaleDataError):
        game_rows.write_changed(db)
