"""The pass lease is kept through a long pass: renewed by the process that
took it once a quarter of its time is gone, never taken by ``keep``."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from referee.service import lease as lease_module
from referee.service.lease import Lease
from tests.test_referee import Club


def test_a_long_pass_keeps_the_lease_it_took(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    club = Club(tmp_path)
    clock = [1000.0]
    monkeypatch.setattr(lease_module.time, "monotonic", lambda: clock[0])
    lease = Lease(club.referee.sessions, ttl=timedelta(minutes=2))
    asked: list[datetime | None] = []
    acquire = lease.acquire

    def counted(now: datetime | None = None) -> bool:
        asked.append(now)
        return acquire(now)

    monkeypatch.setattr(lease, "acquire", counted)
    lease.keep()
    assert asked == [] and lease.holder_now() is None  # not taken: keep takes nothing
    assert lease.take() and len(asked) == 1
    clock[0] += 10
    lease.keep()  # ten seconds on: not yet
    assert len(asked) == 1
    clock[0] += 25  # past a quarter of two minutes
    lease.keep()
    assert len(asked) == 2 and lease.holder_now() == lease.holder
    clock[0] += 10
    lease.keep()  # counted from the renewal
    assert len(asked) == 2
    lease.release()
    clock[0] += 60
    lease.keep()  # released: not taken again
    assert len(asked) == 2
    assert Lease(club.referee.sessions).take()  # free for the next pass
    club.referee.close()
