"""The table by mail (issue 11): ``status``, ``history``, ``resend``,
``away 3d`` and ``games`` work by mail in every game, answer the sender
alone, and show nothing secret to anyone but its holder."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest
from sqlalchemy import select

from referee.games import get_game
from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from tests.test_referee import ALICE, BOB, CAROL, Club, body, new_goofspiel
from tests.test_spades_mail import section

DAVE = "dave@club.test"
FOUR = [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>", f"Dave <{DAVE}>"]


def kind(msg: EmailMessage) -> str:
    return str(msg["X-Referee-Mail"])


def carries(msg: EmailMessage, template: str) -> bool:
    """The mail is ``template``'s, or carries it among others (``mail turns``)."""
    return template in kind(msg).split()


def to_of(msg: EmailMessage) -> list[str]:
    return [a.addr_spec for a in msg["To"].addresses]


def new_game(club: Club, game: str) -> str:
    """A game of ``game`` whose seed draws what STATUS and HELP show: the
    first prize 10 of Pure Skill, the seating Alice, Carol, Dave and Bob of
    Spades, Bob first in Miser, and Bob's five cards in the tournament."""
    if game == "goofspiel":
        tag = new_goofspiel(club)
    elif game == "pure-skill":
        tag = club.referee.operator.create_game("pure-skill", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                       bots=1, now=club.now, seed="s1")
    elif game == "spades":
        tag = club.referee.operator.create_game("spades", FOUR, now=club.now, seed="s321")
    elif game == "miser":
        tag = club.referee.operator.create_game("miser", FOUR[:3], now=club.now, seed="s7")
    else:
        tag = club.referee.operator.create_game("loatcg", FOUR[:3], now=club.now, seed="s124")
    club.poll()
    return tag


def ask(club: Club, sender: str, tag: str, text: str) -> tuple[str, list[EmailMessage]]:
    """The text of the mail that answers ``sender`` (with what else the
    mail caused for them), and every mail of the pass."""
    club.send(sender, text, subject=f"[{tag}] table")
    mails = club.poll()
    (reply,) = [x for x in mails if carries(x, "transcript")]
    assert to_of(reply) == [sender]
    return body(reply), mails


def due_dates(club: Club) -> list[datetime]:
    with club.referee.sessions() as db:
        return list(db.scalars(select(m.Deadline.due_at).order_by(m.Deadline.id)))


GAMES = ["goofspiel", "pure-skill", "spades", "miser", "loatcg"]


#: What each game's ``status`` says first, in its own words, at the start
#: of the games ``new_game`` makes, and what it waits for.
STATUS = {
    "goofspiel": ("Round 1 of 6: the prize is 5.\n    Points: Alice 0, Bob 0.",
                  "Waiting for you and Bob: a bid for round 1 each, by Thu 05 Mar 2026 12:00 UTC."),
    "pure-skill": ("Round 1 of 13: the prize is 10♠ (10 points).\n"
                   "    Points: Alice 0, Bob 0, Bot 3 (bot) 0.\n"
                   "    Sealed bids are in from Bot 3.",
                   "Waiting for you and Bob: a bid for round 1 each, by Thu 05 Mar 2026 "
                   "12:00 UTC."),
    "spades": ("Round 1, in a game to 500.\n    Scores: team 1 (Alice & Dave) 0 points, 0 bags; "
               "team 2 (Carol & Bob) 0 points, 0 bags.\n    Bidding: Alice bids first.",
               "Waiting for your bid for round 1, by Thu 05 Mar 2026 12:00 UTC."),
    "miser": ("It is Bob's turn.\n"
              "    Pennies: Alice 20, Bob 20, Carol 20; the centre holds 0 pennies.\n"
              "    Cards in hand: Alice 17, Bob 17, Carol 17.",
              "Waiting for Bob's turn (pass, contract, attack or bid), by Thu 05 Mar 2026 "
              "12:00 UTC."),
    "loatcg": ("Round 1 of 8; Members: Alice, Bob and Carol.\n"
               "    No Round Report yet: Hand Scores are published in the Round Reports.",
               "Next: Round Report 1, by Mon 09 Mar 2026 12:00 UTC."),
}
#: What each game's help tells Bob first, at the start.
HELP = {
    "goofspiel": "Round 1 of 6: the prize is 5.\n  Your pack: 1 2 3 4 5 6.",
    "pure-skill": "Round 1 of 13: the prize is 10♠ (10 points).\n"
                  "  Your pack: A 2 3 4 5 6 7 8 9 10 J Q K.",
    "spades": "It is Alice's turn to bid.",
    "miser": "It is your turn. Write one of:\n    pass",
    "loatcg": "You hold 2 wool, 1 lumber, 1 apple, 1 diamond.",
}


