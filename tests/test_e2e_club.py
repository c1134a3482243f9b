"""The club starts its own games by mail, over the real Postfix and
Dovecot (issue 36; referee/service/intake/gamesmaster.py): a Goofspiel
challenge accepted by the invited player's reply to the invitation, the
game's start announced and its opening mailed; a Spades table opened by
"new spades" and filled by three joins (one through the list), its start
posted to the list, the partners seated apart; in verified mode, a forged
accept starting nothing while the real one, at the invitation's address,
starts the game; a challenge declined, starting nothing; Miser started by
its opener's ``start`` at 3 of 5 seats; a ``rematch`` in reply to a
cancelled game's last mail, started when all accept; a table past
``[club] table_days`` closed at a pass, those seated told; a player in a
game answered by the club, and told of the game's lines it did not read;
"new goofspiel with Bob, Carol" seating three, with the referee's own
options kept for the game. ``tests/service/intake/test_gamesmaster.py`` holds more on Maildir."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.mailstack import PLAYERS, MailStack
from tests.test_e2e import REF, T0, Post, body, person
from tests.test_e2e_budgets import OUT_OF_OFFICE, raw_mail

MX = "mail.example.test"
#: What the players' mail server says of an honest mail (verified mode).
VOUCHED = {"Authentication-Results": f"{MX}; dmarc=pass header.from=example.test"}


def club_of(post: Post, *users: str) -> Post:
    """``users`` made members by the operator (``referee member add``)."""
    for user in users:
        post.referee.club.add_member(person(user), T0)
    return post


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = club_of(Post(mailstack, tmp_path), "alice", "bob")
    yield p
    p.close()


def subjects(msgs: list[EmailMessage]) -> list[str]:
    return sorted(str(x["Subject"]) for x in msgs)


def seats(post: Post, tag: str) -> list[str]:
    with post.referee.sessions() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None
        return [s.name for s in sorted(game.seats, key=lambda s: s.position)]


def test_a_goofspiel_challenge_accepted_by_reply_starts_the_game(post: Post) -> None:
    post.write("alice", "new goofspiel with Bob\n", subject="a game, Bob?")
    post.poll(T0)
    (opened,) = post.new_mail("alice", 1)
    (invited,) = post.new_mail("bob", 1)
    assert opened["Subject"] == "[goofspiel-t1] Your table for Goofspiel is open"
    assert invited["Subject"] == "[goofspiel-t1] Alice invites you to play Goofspiel"
    assert "accept" in body(invited)
    address = invited["Reply-To"].addresses[0].addr_spec
    assert address.startswith("referee+")
    post.write("bob", "accept\n", subject=f"Re: {invited['Subject']}", to=[address],
               reply_to=invited)
    post.poll(T0 + timedelta(minutes=5))
    for user in ("alice", "bob"):
        got = post.new_mail(user, 2)
        assert [s[:30] for s in subjects(got)] == [
            "[goofspiel-1] Goofspiel begins", "[goofspiel-1] Goofspiel starts"]
        started = next(x for x in got if "starts" in str(x["Subject"]))
        assert str(started["Subject"]) == "[goofspiel-1] Goofspiel starts: Alice, Bob"
    assert seats(post, "goofspiel-1") == ["Alice", "Bob"]
    assert post.referee.club.listing() == []
    post.assert_no_more_mail(*PLAYERS)


def arrived(post: Post, user: str, subject: str, timeout: float = 60) -> EmailMessage:
    """The mail whose subject starts with ``subject`` in ``user``'s INBOX,
    once it has come (the list delivers its posts beside the referee's own
    mail, and Postfix delivers in parallel: in any order)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [x for x in post.stack.fetch_all(user)
                 if str(x["Subject"]).startswith(subject)]
        if found:
            return found[-1]
        assert time.monotonic() < deadline, f"{user} got no {subject!r}"
        time.sleep(0.2)


