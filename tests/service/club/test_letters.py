"""The club's mails, rendered from real actions on SQLite
(referee/service/club/letters.py and templates/common/club_*.txt): the
text a player reads, whole for a few of them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session

from referee.mail.compose import Composer
from referee.service.club import letters
from referee.service.club.letters import Letter
from referee.service.club.tables import Refused, TableView
from referee.service.club.words import Unreadable, kinds, parse_line
from tests.service.club.test_tables import ALICE, BOB, CAROL, DAVE, new, tables
from tests.test_referee import Club

LIST = "players@lists.club.test"
COMPOSER = Composer("referee@club.test", "Club Referee")
#: The signature under every mail ("-- " and the referee).
SIG = "-- \nClub Referee <referee@club.test>\n"


@pytest.fixture
def members(club: Club) -> Club:
    """Alice, Bob, Carol and Dave have played here (a game each pair)."""
    club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="s")
    club.referee.operator.create_game("goofspiel", [CAROL, DAVE], now=club.now, seed="s")
    return club


@pytest.fixture
def db(members: Club) -> Iterator[Session]:
    with members.referee.sessions.begin() as session:
        yield session


def render(letter: Letter) -> tuple[str, str]:
    return COMPOSER.render("common", letter.template, letter.context)


def view(members: Club, db: Session, tag: str) -> TableView:
    found = tables(members).view(db, tag)
    assert found is not None
    return found


def test_opening_a_spades_table_answers_the_opener_and_posts_it(
        members: Club, db: Session) -> None:
    club = tables(members)
    done = club.open(db, ALICE, new("new spades"), members.now)
    t = view(members, db, done.table)
    mails = letters.letters(done, t, "alice@club.test", "Alice", LIST)
    assert [(x.to, x.template, x.public) for x in mails] == [
        ("alice@club.test", "club_opened", False), (LIST, "club_posted", True)]
    subject, body = render(mails[0])
    assert subject == f"[{t.tag}] Your table for Spades is open"
    assert body == f"""Hello Alice,

This is Club Referee, a robot that referees games played by email.
Your table is open:

  Spades [{t.tag}], opened by Alice: Alice seated; 3 seats left

Every random draw of its game will come from a secret seed, fixed when
the table opened, before anyone's entropy was known, mixed with each
player's own entropy. The seed's SHA-256 fingerprint (the game's first
mail gives it again):

  seed-sha256: {t.seed_sha256}

Anyone may take a seat by writing

  join {t.tag}

in a mail to referee@club.test or to the list {LIST}.
The game starts by itself when 4 players are seated.
To close the table, write "leave {t.tag}". Unless it starts first,
it closes on {t.expires_at:%a %d %b %Y %H:%M UTC}.

{SIG}"""
    subject, body = render(mails[1])
    assert subject == f"[{t.tag}] Alice seeks 3 players for Spades"
    assert body == f"""Alice has opened a table for Spades.

Seated: Alice
Seats left: 3

Every random draw of its game will come from a secret seed, fixed when
the table opened, before anyone's entropy was known, mixed with each
player's own entropy. The seed's SHA-256 fingerprint (the game's first
mail gives it again):

  seed-sha256: {t.seed_sha256}

To take a seat, write

  join {t.tag}

in a mail to referee@club.test or to this list. The game starts when
4 players are seated; the table closes on {t.expires_at:%a %d %b %Y %H:%M UTC}.
The Message-ID of your mail becomes your entropy for the draws; to
choose your own, write a line "entropy YOUR WORDS" in it too.

{SIG}"""


def test_an_invitation_says_who_invites_and_how_to_answer_and_hides_its_token(
        members: Club, db: Session) -> None:
    done = tables(members).open(db, ALICE, new("new goofspiel with Bob cards=5"), members.now)
    t = view(members, db, done.table)
    mails = letters.letters(done, t, "alice@club.test", "Alice", LIST)
    invite = next(x for x in mails if x.template == "club_invitation")
    assert invite.to == "bob@club.test" and invite.token
    subject, body = render(invite)
    assert invite.token not in body and invite.token not in subject
    assert subject == f"[{t.tag}] Alice invites you to play Goofspiel"
    assert body == f"""Hello Bob,

This is Club Referee, a robot that referees games played by email.
Alice invites you to a game of Goofspiel (cards=5):

  Goofspiel [{t.tag}], opened by Alice: Alice seated; Bob invited

