"""A quiet table (issues 11 and 21): ``mail all``, ``mail turns`` and ``mail digest``.

Spades, whose round is 57 mails a player in ``mail all`` (one a pass),
plays in ``mail turns`` unless a player or the operator says otherwise: a
player gets a mail when they must act, carrying the moves since their last
mail, and the reports; ``digest`` holds even the reports until they must
act or a day is up. The figures asserted here are the README's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from itertools import pairwise
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games import get_game
from referee.games.draws import SequentialDraws
from referee.games.spades import Spades
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE
from referee.store import models as m
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
    kinds,
    rcpts,
)

LIST = "table@club.test"


@pytest.fixture(autouse=True)
def fixed_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))


def new_table(tmp_path: Path, database: str | None = None, public_list: str | None = None,
              **options: str) -> Table:
    club = MailClub(tmp_path, **({"database": database} if database else {}),
                    **({"public_list": public_list} if public_list else {}))
    # Every card by mail, as SCRIPT writes it: with autoplay (issue 37) a
    # forced card plays itself and the script's mail for it is refused.
    tag = club.referee.operator.create_game(
        "spades", [f"{n} <{ADDRESS[n]}>" for n in NAMES],
        options={"autoplay": "off", **options}, now=T0, seed="sp")
    return Table(club, tag)


def to(name: str, mails: list[EmailMessage]) -> list[EmailMessage]:
    """The mails to ``name`` alone, the answers to their own mails too."""
    return [x for x in mails if rcpts(x) == [ADDRESS[name]]]


#: What tells a player that a move of theirs was done: the answer to their
#: mail as a part of its own (``mail all``), or the line it comes to.
ANSWER = re.compile(r"^(  You: .+ \(done\)|\w+, here is what I did with your mail for .+)$",
                    re.M)


def one_round(table: Table) -> list[EmailMessage]:
    """The opening, the four bids and the 52 cards of round 1, each by mail."""
    mails = table.opening + table.bid()
    for name, text in SCRIPT:
        mails += table.move(name, text)
    return mails


@pytest.mark.parametrize("public_list", [None, LIST], ids=["no list", "a list"])
@pytest.mark.parametrize(("mode", "counts"), [
    # One mail a pass: the opening, a pass for each bid and each card.
    ("all", [57, 57, 57, 57]),
    # The opening, a mail for each bid and card asked of them (Alice's bid
    # in her opening mail, as she bids first), the round's report, and a
    # receipt for each bid and card that brought its player no other mail
    # in its pass (issue 37): 15 to 16 before receipts.
    (None, [28, 29, 30, 30]),  # the default for Spades: mail turns
    ("turns", [28, 29, 30, 30]),
    ("digest", [28, 29, 30, 30]),  # every player acts every trick
])
def test_a_spades_round_reaches_each_player_in_20_mails_or_fewer_by_default(
        tmp_path: Path, public_list: str | None, mode: str | None, counts: list[int]) -> None:
    """Issue 21: every mail a player gets from the referee over a round
    (the opening, four bids, 52 cards), the answers to their own mails
    included and, with a list, the list's posts they read."""
    table = new_table(tmp_path, public_list=public_list, **({"mail": mode} if mode else {}))
    mails = one_round(table)
    assert table.state()["round"] == 2
    # The list carries the reports, one post a pass, never a single move.
    posts = [x for x in mails if rcpts(x) == [LIST]]
    assert [kind(x) for x in posts] == (["opening", "round_report"] if public_list else [])
    # What each player reads: their own mails and the list's posts, in order.
    read = {n: [x for x in mails if rcpts(x) in ([ADDRESS[n]], [LIST])] for n in NAMES}
    assert len(mails) == sum(len(to(n, mails)) for n in NAMES) + len(posts)  # no other mail
    # Without a list the reports come in each player's own mails, with their
    # hand or prompt: as many mails as the list's posts and the rest.
    assert [len(read[n]) for n in NAMES] == [c + len(posts) for c in counts]
    if mode != "all":
        # Issue 21's target, for the mail of the game; the receipts that
        # answer a player's own moves (issue 37) come on top.
        assert max(len([x for x in read[n] if "receipt" not in kinds(x)])
                   for n in NAMES) <= 20
    for n in NAMES:
        # Each move (a bid, 13 cards) answered once, in a mail counted above.
        assert sum(len(ANSWER.findall(body(x))) for x in to(n, mails)) == 14, n
        # Dated in the order sent, a second apart at least: a client sorting
        # by date shows the game in order.
        dates = [parsedate_to_datetime(str(x["Date"])) for x in read[n]]
        assert all(a < b for a, b in pairwise(dates)), n
        for x in read[n]:
            if "your_turn" in kinds(x):  # a mail that asks a player to act says so
                assert re.search(r"[:;] your (bid|card)( \(secret\))?$", str(x["Subject"]))
            if mode != "all" and kind(x).startswith(COMPOSITE):
                # The game's one subject, so mail clients thread it.
                assert re.fullmatch(r"\[spades-1\] Spades(: your (bid|card|move is in))?"
                                    r"( \(secret\))?",
                                    str(x["Subject"])), x["Subject"]