def test_a_spades_table_fills_by_three_joins_and_starts_in_public_partners_apart(
        mailstack: MailStack, tmp_path: Path) -> None:
    post = club_of(Post(mailstack, tmp_path, public_list=mailstack.list_address),
                   "alice", "bob", "carol")
    try:
        post.write("alice", "new spades\n", subject="spades tonight?")
        post.poll(T0)
        post.in_referee_inbox += 1  # the post comes back to the referee through the list
        arrived(post, "alice", "[spades-t1] Your table for Spades is open")
        posted = arrived(post, "frank", "[spades-t1] Alice seeks 3 players for Spades")
        assert str(posted["To"]) == mailstack.list_address
        assert "join spades-t1" in body(posted)
        # Bob joins through the list, Carol by mail to the referee (both
        # members), Dave, a stranger, through a confirmation.
        post.write("bob", "join spades-t1\n", subject=f"Re: {posted['Subject']}",
                   to=[mailstack.list_address],
                   headers={"List-Id": "Game list <players.example.test>"})
        post.write("carol", "join spades-t1\n", subject="a seat")
        post.poll(T0 + timedelta(minutes=5))
        for user in ("bob", "carol"):
            arrived(post, user, "[spades-t1] You took a seat")
        arrived(post, "alice", "[spades-t1] Bob took a seat")
        arrived(post, "alice", "[spades-t1] Carol took a seat")
        assert [sorted(t.seated) for t in post.referee.club.listing()] == [
            ["Alice", "Bob", "Carol"]]
        post.write("dave", "join spades-t1\n", subject="me too")
        post.poll(T0 + timedelta(minutes=10))
        asked = arrived(post, "dave", "Re: me too")
        assert "Nothing vouches that it came from you" in body(asked)
        confirm = asked["Reply-To"].addresses[0].addr_spec
        assert confirm.startswith("referee+club-")
        assert [sorted(t.seated) for t in post.referee.club.listing()] == [
            ["Alice", "Bob", "Carol"]]
        post.write("dave", "join spades-t1\n", subject="Re: me too", to=[confirm],
                   reply_to=asked)
        post.poll(T0 + timedelta(minutes=15))
        started = arrived(post, "erin", "[spades-1] Spades starts: ")
        assert str(started["To"]) == mailstack.list_address
        assert sorted(str(started["Subject"]).split(": ")[1].split(", ")) == [
            "Alice", "Bob", "Carol", "Dave"]
        assert sorted(seats(post, "spades-1")) == ["Alice", "Bob", "Carol", "Dave"]
        # The seating drawn from the game's seed (rule text 001): partners
        # sit across the table, names[0] & names[2] against names[1] & names[3].
        names = post.state("spades-1")["names"]
        assert sorted(names) == ["Alice", "Bob", "Carol", "Dave"]
        begins = arrived(post, "erin", "[spades-1] Spades begins")
        said = " ".join(body(begins).split())
        assert "Playing order (partners sit opposite): " + " ".join(
            f"{i + 1}. {name} (team {i % 2 + 1})" for i, name in enumerate(names)) in said
        assert post.referee.club.listing() == []
        assert post.count(m.Game) == 1
    finally:
        post.close()


def test_in_verified_mode_a_forged_accept_starts_nothing(
        mailstack: MailStack, tmp_path: Path) -> None:
    post = club_of(Post(mailstack, tmp_path, auth={"require": "verified", "authserv_id": MX}),
                   "alice", "bob")
    try:
        post.write("alice", "new goofspiel with Bob\n", subject="a game?", headers=VOUCHED)
        post.poll(T0)
        post.new_mail("alice", 1)
        (invited,) = post.new_mail("bob", 1)
        # Erin writes as Bob: nothing vouches for the mail.
        forged = EmailMessage()
        forged["From"], forged["To"] = person("bob"), REF
        forged["Subject"] = f"Re: {invited['Subject']}"
        forged["Message-ID"] = make_msgid(idstring="forger", domain="elsewhere.example.test")
        forged.set_content("accept goofspiel-t1\n")
        post.stack.send(forged, "erin", REF)
        post.in_referee_inbox += 1
        post.poll(T0 + timedelta(minutes=5))
        (asked,) = post.new_mail("bob", 1)  # Bob, not Erin, is asked to confirm
        assert "Nothing vouches that it came from you" in body(asked)
        assert post.count(m.Game) == 0
        assert [t.seated for t in post.referee.club.listing()] == [("Alice",)]
        post.assert_no_more_mail("alice", "erin")
        # Bob's own reply, at the invitation's address, starts it.
        address = invited["Reply-To"].addresses[0].addr_spec
        post.write("bob", "accept\n", subject=f"Re: {invited['Subject']}", to=[address],
                   reply_to=invited)
        post.poll(T0 + timedelta(minutes=10))
        assert "[goofspiel-1] Goofspiel starts: Alice, Bob" in subjects(
            post.new_mail("alice", 2))
        assert post.count(m.Game) == 1
    finally:
        post.close()