Every random draw of its game will come from a secret seed, fixed when
the table opened, before anyone's entropy was known, mixed with each
player's own entropy. The seed's SHA-256 fingerprint (the game's first
mail gives it again):

  seed-sha256: {t.seed_sha256}

To play, reply to this mail with the word

  accept

(Your reply's Message-ID becomes your entropy for the draws; to choose
your own, write a line "entropy YOUR WORDS" in it too.)

To say no, reply with

  decline

The game starts when 2 players are seated. If you do not
answer, the invitation lapses on {t.expires_at:%a %d %b %Y %H:%M UTC}, and nothing
is played in your name.

{SIG}"""
    # The table is full with Bob: nothing is posted to the list.
    assert [x.template for x in mails] == ["club_opened", "club_invitation"]


def test_joins_leaves_and_declines_tell_the_writer_and_the_opener(
        members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new spades with Dave"), members.now).table
    joined = club.join(db, BOB, tag, members.now)
    mails = letters.letters(joined, view(members, db, tag), "bob@club.test", "Bob", LIST)
    assert [(x.to, x.template) for x in mails] == [("bob@club.test", "club_seat"),
                                                   ("alice@club.test", "club_seat")]
    assert render(mails[0])[0] == f"[{tag}] You took a seat"
    subject, body = render(mails[1])
    assert subject == f"[{tag}] Bob took a seat"
    assert f"  Spades [{tag}], opened by Alice: Alice, Bob seated; Dave invited; " \
           "1 seat left\n" in body
    assert f'Anyone may still join it by writing "join {tag}".' in body
    left = club.leave(db, BOB, tag, members.now)
    mails = letters.letters(left, view(members, db, tag), "bob@club.test", "Bob", LIST)
    assert [render(x)[0] for x in mails] == [f"[{tag}] You left the table",
                                             f"[{tag}] Bob left the table"]
    declined = club.decline(db, DAVE, tag, members.now)
    mails = letters.letters(declined, view(members, db, tag), "dave@club.test", "Dave", LIST)
    assert [(x.to, x.template) for x in mails] == [("alice@club.test", "club_seat"),
                                                   (LIST, "club_posted")]
    subject, body = render(mails[0])
    assert subject == f"[{tag}] Dave declined"
    assert "the seat\nis free for anyone." in body
    assert render(mails[1])[0] == f"[{tag}] Alice seeks 3 players for Spades"


def test_a_table_for_a_range_of_seats_says_how_many_to_start_and_who_may(
        members: Club, db: Session) -> None:
    """Miser takes 3 or more: its table, with no players=N, has 52 seats,
    so its mails say how many more it needs before its opener may start it
    rather than only "seeks 51 players"."""
    club = tables(members)
    done = club.open(db, ALICE, new("new miser"), members.now)
    t = view(members, db, done.table)
    opened, posted = (render(x) for x in letters.letters(done, t, "alice@club.test",
                                                          "Alice", LIST))
    assert f"  Miser [{t.tag}], opened by Alice: Alice seated; 51 seats left, 2 more " \
           "to start\n" in opened[1]
    assert posted[0] == f"[{t.tag}] Alice seeks 2 to 51 players for Miser"
    assert " ".join(posted[1].split()).count(
        "The game starts when 52 players are seated, or sooner when Alice starts it "
        "with 3 or more seated;") == 1
    joined = club.join(db, BOB, t.tag, members.now)
    t = view(members, db, t.tag)
    bob, alice = (" ".join(render(x)[1].split()) for x in letters.letters(
        joined, t, "bob@club.test", "Bob", LIST))
    assert "Alice, Bob seated; 50 seats left, 1 more to start" in bob
    assert ("The game starts when 52 players are seated, or sooner when Alice starts it "
            "with 3 or more seated.") in bob
    assert "or sooner when you start it with 3 or more seated." in alice
    club.join(db, CAROL, t.tag, members.now)
    t = view(members, db, t.tag)
    assert t.seats_to_start == 0
    # A table of one number of seats says nothing of starting sooner.
    spades = view(members, db, club.open(db, DAVE, new("new spades"), members.now).table)
    assert spades.seats_to_start == 0


def test_a_full_table_announces_its_game_with_the_seats(members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new goofspiel"), members.now).table
    started = club.join(db, BOB, tag, members.now)
    t = view(members, db, tag)
    mails = letters.letters(started, t, "bob@club.test", "Bob", LIST)
    assert [(x.to, x.template, x.public) for x in mails] == [(LIST, "club_started", True)]
    subject, body = render(mails[0])
    assert subject == f"[{started.game}] Goofspiel starts: Alice, Bob"
    assert body == f"""The table {tag} is full, and its game of Goofspiel starts as
