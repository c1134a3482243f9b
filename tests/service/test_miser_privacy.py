"""Miser's private contract talks stay private in the views for everyone
(rule text 004: "No player may show her hand"; MI-14: contract talks may be
private): the game page, ``referee status`` and its JSON never show that a
partner owes an answer to an offer made in private."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from referee.cli import format_status
from referee.store import models as m
from tests.test_referee import ALICE, BOB, CAROL, REF, Club, body
from tests.test_spades_mail import section

TURN = "a turn (pass, contract, attack or bid)"
ANSWER = "an answer to a contract offer"
LIST = "players@club.test"


def new_miser(club: Club) -> str:
    """Alice, Bob and Carol; the draw of seed "s7" gives Bob the first turn."""
    tag = club.referee.operator.create_game(
        "miser", [f"Alice <{ALICE}>", f"Bob <{BOB}>", f"Carol <{CAROL}>"],
        now=club.now, seed="s7")
    club.poll()
    assert club.referee.reading.status(tag)[0]["to_move"] == ["Bob"]
    return tag


def page(root: Path, tag: str) -> str:
    return (root / "pages" / f"{tag}.html").read_text()


def test_mi_14_a_private_offer_shows_on_no_page_and_in_no_status(tmp_path: Path) -> None:
    club = Club(tmp_path, web={"path": "pages"})
    tag = new_miser(club)
    (before,) = club.referee.reading.status(tag)[0]["deadlines"]
    # Bob mails his offer to Carol with the referee on Cc: private.
    club.send(BOB, "contract with carol against alice 1 1", to=CAROL, cc=REF,
              subject=f"[{tag}] offer")
    club.poll(club.now + timedelta(hours=1))
    status = club.referee.reading.status(tag)[0]
    # The public sees Bob's turn still open, as the summary says, by the
    # offer's deadline; never Carol, never the offer.
    (shown,) = status["deadlines"]
    assert (shown["seat"], shown["name"], shown["what"]) == (2, "Bob", TURN)
    assert shown["due_at"] > before["due_at"]
    assert status["to_move"] == ["Bob"] and status["phase"] == "turn"
    for text in (json.dumps(status), format_status([status]), page(tmp_path, tag)):
        assert "offer" not in text and "waiting for Carol" not in text
    assert f"Waiting for <strong>Bob</strong>: {TURN}, by" in page(tmp_path, tag)
    assert "Carol</strong>" not in page(tmp_path, tag)
    # Carol still owes the answer, with its own deadline.
    with club.referee.sessions() as db:
        rows = db.execute(select(m.Deadline.seat, m.Deadline.what)).all()
    assert [tuple(r) for r in rows] == [(3, ANSWER)]
    club.referee.close()


def test_a_public_offer_shows_the_partners_deadline(tmp_path: Path) -> None:
    club = Club(tmp_path, web={"path": "pages"}, public_list=LIST)
    tag = new_miser(club)
    club.send(BOB, "contract with carol against alice 1 1", subject=f"[{tag}] offer",
              to=LIST, headers={"List-Id": "<players.club.test>"})
    club.poll(club.now + timedelta(hours=1))
    status = club.referee.reading.status(tag)[0]
    assert [(d["name"], d["what"]) for d in status["deadlines"]] == [("Carol", ANSWER)]
    assert f"Waiting for <strong>Carol</strong>: {ANSWER}, by" in page(tmp_path, tag)
    club.referee.close()


def _private_offer(club: Club) -> str:
    tag = new_miser(club)
    club.send(BOB, "contract with carol against alice 1 1", to=CAROL, cc=REF,
              subject=f"[{tag}] offer")
    club.poll(club.now + timedelta(hours=1))
    return tag


def test_mi_14_a_private_offer_shows_in_no_answer_to_status_or_games_by_mail(
        tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = _private_offer(club)
    club.send(ALICE, "status\ngames", subject=f"[{tag}] table")
    (reply,) = club.poll(club.now + timedelta(hours=2))
    text = body(reply)
    assert f"Waiting for Bob's {TURN.removeprefix('a ')}, by" in text
    assert f"[{tag}] Miser: waiting for Bob" in text
    assert "Carol:" not in text and ANSWER not in text and "waiting for Carol" not in text
    assert "Waiting for Carol" not in text and "offer" not in text
    club.referee.close()


def test_mi_14_a_private_offer_shows_in_no_mail_that_deadlines_are_extended(
        tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = _private_offer(club)
    club.send(ALICE, "away 1d", subject=f"[{tag}] away")
    # One mail a player, Alice's with the answer to her mail: the notice in
    # each, and in none of them (Alice is no party) the private offer.
    extended = [x for x in club.poll(club.now + timedelta(hours=2))
                if "extended" in str(x["X-Referee-Mail"]).split()]
    assert len(extended) == 3
    for mail in extended:
        notice = section(mail, "Deadlines extended by 1 day")
        assert "Bob" in notice and "a turn (pass, contract, attack or bid)" in notice
        assert "Carol " not in body(mail) and ANSWER not in body(mail)
    club.referee.close()


def test_mi_15_a_private_offer_left_unanswered_lapses_told_to_those_who_saw_it_alone(
        tmp_path: Path) -> None:
    """Carol does not answer Bob's private offer: the referee lets it lapse
    and says so to Bob and Carol; Alice, no party, hears of no offer, and
    the game's page shows none."""
    club = Club(tmp_path, web={"path": "pages"})
    tag = _private_offer(club)
    mails = club.poll(club.now + timedelta(days=3, hours=2))
    to = {addr: [x for x in mails if addr in str(x["To"])] for addr in (ALICE, BOB, CAROL)}
    (bobs,) = to[BOB]
    assert " ".join(section(bobs, "No answer to Bob's contract offer from Carol by the deadline")
                    .split()) == (
        "No answer to Bob's contract offer came from Carol by the deadline: the referee let "
        "the offer lapse, by the house rule for silent players.")
    (carols,) = to[CAROL]
    assert "the referee let the offer lapse, by the house rule for silent players." in " ".join(
        section(carols, "The deadline passed: the referee moved for you").split())
    assert "came from Carol" not in body(carols)  # her own words, not the table's
    assert not [x for x in to[ALICE] if "offer" in body(x) or "deadline" in
                str(x["X-Referee-Mail"])]
    (history,) = club.referee.reading.public_histories([tag]).values()
    assert not [e for e in history if "offer" in e["text"] or e["kind"].startswith("deadline")]
    club.referee.close()
