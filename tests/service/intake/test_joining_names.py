"""Who a mail is from, and the name a joiner is seated under (issue 22,
"parsing gaps"), on SQLite and PostgreSQL (whose columns are as long as
the models say): the sender is the one mailbox of From, never an address
from inside its name; a mail whose From is no one sender, or whose sender
cannot be written to, or whose parts are nested too deep, is refused as
unreadable; and a seat name fits its column, its number included.

The club's mail server vouches for its senders, so a join seats at once;
a join nothing vouches for waits for a confirmation
(``test_join_confirmation.py``). The twins over the real Postfix and
Dovecot are in ``tests/test_e2e_joining.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import String, select

from referee.service.play.session import MAX_SEAT_NAME
from referee.store import models as m
from tests.databases import KINDS
from tests.hostile import _deep
from tests.test_referee import REF, SIGNATURE, T0, Club, body, clubs, to

LIST = "players@club.test"
#: The club's mail server, whose Authentication-Results the referee trusts.
MX = "mx.club.test"
ANN = "Ann <ann@club.test>"
DAY = timedelta(days=1)
#: A name as long as a From's display name is read (``headers.MAX_NAME``).
LONG = ("Maximilian Alexander Bartholomew von Habsburg-Lothringen " * 4)[:200].strip()


@pytest.fixture(params=KINDS)
def club(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Club]:
    """A club with a public list, on SQLite and on PostgreSQL where one answers."""
    yield from clubs(request.param, tmp_path, public_list=LIST, auth={"authserv_id": MX},
                     vouch=True)


def tournament(club: Club) -> str:
    """A Land of Agora tournament, which anyone may join by mail; Ann in it."""
    tag = club.referee.operator.create_game("loatcg", [ANN], now=T0, seed="names")
    club.poll(T0)
    return tag


def seats(club: Club) -> list[tuple[str, str | None]]:
    """(name, address) of each seat, in order."""
    with club.referee.sessions() as db:
        return [(s.name, s.player.address if s.player else None)
                for s in db.scalars(select(m.Seat).order_by(m.Seat.position))]


def records(club: Club) -> list[tuple[str, str, str]]:
    """(sender, status, note) of each mail read, in order."""
    with club.referee.sessions() as db:
        return [(r.sender, r.status, r.note)
                for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]


def recipients(club: Club) -> set[str]:
    """Every address the referee has mailed."""
    with club.referee.sessions() as db:
        return {a for r in db.scalars(select(m.Outbox)) for a in r.recipients}


def drop(club: Club, raw: bytes) -> None:
    """Deliver ``raw`` to the referee's Maildir as it is."""
    club.root.joinpath("in", "new").mkdir(parents=True, exist_ok=True)
    club.root.joinpath("in", "new", f"raw-{len(list(club.root.glob('in/*/*')))}").write_bytes(raw)


def raw_mail(sender: str, subject: str, body_: bytes = b"deal me in\r\n",
             mime: bytes = b"Content-Type: text/plain; charset=utf-8\r\n\r\n",
             vouched_for: str = "evil.test") -> bytes:
    """``sender`` as typed; the club's server vouches for ``vouched_for``."""
    return (f"Authentication-Results: {MX}; dmarc=pass header.from={vouched_for}\r\n"
            f"From: {sender}\r\nTo: {REF}\r\nSubject: {subject}\r\n"
            f"Message-ID: <{abs(hash((sender, subject)))}@evil.test>\r\n"
            "Date: Fri, 01 May 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n").encode() + (
                mime + body_)


@pytest.mark.parametrize("sender", [
    # Unquoted, the name is a group holding victim@: getaddresses read it
    # as the sender, and the referee seated and mailed victim@example.org.
    "Mallory: victim@example.org; <mallory@evil.test>",
    "Mallory: victim@example.org;",
    "victim@example.org, mallory@evil.test",
])
def test_a_from_that_is_no_one_sender_seats_and_mails_no_one(club: Club, sender: str,
                                                            caplog: pytest.LogCaptureFixture,
                                                            ) -> None:
    tag = tournament(club)
    before = recipients(club)
    drop(club, raw_mail(sender, f"[{tag}] deal me in"))
    with caplog.at_level(logging.WARNING):
        assert club.poll(T0 + DAY) == []
    assert seats(club) == [("Ann", "ann@club.test")]
    assert recipients(club) == before == {"ann@club.test", LIST}
    ((who, status, note),) = [r for r in records(club) if r[0] != "ann@club.test"]
    assert (who, status) == ("", "failed") and note.startswith("unreadable: the From ")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_address_inside_a_quoted_name_is_no_seat_name_and_gets_no_mail(club: Club) -> None:
    tag = tournament(club)
    drop(club, raw_mail('"Mallory: victim@example.org;" <mallory@evil.test>',
                        f"[{tag}] deal me in"))
    mails = club.poll(T0 + DAY)
    # The one mailbox of From joins, under the name of their address, and
    # no mail goes anywhere else.
    assert seats(club) == [("Ann", "ann@club.test"), ("mallory", "mallory@evil.test")]
    assert recipients(club) == {"ann@club.test", LIST, "mallory@evil.test"}
    assert all("victim" not in to(x) for x in mails)  # nor in a name
    assert "mallory deals emself in" in body(mails[0])


