"""The club's standings kept (referee/service/play/results.py, issue 40):
results of every kind fed through the real pipeline on Maildir and SQLite
(a team's, several winners', no winner, bots, a resigned seat), rated when
a game ends, and the rebuild from the record giving the same tables."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee.service.play import results
from referee.service.play.ratings import ALL_TIME, Outcome
from referee.store import models as m
from tests.test_referee import ALICE, BOB, CAROL, T0, Club, body

DAVE = "dave@club.test"
PLAYERS = [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>", f"Dave <{DAVE}>"]


@pytest.fixture
def rated(tmp_path: Path) -> Iterator[Club]:
    """A club that keeps standings, by quarter."""
    c = Club(tmp_path, club={"standings": True, "season": "quarter"})
    yield c
    c.referee.close()


def finish(club: Club, tag: str, *addresses: str) -> None:
    """Each of ``addresses`` resigns from ``tag``: bots play their seats to
    the end (a bot moves at once)."""
    for address in addresses:
        club.referee.operator.resign_player(tag, address, now=club.now)
    club.poll()
    club.now += timedelta(minutes=1)


def outcome(club: Club, tag: str) -> Outcome | None:
    with club.referee.sessions() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None and game.status == "finished", tag
        return results.outcome_of(db, game)


def ids(club: Club, *addresses: str) -> tuple[int, ...]:
    with club.referee.sessions() as db:
        found = {p.address: p.id for p in db.scalars(select(m.Player))}
    return tuple(found[a] for a in addresses)


def table(club: Club, kind: str | None = None, season: str = ALL_TIME,
          published: bool = True) -> list[tuple[str, float, int, int]]:
    with club.referee.sessions() as db:
        return [(ln.name, ln.points, ln.games, ln.wins)
                for t in results.tables(db, club.config, kind, season, published)
                for ln in t.lines]


def stored(club: Club) -> list[tuple[Any, ...]]:
    with club.referee.sessions() as db:
        return sorted((r.kind, r.season, r.player_id, r.mu, r.sigma, r.games, r.wins,
                       r.last_game_id) for r in db.scalars(select(m.Standing)))


def test_a_spades_result_places_the_partners_together(rated: Club) -> None:
    tag = rated.referee.operator.create_game("spades", PLAYERS, now=rated.now, seed="s",
                                             options={"target": "100"})
    finish(rated, tag, ALICE, BOB, CAROL, DAVE)
    found = outcome(rated, tag)
    assert found is not None and len(found.sides) == 2
    places = sorted(place for _, place in found.sides)
    assert places == [1, 2]
    assert sorted(len(players) for players, _ in found.sides) == [2, 2]
    rows = {name: (points, games, wins) for name, points, games, wins in table(rated)}
    winners = [name for name, (_, _, wins) in rows.items() if wins]
    assert len(winners) == 2 and all(rows[n][1] == 1 for n in rows)
    # Partners move together: the two winners' points are one number.
    assert len({rows[n][0] for n in winners}) == 1


def test_a_resigned_seat_counts_for_its_player_and_a_bot_seat_for_nobody(rated: Club) -> None:
    tag = rated.referee.operator.create_game("pure-skill", PLAYERS[:2], bots=1,
                                             now=rated.now, seed="s")
    finish(rated, tag, ALICE, BOB)
    found = outcome(rated, tag)
    assert found is not None
    # Two sides, Alice's and Bob's: the bot that sat from the start is no one.
    assert sorted(p for players, _ in found.sides for p in players) == sorted(
        ids(rated, ALICE, BOB))
    assert sorted(name for name, *_ in table(rated)) == ["Alice", "Bob"]


def test_a_tie_has_no_winner_and_counts_as_a_draw(rated: Club) -> None:
    # Goofspiel's prizes 1..6 and bots bidding alike: find a seed that ties.
    for n in range(40):
        rated.referee.operator.create_game("goofspiel", PLAYERS[:2], now=rated.now,
                                           seed=f"tie{n}")
        tag = f"goofspiel-{n + 1}"
        finish(rated, tag, ALICE, BOB)
        found = outcome(rated, tag)
        assert found is not None
        if {place for _, place in found.sides} == {1}:
            assert found.winners == frozenset()
            break
    else:
        pytest.fail("no seed of 40 gave a tie")
    assert n > 0, "the search must have rated games with a winner too"


def test_cancelled_and_unrated_games_do_not_count(rated: Club) -> None:
    one = rated.referee.operator.create_game("goofspiel", PLAYERS[:2], now=rated.now,
                                             options={"rated": "no"})
    finish(rated, one, ALICE, BOB)
    assert outcome(rated, one) is None
    two = rated.referee.operator.create_game("goofspiel", PLAYERS[2:], now=rated.now)
    rated.referee.operator.cancel_game(two, "test", now=rated.now)
    with rated.referee.sessions() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == two))
        assert game is not None and results.outcome_of(db, game) is None
    assert stored(rated) == []


def test_a_miser_result_has_one_winner_or_none(rated: Club) -> None:
    tag = rated.referee.operator.create_game("miser", PLAYERS[:3], now=rated.now, seed="m")
    finish(rated, tag, ALICE, BOB, CAROL)
    found = outcome(rated, tag)
    assert found is not None
    firsts = [players for players, place in found.sides if place == 1]
    assert len(firsts) == 1 or len(firsts) == 3
    assert len(found.winners) in (0, 1)


def test_the_rebuild_gives_the_stored_tables_and_seasons_apart(rated: Club) -> None:
    op = rated.referee.operator
    for i, kind in enumerate(["goofspiel", "pure-skill", "goofspiel", "miser"]):
        seats = PLAYERS[:3] if kind in ("pure-skill", "miser") else PLAYERS[i % 2:i % 2 + 2]
        tag = op.create_game(kind, seats, now=rated.now, seed=f"r{i}")
        finish(rated, tag, *[s.split("<")[1].rstrip(">") for s in seats])
        if i == 1:
            rated.now += timedelta(days=100)  # the next quarter
    before = stored(rated)
    assert {season for _, season, *_ in before} == {ALL_TIME, "2026-Q1", "2026-Q2"}
    shown = table(rated)
    assert rated.referee.club.standings(rebuild=True, season="all")
    assert stored(rated) == before
    assert table(rated) == shown
    # The season's table counts only its own games.
    games_q1 = sum(g for _, _, g, _ in table(rated, "goofspiel", "2026-Q1"))
    games_all = sum(g for _, _, g, _ in table(rated, "goofspiel"))
    assert (games_q1, games_all) == (2, 4)


def test_a_game_ended_before_one_rated_rebuilds_so_order_holds(rated: Club) -> None:
    op = rated.referee.operator
    first = op.create_game("goofspiel", PLAYERS[:2], now=rated.now, seed="a")
    rated.now += timedelta(days=1)
    finish(rated, first, ALICE, BOB)
    rated.now -= timedelta(hours=12)  # a clock set back: ends before the first
    second = op.create_game("goofspiel", PLAYERS[:2], now=rated.now, seed="b")
    finish(rated, second, ALICE, BOB)
    before = stored(rated)
    rated.referee.club.standings(rebuild=True)
    assert stored(rated) == before


def test_a_player_who_hides_is_left_out_of_published_tables(rated: Club) -> None:
    tag = rated.referee.operator.create_game("goofspiel", PLAYERS[:2], now=rated.now)
    finish(rated, tag, ALICE, BOB)
    with rated.referee.sessions.begin() as db:
        alice = db.scalar(select(m.Player).where(m.Player.address == ALICE))
        assert alice is not None
        results.set_hidden(db, alice, True)
    assert [name for name, *_ in table(rated)] == ["Bob"]
    assert sorted(name for name, *_ in table(rated, published=False)) == ["Alice", "Bob"]
    assert [ln.place for t in rated.referee.club.standings(season="all")
            for ln in t.lines if ln.hidden] != []


def test_the_last_mail_says_how_the_result_moved_its_players(rated: Club) -> None:
    tag = rated.referee.operator.create_game("goofspiel", PLAYERS[:2], now=rated.now,
                                             seed="s")
    rated.poll()
    rated.referee.operator.resign_player(tag, BOB, now=rated.now)
    rated.poll()
    for _ in range(6):
        with rated.referee.sessions() as db:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            assert game is not None
            if game.status != "active":
                break
            pack = game.state["packs"][0]
        rated.send(ALICE, f"bid {max(pack)}", subject=f"[{tag}] bid")
        mails = rated.poll()
    last = body(mails[-1])
    rows = table(rated, season="2026-Q1")
    assert "THE CLUB'S STANDINGS\nThis game counts in the club's Goofspiel standings " \
           "(season 2026-Q1):\n" in last
    for name, points, _, _ in rows:
        assert f"  {name}: " in last and f"now {points:.1f}" in last
    assert 'Write "standings" to the referee for the whole table.' in last


def test_no_standings_are_kept_while_the_club_keeps_none(tmp_path: Path) -> None:
    club = Club(tmp_path)
    try:
        tag = club.referee.operator.create_game("goofspiel", PLAYERS[:2], now=T0)
        finish(club, tag, ALICE, BOB)
        assert stored(club) == []
        assert not any("STANDINGS" in body(x) for x in club.poll())
    finally:
        club.referee.close()


def test_games_left_out_for_want_of_their_package_are_said_and_taken_back(
        rated: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild while a kind's package is missing leaves its games out and
    says so under the tables; once it serves again the tables are stale,
    and the next pass works them out with its games in."""
    one = rated.referee.operator.create_game("goofspiel", PLAYERS[:2], now=rated.now, seed="a")
    finish(rated, one, ALICE, BOB)
    two = rated.referee.operator.create_game("pure-skill", PLAYERS[:3], now=rated.now)
    finish(rated, two, ALICE, BOB, CAROL)
    whole = stored(rated)
    real = results.engine_of

    def missing(db: Any, game: m.Game) -> Any:
        if game.kind == "goofspiel":
            raise results.Unserved("goofspiel", "pbm-goofspiel")
        return real(db, game)

    monkeypatch.setattr(results, "engine_of", missing)
    with rated.referee.sessions() as db, db.begin():
        results.rebuild_all(db, rated.config)
    monkeypatch.undo()
    with rated.referee.sessions() as db:
        assert results.left_out(db) == {"goofspiel": (1, "pbm-goofspiel")}
        text = results.as_text(results.tables(db, rated.config))
        left = results.as_text(results.tables(db, rated.config), results.left_out(db))
    assert "Goofspiel" not in text, text
    assert left == text + (
        "\n\nNot counted: 1 finished game of goofspiel, whose package (pbm-goofspiel) "
        "the referee cannot load.")
    assert rated.referee.club.standings_stale() == (
        "the games of goofspiel were left out for want of their package, installed since")
    rated.poll()
    assert rated.referee.club.standings_stale() is None
    assert stored(rated) == whole
    with rated.referee.sessions() as db:
        assert results.left_out(db) == {}


