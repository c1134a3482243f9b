"""Who may deal themselves in, and under what name, over the real Postfix
and Dovecot, on SQLite and PostgreSQL (issue 22, "parsing gaps"): a From
whose display name is a group holding another player's address seats and
mails no one; two joiners of the same 200-character name are both seated,
the second under a name cut to fit its column, and told so. In each, no one
else is seated or moved. ``tests/service/intake/test_joining_names.py``
holds the same on Maildir."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.utils import formatdate, make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.service.play.session import MAX_SEAT_NAME
from referee.store import models as m
from tests.databases import KINDS, database_url
from tests.mailstack import MailStack
from tests.test_e2e import REF, T0, Post, body, person

#: A name as long as a From's display name is read (``inbound.MAX_NAME``).
LONG = ("Maximilian Alexander Bartholomew von Habsburg-Lothringen " * 4)[:200].strip()
DAY = timedelta(days=1)


@pytest.fixture(params=KINDS)
def post(request: pytest.FixtureRequest, mailstack: MailStack,
         tmp_path: Path) -> Iterator[Post]:
    for url in database_url(request.param, tmp_path):
        p = Post(mailstack, tmp_path, database=url)
        yield p
        p.close()


def tournament(post: Post) -> str:
    """A Land of Agora tournament, open to anyone by mail, with Alice in it."""
    tag = post.referee.operator.create_game("loatcg", [person("alice")], now=T0, seed="names")
    post.poll(T0)
    post.new_mail("alice", 1)
    return tag


def seats(post: Post) -> list[tuple[str, str | None, bool]]:
    """(name, address, bot) of each seat, in order."""
    with post.referee.sessions() as db:
        return [(s.name, s.player.address if s.player else None, s.bot)
                for s in db.scalars(select(m.Seat).order_by(m.Seat.position))]


def members(post: Post, tag: str) -> dict[str, dict[str, int]]:
    """Each member's hand, by name."""
    return {mb["name"]: mb["hand"] for mb in post.state(tag)["members"]}


def join(post: Post, user: str, sender: str, tag: str) -> None:
    """``user`` writes "deal me in" from their own server, under ``sender``
    as typed (an EmailMessage would quote a group-like name, or refuse it)."""
    mid = make_msgid(idstring=user, domain="mua.example.test")
    raw = (f"From: {sender}\r\nTo: {REF}\r\nSubject: [{tag}] deal me in\r\n"
           f"Date: {formatdate(T0.timestamp() + 3600, usegmt=True)}\r\nMessage-ID: {mid}\r\n"
           "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
           "deal me in\r\n")
    post.stack.send(raw.encode(), user, REF)
    post.in_referee_inbox += 1


def test_a_from_naming_a_group_with_another_players_address_seats_and_mails_no_one(
        post: Post) -> None:
    """Dave writes with a display name that parses as a group holding
    Carol's address: Carol was seated and dealt cards in his place."""
    tag = tournament(post)
    hands = members(post, tag)
    join(post, "dave", f"Dave: {post.stack.address('carol')}; <{post.stack.address('dave')}>",
         tag)
    post.poll(T0 + DAY)
    assert seats(post) == [("Alice", post.stack.address("alice"), False)]
    assert members(post, tag) == hands
    with post.referee.sessions() as db:
        (record,) = db.scalars(select(m.Inbound))
        outbox = list(db.scalars(select(m.Outbox)))
        players = [p.address for p in db.scalars(select(m.Player))]
    assert (record.sender, record.status) == ("", "failed")
    assert record.note == "unreadable: the From is a group of addresses, not one sender"
    assert players == [post.stack.address("alice")]
    assert [r.recipients for r in outbox] == [[post.stack.address("alice")]]  # the opening
    assert post.stack.count("carol") == post.stack.count("dave") == 0
    post.assert_no_more_mail("alice")


def test_two_joiners_of_one_long_name_are_both_seated_within_the_column(post: Post) -> None:
    """On PostgreSQL the second, "<200 characters> 2", overflowed the
    seats' name column: the join failed, every time the mail was read."""
    tag = tournament(post)
    alice = members(post, tag)["Alice"]
    join(post, "erin", f'"{LONG}" <{post.stack.address("erin")}>', tag)
    join(post, "frank", f'"{LONG}" <{post.stack.address("frank")}>', tag)
    post.poll(T0 + DAY)
    second = LONG[:MAX_SEAT_NAME - 2].rstrip() + " 2"
    assert seats(post) == [("Alice", post.stack.address("alice"), False),
                           (LONG, post.stack.address("erin"), False),
                           (second, post.stack.address("frank"), False)]
    assert members(post, tag)["Alice"] == alice  # no one else moved
    assert sorted(sum(h.values()) for n, h in members(post, tag).items() if n != "Alice") == [
        5, 5]
    with post.referee.sessions() as db:
        statuses = [r.status for r in db.scalars(select(m.Inbound))]
    assert statuses == ["processed", "processed"]
    told = ("Your name is too long for a seat here (at most 200 characters), so you play "
            f"as: {second}")
    (frank,) = [x for x in post.new_mail("frank", 1) if "deal me in" in body(x)]
    assert told in " ".join(body(frank).split())
    assert all("too long" not in body(x) for x in post.stack.fetch_all("erin"))