@pytest.mark.parametrize(("sender", "mime", "why"), [
    ("zo\u00eb@example.org", b"Content-Type: text/plain; charset=utf-8\r\n\r\n",
     "unreadable: the From address is one no mail can be sent to"),
    ("Zo\u00eb <zo\u00eb@example.org>", b"Content-Type: text/plain; charset=utf-8\r\n\r\n",
     "unreadable: the From address is one no mail can be sent to"),
    ("Alice <alice@club.test>", _deep(500), "unreadable: MIME parts nested more than 100 deep"),
])
def test_mail_the_referee_cannot_read_or_answer_is_refused_as_unreadable(
        club: Club, sender: str, mime: bytes, why: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """A non-ASCII local part (no answer can be written to it) and MIME
    nested 500 deep were recorded as internal errors, with a traceback."""
    tag = tournament(club)
    before = recipients(club)
    drop(club, raw_mail(sender, f"[{tag}] deal me in", body_=b"", mime=mime))
    with caplog.at_level(logging.WARNING):
        assert club.poll(T0 + DAY) == []
    assert [r for r in records(club) if r[0] != "ann@club.test"] == [("", "failed", why)]
    assert seats(club) == [("Ann", "ann@club.test")] and recipients(club) == before
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    # The next mail is read as ever.
    club.send(ANN, "hand", subject=f"[{tag}] my cards")
    (answer,) = club.poll(T0 + DAY)
    assert to(answer) == ANN


def test_a_seat_name_is_at_most_as_long_as_its_column() -> None:
    column = m.table_of(m.Seat).c["name"].type
    assert isinstance(column, String) and column.length == MAX_SEAT_NAME


def test_a_second_joiner_of_a_long_name_is_numbered_within_the_limit_and_told(
        club: Club) -> None:
    """On PostgreSQL "<200 characters> 2" overflowed the seat's name
    column: the join failed, every time the mail was read."""
    tag = tournament(club)
    club.send(f'"{LONG}" <max@club.test>', "deal me in", subject=f"[{tag}] me")
    club.poll(T0 + DAY)
    club.send(f'"{LONG}" <max@else.test>', "deal me in", subject=f"[{tag}] me too")
    mails = club.poll(T0 + DAY)
    second = LONG[:MAX_SEAT_NAME - 2].rstrip() + " 2"
    assert len(LONG) == MAX_SEAT_NAME and len(second) <= MAX_SEAT_NAME
    assert seats(club) == [("Ann", "ann@club.test"), (LONG, "max@club.test"),
                           (second, "max@else.test")]
    assert [s for s, status, _ in records(club) if status != "processed"] == []
    (answer,) = [x for x in mails if to(x).endswith("<max@else.test>")]
    words = " ".join(body(answer).split())
    assert ("Your name is too long for a seat here (at most 200 characters), so you play "
            f"as: {second}") in words
    # The first was seated under their whole name, and not told so.
    assert all("too long" not in body(x) for x in mails if "max@club.test" in to(x))


def test_a_long_name_that_comes_back_leaves_a_bot_named_within_the_limit(club: Club) -> None:
    tag = tournament(club)
    long = f'"{LONG}" <max@club.test>'
    club.send(long, "deal me in", subject=f"[{tag}] me")
    club.poll(T0 + DAY)
    club.send(long, "resign", subject=f"[{tag}] bye")
    club.poll(T0 + DAY)
    club.send(long, "deal me in", subject=f"[{tag}] back")
    club.poll(T0 + DAY)
    assert [s for s, status, _ in records(club) if status != "processed"] == []
    bot = LONG[:MAX_SEAT_NAME - len(" (bot)")].rstrip() + " (bot)"
    assert seats(club) == [("Ann", "ann@club.test"), (bot, "max@club.test"),
                           (LONG, "max@club.test")]


def test_a_join_by_a_name_that_reads_as_a_members_is_answered_whole(club: Club) -> None:
    """The answer to a join whose name reads as a member's (issue 34):
    what was wrong, and what to write instead."""
    tag = tournament(club)
    drop(club, raw_mail("\u0410nn <mallory@evil.test>", f"[{tag}] deal me in"))
    (told,) = club.poll(T0 + DAY)
    assert to(told) == "mallory@evil.test"
    assert told["Subject"] == f"Re: [{tag}] deal me in (no seat)"
    assert body(told) == f"""\
Your mail reached the referee, but it gives no one a seat in {tag}:
the name your mail comes from reads as "Ann", a player there,
and no two players of a game may look alike.

If you are Ann, write from the address you play from.
Else write again from a name that reads differently: set the name your
mail program shows (for example your full name), and write
  deal me in

{SIGNATURE}"""
    assert seats(club) == [("Ann", "ann@club.test")]
    # Another Ann, as plainly written, is seated under a number.
    drop(club, raw_mail("Ann <ann@evil.test>", f"[{tag}] deal me in again"))
    club.poll(T0 + DAY)
    assert seats(club) == [("Ann", "ann@club.test"), ("Ann 2", "ann@evil.test")]
