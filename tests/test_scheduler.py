"""The daemon's mail watcher outlives any one failed pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee import scheduler
from referee.scheduler import Daemon
from referee.service import Referee
from tests.test_referee import Club


def test_the_mail_watcher_lives_on_after_a_pass_that_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    club = Club(tmp_path)
    daemon = Daemon(club.referee)
    calls: list[str] = []

    def intake(referee: Referee, **_: object) -> tuple[int, int, int]:
        calls.append("pass")
        if len(calls) == 1:
            raise RuntimeError("database is locked")
        daemon.stop.set()
        return 0, 0, 0

    monkeypatch.setattr(scheduler, "intake", intake)
    monkeypatch.setattr(scheduler, "MAX_BACKOFF", 0.01)
    daemon.watch_mail()  # returns once the second pass sets stop
    assert calls == ["pass", "pass"]
    club.referee.close()
