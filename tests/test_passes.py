"""A pass reads players' mail first (issue 22), and each sender's in turn
(issue 34): a bid behind a stranger's flood or a player's, or one that
comes while the pass reads a flood, is refereed before the flood's tail;
the mailbox cursor never moves past mail still waiting, so a pass cut
short after a mail read out of turn loses nothing and applies nothing
twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee import passes
from referee.mail.imap import ImapSource, Waiting
from referee.passes import (
    LATE_PER_PASS,
    LATE_PER_SENDER,
    LOOK_EVERY,
    PLAYERS_SHARE,
    TURN,
    Backlog,
    intake,
    send_outbox,
)
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import REF, Post, opened_game

STRANGER = "mallory@elsewhere.test"


@pytest.fixture(autouse=True)
def look_by_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass looks for news by the count of mails read, however loaded the
    machine running the tests (the tests count mails, never seconds)."""
    monkeypatch.setattr(passes, "LOOK_SECONDS", 3600.0)


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


def statuses(post: Post, tag: str, count: int) -> None:
    """``count`` mails from Alice, a player, asking the game's status."""
    with post.stack.imap("referee") as client:
        for i in range(count):
            client.append("INBOX", raw_mail(post.stack.address("alice"),
                                            f"[{tag}] status {i}", "status"))


def newcomer(post: Post) -> None:
    """One mail from Carol, in no game, who has not written before."""
    with post.stack.imap("referee") as client:
        client.append("INBOX", raw_mail(post.stack.address("carol"), "hello carol",
                                        "Can I play?"))


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


def test_a_players_flood_keeps_no_other_players_move_waiting(post: Post) -> None:
    """Alice, a player, sends 3 * TURN mails, then Bob bids: the pass
    reads a turn of each sender's mail in turn, so Bob's bid comes right
    after Alice's first TURN; cut short there, it has applied Bob's bid and
    stored no cursor past Alice's mail still waiting, which the next pass
    reads, in the order she sent it, each once."""
    tag = opened_game(post)
    count = 3 * TURN
    statuses(post, tag, count)
    bid(post, tag)
    # Asked after each mail read: the pass stops after the mail TURN + 1
    # (its batch committed, ``intake.receive.Batch``).
    asked = iter(range(1, 10 * count))
    assert intake(post.referee, stop=lambda: next(asked) > TURN) == (
        TURN + 1, TURN + 1, 0)
    got = records(post)
    assert [r[0] for r in got] == [post.stack.address("alice")] * TURN + [
        post.stack.address("bob")]
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3])]
    assert cursor(post) == uids(post)[TURN - 1]  # past Alice's first turn, not her flood
    assert intake(post.referee) == (count - TURN + 1, count - TURN, 0)  # Bob's: a duplicate
    got = records(post)
    alices = [r[1] for r in got if r[0] == post.stack.address("alice")]
    assert alices == [f"[{tag}] status {i}" for i in range(count)]
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3])]
    assert cursor(post) == uids(post)[-1]


def test_a_players_move_behind_a_players_flood_is_answered_after_one_turn_of_it(
        post: Post) -> None:
    tag = opened_game(post)
    statuses(post, tag, 5 * TURN)
    bid(post, tag)
    answered_after: list[int] = []

    def send_answers() -> None:  # as the daemon does
        answered_after.append(len(records(post)))
        send_outbox(post.referee)

    assert intake(post.referee, after_players=send_answers)[0] == 5 * TURN + 1
    bob = [i for i, r in enumerate(records(post)) if r[0] == post.stack.address("bob")]
    assert bob == [TURN]
    # His answer went out after the batch that read it, not after the flood.
    assert answered_after[:2] == [LOOK_EVERY, 2 * LOOK_EVERY]
    assert "bid 3" in post.new_mail("bob", 1)[0].get_content()


@pytest.mark.parametrize("flooder", ["stranger", "player"])
def test_a_newcomers_mail_that_comes_while_a_pass_reads_a_flood_is_read_before_its_tail(
        post: Post, monkeypatch: pytest.MonkeyPatch, flooder: str) -> None:
    """Carol, in no game, writes while the pass reads a stranger's flood,
    or Alice's (a player's, read before anyone else's only up to her
    share): Carol's mail is found at the pass's first look and read in her
    turn, not left to the next pass behind the whole flood."""
    tag = opened_game(post)
    if flooder == "player":
        statuses(post, tag, 3 * LOOK_EVERY)
        sender, subjects = post.stack.address("alice"), [f"[{tag}] status {i}"
                                                        for i in range(3 * LOOK_EVERY)]
    else:
        flood(post, 3 * LOOK_EVERY)
        sender, subjects = STRANGER, [f"hello {i}" for i in range(3 * LOOK_EVERY)]
    process = post.referee.process
    came: list[int] = []

    def process_while_carol_writes(raw: bytes, source_key: str, **kw: Any) -> Any:
        if not came:  # the pass has begun
            newcomer(post)
            came.append(len(records(post)))
        return process(raw, source_key, **kw)

    monkeypatch.setattr(post.referee, "process", process_while_carol_writes)
    src = source(post)
    try:
        assert intake(post.referee, imap=src) == (3 * LOOK_EVERY + 1, 3 * LOOK_EVERY + 1, 0)
        assert not src.left and not src.announced()
    finally:
        src.close()
    got = records(post)
    carol = [i for i, r in enumerate(got) if r[0] == post.stack.address("carol")]
    assert carol == [LOOK_EVERY], "Carol's mail was not read at the pass's first look"
    assert [r[1] for r in got if r[0] == sender] == subjects
    assert cursor(post) == uids(post)[-1]