[{started.game}].

The players:
  Alice
  Bob

Each player has a mail from referee@club.test with the rules and what to
write first. Write your moves with [{started.game}] in the subject.

{SIG}"""
    # No list: those seated are told.
    assert [x.to for x in letters.letters(started, t, "bob@club.test", "Bob")] == [
        "alice@club.test", "bob@club.test"]


def test_the_seat_that_fills_the_table_has_its_entropy_quoted_in_its_start_mail(
        members: Club, db: Session) -> None:
    # Bob's join fills the table and starts the game: no "You took a seat"
    # answer comes, so the start mail answering his join quotes his entropy
    # back (issue 38), and his alone; with a list, whose start mail is no
    # one's, he is answered on his own.
    club = tables(members)
    tag = club.open(db, ALICE, new("new goofspiel"), members.now).table
    started = club.join(db, BOB, tag, members.now, entropy=("<j1@bob.example>", "message-id"))
    assert started.what == "started"
    assert started.entropy == ("<j1@bob.example>", "message-id")
    t = view(members, db, tag)
    mails = letters.letters(started, t, "bob@club.test", "Bob")
    assert [(x.to, x.template) for x in mails] == [("alice@club.test", "club_started"),
                                                   ("bob@club.test", "club_started")]
    alices, bobs = (render(x)[1] for x in mails)
    assert "your-entropy" not in alices
    assert """The players:
  Alice
  Bob

Your entropy for the draws, the Message-ID of this mail of yours:

  your-entropy: <j1@bob.example>

The referee could not know it when it fixed the seed; the game's first
mail lists it with the others'.

Each player has a mail""" in bobs
    public = letters.letters(started, t, "bob@club.test", "Bob", LIST)
    assert [(x.to, x.template, x.public) for x in public] == [
        ("bob@club.test", "club_entropy", False), (LIST, "club_started", True)]
    subject, body = render(public[0])
    assert subject == f"[{tag}] Your entropy for Goofspiel"
    assert "  your-entropy: <j1@bob.example>\n" in body
    assert "write \"entropy" not in body  # the game has started: too late for other words
    assert "your-entropy" not in render(public[1])[1]


def test_an_expired_table_tells_those_at_it(members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new spades with Bob"), members.now).table
    (done,) = club.expire(db, members.now + timedelta(days=15))
    mails = letters.letters(done, view(members, db, tag), "", "", LIST, table_days=14)
    assert [x.to for x in mails] == ["alice@club.test", "bob@club.test"]
    subject, body = render(mails[0])
    assert subject == f"[{tag}] The table for Spades is closed"
    assert f"The table for Spades [{tag}] waited 14 days without\nfilling" in body
    assert "  new spades\n" in body


def test_the_tables_listing_and_a_refusal_say_what_would_be_right(
        members: Club, db: Session) -> None:
    club = tables(members)
    tag = club.open(db, ALICE, new("new spades"), members.now).table
    letter = letters.listing("bob@club.test", club.listing(db), "tables", kinds())
    subject, body = render(letter)
    assert subject == "Re: tables"
    assert f"  Spades [{tag}], opened by Alice: Alice seated; 3 seats left\n" in body
    assert f'Write "join {tag}" to sit.' in body
    assert "the games\nare " in body and "spades" in body
    assert "No table is open now." in render(
        letters.listing("bob@club.test", [], "Re: tables", kinds()))[1]
    with pytest.raises(Unreadable) as bad:
        parse_line("new spades speed=warp")
    subject, body = render(letters.refusal("bob@club.test", "new spades speed=warp ",
                                           str(bad.value), "Re: new game"))
    assert subject == "Re: new game"
    assert body.startswith("Hello,\n\nThis is Club Referee, a robot that referees games "
                           "played by email.\nYour line\n\n  new spades speed=warp\n\n"
                           f"was not done: {bad.value}\n\nNothing changed.\n")
    with pytest.raises(Refused) as full:
        club.start(db, BOB, tag, members.now)
    assert f"was not done: Only Alice, who opened {tag}, may start it." in render(
        letters.refusal("bob@club.test", f"start {tag}", str(full.value), "start"))[1]
