"""The play step: a mail's lines run for a seat and the game settled,
nothing mailed; then the answer to the sender first, or the reports alone."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.games.base import Scope
from referee.mail.inbound import parse_message
from referee.service.play.commands import TranscriptLine
from referee.service.play.step import Step, _noted
from referee.store import models as m
from tests.test_referee import ALICE, REF, Club, new_goofspiel


def queued(db: Session) -> int:
    return int(db.scalar(select(func.count()).select_from(m.Outbox)) or 0)


def test_a_step_plays_and_mails_nothing_until_told(tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = new_goofspiel(club)
    msg = parse_message((f"From: {ALICE}\r\nTo: {REF}\r\nSubject: [{tag}] bid\r\n"
                         "Message-ID: <s1@club.test>\r\n\r\nbid 5\r\n").encode(),
                        referee_address=REF)
    step = Step(club.referee.delivery)
    with club.referee.sessions.begin() as db:
        game = db.scalars(select(m.Game).where(m.Game.tag == tag)).one()
        alice = db.scalars(select(m.Player).where(m.Player.address == ALICE)).one()
        record = m.Inbound(source_key="k", sender=ALICE, status="processed",
                           received_at=club.now)
        db.add(record)
        db.flush()
        before = queued(db)
        gs = step.load(db, game, club.now)
        played = step.play(gs, 1, None, msg.lines, Scope.SECRET, frozenset(), record.id, (),
                           moves_only=False)
        assert [t.result for t in played.transcript] == ["applied"]
        assert game.step == 1 and queued(db) == before
        step.tell(played, alice, msg)
        assert queued(db) == before + 1  # the answer to Alice
    club.referee.close()


def test_a_shortened_name_is_said_in_the_join_s_line() -> None:
    join = TranscriptLine("join", "join", "applied", "Welcome.")
    said = _noted([join], "Your name is too long.")
    assert [t.message for t in said] == ["Welcome.\nYour name is too long."]
    alone = _noted([], "Your name is too long.")
    assert [t.message for t in alone] == ["Your name is too long."]
