"""The daemon and a database that is busy (a locked SQLite file) or away:
one line in the log, not a traceback, and mail is read again within seconds,
as ``referee poll`` says it in one line and cron runs it again."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from referee import scheduler
from referee.scheduler import Daemon
from referee.service import Referee
from tests.test_referee import Club


def locked() -> OperationalError:
    """What SQLAlchemy raises when SQLite's busy timeout runs out."""
    return OperationalError("UPDATE cursors SET last_uid=?", {},
                            sqlite3.OperationalError("database is locked"))


def test_a_locked_database_is_one_line_and_mail_is_read_again_within_seconds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    club = Club(tmp_path)
    daemon = Daemon(club.referee)
    passes: list[str] = []
    waits: list[float] = []

    def intake(referee: Referee, **_: object) -> tuple[int, int, int]:
        passes.append("pass")
        if len(passes) <= 6:
            raise locked()
        daemon.stop.set()
        return 0, 0, 0

    def wait(seconds: float | None = None) -> bool:
        waits.append(seconds or 0.0)
        return daemon.stop.is_set()

    monkeypatch.setattr(scheduler, "intake", intake)
    monkeypatch.setattr(daemon.stop, "wait", wait)
    with caplog.at_level(logging.INFO, logger="referee"):
        daemon.watch_mail()  # returns once the seventh pass sets stop
    assert len(passes) == 7
    assert waits[:6] == [1, 2, 4, 8, 10, 10]  # seconds, doubling, capped
    lines = [r for r in caplog.records if r.name == "referee.scheduler"]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in lines)
    warned = [r.getMessage() for r in lines if r.levelno >= logging.WARNING]
    assert len(warned) == 2  # the rest of the wait is at info
    assert warned[0] == ("the database is busy or away (database is locked); reading mail "
                         "again in 1 s")
    assert warned[1].startswith("the database answers again after ")
    club.referee.close()


def test_a_job_that_meets_a_locked_database_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    club = Club(tmp_path)
    daemon = Daemon(club.referee)

    def send_outbox(referee: Referee, now: object = None) -> int:
        raise locked()

    monkeypatch.setattr(scheduler, "send_outbox", send_outbox)
    with caplog.at_level(logging.INFO, logger="referee"):
        daemon.outbox()
    (record,) = [r for r in caplog.records if r.name == "referee.scheduler"]
    assert (record.levelno, record.exc_info) == (logging.WARNING, None)
    assert record.getMessage() == ("outbox: the database is busy or away (database is "
                                   "locked); will try again")
    club.referee.close()