def test_in_mail_turns_the_moves_ride_with_the_players_next_mail(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    (receipt,) = to("Alice", table.move("Alice", "bid 4"))
    # A bid is no news to act on, so Alice's mail is answered by a receipt
    # at once (issue 37), which carries her bid's line.
    assert rcpts(receipt) == [ADDRESS["Alice"]]
    assert kind(receipt) == "table transcript bid receipt"
    assert body(receipt).startswith(f"{SECRET_NOTE}\n\nSince your last mail:\n"
                                    "  You: bid 4 (done)\n  Alice bids 4\n\n")
    assert ("Your bid is in. 1 of 4 bids are in. Bob is to bid next; you hear from the referee "
            "when you are to act again or the round is over.") in " ".join(body(receipt).split())
    table.move("Bob", "bid 4")
    table.move("Carol", "bid 3")
    mails = table.move("Dave", "bid nil")
    # Alice leads trick 1; Dave's bid is answered by a receipt of his own.
    (alices,) = to("Alice", mails)
    assert [rcpts(x) for x in mails] == [[ADDRESS["Alice"]], [ADDRESS["Dave"]]]
    assert ("Since your last mail:\n  Bob bids 4\n"
            "  Carol bids 3\n  Dave bids nil\n\n") in body(alices)
    mails = table.move("Alice", "play AH")
    (bobs,) = to("Bob", mails)  # and Alice's receipt
    assert rcpts(bobs) == [ADDRESS["Bob"]]
    assert kind(bobs) == "table play your_turn"
    assert bobs["Subject"] == "[spades-1] Spades: your card (secret)"
    assert body(bobs) == f"""\
{SECRET_NOTE}

Since your last mail:
  Carol bids 3
  Dave bids nil
  Trick 1: Alice plays A♥

Trick 1: your card
------------------
Bob, it is your turn, by Thu 05 Mar 2026 12:00 UTC.

Trick 1: Alice A♥.
You may play: 8♥ 5♥ 3♥

Your hand:
♠ A 10 8 5
♥ 8 5 3
♣ A K Q J
♦ K 2

{SIGNATURE}"""
    # A refusal comes at once, with what was held for her, and ends as
    # every answer does: with the hint to write "help".
    (carols,) = table.move("Carol", "play 2C")
    assert kind(carols).startswith("table transcript")
    assert "REFUSED" in body(carols) and "Since your last mail:" in body(carols)
    assert body(carols).endswith(
        f'{SIGNATURE}Write "help" to the referee for what you can do now.\n')


def test_mail_all_sends_what_was_held_at_once_and_then_every_move(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    table.move("Alice", "bid 4")
    table.move("Bob", "bid 4")
    mails = table.move("Dave", "mail all")
    (held,) = mails  # what was held, then the answer, in one mail
    assert rcpts(held) == [ADDRESS["Dave"]] and kinds(held) == ["transcript"]
    assert body(held).startswith(f"{SECRET_NOTE}\n\nSince your last mail:\n"
                                 "  Alice bids 4\n  Bob bids 4\n\nYour mail\n---------\n")
    assert "What was held for you heads this mail." in body(held)
    assert held["Subject"] == "[spades-1] Done: mail (secret)"  # a Spades answer is secret
    mails = table.move("Carol", "bid 3")
    # Every move whole now: Carol's bid, then Dave's prompt, in one mail.
    (daves,) = to("Dave", mails)
    assert kinds(daves) == ["bid", "your_turn"]
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
    mails = table.move("Alice", "bid 4")
    # Bob is asked for his bid at once, and Alice gets her receipt at once
    # (issue 37), holding nothing else: the rest waits for the digest.
    assert [(rcpts(x), kind(x)) for x in mails] == [
        ([ADDRESS["Alice"]], "table transcript receipt"),
        ([ADDRESS["Bob"]], "table bid your_turn")]
    assert table.club.poll(T0 + timedelta(hours=23)) == []
    mails = table.club.poll(T0 + timedelta(days=1, minutes=1))
    # The others hear of Alice's bid a day later, Alice too.
    assert [rcpts(x) for x in mails] == [
        [ADDRESS["Alice"]], [ADDRESS["Carol"]], [ADDRESS["Dave"]]]
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


@pytest.mark.parametrize("mode", [None, "all", "digest"])
def test_with_a_list_a_single_move_never_goes_to_the_list_whatever_the_mode(
        tmp_path: Path, mode: str | None) -> None:
    """The list carries the reports (the opening here); a bid rides in the
    players' own mails, each to one player."""
    table = new_table(tmp_path, public_list=LIST, **({"mail": mode} if mode else {}))
    (post,) = [x for x in table.opening if LIST in rcpts(x)]
    assert rcpts(post) == [LIST] and kind(post) == "opening"
    mails = table.move("Alice", "bid 4")
    assert mails and all(len(rcpts(x)) == 1 and rcpts(x)[0] in EVERYONE for x in mails)
    # Bob is asked for his bid, with Alice's; in mail all everyone hears of
    # it; in mail turns Alice's line of it rides in her receipt (issue 37).
    assert [rcpts(x) for x in mails if "bid" in kinds(x)] == (
        [[a] for a in EVERYONE] if mode == "all" else
        [[ADDRESS["Bob"]]] if mode == "digest" else [[ADDRESS["Alice"]], [ADDRESS["Bob"]]])


# -- Miser by mail, with a list: each mail says what is new and what is asked ----------


def miser_by_mail(tmp_path: Path, moves: int) -> list[EmailMessage]:
    """A Miser of Alice, Bob and Carol with a list, in its default mail
    mode, each move the sensible bot's, sent by mail; every mail sent.
    After each pass that posted a report to the list, no line of a move
    before that pass is still held for anyone's next mail."""
    club = MailClub(tmp_path, public_list=LIST)
    names = ["Alice", "Bob", "Carol"]
    tag = club.referee.operator.create_game(
        "miser", [f"{n} <{n.lower()}@club.test>" for n in names], now=T0, seed="m1")
    miser, rng, now = get_game("miser"), random.Random(1), T0
    mails = club.poll(now)
    for _ in range(moves):
        state = miser.load(club.referee.reading.stored_state(tag))
        if miser.is_over(state):
            break
        for seat in sorted({p.seat for p in miser.pending(state)}):
            action = miser.bot_action(state, seat, SequentialDraws(rng))
            club.send(f"{names[seat - 1].lower()}@club.test",
                      " ".join([action.verb, *map(str, action.args)]), subject=f"[{tag}] move")
        now += timedelta(hours=3)
        sent = club.poll(now)
        mails += sent
        if any(rcpts(x) == [LIST] and "round_report" in kinds(x) for x in sent):
            with club.referee.sessions() as db:
                old = db.scalars(select(m.HeldMail.headline).where(
                    m.HeldMail.body == "", m.HeldMail.created_at < now)).all()
            assert [h for h in old if not h.startswith("You: ")] == [], old
    club.referee.close()
    return mails


def test_miser_mails_number_no_turn_repeat_no_reported_step_and_say_what_is_asked(
        tmp_path: Path) -> None:
    """Rule text 004 numbers no turns, so no mail does; a report posted to
    the list tells where the moves held as lines led, so no later mail
    repeats them (``miser_by_mail`` checks); a mail of lines whose subject
    asks for a move says so in its text too."""
    mails = miser_by_mail(tmp_path, 30)
    assert sum(1 for x in mails if rcpts(x) == [LIST] and "round_report" in kinds(x)) >= 5
    for x in mails:
        text = f"{x['Subject']}\n{body(x)}"
        assert not re.search(r"\bturn \d|\(turn\b|Turn \d", text), text
        asked = re.search(r": (your [a-z ]+?)(?: \(secret\))?$", str(x["Subject"]))
        if (asked and kind(x).startswith(COMPOSITE) and "your_move" not in kinds(x)
                and "receipt" not in kinds(x)):  # "your move is in" asks for nothing
            assert f"Now it is up to you: {asked[1]}." in body(x), body(x)
