"""The club's command lines: what each asks, and a refusal that says what
would be right (referee/service/club/words.py)."""

from __future__ import annotations

import pytest

from referee.service.club.words import (
    EntropyLine,
    NewTable,
    StandingsLine,
    TableLine,
    Unreadable,
    parse_line,
    read,
)


@pytest.mark.parametrize(("line", "read_as"), [
    ("new spades", NewTable("spades")),
    ("New Goofspiel cards=13", NewTable("goofspiel", {"cards": "13"})),
    ("new goofspiel with Bob", NewTable("goofspiel", names=("Bob",))),
    ("new goofspiel with Bob cards=5", NewTable("goofspiel", {"cards": "5"}, names=("Bob",))),
    ("new goofspiel with Bob, Carol Lee and dave@club.test",
     NewTable("goofspiel", names=("Bob", "Carol Lee", "dave@club.test"))),
    ("new spades teams alice+carol bob+dave",
     NewTable("spades", teams=(("alice", "carol"), ("bob", "dave")))),
    ("new spades teams=alice+carol,bob+dave target=300",
     NewTable("spades", {"target": "300"}, teams=(("alice", "carol"), ("bob", "dave")))),
    ("new miser players=5", NewTable("miser", seats=5)),
    ("new goofspiel players=3", NewTable("goofspiel", {"players": "3"})),
    ("new pure skill", NewTable("pure-skill")),
    ("open a game of miser", NewTable("miser")),
    ("join spades-t12", TableLine("join", "spades-t12")),
    ("sit [spades-t12]", TableLine("join", "spades-t12")),
    ("leave spades-t12", TableLine("leave", "spades-t12")),
    ("accept", TableLine("accept")),
    ("accept goofspiel-t3", TableLine("accept", "goofspiel-t3")),
    ("decline", TableLine("decline")),
    ("refuse goofspiel-t3", TableLine("decline", "goofspiel-t3")),
    ("start miser-t4", TableLine("start", "miser-t4")),
    ("begin miser-t4", TableLine("start", "miser-t4")),
    ("rematch", TableLine("rematch")),
    ("play again", TableLine("rematch")),
    ("tables", TableLine("tables")),
    ("list tables", TableLine("tables")),
])
def test_each_command_of_the_grammar_and_its_synonyms(line: str, read_as: object) -> None:
    assert parse_line(line) == read_as


@pytest.mark.parametrize("line", [
    "join",             # a game's own join (the tournament's "deal me in")
    "accept offer 3",   # Miser's or the tournament's accept
    "withdraw",         # the tournament's
    "bid 5", "Hello all, good game!", "",
    "rematch, please: it was fun",
])
def test_a_games_own_line_or_talk_is_no_club_line(line: str) -> None:
    assert parse_line(line) is None


@pytest.mark.parametrize(("line", "said"), [
    ("new chess", "There is no game 'chess' here; the games are goofspiel, loatcg, miser, "
                  "pure-skill, spades."),
    ("new", "Write the game after new, like 'new spades'; the games are goofspiel, loatcg, "
            "miser, pure-skill, spades."),
    ("new goofspiel cards=x", "cards"),
    ("new spades colour=red", "Spades has no option 'colour'; its options are teams, target, "
                              "bot. The options of Spades: teams: the partners"),
    ("new goofspiel teams alice+bob", "Unknown option 'teams' for goofspiel"),
    ("new spades teams alice bob", "teams: 'alice' is no team; join the partners with '+'"),
    ("new miser players=2", "players: '2': Miser takes 3 to 52 players."),
    ("new goofspiel Bob", "'Bob' in 'new goofspiel Bob' is neither an option (KEY=VALUE) nor "
                          "a name after 'with'"),
    ("start", "Write the table's tag after start, like 'start spades-t12'"),
    ("leave spades-12", "'spades-12' is no table's tag"),
])
def test_a_bad_line_is_refused_with_what_would_be_right(line: str, said: str) -> None:
    with pytest.raises(Unreadable) as e:
        parse_line(line)
    assert said in str(e.value)


def test_the_option_refusal_lists_what_each_option_takes() -> None:
    with pytest.raises(Unreadable) as e:
        parse_line("new goofspiel tie=sometimes")
    assert "The options of Goofspiel:" in str(e.value)
    assert "tie: a tie at the top" in str(e.value)


