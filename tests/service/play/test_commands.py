"""The command lines of one mail (``referee.service.play.commands``), in
the player's words: table talk is passed over, a line that looks like a
move but is none says why, a move for a turn that is over says what
happened meanwhile in the game's terms, and the answer's subject says what
the answer is (done, refused and why), not the subject the player wrote."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from referee.games.base import Action
from referee.service.play.commands import did_you_mean
from referee.service.play.session import GameSession
from tests.test_referee import ALICE, BOB, CAROL, T0, Club, body, new_goofspiel

DAVE = "dave@club.test"
FOUR = [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>", f"Dave <{DAVE}>"]
LIST = "players@club.test"
LIST_ID = {"List-Id": f"<{LIST.replace('@', '.')}>"}


def kind(msg: EmailMessage) -> str:
    return str(msg["X-Referee-Mail"])


def answer(club: Club, sender: str, text: str, subject: str = "move", **mail: object) -> str:
    club.send(sender, text, subject=subject, **mail)  # type: ignore[arg-type]
    (reply,) = [x for x in club.poll() if "transcript" in kind(x).split()]
    return body(reply)


def spades(club: Club) -> str:
    """Spades with seed "s321": Alice bids first, then Carol, Dave and Bob;
    teams Alice & Dave, Carol & Bob; Bob holds the A♠ but not the 2♣."""
    tag = club.referee.operator.create_game("spades", FOUR, now=club.now, seed="s321")
    club.poll()
    return tag


@pytest.fixture
def listed(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, public_list=LIST)
    yield c
    c.referee.close()


# -- table talk -------------------------------------------------------------------


def test_greetings_chat_and_sign_offs_are_not_echoed_back(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "Hi Bob,\nhere is my bid, good luck!\nbid 5\nThanks!\n"
                  "Best regards\nViele Grüße\nCordialement\nAlice", subject=f"[{tag}] r1")
    assert text.split("goofspiel-1.\n\n", 1)[1] == (
        "> bid 5\n  DONE (bid 5): Your bid of 5 for round 1 is sealed.\n\n"
        "-- \nClub Referee <referee@club.test>\n"
        'Write "help" to the referee for what you can do now.\n')


def test_a_mail_with_no_command_is_told_so_once_with_what_to_write(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, BOB, "Hello referee,\nwhen does this start?\nBob", subject=f"[{tag}] ?")
    assert text.split("goofspiel-1.\n\n", 1)[1].startswith(
        "I found no command in your mail. Talk and greetings are fine; I answer\n"
        "only the lines that are commands.\n\n"
        "What you can write now:\nRound 1 of 6: the prize is 5.\nYour pack: 1 2 3 4 5 6.\n")
    assert "IGNORED" not in text and text.count("I found no command") == 1


def test_table_talk_on_the_list_gets_no_answer(listed: Club) -> None:
    tag = listed.referee.operator.create_game("spades", FOUR, now=listed.now, seed="s321",
                                              options={"mail": "all"})
    listed.poll()
    listed.send(ALICE, "Good luck everyone!\nAlice", subject=f"[{tag}] hello", to=LIST,
                headers=LIST_ID)
    assert listed.poll() == []
    # A move in the same kind of mail is answered as ever.
    listed.send(ALICE, "Good luck everyone!\nbid 3\nAlice", subject=f"[{tag}] bid", to=LIST,
                headers=LIST_ID)
    (reply,) = [x for x in listed.poll() if "transcript" in kind(x).split()]
    assert "> bid 3\n  DONE (bid 3): Alice bids 3." in body(reply)
    assert "Good luck" not in body(reply)


def test_a_line_that_looks_like_a_move_but_is_none_says_why(club: Club) -> None:
    tag = spades(club)
    text = answer(club, BOB, "status of the game?\nconcede the trick\nplay nice, all\nbdi 3\n"
                  "Q♥\nhave a nice day", subject=f"[{tag}] x")
    assert ("> status of the game?\n  IGNORED: Not read: 'status' is written alone on its "
            "line.\n") in text
    assert ("> concede the trick\n  IGNORED: Not read: this looks like a move of Spades, but "
            "I could not read it, so nothing was done. How to write each move is below.\n"
            ) in text
    assert "> play nice, all\n  REFUSED: I cannot read 'nice, all' as a card." in text
    assert "> bdi 3\n  REFUSED: Not a command: did you mean 'bid 3'?\n" in text
    assert "> Q♥\n  REFUSED: Not a command: did you mean 'play Q♥'?\n" in text
    assert "have a nice day" not in text
    assert "What you can write now:\nIt is Alice's turn to bid." in text


def test_mi_19_the_moves_after_a_refused_line_are_not_applied_but_questions_are_answered(
        club: Club) -> None:
    """Ruling MI-19, for every game: a mail's lines stop at the first
    refused move; each later move is listed as not applied, and the
    questions after it (``status``, ``help``) are still answered."""
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "bid 9\nbid 5\nstatus\nbid 4\nhelp", subject=f"[{tag}] r1")
    assert "> bid 9\n  REFUSED" in text
    assert "> bid 5\n  NOT APPLIED (bid 5): an earlier line was refused.\n" in text
    assert f"> status\n  DONE (status): {tag}, Goofspiel" in text
    assert "> bid 4\n  NOT APPLIED (bid 4): an earlier line was refused.\n" in text
    assert "> help\n  DONE (help): Round 1 of 6: the prize is 5." in text
    assert "sealed" not in text
    assert club.referee.reading.stored_state(tag)["bids"] == {}  # no bid sealed


def test_mi_19_a_refused_card_in_spades_stops_the_card_after_it(club: Club) -> None:
    """A card not held is a misplay (SP-14), punished, and the line after
    it is not applied: the same player plays again in a new mail."""
    tag = spades(club)
    for sender in (ALICE, CAROL, DAVE, BOB):
        club.send(sender, "bid 3", subject=f"[{tag}] bid")
        club.poll()
    text = answer(club, ALICE, "play 2C\nplay 2C\nhand", subject=f"[{tag}] card")
    assert text.count("NOT APPLIED (play 2C): an earlier line was refused.") == 1
    assert "> hand\n  DONE (hand)" in text


def test_a_table_command_may_end_with_a_question_mark(club: Club) -> None:
    tag = spades(club)
    text = answer(club, BOB, "status?\nhelp?", subject=f"[{tag}] x")
    assert f"> status?\n  DONE (status): {tag}, Spades\n" in text
    assert "> help?\n  DONE (help): It is Alice's turn to bid.\n" in text


def test_reading_stops_after_five_lines_of_talk_saying_which_move_was_not_read(
        club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "Dear all,\nI was away.\nThe weather was fine.\nWe walked.\n"
                  "It rained once.\nbid 5\nbid 4\nAlice", subject=f"[{tag}] news")
    assert ("> bid 5\n  IGNORED: Not read: I stop reading a mail after 5 lines in a row that "
            "are no command, and this line came after them, with 1 more like it. Send it "
            "again at the top of a mail.\n") in text
    assert club.referee.reading.stored_state(tag)["bids"] == {}


# -- resign ---------------------------------------------------------------------


def test_resign_alone_has_no_empty_ignored_line_and_the_rest_after_it_is_named(
        club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "resign\nBye all", subject=f"[{tag}] bye")
    assert "IGNORED" not in text
    assert "DONE (resign): Alice has left the game" in text
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, BOB, "resign\nbid 3", subject=f"[{tag}] bye")
    assert "\n  IGNORED: You have left the game; the rest was ignored.\n" in text


# -- a move for a turn that is over --------------------------------------------------


def test_a_late_spades_bid_says_the_referee_bid_for_the_player_and_play_moved_on(
        club: Club) -> None:
    """The issue's case: Alice answers her hand mail after the deadline, when
    the referee has bid 2 for her and the bidding is over."""
    club.referee.operator.create_game("spades", FOUR, now=club.now, seed="s321")
    (hand,) = [x for x in club.poll() if "hand" in kind(x).split() and ALICE in str(x["To"])]
    club.poll(T0 + timedelta(days=3, minutes=1))  # the referee bids 2 for Alice
    for sender in (CAROL, DAVE, BOB):
        club.send(sender, "bid 3", subject="[spades-1] bid")
        club.poll()
    text = answer(club, ALICE, "bid 3", subject=f"RE: {hand['Subject']}",
                  headers={"In-Reply-To": str(hand["Message-ID"])})
    assert ("> bid 3\n  REFUSED (bid 3): The deadline passed at Thu 05 Mar 2026 12:00 UTC: the "
            "referee bid 2 for you, as rule 7 says. The bidding is over: it is trick 1 now, "
            "waiting for Carol's card to trick 1. This line was not applied.\n") in text
    assert "turn 1" not in text.lower() and "turn 2" not in text.lower()
    assert "What you can write now:\nIt is Carol's turn to play a card." in text


def test_a_spades_card_after_the_bid_that_closed_the_bidding_waits_for_a_new_mail(
        club: Club) -> None:
    tag = spades(club)
    for sender in (ALICE, CAROL, DAVE):
        club.send(sender, "bid 3", subject=f"[{tag}] bid")
        club.poll()
    text = answer(club, BOB, "bid 4\nplay AS\nplay 2C", subject=f"[{tag}] bid")
    # Bob's bid closed the bidding: his card waits for a mail written
    # after he has seen the bids. A card he holds may be sent again...
    assert ("> play AS\n  REFUSED (play AS): The bidding is over: it is trick 1 now, waiting "
            "for your card to trick 1. This line was not applied. If you still want it now, "
            "send it again in a new mail.\n") in text
    # The moves after a refused one are not applied (MI-19, for every game).
    assert "> play 2C\n  NOT APPLIED (play 2C): an earlier line was refused.\n" in text
    assert club.referee.reading.stored_state(tag)["scores"] == [0, 0]


def test_a_stale_spades_card_not_held_is_not_suggested_again(club: Club) -> None:
    tag = spades(club)
    for sender in (ALICE, CAROL, DAVE):
        club.send(sender, "bid 3", subject=f"[{tag}] bid")
        club.poll()
    text = answer(club, BOB, "bid 4\nplay 2C", subject=f"[{tag}] bid")
    # A card he does not hold (a misplay, rule 6) is not suggested again.
    assert ("> play 2C\n  REFUSED (play 2C): The bidding is over: it is trick 1 now, waiting "
            "for your card to trick 1. This line was not applied.\n") in text
    assert club.referee.reading.stored_state(tag)["scores"] == [0, 0]


def test_a_late_goofspiel_bid_names_the_round_and_how_to_bid_in_this_one(club: Club) -> None:
    tag = new_goofspiel(club)
    (opening, _) = club.poll()
    club.send(BOB, "bid 3", subject=f"[{tag}] bid")
    club.poll()
    club.poll(T0 + timedelta(days=3, minutes=1))  # the referee bids for Alice
    text = answer(club, ALICE, "bid 4", subject=f"AW: Re: {opening['Subject']}",
                  headers={"In-Reply-To": str(opening["Message-ID"])})
    assert " ".join(text.split()).count(
        "REFUSED (bid 4): The deadline passed at Thu 05 Mar 2026 12:00 UTC: the referee bid 3 "
        "for you, a card drawn at random from your pack, by the house rule for silent players. "
        "Round 1 is over: it is round 2 now, waiting for you and Bob: a bid for round 2 each. "
        "This line was not applied. If you still want it for round 2, send it again, answering "
        "the latest mail or writing 'bid 4 round 2'.") == 1


def test_a_refused_bid_of_a_player_on_move_again_after_a_deadline_gets_the_rules_reason(
        club: Club) -> None:
    """Once the seat owes a move again, a move the rules refuse gets their
    own reason (what would be right), not the story of the deadline."""
    tag = new_goofspiel(club)
    club.poll()
    club.send(BOB, "bid 3", subject=f"[{tag}] bid")
    club.poll()
    club.poll(T0 + timedelta(days=3, minutes=1))  # the referee bids Alice's 3 for her
    text = " ".join(answer(club, ALICE, "bid 3", subject=f"[{tag}] bid").split())
    assert "REFUSED (bid 3)" in text and "The deadline passed" not in text, text


def test_a_bid_for_a_round_not_begun_says_so(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "bid 5 round 2", subject=f"[{tag}] early")
    assert ("REFUSED (bid 5): Round 2 has not begun (it is round 1 now), so this line was not "
            "applied. Send it again once it has begun.") in " ".join(text.split())


# -- the answer's subject ------------------------------------------------------------


@pytest.mark.parametrize("subject", [
    "RE: [goofspiel-1] my bid", "AW: Re: [goofspiel-1] my bid", "Re: Fwd: [goofspiel-1] my bid",
    "Réf. : [goofspiel-1] my bid", "SV: [goofspiel-1] my bid", "Antw: [goofspiel-1] my bid",
    "R: [goofspiel-1] my bid", "Re[2]: [goofspiel-1] my bid", "re:RE: [goofspiel-1] my bid",
    "TR : WG: [goofspiel-1] my bid", "[goofspiel-1] my bid", "RE: AW:",
])
def test_the_answers_subject_says_what_the_answer_is_whatever_the_players_subject(
        club: Club, subject: str) -> None:
    new_goofspiel(club)
    club.poll()
    mid = club.send(ALICE, "bid 5", subject=subject)
    (reply,) = club.poll()
    assert reply["Subject"] == "[goofspiel-1] Done: bid 5 (secret)"
    assert reply["In-Reply-To"] == mid and mid in str(reply["References"])


def test_an_answer_refusing_a_move_says_why_in_its_subject_and_what_is_asked(
        club: Club) -> None:
    """The issue's case: not "Re: [spades-2] Spades: your bid (secret)" over
    "It is Bob Baker's turn to bid, not yours."; and an answer that leaves
    its player on move says so in its subject, as a mail asking them would."""
    tag = spades(club)
    club.send(CAROL, "bid 3", subject=f"[{tag}] Spades: your bid (secret)")
    (reply,) = [x for x in club.poll() if "transcript" in kind(x).split()]
    assert reply["Subject"] == (
        f"[{tag}] Refused (bid 3): It is Alice's turn to bid, not yours (secret)")
    club.send(ALICE, "bid 1", subject=f"[{tag}] Spades: your bid (secret)")
    (reply,) = [x for x in club.poll() if "transcript" in kind(x).split()]
    assert str(reply["Subject"]).startswith(f"[{tag}] Refused (bid 1): ")
    assert str(reply["Subject"]).endswith("; your bid (secret)")
    club.send(ALICE, "hello", subject=f"[{tag}] hi")
    (reply,) = [x for x in club.poll() if "transcript" in kind(x).split()]
    assert reply["Subject"] == f"[{tag}] No command found in your mail; your bid (secret)"


class _Zapping:
    """A game whose one command is ``zap N``."""

    verbs = frozenset({"zap"})
    spelt_verbs = ("zap",)

    def parse(self, line: str) -> Action | None:
        return Action("zap", (line.split()[1],)) if line.startswith("zap ") else None


def test_did_you_mean_spells_against_the_game_s_own_verbs() -> None:
    gs = cast(GameSession, SimpleNamespace(engine=_Zapping()))
    assert did_you_mean(gs, "zpa 3") == "zap 3"
    assert did_you_mean(gs, "bdi 3") is None  # another game's verb: not this one's


# -- a move the referee made at the deadline ----------------------------------------------


def test_a_late_spades_bid_answering_the_deadline_mail_says_what_was_done_not_whose_turn(
        club: Club) -> None:
    """Rule 7: past Alice's deadline the referee bid 2 for her and told her so;
    her bid in answer to that mail is refused with what was done for her,
    not with "It is Carol's turn to bid, not yours"."""
    tag = spades(club)
    told = [x for x in club.poll(T0 + timedelta(days=3, minutes=1)) if ALICE in str(x["To"])]
    (mine,) = [x for x in told if "deadline_yours" in kind(x).split()]
    assert ("No bid came from you by the deadline, Thu 05 Mar 2026 12:00 UTC: the\n"
            "referee bid 2 for you, as rule 7 says.") in body(mine)
    text = answer(club, ALICE, "bid 5", subject=f"Re: {mine['Subject']}",
                  headers={"In-Reply-To": str(mine["Message-ID"])})
    assert ("> bid 5\n  REFUSED (bid 5): The deadline passed at Thu 05 Mar 2026 12:00 UTC: the "
            "referee bid 2 for you, as rule 7 says. Now waiting for Carol's bid for round 1. "
            "This line was not applied.\n") in text
    assert "not yours" not in text
    assert club.referee.reading.stored_state(tag)["bids"][0] == 2


def test_a_late_miser_move_is_answered_with_the_pass_the_referee_made(club: Club) -> None:
    """Rule text 004 has no deadlines: the house rule (MI-15) passes for a
    silent turn player, and her late move is answered with it."""
    tag = club.referee.operator.create_game(
        "miser", [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>"], now=club.now,
        seed="late")
    club.poll()
    state = club.referee.reading.stored_state(tag)
    silent = state["names"][state["turn"]]
    address = {"Alice": ALICE, "Bob": BOB, "Carol": CAROL}[silent]
    club.poll(T0 + timedelta(days=3, minutes=1))
    text = " ".join(answer(club, address, "pass", subject=f"[{tag}] move").split())
    after = club.referee.reading.stored_state(tag)
    now = after["names"][after["turn"]]
    assert ("REFUSED (pass): The deadline passed at Thu 05 Mar 2026 12:00 UTC: the referee "
            f"passed for you, by the house rule for silent players. Now waiting for {now}'s "
            "turn (pass, contract, attack or bid). This line was not applied.") in text
