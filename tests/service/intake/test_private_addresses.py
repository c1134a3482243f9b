"""A private reply address works like a password: one that a mail shows to
anyone but its owner is rotated at once, and the owner told secretly. Each
seat has its own, bound to its game: it vouches for its player in that game
and no other."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.parser import HeaderParser
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.test_referee import (
    ALICE,
    BOB,
    CAROL,
    REF,
    SIGNATURE,
    Club,
    body,
    new_goofspiel,
    to,
)

STRICT = {"require": "verified", "authserv_id": "mx.club.test"}


@pytest.fixture
def strict(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, auth=STRICT)
    yield c
    c.referee.close()


def private_address_of(club: Club, player: str, tag: str) -> str:
    club.send(player, "help", subject=f"[{tag}] help {len(club.new_mail())}")
    answers = [x for x in club.poll() if to(x).endswith(f"<{player}>")]
    return str(answers[-1]["Reply-To"].addresses[0].addr_spec)


def reply_to(mail: EmailMessage) -> str:
    return str(mail["Reply-To"].addresses[0].addr_spec)


def opened(club: Club) -> tuple[str, dict[str, str]]:
    """A new game of Alice and Bob, its openings read: its tag, and the
    private address of each player's seat. Their copies of the opening, a
    public report, show none: the answer to each one's "help" does, a secret
    mail (their mail server vouches for it)."""
    tag = new_goofspiel(club)
    assert {reply_to(x) for x in club.poll()} == {REF}
    for player in (ALICE, BOB):
        club.send(player, "help", subject=f"[{tag}] help", headers={
            "Authentication-Results": "mx.club.test; dmarc=pass header.from=club.test"})
    answers = club.poll()
    assert all("(secret)" in x["Subject"] for x in answers)
    return tag, {str(x["To"].addresses[0].addr_spec): reply_to(x) for x in answers}


def moves(club: Club, tag: str) -> list[tuple[int, list[object]]]:
    """The game's action log: (seat, the action's arguments)."""
    with club.referee.sessions() as db:
        q = (select(m.ActionLog).join(m.Game).where(m.Game.tag == tag)
             .order_by(m.ActionLog.step))
        return [(a.seat, list(a.action["args"])) for a in db.scalars(q)]


def test_a_verified_mail_replayed_into_another_game_is_not_applied_there(
        strict: Club) -> None:
    """Alice plays two games. Her bid, verified by her private address for
    the first, sent again with the second game's tag (by her by mistake, or
    by anyone who got hold of it) is not her move there: her address for the
    first game vouches for nothing in the second. Her real bid in the second,
    to its own address, is applied."""
    first, firsts = opened(strict)
    second, seconds = opened(strict)
    assert firsts[ALICE] != seconds[ALICE]
    assert len({*firsts.values(), *seconds.values()}) == 4
    strict.send(ALICE, "bid 6", to=firsts[ALICE], subject=f"[{first}] my bid")
    (answer,) = strict.poll()
    assert "DONE (bid 6)" in body(answer)
    strict.send(ALICE, "bid 6", to=firsts[ALICE], subject=f"[{second}] my bid")
    (refusal,) = strict.poll()
    assert to(refusal) == f"Alice <{ALICE}>"
    assert refusal["Subject"] == f"Re: [{second}] my bid (not applied) (secret)"
    assert "could not be verified as coming from you" in body(refusal)
    assert reply_to(refusal) == seconds[ALICE]  # replying to it is her move in the second
    assert moves(strict, first) == [(1, [6])] and moves(strict, second) == []
    with strict.referee.sessions() as db:
        note = db.scalars(select(m.Inbound.note).order_by(m.Inbound.id.desc())).first()
    assert note == "sender not verified: no Authentication-Results from mx.club.test"
    strict.send(ALICE, "bid 5", to=seconds[ALICE], subject=f"Re: [{second}] my bid")
    (answer,) = strict.poll()
    assert "DONE (bid 5)" in body(answer)
    assert moves(strict, second) == [(1, [5])]
    # Not shown to anyone: her address for the first game still counts there.
    strict.send(BOB, "bid 2", to=firsts[BOB], subject=f"[{first}]")
    strict.poll()
    strict.send(ALICE, "bid 1", to=firsts[ALICE], subject=f"[{first}] round 2")
    strict.poll()
    assert moves(strict, first) == [(1, [6]), (2, [2]), (1, [1])]


def test_a_mail_replayed_into_another_games_thread_is_not_applied_there(
        strict: Club) -> None:
    """The same with no tag, as a reply in the thread of the second game."""
    first, firsts = opened(strict)
    second, _ = opened(strict)
    root = strict.referee.composer.game_root(second)
    strict.send(ALICE, "bid 6", to=firsts[ALICE], subject="my bid",
                headers={"In-Reply-To": root, "References": root})
    (refusal,) = strict.poll()
    assert "(not applied)" in refusal["Subject"]
    assert moves(strict, first) == moves(strict, second) == []


def test_a_mail_with_no_tag_to_a_games_address_is_about_that_game(strict: Club) -> None:
    """A player in two games who writes to the address of one of them, with
    no tag, moves in that game."""
    first, _ = opened(strict)
    second, seconds = opened(strict)
    strict.send(ALICE, "bid 4", to=seconds[ALICE], subject="my bid")
    (answer,) = strict.poll()
    assert "DONE (bid 4)" in body(answer)
    assert moves(strict, first) == [] and moves(strict, second) == [(1, [4])]


@pytest.mark.parametrize("sender", [ALICE, CAROL], ids=["forged", "own"])
def test_an_address_forwarded_from_a_report_is_rotated_and_its_owner_told(
        strict: Club, sender: str) -> None:
    """Alice forwards a secret mail of the first game (the answer to her
    "help"; her choice, as a hand's would be) to Carol, who plays in
    none. Carol writes to the private address it shows, in Alice's name
    (through her own server, which Alice's domain disowns) or in her own:
    nothing is done, the address stops counting, and Alice is told the new
    one in secret. Her address for the other game is untouched; her own bid
    after it, to the new address, is applied."""
    first, firsts = opened(strict)
    second, seconds = opened(strict)
    old = firsts[ALICE]
    forged = {"Authentication-Results": "mx.club.test; dmarc=fail header.from=club.test"}
    strict.send(sender, "bid 6", to=old, subject=f"Fwd: [{first}] Round 1",
                headers=forged if sender == ALICE else None)
    mails = strict.poll()
    notice = next(x for x in mails if x["Subject"] == "Your private referee address "
                                                      "has changed (secret)")
    assert to(notice) == f"Alice <{ALICE}>"
    new = reply_to(notice)
    assert new not in (old, seconds[ALICE]) and new.startswith("referee+")
    if sender == ALICE:
        told = " ".join(body(notice).split())
        assert (f"A mail in your name came to your private referee address for [{first}] "
                f"({old}) from a server that does not send your mail") in told
    else:
        assert body(notice) == f"""\
SECRET: this mail is for you alone. Do not forward it or quote it to others.

A mail from carol@club.test came to your private referee address
for [{first}] ({old}).
Someone else knows that address; nothing in that mail was done for you.
That address works like a password for your moves, so it no longer counts.

Your new private address is the Reply-To of this mail: just reply to it,
or to the referee's other secret mails to you, and never forward those
mails or copy those replies to anyone else.

{SIGNATURE}"""
    assert all(to(x) != f"Bob <{BOB}>" for x in mails)
    assert moves(strict, first) == []
    # The old address no longer counts, even from Alice's own server.
    strict.send(ALICE, "bid 6", to=old, subject=f"[{first}]")
    strict.poll()
    assert moves(strict, first) == []
    strict.send(ALICE, "bid 6", to=new, subject=f"Re: [{first}] Round 1")
    strict.send(ALICE, "bid 3", to=seconds[ALICE], subject=f"[{second}]")
    answers = strict.poll()
    assert ["DONE (bid 6)" in body(answers[0]), "DONE (bid 3)" in body(answers[1])] == [
        True, True]
    assert moves(strict, first) == [(1, [6])] and moves(strict, second) == [(1, [3])]


def test_an_address_copied_to_another_player_is_rotated_and_its_owner_told(
        strict: Club) -> None:
    tag = new_goofspiel(strict)
    strict.poll()
    old = private_address_of(strict, ALICE, tag)
    # Alice copies Bob on her reply: her mail counts, her address does not any more.
    strict.send(ALICE, "help", to=old, cc=BOB, subject=f"[{tag}] copied")
    notice, reply = strict.poll()
    assert "> help\n  DONE (help): Round 1 of 6: the prize is 5." in body(reply)
    assert to(notice) == "Alice <alice@club.test>"
    assert notice["Subject"] == "Your private referee address has changed (secret)"
    new = notice["Reply-To"].addresses[0].addr_spec
    assert new != old and reply["Reply-To"].addresses[0].addr_spec == new
    assert body(notice) == f"""\
SECRET: this mail is for you alone. Do not forward it or quote it to others.

A mail from alice@club.test showed your private referee address
for [{tag}] ({old}) to bob@club.test.
That address works like a password for your moves, so it no longer counts.

Your new private address is the Reply-To of this mail: just reply to it,
or to the referee's other secret mails to you, and never forward those
mails or copy those replies to anyone else.

{SIGNATURE}"""
    # Bob, who saw it, cannot move for Alice with the old address.
    strict.send(ALICE, "bid 5", to=old, subject=f"[{tag}] from bob really")
    assert strict.poll() == []  # not applied (and Alice was told so once today already)
    assert strict.count(m.ActionLog) == 0
    strict.send(ALICE, "help", to=new, subject=f"[{tag}]")
    assert "> help\n  DONE (help): Round 1 of 6: the prize is 5." in body(strict.poll()[0])


def test_another_sender_using_an_address_rotates_it(strict: Club) -> None:
    tag = new_goofspiel(strict)
    strict.poll()
    alices = private_address_of(strict, ALICE, tag)
    strict.send(BOB, "bid 6", to=alices, subject=f"[{tag}]")
    mails = strict.poll()
    notice = next(x for x in mails if to(x) == "Alice <alice@club.test>")
    assert "A mail from bob@club.test came to your private referee address" in body(notice)
    assert strict.count(m.ActionLog) == 0


def test_mail_to_the_referee_alone_keeps_the_address(strict: Club) -> None:
    tag = new_goofspiel(strict)
    strict.poll()
    address = private_address_of(strict, ALICE, tag)
    strict.send(ALICE, "bid 6", to=address, subject=f"[{tag}]")
    (reply,) = strict.poll()
    assert reply["Reply-To"].addresses[0].addr_spec == address


def test_a_forged_mail_to_the_address_is_refused_and_the_address_rotated(
        strict: Club) -> None:
    """Someone who learnt Alice's private address writes in her name from a
    server her domain disowns (the trusted Authentication-Results say
    dmarc=fail): nothing is done, the address stops counting, and Alice is
    told secretly, with her new address to reply to."""
    tag = new_goofspiel(strict)
    strict.poll()
    old = private_address_of(strict, ALICE, tag)
    strict.send(ALICE, "bid 6", to=old, subject=f"[{tag}]", headers={
        "Authentication-Results": "mx.club.test; dmarc=fail header.from=club.test; "
                                  "spf=fail smtp.mailfrom=club.test"})
    mails = strict.poll()
    assert strict.count(m.ActionLog) == 0
    notice = next(x for x in mails if x["Subject"] == "Your private referee address "
                                                      "has changed (secret)")
    assert to(notice) == "Alice <alice@club.test>"
    new = notice["Reply-To"].addresses[0].addr_spec
    assert new != old
    text = " ".join(body(notice).split())
    assert (f"A mail in your name came to your private referee address for [{tag}] ({old}) "
            "from a "
            "server that does not send your mail (your mail server's check: sent to the "
            "player's private address, but dmarc=fail, spf=fail). Nothing in it was done."
            ) in text
    # Alice's own mail to the new address counts.
    strict.send(ALICE, "bid 6", to=new, subject=f"[{tag}]")
    strict.poll()
    assert strict.count(m.ActionLog) == 1


def test_a_players_copy_of_a_public_report_shows_the_address_only_when_it_asks_them(
        club: Club) -> None:
    """A report a player may forward takes replies to the referee's own
    address, unless it asks them to act (their reply is a move, which in
    verified mode the private address vouches for); the answer to their
    mail, for them alone, always to their private one. Here the game's last
    report asks nobody for anything."""
    tag = new_goofspiel(club, cards="2", prize_order="1,2")
    opening = club.poll()
    assert opening and all("referee+" in x["Reply-To"].addresses[0].addr_spec
                           for x in opening)  # "your bid"
    club.send(ALICE, "bid 1", subject=f"[{tag}]")
    (answer,) = club.poll()
    assert "referee+" in answer["Reply-To"].addresses[0].addr_spec
    club.send(BOB, "bid 2", subject=f"[{tag}]")
    last = club.poll()
    alices = next(x for x in last if to(x) == f"Alice <{ALICE}>")
    assert "GAME OVER" in str(alices["Subject"]), alices["Subject"]
    assert alices["Reply-To"].addresses[0].addr_spec == REF


def test_in_verified_mode_only_secret_mail_carries_a_seats_address(tmp_path: Path) -> None:
    """A whole game, a reminder and a player in ``mail all`` among it: every
    mail that gives a seat's private address is a secret mail, marked so;
    no copy of a report, however much it asks of its player, gives one."""
    club = Club(tmp_path, auth=STRICT, vouch=True)
    try:
        tag = new_goofspiel(club, cards="3", prize_order="1,2,3")
        club.poll()
        club.send(BOB, "mail all", subject=f"[{tag}]")
        club.poll()
        club.poll(club.now + timedelta(days=2, hours=12))  # Alice is reminded
        for alice, bob in ((1, 3), (2, 1), (3, 2)):
            club.send(ALICE, f"bid {alice}", subject=f"[{tag}]")
            club.send(BOB, f"bid {bob}", subject=f"[{tag}]")
            club.poll(club.now + timedelta(days=2, hours=13))
        with club.referee.sessions() as db:
            tokens = {s.token for s in db.scalars(select(m.Seat)) if s.token}
            rows = list(db.scalars(select(m.Outbox).order_by(m.Outbox.id)))
        assert len(tokens) == 2
        carrying, reports = [], []
        for row in rows:
            head = HeaderParser().parsestr(row.raw, headersonly=True)
            kinds = str(head["X-Referee-Mail"]).split()
            if any(t in row.raw for t in tokens):
                assert row.secret and "(secret)" in str(head["Subject"]), head["Subject"]
                carrying.append(kinds)
            elif {"opening", "round_report"} & set(kinds):
                reports.append(str(head["Subject"]))
        assert ["reminder"] in carrying and any("transcript" in k for k in carrying)
        assert any("your bid" in s for s in reports), reports
    finally:
        club.referee.close()
