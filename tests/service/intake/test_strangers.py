"""An address in no game is answered at most once a day, and where the mail
server's checks can be read, only when they vouch for its sender: a forged
From gets no backscatter."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.test_referee import Club, to

MX = "mx.club.test"


def test_a_stranger_is_answered_once_a_day(tmp_path: Path) -> None:
    club = Club(tmp_path)
    for _ in range(3):
        club.send("eve@else.test", "bid 5")
    assert [to(x) for x in club.poll()] == ["eve@else.test"]
    club.send("eve@else.test", "bid 5 again")
    assert len(club.poll(club.now + timedelta(days=1, minutes=1))) == 1


def test_with_the_servers_checks_a_stranger_is_answered_only_when_they_vouch(
        tmp_path: Path) -> None:
    club = Club(tmp_path, auth={"authserv_id": MX})
    club.send("victim@else.test", "bid 5")  # forged: nothing vouches for it
    club.send("eve@else.test", "bid 5", headers={
        "Authentication-Results": f"{MX}; dkim=pass header.d=else.test"})
    assert [to(x) for x in club.poll()] == ["eve@else.test"]
