"""A player's lines about the moves the referee makes for them (issue 37,
``referee.service.play.orders``): ``autoplay on``/``off``, a standing
order kept in secret, ``orders``, ``cancel orders``; and the game options
that turn them off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.service.errors import RefereeError
from referee.store import models as m
from tests.service.play.test_commands import answer
from tests.test_referee import ALICE, BOB, Club, body, new_goofspiel
from tests.test_spades_mail import ADDRESS, DEAL, SCRIPT, SEATING, MailClub, new_table


def seat_row(club: Club, position: int) -> m.Seat:
    with club.referee.sessions() as db:
        seat = db.scalar(select(m.Seat).where(m.Seat.position == position))
        assert seat is not None
        db.expunge(seat)
        return seat


def test_autoplay_off_and_on_are_kept_for_the_seat(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "autoplay off", subject=f"[{tag}] settings")
    assert "Autoplay is off" in text
    assert seat_row(club, 1).autoplay is False
    assert "Autoplay is on" in answer(club, ALICE, "autoplay on", subject=f"[{tag}] settings")
    assert seat_row(club, 1).autoplay is True
    assert "not 'autoplay sometimes'" in answer(club, ALICE, "autoplay sometimes",
                                                subject=f"[{tag}] settings")


def test_a_standing_bid_is_kept_listed_and_cancelled(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "bid 6 if prize 6", subject=f"[{tag}] orders")
    assert "Kept, secret until it applies: bid 6 if the prize is 6." in text
    assert seat_row(club, 1).orders == [
        {"kind": "if_prize", "bid": [6], "prize": 6, "text": "bid 6 if the prize is 6"}]
    listed = answer(club, ALICE, "orders", subject=f"[{tag}] orders")
    assert "Your standing orders, in the order they are followed (1):" in listed
    assert "  bid 6 if the prize is 6" in listed
    assert "1 standing order was dropped" not in listed
    assert "Your 1 standing order was dropped." in answer(club, ALICE, "cancel orders",
                                                          subject=f"[{tag}] orders")
    assert seat_row(club, 1).orders is None


def test_an_order_that_could_never_be_followed_is_refused_not_kept(club: Club) -> None:
    """A standing bid of a card not in the pack, or for a prize already
    played, was kept ("DONE: Kept") and dropped in the same answer: it is
    refused, with why, and the orders kept are the good ones alone."""
    tag = new_goofspiel(club)  # 6 cards a pack; the prizes go 5, 1, 6 ...
    club.poll()
    club.send(ALICE, "bid 9 if prize 4\n", subject=f"[{tag}] orders")
    (answered,) = club.poll()
    text = " ".join(body(answered).split())
    assert ("REFUSED (order): Not kept: bid 9 if the prize is 4: 9 is no longer in "
            "your pack.") in text
    assert "Kept, secret" not in text and "was dropped" not in text
    assert seat_row(club, 1).orders is None
    text = answer(club, ALICE, "bid 6 if prize 6", subject=f"[{tag}] orders")
    assert "Kept, secret until it applies: bid 6 if the prize is 6." in text
    assert len(seat_row(club, 1).orders or []) == 1


def test_an_order_copied_to_another_player_is_not_kept(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "bid 6 if prize 6", subject=f"[{tag}] orders", cc=BOB)
    assert "A standing order is secret until it applies" in text
    assert seat_row(club, 1).orders is None


def test_a_game_made_with_orders_off_takes_none_and_autoplay_off_stays_off(
        club: Club) -> None:
    tag = new_goofspiel(club, orders="off", autoplay="off")
    club.poll()
    assert "to take no standing orders" in answer(club, ALICE, "bid 6 if prize 6",
                                                  subject=f"[{tag}] orders")
    assert "made with autoplay off" in answer(club, ALICE, "autoplay on",
                                              subject=f"[{tag}] settings")
    with club.referee.sessions() as db:
        game = db.scalar(select(m.Game))
        assert game is not None and (game.options["autoplay"], game.options["orders"]) == (
            "off", "off")
    # Replay hands the engine its own options only.
    assert club.referee.reading.audit(tag) == []


def test_a_bad_autoplay_option_is_refused(club: Club) -> None:
    with pytest.raises(RefereeError, match="Option autoplay: one of on, off; got 'maybe'"):
        new_goofspiel(club, autoplay="maybe")


# -- Spades, with the fixed deal of tests/test_spades_mail.py ---------------------


@pytest.fixture
def spades_club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MailClub]:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    c = MailClub(tmp_path)
    yield c
    c.referee.close()


def test_a_player_with_autoplay_off_plays_their_last_card_by_mail(
        spades_club: MailClub) -> None:
    """Round 1 as scripted up to its 13th trick (ruling SP-21): no card
    before it plays itself, one card of a suit led included; then Carol's,
    Dave's and Alice's last cards do, and Bob, with autoplay off, is asked
    for his."""
    table = new_table(spades_club, autoplay="on")
    table.bid()
    table.move("Bob", "autoplay off")
    mails = table.play(SCRIPT[:48])  # each by its player's mail: play() checks DONE
    assert table.state()["trick"] == ["10C", "QD", "JH"] and table.state()["turn"] == 1
    said = ["Carol had one card left: 10♣ played for them.",
            "Dave had one card left: Q♦ played for them.",
            "Alice had one card left: J♥ played for them."]
    assert all(any(line in body(x) for x in mails) for line in said)
    assert not any("Bob had one card left" in body(x) for x in mails)
    with spades_club.referee.sessions() as db:
        autos = list(db.scalars(select(m.Event.text).where(m.Event.kind == "auto")))
    assert autos == said
    mails = table.move("Bob", "play JC")
    assert table.state()["round"] == 2
    assert any("Round 1:" in body(x) for x in mails)


def test_help_lists_the_orders_a_game_takes_and_none_where_they_are_off(club: Club) -> None:
    """``help`` names the standing orders of the game, and ``orders``; a
    game made with ``orders=off`` names none; Goofspiel, which forces no
    move, offers no ``autoplay off``."""
    tag = new_goofspiel(club)
    club.poll()
    text = answer(club, ALICE, "help", subject=f"[{tag}] help")
    assert "Moves sent ahead, kept secret until they apply" in text
    assert "bid 6 if prize 6" in text and "'cancel orders' drops them all" in text
    assert "autoplay off" not in text
    off = new_goofspiel(club, orders="off")
    club.poll()
    text = answer(club, ALICE, "help", subject=f"[{off}] help")
    assert "Moves sent ahead" not in text and "cancel orders" not in text


def test_help_in_spades_offers_autoplay_off_or_on_as_the_seat_has_it(
        spades_club: MailClub) -> None:
    table = new_table(spades_club, autoplay="on")
    spades_club.poll()
    text = answer(spades_club, ADDRESS["Alice"], "help", subject=f"[{table.tag}] help")
    assert "autoplay off  make each move yourself" in text and "play low" in text
    answer(spades_club, ADDRESS["Alice"], "autoplay off", subject=f"[{table.tag}] settings")
    text = answer(spades_club, ADDRESS["Alice"], "help", subject=f"[{table.tag}] help")
    assert "autoplay on  the referee makes at once" in text
