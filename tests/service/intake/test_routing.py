"""Which games a mail's sender is looked up in: for a mail naming one of
theirs, that game alone (a player in many games costs what one in one does);
else every game they sat in, for the default game and the "which game" answer."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from referee.mail.inbound import parse_message
from referee.service.intake.letter import Letter
from referee.store import models as m
from tests.test_referee import ALICE, REF, Club


def mail(subject: str) -> bytes:
    return (f"From: {ALICE}\r\nTo: {REF}\r\nSubject: {subject}\r\n"
            "Message-ID: <r1@club.test>\r\n\r\nbid 1\r\n").encode()


def test_a_mail_naming_a_game_of_the_sender_looks_up_that_game_alone(tmp_path: Path) -> None:
    club = Club(tmp_path)
    tags = [club.referee.operator.create_game("goofspiel", [ALICE, f"p{i}@club.test"],
                                     now=club.now, seed=f"s{i}") for i in range(4)]
    other = club.referee.operator.create_game("goofspiel", ["x@club.test", "y@club.test"],
                                     now=club.now, seed="x")
    referee = club.referee
    routing = referee.intake.chain.routing
    with club.referee.sessions() as db:
        alice = db.scalars(select(m.Player).where(m.Player.address == ALICE)).one()

        def looked_up(subject: str) -> list[str]:
            msg = parse_message(mail(subject), referee_address=REF)
            letter = Letter.read(msg, m.Inbound(), club.now, referee.config,
                                 referee.delivery.addresses, referee.composer)
            return [g.tag for g in routing.games_of(db, alice, letter.tag)]

        assert looked_up(f"[{tags[2]}] my bid") == [tags[2]]
        assert looked_up("my bid") == tags  # no game named: all of hers
        assert looked_up(f"[{other}] my bid") == tags  # not hers: all of hers
    club.referee.close()
