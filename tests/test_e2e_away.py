"""Away from all games at once (issue 37), over the suite's real servers:
``away 10d`` to the referee with no game moves every game's deadlines,
tells each table and draws from the player's bank; ``away`` alone shows
the bank; ``back`` gives the days not begun back and moves the deadlines
back; a game made with ``away=no`` refuses absence; a game with
``weekends=off`` keeps its deadlines off Saturday and Sunday."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from referee.store import models as m
from tests.test_e2e import ALICE, BOB, T0, Post, body, kind, person, post
from tests.test_e2e_turns import arrived

__all__ = ["post"]

CAROL = person("carol")


def due(post: Post, tag: str) -> list[str]:
    """The game's deadlines, the soonest first."""
    with post.referee.sessions() as db:
        return [f"{d:%Y-%m-%d %H:%M}" for d in db.scalars(
            select(m.Deadline.due_at).join(m.Game).where(m.Game.tag == tag)
            .order_by(m.Deadline.due_at, m.Deadline.id))]


def two_games(post: Post, **options: str) -> tuple[str, str]:
    """Alice plays Goofspiel with Bob, and with Carol (``options`` in the second)."""
    one = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="one")
    two = post.referee.operator.create_game("goofspiel", [ALICE, CAROL], now=T0, seed="two",
                                            options=options)
    post.poll(T0)
    for user in ("alice", "bob", "carol"):
        arrived(post, user)
    return one, two


def test_away_to_no_game_moves_every_game_and_draws_from_the_bank(post: Post) -> None:
    one, two = two_games(post)
    assert due(post, one) == due(post, two) == ["2026-03-05 12:00"] * 2
    post.write("alice", "away 10d\n\nThanks,\nAlice", subject="holiday")
    post.poll(T0 + timedelta(hours=1))
    mails = arrived(post, "alice")
    (answer,) = [x for x in mails if kind(x) == "away_answer"]
    assert str(answer["Subject"]) == "Re: holiday"
    text = " ".join(body(answer).split())
    assert ("> away 10d DONE (away): You are away from all your games until Thu 12 Mar 2026 "
            "13:00 UTC (1 week 3 days): 10 days drawn from your bank, 20 left in 2026. "
            f"The deadlines are moved in {one}, {two}; each table is told.") in text
    # Each table is told, Alice too, in each game's own mail.
    assert sorted(str(x["Subject"]) for x in mails if kind(x) == "away") == [
        f"[{one}] Alice is away until Thu 12 Mar 2026 13:00 UTC",
        f"[{two}] Alice is away until Thu 12 Mar 2026 13:00 UTC"]
    (told,) = arrived(post, "bob")
    assert kind(told) == "away"
    told_text = " ".join(body(told).split())
    assert "Alice is away from all their games until Thu 12 Mar 2026 13:00 UTC" in told_text
    assert "now due Sun 15 Mar 2026 12:00 UTC" in told_text
    (told,) = arrived(post, "carol")
    assert kind(told) == "away"
    assert due(post, one) == due(post, two) == ["2026-03-15 12:00"] * 2
    with post.referee.sessions() as db:
        (absence,) = db.scalars(select(m.Absence))
        assert (absence.days, absence.game_id, len(absence.games)) == (10, None, 2)
    # away alone: the bank and the absence.
    post.write("alice", "away", subject="how many days?")
    post.poll(T0 + timedelta(hours=2))
    (answer,) = arrived(post, "alice")
    assert ("You have 20 days away left in 2026, of 30 a year, for all your games together.\n"
            "  You are away from all your games until Thu 12 Mar 2026 13:00 UTC.") in body(answer)
    post.assert_no_more_mail("bob", "carol")


def test_a_deadline_made_while_away_runs_from_the_return(post: Post) -> None:
    one, _ = two_games(post)
    post.write("alice", "away 10d", subject="holiday")
    post.poll(T0 + timedelta(hours=1))
    arrived(post, "alice")
    arrived(post, "bob")
    arrived(post, "carol")
    # Both bid; round 2 opens while Alice is away: her new deadline runs
    # from her return, Bob's from now.
    for user, bid in (("bob", "bid 1"), ("alice", "bid 2")):
        post.write(user, bid, subject=f"[{one}] bid")
    post.poll(T0 + timedelta(hours=2))
    assert due(post, one) == ["2026-03-05 14:00", "2026-03-15 13:00"]


def test_back_returns_the_days_not_begun_and_moves_the_deadlines_back(post: Post) -> None:
    one, two = two_games(post)
    post.write("alice", "away 10d", subject="holiday")
    post.poll(T0 + timedelta(hours=1))
    for user in ("alice", "bob", "carol"):
        arrived(post, user)
    post.write("alice", "back", subject="home early")
    post.poll(T0 + timedelta(days=2))
    mails = arrived(post, "alice")
    (answer,) = [x for x in mails if kind(x) == "away_answer"]
    assert (f"> back DONE (back): Welcome back. 8 days went back to your bank; you have "
            f"28 days away left in 2026. The deadlines are moved back in {one} and {two}; "
            "the table is told.") in " ".join(body(answer).split())
    (told,) = arrived(post, "bob")
    assert str(told["Subject"]) == f"[{one}] Alice is back"
    # Moved 10 days later, then back by the 8 days 1 hour not used: the
    # old deadline and the 1 day 23 hours Alice was away.
    assert due(post, one) == due(post, two) == ["2026-03-07 11:00"] * 2
    post.write("alice", "back", subject="again")
    post.poll(T0 + timedelta(days=2, hours=1))
    (answer,) = arrived(post, "alice")
    assert "REFUSED (back): You are not away from any game; nothing was changed." in body(answer)