@pytest.mark.parametrize("game", GAMES)
def test_status_reads_like_a_page_of_the_game(club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, mails = ask(club, ALICE, tag, "status")
    title = get_game(game).title
    page, waits = STATUS[game]
    assert f"> status\n  DONE (status): {tag}, {title}\n    {page}\n    {waits}\n" in text
    assert "\n    Lately:\n      " in text
    assert "\n    What you can write now:\n      " in text
    assert "Over:" not in text and "False" not in text  # no key dump
    assert len(mails) == 1  # the answer alone
    # The public facts, never a card of a hand, nor a score not yet published.
    if game == "spades":
        state = club.referee.reading.stored_state(tag)
        assert not any(f" {c} " in text for hand in state["hands"] for c in hand)
    if game == "loatcg":
        assert "Hand Score is" not in text


@pytest.mark.parametrize("game", GAMES)
def test_history_shows_the_latest_public_events_the_newest_last(club: Club, game: str) -> None:
    tag = new_game(club, game)
    with club.referee.sessions() as db:
        events = list(db.scalars(select(m.Event.text).where(m.Event.public)
                                 .order_by(m.Event.id)))
    text, _ = ask(club, BOB, tag, "history")
    assert ("DONE (history): The public moves and reports so far, the newest last:\n"
            + "".join(f"    {e}\n" for e in events)) in text


@pytest.mark.parametrize("game", GAMES)
def test_help_says_what_the_player_can_write_and_the_tables_commands(
        club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, _ = ask(club, BOB, tag, "help")
    assert f"> help\n  DONE (help): {HELP[game]}" in text
    assert "Help is below" not in text
    assert ("\n  At any time you may also write:\n"
            "    status      the game as it stands: scores, whose move, by when\n"
            "    history     the latest public moves and reports\n") in text
    # Said once: the answer does not end with the help again.
    assert text.count(HELP[game].split("\n")[0]) == 1


def test_history_of_a_long_game_shows_the_latest_and_how_many_came_before(club: Club) -> None:
    tag = new_game(club, "spades")
    for sender, bid in ((ALICE, 3), (CAROL, 3), (DAVE, 4), (BOB, 4)):
        club.send(sender, f"bid {bid}", subject=f"[{tag}] bid")
        club.poll()
    for _ in range(40):  # cards, as the referee plays them at each deadline
        club.poll(club.now + timedelta(days=3, minutes=1))
    with club.referee.sessions() as db:
        events = list(db.scalars(select(m.Event.text).where(m.Event.public)
                                 .order_by(m.Event.id)))
    text, _ = ask(club, BOB, tag, "history")
    head = re.search(r"DONE \(history\): The latest (\d+) public moves and reports, the newest "
                     r"last \((\d+) earlier ones not shown\):\n", text)
    assert head, text
    shown, earlier = int(head.group(1)), int(head.group(2))
    assert shown + earlier == len(events) and earlier > 0
    assert "".join(f"    {e}\n" for e in events[-shown:]) in text


def test_history_never_shows_a_sealed_bid(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    club.send(ALICE, "bid 4", subject=f"[{tag}] r1")
    club.poll()
    text, _ = ask(club, BOB, tag, "history")
    assert " 4" not in text.split("DONE (history):")[1].split("--")[0].replace("1 of", "")
    club.send(BOB, "bid 2", subject=f"[{tag}] r1")
    club.poll()
    text, _ = ask(club, BOB, tag, "history")
    assert "Alice" in text and "4" in text  # revealed with the round's report


@pytest.mark.parametrize("game", GAMES)
def test_resend_sends_the_last_report_and_the_hand_to_its_holder_alone(
        club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, mails = ask(club, ALICE, tag, "resend")
    assert "DONE (resend): The last report and what you hold are below." in text
    # One mail, to Alice alone and marked secret: the answer, the report
    # and what she holds, and her hand where the game has a hand mail.
    (resent,) = mails
    assert carries(resent, "resent") and to_of(resent) == [ALICE]
    assert str(resent["Subject"]).endswith("(secret)")
    assert body(resent).startswith(SECRET_NOTE)
    again = section(resent, "The last report again, and what you hold")
    assert "The last report of" in again
    assert carries(resent, "hand") == (game in ("spades", "miser", "loatcg"))
    if game == "goofspiel":  # after the report, which keeps its own signature line
        assert ("\nFor you alone:\n\nRound 1 of 6: the prize is 5.\n"
                "Your pack: 1 2 3 4 5 6.\n") in body(resent)


@pytest.mark.parametrize("mode", ["all", "turns"])
def test_resend_sends_the_latest_report_even_one_that_came_with_an_answer(
        club: Club, mode: str) -> None:
    """Bob's bid ends round 1: its report reaches him in the answer to his
    mail, and that report, not the opening, is the one he gets again."""
    tag = new_goofspiel(club, mail=mode)
    club.poll()
    club.send(ALICE, "bid 3", subject=f"[{tag}] r1")
    club.poll()
    club.send(BOB, "bid 2", subject=f"[{tag}] r1")
    (answer,) = [x for x in club.poll() if to_of(x) == [BOB]]
    assert carries(answer, "transcript") and carries(answer, "round_report")
    _, (resent,) = ask(club, BOB, tag, "resend")
    again = body(resent).split("The last report of", 1)[1].split("For you alone:")[0]
    assert "ROUND 1: THE PRIZE WAS 5" in again and "Alice wins the round" in again, again
    assert SECRET_NOTE not in again  # the resent mail says it once, at its top


@pytest.mark.parametrize("game", GAMES)
def test_games_lists_the_senders_games_with_whose_move(club: Club, game: str) -> None:
    other = club.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Carol <{CAROL}>"],
                                     options={"prize_order": "1,2,3,4,5,6"}, now=club.now)
    tag = new_game(club, game)
    text, _ = ask(club, ALICE, tag, "games")
    assert "DONE (games): Your games:" in text
    assert f"[{other}] goofspiel: waiting for Alice, Carol" in text
    assert f"[{tag}]" in text


@pytest.mark.parametrize("game", GAMES)
def test_away_extends_the_deadlines_and_the_table_is_told(club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, mails = ask(club, ALICE, tag, "away 3d")
    assert ("DONE (away): The open deadlines are extended by 3 days; the table is told."
            in text), text
    # One mail a player: Alice's answer carries the notice, the others get
    # it as a mail of its own, with its own subject, whatever their mode.
    told = [x for x in mails if carries(x, "extended")]
    assert len(told) == len(mails) and [carries(x, "transcript") for x in told].count(True) == 1
    assert {a for x in told for a in to_of(x)} >= {ALICE, BOB}  # the whole table
    for mail in told:
        part = section(mail, "Deadlines extended by 3 days")
        assert "Alice is away and asked for more time" in " ".join(part.split())
        if not carries(mail, "transcript"):
            assert mail["Subject"] == f"[{tag}] Deadlines extended by 3 days"
    text, _ = ask(club, BOB, tag, "history")
    assert "Alice is away: the deadlines are extended by 3 days." in text


def test_away_moves_every_open_deadline_by_the_time_asked(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    before = due_dates(club)
    ask(club, BOB, tag, "away 2d")
    after = due_dates(club)
    assert [d - b for d, b in zip(after, before, strict=True)] == [timedelta(days=2)] * 2


def test_away_past_the_operators_limit_is_refused_saying_the_limit(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    before = due_dates(club)
    text, mails = ask(club, ALICE, tag, "away 8d")
    assert ("REFUSED (away): The referee allows at most 1 week away in a game. "
            "Nothing was extended.") in text
    assert [kind(x) for x in mails] == ["transcript"]
    assert due_dates(club) == before
    # All of one player's asks in a game count together.
    ask(club, ALICE, tag, "away 5d")
    text, mails = ask(club, ALICE, tag, "away 3d")
    assert "at most 1 week away in a game; you have 2 days left." in text
    assert [kind(x) for x in mails] == ["transcript"]


def test_the_limit_is_the_operators(club: Club) -> None:
    club.config.deadlines.away_max = club.config.deadlines.away_max / 7  # one day
    tag = new_game(club, "goofspiel")
    text, _ = ask(club, ALICE, tag, "away 2d")
    assert "at most 1 day away in a game" in text


def test_away_needs_a_duration(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    text, _ = ask(club, ALICE, tag, "away")
    assert "REFUSED (away): Say for how long, like 'away 3d' or 'away 12h'." in text


def test_help_to_a_player_not_to_move_says_whose_move_it_is_and_by_when(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    club.send(ALICE, "bid 3", subject=f"[{tag}] bid")
    club.poll()
    text, _ = ask(club, ALICE, tag, "help")
    assert ("> help\n  DONE (help): Round 1 of 6: the prize is 5.\n"
            "  Your pack: 1 2 3 4 5 6.\n"
            "  You have bid 3 this round; bids are final. Wait for the round report.\n"
            "  Waiting for Bob's bid for round 1, by Thu 05 Mar 2026 12:00 UTC.\n") in text
    text, _ = ask(club, ALICE, tag, "status")
    assert "    Sealed bids are in from Alice.\n" in text
    assert "    Waiting for Bob's bid for round 1, by Thu 05 Mar 2026 12:00 UTC.\n" in text


def test_status_between_rounds_shows_the_last_round_and_the_next_prize(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    club.send(ALICE, "bid 3", subject=f"[{tag}] bid")
    club.send(BOB, "bid 2", subject=f"[{tag}] bid")
    club.poll()
    text, _ = ask(club, BOB, tag, "status")
    assert ("    Round 2 of 6: the prize is 1.\n    Points: Alice 10, Bob 0.\n"
            "    Waiting for you and Alice: a bid for round 2 each, by Thu 05 Mar 2026 "
            "12:00 UTC.\n    Lately:\n      Round 1: the prize is 5.\n"
            "      Round 1, prize 5: Alice 3, Bob 2; Alice takes 2 3 5 (10).\n"
            "      Round 2: the prize is 1.\n") in text


def test_status_and_help_once_the_game_is_over(club: Club) -> None:
    tag = new_game(club, "goofspiel")
    for card in (6, 5, 4, 3, 2):
        club.send(ALICE, f"bid {card}", subject=f"[{tag}] bid")
        club.send(BOB, f"bid {card - 1 if card > 1 else card}", subject=f"[{tag}] bid")
        club.poll()
    assert club.referee.reading.stored_state(tag)["over"]
    text, _ = ask(club, BOB, tag, "status\nhelp")
    assert (f"DONE (status): {tag}, Goofspiel\n"
            "    The game is over after 6 rounds: Alice wins.\n"
            "    Final points: Alice 54, Bob 9.\n    Lately:\n") in text
    assert "What you can write now" not in text and "Waiting for" not in text
    assert ("> help\n  DONE (help): The game is over; the final report has the result.\n"
            "  You may still write: status, history, games.\n") in text


def test_status_and_help_of_a_cancelled_game(club: Club) -> None:
    tag = new_game(club, "spades")
    club.referee.operator.cancel_game(tag, "the club closed", now=club.now)
    club.poll()
    text, _ = ask(club, CAROL, tag, "status\nhelp\nhistory")
    assert (f"DONE (status): {tag}, Spades\n"
            "    The game was cancelled by the person who runs this referee, with no winner. "
            "It stood so:\n    Round 1, in a game to 500.\n") in text
    assert "Waiting for" not in text and "What you can write now" not in text
    assert ("> help\n  DONE (help): The game was cancelled; nothing more can be played.\n"
            "  You may still write: status, history, games.\n") in text
    assert "      The game was cancelled. the club closed\n" in text  # status's Lately
    assert "    The game was cancelled. the club closed\n" in text  # history