def test_a_pass_slow_to_read_looks_for_news_before_its_batch_is_done(
        post: Post, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine so loaded that each mail takes LOOK_SECONDS (here: no
    time at all), the pass looks for news after each mail: Carol's, come
    during the first, is read after the flood's first turn, and the mails
    of each batch the pass did not reach are read in their order, each
    once."""
    monkeypatch.setattr(passes, "LOOK_SECONDS", 0.0)
    opened_game(post)
    flood(post, 3 * LOOK_EVERY)
    process = post.referee.process

    def process_while_carol_writes(raw: bytes, source_key: str, **kw: Any) -> Any:
        if not records(post):
            newcomer(post)
        return process(raw, source_key, **kw)

    monkeypatch.setattr(post.referee, "process", process_while_carol_writes)
    assert intake(post.referee) == (3 * LOOK_EVERY + 1, 3 * LOOK_EVERY + 1, 0)
    got = records(post)
    assert [i for i, r in enumerate(got) if r[0] == post.stack.address("carol")] == [TURN]
    assert [r[1] for r in got if r[0] == STRANGER] == [f"hello {i}" for i in range(3 * LOOK_EVERY)]
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


def test_each_sender_takes_turns_of_their_mail_in_their_rank_whatever_their_backlog(
        ) -> None:
    # Alice's first turn goes first among the players', then Bob's; the
    # rest of hers is read with everyone else's, after Eve's first turn.
    flood = [(uid, "alice@x") for uid in range(1, 2 * TURN + 1)]
    late = 2 * TURN
    backlog = backlog_of(*flood, (late + 1, "bob@x"), (late + 2, "eve@x"),
                         (late + 3, "alice@x"), players=frozenset({"alice@x", "bob@x"}))
    assert [w.uid for w in backlog.take(10 * TURN)] == [
        *range(1, TURN + 1), late + 1, late + 2, *range(TURN + 1, late + 1), late + 3]


def test_moves_sent_turn_by_turn_are_read_in_the_order_they_came() -> None:
    # Spades: East ends a trick North led, and leads the next, which West
    # did not get to; then a trick South leads. None of it may jump.
    seats = ["e@x", "s@x", "w@x", "e@x", "s@x", "n@x", "w@x", "s@x", "w@x", "n@x", "e@x"]
    backlog = backlog_of(*enumerate(seats, start=1), players=frozenset(seats))
    assert [w.uid for w in backlog.take(20)] == list(range(1, len(seats) + 1))


def test_a_players_mail_beyond_their_share_takes_turns_with_everyone_elses() -> None:
    share = [(uid, "bob@x") for uid in range(1, PLAYERS_SHARE + 3)]
    backlog = backlog_of(*share, (100, "eve@x"), (101, "alice@x"),
                         players=frozenset({"alice@x", "bob@x"}))
    assert [w.uid for w in backlog.take(100)] == [
        *range(1, PLAYERS_SHARE + 1), 101, 100, PLAYERS_SHARE + 1, PLAYERS_SHARE + 2]


def test_mail_found_during_a_pass_takes_its_turn_within_its_senders_share() -> None:
    # Eve, a stranger, had one mail in the pass: her next, found while it
    # read, is read in it too, after Bob's (a player's), in the order it came.
    backlog = backlog_of((1, "eve@x"), (2, "mallory@x"), (3, "mallory@x"))
    assert [w.uid for w in backlog.take(1)] == [1]
    backlog.add([Waiting(4, 1, b"From: eve@x\r\n"), Waiting(5, 1, b"From: bob@x\r\n")], False)
    assert [w.uid for w in backlog.take(10)] == [5, 2, 3, 4] and backlog.left == 0


def test_a_senders_mail_beyond_their_share_of_a_pass_is_left_to_the_next() -> None:
    """Eve's share is spent by the mail the pass found at its start: what
    she sends while it reads waits for the next pass, and so does the rest
    of hers; Bob's is read."""
    backlog = backlog_of(*((uid, "eve@x") for uid in range(1, LATE_PER_SENDER + 1)))
    late = LATE_PER_SENDER + 1
    backlog.add([Waiting(late, 1, b"From: eve@x\r\n"), Waiting(late + 1, 1, b"From: bob@x\r\n")],
                False)
    backlog.add([Waiting(late + 2, 1, b"From: eve@x\r\n")], False)
    assert [w.uid for w in backlog.take(100)] == [late + 1, *range(1, LATE_PER_SENDER + 1)]
    assert backlog.left == 2 and backlog.last == late + 2


def test_mail_left_to_the_next_pass_is_left_once_the_pass_has_read_its_share_of_late_mail(
        ) -> None:
    backlog = backlog_of((1, "eve@x"))
    late = [Waiting(uid, 1, f"From: s{uid}@x\r\n".encode())
            for uid in range(2, LATE_PER_PASS + 3)]
    backlog.add(late, False)
    assert len(backlog.take(10 * LATE_PER_PASS)) == LATE_PER_PASS + 1
    assert backlog.left == 1


def test_mail_taken_and_not_read_is_its_senders_next_again() -> None:
    backlog = backlog_of((1, "eve@x"), (2, "eve@x"), (3, "carol@x"), (4, "bob@x"))
    batch = backlog.take(3)
    assert [w.uid for w in batch] == [4, 1, 2]
    backlog.put_back(batch[1:])  # the pass looked for news after Bob's
    assert [w.uid for w in backlog.take(10)] == [1, 2, 3]


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

