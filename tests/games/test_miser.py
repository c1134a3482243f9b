"""Tests of the Miser engine against rule text 004 and rulings MI-1 … MI-15."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import get_game
from referee.games.base import (
    Action,
    AmbiguousAction,
    Audience,
    IllegalAction,
    Notice,
    OptionError,
    ParseError,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
)
from referee.games.cards import RANKS, full_deck
from referee.games.draws import KeyedDraws, SequentialDraws
from referee.games.miser import Miser
from referee.games.miser.rules import MiserState, card_value
from referee.games.miser.words import read_attack, read_contract
from referee.mail.compose import Composer
from tests.games.seeded import seeded

NAMES = ("Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy")
ANN, BEN, CAT, DAN = 1, 2, 3, 4  # seat positions; players 1-4 in seat order


def seats(n: int) -> list[SeatInfo]:
    return [SeatInfo(i, NAMES[i - 1] if i <= len(NAMES) else f"Player {i}")
            for i in range(1, n + 1)]


def made(hands: Sequence[str], pennies: Sequence[int] | None = None, *, turn: int = 0,
         centre: int = 0) -> MiserState:  # fmt: skip
    """A state in the middle of a game: these hands (player 1 first), these
    purses, the turn of player ``turn`` (0-based)."""
    n = len(hands)
    return MiserState(
        seats=list(range(1, n + 1)),
        names=list(NAMES[:n]),
        pennies_each=20,
        wager_cap=3,
        first=0,
        draws=[],
        removed=[],
        hands=[h.split() for h in hands],
        pennies=list(pennies or [20] * n),
        turn=turn,
        centre=centre,
    )


class Table:
    """A game in progress, with every result kept for inspection."""

    def __init__(self, state: MiserState, seed: str = "t") -> None:
        self.game = Miser()
        self.state = state
        self.seed = seed
        self.step = 0
        self.results: list[Result[MiserState]] = []

    def act(self, seat: int, text: str, scope: Scope | None = None,
            seen_by: Iterable[int] = ()) -> Result[MiserState]:  # fmt: skip
        action = self.game.parse(text)
        assert action is not None, text
        if scope is not None:
            self.game.accepts(action, scope)
            action = Action(action.verb, action.args, scope, frozenset(seen_by))
        return self.apply(seat, action)

    def apply(self, seat: int, action: Action) -> Result[MiserState]:
        self.step += 1
        result = self.game.apply(self.state, seat, action, KeyedDraws(self.seed))
        self.state = result.state
        self.results.append(result)
        return result

    def pennies(self) -> list[int]:
        return list(self.state.pennies)

    @property
    def last(self) -> Result[MiserState]:
        return self.results[-1]


def only(result: Result[MiserState], template: str) -> Notice:
    (notice,) = [n for n in result.notices if n.template == template]
    return notice


def report(result: Result[MiserState]) -> dict[str, Any]:
    return dict(only(result, "round_report").context["report"])


_CARD_RE = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AKQJT])[SHDC♠♥♦♣](?![A-Za-z])")
_SPELLINGS = {
    f"{rank}{suit}": f"{r}{s}"
    for r in RANKS
    for rank in ({r, "T"} if r == "10" else {r})
    for s, symbol in zip("SHDC", "♠♥♦♣", strict=True)
    for suit in (s, symbol)
}


def cards_named(value: Any) -> set[str]:
    """Every card written anywhere in ``value``, as ``QH``, ``Q♥`` or ``TH``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return {_SPELLINGS[m] for m in _CARD_RE.findall(text)}


def hidden_cards(state: MiserState) -> set[str]:
    """The cards nobody but their holder may know: hands, face-down cards,
    and the cards removed before the deal."""
    hidden = {c for hand in state.hands for c in hand} | set(state.removed)
    if state.contract is not None:
        hidden |= {c for c in state.contract.cards if c}
    if state.attack is not None:
        hidden |= {c for side in state.attack.cards for c in side}
    return hidden


def all_cards(state: MiserState) -> list[str]:
    cards = [c for hand in state.hands for c in hand] + state.slush + state.removed
    if state.contract is not None:
        cards += [c for c in state.contract.cards if c]
    if state.attack is not None:
        cards += [c for side in state.attack.cards for c in side]
    if state.auction is not None:
        cards += [b.card for b in state.auction.bids]
    return cards


def assert_no_public_leak(result: Result[MiserState]) -> None:
    """MI-14: no public notice or event names a card in a hand, face down
    or removed; a notice to some seats names only cards its seats may see."""
    state = result.state
    hidden = hidden_cards(state)
    for notice in result.notices:
        # The draw for first player was shown before the deck was reshuffled.
        context = {k: v for k, v in notice.context.items() if k != "draws"}
        if notice.audience.public:
            assert not cards_named(context) & hidden, notice.template
            assert "you" not in notice.context, notice.template
        else:
            own: set[str] = set()
            for seat in notice.audience.seats:
                player = state.seats.index(seat)
                own |= set(state.hands[player]) | {d["card"] for d in _you_down(state, player)}
            assert not cards_named(context) & (hidden - own), notice.template
    for event in result.events:
        if event.public and event.kind != "draw":
            assert not cards_named([event.text, dict(event.data)]) & hidden, event.kind
    assert not cards_named(Miser().view(state, None)) & hidden


def _you_down(state: MiserState, player: int) -> list[dict[str, Any]]:
    down = Miser().view(state, state.seats[player])["you"]["down"]
    return list(down)


# -- options and setup (MI-1, MI-2, MI-3) --------------------------------------------


def test_options_default_to_the_rule_text() -> None:
    game = Miser()
    assert game.parse_options({}) == {"pennies": 20, "wager": 3, "bot": "sensible"}
    assert game.parse_options({"pennies": "30", "wager": "2"}) == {
        "pennies": 30, "wager": 2, "bot": "sensible"}
    assert game.seat_count({}) == (3, 52)  # ruling MI-1: as many as the deck deals
    assert get_game("miser").title == "Miser"
    assert Miser.demo_with_bots


@pytest.mark.parametrize("raw", [{"pennies": "lots"}, {"wager": "0"}, {"deadline": "3"}])
def test_bad_options_are_refused_by_name(raw: dict[str, str]) -> None:
    with pytest.raises(OptionError, match=next(iter(raw))):
        Miser().parse_options(raw)


@pytest.mark.parametrize("n", [2, 53])
def test_mi_1_miser_needs_three_players_and_a_card_for_each(n: int) -> None:
    with pytest.raises(OptionError, match=r"3 to 52 players: 3 or more .* each at least one card"):
        Miser().new(Miser().parse_options({}), seats(n), seeded(0))


