"""The test kit for a game: the contract the built-in games pass, for any
game, from its author's own pytest (docs/plugins.md).

In a game package's tests::

    from referee.testing import Contract, contract_tests

    CONTRACT = Contract(setups=(({}, 2), ({"cards": "7"}, 4)),
                        secrets=my_secrets, hide=my_hide)
    TestContract = contract_tests(MyGame, CONTRACT)

runs, over seeded random playouts driven the way the service drives a game:
replay from the seed and the action log, ``pending`` empty exactly when
over, every timeout and bot move legal, no secret in a view or notice for
anyone else, ``apply`` pure, every playout ending; and a whole game by mail
through the real referee (Maildir and SQLite), whose mails to each player
and public pages hold no secret of another seat, whose audit holds, and
which a player verifies from their own mailbox (``referee verify TAG
--mail``, the game's ``Game.mail_check``); and a game started by mail as
a club starts one, ``new KIND`` and joins filling the table.

:func:`check_game`, :func:`play_by_mail` and :func:`start_by_mail` are
the same checks as plain functions. Nothing here is imported by the referee itself, and nothing
here imports pytest: a test class is a plain class to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.games.base import Game
from referee.testing.club import (
    Club,
    MailGame,
    MailStart,
    play_by_mail,
    player,
    registered,
    start_by_mail,
)
from referee.testing.contract import (
    INVARIANTS,
    Contract,
    Findings,
    Knowing,
    Playout,
    Secret,
    Secrets,
    card_names,
    caught,
    check_game,
    deal_again,
    no_secrets,
    nothing_hidden,
)

__all__ = [
    "INVARIANTS",
    "Club",
    "Contract",
    "Findings",
    "Knowing",
    "MailGame",
    "MailStart",
    "Playout",
    "Secret",
    "Secrets",
    "card_names",
    "caught",
    "check_game",
    "contract_tests",
    "deal_again",
    "no_secrets",
    "nothing_hidden",
    "play_by_mail",
    "player",
    "registered",
    "start_by_mail",
]


def contract_tests(game: type[Game[Any]] | Game[Any], contract: Contract) -> type:
    """A pytest test class that checks ``game`` (a Game subclass or an
    engine) against ``contract``: one test per invariant, a whole game
    by mail, and a game started by mail. Assign it to a name starting with
    ``Test`` in a test module."""
    engine = game() if isinstance(game, type) else game
    findings: list[Findings] = []

    def found(invariant: str) -> list[str]:
        if not findings:  # every playout runs once, for all the tests
            findings.append(check_game(engine, contract))
        return findings[0].found[invariant]

    def invariant_test(invariant: str, doc: str) -> Any:
        def test(self: Any) -> None:
            problems = found(invariant)
            assert not problems, "\n".join(problems)

        test.__name__ = f"test_{invariant}"
        test.__doc__ = doc
        return test

    def test_a_whole_game_plays_by_mail(self: Any, tmp_path: Path) -> None:
        """Played to its end by Maildir through the referee: no mail to a
        player and no public page shows another seat's secret; the audit
        (replay from the seed and the action log) holds; a player's mailbox
        verifies (``referee verify TAG --mail``)."""
        played = play_by_mail(engine, contract, tmp_path)
        assert not played.problems, "\n".join(played.problems)
        assert played.status != "active"

    def test_a_game_starts_by_mail(self: Any, tmp_path: Path) -> None:
        """Started as a club starts it (:func:`start_by_mail`): ``new KIND``
        opens a table, the players' joins fill it, the game starts with
        them and every one is told."""
        started = start_by_mail(engine, contract, tmp_path)
        assert not started.problems, "\n".join(started.problems)

    docs = {
        "replay": "Replaying the seed and the action log gives the same state.",
        "pending": "pending() is empty exactly when the game is over.",
        "legal": "Every timeout_action and bot_action of a pending obligation applies.",
        "secrets": "No view or notice shows a secret to anyone it is not for.",
        "pure": "apply() never changes the state it is given.",
        "ends": "Every playout ends within its bound of steps.",
    }
    body: dict[str, Any] = {f"test_{i}": invariant_test(i, docs[i]) for i in INVARIANTS}
    body["test_a_whole_game_plays_by_mail"] = test_a_whole_game_plays_by_mail
    body["test_a_game_starts_by_mail"] = test_a_game_starts_by_mail
    body["engine"] = engine
    body["contract"] = contract
    return type(f"Test{type(engine).__name__}Contract", (), body)
