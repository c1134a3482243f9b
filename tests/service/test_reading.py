"""``status`` reads what it shows of a game from the view stored with its
state, and from the state itself in a row from before views were kept: the
two give the same answer, a private Miser offer hidden both ways."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select, update

from referee.games.draws import COUNTER, KEYED
from referee.service.reading import first_difference
from referee.store import models as m
from tests.games.test_draws import counter_games
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


def test_a_game_stored_with_the_counter_scheme_replays_with_it(tmp_path: Path) -> None:
    """A game made before keyed draws (``games.draws`` is ``counter``, as
    migration 0013 sets every game there was) replays with the generator
    per action it was played with, and ``replay`` says it matches."""
    recorded = next(g for g in counter_games() if g["kind"] == "goofspiel")
    club = Club(tmp_path)
    tag = club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now,
                                            seed=recorded["seed"])
    with club.referee.sessions.begin() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None and game.draws == KEYED
        game.draws, game.state, game.step = COUNTER, recorded["state"], len(recorded["log"])
        # Stored before the bot option: its options never held it.
        game.options = {k: v for k, v in game.options.items() if k != "bot"}
        for seat, (_, name, _) in zip(game.seats, recorded["seats"], strict=True):
            seat.name = name
        db.add_all(m.ActionLog(game_id=game.id, step=step, seat=seat, action=action,
                               source="player", at=club.now)
                   for step, seat, action in recorded["log"])
    assert club.referee.reading.replay(tag) == club.referee.reading.stored_state(
        tag, as_loaded=True)
    with club.referee.sessions.begin() as db:
        db.execute(update(m.Game).values(draws=KEYED))
    assert club.referee.reading.replay(tag) != club.referee.reading.stored_state(tag)
    club.referee.close()


def test_every_difference_from_the_stored_state_is_named_a_key_left_out_too() -> None:
    """The replay is compared with the stored state as the engine loads it,
    where a field an earlier version did not store is filled in as that game
    had it (``Game.upgrade``); so a key on one side alone is a difference:
    a sealed bid taken out of the stored state is caught, as is any value."""
    stored = {"round": 2, "hands": [["AS"], ["KD"]], "bids": {"1": 5, "2": 3}}
    assert first_difference(stored, json.loads(json.dumps(stored))) is None
    assert first_difference(stored, {**stored, "bids": {"1": 5}}) == (
        "state.bids.2: missing from the stored state")
    assert first_difference({**stored, "bids": {"1": 5}}, stored) == (
        "state.bids.2: missing from the replay")
    assert first_difference({**stored, "round": 3}, stored) == (
        "state.round: replayed 3, stored 2")
    assert first_difference({**stored, "hands": [["AS"], ["QD"]]}, stored) == (
        'state.hands[1][0]: replayed "QD", stored "KD"')
    assert first_difference({**stored, "hands": [["AS"]]}, stored) == (
        "state.hands: 1 items replayed, 2 stored")


def test_status_says_who_is_away_until_when(tmp_path: Path) -> None:
    """The operator's ``status`` names a player away from a game (an
    ``away`` in its mail, or one from all games that moved its deadlines),
    until when; an absence over, or of another game, is not shown."""
    from referee.cli.status import status_lines, with_away
    from referee.store.db import now_utc

    club = Club(tmp_path)
    goof = new_goofspiel(club)
    now = now_utc()
    with club.referee.sessions() as db, db.begin():
        game = db.scalars(select(m.Game).where(m.Game.tag == goof)).one()
        alice, bob = (s.player_id for s in game.seats[:2])
        db.add_all([
            m.Absence(player_id=alice, game_id=None, start_at=now - timedelta(hours=1),
                      end_at=now + timedelta(days=3), days=3, games=[game.id]),
            m.Absence(player_id=bob, game_id=game.id, start_at=now - timedelta(days=9),
                      end_at=now - timedelta(days=1), days=8, games=[game.id])])
    (status,) = with_away(club.referee.reading.status(goof), club.referee.reading.away())
    until = (now + timedelta(days=3)).isoformat() + "Z"
    assert [p.get("away_until") for p in status["players"]] == [until, None]
    assert f"  {status['players'][0]['name']} is away until {until}" in list(
        status_lines([status]))