@pytest.mark.parametrize("n", [*range(3, 11), 17, 26, 51, 52])
def test_mi_1_52_mod_n_cards_are_removed_face_down_and_the_rest_dealt_equally(n: int) -> None:
    game = Miser()
    result = game.new(game.parse_options({}), seats(n), KeyedDraws("deal"))
    state = result.state
    assert len(state.removed) == 52 % n
    assert {len(h) for h in state.hands} == {52 // n}
    assert sorted(all_cards(state)) == sorted(str(c) for c in full_deck())
    opening = only(result, "opening")
    assert opening.context["removed_count"] == 52 % n
    assert opening.context["hand_size"] == 52 // n
    assert_no_public_leak(result)  # the removed cards stay secret
    hands = [n for n in result.notices if n.template == "hand"]
    assert sorted(s for h in hands for s in h.audience.seats) == list(range(1, n + 1))
    for notice in hands:
        (seat,) = notice.audience.seats
        assert not notice.audience.public
        assert set(notice.context["you"]["hand"]) == set(state.hands[seat - 1])


def test_mi_2_the_highest_draw_goes_first_and_ties_draw_again() -> None:
    game = Miser()
    ties = 0
    for seed in range(60):
        result = game.new(game.parse_options({}), seats(5), KeyedDraws(str(seed)))
        state = result.state
        drawing = set(range(5))
        for row in state.draws:
            assert {p for p, c in enumerate(row) if c} == drawing
            best = max(RANKS.index(str(row[p])[:-1]) for p in drawing)
            drawing = {p for p in drawing if RANKS.index(str(row[p])[:-1]) == best}
        assert drawing == {state.first}
        assert state.turn == state.first
        ties += len(state.draws) > 1
        opening = only(result, "opening").context
        assert opening["first"] == NAMES[state.first]
        assert len(opening["draws"]) == len(state.draws)
        (event,) = [e for e in result.events if e.kind == "draw"]
        assert event.public and NAMES[state.first] in event.text
    assert ties  # some seed drew a tie, and it was drawn again


FIXED_HANDS = [
    "KD KS QH 10C 10H 10S 9C 9H 8C 8S 7C 7H 6C 6H 4C 4D 4S",
    "AD KC KH JS 10D 8D 7D 7S 6S 5D 5H 5S 4H 3C 3H 3S 2D",
    "AC AH AS QC QD QS JC JH 9D 9S 8H 6D 5C 3D 2C 2H 2S",
]


def test_a_test_may_fix_the_deal_and_the_draw() -> None:
    game = Miser(deal=[h.split() for h in FIXED_HANDS], draw=["5h", "K♠", "9C"])
    result = game.new(game.parse_options({}), seats(3), KeyedDraws("fixed"))
    state = result.state
    assert [" ".join(h) for h in state.hands] == FIXED_HANDS
    assert state.removed == ["JD"]  # the card left out of the deal, removed face down
    assert state.draws == [["5H", "KS", "9C"]] and state.first == state.turn == 1
    assert only(result, "opening").context["first"] == "Ben"
    assert_no_public_leak(result)
    # Without the hook, the engine deals as it always did.
    plain = Miser().new(Miser().parse_options({}), seats(3), KeyedDraws("fixed")).state
    again = Miser().new(Miser().parse_options({}), seats(3), KeyedDraws("fixed")).state
    assert plain == again and plain.hands != state.hands


@pytest.mark.parametrize(("deal", "draw", "message"), [
    (["KD KS", "AD KC", "AC AH"], None, "17 cards"),
    ([FIXED_HANDS[0]] * 3, None, "dealt twice"),
    (FIXED_HANDS[:2], None, "3 to 52"),
    (None, ["KS", "KH", "2C"], "one highest"),
    (None, ["KS", "ZZ", "2C"], "not a card"),
])  # fmt: skip
def test_a_fixed_deal_or_draw_that_cannot_be_is_refused(
    deal: list[str] | None, draw: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Miser(deal=[h.split() for h in deal] if deal else None, draw=draw)


def test_a_fixed_deal_for_another_number_of_players_is_refused_at_the_start() -> None:
    game = Miser(deal=[h.split() for h in FIXED_HANDS])
    with pytest.raises(OptionError, match="for 3 players"):
        game.new(game.parse_options({}), seats(4), KeyedDraws("fixed"))


def test_mi_3_play_moves_in_seat_order_from_the_first_player() -> None:
    game = Miser()
    odd = [SeatInfo(9, "Ann"), SeatInfo(2, "Ben"), SeatInfo(5, "Cat")]
    state = game.new(game.parse_options({}), odd, KeyedDraws("order")).state
    assert state.seats == [2, 5, 9] and state.names == ["Ben", "Cat", "Ann"]
    table = Table(state)
    order = []
    for _ in range(4):
        order.append(table.state.turn)
        (pending,) = table.game.pending(table.state)
        table.act(pending.seat, "pass")
    start = state.first
    assert order == [(start + i) % 3 for i in range(4)]


# -- passing (MI-4) and the out-of-cards rule (MI-5) ------------------------------------


def test_mi_4_a_pass_puts_3_pennies_in_the_centre_and_the_turn_moves_on() -> None:
    table = Table(made(["2S", "3S", "4S"], centre=1))
    result = table.act(ANN, "pass")
    assert table.pennies() == [17, 20, 20] and table.state.centre == 4
    assert report(result) == {"turn": 1, "kind": "pass", "name": "Ann", "paid": 3}
    assert table.state.turn == 1 and table.state.turn_number == 2
    assert only(result, "your_move").audience.seats == {BEN}


def test_mi_4_mi_10_a_knock_out_by_pass_ends_the_game() -> None:
    table = Table(made(["2S", "3S", "4S"], [2, 25, 23]))
    result = table.act(ANN, "pass")
    assert table.pennies() == [0, 25, 23] and table.state.centre == 2
    assert table.game.is_over(table.state)
    assert table.state.knocked_out == [0] and table.state.winners == [1]
    assert table.game.pending(table.state) == []
    subject, _ = Composer("referee@x.org", "Referee").render(
        "miser", "round_report", {**context_for(result.notices[0]), "tag": "miser-1"}
    )
    assert "GAME OVER" in subject and "Ben wins" in subject
    with pytest.raises(IllegalAction, match="over"):
        table.act(BEN, "pass")


def test_mi_5_a_player_with_no_cards_may_only_pass() -> None:
    table = Table(made(["", "3S 4H", "4S 5D"]))
    for line in ("attack ben 1", "contract with ben against cat 1 1", "bid 3S 1"):
        with pytest.raises(IllegalAction, match="only pass"):
            table.act(ANN, line)
    assert "passing is all you can do" in table.game.help(table.state, ANN)
    table.act(ANN, "pass")


def test_mi_5_a_player_with_no_cards_can_be_attacked_or_a_victim_but_not_a_partner() -> None:
    table = Table(made(["2S 3S", "3H", "", "4D"]))
    with pytest.raises(IllegalAction, match="no cards"):
        table.act(ANN, "contract with cat against ben 1 1")
    table.act(ANN, "contract with ben against cat 1 1")
    table.act(BEN, "accept")
    assert table.state.contract is not None and table.state.contract.stake == 2


def test_mi_5_a_player_with_no_cards_cannot_join_a_bid() -> None:
    table = Table(made(["2S 3S", "3H", "", "4D"], centre=5))
    table.act(ANN, "bid 2S 1")
    assert {p.seat for p in table.game.pending(table.state)} == {BEN, DAN}
    with pytest.raises(IllegalAction, match="only pass"):
        table.act(CAT, "bid 3H 1")


# -- contracts (MI-6, MI-11) -------------------------------------------------------------


def test_mi_6_a_contract_takes_the_wagers_and_the_victims_match_on_acceptance() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S", "5D"], centre=3))
    offer = table.act(ANN, "contract with ben against cat 2 3")
    assert only(offer, "offer").audience.public  # a public offer is answered to all
    assert table.pennies() == [20, 20, 20, 20]  # nothing moves before acceptance
    (pending,) = table.game.pending(table.state)
    assert (pending.seat, pending.key) == (BEN, "contract-1:accept")
    accepted = table.act(BEN, "accept")
    # The victim matches the sum, 5: matching is not wagering, so no cap of 3.
    assert table.pennies() == [18, 17, 15, 20] and table.state.centre == 3 + 10
    assert only(accepted, "contract").audience.public
    assert {n.audience.seats for n in accepted.notices if n.template == "your_move"} == {
        frozenset({ANN}),
        frozenset({BEN}),
    }
    keys = {(p.seat, p.key) for p in table.game.pending(table.state)}
    assert keys == {(ANN, "contract-1:card:1"), (BEN, "contract-1:card:2")}


def test_mi_6_the_higher_card_takes_the_whole_centre() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S", "5D"], centre=3))
    table.act(ANN, "contract with ben against cat 2 1")
    table.act(BEN, "accept")
    table.act(ANN, "down 2S", Scope.SECRET)
    with pytest.raises(IllegalAction, match="already down"):
        table.act(ANN, "down KS", Scope.SECRET)
    result = table.act(BEN, "down QH", Scope.SECRET)
    r = report(result)
    assert r["outcome"] == "won" and r["takers"] == ["Ben"] and r["pot"] == 9
    assert table.pennies() == [18, 28, 17, 20] and table.state.centre == 0
    assert sorted(table.state.slush) == ["2S", "QH"]
    assert table.state.turn == 1  # Ben's turn next


def test_mi_6_equal_values_split_the_whole_centre_and_the_odd_penny_stays() -> None:
    # K and 10 are equal values (MI-13), whatever was agreed.
    table = Table(made(["KS 2S", "10H 3H", "4S", "5D"], centre=4))
    table.act(ANN, "contract with ben against cat 1 2")
    table.act(BEN, "accept")  # the centre is 4 + 3 + 3 = 10
    table.act(BEN, "down 10H", Scope.SECRET)
    result = table.act(ANN, "down KS", Scope.SECRET)
    r = report(result)
    assert r["outcome"] == "split" and r["share"] == 5 and r["left"] == 0
    assert table.pennies() == [24, 23, 17, 20]
    table2 = Table(made(["KS 2S", "10H 3H", "4S", "5D"], centre=3))
    table2.act(ANN, "contract with ben against cat 1 2")
    table2.act(BEN, "accept")  # 3 + 3 + 3 = 9: 4 each and one stays
    table2.act(BEN, "down 10H", Scope.SECRET)
    table2.act(ANN, "down KS", Scope.SECRET)
    assert table2.pennies() == [23, 22, 17, 20] and table2.state.centre == 1


def test_mi_6_each_partner_plays_exactly_one_card() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S", "5D"]))
    table.act(ANN, "contract with ben against cat 1 1")
    table.act(BEN, "accept")
    with pytest.raises(IllegalAction, match="exactly one"):
        table.act(ANN, "down KS 2S", Scope.SECRET)
    with pytest.raises(IllegalAction, match="not a partner"):
        table.act(CAT, "down 4S", Scope.SECRET)
    with pytest.raises(IllegalAction, match="do not hold"):
        table.act(ANN, "down QH", Scope.SECRET)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("contract with ann against cat 1 1", "two other players"),
        ("contract with ben against ben 1 1", "cannot also be the victim"),
        ("contract with ben against cat 4 1", "1 to 3"),
        ("contract with ben against cat 1 0", "1 to 3"),
        ("contract with zed against cat 1 1", "no player 'zed'.*Ann"),
    ],
)
def test_mi_6_a_contract_needs_two_other_players_and_wagers_of_1_to_3(
    line: str, message: str
) -> None:
    table = Table(made(["KS", "QH", "4S", "5D"]))
    with pytest.raises(IllegalAction, match=message):
        table.act(ANN, line)


def test_mi_6_a_partner_cannot_wager_more_than_she_holds() -> None:
    table = Table(made(["KS", "QH", "4S"], [20, 2, 20]))
    with pytest.raises(IllegalAction, match="Ben has only 2"):
        table.act(ANN, "contract with ben against cat 1 3")


