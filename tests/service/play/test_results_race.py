"""Two games of the same players ending at once in two workers, on
PostgreSQL (issue 40): both rate a standings row the other is writing, one
commits first, and the other is rated again on what it committed, neither
clashing on the row's key nor undoing the other. Skipped where no
PostgreSQL answers (tests/databases.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session

from referee.service.play import results
from referee.store import models as m
from tests.databases import postgres_url
from tests.service.play.test_results import DAVE, PLAYERS, finish, stored
from tests.test_referee import ALICE, BOB, CAROL, Club


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    """A club that keeps standings by quarter, on a fresh PostgreSQL database."""
    for url in postgres_url():
        c = Club(tmp_path, club={"standings": True, "season": "quarter"}, database=url)
        try:
            yield c
        finally:
            c.referee.close()


def _blocked(url: str, until: threading.Thread) -> bool:
    """Whether a backend waits on a lock, looked at until one does or
    ``until`` ends (it ended without waiting)."""
    watch = create_engine(url)
    try:
        with watch.connect() as conn:
            while until.is_alive():
                waiting = conn.execute(text(
                    "select count(*) from pg_stat_activity where wait_event_type = 'Lock' "
                    "and datname = current_database()")).scalar()
                if waiting:
                    return True
                conn.rollback()
                time.sleep(0.02)
            return False
    finally:
        watch.dispose()


@pytest.mark.parametrize("first", [False, True], ids=["table-kept", "first-of-its-kind"])
def test_two_games_ending_at_once_are_both_rated(club: Club, first: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Alice's two games end in two transactions at once: the first writes
    her new rows (or, the first games of their kind, the whole table) and
    holds them; the second waits on them, and once the first commits it is
    rated again on them: Alice has both games, and the table is the one the
    rebuild from the record gives."""
    if not first:
        # A goofspiel table kept already, with Bob in it.
        tag = club.referee.operator.create_game("goofspiel", [PLAYERS[1], PLAYERS[3]],
                                                now=club.now, seed="zero")
        finish(club, tag, BOB, DAVE)
    # The two games end unrated: they are rated below, at once.
    real = results.game_ended
    monkeypatch.setattr(results, "game_ended", lambda *_: ("", []))
    one = club.referee.operator.create_game("goofspiel", PLAYERS[:2], now=club.now, seed="one")
    finish(club, one, ALICE, BOB)
    two = club.referee.operator.create_game("goofspiel", [PLAYERS[0], PLAYERS[2]],
                                            now=club.now, seed="two")
    finish(club, two, ALICE, CAROL)
    monkeypatch.undo()

    def game(db: Session, tag: str) -> m.Game:
        found = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert found is not None and found.status == "finished"
        return found

    failed: list[BaseException] = []

    def second() -> None:
        try:
            with club.referee.sessions() as db, db.begin():
                real(db, club.config, game(db, two))
        except BaseException as e:
            failed.append(e)

    with club.referee.sessions() as db:
        with db.begin():
            _, moves = real(db, club.config, game(db, one))
            assert moves
            worker = threading.Thread(target=second)
            worker.start()
            assert _blocked(club.config.database_url, worker), failed
        worker.join()
    assert not failed, repr(failed[0])

    with club.referee.sessions() as db:
        alice = db.scalar(select(m.Player.id).where(m.Player.address == ALICE))
        rows = list(db.scalars(select(m.Standing).where(m.Standing.player_id == alice)))
    assert {(r.season != "", r.games) for r in rows} == {(False, 2), (True, 2)}
    kept = stored(club)
    with club.referee.sessions() as db, db.begin():
        results.rebuild_all(db, club.config)
    assert stored(club) == kept