def test_a_mail_is_read_line_by_line_keeping_refusals_in_order() -> None:
    found = read(["Hi Bob,", "new goofspiel with Bob", "new chess", "tables", "-- ", "Alice"])
    assert found[0] == NewTable("goofspiel", names=("Bob",))
    assert isinstance(found[1], Unreadable) and "chess" in str(found[1])
    assert found[2] == TableLine("tables")
    assert len(found) == 3


def test_the_referees_pace_options_pass_through_to_the_game_new() -> None:
    """weekends=off and away=no are the referee's (issue 37), in every game."""
    assert parse_line("new spades weekends=off away=no") == NewTable(
        "spades", {"weekends": "off", "away": "no"})


def test_a_pace_option_with_a_value_it_does_not_take_is_refused() -> None:
    with pytest.raises(Unreadable) as e:
        parse_line("new goofspiel weekends=sometimes")
    assert "Option weekends: one of on, off; got 'sometimes'." in str(e.value)


@pytest.mark.parametrize(("line", "read_as"), [
    ("standings", StandingsLine()),
    ("Standings spades", StandingsLine("spades")),
    ("standings pure skill 2026-q4", StandingsLine("pure-skill", "2026-Q4")),
    ("standings miser 2026Q1", StandingsLine("miser", "2026-Q1")),
    ("standings goofspiel 2026", StandingsLine("goofspiel", "2026")),
    ("standings all", StandingsLine(season="all")),
    ("ratings for spades please", StandingsLine("spades")),
    ("standings hide", StandingsLine(hide=True)),
    ("standings hide me please", StandingsLine(hide=True)),
    ("standings show", StandingsLine(hide=False)),
])
def test_standings_asks_for_a_kind_a_season_or_to_hide(line: str,
                                                       read_as: StandingsLine) -> None:
    assert parse_line(line) == read_as


@pytest.mark.parametrize(("line", "said"), [
    ("standings chess", "There is no game 'chess' here; the games are goofspiel, loatcg, "
                        "miser, pure-skill, spades."),
    ("standings spades hearts", "'standings spades hearts' cannot be read: write "
                                "'standings', 'standings spades', 'standings spades 2026-Q4' "
                                "or 'standings hide'."),
])
def test_standings_refuses_what_it_cannot_read_saying_what_is_right(line: str,
                                                                    said: str) -> None:
    with pytest.raises(Unreadable) as e:
        parse_line(line)
    assert str(e.value) == said


def test_entropy_takes_the_words_with_or_without_a_tag_in_single_spaces() -> None:
    assert parse_line("entropy  my\tcat  Tibbles ") == EntropyLine("my cat Tibbles")
    assert parse_line("Entropy [spades-t12] my cat") == EntropyLine("my cat", "spades-t12")
    for line, why in (("entropy", "Write your words after 'entropy'"),
                      ("entropy spades-t12", "Write your words after 'entropy'"),
                      ("entropy " + "é" * 201, "at most 200 printable characters"),
                      ("entropy a\x07b", "some not printable")):
        with pytest.raises(Unreadable, match=why):
            parse_line(line)


def test_the_referee_s_own_options_come_from_one_table() -> None:
    """autoplay, orders, weekends, away and rated: read by ``new KIND`` by
    mail as by ``game new`` (kept as written, not given to the game), named
    in a refused option's answer, and listed in the README as
    ``referee games`` lists them."""
    from pathlib import Path

    from referee.service.play import pace

    assert list(pace.OPTIONS) == ["autoplay", "orders", "weekends", "away", "rated"]
    found = parse_line("new spades autoplay=off orders=off weekends=off away=no rated=no")
    assert isinstance(found, NewTable)
    assert {k: found.options[k] for k in pace.OPTIONS} == {
        "autoplay": "off", "orders": "off", "weekends": "off", "away": "no", "rated": "no"}
    with pytest.raises(Unreadable) as e:
        parse_line("new goofspiel autoplay=sometimes")
    assert "Option autoplay: one of on, off; got 'sometimes'." in str(e.value)
    with pytest.raises(Unreadable) as e:
        parse_line("new goofspiel tie=sometimes")
    assert str(e.value).endswith(f" Every game takes {pace.in_short()} too.")
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    assert "\n".join(f"  {line}" for line in pace.help_lines()) in readme