def test_mi_6_a_declined_offer_leaves_the_turn_player_to_choose_again() -> None:
    table = Table(made(["KS", "QH", "4S"]))
    table.act(ANN, "contract with ben against cat 1 1")
    with pytest.raises(IllegalAction, match="awaits Ben's answer"):
        table.act(ANN, "pass")
    with pytest.raises(IllegalAction, match="No contract offer"):
        table.act(CAT, "accept")
    result = table.act(BEN, "decline")
    assert only(result, "declined").context["lapsed"] is False
    assert table.pennies() == [20, 20, 20]
    (pending,) = table.game.pending(table.state)
    assert (pending.seat, pending.key) == (ANN, "turn-1.2")  # a fresh deadline
    table.act(ANN, "contract with cat against ben 1 1")
    assert [p.key for p in table.game.pending(table.state)] == ["contract-1.2:accept"]


def test_mi_11_a_victim_short_of_the_match_puts_in_all_she_has() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S"], [20, 20, 3]))
    table.act(ANN, "contract with ben against cat 3 3")
    result = table.act(BEN, "accept")
    assert table.pennies() == [17, 17, 0] and table.state.centre == 9
    assert only(result, "contract").context["short"] is True
    assert not table.game.is_over(table.state)  # checked only at the resolution
    table.act(ANN, "down KS", Scope.SECRET)
    table.act(BEN, "down 3H", Scope.SECRET)
    assert table.game.is_over(table.state) and table.state.winners == [0]


# -- private talks and secret cards (MI-14) ----------------------------------------------


def test_mi_14_a_private_offer_is_answered_only_to_the_seats_that_saw_it() -> None:
    table = Table(made(["KS", "QH", "4S", "5D"]))
    offer = table.act(ANN, "offer ben: victim cat, I wager 2, you wager 1",
                      Scope.PRIVATE, {ANN, BEN})  # fmt: skip
    notice = only(offer, "offer")
    assert notice.audience.seats == {ANN, BEN} and not notice.audience.public
    assert notice.context["offer"]["private"] is True
    assert all(not e.public for e in offer.events)
    public_view = table.game.view(table.state, None)
    assert "offer" not in public_view and "Ben" not in json.dumps(public_view["waiting"])
    assert "offer" in table.game.view(table.state, BEN)
    assert "offer" not in table.game.view(table.state, CAT)
    declined = table.act(BEN, "decline", Scope.PRIVATE, {ANN, BEN})
    assert only(declined, "declined").audience.seats == {ANN, BEN}
    assert all(not e.public for e in declined.events)


def test_mi_14_a_pending_private_offer_shows_in_no_public_summary_or_table() -> None:
    table = Table(made(["KS", "QH", "4S", "5D"]))
    table.act(ANN, "contract with ben against cat 2 1", Scope.PRIVATE, {ANN, BEN})
    summary = table.game.summary(table.state)
    assert summary["phase"] == "turn" and summary["to_move"] == ["Ann"]
    resign = only(table.game.replace_with_bot(table.state, DAN), "resign")
    assert resign.context["to_move_text"] == "Ann"
    _, body = Composer("referee@example.org", "Referee").render(
        "miser", "resign", context_for(resign))
    assert "Ben: an answer" not in body
    # The table reads the same as while Ann has still to choose: a table
    # without its first deadline would tell that a private offer is pending.
    fresh = Table(made(["KS", "QH", "4S", "5D"]))
    _, before = Composer("referee@example.org", "Referee").render(
        "miser", "resign", context_for(only(fresh.game.replace_with_bot(fresh.state, DAN),
                                             "resign")))
    assert body == before
    assert ("Waiting for (first deadline Wed 25 Nov 2026 18:00 UTC):\n"
            "  Ann: a turn (pass, contract, attack or bid)\n") in body
    help_ben = table.game.help(table.state, BEN)
    assert help_ben.startswith("Ann offers you a contract against Cat (a private offer):")


def test_mi_14_the_answer_to_a_private_offer_is_a_private_obligation_shown_as_the_turn() -> None:
    """The partner owes an answer, with a deadline; views for everyone show
    the offerer's turn in its place, as the public summary does."""
    table = Table(made(["KS", "QH", "4S", "5D"]))
    table.act(ANN, "contract with ben against cat 2 1", Scope.PRIVATE, {ANN, BEN})
    (answer,) = table.game.pending(table.state)
    assert (answer.seat, answer.key, answer.what) == (
        BEN, "contract-1:accept", "an answer to a contract offer")
    assert answer.private
    assert answer.shown_publicly() == (ANN, "a turn (pass, contract, attack or bid)")
    table.act(BEN, "decline", Scope.PRIVATE, {ANN, BEN})
    table.act(ANN, "contract with ben against cat 2 1")  # in public this time
    (answer,) = table.game.pending(table.state)
    assert not answer.private
    assert answer.shown_publicly() == (BEN, "an answer to a contract offer")


def test_mi_14_others_are_answered_alike_whether_or_not_a_private_offer_is_pending() -> None:
    """A refusal must not tell a player outside the talks that an offer is
    pending: Cat and Dan get the same answer to every command either way."""
    lines = ["bid 4S 1", "raise 1", "raise to 3", "done", "pass", "flip", "down 4S", "accept",
             "decline", "attack ann 1", "contract with ben against ann 1 1", "hand"]

    def answers(offer: bool) -> list[Any]:
        out: list[Any] = []
        for seat in (CAT, DAN):
            for line in lines:
                table = Table(made(["KS 2S", "QH 3H", "4S 5S", "4D 6D"]))
                if offer:
                    table.act(ANN, "contract with ben against dan 1 1", Scope.PRIVATE,
                              {ANN, BEN})
                try:
                    result = table.act(seat, line.replace("4S", "4D") if seat == DAN else line,
                                       Scope.SECRET)
                    out.append((result.reply, [n.template for n in result.notices]))
                except IllegalAction as e:
                    out.append(str(e))
            out.append(table.game.help(table.state, seat))
        return out

    assert answers(offer=True) == answers(offer=False)
    table = Table(made(["KS 2S", "QH 3H", "4S 5S", "4D 6D"]))
    table.act(ANN, "contract with ben against dan 1 1", Scope.PRIVATE, {ANN, BEN})
    with pytest.raises(IllegalAction, match=r"^It is Ann's turn; you may join a bid"):
        table.act(CAT, "bid 4S 1")
    with pytest.raises(IllegalAction, match="awaits Ben's answer"):
        table.act(ANN, "bid 2S 1")


def test_mi_14_a_secret_offer_still_reaches_the_partner() -> None:
    table = Table(made(["KS", "QH", "4S", "5D"]))
    offer = table.act(ANN, "contract with ben against cat 1 1", Scope.SECRET)
    assert only(offer, "offer").audience.seats == {ANN, BEN}


def test_mi_14_an_accepted_contract_is_public_because_pennies_move() -> None:
    table = Table(made(["KS", "QH", "4S", "5D"]))
    table.act(ANN, "contract with ben against cat 1 1", Scope.PRIVATE, {ANN, BEN, CAT})
    result = table.act(BEN, "accept", Scope.PRIVATE, {ANN, BEN, CAT})
    assert only(result, "contract").audience.public
    assert all(e.public for e in result.events)


@pytest.mark.parametrize("scope", [Scope.PRIVATE, Scope.PUBLIC])
def test_mi_14_a_face_down_card_is_refused_unless_sent_to_the_referee_alone(
    scope: Scope,
) -> None:
    game = Miser()
    for line in ("down QS", "play QS", "put QS down"):
        action = game.parse(line)
        assert action is not None
        with pytest.raises(ScopeError, match="would show the card"):
            game.accepts(action, scope)
        game.accepts(action, Scope.SECRET)
    for line in ("bid 7H 3", "contract bob carol 1 1", "attack carol 2", "flip", "hand"):
        action = game.parse(line)
        assert action is not None
        game.accepts(action, scope)


def test_mi_14_face_down_counts_are_public_but_never_the_cards() -> None:
    table = Table(made(["KS 2S 3S", "QH 3H", "4S"]))
    table.act(ANN, "attack ben 2")
    result = table.act(ANN, "down KS 2S", Scope.SECRET)
    notice = only(result, "down")
    assert notice.audience.public and notice.context["attack"]["down"] == [2, 0]
    assert result.reply == "Face down: K♠ 2♠."
    assert_no_public_leak(result)
    assert [c["card"] for c in table.game.view(table.state, ANN)["you"]["down"]] == ["KS", "2S"]
    (secret,) = [e for e in result.events if not e.public]
    assert secret.data["cards"] == ["KS", "2S"]


def test_hand_answers_in_secret_with_cards_and_pennies() -> None:
    table = Table(made(["KS 2S", "QH", "4S"], [11, 20, 20]))
    result = table.act(CAT, "hand")
    notice = only(result, "hand")
    assert notice.audience.seats == {CAT} and not notice.audience.public
    assert notice.context["you"]["hand"] == ["4S"] and notice.context["you"]["pennies"] == 20
    assert result.state is table.results[0].state


# -- attacks (MI-7, MI-12) ---------------------------------------------------------------


def test_mi_7_an_attack_takes_wager_and_match_then_the_attacker_plays_first() -> None:
    table = Table(made(["KS 9S 2S", "QH 3H 5C", "4S"], centre=2))
    result = table.act(ANN, "attack ben 2")
    assert table.pennies() == [18, 18, 20] and table.state.centre == 6
    assert only(result, "attack").audience.public
    assert [(p.seat, p.key) for p in table.game.pending(table.state)] == [(ANN, "attack-1:0")]
    with pytest.raises(IllegalAction, match="Wait for Ann's first card"):
        table.act(BEN, "down QH", Scope.SECRET)
    with pytest.raises(IllegalAction, match="at least one card"):
        table.act(ANN, "flip")
    result = table.act(ANN, "down 9S", Scope.SECRET)
    assert only(result, "your_move").audience.seats == {BEN}
    assert {(p.seat, p.key) for p in table.game.pending(table.state)} == {
        (ANN, "attack-1:1"),
        (BEN, "attack-1:1"),
    }
    table.act(BEN, "down QH", Scope.SECRET)
    table.act(ANN, "flip")
    table.act(BEN, "flip")  # Ben flips at 10 against 9: Ann must answer
    assert table.state.attack is None
    r = report(table.last)
    assert [s["total"] for s in r["sides"]] == [9, 10] and r["taker"] == "Ben"
    assert table.pennies() == [18, 24, 20]