def test_back_never_moves_a_deadline_into_the_past(post: Post) -> None:
    one, _ = two_games(post)
    # Away 12 hours before the deadline, back a day after it would have been.
    post.write("alice", "away 5d", subject="holiday")
    post.poll(T0 + timedelta(days=2, hours=12))
    post.write("alice", "back", subject="home")
    post.poll(T0 + timedelta(days=4))
    # The deadline and the time away (Mar 7 00:00) would leave half a
    # day's notice: a day from the return, no sooner.
    assert due(post, one) == ["2026-03-07 12:00"] * 2


def test_a_game_made_with_away_no_refuses_absence(post: Post) -> None:
    one, two = two_games(post, away="no")
    post.write("alice", "away 3d", subject=f"[{two}] holiday")
    post.poll(T0 + timedelta(hours=1))
    (reply,) = arrived(post, "alice")
    assert (f"REFUSED (away): {two} allows no absence (it was made with away=no, as "
            "tournaments are): its deadlines run as they are. Nothing was extended."
            ) in " ".join(body(reply).split())
    post.write("alice", "away 3d", subject="holiday")
    post.poll(T0 + timedelta(hours=2))
    mails = arrived(post, "alice")
    (answer,) = [x for x in mails if kind(x) == "away_answer"]
    text = " ".join(body(answer).split())
    assert f"The deadlines are moved in {one}; each table is told." in text
    assert f"{two} allows no absence" in text
    assert due(post, one) == ["2026-03-08 12:00"] * 2
    assert due(post, two) == ["2026-03-05 12:00"] * 2
    arrived(post, "bob")
    post.assert_no_more_mail("carol")


def test_away_in_a_game_draws_from_the_bank_too(post: Post) -> None:
    post.referee.config.deadlines.away_days_per_year = 4
    one, _ = two_games(post)
    post.write("alice", "away 3d", subject=f"[{one}] a weekend off")
    post.poll(T0 + timedelta(hours=1))
    arrived(post, "alice")
    arrived(post, "bob")
    post.write("alice", "away 2d", subject="holiday")
    post.poll(T0 + timedelta(hours=2))
    (answer,) = arrived(post, "alice")
    assert ("REFUSED (away): That is 2 days away, and you have 1 day left in 2026 (of 4 a "
            "year, all your games together). Nothing was changed.") in " ".join(
                body(answer).split())


def test_weekends_off_keeps_a_deadline_off_the_weekend(post: Post) -> None:
    # Monday 12:00 and five days: Saturday 12:00, but the weekend does not count.
    plain = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="w1",
                                              options={"deadline": "5d"})
    paused = post.referee.operator.create_game(
        "goofspiel", [ALICE, CAROL], now=T0, seed="w2",
        options={"deadline": "5d", "weekends": "off"})
    post.poll(T0)
    assert due(post, plain) == ["2026-03-07 12:00"] * 2
    assert due(post, paused) == ["2026-03-09 12:00"] * 2
    (opening,) = arrived(post, "carol")
    assert "Mon 09 Mar 2026 12:00 UTC" in body(opening)
    # The sweep on Saturday afternoon moves for nobody in the paused game.
    before = post.actions(paused), post.actions(plain)
    post.poll(T0 + timedelta(days=5, hours=6))
    assert post.actions(paused) == before[0]
    assert post.actions(plain) != before[1]


def test_status_shows_who_is_away_and_until_when(post: Post) -> None:
    """``status`` in a game says who at the table is away, and until when
    (the table was told so, publicly); the one away reads "You are";
    after ``back`` it says nothing of it."""
    one, two = two_games(post)
    post.write("alice", "away 10d", subject="holiday")
    post.poll(T0 + timedelta(hours=1))
    for user in ("alice", "bob", "carol"):
        arrived(post, user)
    post.write("bob", "status", subject=f"[{one}] where are we?")
    post.write("alice", "status", subject=f"[{two}] and here?")
    post.poll(T0 + timedelta(hours=2))
    (bobs,) = arrived(post, "bob")
    (alices,) = arrived(post, "alice")
    assert "  Alice is away until Thu 12 Mar 2026 13:00 UTC.\n" in body(bobs)
    assert "  You are away until Thu 12 Mar 2026 13:00 UTC.\n" in body(alices)
    post.write("alice", "back", subject="home early")
    post.poll(T0 + timedelta(days=2))
    for user in ("alice", "bob", "carol"):
        arrived(post, user)
    post.write("bob", "status", subject=f"[{one}] and now?")
    post.poll(T0 + timedelta(days=2, hours=1))
    (bobs,) = arrived(post, "bob")
    assert "Alice is away until Thu 12 Mar 2026 13:00 UTC.\n" not in body(bobs)
    assert "Lately:" in body(bobs)
