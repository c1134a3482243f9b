"""Each link of the chain alone: a mail read into a ``Letter`` against a
real SQLite database, judged by one link. A link only judges: what it
decides is a value (the mail goes on, or its status and note, and the
replies to send), and it queues no mail itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.mail.auth import Verdict
from referee.mail.inbound import parse_message
from referee.service.intake.chain import Chain, Known, ToPlay
from referee.service.intake.letter import GO_ON, Judgement, Letter, Over
from referee.store import models as m
from tests.test_referee import ALICE, BOB, REF, Club, new_goofspiel

EVE = "eve@else.test"


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path)
    yield c
    c.referee.close()


@pytest.fixture
def db(club: Club) -> Iterator[Session]:
    with club.referee.sessions() as session:
        yield session


def raw(sender: str | None = ALICE, body: str = "bid 1", subject: str = "move",
        to: str = REF, headers: dict[str, str] | None = None) -> bytes:
    """A plain mail as it comes from the mailbox."""
    lines = [f"From: {sender}"] if sender else []
    lines += [f"To: {to}", f"Subject: {subject}", "Message-ID: <l1@club.test>",
              *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + f"\r\n\r\n{body}\r\n").encode()


def letter(club: Club, db: Session, mail: bytes) -> Letter:
    """``mail`` recorded and its facts worked out, as intake does."""
    referee = club.referee
    key = f"k{db.scalar(select(func.count()).select_from(m.Inbound))}"
    record = m.Inbound(source_key=key, sender="", status="processed", received_at=club.now)
    db.add(record)
    db.flush()
    msg = parse_message(mail, referee_address=REF)
    return Letter.read(msg, record, club.now, referee.config, referee.delivery.addresses,
                       referee.composer)


def chain(club: Club) -> Chain:
    return club.referee.intake.chain


def link(club: Club, name: str) -> Any:
    """The link of the chain called ``name``."""
    c = chain(club)
    links: list[Any] = [*c.vetting, c.strangers, *c.checks, c.route]
    return next(x for x in links if x.name == name)


def known(club: Club, db: Session, mail: bytes) -> tuple[Letter, Known]:
    """A letter taken through the links before ``strangers``, and the sender it knows."""
    found = letter(club, db, mail)
    for check in chain(club).vetting:
        assert not check.judge(db, found).status
    who = chain(club).strangers.judge(db, found)
    assert isinstance(who, Known)
    return found, who


def queued(db: Session) -> int:
    return int(db.scalar(select(func.count()).select_from(m.Outbox)) or 0)


def test_verp_a_mail_to_a_bounce_address_is_ignored(club: Club, db: Session) -> None:
    mail = raw("mailer-daemon@club.test", to="referee+bounce-1@club.test", body="bounced")
    judged = link(club, "verp").judge(db, letter(club, db, mail))
    assert judged == Judgement("ignored", "not answered: bounce to a VERP address")


def test_verp_any_other_mail_goes_on(club: Club, db: Session) -> None:
    assert link(club, "verp").judge(db, letter(club, db, raw())) is GO_ON


def test_automation_an_auto_reply_is_noted_and_never_answered(club: Club, db: Session) -> None:
    mail = raw(headers={"Auto-Submitted": "auto-replied"})
    judged = link(club, "automation").judge(db, letter(club, db, mail))
    assert judged.status == "ignored" and judged.note
    assert judged.note.startswith("not answered: ") and not judged.replies


def test_other_list_mail_from_another_list_is_ignored(club: Club, db: Session) -> None:
    mail = raw(headers={"List-Id": "<chat.else.test>"})
    judged = link(club, "other list").judge(db, letter(club, db, mail))
    assert judged == Judgement("ignored", "not answered: mail from another list "
                                          "(chat.else.test)")


def test_no_sender_a_mail_without_from_is_ignored(club: Club, db: Session) -> None:
    judged = link(club, "no sender").judge(db, letter(club, db, raw(sender=None)))
    assert judged == Judgement("ignored", "not answered: no sender address")


def test_sender_finds_the_player_row_and_games(club: Club, db: Session) -> None:
    tag = new_goofspiel(club)
    found = letter(club, db, raw())
    assert link(club, "sender").judge(db, found) is GO_ON
    assert found.player is not None and found.player.address == ALICE
    assert [g.tag for g in found.games] == [tag]


def test_sender_a_stranger_has_no_player_row(club: Club, db: Session) -> None:
    found = letter(club, db, raw(EVE))
    assert link(club, "sender").judge(db, found) is GO_ON
    assert found.player is None and found.games == []


def test_verdict_the_sender_s_only_game_and_who_wrote_it(club: Club, db: Session) -> None:
    tag = new_goofspiel(club)
    found = letter(club, db, raw())
    link(club, "sender").judge(db, found)
    assert link(club, "verdict").judge(db, found) is GO_ON
    assert isinstance(found.routed, m.Game) and found.routed.tag == tag
    assert found.verdict is not None


def test_shown_addresses_a_private_address_shown_to_another_is_replaced(
        club: Club, db: Session) -> None:
    new_goofspiel(club)
    alice = db.scalars(select(m.Player).where(m.Player.address == ALICE)).one()
    shown = club.referee.delivery.addresses.address_of(alice)
    db.flush()
    before = queued(db)
    found = letter(club, db, raw(BOB, to=f"{shown}, {BOB}"))
    for name in ("sender", "verdict"):
        link(club, name).judge(db, found)
    judged = link(club, "shown addresses").judge(db, found)
    assert not judged.status  # the mail goes on
    [told] = judged.replies
    assert (told.template, told.to, told.about) == ("private_address_shown", alice, None)
    assert told.data["old"] == shown and alice.token not in shown
    assert queued(db) == before  # told by the chain, not the link


def test_strangers_an_address_in_no_game_is_answered_once(club: Club, db: Session) -> None:
    found = letter(club, db, raw(EVE))
    for check in chain(club).vetting:
        check.judge(db, found)
    judged = link(club, "strangers").judge(db, found)
    assert isinstance(judged, Judgement) and judged.status == "stranger"
    [told] = judged.replies
    assert (told.template, told.to) == ("stranger", None)
    assert queued(db) == 0


def test_strangers_a_player_is_known_from_here_on(club: Club, db: Session) -> None:
    new_goofspiel(club)
    found, who = known(club, db, raw())
    assert who.player is found.player and who.routed is found.routed


def test_verification_in_verified_mode_an_unverified_mail_is_refused(tmp_path: Path) -> None:
    club = Club(tmp_path, auth={"require": "verified"})
    new_goofspiel(club)
    with club.referee.sessions() as db:
        found, who = known(club, db, raw())
        judged = link(club, "verification").judge(db, found, who)
        assert judged.status == "refused" and judged.note
        assert judged.note.startswith("sender not verified: ")
        [told] = judged.replies
        assert (told.template, told.to) == ("not_verified", who.player)
        assert link(club, "verification").judge(
            db, found, dataclasses.replace(who, verdict=Verdict("pass", "vouched"))) is GO_ON
    club.referee.close()


def test_budget_over_the_replies_an_hour_only_moves_are_read(tmp_path: Path) -> None:
    club = Club(tmp_path, limits={"replies_per_hour": 1})
    new_goofspiel(club)
    with club.referee.sessions() as db:
        found, who = known(club, db, raw())
        assert link(club, "budget").judge(db, found, who) is GO_ON
        assert found.over is None
        again, who = known(club, db, raw(body="bid 2"))
        assert link(club, "budget").judge(db, again, who) is GO_ON
        assert again.over is not None and again.over.budget
    club.referee.close()


def test_size_a_mail_over_the_limit_is_refused_saying_it(club: Club, db: Session) -> None:
    new_goofspiel(club)
    found, who = known(club, db, raw())
    found.msg = dataclasses.replace(found.msg, size=10**9)
    judged = link(club, "size").judge(db, found, who)
    assert judged.status == "refused"
    [told] = judged.replies
    assert (told.template, told.to) == ("too_large", who.player)
    assert told.data == {"limit": club.config.referee.max_message_size}
    found.over = Over("not read: over", True)  # over a budget: refused unanswered
    assert link(club, "size").judge(db, found, who) == Judgement("refused", "not read: over")


def test_plain_text_a_mail_with_no_text_is_refused(club: Club, db: Session) -> None:
    new_goofspiel(club)
    found, who = known(club, db, raw())
    assert link(club, "plain text").judge(db, found, who) is GO_ON
    found.msg = dataclasses.replace(found.msg, tnef_only=True)
    [told] = link(club, "plain text").judge(db, found, who).replies
    assert (told.template, told.to) == ("plain_text_please", who.player)


def test_routing_the_game_to_play(club: Club, db: Session) -> None:
    tag = new_goofspiel(club)
    found, who = known(club, db, raw())
    routed = link(club, "routing").judge(db, found, who)
    assert isinstance(routed, ToPlay) and routed.game.tag == tag
    assert found.record.game_id == routed.game.id


def test_routing_a_player_of_two_games_is_asked_which(club: Club, db: Session) -> None:
    tags = sorted([new_goofspiel(club), new_goofspiel(club)])
    before = queued(db)
    found, who = known(club, db, raw())
    judged = link(club, "routing").judge(db, found, who)
    assert isinstance(judged, Judgement) and judged.status == "refused"
    [told] = judged.replies
    assert told.template == "which_game" and sorted(told.data["games"]) == tags
    assert queued(db) == before