def test_the_attacker_is_told_to_put_cards_down_in_the_answer_to_her_own_mail() -> None:
    """The same mail may already put the cards down, so no separate mail
    asks for them; the answer to the attack says what comes next."""
    table = Table(made(["KS 9S 2S", "QH 3H 5C", "4S"]))
    result = table.act(ANN, "attack ben 2")
    assert [n.template for n in result.notices] == ["attack"]
    assert result.reply is not None
    assert result.reply.endswith(
        "Now put one or more cards face down, in a mail to the referee alone, like 'down 2S'."
    )
    assert "one or more cards face down" in table.game.help(table.state, ANN)


def test_mi_7_a_new_card_means_both_sides_say_flip_again() -> None:
    table = Table(made(["KS 9S 2S", "QH 3H 5C", "4S"]))
    table.act(ANN, "attack ben 1")
    table.act(ANN, "down 2S", Scope.SECRET)
    table.act(BEN, "flip")
    with pytest.raises(IllegalAction, match="have said flip"):
        table.act(BEN, "flip")
    result = table.act(ANN, "down KS", Scope.SECRET)
    assert table.state.attack is not None and table.state.attack.flipped == [False, False]
    assert only(result, "down").context["attack"]["down"] == [2, 0]
    table.act(ANN, "flip")
    table.act(BEN, "down 3H 5C", Scope.SECRET)
    table.act(BEN, "flip")
    table.act(ANN, "flip")
    r = report(table.last)
    assert [s["total"] for s in r["sides"]] == [12, 8] and r["taker"] == "Ann"


def test_mi_7_totals_have_no_21_limit_and_ties_lose_cards_with_the_pennies_staying() -> None:
    table = Table(made(["AS AH KS", "QH QD QC 2C", "4S"], centre=1))
    table.act(ANN, "attack ben 3")
    table.act(ANN, "down AS AH", Scope.SECRET)  # 22
    table.act(BEN, "down QH QD 2C", Scope.SECRET)  # 22
    table.act(ANN, "flip")
    table.act(BEN, "flip")
    r = report(table.last)
    assert [s["total"] for s in r["sides"]] == [22, 22] and r["taker"] is None
    assert table.state.centre == 7 and table.pennies() == [17, 17, 20]
    assert sorted(table.state.slush) == sorted(["AS", "AH", "QH", "QD", "2C"])


def test_mi_7_a_side_with_no_cards_left_counts_as_flipped() -> None:
    table = Table(made(["KS 9S", "QH", "4S"]))
    table.act(ANN, "attack ben 1")
    table.act(ANN, "down 9S", Scope.SECRET)
    table.act(BEN, "down QH", Scope.SECRET)  # Ben's last card: he can only flip
    assert [p.seat for p in table.game.pending(table.state)] == [ANN]
    table.act(ANN, "flip")
    assert report(table.last)["taker"] == "Ben"


def test_mi_12_an_undefended_victim_loses_the_whole_centre() -> None:
    table = Table(made(["5S 9S", "", "4S"], centre=6))
    table.act(ANN, "attack ben 3")
    result = table.act(ANN, "down 5S", Scope.SECRET)
    # Ben holds no card, so his side is settled; Ann still may add or flip.
    assert [p.seat for p in table.game.pending(table.state)] == [ANN]
    assert only(result, "down").audience.public
    table.act(ANN, "flip")
    r = report(table.last)
    assert r["sides"][1] == {"name": "Ben", "cards": [], "total": 0}
    assert r["taker"] == "Ann" and r["pot"] == 12
    assert table.pennies() == [29, 17, 20]


def test_mi_15_a_silent_attackers_random_first_card_is_reported_as_a_card_not_a_flip() -> None:
    """Ann owes her first card and says nothing: the referee plays a random
    card of her hand. It is her last, and Ben holds none, so the cards are
    turned up at once; the table is told the referee put a card down for
    her (not which: a face-down card), Ann which card."""
    table = Table(made(["5S", "", "4S"]))
    table.act(ANN, "attack ben 1")
    before = table.state
    timeout = table.game.timeout_action(table.state, ANN, seeded(0))
    assert timeout == Action("down", ("5S",))
    result = table.apply(ANN, timeout)
    notice = only(result, "round_report")
    assert notice.context["report"]["last_move"] == "down"
    said = table.game.deadline_move(before, ANN, timeout, result)
    assert said.audience.public
    assert said.told("Ann") == (
        "No card came from Ann by the deadline: the referee put a card drawn at random from "
        "their hand face down for them, by the house rule for silent players.")
    assert said.done_for_you() == (
        "the referee put 5♠ face down for you, drawn at random from your hand (the draw "
        "timeout/1/attack-1:0), by the house rule for silent players")
    _, body = Composer("referee@example.org", "Referee").render(
        "miser", "round_report", context_for(notice))
    assert "flip" not in body


def test_mi_15_a_silent_players_flip_is_reported_as_a_flip() -> None:
    table = Table(made(["5S 9S", "2H", "4S"]))
    table.act(ANN, "attack ben 2")
    table.act(ANN, "down 5S", Scope.SECRET)
    table.act(ANN, "flip")
    before = table.state
    timeout = table.game.timeout_action(table.state, BEN, seeded(0))
    result = table.apply(BEN, timeout)
    notice = only(result, "round_report")
    assert notice.context["report"]["last_move"] == "flip"
    said = table.game.deadline_move(before, BEN, timeout, result)
    assert said.told("Ben") == ('No move came from Ben by the deadline: the referee wrote '
                                '"flip" for them, by the house rule for silent players.')
    assert said.done_for_you() == 'the referee wrote "flip" for you, by the house rule for ' \
        "silent players"


def test_mi_15_a_silent_turn_player_passes_and_a_silent_bidder_stays_out() -> None:
    table = Table(made(["5S 9S", "2H", "4S"]))
    before = table.state
    timeout = table.game.timeout_action(before, ANN, seeded(0))
    assert timeout == Action("pass")
    said = table.game.deadline_move(before, ANN, timeout, table.apply(ANN, timeout))
    assert said.told("Ann") == ("No move came from Ann by the deadline: the referee passed "
                                "for them, by the house rule for silent players.")
    table.act(BEN, "bid 2H 1")
    before = table.state
    timeout = table.game.timeout_action(before, CAT, seeded(0))
    assert timeout == Action("done")
    said = table.game.deadline_move(before, CAT, timeout, table.apply(CAT, timeout))
    assert said.told("Cat") == ('No move came from Cat by the deadline: the referee wrote '
                                '"done" for them: they stay out of the bidding, by the house '
                                "rule for silent players.")


def test_mi_15_an_unanswered_private_offer_lapses_told_to_those_who_saw_it() -> None:
    table = Table(made(["5S 9S", "2H", "4S"]))
    table.act(ANN, "contract with ben against cat 1 1", Scope.PRIVATE, seen_by={BEN})
    before = table.state
    timeout = table.game.timeout_action(before, BEN, seeded(0))
    assert timeout == Action("lapse")
    result = table.apply(BEN, timeout)
    said = table.game.deadline_move(before, BEN, timeout, result)
    assert said.audience == Audience.only(ANN, BEN)
    assert said.told("Ben") == (
        "No answer to Ann's contract offer came from Ben by the deadline: the referee let the "
        "offer lapse, by the house rule for silent players.")
    # A name is said as it is written, braces too.
    before = replace(before, names=["{Ann}", *before.names[1:]])
    said = table.game.deadline_move(before, BEN, timeout, result)
    assert said.told("Ben").startswith("No answer to {Ann}'s contract offer came from Ben")
    assert "{{" not in said.told_you()


def test_mi_12_a_victim_who_stays_silent_flips_and_forfeits() -> None:
    table = Table(made(["5S 9S", "2H", "4S"]))
    table.act(ANN, "attack ben 2")
    table.act(ANN, "down 5S", Scope.SECRET)
    table.act(ANN, "flip")
    timeout = table.game.timeout_action(table.state, BEN, seeded(0))
    assert timeout == Action("flip")
    table.apply(BEN, timeout)
    assert report(table.last)["taker"] == "Ann" and table.pennies() == [22, 18, 20]


def test_mi_10_a_victim_who_reaches_0_matching_but_wins_is_not_out() -> None:
    table = Table(made(["2S 3S", "KH", "4S"], [20, 2, 20]))
    table.act(ANN, "attack ben 3")
    assert table.pennies() == [17, 0, 20]
    table.act(ANN, "down 2S", Scope.SECRET)
    table.act(BEN, "down KH", Scope.SECRET)
    table.act(ANN, "flip")
    assert not table.game.is_over(table.state)
    assert table.pennies() == [17, 5, 20]


# -- bidding for the centre (MI-8, MI-9) --------------------------------------------------


