"""High Card's own tests: a few of its rules, and the referee's contract
run by the test kit (``referee.testing``), as the built-in games run it."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from pbm_highcard import HighCard

from referee.games.base import JSON, Action, IllegalAction, Scope, ScopeError, SeatInfo
from referee.games.draws import KeyedDraws
from referee.testing import (
    Contract,
    Knowing,
    Secrets,
    card_names,
    caught,
    contract_tests,
    deal_again,
    play_by_mail,
    registered,
)
from referee.verify_mail import verify_mailbox


def secrets(state: JSON) -> Secrets:
    """A hand is its seat's alone, and so is the card it sealed this round."""
    return {seat: card_names([*hand, *([state["sealed"][str(seat)]]
                                       if str(seat) in state["sealed"] else [])])
            for seat, hand in enumerate(state["hands"], start=1)}


def hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """The hands and sealed cards of the seats not knowing, dealt again."""
    s = {**state, "hands": [list(h) for h in state["hands"]], "sealed": dict(state["sealed"])}
    unknown = [seat for seat in range(1, len(s["hands"]) + 1) if seat not in knowing]
    sealed = [[s["sealed"][str(seat)]] for seat in unknown if str(seat) in s["sealed"]]
    deal_again(rng, [*(s["hands"][seat - 1] for seat in unknown), *sealed])
    for seat, card in zip([x for x in unknown if str(x) in s["sealed"]], sealed, strict=True):
        s["sealed"][str(seat)] = card[0]
    return s


CONTRACT = Contract(setups=(({}, 2), ({"cards": "3"}, 4), ({"cards": "10"}, 5)),
                    playouts=8, steps=400, secrets=secrets, hide=hide)

# The whole contract: playouts, and a game by Maildir through the referee.
TestContract = contract_tests(HighCard, CONTRACT)


def started(players: int = 2, cards: str = "3") -> Any:
    game = HighCard()
    seats = [SeatInfo(n, f"P{n}") for n in range(1, players + 1)]
    return game, game.new(game.parse_options({"cards": cards}), seats, KeyedDraws("t")).state


def test_the_highest_card_takes_the_round_and_the_most_rounds_win() -> None:
    game, state = started()
    state.hands = [["AS", "2C", "3C"], ["AH", "KS", "4D"]]
    for cards in (("AS", "AH"), ("2C", "KS"), ("3C", "4D")):
        for seat, card in enumerate(cards, start=1):
            state = game.apply(state, seat, Action("play", (card,)), KeyedDraws("t")).state
    assert state.over and state.taken == [1, 2]
    assert game.summary(state)["result"] == "P2 wins"


def test_a_card_is_sealed_one_a_round_from_the_hand() -> None:
    game, state = started()
    card = state.hands[0][0]
    assert game.parse("Play the queen of hearts!") == Action("play", ("QH",))
    with pytest.raises(ScopeError):
        game.accepts(Action("play", (card,)), Scope.PUBLIC)
    with pytest.raises(IllegalAction, match="You hold no"):
        game.apply(state, 1, Action("play", (state.hands[1][0],)), KeyedDraws("t"))
    state = game.apply(state, 1, Action("play", (card,)), KeyedDraws("t")).state
    with pytest.raises(IllegalAction, match="already"):
        game.apply(state, 1, Action("play", (state.hands[0][0],)), KeyedDraws("t"))


def test_a_card_played_at_the_deadline_is_said_sealed_to_the_table_named_to_its_seat() -> None:
    game, state = started()
    action = game.timeout_action(state, 1, KeyedDraws("t"))
    said = game.deadline_move(state, 1, action, game.apply(state, 1, action, KeyedDraws("t")))
    assert said.told("P1") == ("No card came from P1 by the deadline: the referee played a card "
                               "drawn at random from their hand for them, by the house rule for "
                               "silent players.")
    assert said.done_for_you() == (f"the referee played {action.args[0]} for you, drawn at "
                                   "random from your hand, by the house rule for silent players")


def test_the_kit_catches_a_view_that_shows_the_hands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The secrets check can fail: a public view with every hand in it."""
    leaky = HighCard()
    view = leaky.view
    monkeypatch.setattr(leaky, "view", lambda state, seat: {**view(state, seat),
                                                            "hands": state.hands})
    assert caught(leaky, CONTRACT)


def test_the_kit_catches_a_mail_that_shows_another_hand(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The game by mail can fail too: each hand mail with every hand in it."""
    leaky = HighCard()
    view = leaky.view
    monkeypatch.setattr(leaky, "view", lambda state, seat: {
        **view(state, seat), "hand": [c for h in state.hands for c in h]})
    assert play_by_mail(leaky, CONTRACT, tmp_path).problems


def test_a_player_verifies_the_game_from_their_mailbox(tmp_path: Path) -> None:
    """Played by mail, the game is verified from a player's own mailbox
    (``referee verify TAG --mail``): High Card declares no draws of its own
    to read, so the seed its last report reveals opens the opening's
    commitment. A mailbox whose revealed seed is another fails."""
    played = play_by_mail(HighCard(), CONTRACT, tmp_path)
    assert not played.problems, "\n".join(played.problems)
    box = tmp_path / "player1.mbox"  # the kit gathered player 1's mail here
    engine = HighCard()
    with registered(engine):  # as if installed: the kind names its engine
        assert verify_mailbox(played.tag, box) == []
        forged = tmp_path / "forged.mbox"
        forged.write_text(re.sub(r"^  seed: .+$", "  seed: not-the-seed", box.read_text("utf-8"),
                                 flags=re.M), encoding="utf-8")
        found = verify_mailbox(played.tag, forged)
    assert any("does not open the commitment" in p for p in found), found
