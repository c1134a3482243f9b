"""Which new mail a pass reads first, from its headings alone: a player's
(from their address, to a private reply address of theirs, naming a game
in progress) before anyone else's."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from referee.mail.inbound import Heading
from referee.store import models as m
from tests.test_referee import ALICE, Club, new_goofspiel


def test_mail_to_a_seats_private_address_is_a_players_whoever_sent_it(
        tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = new_goofspiel(club)
    club.poll()
    triage = club.referee.intake.triage
    addresses = club.referee.delivery.addresses
    with club.referee.sessions.begin() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None
        seat = game.seats[0]
        private = addresses.private_address(seat.player, game)
        player_wide = addresses.private_address(seat.player)
    assert private != player_wide
    unknown = "referee+0123456789abcdef@" + private.partition("@")[2]
    stranger = "someone@elsewhere.example"
    assert triage.players_mail([
        Heading(stranger, (private,), None),
        Heading(stranger, (player_wide,), None),
        Heading(stranger, (unknown,), None),
        Heading(stranger, (), tag),
        Heading(stranger, (), "goofspiel-99"),
        Heading(ALICE, (), None),
    ]) == [True, True, False, True, False, True]
    club.referee.close()
