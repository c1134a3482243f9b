"""Budgets and loop breaking: no address gets more answers than the
configured limits, the same mail again and again is a loop and goes
unanswered, and forged mail cannot flood a player with notices."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.test_referee import ALICE, BOB, SIGNATURE, Club, body, new_goofspiel

LIMITS = {"replies_per_hour": 5, "replies_per_day": 8, "same_mail": 3}


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, limits=LIMITS)
    yield c
    c.referee.close()


def notes(club: Club) -> list[str]:
    with club.referee.sessions() as db:
        return list(db.scalars(select(m.Inbound.note).order_by(m.Inbound.id)))


def test_a_flood_gets_the_hourly_budget_of_answers_and_one_notice(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    for n in range(12):
        club.send(ALICE, f"help\nmail {n}", subject=f"[{tag}] mail {n}")
    sent = club.poll()
    assert [x["Subject"] for x in sent] == [
        # Each answer's subject says what it is (not the player's subject).
        *[f"[{tag}] Done: help; refused (mail): You get 'all' now; your bid (secret)"] * 5,
        f"Re: [{tag}] mail 5 (not read)"]
    assert body(sent[-1]) == f"""\
You have sent the referee more mail than it answers from one address
(5 an hour, 8 a day). Until Mon 02 Mar 2026 13:00 UTC,
only the moves in your mail are read: they are applied as ever, and
answered as long as moves are answered, but nothing else in it is read
or answered.

Send anything else again after that time. If a program of yours is
writing to the referee, please stop it.

