"""``status`` reads what it shows of a game from the view stored with its
state, and from the state itself in a row from before views were kept: the
two give the same answer, a private Miser offer hidden both ways."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import update

from referee.store import models as m
from tests.service.test_miser_privacy import new_miser
from tests.test_referee import ALICE, BOB, CAROL, REF, Club, new_goofspiel


def test_the_stored_view_shows_what_the_state_shows(tmp_path: Path) -> None:
    club = Club(tmp_path)
    goof = new_goofspiel(club)
    club.send(ALICE, "bid 3", subject=f"[{goof}]")
    miser = new_miser(club)
    club.send(BOB, "contract with carol against alice 1 1", to=CAROL, cc=REF,
              subject=f"[{miser}] a private offer")
    club.poll(club.now + timedelta(hours=1))
    stored = club.referee.reading.status()
    assert {g["tag"] for g in stored} == {goof, miser}
    assert all(len(g["deadlines"]) == 1 for g in stored)  # Bob's turn, not the offer
    with club.referee.sessions.begin() as db:
        db.execute(update(m.Game).values(public_view=None))
    assert club.referee.reading.status() == stored
    club.referee.close()


def test_status_in_batches_is_status_at_once(tmp_path: Path) -> None:
    """Read a few games at a time, each game shows its own seats and
    deadlines, as read all at once, and one game asked for by its tag too."""
    club = Club(tmp_path)
    tags = [new_goofspiel(club) for _ in range(5)]
    club.send(ALICE, "bid 3", subject=f"[{tags[2]}]")
    club.poll(club.now + timedelta(hours=1))
    at_once = club.referee.reading.status()
    assert [g["tag"] for g in at_once] == tags
    assert [len(g["deadlines"]) for g in at_once] == [2, 2, 1, 2, 2]
    for batch in (1, 2, 3):
        assert list(club.referee.reading.iter_status(batch=batch)) == at_once
    assert club.referee.reading.status(tags[2]) == [at_once[2]]
    club.referee.close()
