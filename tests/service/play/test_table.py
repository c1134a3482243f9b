"""Playing by mail as people expect (issue 11): what is secret says so and
stays private, and the table by mail. On the embedded Maildir and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.games import get_game
from referee.service.outgoing.queue import SECRET_NOTE
from tests.test_referee import ALICE, BOB, CAROL, Club, body
from tests.test_spades_mail import kinds, section, sections

DAVE = "dave@club.test"
LIST = "players@club.test"
PEOPLE = [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>", f"Dave <{DAVE}>"]


@pytest.fixture
def listed(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, public_list=LIST)
    yield c
    c.referee.close()


def kind(msg: object) -> str:
    return str(msg["X-Referee-Mail"])  # type: ignore[index]


def spades_bidder(club: Club, tag: str) -> str:
    """The address of the player who owes the next Spades move."""
    spades = get_game("spades")
    (due,) = spades.pending(spades.load(club.referee.reading.stored_state(tag)))
    return [ALICE, BOB, CAROL, DAVE][due.seat - 1]


def test_a_hand_is_marked_secret_and_goes_to_its_holder_alone(listed: Club) -> None:
    listed.referee.operator.create_game("spades", PEOPLE, now=listed.now, seed="s")
    mails = listed.poll()
    hands = [x for x in mails if kind(x) == "hand"]
    assert len(hands) == 4
    for mail in hands:
        assert str(mail["Subject"]).endswith("(secret)")
        assert body(mail).startswith(SECRET_NOTE)
        assert len(mail["To"].addresses) == 1
        assert str(mail["Reply-To"]).startswith("Club Referee <referee+")
    (opening,) = [x for x in mails if kind(x) == "opening"]
    assert str(opening["To"]) == LIST
    # A post of the list names no Reply-To, so a reply to all stays public
    # (issue 21); List-Post says where the list takes posts (RFC 2369).
    assert opening["Reply-To"] is None and opening["List-Post"] == f"<mailto:{LIST}>"


def test_a_public_mail_answering_a_secret_one_counts_and_its_sender_is_told(
        listed: Club) -> None:
    tag = listed.referee.operator.create_game("spades", PEOPLE, now=listed.now, seed="s")
    mails = listed.poll()
    bidder = spades_bidder(listed, tag)
    (hand,) = [x for x in mails if kind(x) == "hand" and bidder in str(x["To"])]
    listed.send(bidder, f"bid 3\n\n> {body(hand)}", subject=f"Re: {hand['Subject']}", to=LIST,
                headers={"List-Id": f"<{LIST.replace('@', '.')}>",
                         "In-Reply-To": str(hand["Message-ID"])})
    mails = listed.poll()
    assert listed.referee.reading.stored_state(tag)["bids"].count(3) == 1  # the move counted
    # The bidder is told in their mail of the pass, with their bid: a part
    # of a mail marked secret as a whole.
    (told,) = [x for x in mails if "secret_shown" in kinds(x)]
    assert [a.addr_spec for a in told["To"].addresses] == [bidder]
    assert str(told["Subject"]).endswith(" (secret)") and body(told).startswith(SECRET_NOTE)
    assert "Your mail showed a secret mail (secret)" in [h for h, _ in sections(told)]
    text = section(told, "Your mail showed a secret mail")
    assert f"  {hand['Subject']}\n" in text
    assert "your last mail went to the list" in " ".join(text.split())
    assert all("secret_shown" not in kinds(x) or bidder in str(x["To"]) for x in mails)


def test_a_misspelt_command_gets_did_you_mean_and_the_help(listed: Club) -> None:
    tag = listed.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                     options={"prize_order": "5,1,6,4,3,2"}, now=listed.now)
    listed.poll()
    listed.send(ALICE, "Hello referee\nbdi 3\nbid 6 please", subject=f"[{tag}] bids")
    (reply,) = listed.poll()
    text = body(reply)
    assert "Hello referee" not in text  # talk is not echoed back
    assert "> bdi 3\n  REFUSED: Not a command: did you mean 'bid 3'?" in text
    # The move after a refused line is not applied (MI-19, for every game).
    assert "> bid 6 please\n  NOT APPLIED (bid 6): an earlier line was refused." in text
    assert "Round 1 of 6: the prize is 5." in text  # the help


def test_a_mode_that_is_no_mode_names_the_mode_a_list_game_defaults_to(listed: Club) -> None:
    tag = listed.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                     now=listed.now)
    listed.poll()
    listed.send(ALICE, "mail loud", subject=f"[{tag}] mail")
    (reply,) = listed.poll()
    # With a public list carrying the reports, a player is in mail turns.
    assert "REFUSED (mail): You get 'turns' now. Choose one:" in " ".join(body(reply).split())


def test_after_the_game_is_over_no_help_is_offered(listed: Club) -> None:
    tag = listed.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                     options={"prize_order": "5,1,6,4,3,2"}, now=listed.now)
    listed.poll()
    listed.referee.operator.cancel_game(tag, "test", now=listed.now)
    listed.poll()
    listed.send(ALICE, "bid 3", subject=f"[{tag}] late")
    (reply,) = listed.poll()
    assert "REFUSED (bid 3): The game was cancelled." in body(reply)
    assert "What you can write now" not in body(reply) and "The game is over." in body(reply)
    assert "Your pack" not in body(reply)


def test_pure_skill_cites_its_rule_numbers_and_one_point_is_singular(listed: Club) -> None:
    tag = listed.referee.operator.create_game(
        "pure-skill", [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>"],
        options={"prize_order": "A,2,3,4,5,6,7,8,9,10,J,Q,K"}, now=listed.now)
    (opening,) = listed.poll()
    assert body(opening).startswith("A Game of Pure Skill (rule text 000) begins.")
    assert "(1 points)" not in body(opening) and "A♠ (1 point)" in body(opening)
    listed.send(ALICE, "bid 3", subject=f"[{tag}] bid")
    listed.send(ALICE, "bid 4", subject=f"[{tag}] bid")
    listed.poll()
    listed.send(ALICE, "bid 4", subject=f"[{tag}] bid")
    (reply,) = listed.poll()
    assert "and a bid is final (rule 4e)." in body(reply)
    for ruling in ("PS-", "G2-", "SP-", "MI-", "TCG-"):
        assert ruling not in body(reply) + body(opening)
