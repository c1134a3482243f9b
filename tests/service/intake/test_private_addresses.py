"""A private reply address works like a password: one that a mail shows to
anyone but its owner is rotated at once, and the owner told secretly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.store import models as m
from tests.test_referee import ALICE, BOB, REF, SIGNATURE, Club, body, new_goofspiel, to

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
({old}) to bob@club.test.
That address works like a password for your moves, so it no longer counts.

Your new private address is the Reply-To of this mail: just reply to the
referee's mails to you, and never copy those replies to anyone else.

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
    assert "showed your private referee address" in body(notice)
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
    assert (f"A mail in your name came to your private referee address ({old}) from a "
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
