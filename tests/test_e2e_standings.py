"""The club's standings by mail, over the real Postfix and Dovecot (issue
40): a game's last mail says how its result moved its players; "standings"
to the referee answers with the table; "standings hide" leaves the writer
out of the tables others are sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_config
from referee.service import Referee
from referee.service.play import results
from tests.mailstack import MailStack
from tests.test_e2e import NAME, REF, T0, Post, body, person, write_config


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path, club={"standings": True, "season": "quarter"})
    yield p
    p.close()


def mail_until(post: Post, user: str, wanted: Callable[[EmailMessage], bool]) -> EmailMessage:
    """``user``'s next mail that is ``wanted``, those before it passed over."""
    for _ in range(40):
        for msg in post.new_mail(user, 1):
            if wanted(msg):
                return msg
    raise AssertionError(f"no such mail came to {user}")


def test_standings_by_mail_the_last_mail_the_table_and_hide(post: Post) -> None:
    tag = post.referee.operator.create_game(
        "goofspiel", [person("alice"), person("bob")], now=T0, seed="s")
    post.poll(T0)
    # Bob leaves, a bot plays his seat; Alice is silent, and the referee
    # bids for her at each deadline.
    post.write("bob", "resign\n", subject=f"[{tag}] resign")
    post.poll(T0 + timedelta(minutes=1))
    for day in range(1, 8):
        post.poll(T0 + timedelta(days=4 * day))
        if post.referee.reading.status(tag)[0]["status"] != "active":
            break
    last = mail_until(post, "alice", lambda x: "THE CLUB'S STANDINGS" in body(x))
    with post.referee.sessions() as db:
        (season,) = results.tables(db, post.config, "goofspiel", "2026-Q1")
    assert len(season.lines) == 2
    moved = "".join(f"  {ln.name}: {ln.points:+.1f} points, now {ln.points:.1f} "
                    f"(place {ln.place} of 2)\n" for ln in season.lines)
    assert ("\nTHE CLUB'S STANDINGS\nThis game counts in the club's Goofspiel standings "
            f"(season 2026-Q1):\n{moved}"
            'Write "standings" to the referee for the whole table.\n') in body(last)

    post.write("alice", "standings\n", subject="standings?")
    post.poll(T0 + timedelta(days=26))
    answer = mail_until(post, "alice", lambda x: str(x["Subject"]) == "Re: standings?")
    rows = "".join(f"    {ln.place}  {ln.name:<6}  {ln.points:>6.1f}  {ln.games:>5}  "
                   f"{ln.wins:>3}\n" for ln in season.lines)
    table = f"    #  Player  Points  Games  Won\n{rows}"
    assert body(answer) == (
        "Hello,\n\n"
        f"This is {NAME}, a robot that referees games played by email.\n"
        "The club's standings:\n\n"
        f"Goofspiel, season 2026-Q1:\n{table}\n"
        f"Goofspiel, all time:\n{table}\n"
        "Points are a rating worked out from the results of the games finished\n"
        "here: a newcomer has 0, a win moves one up, the more so against players\n"
        "with more points, and a loss down. Seats played by bots, cancelled games\n"
        "and games started with rated=no do not count.\n\n"
        'Write "standings" and a game for its table alone, like "standings spades",\n'
        'and a season like "2026-Q4", or "all" for all time. Write "standings hide"\n'
        "to be left out of the tables.\n\n"
        f"-- \n{NAME} <{REF}>\n")

    post.write("bob", "standings hide\n", subject="hide me")
    post.poll(T0 + timedelta(days=26, minutes=1))
    hidden = mail_until(post, "bob", lambda x: str(x["Subject"]) == "Re: hide me")
    assert "You are now left out of the club's standings wherever they are shown" in body(
        hidden)
    post.write("alice", "standings goofspiel all\n", subject="again")
    post.poll(T0 + timedelta(days=26, minutes=2))
    again = body(mail_until(post, "alice", lambda x: str(x["Subject"]) == "Re: again"))
    assert "Goofspiel, all time:\n" in again and "Alice" in again
    assert "Bob" not in again and "season" not in again.split("Points are")[0]


def finished_goofspiel(post: Post) -> str:
    """A game of Alice's and Bob's played to its end (Bob resigned, a bot
    plays his seat; the referee bids for silent Alice at each deadline)."""
    tag = post.referee.operator.create_game(
        "goofspiel", [person("alice"), person("bob")], now=T0, seed="s")
    post.poll(T0)
    post.write("bob", "resign\n", subject=f"[{tag}] resign")
    post.poll(T0 + timedelta(minutes=1))
    for day in range(1, 8):
        post.poll(T0 + timedelta(days=4 * day))
        if post.referee.reading.status(tag)[0]["status"] != "active":
            break
    assert post.referee.reading.status(tag)[0]["status"] == "finished"
    return tag


def test_a_changed_season_is_noticed_and_the_tables_worked_out_again(post: Post) -> None:
    """The operator changes ``[club] season`` from quarters to years: the
    operator's ``standings`` says the tables are out of date, the next pass
    works them out again, and ``standings`` by mail answers with the year's
    table at once, no ``standings --rebuild`` needed."""
    finished_goofspiel(post)
    with post.referee.sessions() as db:
        assert results.stale(db, post.config) is None
        assert [t.season for t in results.tables(db, post.config, "goofspiel", "2026-Q1")]
    post.referee.close()
    write_config(post.config_path, post.stack, club={"standings": True, "season": "year"})
    post.config = load_config(post.config_path)
    post.referee = Referee(post.config)
    assert post.referee.club.standings_stale() == (
        'the tables were worked out with [club] season = "quarter", '
        'and the config now says "year"')

    post.write("alice", "standings\n", subject="the year?")
    post.poll(T0 + timedelta(days=40))
    assert post.referee.club.standings_stale() is None
    answer = body(mail_until(post, "alice", lambda x: str(x["Subject"]) == "Re: the year?"))
    assert "Goofspiel, season 2026:\n" in answer and "2026-Q1" not in answer
    with post.referee.sessions() as db:
        assert results.seasons(db, "goofspiel") == ["2026", ""]
