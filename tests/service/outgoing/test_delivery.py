"""Decide, then do: what a batch of play decided is one frozen value
(``Decision``) that its caller hands to ``Delivery.deliver``, which reads
nothing else of the game; a seat's context is in it only when a notice (or
the answer) is addressed to that seat."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.games.base import Audience, Notice
from referee.service.outgoing import delivery
from referee.service.outgoing.delivery import Answer, Decision, Delivery
from referee.service.play.session import GameSession
from referee.store import models as m
from tests.test_referee import BOB, Club, new_goofspiel


def test_the_decision_and_the_answer_are_frozen_and_deliver_takes_only_the_decision() -> None:
    assert dataclasses.is_dataclass(Decision) and Decision.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(Answer) and Answer.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert list(inspect.signature(Delivery.deliver).parameters) == ["self", "db", "decision"]
    # Nothing for the play wing to meet: no protocol the game is read through.
    assert not hasattr(delivery, "Table")


def test_a_decision_holds_the_context_of_the_seats_addressed_and_no_other(
        tmp_path: Path) -> None:
    club = Club(tmp_path)
    tag = new_goofspiel(club)
    club.poll()
    ref = club.referee
    with ref.sessions.begin() as db:
        game = db.scalars(select(m.Game).where(m.Game.tag == tag)).one()
        gs = GameSession(ref.config, ref.composer, db, game, club.now)
        gs.notices.append(Notice(Audience.only(2), "secret_shown", {
            "shown_subject": "a hand", "shown_to": "the list"}))
        decision = gs.decide()
        assert set(decision.contexts) == {2}
        assert decision.contexts[2]["seat_name"] == "Bob"
        assert decision.notices[0].template == "secret_shown"
        assert gs.notices == []  # the batch is done: the next starts empty
        with pytest.raises(dataclasses.FrozenInstanceError):
            decision.turn = 3  # type: ignore[misc]
        with pytest.raises(TypeError):
            decision.contexts[1] = {}  # type: ignore[index]
        ref.delivery.deliver(db, decision)
    mails = club.poll()
    assert len(mails) == 1 and BOB in str(mails[0]["To"])  # Bob alone
    ref.close()
