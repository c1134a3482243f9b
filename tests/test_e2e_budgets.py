"""Budgets that forged mail cannot use up, newcomers not shut out, and
autoresponders, over the real Postfix and Dovecot in the default mode
(``[auth] require = "none"``, no ``authserv_id``), counting the mail in
the players' own mailboxes (issue 34, 3 to 5):

- 65 forged mails in Alice's name spend her reply budget (60 an hour),
  and her own move, after them, is applied and answered all the same;
- 30 joins forged at one domain bring that domain 10 confirmations, and
  a newcomer from another domain is asked to confirm, and seated, after
  60 forged joins;
- an out-of-office reply to a join confirmation, in any of the common
  shapes, seats no one and is not answered;
- an autoresponder nothing marks, whose text changes each time, gets one
  answer a day.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.utils import formatdate, make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import ALICE, BOB, REF, T0, Post, body, kind, person
from tests.test_e2e_joining import members, seats

#: The default hourly reply budget (``[limits] replies_per_hour``).
PER_HOUR = 60
#: The default of ``[limits] stranger_replies_per_domain``.
PER_DOMAIN = 10


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    """The referee as configured by default: any From counts, nothing to trust."""
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def raw_mail(post: Post, sender: str, to: str, subject: str, text: str, *,
             headers: str = "", in_reply_to: str | None = None) -> bytes:
    """A mail as a client writes it, ``sender`` its From as typed."""
    thread = f"In-Reply-To: {in_reply_to}\r\nReferences: {in_reply_to}\r\n" if in_reply_to else ""
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
            f"Date: {formatdate(T0.timestamp(), usegmt=True)}\r\n"
            f"Message-ID: {make_msgid(domain='mua.example.test')}\r\n{thread}{headers}"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Transfer-Encoding: 8bit\r\n\r\n"
            f"{text}\r\n").encode()


def send(post: Post, by: str, raw: bytes, to: str = REF) -> None:
    """``raw`` handed to Postfix by ``by``'s client, for the referee."""
    post.stack.send(raw, by, to)
    post.in_referee_inbox += 1


def notes(post: Post) -> list[str]:
    with post.referee.sessions() as db:
        return list(db.scalars(select(m.Inbound.note).order_by(m.Inbound.id)))


def goofspiel(post: Post) -> str:
    """Alice and Bob's Goofspiel, its openings read."""
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="budgets")
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    return tag


def tournament(post: Post) -> str:
    """A Land of Agora tournament anyone may join by mail, Alice in it."""
    tag = post.referee.operator.create_game("loatcg", [person("alice")], now=T0,
                                            seed="budgets")
    post.poll(T0)
    post.new_mail("alice", 1)
    return tag


def test_65_forged_mails_leave_alices_own_move_applied_and_answered(post: Post) -> None:
    """Before, Alice's own bid after the flood was "not read: over the
    reply budget until 06:19 UTC". Budgets limit replies, never moves."""
    tag = goofspiel(post)
    for n in range(PER_HOUR + 5):
        send(post, "erin", raw_mail(post, ALICE, REF, f"[{tag}] forged {n}",
                                    f"status\nforged {n}"))
    post.poll(T0 + timedelta(minutes=1))
    # The forgeries' answers went where their From said, up to the budget,
    # and one notice that it is spent; then nothing.
    flood = post.new_mail("alice", PER_HOUR + 1)
    assert [kind(x) for x in flood].count("over_budget") == 1
    assert notes(post)[-5:] == [
        "not read: over the reply budget until 2026-03-02 13:01 UTC"] * 5
    post.assert_no_more_mail("alice")
    assert post.actions(tag) == []

    # Alice's own mail, to the referee's address as the forgeries were.
    bid = post.write("alice", "bid 5", subject=f"[{tag}] my bid")
    post.poll(T0 + timedelta(minutes=2))
    (reply,) = post.new_mail("alice", 1)
    assert reply["In-Reply-To"] == bid and "DONE (bid 5)" in body(reply)
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [5])]
    assert notes(post)[-1] == ("not read: over the reply budget until 2026-03-02 13:01 UTC: "
                               "its moves were read and answered")
    # Bob bids, and the round is played as ever.
    post.write("bob", "bid 3", subject=f"[{tag}] my bid")
    post.poll(T0 + timedelta(minutes=3))
    assert [a[1:3] for a in post.actions(tag)][:2] == [("bid", [5]), ("bid", [3])]
    assert any("DONE (bid 3)" in body(x) or "Round 1" in body(x)
               for x in post.new_mail("bob", 1))
    post.assert_no_more_mail("erin")


def test_30_joins_forged_at_one_domain_bring_it_10_confirmations(post: Post) -> None:
    """Frank forges "deal me in" under 30 names at one domain (each lands
    in Carol's mailbox): 10 of them are asked to confirm, the rest not
    answered; no one is seated."""
    tag = tournament(post)
    hands = members(post, tag)
    for n in range(30):
        victim = post.stack.address("carol", f"v{n}")
        send(post, "frank", raw_mail(post, f"Victim {n} <{victim}>", REF, f"[{tag}] join",
                                     "deal me in"))
    post.poll(T0 + timedelta(hours=1))
    asked = post.new_mail("carol", PER_DOMAIN)
    assert {kind(x) for x in asked} == {"confirm_join"}
    post.assert_no_more_mail("carol", "frank", "alice")
    assert [name for name, _, _ in seats(post)] == ["Alice"]
    assert members(post, tag) == hands
    assert notes(post).count(f"join of {tag} to confirm: no [auth] authserv_id to trust") == 10


