"""The operator's ``game new`` with Spades teams named as people name each
other: by address, by name (two words too), by a word of the name or the
part of the address before the @; the first pair given is team 1; a bad
teams value is one error naming what was wrong, and nothing is made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.cli import main
from referee.service.errors import RefereeError
from referee.store import models as m
from tests.test_referee import T0, Club
from tests.test_spades_mail import kinds, section

PLAYERS = ["Ann Lee <ann@club.test>", "Ben Ray <bray@club.test>",
           "Cat Moss <cat@club.test>", "dan@club.test"]


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path)
    yield c
    c.referee.close()


def opening(club: Club, teams: str, seed: str) -> str:
    """The opening mail of a new game of Spades with these teams."""
    tag = club.referee.operator.create_game(
        "spades", PLAYERS, options={"teams": teams, "mail": "all"}, now=T0, seed=seed)
    # Each player's opening comes with their hand in one mail: its opening part.
    return section(next(x for x in club.poll(T0) if "opening" in kinds(x)
                        and str(x["Subject"]).startswith(f"[{tag}]")), "Spades begins")


@pytest.mark.parametrize("teams", [
    "ann@club.test+cat@club.test,bray@club.test+dan@club.test",
    "Ann Lee+Cat Moss,Ben Ray+Dan",
    "ann+cat,bray+dan",
    "Lee+Moss",
])
def test_spades_teams_by_address_name_or_local_part_and_the_first_pair_is_team_1(
        club: Club, teams: str) -> None:
    for seed in ("a", "b", "c", "d"):
        text = opening(club, teams, seed)
        team_1 = {line.split(". ", 1)[1].removesuffix(" (team 1)")
                  for line in text.splitlines() if line.endswith("(team 1)")}
        assert team_1 == {"Ann Lee", "Cat Moss"}, text


def test_the_second_pair_given_first_is_team_1(club: Club) -> None:
    text = opening(club, "Ben Ray+Dan,Ann Lee+Cat Moss", "a")
    assert {line.split(". ", 1)[1] for line in text.splitlines() if "(team 1)" in line} == {
        "Ben Ray (team 1)", "Dan (team 1)"}


@pytest.mark.parametrize(("teams", "error"), [
    ("ann+eve,ben+dan", "teams: There is no player 'eve'. You may name Ann Lee, Ben Ray, "
                        "Cat Moss or Dan."),
    ("ann+cat,ann lee+dan", "teams: 'ann+cat,ann lee+dan' names Ann Lee twice"),
    ("ann+cat+ben,dan", "teams: 'ann+cat+ben,dan' should be two pairs of players, each pair "
                        "joined by '+'"),
])
def test_a_bad_teams_value_is_one_error_and_makes_nothing(
        club: Club, teams: str, error: str) -> None:
    with pytest.raises(RefereeError) as refused:
        club.referee.operator.create_game("spades", PLAYERS, options={"teams": teams}, now=T0)
    assert str(refused.value).startswith(error)
    assert club.count(m.Game) == club.count(m.Player) == club.count(m.Outbox) == 0


def test_the_command_line_prints_a_bad_teams_value_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[referee]\naddress = "referee@club.test"\n'
                    '[mailbox]\nkind = "maildir"\npath = "in"\n'
                    '[smtp]\nkind = "maildir"\npath = "out"\n', encoding="utf-8")
    cli = ["--config", str(path)]
    assert main([*cli, "init"]) == 0
    args = [a for p in PLAYERS for a in ("--player", p)]
    assert main([*cli, "game", "new", "--at-once", "spades", *args, "--option",
                 "teams=Ann Lee+Eve,Ben+Dan"]) == 1
    assert capsys.readouterr().err == (
        "referee: teams: There is no player 'Eve'. You may name Ann Lee, Ben Ray, Cat Moss or "
        "Dan.\n")
    assert main([*cli, "status", "--json"]) == 0
    assert capsys.readouterr().out == "[]\n"  # no game


def test_a_replay_sees_the_names_a_game_began_with_after_a_new_address(club: Club) -> None:
    tag = club.referee.operator.create_game(
        "spades", PLAYERS, options={"teams": "ann@club.test+cat@club.test"}, now=T0, seed="r")
    club.referee.operator.readdress_player("ann@club.test", "ann.lee@new.test", now=T0)
    assert club.referee.reading.replay(tag) == club.referee.reading.stored_state(tag)


def test_game_new_refuses_two_players_whose_names_read_alike(club: Club) -> None:
    """A name given to ``game new`` is cleaned; two that read alike (the
    same, or Unicode confusables) make no game, and say which."""
    for names in (["Alice", "\u0410lice"], ["Ann", "Ann"], ["Bob", "B\u200bob"]):
        with pytest.raises(RefereeError) as refused:
            club.referee.operator.create_game(
                "goofspiel", [f"{names[0]} <a@club.test>", f"{names[1]} <b@club.test>"], now=T0)
        shown = [n.replace("\u200b", "") for n in names]
        assert str(refused.value) == (
            f"The names {shown[0]!r} and {shown[1]!r} read alike: give each player a name "
            "the others can tell apart, as in 'Ann Lee <ann@example.org>'.")
    with club.referee.sessions() as db:
        assert db.query(m.Game).count() == 0
    tag = club.referee.operator.create_game(
        "goofspiel", ["Al\x0bice\u202e <a@club.test>", "\uff22ob <b@club.test>"], now=T0)
    with club.referee.sessions() as db:
        game = db.query(m.Game).filter_by(tag=tag).one()
        assert [s.name for s in game.seats] == ["Al ice", "Bob"]
        assert [s.player.name for s in game.seats] == ["Al ice", "Bob"]


def test_game_new_keeps_the_pace_options_and_refuses_a_bad_one(club: Club) -> None:
    """weekends=off and away=no are the referee's options in every game
    (issue 37): kept with the game, never given to its rules."""
    ops = club.referee.operator
    tag = ops.create_game("goofspiel", PLAYERS[:2], options={"weekends": "off", "away": "no"},
                          now=T0)
    with club.referee.sessions() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None
        assert (game.options["weekends"], game.options["away"]) == ("off", "no")
    # The game's rules never see them: its replay is the game.
    assert club.referee.reading.replay(tag) == club.referee.reading.stored_state(tag, True)
    with pytest.raises(RefereeError, match="Option away: one of yes, no; got 'never'"):
        ops.create_game("goofspiel", PLAYERS[:2], options={"away": "never"}, now=T0)