def auction(bids: Sequence[tuple[int, str, int]], centre: int = 10,
            pennies: Sequence[int] | None = None) -> Table:  # fmt: skip
    """Ann opens; the others join in the order given; everyone who owes a
    step then says done (the last bidder's bid is her "done")."""
    table = Table(made(["2S 3S", "2H 3H", "2D 3D", "2C 3C"], pennies, centre=centre))
    for seat, card, amount in bids:
        table.act(seat, f"bid {card} {amount}")
    for seat in (ANN, BEN, CAT, DAN):
        owing = {p.seat for p in table.game.pending(table.state)}
        if table.state.auction is not None and seat in owing:
            table.act(seat, "done")
    assert table.state.auction is None
    return table


def test_mi_8_three_bidders_the_top_takes_the_centre_and_the_top_two_pay() -> None:
    table = auction([(ANN, "2S", 5), (BEN, "2H", 3), (CAT, "2D", 1)])
    r = report(table.last)
    assert r["winner"] == "Ann" and r["second"] == ["Ben"] and r["pot"] == 10
    assert [b["outcome"] for b in r["bids"]] == ["paid", "paid", "kept"]
    # Ann: 20 + 10 - 5; Ben 20 - 3; Cat keeps her bid; the centre is 5 + 3.
    assert table.pennies() == [25, 17, 20, 20] and table.state.centre == 8
    assert sorted(table.state.slush) == ["2D", "2H", "2S"]
    assert table.state.hands[2] == ["3D"]


def test_mi_8_a_tie_for_second_means_all_of_them_pay() -> None:
    table = auction([(ANN, "2S", 2), (BEN, "2H", 4), (CAT, "2D", 2)])
    r = report(table.last)
    assert r["winner"] == "Ben" and r["second"] == ["Ann", "Cat"]
    assert table.pennies() == [18, 26, 18, 20] and table.state.centre == 8


def test_mi_8_a_lone_bidder_takes_the_centre_and_pays_her_bid_back_in() -> None:
    table = auction([(ANN, "2S", 3)], centre=7)
    r = report(table.last)
    assert r["winner"] == "Ann" and r["second"] == []
    assert table.pennies() == [24, 20, 20, 20] and table.state.centre == 3


def test_mi_9_tied_top_bids_take_nothing_and_the_top_and_second_pay() -> None:
    table = auction([(ANN, "2S", 4), (BEN, "2H", 4), (CAT, "2D", 2), (DAN, "2C", 1)])
    r = report(table.last)
    assert r["winner"] is None and r["top_tie"] == ["Ann", "Ben"] and r["second"] == ["Cat"]
    assert table.pennies() == [16, 16, 18, 20] and table.state.centre == 20


def test_mi_9_three_tied_at_the_top_are_handled_the_same_way() -> None:
    table = auction([(ANN, "2S", 3), (BEN, "2H", 3), (CAT, "2D", 3), (DAN, "2C", 1)])
    r = report(table.last)
    assert r["top_tie"] == ["Ann", "Ben", "Cat"] and r["second"] == ["Dan"]
    assert table.pennies() == [17, 17, 17, 19] and table.state.centre == 20


def test_mi_8_bids_are_raised_never_withdrawn_and_done_counts_since_the_last_raise() -> None:
    table = Table(made(["2S 3S", "2H 3H", "2D 3D"], [20, 20, 6], centre=10))
    result = table.act(ANN, "bid 3S 2")
    assert only(result, "auction").context["auction"]["bids"][0]["text"] == "3♠"  # face up
    assert {n.audience.seats for n in result.notices if n.template == "your_move"} == {
        frozenset({BEN}),
        frozenset({CAT}),
    }
    # Ann's bid is her "done": only those who may join are waited for.
    keys = {(p.seat, p.key) for p in table.game.pending(table.state)}
    assert keys == {(BEN, "auction-1:join"), (CAT, "auction-1:join")}
    assert only(result, "auction").context["to_move_text"] == "Ben and Cat"
    with pytest.raises(IllegalAction, match="owe nothing until someone else bids or raises"):
        table.act(ANN, "done")
    table.act(BEN, "bid 2H 3")
    keys = {(p.seat, p.key) for p in table.game.pending(table.state)}
    assert keys == {(ANN, "auction-1:2"), (CAT, "auction-1:join")}
    with pytest.raises(IllegalAction, match="never withdrawn"):
        table.act(ANN, "raise to 2")
    with pytest.raises(IllegalAction, match="already bidding"):
        table.act(BEN, "bid 3H 5")
    with pytest.raises(IllegalAction, match="cannot bid more"):
        table.act(CAT, "bid 2D 7")
    table.act(CAT, "pass")  # in a bidding, "pass" is read as "done"
    table.act(ANN, "raise 2")  # Ann now bids 4, and is done
    with pytest.raises(IllegalAction, match="owe nothing until someone else"):
        table.act(ANN, "done")
    table.act(BEN, "done")
    r = report(table.last)
    assert r["winner"] == "Ann" and [b["pennies"] for b in r["bids"]] == [4, 3]
    assert table.pennies() == [26, 17, 6]


def test_help_in_the_bidding_says_what_each_player_may_still_do() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S 5S"], [20, 1, 20], centre=4))
    table.act(ANN, "bid 2S 2")
    assert "'bid 3H 1'" in table.game.help(table.state, BEN)  # she holds 1 penny
    assert "'done' to stay out" in table.game.help(table.state, BEN)
    assert "Your bid stands: you owe nothing until someone else bids" in table.game.help(
        table.state, ANN)
    table.act(BEN, "bid 3H 1")
    assert "Someone else has bid or raised since your last bid" in table.game.help(
        table.state, ANN)


def test_mi_8_a_player_who_stayed_out_may_still_join_while_the_bidding_runs() -> None:
    table = Table(made(["2S 3S", "2H 3H", "2D 3D"], centre=10))
    table.act(ANN, "bid 3S 2")
    table.act(CAT, "done")
    table.act(BEN, "bid 2H 1")
    table.act(CAT, "bid 2D 3")
    assert table.state.auction is not None and table.state.auction.declined == []


def test_mi_16_after_a_raise_every_other_bidder_who_may_add_is_asked_again() -> None:
    """Ruling MI-16: a bid or a raise is its maker's "finished for now";
    after a raise every other bidder who may still add owes "done" or a
    raise, and the bidding ends when all are finished after the last raise.
    A bidder who has bid every penny she holds cannot add: she is finished."""
    table = Table(made(["2S 3S", "2H 3H", "2D 3D", "2C 3C"], [20, 20, 3, 20], centre=10))
    table.act(ANN, "bid 3S 2")
    table.act(BEN, "bid 2H 2")
    table.act(CAT, "bid 2D 3")  # all Cat holds
    table.act(DAN, "done")
    owing = {p.seat for p in table.game.pending(table.state)}
    assert owing == {ANN, BEN}  # Cat's bid is her done; she could not add anyway
    table.act(ANN, "raise to 4")
    assert {p.seat for p in table.game.pending(table.state)} == {BEN}  # not Cat: all in
    with pytest.raises(IllegalAction, match="bid every penny you hold"):
        table.act(CAT, "done")
    assert "you are finished bidding" in table.game.help(table.state, CAT)
    table.act(BEN, "raise to 5")
    assert {p.seat for p in table.game.pending(table.state)} == {ANN}
    table.act(ANN, "done")
    r = report(table.last)
    assert r["winner"] == "Ben" and [b["pennies"] for b in r["bids"]] == [4, 5, 3]


def test_mi_16_a_lone_bidder_may_raise_her_own_bid_and_it_binds_her() -> None:
    table = Table(made(["2S 3S", "2H 3H", "2D 3D"], centre=6))
    table.act(ANN, "bid 3S 1")
    table.act(ANN, "raise to 3")  # nobody else has bid: her raise binds her all the same
    table.act(BEN, "done")
    table.act(CAT, "done")
    r = report(table.last)
    assert r["winner"] == "Ann" and [b["pennies"] for b in r["bids"]] == [3]
    assert table.pennies() == [23, 20, 20] and table.state.centre == 3


def test_mi_16_in_a_game_of_edition_2_a_bidder_with_every_penny_bid_still_owes_done() -> None:
    """Before edition 3 a bidder who bid all she holds was asked again after
    a raise, and the game plays on as it began (its log replays)."""
    table = Table(replace(made(["2S 3S", "2H 3H", "2D 3D"], [20, 20, 3], centre=10), edition=2))
    table.act(ANN, "bid 3S 2")
    table.act(BEN, "done")
    table.act(CAT, "bid 2D 3")
    table.act(ANN, "raise to 4")
    assert {p.seat for p in table.game.pending(table.state)} == {CAT}
    table.act(CAT, "done")
    assert report(table.last)["winner"] == "Ann"


def test_mi_17_one_who_declined_is_not_asked_again_but_may_still_enter() -> None:
    """Ruling MI-17: a player with cards may enter until the bidding is
    over; one who declined owes nothing after later bids, yet may enter."""
    table = Table(made(["2S 3S", "2H 3H", "2D 3D"], centre=10))
    table.act(ANN, "bid 3S 2")
    table.act(CAT, "done")  # declines
    joined = table.act(BEN, "bid 2H 3")
    assert {p.seat for p in table.game.pending(table.state)} == {ANN}  # not Cat again
    assert not [n for n in joined.notices if n.template == "your_move"]
    assert "You may join the bidding" in table.game.help(table.state, CAT)
    table.act(CAT, "bid 2D 4")  # enters late, with her card and pennies
    assert {p.seat for p in table.game.pending(table.state)} == {ANN, BEN}
    table.act(ANN, "done")
    table.act(BEN, "done")
    r = report(table.last)
    assert r["winner"] == "Cat" and r["second"] == ["Ben"]


