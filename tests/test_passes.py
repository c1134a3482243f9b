"""A pass reads players' mail first (issue 22): a bid behind a stranger's
flood, or one that comes while the pass reads the flood, is refereed
before the flood; the mailbox cursor never moves past mail still waiting,
so a pass cut short after a mail read out of turn loses nothing and
applies nothing twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee.mail.imap import ImapSource, Waiting
from referee.passes import LOOK_EVERY, Backlog, intake, send_outbox
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import REF, Post, opened_game

STRANGER = "mallory@elsewhere.test"


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def raw_mail(sender: str, subject: str, body: str) -> bytes:
    return (f"From: {sender}\r\nTo: {REF}\r\nSubject: {subject}\r\n"
            f"Message-ID: <{time.time_ns()}.{abs(hash(body))}@mua.example.test>\r\n"
            f"\r\n{body}\r\n").encode()


def flood(post: Post, count: int, start: int = 0) -> None:
    """``count`` mails from a stranger straight into the referee's INBOX."""
    with post.stack.imap("referee") as client:
        for i in range(start, start + count):
            client.append("INBOX", raw_mail(STRANGER, f"hello {i}", f"who are you? ({i})"))


def bid(post: Post, tag: str, text: str = "bid 3") -> None:
    with post.stack.imap("referee") as client:
        client.append("INBOX", raw_mail(post.stack.address("bob"), f"[{tag}]", text))


def records(post: Post) -> list[tuple[str, str, str]]:
    """(sender, subject, status) of each inbound record, in the order refereed."""
    with post.referee.sessions() as db:
        return [(r.sender, r.subject, r.status)
                for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]


def cursor(post: Post) -> int:
    with post.referee.sessions() as db:
        row = db.scalar(select(m.Cursor))
        return row.last_uid if row is not None else 0


def uids(post: Post) -> list[int]:
    """The UIDs of the referee's INBOX, oldest first."""
    with post.stack.imap("referee") as client:
        client.select_folder("INBOX", readonly=True)
        return sorted(client.search(["ALL"]))


def source(post: Post) -> ImapSource:
    return ImapSource(post.config.mailbox, post.config.referee.max_message_size)


# -- on the real servers --------------------------------------------------------------

def test_a_bid_behind_a_strangers_flood_is_refereed_and_answered_before_the_flood(
        post: Post) -> None:
    tag = opened_game(post)
    flood(post, 150)
    bid(post, tag)
    sent_after: list[int] = []

    def send_answers() -> None:  # as the daemon does
        sent_after.append(len(records(post)))
        send_outbox(post.referee)

    assert intake(post.referee, after_players=send_answers) == (151, 151, 0)
    # Bob's answer went out after the first batch, not after the whole flood.
    assert sent_after == [LOOK_EVERY]
    assert "bid 3" in post.new_mail("bob", 1)[0].get_content()
    got = records(post)
    assert got[0][0] == post.stack.address("bob") and got[0][2] == "processed"
    assert [r[1] for r in got[1:]] == [f"hello {i}" for i in range(150)]
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3])]
    assert cursor(post) == uids(post)[-1]  # past all of it


