"""The table by mail end to end, over the suite's real servers (Postfix in
and out, Dovecot IMAP): ``status``, ``history``, ``games`` and ``resend``
answer their sender alone; ``away 3d`` moves the deadlines and the table is
told; ``away`` past the operator's limit is refused saying the limit."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from tests.test_e2e import ALICE, BOB, T0, Post, body, kind, post

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
    reply, resent = post.new_mail("alice", 2)
    assert (kind(reply), kind(resent)) == ("transcript", "resent")
    text = body(reply)
    assert f"DONE (status): {tag} (Goofspiel) is active." in text
    assert "Prize: 5" in text and "Waiting for Alice to" in text
    assert "DONE (history): The public moves and reports so far:" in text
    assert f"DONE (games): Your games:\n  [{tag}] Goofspiel: waiting for Alice, Bob" in text
    assert str(resent["Subject"]).endswith("(secret)")
    assert body(resent).startswith(SECRET_NOTE)
    assert "Your pack: 1 2 3 4 5 6." in body(resent)
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
    mails = post.new_mail("bob", 2)
    (reply,) = [x for x in mails if kind(x) == "transcript"]
    assert ("DONE (away): The open deadlines are extended by 3 days; the table is told."
            in body(reply))
    (told,) = post.new_mail("alice", 1)
    assert told["Subject"] == f"[{tag}] Deadlines extended by 3 days"
    assert "Bob is away and asked for more time" in " ".join(body(told).split())
    assert due_dates(post) == ["2026-03-08 12:00"] * 2 != before
    post.write("bob", "away 5d", subject=f"[{tag}] longer")
    post.poll(T0 + timedelta(minutes=10))
    (reply,) = post.new_mail("bob", 1)
    assert ("REFUSED (away): The referee allows at most 1 week away in a game; "
            "you have 4 days left. Nothing was extended.") in body(reply)
    assert due_dates(post) == ["2026-03-08 12:00"] * 2
    post.assert_no_more_mail("alice")
