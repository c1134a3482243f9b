"""The club's open tables on a real database (SQLite, and PostgreSQL where
one answers): opened, filled, started through the operator with the
game's own seating draw, bounded, expired (referee/service/club/tables.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.config import ClubSection
from referee.games import get_game
from referee.games.base import SeatInfo
from referee.games.draws import KeyedDraws, mixed_seed, seed_fingerprint
from referee.service.club.tables import Done, Refused, Tables
from referee.service.club.words import NewTable, parse_line
from referee.store import models as m
from tests.test_referee import Club

ALICE, BOB, CAROL, DAVE = (f"{n.capitalize()} <{n}@club.test>"
                           for n in ("alice", "bob", "carol", "dave"))
ERIN = "Erin <erin@club.test>"  # a stranger
MALLORY = "mallory@elsewhere.test"  # never wrote to the referee


def tables(club: Club, **section: Any) -> Tables:
    """The club's tables under a ``[club]`` section of ``section``."""
    config = club.config.model_copy(update={"club": ClubSection(**section)})
    return Tables(config, club.referee.operator)


@pytest.fixture
def members(club: Club) -> Club:
    """Alice, Bob, Carol and Dave have played here (a game each pair)."""
    club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="s")
    club.referee.operator.create_game("goofspiel", [CAROL, DAVE], now=club.now, seed="s")
    return club


def new(line: str) -> NewTable:
    found = parse_line(line)
    assert isinstance(found, NewTable)
    return found


@pytest.fixture
def db(members: Club) -> Iterator[Session]:
    with members.referee.sessions.begin() as session:
        yield session


def count(db: Session, model: type[m.Base]) -> int:
    return int(db.scalar(select(func.count()).select_from(model)) or 0)


def test_a_spades_table_fills_by_joins_and_starts_with_partners_apart(
        members: Club, db: Session) -> None:
    club = tables(members)
    opened = club.open(db, ALICE, new("new spades teams alice+carol bob+dave"), members.now)
    tag = opened.table
    assert tag.startswith("spades-t") and opened.what == "opened"
    # Carol, Bob and Dave are named in the teams: invited, each a mail.
    assert sorted(i.address for i in opened.invitations) == [
        "bob@club.test", "carol@club.test", "dave@club.test"]
    assert {i.by for i in opened.invitations} == {"Alice"} and not opened.post
    assert club.join(db, CAROL, tag, members.now).what == "accepted"
    assert club.accept(db, BOB, tag, members.now).what == "accepted"
    token = next(i.token for i in opened.invitations if i.address == "dave@club.test")
    started = club.accept(db, DAVE, None, members.now, token=token)
    assert (started.what, started.table) == ("started", tag)
    assert sorted(started.tell) == sorted(
        f"{n}@club.test" for n in ("alice", "bob", "carol", "dave"))
    game = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert game is not None and game.kind == "spades"
    names = game.state["names"]
    # Rule text 001: partners sit apart, as the game's own draw seats them.
    assert {names[0], names[2]} in ({"Alice", "Carol"}, {"Bob", "Dave"})
    table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag))
    assert table is not None and (table.status, table.game_id) == ("started", game.id)
    with pytest.raises(Refused, match=f"{tag} is started as {game.tag}"):
        club.join(db, ERIN, tag, members.now)


def test_an_open_table_is_posted_and_anyone_may_join_it(members: Club, db: Session) -> None:
    club = tables(members)
    opened = club.open(db, ALICE, new("new goofspiel"), members.now)
    assert opened.post and opened.invitations == ()
    started = club.join(db, ERIN, opened.table, members.now)  # a stranger, confirmed
    assert started.what == "started" and started.game is not None
    assert started.game.startswith("goofspiel-")


