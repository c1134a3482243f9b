"""Issue 37: what each game leaves forced (``Game.forced_action``) and the
standing orders it takes (``parse_order``, ``follow_orders``), engine alone."""

from __future__ import annotations

import pytest

from referee.games.base import Action, ParseError, SeatInfo
from referee.games.bidding.rules import BiddingState
from referee.games.draws import KeyedDraws
from referee.games.goofspiel import Goofspiel
from referee.games.miser import Miser
from referee.games.pure_skill import PureSkill
from referee.games.spades import Spades
from referee.games.spades.rules import SpadesState

NAMES = ("Ann", "Ben", "Cat", "Dan")
SEATS = [SeatInfo(p, n) for p, n in enumerate(NAMES, start=1)]
#: Ann leads; Ben holds one heart (3H) and Cat none.
DEAL = [
    "AH KH QH JH 2C 7C AD 10D 2S 4S 6S 7S 9S",
    "3H AC KC QC JC 2D KD AS 5S 8S 10S 3S 4D",
    "5C 6C 8C 10C 3D 5D 6D QS KS JS 7D 8D 9D",
    "2H 4H 5H 6H 7H 8H 9H 10H 3C 4C 9C JD QD",
]


def spades_playing() -> tuple[Spades, SpadesState]:
    """A game whose bidding is done: Ann to lead trick 1."""
    game = Spades(deals=[DEAL], seating=[1, 2, 3, 4])
    draws = KeyedDraws("standing")
    state = game.new({"target": 500}, SEATS, draws).state
    for seat in (1, 2, 3, 4):
        state = game.apply(state, seat, Action("bid", (3,)), draws).state
    assert state.phase == "playing" and state.turn == 0
    return game, state


def play(game: Spades, state: SpadesState, seat: int, card: str) -> SpadesState:
    return game.apply(state, seat, Action("play", (card,)), KeyedDraws("standing")).state


def test_spades_the_one_card_of_the_suit_led_is_not_forced() -> None:
    """Ruling SP-21: Ben's one heart waits for him, as any card would:
    played at once, it would tell the table he holds no other heart."""
    game, state = spades_playing()
    assert game.forced_action(state, 1) is None  # a lead is free
    state = play(game, state, 1, "AH")
    assert state.hands[1].count("3H") == 1 and sum(c[-1] == "H" for c in state.hands[1]) == 1
    assert game.forced_action(state, 2) is None
    state = play(game, state, 2, "3H")
    assert game.forced_action(state, 3) is None  # Cat holds no heart: any card


def test_spades_the_last_card_is_forced_and_said() -> None:
    """Ruling SP-21: the last card of a hand plays itself, led or not."""
    game, state = spades_playing()
    state.hands[0] = ["AH"]
    forced = game.forced_action(state, 1)
    assert forced is not None and forced.action == Action("play", ("AH",))
    assert forced.text == f"{state.names[0]} had one card left: A♥ played for them."
    assert game.forced_action(state, 2) is None  # not Ben's turn
    state = play(game, state, 1, "AH")
    state.hands[1] = ["3H"]
    forced = game.forced_action(state, 2)
    assert forced is not None and forced.action == Action("play", ("3H",))


def test_spades_nothing_is_forced_in_the_bidding() -> None:
    game = Spades(deals=[DEAL], seating=[1, 2, 3, 4])
    state = game.new({"target": 500}, SEATS, KeyedDraws("s")).state
    assert game.forced_action(state, 1) is None


@pytest.mark.parametrize(("line", "order"), [
    ("play 2H if hearts led", {"kind": "if", "cards": ["2H"], "suit": "H",
                               "text": "play 2♥ if hearts are led"}),
    ("play the Q♥ if a heart is led", {"kind": "if", "cards": ["QH"], "suit": "H",
                                       "text": "play Q♥ if hearts are led"}),
    ("play low", {"kind": "low", "text": "play low"}),
    ("play 2H, 3H then 4D", {"kind": "list", "cards": ["2H", "3H", "4D"],
                             "text": "play 2♥, 3♥, 4♦"}),
    ("play QH", None),  # a move, not an order
    ("play queen of hearts", None),
    ("bid 4", None),
])
def test_spades_orders_are_read(line: str, order: object) -> None:
    assert Spades().parse_order(line) == order


@pytest.mark.parametrize("line", ["play 2X if hearts led", "play 2H if trumps led",
                                  "play 2H, 2H"])
def test_spades_an_order_written_wrong_is_refused(line: str) -> None:
    with pytest.raises(ParseError):
        Spades().parse_order(line)


