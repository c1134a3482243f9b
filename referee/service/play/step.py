"""The play step: a mail's command lines run against its sender's seat, the
game settled, then the answer and the reports they caused. Intake runs it
once its chain has judged that the mail is to be played (the game loaded,
the seat found or made), and judges between :meth:`Step.play` and
:meth:`Step.tell` whether the mail is answered (its sender's budgets, talk).

Runs inside intake's transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from referee.games.base import Scope
from referee.mail.inbound import InboundMessage
from referee.service.outgoing.delivery import Answer, Delivery
from referee.service.play.commands import (
    MAX_LISTED,
    TranscriptLine,
    closing_help,
    done_line,
    run_commands,
)
from referee.service.play.session import GameSession
from referee.store import models as m


@dataclass(frozen=True)
class Played:
    """What one mail's command lines did: the game as they left it, settled
    (its notices not yet sent), the sender's seat, and the transcript.
    ``note``: the joiner's name was shortened, said in the join's line."""

    gs: GameSession
    seat: int
    transcript: list[TranscriptLine]
    note: str | None


class Step:
    """Plays one mail's command lines, then tells what they caused."""

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery

    def load(self, db: Session, game: m.Game, now: datetime) -> GameSession:
        """The game the mail is for, loaded to be played."""
        return GameSession(self.delivery.config, self.delivery.composer, db, game, now)

    @staticmethod
    def play(gs: GameSession, seat: int, note: str | None, lines: Sequence[str],
             scope: Scope, seen_by: frozenset[int], inbound_id: int,
             answers: Sequence[str], *, moves_only: bool) -> Played:
        """Run ``lines`` for ``seat`` (only their moves, ``moves_only``),
        then let the bots move and store the game."""
        transcript = run_commands(gs, seat, lines, scope, seen_by, inbound_id, answers,
                                  moves_only=moves_only)
        if note is not None:  # the joiner's name was shortened: said in the join's line
            transcript = _noted(transcript, note)
        gs.settle()
        return Played(gs, seat, transcript, note)

    def tell(self, played: Played, player: m.Player | None, msg: InboundMessage) -> None:
        """Queue what the mail caused; with ``player``, the sender, the
        answer to their mail first (else the mail is not answered)."""
        gs, seat, transcript = played.gs, played.seat, played.transcript
        if player is None:
            self.delivery.deliver(gs.db, gs.decide())
            return
        # What the player can write now, after a refusal or a line not read
        # (for a bid, the cards they still hold; PS-7), unless it was asked.
        helped = closing_help(gs, seat, transcript)
        # An answer that only says "done" rides with the mail the moves
        # caused for the player, or is a receipt of its own in this pass
        # (``receipt``), whatever their mail mode (issue 37).
        done = done_line(transcript) if helped is None and played.note is None else None
        answer = Answer(player, msg, seat, {
            "lines": [t.__dict__ for t in transcript[:MAX_LISTED]],
            "more": max(len(transcript) - MAX_LISTED, 0),
            "help": helped,
            "over": gs.engine.is_over(gs.state) or gs.row.status != "active",
        }, done=done, wait=gs.others_owe(seat),
            receipt=None if done is None else receipt(gs, seat))
        # The answer first, then what it caused.
        self.delivery.deliver(gs.db, gs.decide(answer))


def receipt(gs: GameSession, seat: int) -> dict[str, Any]:
    """What a receipt of ``seat``'s moves in this session says: the game's
    words (``Game.receipt``, from the game as they left it) and the next
    deadline a view for everyone shows."""
    moves = [action for s, action in gs.moves if s == seat]
    return {"receipt": gs.engine.receipt(gs.state, seat, moves),
            "next_due": gs.context(None)["deadline"]}


def _noted(transcript: list[TranscriptLine], note: str) -> list[TranscriptLine]:
    """``transcript`` with ``note`` said after what its join came to, or
    as a line of its own before it if no line joined."""
    for i, line in enumerate(transcript):
        if line.read_as.split()[:1] == ["join"]:
            noted = dataclasses.replace(line, message=f"{line.message}\n{note}")
            return [*transcript[:i], noted, *transcript[i + 1:]]
    return [TranscriptLine("", "", "applied", note), *transcript]