def test_standings_turned_off_and_on_again_are_worked_out_again(tmp_path: Path) -> None:
    """A game that ends while the club keeps no standings counts once they
    are on again: the tables are stale until the next pass rebuilds them."""
    on = {"standings": True, "season": "quarter"}
    club = Club(tmp_path, club=on)
    try:
        tag = club.referee.operator.create_game("goofspiel", PLAYERS[:2], now=club.now)
        finish(club, tag, ALICE, BOB)
        club.referee.close()
        club = Club(tmp_path, club={"standings": False})
        assert club.referee.club.standings_stale() is None
        kept = stored(club)
        tag = club.referee.operator.create_game("goofspiel", PLAYERS[2:], now=club.now)
        finish(club, tag, CAROL, DAVE)
        assert stored(club) == kept
        club.referee.close()
        club = Club(tmp_path, club=on)
        assert club.referee.club.standings_stale() == (
            "[club] standings was turned on again: games that ended while it was off are "
            "not in the tables")
        club.poll()
        assert club.referee.club.standings_stale() is None
        assert {name for name, *_ in table(club, "goofspiel")} == {"Alice", "Bob", "Carol",
                                                                 "Dave"}
    finally:
        club.referee.close()


def test_check_warns_of_tables_worked_out_under_another_season(tmp_path: Path) -> None:
    """``referee check`` says the stored tables are out of date after the
    season changed; once a pass has worked them out again, nothing."""
    from referee.check import check_standings_current

    club = Club(tmp_path, club={"standings": True, "season": "quarter"})
    try:
        tag = club.referee.operator.create_game("goofspiel", PLAYERS[:2], now=club.now)
        finish(club, tag, ALICE, BOB)
        assert check_standings_current(club.config) == []
        club.referee.close()
        club = Club(tmp_path, club={"standings": True, "season": "year"})
        (line,) = check_standings_current(club.config)
        assert (line.part, line.verdict, line.text) == (
            "standings", "WARN", 'the tables are out of date: the tables were worked out with '
            '[club] season = "quarter", and the config now says "year"; the next pass works '
            "them out again, or now: referee standings --rebuild")
        club.poll()
        assert check_standings_current(club.config) == []
    finally:
        club.referee.close()
