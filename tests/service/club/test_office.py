"""The club's work that comes from no mail (referee/service/club/office.py):
the operator closing a table and adding a member, and the tables past
``[club] table_days`` expiring; each in its own transaction, its mails
queued in it."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest

from referee.service.club.tables import Refused
from referee.store import models as m
from tests.service.club.test_tables import ALICE, BOB, CAROL, DAVE, ERIN, new
from tests.test_referee import Club, body

LIST = "players@lists.club.test"


@pytest.fixture
def members(club: Club) -> Club:
    """Alice, Bob, Carol and Dave have played here (a game each pair); the
    openings they were mailed are read."""
    club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="s")
    club.referee.operator.create_game("goofspiel", [CAROL, DAVE], now=club.now, seed="s")
    mails(club)
    return club


def mails(club: Club, now: datetime | None = None) -> list[EmailMessage]:
    """The mail queued since the last look, sent (at ``now``, else the
    club's time), in the order it was written."""
    club.referee.send_outbox(now or club.now)
    return club.new_mail()


def opened(club: Club, writer: str, line: str, joiners: tuple[str, ...] = ()) -> str:
    with club.referee.sessions.begin() as db:
        tag = club.referee.tables.open(db, writer, new(line), club.now).table
        for joiner in joiners:
            club.referee.tables.join(db, joiner, tag, club.now)
    return tag


def test_the_operator_cancels_a_table_and_those_seated_are_told(members: Club) -> None:
    tag = opened(members, ALICE, "new spades", (BOB,))
    closed = members.referee.club.cancel(tag, members.now)
    assert closed.tag == tag and closed.seated == ("Alice", "Bob")
    out = mails(members)
    assert [(str(x["To"]), str(x["Subject"])) for x in out] == [
        ("alice@club.test", f"[{tag}] The table for Spades is closed"),
        ("bob@club.test", f"[{tag}] The table for Spades is closed")]
    assert "was closed by the operator" in body(out[0])
    assert members.referee.club.listing() == []
    with pytest.raises(Refused, match=f"{tag} is cancelled"):
        members.referee.club.cancel(tag, members.now)
    with pytest.raises(Refused, match="There is no table spades-t9"):
        members.referee.club.cancel("spades-t9", members.now)
    assert mails(members) == []


def test_a_member_added_may_open_a_table(club: Club) -> None:
    with club.referee.sessions.begin() as db, pytest.raises(Refused, match="members"):
        club.referee.tables.open(db, ERIN, new("new goofspiel"), club.now)
    player = club.referee.club.add_member(ERIN, club.now)
    assert (player.name, player.address, player.member_since) == (
        "Erin", "erin@club.test", club.now)
    again = club.referee.club.add_member("erin@club.test", club.now + timedelta(days=1))
    assert again.member_since == club.now  # a member since the first time
    assert opened(club, ERIN, "new goofspiel") == "goofspiel-t1"
    with pytest.raises(Refused):
        club.referee.club.add_member("not an address", club.now)


def test_tables_past_table_days_expire_and_those_seated_and_invited_are_told(
        members: Club) -> None:
    tag = opened(members, ALICE, "new spades with Bob", (CAROL,))
    later = opened(members, DAVE, "new goofspiel")
    mails(members)
    days = members.config.club.table_days
    assert members.referee.club.expire(members.now + timedelta(days=days, seconds=-1)) == 0
    with members.referee.sessions.begin() as db:  # Dave's table opened a day later
        table = db.query(m.OpenTable).filter_by(tag=later).one()
        table.expires_at += timedelta(days=1)
    due = members.now + timedelta(days=days)
    assert members.referee.club.expire(due) == 1
    out = mails(members, due)
    assert sorted(str(x["To"]) for x in out) == [
        "alice@club.test", "bob@club.test", "carol@club.test"]
    assert all(str(x["Subject"]) == f"[{tag}] The table for Spades is closed" for x in out)
    assert f"waited {days} days without\nfilling" in body(out[0])
    assert [t.tag for t in members.referee.club.listing()] == [later]
    assert members.referee.club.expire(due) == 0



def test_a_pass_expires_the_tables_by_its_time_after_the_deadline_sweep(
        members: Club) -> None:
    tag = opened(members, ALICE, "new spades", (BOB,))
    days = members.config.club.table_days
    # (the games the members played time out meanwhile: their mail is not the table's)
    early = members.poll(members.now + timedelta(days=days, seconds=-1))
    assert not [x for x in early if tag in str(x["Subject"])]
    out = members.poll(members.now + timedelta(days=days))
    assert [(str(x["To"]), str(x["Subject"])) for x in out if tag in str(x["Subject"])] == [
        (a, f"[{tag}] The table for Spades is closed")
        for a in ("alice@club.test", "bob@club.test")]
    assert members.referee.club.listing() == []


def test_the_daemon_expires_the_tables_in_its_deadline_job(members: Club) -> None:
    from referee.scheduler import Daemon
    from referee.store.db import now_utc

    tag = opened(members, ALICE, "new spades")
    with members.referee.sessions.begin() as db:
        db.query(m.OpenTable).filter_by(tag=tag).one().expires_at = now_utc()
    Daemon(members.referee).deadlines()
    assert members.referee.club.listing() == []
    assert "1 open table(s) expired" in str(members.referee.health.last_pass())