def test_a_newcomer_from_another_domain_is_answered_after_60_forged_joins(
        post: Post) -> None:
    """60 joins forged under names at forged.test (whose mail the relay
    refuses: backscatter that never arrives): 10 confirmations are tried,
    and Dave, at example.test, is asked to confirm and is seated."""
    tag = tournament(post)
    for n in range(60):
        send(post, "frank", raw_mail(post, f"n{n}@forged.test", REF, f"[{tag}] join",
                                     "deal me in"))
    post.poll(T0 + timedelta(hours=1))
    with post.referee.sessions() as db:
        tried = [r.recipients for r in db.scalars(select(m.Outbox).order_by(m.Outbox.id))][1:]
    assert len(tried) == PER_DOMAIN  # all refused by the relay: none reached anyone
    assert all(to[0].endswith("@forged.test") for to in tried)
    post.assert_no_more_mail("frank", "alice")
    send(post, "dave", raw_mail(post, person("dave"), REF, f"[{tag}] join", "deal me in"))
    post.poll(T0 + timedelta(hours=2))
    (asked,) = post.new_mail("dave", 1)
    assert kind(asked) == "confirm_join"
    confirm = asked["Reply-To"].addresses[0].addr_spec
    post.write("dave", "yes", subject=f"Re: {asked['Subject']}", to=[confirm], reply_to=asked)
    post.poll(T0 + timedelta(hours=3))
    (seated,) = post.new_mail("dave", 1)
    assert "DONE (join): Dave deals emself in" in body(seated)
    assert [name for name, _, _ in seats(post)] == ["Alice", "Dave"]


#: Out-of-office replies as common programs write them: (extra headers,
#: subject, first line of the body). None says what it is in a header
#: RFC 3834 asks for but the first.
OUT_OF_OFFICE = [
    ("Auto-Submitted: auto-replied\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("X-Autoreply: yes\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("X-Autorespond: yes\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("Precedence: bulk\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("Precedence: auto_reply\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("Precedence: junk\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("Precedence: list\r\n", "Re: {s}", "Thanks, I will be back soon."),
    ("", "Out of Office: {s}", "I am away until Monday."),
    ("", "Automatic reply: {s}", "I am away until Monday."),
    ("", "Auto: {s}", "I am away until Monday."),
    ("", "Abwesenheitsnotiz: {s}", "Ich bin bis Montag nicht im Büro."),
    ("", "Réponse automatique : {s}", "Je suis absente jusqu'à lundi."),
    ("", "away from my mail", "I will not be reading my mail for a while. Your mail "
                              'concerning "{s}" will be read when I\'m back.'),
    ("", "Re: {s}", "I am currently out of the office with limited access to email."),
]


def test_an_out_of_office_reply_to_a_join_confirmation_seats_no_one(post: Post) -> None:
    """Frank forges "deal me in" as Carol; her autoresponder answers the
    confirmation, at its Reply-To, in each common shape: before, it seated
    her. Now none seats anyone or is answered."""
    tag = tournament(post)
    hands = members(post, tag)
    carol = person("carol")
    send(post, "frank", raw_mail(post, carol, REF, f"[{tag}] join", "deal me in"))
    post.poll(T0 + timedelta(hours=1))
    (asked,) = post.new_mail("carol", 1)
    confirm = asked["Reply-To"].addresses[0].addr_spec
    subject = str(asked["Subject"])
    for headers, said, text in OUT_OF_OFFICE:
        send(post, "carol", raw_mail(post, carol, confirm, said.format(s=subject),
                                     text.format(s=subject), headers=headers,
                                     in_reply_to=str(asked["Message-ID"])), to=confirm)
    post.poll(T0 + timedelta(hours=2))
    assert [name for name, _, _ in seats(post)] == ["Alice"]
    assert members(post, tag) == hands
    assert notes(post)[1:] == ["not answered: auto-reply"] * len(OUT_OF_OFFICE)
    post.poll(T0 + timedelta(days=1))
    post.assert_no_more_mail("carol", "frank", "alice")


def test_an_autoresponder_whose_text_changes_gets_one_answer_a_day(post: Post) -> None:
    """Alice's autoresponder marks nothing and says something new each
    time, in reply to the referee's mail: before, each of 15 was answered
    (the loop breaker looks for the same text). Now one is, a day; her
    own bid is answered as ever."""
    tag = goofspiel(post)
    (opening,) = post.stack.fetch_all("alice")
    answered = 0
    for n in range(15):
        send(post, "alice", raw_mail(
            post, ALICE, REF, f"Re: {opening['Subject']}",
            f"Thanks for your message of {n + 1} March; ticket {4711 + n} is open.",
            in_reply_to=str(opening["Message-ID"])))
        post.poll(T0 + timedelta(minutes=n + 1))
        answered = post.stack.count("alice") - 1
    assert answered == 1
    post.new_mail("alice", 1)
    bid = post.write("alice", "bid 4", subject=f"[{tag}] bid")
    post.poll(T0 + timedelta(minutes=20))
    (reply,) = post.new_mail("alice", 1)
    assert reply["In-Reply-To"] == bid and "DONE (bid 4)" in body(reply)
    # A day on, it gets one answer again.
    for n in range(3):
        send(post, "alice", raw_mail(
            post, ALICE, REF, f"Re: {opening['Subject']}", f"Ticket {5000 + n} is open.",
            in_reply_to=str(opening["Message-ID"])))
    post.poll(T0 + timedelta(days=1, minutes=1))
    assert len(post.new_mail("alice", 1)) == 1
    post.poll(T0 + timedelta(days=1, minutes=2))
    post.assert_no_more_mail("alice", "bob")