def test_an_out_of_office_reply_to_an_invitation_accepts_nothing(post: Post) -> None:
    """Issue 34: Bob's autoresponder answers Alice's invitation, at its
    private address, in each common shape, each with "accept" on a line of
    its own after its text (an autoresponder that copies what it answers):
    none accepts, none is answered; Bob's own "accept" then starts the
    game. (A first line "accept" is a person's answer, whatever follows.)"""
    post.write("alice", "new goofspiel with Bob\n", subject="a game, Bob?")
    post.poll(T0)
    post.new_mail("alice", 1)
    (invited,) = post.new_mail("bob", 1)
    address = invited["Reply-To"].addresses[0].addr_spec
    subject = str(invited["Subject"])
    for headers, said, text in OUT_OF_OFFICE:
        post.stack.send(raw_mail(post, person("bob"), address, said.format(s=subject),
                                 text.format(s=subject) + "\r\n\r\naccept",
                                 headers=headers, in_reply_to=str(invited["Message-ID"])),
                        "bob", address)
        post.in_referee_inbox += 1
    post.poll(T0 + timedelta(minutes=5))
    assert post.count(m.Game) == 0, sorted(post.inbound_notes().values())
    (table,) = post.referee.club.listing()
    assert (table.seated, table.invited) == (("Alice",), ("Bob",))
    assert sorted(post.inbound_notes().values()) == [
        "club: opened goofspiel-t1", *["not answered: auto-reply"] * len(OUT_OF_OFFICE)]
    post.poll(T0 + timedelta(days=1))
    post.assert_no_more_mail(*PLAYERS)
    post.write("bob", "accept\n", subject=f"Re: {subject}", to=[address], reply_to=invited)
    post.poll(T0 + timedelta(days=1, minutes=5))
    assert "[goofspiel-1] Goofspiel starts: Alice, Bob" in subjects(post.new_mail("alice", 2))
    assert seats(post, "goofspiel-1") == ["Alice", "Bob"]


def test_a_goofspiel_challenge_declined_by_reply_starts_nothing(post: Post) -> None:
    post.write("alice", "new goofspiel with Bob\n", subject="a game, Bob?")
    post.poll(T0)
    post.new_mail("alice", 1)
    (invited,) = post.new_mail("bob", 1)
    address = invited["Reply-To"].addresses[0].addr_spec
    post.write("bob", "decline\n", subject=f"Re: {invited['Subject']}", to=[address],
               reply_to=invited)
    post.poll(T0 + timedelta(minutes=5))
    (told,) = post.new_mail("alice", 1)
    assert str(told["Subject"]) == "[goofspiel-t1] Bob declined"
    # The table says so: Alice sits alone, Bob no longer invited, a seat free.
    (table,) = post.referee.club.listing()
    assert (table.tag, table.seated, table.invited, table.seats_left) == (
        "goofspiel-t1", ("Alice",), (), 1)
    assert post.count(m.Game) == 0
    # The invitation is spent: its address accepts nothing after the decline.
    post.write("bob", "accept\n", subject=f"Re: {invited['Subject']}", to=[address],
               reply_to=invited)
    post.poll(T0 + timedelta(minutes=10))
    assert post.count(m.Game) == 0
    assert post.referee.club.listing()[0].seated == ("Alice",)


def test_miser_starts_at_three_of_five_seats_by_the_openers_start(post: Post) -> None:
    club_of(post, "carol")
    post.write("alice", "new miser players=5\n", subject="miser?")
    post.poll(T0)
    (opened,) = post.new_mail("alice", 1)
    assert str(opened["Subject"]).startswith("[miser-t1] Your table for ")
    for user in ("bob", "carol"):
        post.write(user, "join miser-t1\n", subject="a seat")
    post.poll(T0 + timedelta(minutes=5))
    post.new_mail("alice", 2)
    post.new_mail("bob", 1)
    post.new_mail("carol", 1)
    (table,) = post.referee.club.listing()
    assert (sorted(table.seated), table.seats_left) == (["Alice", "Bob", "Carol"], 2)
    # Bob did not open the table: his start starts nothing.
    post.write("bob", "start miser-t1\n", subject="go")
    post.poll(T0 + timedelta(minutes=10))
    (refused,) = post.new_mail("bob", 1)
    assert "Only Alice, who opened miser-t1, may start it." in " ".join(body(refused).split())
    assert post.count(m.Game) == 0
    post.write("alice", "start miser-t1\n", subject="go")
    post.poll(T0 + timedelta(minutes=15))
    for user in ("alice", "bob", "carol"):
        got = post.new_mail(user, 2)
        started = next(x for x in got if " starts: " in str(x["Subject"]))
        assert str(started["Subject"]).startswith("[miser-1] ")
        assert sorted(str(started["Subject"]).split(": ")[1].split(", ")) == [
            "Alice", "Bob", "Carol"]
    assert sorted(seats(post, "miser-1")) == ["Alice", "Bob", "Carol"]
    assert post.referee.club.listing() == []
    post.assert_no_more_mail(*PLAYERS)