def test_mi_18_a_flip_lapses_when_the_other_side_puts_down_another_card() -> None:
    """Ruling MI-18: the agreement to flip holds for the cards on the table;
    a card put down by either side makes an earlier flip lapse."""
    table = Table(made(["KS 9S 2S", "QH 3H 5C", "4S"]))
    table.act(ANN, "attack ben 1")
    table.act(ANN, "down 2S", Scope.SECRET)
    table.act(ANN, "flip")
    table.act(BEN, "down QH", Scope.SECRET)  # Ann's flip lapses
    assert table.state.attack is not None and table.state.attack.flipped == [False, False]
    flipped = table.act(BEN, "flip")
    assert table.state.attack is not None  # Ann must say flip again
    assert [p.seat for p in table.game.pending(table.state)] == [ANN]
    assert not [n for n in flipped.notices if n.template == "round_report"]
    table.act(ANN, "flip")
    assert report(table.last)["taker"] == "Ben"


# -- card values and the end (MI-13, MI-10) -----------------------------------------------


@pytest.mark.parametrize(
    ("card", "value"),
    [("AS", 11), ("KH", 10), ("QD", 10), ("JC", 10), ("10S", 10), ("9H", 9), ("2C", 2)],
)
def test_mi_13_cards_count_as_in_blackjack_with_the_ace_always_11(card: str, value: int) -> None:
    assert card_value(card) == value


def test_mi_10_a_tie_for_most_pennies_is_a_tie() -> None:
    table = Table(made(["2S", "3S", "4S"], [1, 20, 20]))
    result = table.act(ANN, "pass")
    assert table.state.winners == [1, 2]
    summary = table.game.summary(table.state)
    assert summary["over"] and "tie" in str(summary["result"])
    subject, _ = Composer("referee@x.org", "Referee").render(
        "miser", "round_report", {**context_for(only(result, "round_report")), "tag": "m"}
    )
    assert "GAME OVER: a tie between Ben and Cat" in subject


# -- timeouts (MI-15) and bots -------------------------------------------------------------


def test_mi_15_what_silence_means_at_each_step() -> None:
    game = Miser()
    rng = random.Random(0)
    table = Table(made(["KS 2S", "QH 3H 5H 6H", "4S"]))
    assert game.timeout_action(table.state, ANN, SequentialDraws(rng)) == Action("pass")
    with pytest.raises(IllegalAction, match="owes no action"):
        game.timeout_action(table.state, BEN, SequentialDraws(rng))
    table.act(ANN, "contract with ben against cat 1 1")
    lapse = game.timeout_action(table.state, BEN, SequentialDraws(rng))
    assert lapse == Action("lapse")
    result = table.apply(BEN, lapse)
    assert only(result, "declined").context["lapsed"] is True
    table.act(ANN, "contract with ben against cat 1 1")
    table.act(BEN, "accept")
    card = game.timeout_action(table.state, BEN, SequentialDraws(rng))
    assert card.verb == "down" and card.args[0] in ("QH", "3H", "5H", "6H")
    table.apply(BEN, card)
    table.apply(ANN, game.timeout_action(table.state, ANN, SequentialDraws(rng)))
    assert table.state.turn == 1
    table.act(BEN, "attack cat 1")
    first = game.timeout_action(table.state, BEN, SequentialDraws(rng))
    assert first.verb == "down"  # the attacker's first card is owed, not a flip
    table.apply(BEN, first)
    assert game.timeout_action(table.state, CAT, SequentialDraws(rng)) == Action("flip")
    assert game.timeout_action(table.state, BEN, SequentialDraws(rng)) == Action("flip")
    table2 = Table(made(["KS 2S", "QH 3H", "4S"], centre=4))
    table2.act(ANN, "bid 2S 1")
    table2.act(BEN, "bid 3H 1")
    assert game.timeout_action(table2.state, ANN, SequentialDraws(rng)) == Action("done")
    assert game.timeout_action(table2.state, CAT, SequentialDraws(rng)) == Action("done")


def test_bots_never_bid_more_than_they_hold_and_attack_players_without_cards() -> None:
    game = Miser()
    state = made(["KS 2S", "", "4S 5S"], [2, 20, 20], centre=30)
    attacks = bids = 0
    for seed in range(200):
        action = game.bot_action(state, ANN, seeded(seed))
        if action.verb == "attack":
            attacks += action.args[0] == "Ben"
            assert action.args[1] <= 2
        if action.verb == "bid":
            bids += 1
            assert action.args[1] <= 2
        game.apply(state, ANN, action, seeded(seed))  # always legal
    assert attacks > 100 and bids


def test_bots_offer_and_accept_only_contracts_both_partners_can_meet() -> None:
    """A bot's contract offer wagers no more than it or its partner holds,
    names a partner with cards, and a bot partner's accept always applies:
    the wagers were checked against the purses when offered, and nothing
    moves before the answer."""
    game = Miser()
    state = made(["KS 2S", "QH 3H", "4S 5S", ""], [3, 1, 20, 20], centre=2)
    offers = 0
    for seed in range(300):
        action = game.bot_action(state, ANN, seeded(seed))
        if action.verb != "contract":
            continue
        offers += 1
        partner, _victim, mine, yours = action.args
        assert partner in ("Ben", "Cat") and mine <= 3
        assert yours <= {"Ben": 1, "Cat": 3}[partner]
        offered = game.apply(state, ANN, action, seeded(seed)).state
        seat = (BEN, CAT)[partner == "Cat"]
        answer = game.bot_action(offered, seat, seeded(seed))
        assert answer.verb in ("accept", "decline")
        game.apply(offered, seat, answer, seeded(seed))  # always legal
    assert offers > 20


def test_a_resignation_is_announced_to_everyone() -> None:
    table = Table(made(["KS", "QH", "4S"]))
    result = table.game.replace_with_bot(table.state, BEN)
    assert only(result, "resign").audience.public and result.state is table.state


# -- grammar and names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("contract with bob against carol 2 1", Action("contract", ("bob", "carol", 2, 1))),
        ("offer bob: victim carol, I wager 2, you wager 1",
         Action("contract", ("bob", "carol", 2, 1))),
        ("contract against carol with bob, you wager 1 and I wager 3",
         Action("contract", ("bob", "carol", 3, 1))),
        ("Contract bob carol 2/1", Action("contract", ("bob", "carol", 2, 1))),
        ("contract bob carol 2", Action("contract", ("bob", "carol", 2, 2))),
        ("contract 2 3 2 1", Action("contract", ("2", "3", 2, 1))),
        ("contract with seat 2 against seat 3, 1 and 1", Action("contract", ("2", "3", 1, 1))),
        ("attack carol 2", Action("attack", ("carol", 2))),
        ("attack carol for two pennies", Action("attack", ("carol", 2))),
        ("attack 3 2", Action("attack", ("3", 2))),
        ("bid 7H 3", Action("bid", ("7H", 3))),
        ("bid 3 with the seven of hearts", Action("bid", ("7H", 3))),
        ("bid 10♦ 2 pennies", Action("bid", ("10D", 2))),
        ("raise 2", Action("raise", (2,))),
        ("raise my bid to 5", Action("raise", ("to", 5))),
        ("down QS", Action("down", ("QS",))),
        ("play QS", Action("down", ("QS",))),
        ("put the queen of spades down", Action("down", ("QS",))),
        ("down QS 3h", Action("down", ("QS", "3H"))),
        ("Flip!", Action("flip")),
        ("done", Action("done")),
        ("I'm done", Action("done")),
        ("accept", Action("accept")),
        ("I decline.", Action("decline")),
        ("pass", Action("pass")),
        ("hand", Action("hand")),
    ],
)  # fmt: skip
def test_commands_are_read_in_forgiving_spellings(line: str, action: Action) -> None:
    assert read(Miser().parse(line)) == action


def read(action: Action | None) -> Action | None:
    """A contract or an attack kept as its words, read as it is when no
    player bears one of them as a name."""
    if action is not None and len(action.args) == 1 and action.verb == "contract":
        return Action("contract", read_contract(str(action.args[0])))
    if action is not None and len(action.args) == 1 and action.verb == "attack":
        return Action("attack", read_attack(str(action.args[0])))
    return action


@pytest.mark.parametrize(
    "action",
    [
        Action("contract", ("bob", "carol", 2, 1)),
        Action("contract", ("2", "3", 1, 3)),
        Action("attack", ("carol", 2)),
        Action("attack", ("3", 1)),
        Action("bid", ("10D", 3)),
        Action("raise", (2,)),
        Action("raise", ("to", 5)),
        Action("down", ("QS", "3H")),
    ],
)
def test_every_action_reads_back_from_its_text(action: Action) -> None:
    text = " ".join([action.verb, *(str(a) for a in action.args)])
    assert Miser().parse(text) == action


@pytest.mark.parametrize("line", [
    "hello there", "I think Ben is bluffing", "", "yes",
    "play nice", "card counting is fun", "put it on my tab", "play as a team", "lay low",
    "put 2 pennies in the pot", "add it up",
])  # fmt: skip
def test_lines_that_are_no_miser_command_are_left_alone(line: str) -> None:
    assert Miser().parse(line) is None


@pytest.mark.parametrize("line", ["play 11H", "put the joker down", "play the 7", "lay 14S"])
def test_a_line_that_looks_like_a_card_play_but_names_no_card_is_a_parse_error(
        line: str) -> None:  # fmt: skip
    with pytest.raises(ParseError, match="as a card"):
        Miser().parse(line)