def test_spades_an_order_if_a_suit_is_led_waits_for_that_suit() -> None:
    game, state = spades_playing()
    order = game.parse_order("play KD if diamonds led")
    # Ben: not his turn yet, the order waits (and is stamped with its round).
    followed = game.follow_orders(state, 2, [order])
    assert followed.action is None and followed.dropped == []
    assert followed.left == [{**order, "round": 1}]
    state = play(game, state, 1, "AH")
    followed = game.follow_orders(state, 2, followed.left)
    assert followed.action is None and len(followed.left) == 1  # hearts led, not diamonds


def test_spades_an_order_that_would_misplay_is_dropped_never_played() -> None:
    game, state = spades_playing()
    state = play(game, state, 1, "AH")
    # Ben holds 3H: AS to a heart lead would be a revoke.
    followed = game.follow_orders(state, 2, [game.parse_order("play AS if hearts led")])
    assert followed.action is None and followed.left == []
    assert followed.dropped == ["play A♠ if hearts are led: hearts were led and you hold "
                                "hearts, so A♠ would be a misplay (rule 3)."]


def test_spades_play_low_and_a_list_play_as_the_turn_comes() -> None:
    game, state = spades_playing()
    followed = game.follow_orders(state, 1, [game.parse_order("play low")])
    assert followed.action == Action("play", ("2C",)) and followed.left == []
    listed = game.parse_order("play JH, 2C")
    followed = game.follow_orders(state, 1, [listed])
    assert followed.action == Action("play", ("JH",))
    assert [o["cards"] for o in followed.left] == [["2C"]]
    state = play(game, state, 1, "JH")
    # A card no longer held drops the order, at any time.
    followed = game.follow_orders(state, 1, [game.parse_order("play JH, 2C")])
    assert followed.dropped == ["play J♥, 2♣: J♥ is not in your hand."]


def test_spades_orders_of_a_round_over_are_dropped() -> None:
    game, state = spades_playing()
    order = {**game.parse_order("play low"), "round": 0}
    assert game.follow_orders(state, 1, [order]).dropped == ["play low: round 0 is over."]


def bidding(game: Goofspiel | PureSkill) -> BiddingState:
    options = game.parse_options({"prize_order": "5,1,6,4,3,2", "cards": "6",
                                 "players": "2"})
    return game.new(options, SEATS[:2], KeyedDraws("b")).state


def test_a_standing_bid_is_made_in_the_round_of_its_prize() -> None:
    game = Goofspiel()
    state = bidding(game)
    assert state.prize == 5 and game.forced_action(state, 1) is None
    order = game.parse_order("bid 6 if prize 6")
    assert order == {"kind": "if_prize", "bid": [6], "prize": 6,
                     "text": "bid 6 if the prize is 6"}
    followed = game.follow_orders(state, 1, [order])
    assert followed.action is None and followed.left == [order]
    draws = KeyedDraws("b")
    for prize_round in (1, 2):  # rounds of the prizes 5 and 1
        for seat in (1, 2):
            state = game.apply(state, seat, Action("bid", (prize_round,)), draws).state
    assert state.prize == 6
    followed = game.follow_orders(state, 1, [order])
    assert followed.action == Action("bid", (6,)) and followed.left == []


def test_a_standing_bid_whose_card_is_gone_is_dropped() -> None:
    game = PureSkill()
    state = bidding(game)
    order = game.parse_order("bid 2 if prize 6")
    for seat in (1, 2):
        state = game.apply(state, seat, Action("bid", (2,)), KeyedDraws("b")).state
    followed = game.follow_orders(state, 1, [order])
    assert followed.left == [] and followed.dropped == [
        "bid 2 if the prize is 6: 2 is no longer in your pack."]


def test_miser_passes_for_the_next_turns_as_they_come() -> None:
    game = Miser()
    options = game.parse_options({})
    state = game.new(options, SEATS[:3], KeyedDraws("m")).state
    order = game.parse_order("pass next 2")
    assert order == {"kind": "pass", "count": 2, "text": "pass next 2 turns"}
    first = state.seats[state.turn]
    other = next(s for s in state.seats if s != first)
    assert game.follow_orders(state, other, [order]).action is None
    followed = game.follow_orders(state, first, [order])
    assert followed.action == Action("pass")
    assert followed.left == [{"kind": "pass", "count": 1, "text": "pass next turn"}]
    assert game.forced_action(state, first) is None  # nothing in Miser is forced


@pytest.mark.parametrize("game", [Goofspiel(), PureSkill(), Miser()])
def test_a_game_reads_no_move_as_an_order(game: Goofspiel | PureSkill | Miser) -> None:
    assert game.parse_order("bid 3") is None
    assert game.parse_order("pass") is None
