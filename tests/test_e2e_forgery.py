"""Forged mail in a player's name, through the real Postfix and Dovecot:
a flood of it cannot silence the player, and in verified mode it moves no
one, while the player's own mail to their private reply address is read
and applied at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import ALICE, BOB, REF, T0, Post, body

#: Small budgets, so that a flood of a dozen mails uses one up.
LIMITS = {"replies_per_hour": 5, "replies_per_day": 8, "same_mail": 3}


def forge(post: Post, text: str, subject: str) -> None:
    """A mail that says it is from Alice, sent by Erin's client."""
    msg = EmailMessage()
    msg["From"] = ALICE
    msg["To"] = REF
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(idstring="forger", domain="elsewhere.example.test")
    msg.set_content(text)
    post.stack.send(msg, "erin", REF)
    post.in_referee_inbox += 1


def notes(post: Post) -> list[str]:
    with post.referee.sessions() as db:
        return list(db.scalars(select(m.Inbound.note).order_by(m.Inbound.id)))


@pytest.fixture
def started(mailstack: MailStack, tmp_path: Path,
            request: pytest.FixtureRequest) -> Iterator[tuple[Post, str]]:
    """A Goofspiel game of Alice and Bob whose openings both have read."""
    auth = getattr(request, "param", None)
    post = Post(mailstack, tmp_path, auth=auth, limits=LIMITS)
    try:
        tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0,
                                                seed="forged")
        post.poll(T0)
        post.new_mail("alice", 1)
        post.new_mail("bob", 1)
        yield post, tag
    finally:
        post.close()


def test_a_flood_forged_in_a_players_name_leaves_their_own_bid_read_at_once(
        started: tuple[Post, str]) -> None:
    post, tag = started
    post.write("alice", "help", subject=f"[{tag}] help")
    post.poll(T0 + timedelta(minutes=1))
    (answer,) = post.new_mail("alice", 1)
    private = answer["Reply-To"].addresses[0].addr_spec
    for n in range(12):
        forge(post, f"hello {n}", subject=f"[{tag}] forged {n}")
    post.poll(T0 + timedelta(minutes=2))
    # Mail in Alice's name that nothing vouches for spends one budget, her
    # "help" its first answer: four answers and one notice, to Alice's
    # mailbox (where the forgery said it was from), then silence. (Postfix
    # delivers in parallel, so which forgeries come first varies.)
    mails = post.new_mail("alice", 5)
    flood = [str(x["Subject"]) for x in mails]
    said = sorted(s.rsplit(" (", 1)[1] for s in flood)
    assert said == ["not read)", *["secret)"] * 4], flood
    # Each answers a forgery of its own (the subject says what the answer
    # is, not which mail it answers: its In-Reply-To does).
    answered = {str(x["In-Reply-To"]) for x in mails}
    assert len(answered) == 5 and all("forger" in a for a in answered), answered
    assert notes(post)[-1].startswith("not read: over the reply budget")
    bid = post.write("alice", "bid 5", subject=f"Re: {answer['Subject']}", to=[private],
                     reply_to=answer)
    post.poll(T0 + timedelta(minutes=3))
    (reply,) = post.new_mail("alice", 1)
    assert reply["In-Reply-To"] == bid and "DONE (bid 5)" in body(reply)
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [5])]
    post.assert_no_more_mail("bob", "erin")


@pytest.mark.parametrize("started", [{"require": "verified",
                                      "authserv_id": "mail.example.test"}], indirect=True)
def test_in_verified_mode_a_forged_flood_moves_no_one_and_brings_one_notice(
        started: tuple[Post, str]) -> None:
    post, tag = started
    for n in range(20):
        forge(post, f"bid {n % 6 + 1}", subject=f"[{tag}] forged {n}")
    post.poll(T0 + timedelta(minutes=1))
    (notice,) = post.new_mail("alice", 1)
    assert notice["Subject"] == f"Re: [{tag}] forged 0 (not applied) (secret)"
    assert post.actions(tag) == []
    private = notice["Reply-To"].addresses[0].addr_spec
    assert private.startswith("referee+")
    bid = post.write("alice", "bid 6", subject=f"[{tag}]", to=[private])
    post.poll(T0 + timedelta(minutes=2))
    (reply,) = post.new_mail("alice", 1)
    assert reply["In-Reply-To"] == bid and "DONE (bid 6)" in body(reply)
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [6])]
    post.assert_no_more_mail("bob", "erin")
