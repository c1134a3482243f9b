"""Moves tied to the turn their player saw, end to end over the real servers.

A move is for the turn it names (``bid 5 round 3``, ``#12 play QH``), else
for the turn of the mail it answers, else for the turn when its mail was
read. A move for a turn that is over, or not yet begun, is refused with the
game as it stands, never applied to another turn: Goofspiel's bids are final
and each round's prize is shown before bids are taken (003 rule 2; 000 rule
4), so a bid sealed for a round its player never saw would break the rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.games import get_game
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import T0, Post, body, person
from tests.test_spades_mail import kinds, section, sections


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def arrived(post: Post, user: str) -> list[EmailMessage]:
    """Every mail the referee has sent ``user`` since the last look, once
    all of it has reached their IMAP mailbox, in the order the referee sent
    it (Postfix may deliver two mails sent a moment apart either way round;
    the outbox number is in the Message-ID)."""
    address = f"{user}@example.test"
    with post.referee.sessions() as db:
        sent = sum(address in row.recipients for row in db.scalars(select(m.Outbox)))
    mails = post.new_mail(user, sent - post.read.get(user, 0))
    return sorted(mails, key=lambda x: int(str(x["Message-ID"]).split(".")[1]))


def only(mails: list[EmailMessage], what: str) -> EmailMessage:
    """The one mail of ``mails`` that carries a part of kind ``what``."""
    (mail,) = [x for x in mails if what in kinds(x)]
    return mail


def answer(mails: list[EmailMessage]) -> str:
    """The text of the answer to the player's mail: a mail of its own, or
    the first part of the one mail of all their mail caused for them."""
    mail = only(mails, "transcript")
    if kinds(mail) == ["transcript"]:
        return sections(mail)[0][1]
    assert sections(mail)[0][0] == "Your mail", sections(mail)
    return section(mail, "Your mail")


def moves(mail: EmailMessage) -> list[str]:
    """The lines of the moves a mail of a quiet mode carries, first."""
    head, text = sections(mail)[0]
    assert head == "" and text.startswith("Since your last mail:\n"), sections(mail)
    return text.splitlines()[1:]


def bids(post: Post, tag: str, seat: int) -> list[int]:
    return [args[0] for s, verb, args, _ in post.actions(tag) if s == seat and verb == "bid"]


def goofspiel(post: Post) -> tuple[str, EmailMessage]:
    tag = post.referee.operator.create_game("goofspiel", [person("alice"), person("bob")],
                                   options={"prize_order": "5,1,6,4,3,2"}, now=T0, seed="t")
    post.poll(T0)
    (opening,) = arrived(post, "alice")
    arrived(post, "bob")
    return tag, opening


def test_two_bids_in_one_mail_across_a_rounds_end_seal_only_the_first(post: Post) -> None:
    tag, _ = goofspiel(post)
    post.write("alice", "bid 5", subject=f"[{tag}] bid")
    post.poll(T0 + timedelta(hours=1))
    arrived(post, "alice")
    # Bob's first bid closes round 1; his second was written before he saw
    # round 2's prize, so it is refused, not sealed for round 2.
    post.write("bob", "bid 3\nbid 1", subject=f"[{tag}] bids")
    post.poll(T0 + timedelta(hours=2))
    mails = arrived(post, "bob")
    # One mail: the answer to his, then the report of the round his bid closed.
    assert [kinds(x) for x in mails] == [["transcript", "round_report"]]
    text = answer(mails)
    assert "> bid 3\n  DONE (bid 3): Your bid of 3 for round 1 is sealed." in text
    assert ("> bid 1 REFUSED (bid 1): Round 1 is over: it is round 2 now, waiting for you "
            "and Alice: a bid for round 2 each. This line was not applied. If you still want "
            "it for round 2, send it again, answering the latest mail or writing "
            "'bid 1 round 2'.") in " ".join(text.split())
    assert "Round 2 of 6: the prize is 1." in text  # the game as it stands
    assert bids(post, tag, 2) == [3]
    assert post.state(tag)["bids"] == {}
    # Said again with the round, it counts.
    post.write("bob", "bid 1 round 2", subject=f"[{tag}] again")
    post.poll(T0 + timedelta(hours=3))
    assert "DONE (bid 1): Your bid of 1 for round 2 is sealed." in body(
        only(arrived(post, "bob"), "transcript"))
    assert bids(post, tag, 2) == [3, 1]


def test_a_late_reply_to_an_earlier_report_is_refused_with_the_current_round(
        post: Post) -> None:
    tag, opening = goofspiel(post)
    post.write("alice", "bid 5", subject=f"[{tag}] bid")
    post.write("bob", "bid 3", subject=f"[{tag}] bid")
    post.poll(T0 + timedelta(hours=1))
    # Bob's bid closed round 1: the report rides in his answer's mail.
    round_1 = only(arrived(post, "bob"), "round_report")  # shows round 2's prize, 1
    alices = only(arrived(post, "alice"), "round_report")
    post.write("alice", "bid 1", subject=f"[{tag}] bid", reply_to=alices)
    post.write("bob", "bid 2", subject=f"Re: {round_1['Subject']}", reply_to=round_1)
    post.poll(T0 + timedelta(hours=2))
    round_2 = only(arrived(post, "bob"), "round_report")  # round 3's prize, 6
    arrived(post, "alice")
    # "Change that to bid 1", answering the opening, arrives in round 3.
    post.write("bob", "change that to\nbid 1", subject=f"Re: {opening['Subject']}",
               reply_to=opening)
    post.poll(T0 + timedelta(hours=3))
    (reply,) = arrived(post, "bob")
    text = " ".join(body(reply).split())
    assert ("REFUSED (bid 1): Round 1 is over: it is round 3 now, waiting for you and "
            "Alice: a bid for round 3 each. This line was not applied. If you still want it "
            "for round 3, send it again, answering the latest mail or writing "
            "'bid 1 round 3'.") in text
    assert "Round 3 of 6: the prize is 6." in text
    assert bids(post, tag, 2) == [3, 2]
    # The same bid answering the latest report counts.
    post.write("bob", "bid 1", subject=f"Re: {round_2['Subject']}", reply_to=round_2)
    post.poll(T0 + timedelta(hours=4))
    assert "DONE (bid 1)" in answer(arrived(post, "bob"))
    assert bids(post, tag, 2) == [3, 2, 1]


def test_a_goofspiel_bid_for_a_round_over_or_not_begun_is_refused(post: Post) -> None:
    tag, _ = goofspiel(post)
    post.write("alice", "bid 5 round 2", subject=f"[{tag}] early")
    post.poll(T0 + timedelta(hours=1))
    text = " ".join(answer(arrived(post, "alice")).split())
    assert ("REFUSED (bid 5): Round 2 has not begun (it is round 1 now), so this line was "
            "not applied. Send it again once it has begun.") in text
    post.write("alice", "round 1: bid 5", subject=f"[{tag}] now")
    post.write("bob", "bid 3 please", subject=f"[{tag}] now")
    post.poll(T0 + timedelta(hours=2))
    arrived(post, "alice")
    arrived(post, "bob")
    post.write("alice", "bid 4 round 1", subject=f"[{tag}] stale")
    post.poll(T0 + timedelta(hours=3))
    text = " ".join(answer(arrived(post, "alice")).split())
    assert ("REFUSED (bid 4): Round 1 is over: it is round 2 now, waiting for you and "
            "Bob: a bid for round 2 each. This line was not applied.") in text
    assert bids(post, tag, 1) == [5] and bids(post, tag, 2) == [3]


def test_a_spades_move_for_a_turn_over_or_not_begun_is_refused(post: Post) -> None:
    tag = post.referee.operator.create_game("spades", [person("alice")], bots=3, now=T0, seed="t")
    post.poll(T0)
    arrived(post, "alice")
    post.write("alice", "#2 bid 3", subject=f"[{tag}] early")
    post.poll(T0 + timedelta(hours=1))
    text = " ".join(answer(arrived(post, "alice")).split())
    # Its mails never number a turn: the refusal names the bidding and the trick.
    assert ("REFUSED (bid 3): Trick 1 has not begun (it is the bidding now), so this line "
            "was not applied.") in text
    post.write("alice", "bid 3 turn 1", subject=f"[{tag}] bid")
    post.poll(T0 + timedelta(hours=2))
    # Alice is in mail turns, Spades' default: the answer that only says her
    # bid was done is a line among the moves of the mail that asks her to play.
    (mail,) = arrived(post, "alice")
    assert mail["Subject"] == f"[{tag}] Spades: your card (secret)"  # shows her hand
    assert "  You: bid 3 turn 1 (done)" in moves(mail)
    # The bots have bid and played up to Alice: trick 1 is turn 2.
    spades = get_game("spades")
    state = spades.load(post.state(tag))
    assert spades.turn(state) == 2
    you = spades.view(state, 1)["you"]
    card = you["legal"][0] if isinstance(you, dict) and you.get("legal") else None
    assert isinstance(card, str)
    post.write("alice", f"#1 play {card}", subject=f"[{tag}] stale")
    post.poll(T0 + timedelta(hours=3))
    text = " ".join(answer(arrived(post, "alice")).split())
    assert ("The bidding is over: it is trick 1 now, waiting for your card to trick 1. "
            "This line was not applied. If you still want it now, send it again in a new "
            "mail.") in text
    assert "turn 1" not in text.lower() and "turn 2" not in text.lower()
    assert not [a for a in post.actions(tag) if a[0] == 1 and a[1] == "play"]
    post.write("alice", f"#2 play {card}", subject=f"[{tag}] now")
    post.poll(T0 + timedelta(hours=4))
    (mail,) = arrived(post, "alice")  # done, so a line again: nothing refused
    assert f"  You: #2 play {card} (done)" in moves(mail)
    assert "REFUSED" not in body(mail)
    assert [a[2] for a in post.actions(tag) if a[0] == 1 and a[1] == "play"] == [[card]]


def test_a_miser_move_for_a_turn_over_or_not_begun_is_refused(post: Post) -> None:
    users = ("alice", "bob", "carol")
    tag = post.referee.operator.create_game("miser", [person(u) for u in users], now=T0, seed="t")
    post.poll(T0)
    for u in users:
        arrived(post, u)
    miser = get_game("miser")
    state = miser.load(post.state(tag))
    first = users[state.turn]
    post.write(first, "pass turn 2", subject=f"[{tag}] early")
    post.poll(T0 + timedelta(hours=1))
    text = " ".join(answer(arrived(post, first)).split())
    # Miser's mails number no turn (rule text 004 has none): nor does this.
    assert "REFUSED (pass): A later turn has not begun (it is a new turn now)" in text
    post.write(first, "#1 pass", subject=f"[{tag}] pass")
    post.poll(T0 + timedelta(hours=2))
    assert "DONE (pass)" in answer(arrived(post, first))
    assert miser.turn(miser.load(post.state(tag))) == 2
    second = users[miser.load(post.state(tag)).turn]
    for u in users:
        if u != first:
            arrived(post, u)
    post.write(second, "pass turn 1", subject=f"[{tag}] stale")
    post.poll(T0 + timedelta(hours=3))
    text = " ".join(answer(arrived(post, second)).split())
    assert "REFUSED (pass): An earlier turn is over: it is a new turn now" in text
    assert [a[:2] for a in post.actions(tag)] == [(users.index(first) + 1, "pass")]
