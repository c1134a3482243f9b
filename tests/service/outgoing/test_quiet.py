"""A quiet table (issue 11): ``mail all``, ``mail turns`` and ``mail digest``.

Spades, whose round is some 70 mails a player in ``mail all``, plays in
``mail turns`` unless a player or the operator says otherwise: a player gets
a mail when they must act, carrying the moves since their last mail, and the
reports; ``digest`` holds even the reports until they must act or a day is
up. The figures asserted here are the README's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

import referee.games
from referee.games.spades import Spades
from referee.service.outgoing.queue import SECRET_NOTE
from tests.databases import KINDS, database_url
from tests.test_spades_mail import (
    ADDRESS,
    BIDS,
    DEAL,
    EVERYONE,
    NAMES,
    SCRIPT,
    SEATING,
    SIGNATURE,
    T0,
    MailClub,
    Table,
    body,
    kind,
    rcpts,
)


@pytest.fixture(autouse=True)
def fixed_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))


def new_table(tmp_path: Path, database: str | None = None, **options: str) -> Table:
    club = MailClub(tmp_path, **({"database": database} if database else {}))
    tag = club.referee.operator.create_game(
        "spades", [f"{n} <{ADDRESS[n]}>" for n in NAMES], options=options, now=T0, seed="sp")
    return Table(club, tag)


def to(name: str, mails: list[EmailMessage]) -> list[EmailMessage]:
    """The mails of the table to ``name``: all but the answers to their own mail."""
    return [x for x in mails if rcpts(x) == [ADDRESS[name]] and kind(x) != "transcript"]


def one_round(table: Table) -> list[EmailMessage]:
    """The opening, the four bids and the 52 cards of round 1, each by mail."""
    mails = table.opening + table.bid()
    for name, text in SCRIPT:
        mails += table.move(name, text)
    return mails


@pytest.mark.parametrize(("mode", "counts"), [
    ("all", [72, 73, 73, 73]),
    (None, [15, 16, 16, 16]),  # the default for Spades: mail turns
    ("turns", [15, 16, 16, 16]),
    ("digest", [15, 16, 16, 16]),
])
def test_a_spades_round_reaches_each_player_in_16_mails_or_fewer_by_default(
        tmp_path: Path, mode: str | None, counts: list[int]) -> None:
    table = new_table(tmp_path, **({"mail": mode} if mode else {}))
    mails = one_round(table)
    assert [len(to(n, mails)) for n in NAMES] == counts
    assert table.state()["round"] == 2
    if mode != "all":  # one subject for the whole game, so mail clients thread it
        assert {str(x["Subject"]) for n in NAMES for x in to(n, mails)} == {
            "[spades-1] Spades (secret)"}


def test_in_mail_turns_the_moves_ride_with_the_players_next_mail(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    table.move("Alice", "bid 4")
    table.move("Bob", "bid 4")
    table.move("Carol", "bid 3")
    mails = table.move("Dave", "bid nil")
    assert to("Carol", mails) == [] and to("Bob", mails) == []  # a bid is no news to act on
    (alices,) = to("Alice", mails)  # she leads trick 1
    assert ("Since your last mail:\n  Alice bids 4\n  Bob bids 4\n  Carol bids 3\n"
            "  Dave bids nil\n") in body(alices)
    mails = table.move("Alice", "play AH")
    (bobs,) = to("Bob", mails)
    assert kind(bobs) == "table play your_turn"
    assert body(bobs) == f"""\
{SECRET_NOTE}

Since your last mail:
  Bob bids 4
  Carol bids 3
  Dave bids nil
  Trick 1: Alice plays A♥

Your turn: a card to trick 1
----------------------------
Bob, it is your turn, by Thu 05 Mar 2026 12:00 UTC.

Trick 1: Alice A♥.
You may play: 8♥ 5♥ 3♥

Your hand:
♠ A 10 8 5
♥ 8 5 3
♣ A K Q J
♦ K 2

{SIGNATURE}"""


def test_mail_all_sends_what_was_held_at_once_and_then_every_move(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    table.move("Alice", "bid 4")
    table.move("Bob", "bid 4")
    mails = table.move("Dave", "mail all")
    (held,) = to("Dave", mails)
    assert "What was held for you follows in one mail." in body(
        next(x for x in mails if kind(x) == "transcript"))
    assert "Since your last mail:\n  Alice bids 4\n  Bob bids 4\n" in body(held)
    assert held["Subject"] == "[spades-1] Spades"  # nothing secret in it
    mails = table.move("Carol", "bid 3")
    assert [kind(x) for x in to("Dave", mails)] == ["bid", "your_turn"]
    assert to("Alice", mails) == []  # still in mail turns


def test_a_mode_that_is_no_mode_is_refused_with_the_choices(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    mails = table.move("Alice", "mail loud")
    (answer,) = [x for x in mails if kind(x) == "transcript"]
    assert ("REFUSED (mail): You get 'turns' now. Choose one: 'mail all': every mail of this game, "
            "each as it happens;") in " ".join(body(answer).split())


@pytest.fixture(params=KINDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database_url(request.param, tmp_path)


def test_in_mail_digest_what_is_held_goes_out_once_a_day(tmp_path: Path, db_url: str) -> None:
    table = new_table(tmp_path, database=db_url, mail="digest")
    table.move("Alice", "bid 4")
    assert table.club.poll(T0 + timedelta(hours=23)) == []
    mails = table.club.poll(T0 + timedelta(days=1, minutes=1))
    # Bob was asked for his bid at once; the others hear of Alice's a day later.
    assert sorted(a for x in mails for a in rcpts(x)) == [
        ADDRESS["Alice"], ADDRESS["Carol"], ADDRESS["Dave"]]
    assert all(body(x) == f"Since your last mail:\n  Alice bids 4\n\n{SIGNATURE}"
               for x in mails)
    assert table.club.poll(T0 + timedelta(days=1, hours=1)) == []  # sent once


def test_the_last_mail_of_a_quiet_game_says_it_is_over_and_who_won(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    for name, text in BIDS:
        table.move(name, text)
    table.move("Alice", "concede")
    mails = table.move("Carol", "concede")
    for name in ("Bob", "Dave"):
        (last,) = to(name, mails)
        assert last["Subject"] == "[spades-1] Carol concedes — GAME OVER: Bob and Dave win"
        assert "GAME OVER: Bob & Dave win (the other team conceded)." in body(last)


def test_with_a_list_the_list_carries_every_move_whatever_the_mode(tmp_path: Path) -> None:
    club = MailClub(tmp_path, public_list="table@club.test")
    club.referee.operator.create_game("spades", [f"{n} <{ADDRESS[n]}>" for n in NAMES],
                             now=T0, seed="sp")
    table = Table(club, "spades-1")
    mails = table.move("Alice", "bid 4")
    assert [rcpts(x) for x in mails if kind(x) == "bid"] == [["table@club.test"]]
    assert set(EVERYONE) >= {a for x in mails for a in rcpts(x) if a != "table@club.test"}