{SIGNATURE}"""
    assert notes(club)[5:] == ["not read: over the reply budget until 2026-03-02 13:00 UTC"] * 7
    # A bid over the budget is read, applied and answered: budgets limit
    # replies, never moves, and the answers to moves have their own.
    club.send(ALICE, "help\nbid 5", subject=f"[{tag}]")
    (reply,) = club.poll()
    assert "DONE (bid 5)" in body(reply) and club.count(m.ActionLog) == 1
    assert "> help\n  IGNORED: Not read: you have sent more mail than the referee" in body(reply)
    assert notes(club)[-1] == ("not read: over the reply budget until 2026-03-02 13:00 UTC: "
                               "its moves were read and answered")
    # An hour on, mail is read again, up to the day's budget.
    later = club.now + timedelta(hours=1)
    for n in range(4):
        club.send(ALICE, f"help\nlater {n}", subject=f"[{tag}] later {n}")
    sent = club.poll(later)
    assert [x["Subject"] for x in sent] == [f"[{tag}] Done: help (secret)"] * 3
    # Other players are not touched by Alice's flood.
    club.send(BOB, "bid 3", subject=f"[{tag}]")
    to_bob = [x for x in club.poll() if BOB in str(x["To"])]
    assert any("DONE (bid 3)" in body(x) for x in to_bob), [body(x) for x in to_bob]


def test_the_same_mail_again_and_again_is_a_loop_and_goes_unanswered(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    answered = 0
    for n in range(10):  # an autoresponder that marks nothing answers each reply
        club.send(ALICE, "I am away until Monday.", subject=f"Re: [{tag}] round {n}")
        answered += len(club.poll(club.now + timedelta(minutes=1)))
    assert answered == 3
    assert notes(club)[3:] == ["not answered: the same mail again and again (a loop?)"] * 7
    club.send(ALICE, "bid 5", subject=f"[{tag}]")  # something new is read at once
    (reply,) = club.poll()
    assert "DONE (bid 5)" in body(reply)


def test_the_same_bid_in_each_of_many_games_is_no_loop(club: Club) -> None:
    tags = [new_goofspiel(club) for _ in range(6)]  # more than same_mail (3)
    club.poll()
    for tag in tags:
        club.send(ALICE, "bid 1", subject=f"[{tag}] round 1")
    sent = club.poll(club.now + timedelta(minutes=1))
    # Five answers (the hourly budget); the sixth bid, over it, is applied
    # and answered all the same, within the budget of answers to moves.
    assert ["DONE (bid 1)" in body(x) for x in sent] == [True] * 6
    assert club.count(m.ActionLog) == 6
    assert "the same mail again" not in " ".join(notes(club))


def test_forged_mail_in_verified_mode_brings_one_notice_a_day_and_spends_no_budget(
        tmp_path: Path) -> None:
    club = Club(tmp_path, auth={"require": "verified", "authserv_id": "mx.club.test"},
                limits=LIMITS)
    tag = new_goofspiel(club)
    club.poll()
    for n in range(20):
        club.send(ALICE, f"bid {n % 6 + 1}", subject=f"[{tag}] forged {n}")
    sent = club.poll()
    assert [x["Subject"] for x in sent] == [f"Re: [{tag}] forged 0 (not applied) (secret)"]
    assert club.count(m.ActionLog) == 0
    # Alice's own mail, to her private address, is read: the forger spent nothing of hers.
    private = sent[0]["Reply-To"].addresses[0].addr_spec
    club.send(ALICE, "bid 6", to=private, subject=f"[{tag}]")
    (reply,) = club.poll()
    assert "DONE (bid 6)" in body(reply)
    club.send(ALICE, "bid 5", subject=f"[{tag}] forged again")
    assert club.poll(club.now + timedelta(days=1, minutes=1))[0]["Subject"].endswith(
        "(not applied) (secret)")
    club.referee.close()


def test_a_flood_forged_in_a_players_name_does_not_silence_their_own_mail(
        club: Club) -> None:
    """Mail in Alice's name that nothing verifies spends a budget of its
    own: once a forger has used it up, Alice's bid to her private reply
    address (the Reply-To of the mails for her alone) is still read."""
    tag = new_goofspiel(club)
    club.poll()
    club.send(ALICE, "help", subject=f"[{tag}] help")
    (answer,) = club.poll()
    private = answer["Reply-To"].addresses[0].addr_spec
    for n in range(12):
        club.send(ALICE, f"hello {n}", subject=f"[{tag}] forged {n}")
    club.poll()
    assert notes(club)[-1].startswith("not read: over the reply budget")
    club.send(ALICE, "bid 5", to=private, subject=f"Re: [{tag}] help")
    (reply,) = club.poll()
    assert "DONE (bid 5)" in body(reply)
    assert club.count(m.ActionLog) == 1


def test_answers_to_moves_over_the_budget_have_a_budget_of_their_own(club: Club) -> None:
    """Over the reply budget a bid is applied; its answer comes within a
    budget of the same size (5 an hour here) that only answers to accepted
    moves spend; past that it is applied all the same, unanswered."""
    tags = [new_goofspiel(club) for _ in range(12)]
    club.poll()
    for n in range(5):
        club.send(ALICE, f"status\nmail {n}", subject=f"[{tags[0]}] mail {n}")
    assert len(club.poll()) == 5
    for tag in tags[1:]:
        club.send(ALICE, "bid 1", subject=f"[{tag}] round 1")
    sent = club.poll(club.now + timedelta(minutes=1))
    assert ["DONE (bid 1)" in body(x) for x in sent] == [True] * 5 + [False]
    assert "more mail than it answers" in body(sent[-1])
    assert club.count(m.ActionLog) == 11
    assert notes(club)[-1] == ("not read: over the reply budget until 2026-03-02 13:00 UTC: "
                               "its moves were read, not answered")


def test_talk_in_reply_to_the_referees_mail_is_answered_once_a_day(club: Club) -> None:
    """An autoresponder that marks nothing, its text new each time: one
    answer a day. A mail with a command is answered as ever."""
    tag = new_goofspiel(club)
    opening = club.poll()[0]
    answered = 0
    for n in range(6):
        club.send(ALICE, f"Thanks for your note; ticket {n} is open.", subject="Re: your mail",
                  headers={"In-Reply-To": opening["Message-ID"]})
        answered += len(club.poll(club.now + timedelta(minutes=n)))
    assert answered == 1, notes(club)
    assert notes(club)[-1] == ("not answered: no command, in reply to a mail of the "
                               "referee's, and such a mail was answered today")
    club.send(ALICE, "bid 5", subject=f"[{tag}]", headers={"In-Reply-To": opening["Message-ID"]})
    (reply,) = club.poll()
    assert "DONE (bid 5)" in body(reply)
    club.send(ALICE, "Ticket 7 is open.", subject="Re: your mail",
              headers={"In-Reply-To": opening["Message-ID"]})
    assert len(club.poll(club.now + timedelta(days=1))) == 1


def test_replies_to_strangers_are_bounded_per_domain(tmp_path: Path) -> None:
    """12 joins forged at one domain bring it 10 requests to confirm; a
    stranger of another domain is still answered."""
    club = Club(tmp_path)
    tag = club.referee.operator.create_game("loatcg", [f"Alice <{ALICE}>"], now=club.now,
                                            seed="domains")
    club.poll()
    for n in range(12):
        club.send(f"victim{n}@forged.test", "deal me in", subject=f"[{tag}] me")
    asked = club.poll()
    assert [x["X-Referee-Mail"] for x in asked] == ["confirm_join"] * 10
    assert all(str(x["To"]).endswith("@forged.test") for x in asked)
    club.send("someone@forged.test", "what is this?", subject="hi")
    assert club.poll() == []
    club.send("newcomer@else.test", "deal me in", subject=f"[{tag}] me")
    club.send("curious@else.test", "what is this?", subject="hi")
    assert [(str(x["To"]), x["X-Referee-Mail"]) for x in club.poll()] == [
        ("newcomer@else.test", "confirm_join"), ("curious@else.test", "stranger")]
    club.referee.close()