def test_a_challenge_accepted_starts_and_one_declined_frees_the_seat(
        members: Club, db: Session) -> None:
    club = tables(members)
    challenge = club.open(db, ALICE, new("new goofspiel with Bob cards=5"), members.now)
    assert [i.address for i in challenge.invitations] == ["bob@club.test"]
    assert not challenge.post  # every seat taken or held
    with pytest.raises(Refused, match="is full"):
        club.join(db, ERIN, challenge.table, members.now)  # Bob's seat is held for him
    started = club.accept(db, BOB, None, members.now)
    game = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert game is not None and game.options["cards"] == 5
    other = club.open(db, ALICE, new("new goofspiel with Carol"), members.now)
    declined = club.decline(db, CAROL, other.table, members.now)
    assert (declined.what, declined.tell, declined.post) == (
        "declined", ("alice@club.test",), True)
    with pytest.raises(Refused, match="You have no invitation open"):
        club.accept(db, CAROL, None, members.now)
    assert club.join(db, DAVE, other.table, members.now).what == "started"


def test_miser_starts_at_the_openers_start_with_enough_seats(members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new miser players=5"), members.now).table
    club.join(db, BOB, tag, members.now)
    with pytest.raises(Refused, match="needs at least 3 players to start; 2 are seated"):
        club.start(db, ALICE, tag, members.now)
    joined = club.join(db, CAROL, tag, members.now)
    assert joined.what == "joined" and joined.game is None
    with pytest.raises(Refused, match="Only Alice, who opened"):
        club.start(db, BOB, tag, members.now)
    started = club.start(db, ALICE, tag, members.now)
    game = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert game is not None and len(game.seats) == 3


def test_who_may_open_a_table(members: Club, db: Session) -> None:
    with pytest.raises(Refused, match="opened by the club's members"):
        tables(members).open(db, ERIN, new("new goofspiel"), members.now)
    assert count(db, m.OpenTable) == 0
    with pytest.raises(Refused, match="opened by the operator"):
        tables(members, open_tables="operator").open(db, ALICE, new("new goofspiel"),
                                                     members.now)
    assert tables(members, open_tables="operator").open(
        db, ALICE, new("new goofspiel"), members.now, by_operator=True).what == "opened"
    assert tables(members, open_tables="anyone").open(
        db, ERIN, new("new goofspiel"), members.now).what == "opened"
    # A member the operator added, who has played nothing yet.
    tables(members).add_member(db, "Fay <fay@club.test>", members.now)
    assert tables(members).open(db, "fay@club.test", new("new goofspiel"),
                                 members.now).what == "opened"


def test_open_tables_are_bounded_per_opener(members: Club, db: Session) -> None:
    club = tables(members, tables_per_member=2)
    first = club.open(db, ALICE, new("new goofspiel"), members.now)
    club.open(db, ALICE, new("new miser"), members.now)
    with pytest.raises(Refused, match="You have 2 open tables, the most one may have"):
        club.open(db, ALICE, new("new spades"), members.now)
    club.leave(db, ALICE, first.table, members.now)  # the opener leaving closes it
    assert club.open(db, ALICE, new("new spades"), members.now).what == "opened"


def test_an_invitation_goes_only_to_members_or_those_who_wrote(
        members: Club, db: Session) -> None:
    club = tables(members)
    with pytest.raises(Refused, match="not a member of the club and has never written"):
        club.open(db, ALICE, new(f"new goofspiel with {MALLORY}"), members.now)
    assert (count(db, m.OpenTable), count(db, m.TableSeat)) == (0, 0)
    assert db.scalar(select(m.Player).where(m.Player.address == MALLORY)) is None
    db.add(m.Inbound(source_key="k1", sender=MALLORY, status="processed",
                     received_at=members.now))
    opened = club.open(db, ALICE, new(f"new goofspiel with {MALLORY}"), members.now)
    assert [i.address for i in opened.invitations] == [MALLORY]
    with pytest.raises(Refused, match="There is no member 'Zed'"):
        club.open(db, ALICE, new("new miser with Zed"), members.now)


def test_a_name_that_fits_two_members_is_refused(members: Club, db: Session) -> None:
    members.referee.operator.create_game(
        "goofspiel", ["Bob <bob@elsewhere.test>", ERIN], now=members.now, seed="s")
    with pytest.raises(Refused, match="'Bob' could be Bob or Bob: write the part of their "
                                      "address before the @"):
        tables(members).open(db, ALICE, new("new goofspiel with Bob"), members.now)
    assert count(db, m.OpenTable) == 0
    opened = tables(members).open(db, ALICE, new("new goofspiel with bob@elsewhere.test"),
                                  members.now)
    assert [i.address for i in opened.invitations] == ["bob@elsewhere.test"]


def test_invitations_are_bounded_a_day_and_mailed_once_a_day(members: Club, db: Session) -> None:
    club = tables(members, invites_per_day=3)
    first = club.open(db, ALICE, new("new miser with Bob, Carol"), members.now)
    assert len(first.invitations) == 2
    with pytest.raises(Refused, match="you may invite 1 more today"):
        club.open(db, ALICE, new("new miser with Bob, Dave"), members.now)
    # Bob has not answered Alice's first: invited again, but not mailed again today.
    again = club.open(db, ALICE, new("new goofspiel with Bob"), members.now)
    assert again.invitations == ()
    with pytest.raises(Refused, match="You are invited to miser-t"):
        club.accept(db, BOB, None, members.now)
    later = members.now + timedelta(days=1, seconds=1)
    assert len(club.open(db, ALICE, new("new miser with Dave"), later).invitations) == 1


def test_an_open_table_expires_and_those_at_it_are_told(members: Club, db: Session) -> None:
    club = tables(members, table_days=2)
    tag = club.open(db, ALICE, new("new miser with Dave"), members.now).table
    club.join(db, BOB, tag, members.now)
    assert club.expire(db, members.now + timedelta(days=1)) == []
    (done,) = club.expire(db, members.now + timedelta(days=2))
    assert done == Done("expired", tag, tell=(
        "alice@club.test", "bob@club.test", "dave@club.test"))
    assert club.listing(db) == []
    with pytest.raises(Refused, match=f"{tag} is expired"):
        club.join(db, CAROL, tag, members.now)


def test_a_rematch_invites_the_same_players_and_starts_when_all_accept(
        members: Club, db: Session) -> None:
    club = tables(members)
    first = club.open(db, ALICE, new("new goofspiel with Bob cards=4"), members.now)
    game_tag = club.accept(db, BOB, first.table, members.now).game
    assert game_tag is not None
    with pytest.raises(Refused, match="still being played"):
        club.rematch(db, BOB, game_tag, members.now)
    game = db.scalar(select(m.Game).where(m.Game.tag == game_tag))
    assert game is not None
    game.status = "finished"
    with pytest.raises(Refused, match="Only the players of"):
        club.rematch(db, CAROL, game_tag, members.now)
    again = club.rematch(db, BOB, game_tag, members.now)
    assert [i.address for i in again.invitations] == ["alice@club.test"]
    with pytest.raises(Refused, match=f"A rematch of {game_tag} is open already"):
        club.rematch(db, ALICE, game_tag, members.now)
    started = club.accept(db, ALICE, again.table, members.now)
    replay = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert replay is not None and replay.options["cards"] == 4
    table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == again.table))
    assert table is not None and table.rematch_of_id == game.id


