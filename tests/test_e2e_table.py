"""The table by mail end to end, over the suite's real servers (Postfix in
and out, Dovecot IMAP): ``status``, ``history``, ``games`` and ``resend``
answer their sender alone; ``status``, ``history`` and ``help`` answer in
the words of each of the five games; ``away 3d`` moves the deadlines and
the table is told; ``away`` past the operator's limit is refused saying the
limit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.games import get_game
from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from tests.test_e2e import ALICE, BOB, T0, Post, as_part, body, kind, person, post
from tests.test_e2e_turns import arrived
from tests.test_spades_mail import kinds, section, sections

__all__ = ["post"]


def due_dates(post: Post) -> list[str]:
    with post.referee.sessions() as db:
        return [f"{d:%Y-%m-%d %H:%M}" for d in db.scalars(
            select(m.Deadline.due_at).order_by(m.Deadline.id))]


def test_status_history_games_and_resend_answer_their_sender_alone(post: Post) -> None:
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="table",
                                   options={"prize_order": "5,1,6,4,3,2"})
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    post.write("alice", "status\nhistory\ngames\nresend", subject=f"[{tag}] the table")
    post.poll(T0 + timedelta(minutes=5))
    # One mail: the answer, then what was resent; secret, as the resent part is.
    (reply,) = post.new_mail("alice", 1)
    assert kinds(reply) == ["transcript", "resent"]
    assert [h for h, _ in sections(reply)] == [
        "Your mail", "The last report again, and what you hold"]
    text = section(reply, "Your mail")
    assert (f"DONE (status): {tag}, Goofspiel\n    Round 1 of 6: the prize is 5.\n"
            "    Points: Alice 0, Bob 0.\n"
            "    Waiting for you and Bob: a bid for round 1 each, by Thu 05 Mar 2026 12:00 UTC.\n"
            ) in text
    assert ("DONE (history): The public moves and reports so far, the newest last:\n"
            "    The secret seed of every draw is fixed; its SHA-256 fingerprint is ") in text
    assert ".\n    Round 1: the prize is 5.\n" in text
    assert f"DONE (games): Your games:\n    [{tag}] Goofspiel: waiting for Alice, Bob" in text
    assert str(reply["Subject"]).endswith("(secret)")
    assert body(reply).startswith(SECRET_NOTE)
    resent = section(reply, "The last report again, and what you hold")
    assert f"  [{tag}] Goofspiel begins: round 1, the prize is 5: your bid\n" in resent
    assert "Your pack: 1 2 3 4 5 6." in resent
    post.assert_no_more_mail("bob")


def test_away_moves_the_deadlines_the_table_is_told_and_past_the_limit_is_refused(
        post: Post) -> None:
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="away")
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    before = due_dates(post)
    post.write("bob", "away 3d", subject=f"[{tag}] holiday")
    post.poll(T0 + timedelta(minutes=5))
    # Bob's answer and the table's notice come to him in one mail.
    (reply,) = post.new_mail("bob", 1)
    assert kinds(reply) == ["transcript", "extended"]
    assert ("DONE (away): The open deadlines are extended by 3 days; the table is told."
            in section(reply, "Your mail"))
    (told,) = post.new_mail("alice", 1)
    assert told["Subject"] == f"[{tag}] Deadlines extended by 3 days"
    assert "Bob is away and asked for more time" in " ".join(body(told).split())
    assert sections(reply)[1] == as_part(told)  # the table's notice, the same to Bob
    assert due_dates(post) == ["2026-03-08 12:00"] * 2 != before
    post.write("bob", "away 5d", subject=f"[{tag}] longer")
    post.poll(T0 + timedelta(minutes=10))
    (reply,) = post.new_mail("bob", 1)
    assert ("REFUSED (away): The referee allows at most 1 week away in a game; "
            "you have 4 days left. Nothing was extended.") in body(reply)
    assert due_dates(post) == ["2026-03-08 12:00"] * 2
    post.assert_no_more_mail("alice")


#: Each game: its players, options, and the first lines of Alice's status.
PAGES = {
    "goofspiel": (("alice", "bob"), {"prize_order": "5,1,6,4,3,2"},
                  "Round 1 of 6: the prize is 5.\n    Points: Alice 0, Bob 0.\n"),
    "pure-skill": (("alice", "bob", "carol"), {"prize_order": "ascending"},
                   "Round 1 of 13: the prize is A♠ (1 point).\n"
                   "    Points: Alice 0, Bob 0, Carol 0.\n"),
    "spades": (("alice", "bob", "carol", "dave"), {},
               "Round 1, in a game to 500.\n    Scores: team 1 ("),
    "miser": (("alice", "bob", "carol"), {},
              "    Pennies: Alice 20, Bob 20, Carol 20; the centre holds 0 pennies.\n"
              "    Cards in hand: Alice 17, Bob 17, Carol 17.\n"),
    "loatcg": (("alice", "bob", "carol"), {},
               "Round 1 of 8; Members: Alice, Bob and Carol.\n"
               "    No Round Report yet: Hand Scores are published in the Round Reports.\n"
               "    Next: Round Report 1, by Mon 09 Mar 2026 12:00 UTC.\n"),
}


@pytest.mark.parametrize("game", list(PAGES))
def test_status_history_and_help_answer_in_each_games_words(post: Post, game: str) -> None:
    users, options, page = PAGES[game]
    tag = post.referee.operator.create_game(game, [person(u) for u in users], now=T0,
                                            seed="pages", options=options)
    post.poll(T0)
    for user in users:
        arrived(post, user)
    post.write("alice", "status\nhistory\nhelp\n\nThanks!\nAlice", subject=f"RE: [{tag}] the table")
    post.poll(T0 + timedelta(minutes=5))
    (reply,) = arrived(post, "alice")
    assert kind(reply) == "transcript"
    assert str(reply["Subject"]).startswith(f"[{tag}] Done: status, history, help")
    text = body(reply)
    title = get_game(game).title
    assert f"> status\n  DONE (status): {tag}, {title}\n" in text
    assert page in text
    assert "\n    Lately:\n      " in text and "\n    What you can write now:\n" in text
    assert ("> history\n  DONE (history): The public moves and reports so far, the newest "
            "last:\n    ") in text
    assert "> help\n  DONE (help): " in text
    assert "\n  At any time you may also write:\n    status      the game as it stands" in text
    assert "Thanks" not in text and "IGNORED" not in text and "Over:" not in text
    for user in users[1:]:
        post.assert_no_more_mail(user)