def test_a_rematch_in_reply_to_a_cancelled_games_last_mail_starts_when_all_accept(
        post: Post) -> None:
    ops = post.referee.operator
    tag = ops.create_game("goofspiel", [person("alice"), person("bob")], now=T0, seed="s")
    ops.cancel_game(tag, now=T0)
    post.poll(T0)
    last = post.new_mail("alice", 2)[-1]
    post.new_mail("bob", 2)
    assert str(last["Subject"]).startswith(f"[{tag}] ")
    assert "cancel" in str(last["Subject"]).lower()
    post.write("alice", "rematch\n", subject=f"Re: {last['Subject']}", reply_to=last)
    post.poll(T0 + timedelta(minutes=5))
    (opened,) = post.new_mail("alice", 1)
    (invited,) = post.new_mail("bob", 1)
    assert str(opened["Subject"]) == "[goofspiel-t1] Your table for Goofspiel is open"
    assert str(invited["Subject"]) == "[goofspiel-t1] Alice invites you to play Goofspiel"
    assert f"a rematch of {tag}" in body(invited)
    assert post.count(m.Game) == 1
    address = invited["Reply-To"].addresses[0].addr_spec
    post.write("bob", "accept\n", subject=f"Re: {invited['Subject']}", to=[address],
               reply_to=invited)
    post.poll(T0 + timedelta(minutes=10))
    for user in ("alice", "bob"):
        got = post.new_mail(user, 2)
        started = next(x for x in got if " starts: " in str(x["Subject"]))
        assert str(started["Subject"]) == "[goofspiel-2] Goofspiel starts: Alice, Bob"
        assert f"a rematch of {tag}" in " ".join(body(started).split())
    assert sorted(seats(post, "goofspiel-2")) == ["Alice", "Bob"]
    assert post.referee.club.listing() == []
    post.assert_no_more_mail(*PLAYERS)


def test_a_table_past_table_days_closes_at_a_pass_and_those_seated_are_told(
        post: Post) -> None:
    days = post.config.club.table_days
    post.write("alice", "new pure-skill\n", subject="pure skill?")
    post.poll(T0)
    post.new_mail("alice", 1)
    post.write("bob", "join pure-skill-t1\n", subject="a seat")
    post.poll(T0 + timedelta(minutes=5))
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    # A pass the day before the table's time is up closes nothing.
    post.poll(T0 + timedelta(days=days - 1))
    assert [t.tag for t in post.referee.club.listing()] == ["pure-skill-t1"]
    post.assert_no_more_mail(*PLAYERS)
    post.poll(T0 + timedelta(days=days, minutes=1))
    for user in ("alice", "bob"):
        (closed,) = post.new_mail(user, 1)
        assert str(closed["Subject"]) == (
            "[pure-skill-t1] The table for Game of Pure Skill is closed")
        said = " ".join(body(closed).split())
        assert f"waited {days} days without filling" in said
        assert "Seated were: Alice, Bob." in said
    assert post.referee.club.listing() == []
    with post.referee.sessions() as db:
        assert db.scalar(select(m.OpenTable.status).where(
            m.OpenTable.tag == "pure-skill-t1")) == m.TABLE_EXPIRED
    assert post.count(m.Game) == 0
    post.assert_no_more_mail(*PLAYERS)