def test_the_listing_and_leaving(members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new spades with Bob"), members.now).table
    club.join(db, CAROL, tag, members.now)
    (view,) = club.listing(db)
    assert (view.tag, view.title, view.opener, view.seated, view.invited, view.seats_left,
            view.expires_at) == (tag, "Spades", "Alice", ("Alice", "Carol"), ("Bob",), 1,
                                 members.now + timedelta(days=14))
    assert club.leave(db, CAROL, tag, members.now).tell == ("carol@club.test",
                                                            "alice@club.test")
    with pytest.raises(Refused, match="You have no seat"):
        club.leave(db, CAROL, tag, members.now)
    with pytest.raises(Refused, match="There is no table spades-t99"):
        club.join(db, CAROL, "spades-t99", members.now)
    cancelled = club.cancel(db, tag, members.now)
    assert (cancelled.what, cancelled.tell) == ("cancelled", ("alice@club.test",
                                                              "bob@club.test"))


def test_an_invitations_reply_address_counts_only_for_its_invitee_while_open(
        members: Club, db: Session) -> None:
    club = tables(members)
    opened = club.open(db, ALICE, new("new goofspiel with Bob"), members.now)
    (invitation,) = opened.invitations
    assert len(invitation.token) == 16
    seat = club.invitation_of(db, invitation.token)
    assert seat is not None and seat.player.address == "bob@club.test"
    # Another's mail to Bob's reply address (a forwarded invitation) seats no one.
    with pytest.raises(Refused, match="This invitation is no longer open"):
        club.accept(db, CAROL, None, members.now, token=invitation.token)
    assert club.decline(db, BOB, None, members.now, token=invitation.token).what == "declined"
    assert club.invitation_of(db, invitation.token) is None  # spent
    with pytest.raises(Refused, match="This invitation is no longer open"):
        club.accept(db, BOB, None, members.now, token=invitation.token)
    assert count(db, m.Game) == 2  # the members' two, no more


# -- the players' own entropy (issue 38) ------------------------------------------


def test_a_table_keeps_its_seed_from_the_opening_and_each_seats_entropy(
        members: Club, db: Session) -> None:
    club = tables(members)
    opened = club.open(db, ALICE, new("new spades with Dave"), members.now,
                       entropy=("<a@club.test>", "message-id"))
    assert opened.entropy == ("<a@club.test>", "message-id")
    table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == opened.table))
    assert table is not None and table.seed is not None and len(table.seed) == 32
    seed = table.seed
    view = club.view(db, opened.table)
    assert view is not None and view.seed_sha256 == seed_fingerprint(seed)
    joined = club.join(db, BOB, opened.table, members.now, entropy=("Bob's words", "words"))
    assert joined.entropy == ("Bob's words", "words")
    # Words given later replace what the seat gave; the seed never changes.
    assert club.give_entropy(db, ALICE, opened.table, "Alice's words").entropy == (
        "Alice's words", "words")
    club.join(db, CAROL, opened.table, members.now)  # a seat with none
    started = club.accept(db, DAVE, None, members.now, entropy=("<d@club.test>", "message-id"))
    game = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert game is not None and (game.seed, game.draws) == (seed, "mixed")
    # By seat position: the seats in the order of the table's rows (Dave's
    # was held for him from the opening).
    assert [(c["position"], c["name"], c["value"], c["how"]) for c in game.entropy or []] == [
        (1, "Alice", "Alice's words", "words"), (2, "Dave", "<d@club.test>", "message-id"),
        (3, "Bob", "Bob's words", "words")]
    assert game.state == get_game("spades").dump(get_game("spades").new(
        get_game("spades").parse_options({}),
        [SeatInfo(i, n, False, None, (n.lower(),))
         for i, n in enumerate(("Alice", "Dave", "Bob", "Carol"), start=1)],
        KeyedDraws(mixed_seed(seed, [(1, "Alice's words"), (2, "<d@club.test>"),
                                     (3, "Bob's words")]))).state)
    with pytest.raises(Refused, match=f"{opened.table} is started as {game.tag}"):
        club.give_entropy(db, BOB, opened.table, "too late")


def test_entropy_is_refused_without_a_seat_and_at_a_table_from_before(
        members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new goofspiel"), members.now).table
    with pytest.raises(Refused, match=f"You have no seat at {tag}"):
        club.give_entropy(db, BOB, tag, "mine")
    table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag))
    assert table is not None
    table.seed = None  # opened before tables kept a seed
    with pytest.raises(Refused, match="draws from the referee's seed alone"):
        club.give_entropy(db, ALICE, tag, "mine")
    started = club.join(db, BOB, tag, members.now, entropy=("<b@club.test>", "message-id"))
    game = db.scalar(select(m.Game).where(m.Game.tag == started.game))
    assert game is not None and (game.draws, game.entropy) == ("keyed", None)