@pytest.mark.parametrize(("line", "cards"), [
    ("play QS please", ("QS",)), ("lay the 7 of hearts", ("7H",)), ("put Q♠ face down", ("QS",)),
    ("add 3h 4c", ("3H", "4C")), ("card KD", ("KD",)),
])  # fmt: skip
def test_a_card_play_may_start_with_any_word_for_it(line: str, cards: tuple[str, ...]) -> None:
    assert Miser().parse(line) == Action("down", cards)


PENNY = ["Ann", "Bob", "Penny", "Dan"]


def test_a_players_name_wins_over_a_word_the_grammar_skips() -> None:
    """With a player called Penny, "against penny 1 2" names Penny the
    victim, and 1 and 2 are the wagers: neither Ann by seat, nor 2 each."""
    state = made(["KS", "QH", "4S", "5D"], turn=3)
    state.names = list(PENNY)
    action = Miser().parse("contract with bob against penny 1 2")
    assert action == Action("contract", ("with bob against penny 1 2",))
    result = Miser().apply(state, DAN, action, seeded(0))
    c = result.state.contract
    assert c is not None and (c.partner, c.victim, c.wagers) == (1, 2, [1, 2])
    state.turn = 0
    for line in ("attack penny 2", "attack penny with 2 pennies"):
        result = Miser().apply(state, ANN, Miser().parse(line), seeded(0))
        a = result.state.attack
        assert a is not None and (a.victim, a.wager) == (2, 2), line
    # A word that names no player here is skipped, as before.
    state.names = ["Ann", "Bob", "Cat", "Dan"]
    result = Miser().apply(state, ANN, Miser().parse("attack cat with 2 pennies"),
                           seeded(0))
    assert result.state.attack is not None and result.state.attack.victim == 2


def test_a_number_after_a_skipped_word_is_no_seat() -> None:
    """"against penny 1 2" with nobody called Penny is refused, never read
    as a contract against seat 1."""
    state = made(["KS", "QH", "4S", "5D"], turn=3)
    with pytest.raises(ParseError, match="names a partner and a victim"):
        Miser().apply(state, DAN, Miser().parse("contract with ben against penny 1 2"),
                      seeded(0))
    assert Miser().parse("contract with 2 against 3 1 2") == Action("contract", ("2", "3", 1, 2))


@pytest.mark.parametrize("line", [
    "contract with bob against dan, I will wager 2",
    "contract with bob against dan 2 1 each",
])  # fmt: skip
def test_a_name_that_is_also_a_skipped_word_and_leaves_the_line_unclear_is_refused(
        line: str) -> None:  # fmt: skip
    state = made(["KS", "QH", "4S", "5D"])
    state.names = ["Ann", "Bob", "Will", "Dan"] if "will" in line else ["Ann", "Bob", "Each",
                                                                          "Dan"]
    with pytest.raises(AmbiguousAction, match=(
            r"is a player's name and also a word I skip\. Write each player by seat number.*"
            r"'contract with seat 2 against seat 3 1 2'.*\(seat 3\)")):
        Miser().apply(state, ANN, Miser().parse(line), seeded(0))
    state.names = ["Ann", "Bob", "Cat", "Penny"]
    with pytest.raises(AmbiguousAction, match="'attack seat 3 2'"):
        Miser().apply(state, ANN, Miser().parse("attack cat 2 penny"), seeded(0))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("contract with bob 2 1", "partner and a victim"),
        ("contract with bob against carol", "needs the wagers"),
        ("attack 2", "one victim"),
        ("attack carol", "one wager"),
        ("bid 3", "names one card"),
        ("bid 7H", "one number"),
        ("raise", "raise 2"),
        ("down", "as a card"),
        ("play the joker", "as a card"),
    ],
)
def test_malformed_commands_are_parse_errors_that_explain(line: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        Miser().parse(line)


def test_names_resolve_by_any_case_a_unique_prefix_or_a_seat_number() -> None:
    state = made(["KS 2S", "QH", "4S", "5D"])
    state.names = ["Ann", "Bob", "Bobby", "Carol"]
    table = Table(state)
    table.act(ANN, "attack CAR 1")
    assert table.state.attack is not None and table.state.attack.victim == 3
    for written, victim in (("BOB", 1), ("bobb", 2), ("3", 2)):
        result = Miser().apply(state, ANN, Action("attack", (written, 1)), seeded(0))
        assert result.state.attack is not None and result.state.attack.victim == victim
    with pytest.raises(IllegalAction, match=r"'bo' could be Bob or Bobby: write the whole name"):
        Miser().apply(state, ANN, Action("attack", ("bo", 1)), seeded(0))
    with pytest.raises(IllegalAction, match=r"no player 'zed'.*Ann \(seat 1\)"):
        Miser().apply(state, ANN, Action("attack", ("zed", 1)), seeded(0))


def test_players_are_named_by_a_word_the_whole_name_or_their_address() -> None:
    state = made(["KS 2S", "QH", "4S", "5D"])
    state.names = ["Ann Lee", "Ben Ray", "Cat Moss", "Ann Moss"]
    state.aliases = [["alee"], ["ben"], ["cmoss"], ["amoss"]]
    for line, partner, victim in (
        ("contract with ben against cat 2 1", 1, 2),
        ("contract with Ben Ray against Cat Moss 2 1", 1, 2),
        ("offer ben ray: victim cat moss, I wager 2, you wager 1", 1, 2),
        ("contract with ann moss against cmoss 2 1", 3, 2),
        ("contract ray cmoss 2 1", 1, 2),
    ):
        result = Table(state).act(ANN, line)
        assert result.state.contract is not None, line
        assert (result.state.contract.partner, result.state.contract.victim) == (partner, victim)
    for line, victim in (("attack cat moss 2", 2), ("attack amoss 2", 3), ("attack Ray 1", 1)):
        result = Table(state).act(ANN, line)
        assert result.state.attack is not None and result.state.attack.victim == victim, line
    with pytest.raises(IllegalAction, match=r"^'moss' could be Cat Moss or Ann Moss: write "
                                            r"the whole name\.$"):
        Table(state).act(ANN, "attack moss 2")


def test_help_lists_what_this_seat_can_do_now() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S"], centre=3))
    text = table.game.help(table.state, ANN)
    for example in ("pass", "contract with Ben against Cat 3 1", "attack Cat 3", "bid 2S 2"):
        assert example in text
    assert "for the centre (3 pennies now)" in text
    assert "Ann's turn" in table.game.help(table.state, BEN)
    table.act(ANN, "contract with ben against cat 1 1")
    assert "'accept' or 'decline'" in table.game.help(table.state, BEN)
    table.act(BEN, "accept")
    assert "down 2S" in table.game.help(table.state, ANN)
    assert "MI-" not in text


def test_help_offers_no_bid_for_an_empty_centre() -> None:
    """A bid wins the pennies in the centre (004, Making a Bid): with none
    there it could only cost the bidder, so no prompt suggests it."""
    table = Table(made(["KS 2S", "QH 3H", "4S"]))
    text = table.game.help(table.state, ANN)
    assert "pass" in text and "attack Cat 3" in text
    assert "bid" not in text and "centre (0" not in text


def test_pending_keys_name_the_exchange_and_step() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S"]))
    assert [(p.seat, p.key) for p in table.game.pending(table.state)] == [(ANN, "turn-1")]
    table.act(ANN, "pass")
    assert [(p.seat, p.key) for p in table.game.pending(table.state)] == [(BEN, "turn-2")]


def test_the_summary_gives_the_turn_pennies_and_result() -> None:
    table = Table(made(["KS 2S", "QH 3H", "4S"], centre=2))
    summary = table.game.summary(table.state)
    assert summary["round"] == 1 and summary["scores"] == {"Ann": 20, "Ben": 20, "Cat": 20}
    assert summary["centre"] == 2 and summary["to_move"] == ["Ann"] and summary["result"] is None


# -- persistence, replay, and random playouts -----------------------------------------------


def play_game(seed: str, n: int, *, timeouts: float = 0.2, options: dict[str, str] | None = None,
              scope_rng: random.Random | None = None
              ) -> tuple[list[Result[MiserState]], list[tuple[int, Action]]]:  # fmt: skip
    """A whole game by bots, some of whose moves are timeouts instead."""
    game = Miser()
    results = [game.new(game.parse_options(options or {}), seats(n), KeyedDraws(seed))]
    log: list[tuple[int, Action]] = []
    state = results[0].state
    chooser = random.Random(seed)
    while not game.is_over(state):
        pending = game.pending(state)
        assert pending
        seat = chooser.choice(pending).seat
        rng = random.Random(f"{seed}/{len(log)}")
        if chooser.random() < timeouts:
            action = game.timeout_action(state, seat, SequentialDraws(rng))
        else:
            action = game.bot_action(state, seat, SequentialDraws(rng))
        if scope_rng is not None and action.verb == "contract" and scope_rng.random() < 0.5:
            action = Action(action.verb, action.args, Scope.PRIVATE, frozenset({seat}))
        log.append((seat, action))
        results.append(game.apply(state, seat, action, KeyedDraws(seed)))
        state = results[-1].state
        assert len(log) < 10_000
    return results, log


def test_the_state_dumps_to_json_and_loads_back_equal() -> None:
    game = Miser()
    results, _ = play_game("dump", 5)
    for result in results[::7]:
        data = json.loads(json.dumps(game.dump(result.state)))
        assert game.load(data) == result.state
    table = Table(made(["KS 2S", "QH 3H", "4S"]))
    table.act(ANN, "contract with ben against cat 1 1", Scope.PRIVATE, {ANN, BEN})
    assert game.load(json.loads(json.dumps(game.dump(table.state)))) == table.state
    table.act(BEN, "accept")
    table.act(ANN, "down 2S", Scope.SECRET)
    assert game.load(json.loads(json.dumps(game.dump(table.state)))) == table.state


def test_apply_never_changes_the_state_it_is_given() -> None:
    game = Miser()
    results, log = play_game("pure", 4)
    for (seat, action), before in zip(log, results, strict=False):
        dumped = game.dump(before.state)
        game.apply(before.state, seat, action, seeded(0))
        assert game.dump(before.state) == dumped


def test_a_game_replays_from_its_seed_and_action_log() -> None:
    game = Miser()
    results, log = play_game("replay", 6, scope_rng=random.Random(3))
    stored = json.loads(json.dumps([[seat, action.to_json()] for seat, action in log]))
    state = game.new(game.parse_options({}), seats(6), KeyedDraws("replay")).state
    for step, (seat, data) in enumerate(stored, start=1):
        state = game.apply(state, seat, Action.from_json(data), KeyedDraws("replay")).state
        if step % 25 == 0:
            state = game.load(game.dump(state))
    assert game.dump(state) == game.dump(results[-1].state)


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    seed=st.text(min_size=1, max_size=8),
    n=st.integers(min_value=3, max_value=8),
    timeouts=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
    pennies=st.sampled_from(["20", "20", "5", "40"]),
)
def test_random_games_keep_pennies_and_cards_and_always_end(
    seed: str, n: int, timeouts: float, pennies: str
) -> None:
    results, _ = play_game(seed, n, timeouts=timeouts, options={"pennies": pennies},
                           scope_rng=random.Random(seed))  # fmt: skip
    deck = sorted(str(c) for c in full_deck())
    for result in results:
        state = result.state
        assert sum(state.pennies) + state.centre == int(pennies) * n
        assert min(state.pennies) >= 0
        assert sorted(all_cards(state)) == deck
        assert_no_public_leak(result)
        assert sum(notice.audience.public for notice in result.notices) <= 1
        for notice in result.notices:
            json.dumps(dict(notice.context))
    final = results[-1].state
    assert final.over and 0 in final.pennies
    assert final.winners == [p for p in range(n) if final.pennies[p] == max(final.pennies)]


