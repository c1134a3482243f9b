"""The club's command lines by mail, through the whole intake on a Maildir
and SQLite (referee/service/intake/gamesmaster.py): a challenge accepted
at the invitation's reply address, a table filled by joins, and what
vouches for a writer: a forged accept starts nothing."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from referee.games.draws import seed_fingerprint
from referee.store import models as m
from referee.web import write_pages
from tests.test_referee import Club, body

ALICE, BOB, CAROL, DAVE = (f"{n.capitalize()} <{n}@club.test>"
                           for n in ("alice", "bob", "carol", "dave"))
LIST = "players@lists.club.test"


def members(club: Club) -> Club:
    """Alice, Bob, Carol and Dave have played here; their openings are read."""
    for pair in ((ALICE, BOB), (CAROL, DAVE)):
        tag = club.referee.operator.create_game("goofspiel", list(pair), now=club.now,
                                                seed="s")
        club.referee.operator.cancel_game(tag, now=club.now)
    club.poll(club.now)
    return club


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    c = members(Club(tmp_path))
    yield c
    c.referee.close()


def seen(mails: list[EmailMessage]) -> list[tuple[str, str]]:
    return [(str(x["To"]), str(x["Subject"])) for x in mails]


def test_a_challenge_accepted_at_the_invitations_address_starts_the_game(club: Club) -> None:
    club.send(ALICE, "new goofspiel with Bob\n", subject="a game?")
    out = club.poll()
    assert seen(out) == [
        ("alice@club.test", "[goofspiel-t1] Your table for Goofspiel is open"),
        ("bob@club.test", "[goofspiel-t1] Alice invites you to play Goofspiel")]
    reply_to = out[1]["Reply-To"].addresses[0].addr_spec
    assert reply_to.startswith("referee+") and reply_to != "referee@club.test"
    # Bob's forged accept to the referee's own address starts nothing, even
    # with the default auth: accepting is the invitation's address's.
    club.send(BOB, "accept goofspiel-t1\n", subject="Re: [goofspiel-t1] invite")
    forged = club.poll()
    assert seen(forged) == [("bob@club.test", "Re: [goofspiel-t1] invite")]
    assert "reply to this mail, from this address" in body(forged[0])
    assert club.count(m.Game) == 2
    club.send(BOB, "accept\n", subject="Re: [goofspiel-t1] invite", to=reply_to)
    assert [(a, s if "starts" in s else s[:31]) for a, s in seen(club.poll())] == [
        ("Alice <alice@club.test>", "[goofspiel-3] Goofspiel begins:"),
        ("Bob <bob@club.test>", "[goofspiel-3] Goofspiel begins:"),
        ("alice@club.test", "[goofspiel-3] Goofspiel starts: Alice, Bob"),
        ("bob@club.test", "[goofspiel-3] Goofspiel starts: Alice, Bob")]
    assert club.count(m.Game) == 3
    # The invitation is spent: its address accepts nothing more.
    club.send(BOB, "accept\n", subject="Re: [goofspiel-t1] invite", to=reply_to)
    assert all("starts" not in str(x["Subject"]) for x in club.poll())
    assert club.count(m.Game) == 3


def test_an_autoresponders_reply_to_an_invitation_accepts_nothing(club: Club) -> None:
    club.send(ALICE, "new goofspiel with Bob\n")
    reply_to = club.poll()[1]["Reply-To"].addresses[0].addr_spec
    club.send(BOB, "I am away until Monday.\n", subject="Out of office", to=reply_to)
    club.send(BOB, "accept\n", subject="Auto: away", to=reply_to,
              headers={"Auto-Submitted": "auto-replied"})
    assert club.poll() == []
    assert club.count(m.Game) == 2
    assert [t.invited for t in club.referee.club.listing()] == [("Bob",)]


def test_an_invitation_goes_to_no_address_that_never_wrote(club: Club) -> None:
    club.send(ALICE, "new goofspiel with victim@example.com\n", subject="spam?")
    out = club.poll()
    assert seen(out) == [("alice@club.test", "Re: spam?")]
    assert "victim@example.com is not a member" in body(out[0])
    assert club.referee.club.listing() == []


def test_a_strangers_new_is_refused_at_once_where_members_open_tables(
        club: Club, tmp_path: Path) -> None:
    """Under ``open_tables = "members"`` (the default) a stranger's ``new``
    would be refused after the confirming reply anyway: it is refused at
    once, with why, and no reply is asked for; where anyone may open, the
    stranger confirms first."""
    club.send("Erin <erin@else.test>", "new goofspiel\n", subject="a game?")
    (refused,) = club.poll()
    assert (str(refused["To"]), str(refused["Subject"])) == ("erin@else.test", "Re: a game?")
    said = " ".join(body(refused).split())
    assert "new goofspiel was not done: Tables are opened by the club's members here" in said
    assert "Nothing vouches" not in said
    assert "referee+club-" not in str(refused["Reply-To"])
    assert club.referee.club.listing() == []
    (tmp_path / "anyone").mkdir()
    anyone = members(Club(tmp_path / "anyone", club={"open_tables": "anyone"}))
    try:
        anyone.send("Erin <erin@else.test>", "new goofspiel\n", subject="a game?")
        (asked,) = anyone.poll()
        assert "Nothing vouches that it came from you" in body(asked)
        confirm = asked["Reply-To"].addresses[0].addr_spec
        anyone.send("Erin <erin@else.test>", "new goofspiel\n", subject="Re: a game?",
                    to=confirm)
        assert [str(x["Subject"]) for x in anyone.poll()] == [
            "[goofspiel-t1] Your table for Goofspiel is open"]
    finally:
        anyone.referee.close()


def test_a_strangers_join_is_confirmed_by_a_reply_that_says_it_again(club: Club) -> None:
    club.send(ALICE, "new pure-skill\n")
    club.poll()
    club.send("Erin <erin@else.test>", "join pure-skill-t1\n", subject="me too")
    (ask,) = club.poll()
    assert (str(ask["To"]), str(ask["Subject"])) == ("erin@else.test", "Re: me too")
    confirm = ask["Reply-To"].addresses[0].addr_spec
    assert confirm.startswith("referee+club-")
    assert [t.seated for t in club.referee.club.listing()] == [("Alice",)]
    # Mallory, who saw nothing, cannot use Erin's address to confirm.
    club.send("mallory@else.test", "join pure-skill-t1\n", to=confirm)
    (mallory,) = club.poll()
    assert str(mallory["To"]) == "mallory@else.test"
    club.send("Erin <erin@else.test>", "join pure-skill-t1\n", subject="Re: me too",
              to=confirm)
    assert seen(club.poll()) == [
        ("erin@else.test", "[pure-skill-t1] You took a seat"),
        ("alice@club.test", "[pure-skill-t1] Erin took a seat")]
    assert [t.seated for t in club.referee.club.listing()] == [("Alice", "Erin")]


def test_a_forged_accept_in_verified_mode_starts_nothing(tmp_path: Path) -> None:
    club = members(Club(tmp_path, auth={"require": "verified", "authserv_id": "mx.club.test"}))
    try:
        club.vouch = True
        club.send(ALICE, "new goofspiel with Bob\n")
        assert len(club.poll()) == 2
        club.vouch = False  # a forger writes as Bob; nothing vouches for the mail
        for line in ("accept goofspiel-t1", "accept", "join goofspiel-t1"):
            club.send(BOB, f"{line}\n", subject="Re: [goofspiel-t1] invite")
        asked = club.poll()
        # One request to confirm (once a day), and nothing more: the bare
        # "accept" of one who sits in no game but is invited is the
        # invitation's, under the same once-a-day request.
        assert [(str(x["To"]), x["Subject"].endswith("(not applied)")) for x in asked] == [
            ("bob@club.test", False)]
        assert "accept goofspiel-t1" in body(asked[0])
        assert club.count(m.Game) == 2
        assert [t.seated for t in club.referee.club.listing()] == [("Alice",)]
    finally:
        club.referee.close()


def test_a_bare_accept_from_a_player_in_a_game_is_the_games(club: Club) -> None:
    club.send(ALICE, "new goofspiel with Bob\n")
    club.poll()
    club.send(BOB, "accept\n", subject="hello")
    out = club.poll()
    assert club.count(m.Game) == 2 and all("goofspiel-t1" not in str(x["Subject"])
                                           for x in out)


def test_a_spades_table_fills_by_three_joins_and_the_start_is_posted(tmp_path: Path) -> None:
    club = members(Club(tmp_path, public_list=LIST))
    try:
        club.send(ALICE, "new spades\n")
        out = club.poll()
        # The post to the list goes first: no reader of the list gets it
        # after the mails the same line caused.
        assert seen(out) == [
            (LIST, "[spades-t1] Alice seeks 3 players for Spades"),
            ("alice@club.test", "[spades-t1] Your table for Spades is open")]
        dates = [parsedate_to_datetime(str(x["Date"])) for x in out]
        assert dates[0] <= dates[1]
        for who in (BOB, CAROL):
            club.send(who, "join spades-t1\n")
        assert seen(club.poll()) == [
            ("bob@club.test", "[spades-t1] You took a seat"),
            ("alice@club.test", "[spades-t1] Bob took a seat"),
            ("carol@club.test", "[spades-t1] You took a seat"),
            ("alice@club.test", "[spades-t1] Carol took a seat")]
        club.send(DAVE, "join spades-t1\n")
        subjects = seen(club.poll())
        assert (LIST, "[spades-3] Spades starts: Alice, Bob, Carol, Dave") in subjects
        assert club.count(m.Game) == 3
        with club.referee.sessions() as db:
            game = db.query(m.Game).filter_by(tag="spades-3").one()
            names = [s.name for s in sorted(game.seats, key=lambda s: s.position)]
        assert len(names) == 4
    finally:
        club.referee.close()


def test_a_bare_accept_from_one_in_no_game_is_the_invitations_or_says_where_to_look(
        club: Club) -> None:
    """Bob, invited, in no game: a fresh "accept" is the invitation's, to
    confirm. Carol (her game over, no invitation) is told once that she has
    no game in progress, and how to find an open table."""
    club.send(ALICE, "new goofspiel with Bob\n")
    club.poll()
    club.send(BOB, "accept\n", subject="yes")
    (asked,) = club.poll()
    assert "Nothing vouches that it came from you" in body(asked)
    assert asked["Reply-To"].addresses[0].addr_spec.startswith("referee+club-")
    club.send(CAROL, "accept\n", subject="me?")
    (told,) = club.poll()
    said = " ".join(body(told).split())
    assert said.count("You have no game in progress.") == 1
    assert 'To play, write "tables" to see the open tables you may join' in said


def test_rematch_in_reply_to_a_games_mail_opens_it_again_and_starts_when_all_accept(
        club: Club) -> None:
    club.send(ALICE, "rematch\n", subject="Re: [goofspiel-1] The game was cancelled")
    out = club.poll()
    assert seen(out) == [
        ("alice@club.test", "[goofspiel-t1] Your table for Goofspiel is open"),
        ("bob@club.test", "[goofspiel-t1] Alice invites you to play Goofspiel")]
    assert "a rematch of goofspiel-1" in body(out[1])
    club.send(BOB, "accept\n", subject="Re: invite",
              to=out[1]["Reply-To"].addresses[0].addr_spec)
    assert ("alice@club.test", "[goofspiel-3] Goofspiel starts: Alice, Bob") in seen(
        club.poll())
    # Carol, who did not play it, may not ask for its rematch.
    club.send(CAROL, "rematch\n", subject="Re: [goofspiel-1] The game was cancelled")
    (refused,) = club.poll()
    assert "Only the players of goofspiel-1" in body(refused)


def test_rematch_outside_a_reply_to_a_game_says_where_to_write_it(club: Club) -> None:
    club.send(ALICE, "rematch\n", subject="again")
    (refused,) = club.poll()
    assert "in a reply to the last mail of the game" in body(refused)
    assert club.referee.club.listing() == []


def test_tables_lists_the_open_tables_to_anyone_and_a_bad_line_says_what_is_right(
        club: Club) -> None:
    club.send(ALICE, "new pure-skill\nnew chess\n", subject="tables")
    out = club.poll()
    assert seen(out) == [
        ("alice@club.test", "[pure-skill-t1] Your table for Game of Pure Skill is open"),
        ("alice@club.test", "Re: tables")]
    assert "There is no game 'chess' here; the games are" in " ".join(body(out[1]).split())
    club.send("Erin <erin@else.test>", "tables\n", subject="what is open?")
    (listing,) = club.poll()
    assert (str(listing["To"]), str(listing["Subject"])) == ("erin@else.test",
                                                              "Re: what is open?")
    assert "join pure-skill-t1" in body(listing)


def test_standings_while_the_club_keeps_none_says_so(club: Club) -> None:
    club.send(ALICE, "standings\n", subject="who leads?")
    (answer,) = club.poll()
    assert str(answer["Subject"]) == "Re: who leads?"
    assert "This club keeps no standings: nobody's results are rated here." in body(answer)


def test_standings_hide_and_show_are_kept_and_a_stranger_is_refused(tmp_path: Path) -> None:
    c = members(Club(tmp_path, club={"standings": True}, auth={"authserv_id": "mx.club.test"}))
    try:
        # A stranger's hide is done only once confirmed: it changes a table.
        c.send("Erin <erin@else.test>", "standings hide\n", subject="hide")
        (answer,) = c.poll()
        assert "A mail from this address asked the club" in " ".join(body(answer).split())
        c.vouch = True  # her domain vouches for her: done, but she is in no table
        c.send("Erin <erin@else.test>", "standings hide please\n", subject="hide")
        c.vouch = False
        (answer,) = c.poll()
        text = " ".join(body(answer).split())
        assert ("Your line standings hide please was not done: You have played no game here, "
                "so "
                "no table shows you.") in text
        c.send(ALICE, "standings hide\n", subject="hide")
        (answer,) = c.poll()
        assert "You are now left out of the club's standings" in body(answer)
        with c.referee.sessions() as db:
            hidden = [p.address for p in db.query(m.Player) if p.standings_hidden]
            assert hidden == ["alice@club.test"]
        c.send(ALICE, "standings show\n", subject="show")
        (answer,) = c.poll()
        assert "You are now shown in the club's standings again." in " ".join(
            body(answer).split())
    finally:
        c.referee.close()


# -- the players' own entropy (issue 38) ------------------------------------------


def _your_entropy(mail: EmailMessage) -> str:
    line = next(x for x in body(mail).splitlines() if x.startswith("  your-entropy: "))
    return line.removeprefix("  your-entropy: ")


def test_each_seat_gives_its_mails_message_id_or_its_own_words_to_the_draws(
        club: Club) -> None:
    opened_by = club.send(ALICE, "new goofspiel with Bob\n", subject="a game?",
                          message_id="<alice.1@club.test>")
    opened, invite = club.poll()
    assert opened_by == "<alice.1@club.test>"
    assert _your_entropy(opened) == "<alice.1@club.test>"
    assert "the Message-ID of this mail of yours" in body(opened)
    with club.referee.sessions() as db:
        table = db.query(m.OpenTable).one()
        seed = table.seed
        assert seed is not None
    # The seed is fixed when the table opens: every mail about it says so.
    fingerprint = f"  seed-sha256: {seed_fingerprint(seed)}\n"
    assert fingerprint in body(opened) and fingerprint in body(invite)
    # Bob's accept chooses his own words; whitespace is made single spaces.
    reply_to = invite["Reply-To"].addresses[0].addr_spec
    club.send(BOB, "accept\nentropy   Tibbles,\t1987 \n", subject="Re: [goofspiel-t1] invite",
              to=reply_to)
    out = club.poll()
    starts = [x for x in out if "Goofspiel begins" in str(x["Subject"])]
    assert len(starts) == 2
    # His accept filled the table: the start mail answering it, and it
    # alone, quotes his words back; Alice's copy quotes nothing.
    started = {str(x["To"]): x for x in out if "Goofspiel starts" in str(x["Subject"])}
    assert sorted(started) == ["alice@club.test", "bob@club.test"]
    assert _your_entropy(started["bob@club.test"]) == "Tibbles, 1987"
    assert "your own words" in body(started["bob@club.test"])
    assert "your-entropy" not in body(started["alice@club.test"])
    opening = body(starts[0])
    assert fingerprint in opening
    assert ("  Alice, seat 1, the Message-ID of the mail that took the seat:\n"
            "  entropy 1: <alice.1@club.test>\n"
            "  Bob, seat 2, words of their own:\n"
            "  entropy 2: Tibbles, 1987\n") in opening
    with club.referee.sessions() as db:
        game = db.query(m.Game).filter(m.Game.tag == "goofspiel-3").one()
        assert (game.seed, game.draws) == (seed, "mixed")
        assert [(c["position"], c["value"], c["how"]) for c in game.entropy or []] == [
            (1, "<alice.1@club.test>", "message-id"), (2, "Tibbles, 1987", "words")]
        record = db.query(m.Event).filter(m.Event.game_id == game.id,
                                          m.Event.kind == m.SEED_EVENT).one()
        assert "Seat 2 (Bob) adds entropy Tibbles, 1987 (words of their own)." in record.text
    assert club.referee.reading.examine("goofspiel-3").problems == []
    held = "; ".join(club.referee.reading.examine("goofspiel-3").held)
    assert "mix the seed with 2 players' entropy" in held
    assert "goofspiel-t1 published the same fingerprint when it opened" in held
    # The game's page lists them too.
    write_pages(club.referee, club.root / "site")
    page = (club.root / "site" / "goofspiel-3.html").read_text()
    assert ('<li>Alice, seat 1: <span class="hash">entropy 1: &lt;alice.1@club.test&gt;'
            '</span></li><li>Bob, seat 2: <span class="hash">entropy 2: Tibbles, 1987'
            '</span></li>') in page


def test_the_last_entropy_an_operators_table_waits_for_is_quoted_in_its_start_mail(
        club: Club) -> None:
    club.referee.club.open_for_operator("goofspiel", [ALICE, BOB], options={"cards": "3"},
                                        now=club.now)
    club.poll()
    club.send(ALICE, "entropy my words\n", subject="Re: [goofspiel-t1] You are seated")
    (answer,) = club.poll()
    assert _your_entropy(answer) == "my words"
    # Bob's reply, whatever it says, gives its Message-ID, the last one the
    # table waits for: the game starts, and his start mail quotes it back
    # (one mail to him about the table, not two).
    club.send(BOB, "fine\n", subject="Re: [goofspiel-t1] You are seated",
              message_id="<b.last@club.test>")
    out = club.poll()
    to_bob = [x for x in out if "bob@" in str(x["To"]) and "begins" not in str(x["Subject"])]
    assert [str(x["Subject"]) for x in to_bob] == ["[goofspiel-3] Goofspiel starts: Alice, Bob"]
    assert _your_entropy(to_bob[0]) == "<b.last@club.test>"
    assert str(to_bob[0]["In-Reply-To"]) == "<b.last@club.test>"
    alices = next(x for x in out if "alice@" in str(x["To"]) and "starts" in str(x["Subject"]))
    assert "your-entropy" not in body(alices)


def test_entropy_later_by_tag_or_in_a_reply_and_what_is_refused(club: Club) -> None:
    club.send(ALICE, "new pure-skill\n", message_id="<a.1@club.test>")
    club.poll()
    club.send(BOB, "join pure-skill-t1\n", message_id="<b.1@club.test>")
    (joined, _) = club.poll()
    assert _your_entropy(joined) == "<b.1@club.test>"
    # Later, with the tag: the words replace the Message-ID.
    club.send(BOB, "entropy pure-skill-t1 the quick brown fox\n", subject="words")
    (answer,) = club.poll()
    assert str(answer["Subject"]) == "[pure-skill-t1] Your entropy for Game of Pure Skill"
    assert _your_entropy(answer) == "the quick brown fox"
    assert "your own words" in body(answer)
    # In a reply about the table, the subject's tag is enough.
    club.send(ALICE, "entropy second thoughts\n", subject="Re: [pure-skill-t1] Bob took a seat")
    (answer,) = club.poll()
    assert _your_entropy(answer) == "second thoughts"
    # Refused, each saying what would be right; nothing changes.
    for line, why in (
            ("entropy pure-skill-t1 " + "x" * 201, "at most 200 printable characters"),
            ("entropy", "Write your words after 'entropy'"),
            ("entropy no tag here", "Write the table's tag after 'entropy'"),
            ("entropy pure-skill-t1 mine", "You have no seat at pure-skill-t1")):
        club.send(CAROL, f"{line}\n", subject="words")
        (refused,) = club.poll()
        assert why in body(refused), line
    with club.referee.sessions() as db:
        seats = {s.player.name: (s.entropy, s.entropy_how)
                 for s in db.query(m.TableSeat).all()}
    assert seats == {"Alice": ("second thoughts", "words"),
                     "Bob": ("the quick brown fox", "words")}


def test_the_operators_verify_refuses_a_seed_other_than_the_tables(club: Club) -> None:
    club.send(ALICE, "new goofspiel with Bob\n")
    invite = club.poll()[1]
    club.send(BOB, "accept\n", to=invite["Reply-To"].addresses[0].addr_spec)
    club.poll()
    assert club.referee.reading.examine("goofspiel-3").problems == []
    # A seed chosen after the contributions, its fingerprint published
    # in the opening's place: the table committed to another when it opened.
    with club.referee.sessions.begin() as db:
        game = db.query(m.Game).filter(m.Game.tag == "goofspiel-3").one()
        table = db.query(m.OpenTable).one()
        game.seed = "0" * 32
        record = db.query(m.Event).filter(m.Event.game_id == game.id,
                                          m.Event.kind == m.SEED_EVENT).one()
        record.data = {**record.data, "seed_sha256": seed_fingerprint(game.seed)}
        committed = seed_fingerprint(table.seed or "")
    problems = club.referee.reading.examine("goofspiel-3").problems
    assert problems[0] == ("goofspiel-3: the seed is not the one goofspiel-t1 committed to "
                           f"when it opened (seed-sha256 {committed})")
    # The opening's list altered: refused too.
    with club.referee.sessions.begin() as db:
        record = db.query(m.Event).filter(m.Event.kind == m.SEED_EVENT).all()[-1]
        record.data = {**record.data, "entropy": []}
    assert "the opening lists the players' entropy []" in (
        club.referee.reading.examine("goofspiel-3").problems[0])