def test_a_player_in_a_game_gets_the_clubs_answer_and_no_move_is_lost_unsaid(
        post: Post) -> None:
    """A player sitting in one game (where an untagged mail is the game's)
    writes club lines: "new chess" alone is refused with the list of the
    games, not passed to the game as a mail with no command; "bid 3" beside
    "new spades" opens the table, and the bid, not read there, is answered
    as not done, with the game's tag to write it under. Nothing is bid."""
    tag = post.referee.operator.create_game(
        "goofspiel", [person("alice"), person("bob")], now=T0, seed="s", operator_seed=True)
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    post.write("alice", "new chess\n", subject="a game")
    post.poll(T0 + timedelta(minutes=5))
    (refused,) = post.new_mail("alice", 1)
    assert str(refused["Subject"]) == "Re: a game"
    said = " ".join(body(refused).split())
    assert ("new chess was not done: There is no game 'chess' here; the games are "
            "goofspiel, loatcg, miser, pure-skill, spades.") in said
    post.write("alice", "bid 3\nnew spades\n", subject="spades too")
    post.poll(T0 + timedelta(minutes=10))
    got = post.new_mail("alice", 2)
    assert subjects(got) == ["Re: spades too", "[spades-t1] Your table for Spades is open"]
    said = " ".join(body(next(x for x in got if x["Subject"] == "Re: spades too")).split())
    assert "bid 3 was not done:" in said
    assert f"in a mail with [{tag}] in the subject" in said
    assert post.count(m.ActionLog) == 0
    assert [t.tag for t in post.referee.club.listing()] == ["spades-t1"]
    post.assert_no_more_mail(*PLAYERS)


def test_new_with_more_names_than_the_default_seats_and_the_referees_options(
        post: Post) -> None:
    """The README's "new goofspiel with Bob, Carol" seats the three named
    (Goofspiel's players=3, left unsaid), and the referee's own options
    (weekends=off, autoplay=off), which every game takes, are kept for the
    game the table starts; "new spades away=no" opens its table too."""
    club_of(post, "carol")
    post.write("alice", "new goofspiel with Bob, Carol weekends=off autoplay=off\n",
               subject="three of us")
    post.poll(T0)
    (opened,) = post.new_mail("alice", 1)
    assert str(opened["Subject"]) == "[goofspiel-t1] Your table for Goofspiel is open"
    assert "The game starts by itself when 3 players are seated." in " ".join(
        body(opened).split())
    for user, minutes in (("bob", 5), ("carol", 10)):
        (invited,) = post.new_mail(user, 1)
        assert str(invited["Subject"]) == "[goofspiel-t1] Alice invites you to play Goofspiel"
        address = invited["Reply-To"].addresses[0].addr_spec
        post.write(user, "accept\n", subject=f"Re: {invited['Subject']}", to=[address],
                   reply_to=invited)
        post.poll(T0 + timedelta(minutes=minutes))
    got = subjects(post.new_mail("alice", 3))
    assert "[goofspiel-t1] Bob took a seat" in got
    assert "[goofspiel-1] Goofspiel starts: Alice, Bob, Carol" in got
    assert sorted(seats(post, "goofspiel-1")) == ["Alice", "Bob", "Carol"]
    with post.referee.sessions() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == "goofspiel-1"))
        assert game is not None
        assert (game.options["players"], game.options["weekends"],
                game.options["autoplay"]) == (3, "off", "off")
    post.write("bob", "new spades away=no\n", subject="spades, no holidays")
    post.poll(T0 + timedelta(minutes=15))
    assert [t.tag for t in post.referee.club.listing()] == ["spades-t2"]


def test_an_invited_player_in_no_game_accepts_by_a_fresh_mail_once_confirmed(
        post: Post) -> None:
    """Bob, invited and sitting in no game, writes "accept" in a new mail
    (not a reply to the invitation): it was read as a game's move, and
    answered "You have no game in progress" twice over. It is the
    invitation's now: Bob is asked to confirm, and his reply starts the
    game. Carol, a member with no game and no invitation, is told how to
    find a table, not only to ask the operator."""
    club_of(post, "carol")
    post.write("alice", "new goofspiel with Bob\n", subject="a game, Bob?")
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    post.write("bob", "accept\n", subject="yes please")
    post.write("carol", "accept\n", subject="me?")
    post.poll(T0 + timedelta(minutes=5))
    (asked,) = post.new_mail("bob", 1)
    said = " ".join(body(asked).split())
    assert "asked the club: accept Nothing vouches that it came from you" in said
    confirm = asked["Reply-To"].addresses[0].addr_spec
    assert confirm.startswith("referee+club-")
    (told,) = post.new_mail("carol", 1)
    said = " ".join(body(told).split())
    assert 'To play, write "tables" in a mail to referee@example.test' in said
    assert post.count(m.Game) == 0
    post.write("bob", "accept\n", subject="Re: yes please", to=[confirm], reply_to=asked)
    post.poll(T0 + timedelta(minutes=10))
    assert "[goofspiel-1] Goofspiel starts: Alice, Bob" in subjects(post.new_mail("alice", 2))
    assert seats(post, "goofspiel-1") == ["Alice", "Bob"]