def test_nothing_public_ever_names_a_card_still_in_a_hand() -> None:
    for seed in ("leak-a", "leak-b", "leak-c"):
        results, _ = play_game(seed, 4, scope_rng=random.Random(1))
        for result in results:
            assert_no_public_leak(result)


# -- the mails ------------------------------------------------------------------------------------


def context_for(notice: Notice, seat: int | None = None) -> dict[str, Any]:
    """A notice's context plus what the service adds to every mail."""
    if seat is None and not notice.audience.public:
        seat = min(notice.audience.seats)
    return {
        "tag": "miser-1",
        "game_title": "Miser",
        "seat": seat,
        "seat_name": None,
        "deadline": "Wed 25 Nov 2026 18:00 UTC",
        "waiting_for": [],
        "public_list": None,
        "timeout_for": None,
        **notice.context,
    }


TEMPLATES = (
    "opening", "hand", "your_move", "offer", "declined", "contract", "attack", "down", "flip",
    "auction", "round_report", "resign",
)  # fmt: skip


def test_every_template_renders_from_a_real_notice() -> None:
    composer = Composer("referee@example.org", "Referee")
    notices: dict[str, list[Notice]] = {}
    for seed in ("mail-a", "mail-b", "mail-c", "mail-d"):
        results, _ = play_game(seed, 4, scope_rng=random.Random(seed))
        for result in results:
            for notice in result.notices:
                notices.setdefault(notice.template, []).append(notice)
    table = Table(made(["KS", "QH", "4S"]))
    notices["resign"] = list(table.game.replace_with_bot(table.state, BEN).notices)
    assert set(notices) == set(TEMPLATES)
    for template, group in notices.items():
        for notice in group[:40]:
            for timeout_for in (None, "Ben"):
                context = {**context_for(notice), "timeout_for": timeout_for}
                subject, body = composer.render("miser", template, context)
                assert subject.startswith("[miser-1] "), template
                assert "MI-" not in body and "MI-" not in subject
                assert max(len(line) for line in body.splitlines()) <= 100, template


def test_a_secret_mail_does_not_render_for_another_seat() -> None:
    composer = Composer("referee@example.org", "Referee")
    table = Table(made(["KS", "QH", "4S"]))
    notice = only(table.act(ANN, "hand"), "hand")
    composer.render("miser", "hand", context_for(notice, ANN))
    for seat in (None, BEN):
        with pytest.raises(Exception, match="secret_mail_rendered_for_another_seat"):
            composer.render("miser", "hand", context_for(notice, seat) | {"seat": seat})


def test_the_opening_names_the_draw_the_seating_and_how_to_write_each_move() -> None:
    game = Miser()
    result = game.new(game.parse_options({}), seats(3), KeyedDraws("open"))
    notice = only(result, "opening")
    subject, body = Composer("referee@example.org", "Referee").render(
        "miser", "opening", context_for(notice)
    )
    first = NAMES[result.state.first]
    assert subject == f"[miser-1] Miser begins: {first} goes first"
    for text in ("1. Ann", "2. Ben", "3. Cat", "17 cards each", "1 card was first removed",
                 "pass", "contract with", "attack", "bid 7H 3", "20 pennies"):  # fmt: skip
        assert text in body, text


def test_engine_imports_only_the_standard_library_pydantic_and_the_engine() -> None:
    import referee.games.miser as engine
    import referee.games.miser.rules as rules
    import referee.games.miser.views as views
    import referee.games.miser.words as grammar

    # One way inside the package: the words and the views read the rules
    # (the views the bot's view of a seat too), the package reads them, the
    # bot and its mailbox check, and the rules read none of them.
    games = {"referee.games.base", "referee.games.cards", "referee.games.draws",
             "referee.games.names"}
    allowed = {
        engine: games | {"referee.games.miser.rules", "referee.games.miser.views",
                         "referee.games.miser.words", "referee.games.miser.bot",
                         "referee.games.mailcheck", "referee.games.miser.verify"},
        grammar: games | {"referee.games.miser.rules"},
        views: games | {"referee.games.miser.rules", "referee.games.miser.bot"},
        rules: games,
    }  # fmt: skip
    for module, inside in allowed.items():
        with open(str(module.__file__), encoding="utf-8") as file:
            source = file.read()
        imports = set(re.findall(r"^\s*from (\S+) import", source, re.MULTILINE))
        assert all(i in inside or i in ("__future__", "collections.abc", "dataclasses", "typing",
                                        "itertools")
                   for i in imports), imports  # fmt: skip
        assert not re.search(r"^\s*import (?!(random|re|copy)$)", source, re.MULTILINE)
        assert "MI-" not in "".join(re.findall(r'IllegalAction\(\s*f?"[^"]*"', source))


# -- editions: a game plays on under the rules it began with -----------------------


def test_a_state_stored_before_aliases_is_of_edition_1_with_no_other_names() -> None:
    """A game stored before 2026-11-25 holds no aliases (or, stored again
    since, none for any player): edition 1, its players known by no other
    name; a later game holds a list for each player and is of edition 2."""
    game = Miser()
    stored = game.dump(made(["2S", "2H", "2D"]))
    del stored["edition"]
    assert stored["aliases"] == []
    state = game.load(stored)
    assert (state.edition, state.aliases) == (1, [[], [], []])
    del stored["aliases"]
    assert game.load(stored).aliases == [[], [], []]
    later = game.new(game.parse_options({}), seats(3), KeyedDraws("e")).state
    assert later.edition == game.edition == 3
    stored = game.dump(later)
    del stored["edition"]
    assert game.load(stored).edition == 2


def test_a_replay_begins_under_the_edition_it_is_given_and_no_other() -> None:
    game = Miser()
    assert game.new({"edition": 1}, seats(3), KeyedDraws("e")).state.edition == 1
    with pytest.raises(OptionError, match="no edition 4"):
        game.new({"edition": 4}, seats(3), KeyedDraws("e"))


def test_mi_8_in_a_game_of_edition_1_a_bidder_still_owes_her_done() -> None:
    """Before the house reading (edition 1) a bid or a raise was not its
    bidder's "done": she owes one like every other bidder, and the bidding
    waits for it, as the game began."""
    table = Table(replace(made(["2S 3S", "2H 3H", "2D 3D"], centre=10), edition=1))
    opened = table.act(ANN, "bid 3S 2")
    assert {p.seat for p in table.game.pending(table.state)} == {ANN, BEN, CAT}
    assert table.game.help(table.state, ANN).startswith(
        "A bid or a raise came since you last said done. Write\n'raise 1' to add a penny")
    _, body = Composer("referee@example.org", "Referee").render(
        "miser", "auction", context_for(only(opened, "auction")))
    assert ('Bidders may\nadd ("raise 2") but never withdraw: after every bid or raise, each\n'
            'bidder writes "raise" or "done" (her own too, as this game began). The bidding '
            "ends when nobody owes a step.\n") in body
    table.act(BEN, "bid 2H 1")
    table.act(CAT, "done")
    table.act(BEN, "done")
    assert table.state.auction is not None  # Ann has not said done
    table.act(ANN, "raise 1")
    assert {p.seat for p in table.game.pending(table.state)} == {ANN, BEN}
    table.act(BEN, "done")
    table.act(ANN, "done")
    r = report(table.last)
    assert r["winner"] == "Ann" and [b["pennies"] for b in r["bids"]] == [3, 1]
