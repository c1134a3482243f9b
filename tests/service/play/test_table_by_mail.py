"""The table by mail (issue 11): ``status``, ``history``, ``resend``,
``away 3d`` and ``games`` work by mail in every game, answer the sender
alone, and show nothing secret to anyone but its holder."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest
from sqlalchemy import select

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
    if game == "goofspiel":
        tag = new_goofspiel(club)
    elif game == "pure-skill":
        tag = club.referee.operator.create_game("pure-skill", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                       bots=1, now=club.now, seed="x")
    elif game == "spades":
        tag = club.referee.operator.create_game("spades", FOUR, now=club.now, seed="s")
    elif game == "miser":
        tag = club.referee.operator.create_game("miser", FOUR[:3], now=club.now, seed="t")
    else:
        tag = club.referee.operator.create_game("loatcg", FOUR[:3], now=club.now, seed="t")
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


@pytest.mark.parametrize("game", GAMES)
def test_status_shows_the_public_state(club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, mails = ask(club, ALICE, tag, "status")
    assert f"DONE (status): {tag} (" in text
    assert "is active." in text
    assert len(mails) == 1  # the answer alone
    if game == "goofspiel":
        assert "Round: 1" in text and "Prize: 5" in text
        assert "Waiting for Alice to" in text and "Waiting for Bob to" in text
    if game == "spades":
        # The public facts, never a card of a hand.
        state = club.referee.reading.stored_state(tag)
        assert not any(f" {c} " in text for hand in state["hands"] for c in hand)


@pytest.mark.parametrize("game", GAMES)
def test_history_shows_the_public_moves_so_far(club: Club, game: str) -> None:
    tag = new_game(club, game)
    text, _ = ask(club, BOB, tag, "history")
    assert "DONE (history):" in text
    assert "The public moves and reports so far:" in text or "Nothing public" in text


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
    assert "DONE (resend): The last report and what you hold follow in a secret mail." in text
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