def test_a_bid_that_comes_while_a_pass_reads_a_flood_is_read_next(
        post: Post, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass looks for news every LOOK_EVERY mails: Bob's bid, come
    after the pass began, is read then, before the rest of the flood; a
    stranger's mail come meanwhile is left to the next pass, which reads
    it, and Bob's again as the duplicate it is."""
    tag = opened_game(post)
    flood(post, 3 * LOOK_EVERY)
    process = post.referee.process
    came: list[int] = []

    def process_while_they_write(raw: bytes, source_key: str, **kw: Any) -> Any:
        if not came:  # the pass has begun: another stranger's mail, then Bob's bid
            flood(post, 1, start=3 * LOOK_EVERY)
            bid(post, tag)
            came.append(len(records(post)))
        return process(raw, source_key, **kw)

    monkeypatch.setattr(post.referee, "process", process_while_they_write)
    src = source(post)
    try:
        assert intake(post.referee, imap=src) == (3 * LOOK_EVERY + 1, 3 * LOOK_EVERY + 1, 0)
        assert src.left and src.announced(), "the stranger's late mail was left unsaid"
        got = records(post)
        bob = [i for i, r in enumerate(got) if r[0] == post.stack.address("bob")]
        assert bob == [LOOK_EVERY], "Bob's bid was not read at the pass's first look"
        assert f"hello {3 * LOOK_EVERY}" not in [r[1] for r in got]
        # The cursor stays before the stranger's late mail, though Bob's is read.
        assert cursor(post) == uids(post)[3 * LOOK_EVERY - 1]
        assert intake(post.referee, imap=src) == (2, 1, 0)
    finally:
        src.close()
    got = records(post)
    assert [r[1] for r in got[-1:]] == [f"hello {3 * LOOK_EVERY}"]
    assert len(got) == 3 * LOOK_EVERY + 2  # each mail recorded once
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3])]  # applied once
    assert cursor(post) == uids(post)[-1]


def test_a_pass_cut_short_after_a_bid_read_out_of_turn_loses_nothing(post: Post) -> None:
    """As if the daemon were killed right after Bob's bid committed: the
    cursor had not moved past the flood, so the next pass reads all of it;
    the bid is recorded and applied once."""
    tag = opened_game(post)
    flood(post, 30)
    bid(post, tag)
    assert intake(post.referee, stop=lambda: True) == (1, 1, 0)
    assert [r[0] for r in records(post)] == [post.stack.address("bob")]
    assert cursor(post) == 0  # none stored: the flood waits
    assert intake(post.referee) == (31, 30, 0)  # Bob's again: a duplicate
    got = records(post)
    assert [r[1] for r in got[1:]] == [f"hello {i}" for i in range(30)]
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3])]
    assert cursor(post) == uids(post)[-1]


# -- the backlog alone ----------------------------------------------------------------

def backlog_of(*mails: tuple[int, str], players: frozenset[str] = frozenset({"bob@x"}),
               this_pass: bool = True) -> Backlog:
    backlog = Backlog(lambda headings: [h.sender in players for h in headings])
    backlog.add([Waiting(uid, 100, f"From: {sender}\r\n".encode()) for uid, sender in mails],
                this_pass)
    return backlog


def test_players_mail_comes_first_and_each_part_oldest_first() -> None:
    backlog = backlog_of((1, "eve@x"), (2, "bob@x"), (3, "eve@x"), (4, "bob@x"))
    assert [w.uid for w in backlog.take(10)] == [2, 4, 1, 3]


def test_a_senders_mail_keeps_its_order_once_one_of_theirs_waits_behind() -> None:
    # Bob's first mail did not look like a player's (he had not joined yet):
    # his second, which does, waits behind it.
    calls = iter([[False, True, True]])
    backlog = Backlog(lambda headings: next(calls))
    backlog.add([Waiting(u, 1, f"From: {s}\r\n".encode())
                 for u, s in ((1, "bob@x"), (2, "bob@x"), (3, "alice@x"))], True)
    assert [w.uid for w in backlog.take(10)] == [3, 1, 2]


def test_mail_found_during_a_pass_that_is_not_a_players_is_left_to_the_next() -> None:
    backlog = backlog_of((1, "eve@x"))
    backlog.add([Waiting(2, 1, b"From: eve@x\r\n"), Waiting(3, 1, b"From: bob@x\r\n")], False)
    assert [w.uid for w in backlog.take(10)] == [3, 1] and backlog.left == 1


def test_the_cursor_moves_only_past_mail_done_with_none_before_it_waiting() -> None:
    backlog = backlog_of((1, "eve@x"), (2, "eve@x"), (3, "bob@x"), (5, "eve@x"))
    assert backlog.position(3) is None  # read out of turn: 1 and 2 wait
    backlog.settle(3)
    assert backlog.position(1) == 1
    backlog.settle(1)
    assert backlog.position(2) == 3  # past 3, done already
    backlog.settle(2)
    backlog.gone([5])  # expunged meanwhile
    assert backlog.position(7) is None and backlog.last == 5

