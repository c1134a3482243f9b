"""A Message-ID is the sender's word (issue 22): a mail under one seen before
is a copy only from the same sender saying the same. Any other is a mail of
its own, applied and answered; a true copy (the same mail delivered twice,
or the list's copy of a mail also sent to the referee) counts once.

On Maildir and SQLite, and on PostgreSQL where one answers; the twin over
the real Postfix and Dovecot is in ``tests/test_e2e_hostile.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.store import models as m
from tests.databases import KINDS
from tests.test_referee import ALICE, BOB, CAROL, REF, Club, body, clubs, new_goofspiel
from tests.test_spades_mail import ADDRESS, DEAL, LIST, LIST_ID, SEATING, MailClub, new_table

#: What a list adds to a member's mail it relays: a subject prefix, its
#: headers and a footer.
LIST_FOOTER = ("\n_______________________________________________\n"
               "Table mailing list -- table@club.test\n"
               "To unsubscribe send an email to table-leave@club.test\n")


@pytest.fixture(params=KINDS)
def club(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Club]:
    yield from clubs(request.param, tmp_path)


def answers(mails: list[EmailMessage], mid: str, sender: str) -> list[str]:
    """The bodies of the mails of one pass that answer ``mid``, sent to ``sender``."""
    return [body(x) for x in mails
            if x["In-Reply-To"] == mid and sender in str(x["To"])]


def bids(club: Club) -> list[tuple[int, list[object], str]]:
    """(seat, arguments, source) of each move in the action log, in order."""
    with club.referee.sessions() as db:
        return [(a.seat, list(a.action["args"]), a.source)
                for a in db.scalars(select(m.ActionLog).order_by(m.ActionLog.id))]


def test_another_player_sending_first_with_a_bids_message_id_does_not_drop_the_bid(
        club: Club) -> None:
    """Bob (seat 2) sends first under the Message-ID Alice's bid will carry:
    his mail is his, Alice's bid is hers, each applied and answered."""
    tag = new_goofspiel(club)
    club.poll()
    mid = club.send(BOB, "bid 3", subject=f"[{tag}] round 1")
    club.send(ALICE, "bid 5", subject=f"[{tag}] round 1", message_id=mid)
    mails = club.poll()
    assert ["DONE (bid 5)" in a for a in answers(mails, mid, ALICE)] == [True]
    assert ["DONE (bid 3)" in a for a in answers(mails, mid, BOB)] == [True]
    assert bids(club) == [(2, [3], "player"), (1, [5], "player")]  # no one moved for another
    with club.referee.sessions() as db:
        rows = list(db.scalars(select(m.Inbound).order_by(m.Inbound.id)))
    assert [(r.sender, r.status) for r in rows] == [(BOB, "processed"), (ALICE, "processed")]


def test_a_stranger_sending_first_with_a_bids_message_id_does_not_drop_the_bid(
        club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    mid = club.send(CAROL, "hello", subject="hi")  # in no game: answered once a day
    club.send(ALICE, "bid 5", subject=f"[{tag}] round 1", message_id=mid)
    mails = club.poll()
    assert ["DONE (bid 5)" in a for a in answers(mails, mid, ALICE)] == [True]
    assert bids(club) == [(1, [5], "player")]


def test_a_mail_under_the_senders_own_message_id_saying_something_else_is_read(
        club: Club) -> None:
    """A forged From with the player's coming Message-ID, or a client that
    reuses its ids: a mail saying something else is read, and answered."""
    tag = new_goofspiel(club)
    club.poll()
    mid = club.send(ALICE, "help", subject=f"[{tag}] help")
    assert len(answers(club.poll(), mid, ALICE)) == 1
    club.send(ALICE, "bid 5", subject=f"[{tag}] round 1", message_id=mid)
    (answer,) = answers(club.poll(), mid, ALICE)
    assert "DONE (bid 5)" in answer
    assert bids(club) == [(1, [5], "player")]


def test_the_same_mail_delivered_twice_is_applied_and_answered_once(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    mid = club.send(ALICE, "bid 5", subject=f"[{tag}] round 1")
    club.send(ALICE, "bid 5", subject=f"[{tag}] round 1", message_id=mid)
    mails = club.poll()
    club.send(ALICE, "bid 5", subject=f"[{tag}] round 1", message_id=mid)  # once more, later
    mails += club.poll()
    assert len(answers(mails, mid, ALICE)) == 1
    assert bids(club) == [(1, [5], "player")]
    with club.referee.sessions() as db:
        notes = [r.note for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]
    assert notes == ["processed", "duplicate of inbound 1", "duplicate of inbound 1"]


def test_the_lists_copy_of_a_move_also_sent_to_the_referee_counts_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spades bids are public (rule 6): Alice writes to the list with the
    referee on Cc; the list's copy has its subject prefix, List-Id and
    footer. Either may come first: the move is applied and answered once."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    club = MailClub(tmp_path, public_list=LIST)
    try:
        table = new_table(club)
        for name, text, list_first in (("Alice", "bid 4", False), ("Bob", "bid 3", True)):
            subject = f"[{table.tag}] my bid"
            direct = {"subject": subject, "to": LIST, "cc": REF}
            relayed = {"subject": f"[table] {subject}", "to": LIST, "cc": REF,
                       "headers": {**LIST_ID, "List-Post": f"<mailto:{LIST}>"}}
            first, then = (relayed, direct) if list_first else (direct, relayed)
            mid = club.send(ADDRESS[name], text + (LIST_FOOTER if list_first else ""),
                            **first)  # type: ignore[arg-type]
            club.send(ADDRESS[name], text + ("" if list_first else LIST_FOOTER),
                      message_id=mid, **then)  # type: ignore[arg-type]
            mails = club.poll()
            assert [f"DONE ({text})" in a for a in answers(mails, mid, ADDRESS[name])] == [True]
        assert table.state()["bids"] == [4, 3, None, None]
        assert bids(club) == [(1, [4], "player"), (2, [3], "player")]
    finally:
        club.referee.close()
