"""Tests of the Spades engine against rule text 001 and rulings SP-1 … SP-18."""

from __future__ import annotations

import ast
import json
import random
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games.base import (
    Action,
    Event,
    IllegalAction,
    Notice,
    OptionError,
    ParseError,
    Result,
    Scope,
    SeatInfo,
)
from referee.games.cards import RANKS, full_deck
from referee.games.draws import KeyedDraws, SequentialDraws
from referee.games.spades import Spades
from referee.games.spades.rules import (
    VALID_BIDS,
    SpadesState,
    card_text,
    dealt_hand,
    first_leader,
    hand_commitment,
    legal_plays,
    score_team,
    sort_hand,
    trick_winner,
)
from tests.games.seeded import seeded

NAMES = ("Ann", "Ben", "Cat", "Dan")
SEATS = [SeatInfo(position, name) for position, name in enumerate(NAMES, start=1)]
ANN, BEN, CAT, DAN = 1, 2, 3, 4  # seat positions; with SEATING they are players 1-4
SEATING = [ANN, BEN, CAT, DAN]

HIGH_FIRST = list(reversed(RANKS))

#: Each player holds one whole suit: Ann the spades, so she wins every trick.
SUITED = [" ".join(f"{r}{suit}" for r in HIGH_FIRST) for suit in "SHDC"]

#: Mixed hands: Cat holds no hearts and no clubs, Dan no diamonds.
MIXED = [
    "AS KS QS 2H 3H 4H 2D 3D 4D 2C 3C 4C 5C",
    "2S 3S 4S AH KH QH JH 5D 6D 6C 7C 8C 9C",
    "5S 6S 7S 8S 9S AD KD QD JD 10D 9D 8D 7D",
    "10S JS 10H 9H 8H 7H 6H 5H AC KC QC JC 10C",
]

#: The context keys every notice carries, and those of each template.
COMMON_KEYS = {
    "round", "target", "phase", "players", "teams", "bidding_order", "to_move", "what",
    "trick_number", "trick", "led_suit", "game_over", "winning_team", "winners", "end_reason",
}  # fmt: skip
TEMPLATE_KEYS = {
    "opening": {"teams_chosen", "valid_bids", "hand_commitments"},
    "hand": {"you", "reason", "valid_bids", "hand_cards", "hand_salt"},
    "your_turn": {"you", "valid_bids", "misplay"},
    "bid": {"name", "bid", "bid_text", "bidding_over", "leader"},
    "play": {"name", "card", "card_text"},
    "trick": {"name", "card", "card_text", "completed"},
    "round_report": {"name", "card", "card_text", "completed", "report", "hand_commitments"},
    "misplay": {"name", "team", "penalty", "misplays_hand", "misplays_game", "forfeit"},
    "concession": {"name", "team", "partner", "partner_conceded"},
}
PLAYER_KEYS = {"number", "seat", "name", "team", "bid", "tricks", "cards_left", "conceded"}
TEAM_KEYS = {"number", "names", "score", "bags", "bid", "tricks", "misplays_hand", "misplays_game"}
YOU_KEYS = {
    "name", "seat", "number", "team", "hand", "hand_by_suit", "hand_text", "your_move",
    "legal", "legal_text",
}  # fmt: skip
PLAY_KEYS = {"name", "card", "card_text"}
COMPLETED_KEYS = {"number", "leader", "plays", "winner", "winning_card", "winning_card_text"}
REPORT_TEAM_KEYS = {
    "number", "names", "bids", "tricks", "team_bid", "team_tricks", "doubled", "made",
    "contract_points", "overtricks", "overtrick_points", "nils", "nil_points", "bags_before",
    "bags_added", "bags", "sandbag_penalties", "sandbag_points", "round_points",
    "misplay_points", "previous_score", "score",
}  # fmt: skip
MISPLAY_KEYS = {"card", "card_text", "reason", "message"}


# -- helpers ------------------------------------------------------------------


class Table:
    """A game at a table of four, with every result kept for inspection."""

    def __init__(
        self,
        deals: Sequence[Sequence[str]] | None = None,
        *,
        seating: Sequence[int] | None = SEATING,
        options: Mapping[str, str] | None = None,
        seed: str = "test",
    ) -> None:
        self.game = Spades(deals=deals, seating=seating)
        self.seed = seed
        self.step = 0
        self.opening = self.game.new(self.game.parse_options(options or {}), SEATS, self.rng())
        self.state: SpadesState = self.opening.state
        self.results: list[Result[SpadesState]] = [self.opening]

    def rng(self) -> KeyedDraws:
        return KeyedDraws(self.seed)

    def act(self, seat: int, text: str) -> Result[SpadesState]:
        action = self.game.parse(text)
        assert action is not None, text
        return self.apply(seat, action)

    def apply(self, seat: int, action: Action) -> Result[SpadesState]:
        self.step += 1
        result = self.game.apply(self.state, seat, action, self.rng())
        self.state = result.state
        self.results.append(result)
        return result

    @property
    def due(self) -> int:
        (pending,) = self.game.pending(self.state)
        return pending.seat

    def bid(self, *bids: int) -> Result[SpadesState]:
        """Bid in turn, starting with the player due."""
        result = self.results[-1]
        for bid in bids:
            result = self.act(self.due, f"bid {bid}")
        return result

    def play_first_legal(self) -> Result[SpadesState]:
        player = self.state.order.index(self.due)
        card = legal_plays(self.state.hands[player], self.state.trick)[0]
        return self.act(self.due, f"play {card}")

    def finish_round(self, bids: Sequence[int] = (3, 3, 3, 3)) -> Result[SpadesState]:
        """Bid (if still bidding) and play the first legal card until the round ends."""
        start = self.state.round
        if self.state.phase == "bidding":
            self.bid(*bids[sum(b is not None for b in self.state.bids) :])
        result = self.results[-1]
        while self.state.round == start and not self.game.is_over(self.state):
            result = self.play_first_legal()
        return result

    def hand_of(self, seat: int) -> list[str]:
        return self.state.hands[self.state.order.index(seat)]

    def notices(self, template: str) -> list[Notice]:
        return [n for r in self.results for n in r.notices if n.template == template]


def public(result: Result[SpadesState]) -> list[Notice]:
    return [n for n in result.notices if n.audience.public]


def secret(result: Result[SpadesState]) -> list[Notice]:
    return [n for n in result.notices if not n.audience.public]


def only(result: Result[SpadesState], template: str) -> Notice:
    (notice,) = [n for n in result.notices if n.template == template]
    return notice


def team_report(result: Result[SpadesState], number: int) -> dict[str, Any]:
    report: dict[str, Any] = only(result, "round_report").context["report"]
    return dict(report["teams"][number - 1])


_CARD_RE = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AKQJT])[SHDC♠♥♦♣](?![A-Za-z])")
_SPELLINGS = {
    f"{rank}{suit}": f"{r}{s}"
    for r in RANKS
    for rank in ({r, "T"} if r == "10" else {r})
    for s, symbol in zip("SHDC", "♠♥♦♣", strict=True)
    for suit in (s, symbol)
}


def cards_named(value: Any) -> set[str]:
    """Every card written anywhere in ``value`` (keys, values, event texts),
    as ``QH``, ``Q♥`` or ``TH``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return {_SPELLINGS[match] for match in _CARD_RE.findall(text)}


def in_hands(state: SpadesState) -> set[str]:
    return {c for hand in state.hands for c in hand}


def assert_no_public_leak(
    game: Spades,
    before: SpadesState,
    result: Result[SpadesState],
    action: Action | None,
    acting: int | None,
) -> None:
    """SP-17: nothing public names a card still in some hand, and a seat's
    view (checked for the seat that acted and the seat due) names no card of
    another hand. When the action ends a round, the last trick (from the old
    deal) is left out of the check against the new hands: those cards were
    played."""
    after = result.state
    hidden = in_hands(after)
    new_deal = after.round != before.round
    for notice in public(result):
        context = dict(notice.context)
        if new_deal:
            for key in ("card", "card_text", "completed"):
                context.pop(key, None)
        assert not cards_named(context) & hidden, notice.template
    old_hidden = in_hands(before) - {str(action.args[0]) if action and action.args else ""}
    for event in result.events:
        if not event.public:
            continue
        old_deal = new_deal and event.kind in ("play", "trick")
        named = cards_named([event.text, dict(event.data)])
        assert not named & (old_hidden if old_deal else hidden), event.kind
    # The round reports in a view hold no card; leaving them out keeps this fast.
    assert not cards_named({**game.view(after, None), "rounds": []}) & hidden
    seats = {*(a for a in [acting] if a is not None), *(p.seat for p in game.pending(after))}
    for seat in seats:
        own = set(after.hands[after.order.index(seat)])
        assert not cards_named({**game.view(after, seat), "rounds": []}) & (hidden - own)


def assert_notice_shapes(notices: Iterable[Notice]) -> None:
    """The context keys promised to the template writer, and JSON-able values."""
    for notice in notices:
        context = dict(notice.context)
        json.dumps(context)
        assert set(context) == COMMON_KEYS | TEMPLATE_KEYS[notice.template], notice.template
        assert all(set(p) == PLAYER_KEYS for p in context["players"])
        assert all(set(t) == TEAM_KEYS for t in context["teams"])
        assert all(set(p) == PLAY_KEYS for p in context["trick"])
        if "you" in context:
            assert set(context["you"]) == YOU_KEYS
        if "completed" in context:
            assert set(context["completed"]) == COMPLETED_KEYS
            assert all(set(p) == PLAY_KEYS for p in context["completed"]["plays"])
        if "report" in context:
            assert set(context["report"]) == {"round", "teams"}
            for team in context["report"]["teams"]:
                assert set(team) == REPORT_TEAM_KEYS
        if context.get("misplay") is not None:
            assert set(context["misplay"]) == MISPLAY_KEYS


def scripted_suited_round(table: Table) -> Result[SpadesState]:
    """Play the SUITED deal card by card: Ann leads her spades from the top
    and the others follow with their own suits."""
    result = table.results[-1]
    for rank in HIGH_FIRST:
        for seat, suit in zip(SEATING, "SHDC", strict=True):
            result = table.act(seat, f"play {rank}{suit}")
    return result


# -- options and seating (SP-1) ------------------------------------------------


def test_options_default_to_the_rule_text() -> None:
    assert Spades().parse_options({}) == {"teams": None, "target": 500, "bot": "sensible"}
    assert Spades().seat_count({}) == (4, 4)


def test_options_take_teams_and_a_target() -> None:
    options = Spades().parse_options({"teams": "Ann+Cat, Ben+Dan", "target": "300"})
    assert options == {"teams": "Ann+Cat, Ben+Dan", "target": 300, "bot": "sensible"}


@pytest.mark.parametrize(
    "raw",
    [
        {"target": "lots"},
        {"target": "0"},
        {"teams": "Ann+Cat+Ben,Dan"},
        {"teams": "Ann+Cat,Ben"},
        {"teams": "Ann+Ann,Ben+Dan"},
        {"teams": "Ann+Cat,Ben+Dan,Eve+Fay"},
        {"deadline": "3"},
    ],
)
def test_bad_options_are_refused_by_name(raw: dict[str, str]) -> None:
    with pytest.raises(OptionError, match=next(iter(raw))):
        Spades().parse_options(raw)


def test_a_teams_option_naming_no_player_is_refused_at_the_start() -> None:
    game = Spades()
    with pytest.raises(OptionError, match="Eve"):
        game.new(game.parse_options({"teams": "Ann+Eve,Ben+Dan"}), SEATS, seeded(0))


def test_a_teams_option_may_name_players_by_address() -> None:
    game = Spades()
    options = game.parse_options({"teams": "ann@example.org+cat@example.org"})
    for seed in range(20):
        order = game.new(options, SEATS, seeded(seed)).state.order
        assert {order[0], order[2]} in ({ANN, CAT}, {BEN, DAN})


def test_spades_needs_exactly_four_players() -> None:
    with pytest.raises(OptionError, match="4 players"):
        Spades().new(Spades().parse_options({}), SEATS[:3], seeded(0))


def test_chosen_partners_sit_opposite_and_the_first_pair_is_team_1() -> None:
    game = Spades()
    options = game.parse_options({"teams": "ann+CAT,Ben+Dan"})
    orders = set()
    for seed in range(200):
        order = game.new(options, SEATS, seeded(seed)).state.order
        assert {order[0], order[2]} == {ANN, CAT}
        orders.add(tuple(order))
    assert len(orders) == 4  # who of each pair plays first is drawn


def test_the_first_pair_given_is_team_1_in_the_opening() -> None:
    game = Spades()
    for teams in ("Ben+Dan,Ann+Cat", "Ben+Dan", "dan+ben"):
        for seed in range(20):
            result = game.new(game.parse_options({"teams": teams}), SEATS, seeded(seed))
            (opening,) = public(result)
            assert sorted(opening.context["teams"][0]["names"]) == ["Ben", "Dan"]


ALIASED = [SeatInfo(1, "Ann Lee", aliases=("ann",)), SeatInfo(2, "Ben Ray", aliases=("ben",)),
           SeatInfo(3, "Cat Moss", aliases=("cmoss",)), SeatInfo(4, "Dan", aliases=("dan",))]


@pytest.mark.parametrize("teams", [
    "ann@example.org+cmoss@example.org,ben@example.org+dan@example.org",
    "Ann Lee+Cat Moss,Ben Ray+Dan",
    "ann+cat, ben+dan",
    "Lee+Moss",
    " ANN LEE + cmoss ",
])
def test_teams_name_players_by_address_name_word_or_local_part(teams: str) -> None:
    game = Spades()
    for seed in range(10):
        order = game.new(game.parse_options({"teams": teams}), ALIASED,
                         seeded(seed)).state.order
        assert {order[0], order[2]} == {1, 3}


@pytest.mark.parametrize(("teams", "message"), [
    ("ann+eve,ben+dan", r"^teams: There is no player 'eve'\. You may name Ann Lee, Ben Ray, "
                        r"Cat Moss or Dan\.$"),
    ("ann+cat,ann lee+dan", r"^teams: 'ann\+cat,ann lee\+dan' names Ann Lee twice$"),
    ("ann+cat,ben+dan,eve+fay", r"^teams: .* should be two pairs of players"),
])
def test_a_bad_teams_value_is_one_error_naming_what_is_wrong(teams: str, message: str) -> None:
    game = Spades()
    with pytest.raises(OptionError, match=message):
        game.new(game.parse_options({"teams": teams}), ALIASED, seeded(0))


def test_a_teams_name_that_fits_two_players_is_refused_with_both() -> None:
    seats = [SeatInfo(1, "Ann Lee"), SeatInfo(2, "Ann Moss"), *SEATS[2:]]
    game = Spades()
    with pytest.raises(OptionError, match=r"^teams: 'Ann' could be Ann Lee or Ann Moss: "
                                          r"write the whole name\.$"):
        game.new(game.parse_options({"teams": "Ann+Cat"}), seats, seeded(0))


def test_teams_chosen_with_the_seats_are_respected() -> None:
    seats = [
        SeatInfo(1, "Ann", team="red"),
        SeatInfo(2, "Ben", team="blue"),
        SeatInfo(3, "Cat", team="blue"),
        SeatInfo(4, "Dan", team="red"),
    ]
    game = Spades()
    for seed in range(50):
        order = game.new(game.parse_options({}), seats, seeded(seed)).state.order
        assert {order[0], order[2]} in ({ANN, DAN}, {BEN, CAT})


def test_teams_from_the_seats_and_the_option_must_agree() -> None:
    seats = [SeatInfo(1, "Ann", team="x"), SeatInfo(2, "Ben", team="x"), *SEATS[2:]]
    game = Spades()
    with pytest.raises(OptionError, match="teams"):
        game.new(game.parse_options({"teams": "Ann+Cat"}), seats, seeded(0))


def test_without_teams_every_pairing_can_be_drawn() -> None:
    game = Spades()
    pairings = set()
    for seed in range(100):
        order = game.new(game.parse_options({}), SEATS, seeded(seed)).state.order
        pairings.add(frozenset((frozenset(order[0::2]), frozenset(order[1::2]))))
    assert len(pairings) == 3


def test_players_1_and_3_are_team_1_and_the_opening_says_who_bids_first() -> None:
    table = Table(seating=[DAN, ANN, BEN, CAT])
    (opening,) = public(table.opening)
    assert opening.template == "opening"
    assert [t["names"] for t in opening.context["teams"]] == [["Dan", "Ben"], ["Ann", "Cat"]]
    assert opening.context["to_move"] == "Dan"
    assert opening.context["bidding_order"] == ["Dan", "Ann", "Ben", "Cat"]
    assert opening.context["valid_bids"] == [0, *range(2, 14)]


# -- the deal (rule 1, SP-17) --------------------------------------------------


def test_each_player_is_dealt_13_cards_of_one_deck_by_secret_notice() -> None:
    table = Table(seating=None)
    hands = table.state.hands
    assert [len(h) for h in hands] == [13] * 4
    assert sorted(c for h in hands for c in h) == sorted(str(c) for c in full_deck())
    notices = secret(table.opening)
    assert len(notices) == 4
    for notice in notices:
        (seat,) = notice.audience.seats
        assert notice.template == "hand"
        assert notice.context["you"]["hand"] == sort_hand(table.hand_of(seat))


def test_the_deal_event_is_secret_and_the_public_events_name_no_card() -> None:
    table = Table(seating=None)
    (hands_event,) = [e for e in table.opening.events if e.kind == "hands"]
    assert not hands_event.public
    assert not cards_named([e.text for e in table.opening.events if e.public])


def test_hands_are_sorted_by_suit_with_the_highest_card_first() -> None:
    assert sort_hand(["2H", "AS", "10D", "KH", "3S", "QC"]) == ["AS", "3S", "KH", "2H", "QC", "10D"]


def test_the_first_bidder_is_told_in_the_hand_notice_to_bid() -> None:
    table = Table([MIXED])
    by_seat = {next(iter(n.audience.seats)): n.context for n in secret(table.opening)}
    assert by_seat[ANN]["you"]["your_move"] is True
    assert by_seat[BEN]["you"]["your_move"] is False
    assert by_seat[ANN]["you"]["hand_text"].splitlines()[0] == "♠ A K Q"


# -- parsing --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("bid 4", Action("bid", (4,))),
        ("Bid Four.", Action("bid", (4,))),
        ("bid nil", Action("bid", (0,))),
        ("bid 0", Action("bid", (0,))),
        ("nil", Action("bid", (0,))),
        ("bid 13", Action("bid", (13,))),
        ("bid 1", Action("bid", (1,))),
        ("play QH", Action("play", ("QH",))),
        ("play Q♥", Action("play", ("QH",))),
        ("play qh", Action("play", ("QH",))),
        ("play queen of hearts", Action("play", ("QH",))),
        ("play the ace of spades", Action("play", ("AS",))),
        ("play 10d", Action("play", ("10D",))),
        ("play td", Action("play", ("10D",))),
        ("hand", Action("hand")),
        ("concede", Action("concede")),
    ],
)
def test_commands_are_read_in_the_usual_spellings(line: str, action: Action) -> None:
    assert Spades().parse(line) == action


@pytest.mark.parametrize("line", ["", "hello all", "QH", "as", "good luck, partner"])
def test_lines_that_are_no_spades_command_are_left_alone(line: str) -> None:
    assert Spades().parse(line) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("play XYZ", "'xyz' as a card"),
        ("play", "nothing"),
        ("bid eleventy", "valid bids are 0 \\(nil\\), 2"),
        ("bid 14", "14 is not a valid bid"),
        ("bid", "nothing"),
    ],
)
def test_malformed_commands_are_parse_errors_that_explain(line: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        Spades().parse(line)


@pytest.mark.parametrize("line", ["bid ²", "bid 8¹", "bid: ³", "bid " + "1" * 5000])
def test_a_bid_in_digits_int_cannot_read_is_refused_as_unreadable_sp_14(line: str) -> None:
    # SP-14: unparseable text is simply refused. "²" passes str.isdigit but
    # int() raises ValueError on it (and on 5,000 digits): a fault of ours.
    with pytest.raises(ParseError, match="as a bid"):
        Spades().parse(line)


@pytest.mark.parametrize(
    ("line", "card"),
    [("play Q♥\ufe0f", "QH"), ("play 10♦\ufe0f", "10D"), ("play t♠\ufe0e", "10S")],
)
def test_a_suit_symbol_in_emoji_style_reads_as_the_suit(line: str, card: str) -> None:
    # Q♥ as a phone sends it: the symbol, then a variation selector.
    assert Spades().parse(line) == Action("play", (card,))


@pytest.mark.parametrize("verb", ["bid", "play", "hand", "concede"])
@pytest.mark.parametrize("scope", list(Scope))
def test_every_command_is_accepted_in_every_scope(verb: str, scope: Scope) -> None:
    Spades().accepts(Action(verb), scope)


# -- bidding (SP-3, SP-4, SP-5) ---------------------------------------------------


def test_player_1_bids_first_in_round_1_and_the_next_player_each_later_round() -> None:
    table = Table(seed="rotation")
    for round_number, first in zip(range(1, 6), [ANN, BEN, CAT, DAN, ANN], strict=True):
        assert table.state.round == round_number
        assert table.due == first
        table.finish_round()


def test_each_bid_is_announced_with_whose_turn_is_next() -> None:
    table = Table([MIXED])
    result = table.act(ANN, "bid 4")
    (notice,) = public(result)
    assert notice.template == "bid"
    assert notice.context["name"] == "Ann"
    assert notice.context["bid"] == 4
    assert notice.context["to_move"] == "Ben"
    assert notice.context["bidding_over"] is False
    (turn,) = secret(result)
    assert turn.template == "your_turn"
    assert turn.audience.seats == {BEN}


def test_a_bid_of_1_is_refused_with_the_valid_bids() -> None:
    table = Table([MIXED])
    with pytest.raises(IllegalAction, match=r"1 is not a valid bid.*0 \(nil\), 2, 3"):
        table.act(ANN, "bid 1")
    assert table.state.bids == [None] * 4


def test_partners_bids_have_no_combined_cap() -> None:
    table = Table([MIXED])
    table.bid(13, 2, 13, 2)
    assert table.state.bids == [13, 2, 13, 2]


def test_a_bid_out_of_turn_is_refused() -> None:
    table = Table([MIXED])
    with pytest.raises(IllegalAction, match="Ann's turn to bid"):
        table.act(BEN, "bid 3")


def test_a_player_bids_once() -> None:
    table = Table([MIXED])
    table.act(ANN, "bid 3")
    with pytest.raises(IllegalAction, match="Ben's turn"):
        table.act(ANN, "bid 4")


def test_the_highest_bidder_leads_after_four_bids() -> None:
    table = Table([MIXED])
    result = table.bid(3, 5, 4, 2)
    bid = only(result, "bid")
    assert bid.context["bidding_over"] is True
    assert bid.context["leader"] == "Ben"
    assert table.due == BEN
    assert only(result, "your_turn").context["you"]["legal"] == sort_hand(MIXED[1].split())


def test_a_tie_for_highest_bid_goes_to_the_earliest_in_this_rounds_bidding_order() -> None:
    table = Table([MIXED, MIXED], seed="tie")
    table.finish_round()
    assert table.due == BEN  # round 2: Ben bids first, then Cat, Dan, Ann
    table.bid(3, 4, 2, 4)
    assert table.due == CAT  # not Ann, though Ann is player 1


def test_first_lead_when_everyone_bids_nil_is_the_first_bidder() -> None:
    assert first_leader([0, 0, 0, 0], first_bidder=2) == 2
    assert first_leader([5, 0, 5, 0], first_bidder=1) == 2
    assert first_leader([5, 0, 5, 0], first_bidder=3) == 0


def test_cards_cannot_be_played_during_the_bidding() -> None:
    table = Table([MIXED])
    with pytest.raises(IllegalAction, match="bidding is not over"):
        table.act(ANN, "play AS")


def test_bids_are_refused_once_the_bidding_is_over() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    with pytest.raises(IllegalAction, match="bidding is over"):
        table.act(ANN, "bid 3")


# -- trick play (SP-2, SP-6, SP-7) ----------------------------------------------------


def test_the_ace_ranks_high_and_ten_beats_nine() -> None:
    assert trick_winner(["KH", "AH", "2H", "QH"]) == 1
    assert trick_winner(["9D", "10D", "2C", "3C"]) == 1


def test_without_spades_the_highest_card_of_the_suit_led_wins() -> None:
    assert trick_winner(["10H", "AD", "JH", "AC"]) == 2


def test_the_highest_spade_wins_when_any_spade_is_played() -> None:
    assert trick_winner(["AH", "2S", "KH", "3S"]) == 3
    assert trick_winner(["2S", "AH", "AD", "AC"]) == 0


def test_a_spade_may_be_led_on_the_first_trick() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    result = table.act(ANN, "play AS")
    assert only(result, "play").context["card"] == "AS"
    assert table.state.trick == ["AS"]
    assert not result.penalty


def test_a_trick_is_announced_with_its_cards_its_winner_and_the_next_leader() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    table.act(BEN, "play AH")
    table.act(CAT, "play 5S")  # Cat has no hearts: a spade trumps
    result = table.act(DAN, "play 10H")
    (notice,) = public(result)
    assert notice.template == "trick"
    completed = notice.context["completed"]
    assert [p["card"] for p in completed["plays"]] == ["2H", "AH", "5S", "10H"]
    assert completed["winner"] == "Cat"
    assert completed["winning_card"] == "5S"
    assert notice.context["to_move"] == "Cat"
    assert only(result, "your_turn").audience.seats == {CAT}
    assert table.state.tricks_won == [0, 0, 1, 0]


def test_the_trick_winner_leads_and_an_off_suit_ace_does_not_win() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    for seat, card in zip(SEATING, ["2H", "AH", "5S", "10H"], strict=True):
        table.act(seat, f"play {card}")
    table.act(CAT, "play AD")
    table.act(DAN, "play AC")  # Dan has no diamonds: any card is legal
    table.act(ANN, "play 2D")
    result = table.act(BEN, "play 5D")
    assert only(result, "trick").context["completed"]["winner"] == "Cat"


def test_the_player_to_move_is_told_the_legal_cards() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    result = table.act(ANN, "play 2H")
    turn = only(result, "your_turn")
    assert turn.audience.seats == {BEN}
    assert turn.context["you"]["legal"] == ["AH", "KH", "QH", "JH"]
    assert turn.context["led_suit"] == "hearts"


def test_a_player_void_in_the_suit_led_may_play_any_card() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    table.act(BEN, "play AH")
    assert legal_plays(table.hand_of(CAT), table.state.trick) == table.hand_of(CAT)
    table.act(CAT, "play AD")
    assert table.state.scores == [0, 0]


# -- a whole round, card by card, and its scoring (SP-8 … SP-12) --------------------------


def test_a_fixed_deal_plays_a_whole_round_card_by_card() -> None:
    table = Table([SUITED])
    table.bid(13, 0, 0, 0)  # Ann 13, Ben nil, Cat nil, Dan nil
    result = scripted_suited_round(table)
    tricks = table.notices("trick")
    assert len(tricks) == 12
    assert all(n.context["completed"]["winner"] == "Ann" for n in tricks)
    assert len(table.notices("play")) == 39
    report = only(result, "round_report").context
    assert report["completed"]["number"] == 13
    one, two = report["report"]["teams"]
    # Team 1 bid 13 (Ann 13, Cat nil): doubled, made; Cat's nil made.
    assert (one["team_bid"], one["team_tricks"], one["doubled"]) == (13, 13, True)
    assert (one["contract_points"], one["nil_points"], one["round_points"]) == (260, 100, 360)
    # Team 2: both partners nil, both made, the team bid of 0 made.
    assert (two["team_bid"], two["contract_points"], two["nil_points"]) == (0, 0, 200)
    assert table.state.scores == [360, 200]
    assert table.state.round == 2
    assert len(secret(result)) == 4  # the new hands
    assert_notice_shapes(n for r in table.results for n in r.notices)


def test_a_team_that_takes_fewer_tricks_than_its_bid_is_set_and_gets_no_bags() -> None:
    table = Table([SUITED])
    table.bid(2, 5, 3, 4)  # Ben leads; Ann trumps every trick
    result = table.finish_round()
    one, two = team_report(result, 1), team_report(result, 2)
    assert (one["team_bid"], one["team_tricks"], one["round_points"], one["bags"]) == (5, 13, 58, 8)
    assert (two["team_bid"], two["made"], two["contract_points"], two["bags"]) == (9, False, -90, 0)
    assert table.state.scores == [58, -90]


def test_the_10th_and_20th_bag_in_one_round_each_cost_100() -> None:
    table = Table([SUITED])
    table.state.bags = [9, 0]
    table.bid(2, 2, 0, 2)
    result = table.finish_round()
    one = team_report(result, 1)
    assert (one["overtricks"], one["bags_before"], one["bags"]) == (11, 9, 20)
    assert (one["sandbag_penalties"], one["sandbag_points"]) == (2, -200)
    assert one["round_points"] == 20 + 11 + 100 - 200
    assert table.state.bags == [20, 0]


@pytest.mark.parametrize(
    ("bids", "tricks", "bags", "expected"),
    [
        # made: 10 a bid, +1 and a bag per overtrick
        ((3, 4), (4, 4), 0, {"contract_points": 70, "overtricks": 1, "round_points": 71}),
        # set: -10 a bid, no bags
        ((3, 4), (3, 2), 0, {"made": False, "contract_points": -70, "bags": 0}),
        # SP-9 (sp_9): a team bid of 10 or more counts 20 a bid, made or set;
        # the test is on the combined bid, and overtricks still score 1
        ((5, 5), (6, 5), 0, {"doubled": True, "contract_points": 200, "round_points": 201}),
        ((6, 4), (5, 4), 0, {"doubled": True, "made": False, "contract_points": -200}),
        ((4, 5), (4, 5), 0, {"doubled": False, "contract_points": 90}),
        # SP-8, SP-12: nil made and set; a nil bidder's tricks count for the team
        ((0, 4), (0, 5), 0, {"nil_points": 100, "round_points": 141}),
        ((0, 4), (2, 3), 0, {"made": True, "nil_points": -100, "round_points": -59}),
        # SP-12: a nil can be made while the team is set
        ((0, 5), (0, 3), 0, {"made": False, "contract_points": -50, "round_points": 50}),
        # SP-10 (sp_10): both partners nil: the bid of 0 is made, each trick is an
        # overtrick, and each nil scores ±100 (no flat ±200)
        ((0, 0), (0, 0), 0, {"made": True, "nil_points": 200, "round_points": 200}),
        ((0, 0), (1, 2), 0, {"overtricks": 3, "bags": 3, "nil_points": -200, "round_points": -197}),
        # SP-11 (sp_11): the 10th bag costs 100, the count is never reset, and
        # each multiple of 10 crossed costs 100, two in one round if need be
        ((2, 2), (4, 1), 9, {"bags": 10, "sandbag_penalties": 1, "round_points": 41 - 100}),
        ((2, 2), (4, 9), 11, {"bags": 20, "sandbag_penalties": 1}),
        ((2, 0), (13, 0), 9, {"bags": 20, "sandbag_penalties": 2, "sandbag_points": -200}),
        # SP-11 (sp_11): a set team gets no bags; its count stays as it was
        ((6, 6), (5, 0), 9, {"bags": 9, "sandbag_penalties": 0, "round_points": -240}),
    ],
)
def test_team_scoring_follows_rule_4(
    bids: tuple[int, int], tricks: tuple[int, int], bags: int, expected: dict[str, Any]
) -> None:
    score = score_team(bids, tricks, bags)
    assert {key: score[key] for key in expected} == expected
    parts = ("contract_points", "overtrick_points", "nil_points", "sandbag_points")
    assert score["round_points"] == sum(score[p] for p in parts)


def test_the_round_report_carries_the_whole_breakdown() -> None:
    table = Table([SUITED])
    table.state.scores = [40, -20]
    table.state.hand_start_scores = [40, -20]
    table.bid(13, 0, 0, 0)
    result = table.finish_round()
    one = team_report(result, 1)
    assert one["bids"] == [{"name": "Ann", "bid": 13}, {"name": "Cat", "bid": 0}]
    assert one["tricks"] == [{"name": "Ann", "tricks": 13}, {"name": "Cat", "tricks": 0}]
    assert one["nils"] == [{"name": "Cat", "made": True, "points": 100}]
    assert (one["previous_score"], one["misplay_points"], one["score"]) == (40, 0, 400)
    (event,) = [e for e in result.events if e.kind == "round_scored"]
    assert event.public and "team 1 bid 13, took 13 (made), scores +360, now 400" in event.text


# -- winning (SP-13) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "over", "winner"),
    [
        ((150, 100), True, 1),  # 510 to 300
        ((140, 300), False, None),  # 500 to 500: tied, play on
        ((200, 400), True, 2),  # 560 to 600: both over, the greater wins
        ((-500, 300), True, 2),  # -140 to 500
        ((100, -900), False, None),  # no loss floor, no mercy rule
    ],
)
def test_the_game_is_won_after_scoring_at_500_or_more_when_not_tied(
    before: tuple[int, int], over: bool, winner: int | None
) -> None:
    table = Table([SUITED])  # team 1 scores 360, team 2 200 this round
    table.state.scores = list(before)
    table.state.hand_start_scores = list(before)
    table.bid(13, 0, 0, 0)
    result = table.finish_round()
    assert table.game.is_over(table.state) is over
    assert table.state.winner == winner
    report = only(result, "round_report").context
    assert report["game_over"] is over
    if over:
        assert report["end_reason"] == "score"
        assert len(result.notices) == 1  # no new deal
        assert table.game.pending(table.state) == []
        assert table.game.summary(table.state)["result"].startswith(f"Team {winner}")


def test_the_target_is_an_option() -> None:
    table = Table([SUITED], options={"target": "300"})
    table.bid(13, 0, 0, 0)
    table.finish_round()
    assert table.state.winner == 1


def test_no_action_but_hand_is_taken_once_the_game_is_over() -> None:
    table = Table([SUITED], options={"target": "100"})
    table.bid(13, 0, 0, 0)
    table.finish_round()
    for text in ("bid 3", "play AS", "concede"):
        with pytest.raises(IllegalAction, match="The game is over: Team 1"):
            table.act(BEN, text)
    assert only(table.act(BEN, "hand"), "hand").audience.seats == {BEN}


# -- misplays (SP-14) ------------------------------------------------------------------------


def test_playing_a_card_not_held_is_a_misplay_costing_100_and_the_player_plays_again() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    before = table.state
    result = table.act(ANN, "play AH")  # Ben holds the ace of hearts
    assert table.state.scores == [-100, 0]
    assert table.state.hands == before.hands
    assert table.state.trick == []
    assert table.due == ANN
    (notice,) = public(result)
    assert notice.template == "misplay"
    assert notice.context["name"] == "Ann"
    assert notice.context["penalty"] == -100
    assert notice.context["forfeit"] is False
    assert not cards_named(notice.context) & in_hands(table.state)
    turn = only(result, "your_turn")
    assert turn.audience.seats == {ANN}
    assert turn.context["misplay"]["reason"] == "not_held"
    assert turn.context["misplay"]["message"] == "You do not hold A♥."
    assert turn.context["you"]["legal"] == sort_hand(MIXED[0].split())
    assert result.reply is not None and result.reply.startswith("Misplay: You do not hold A♥.")
    assert result.penalty


def test_a_card_off_suit_while_holding_the_suit_led_is_a_misplay() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    result = table.act(BEN, "play 6C")
    assert table.state.scores == [0, -100]
    assert "6C" in table.hand_of(BEN)
    assert table.state.trick == ["2H"]
    assert only(result, "your_turn").context["misplay"]["reason"] == "revoke"
    assert "6C" not in cards_named(only(result, "misplay").context)
    table.act(BEN, "play AH")
    assert table.state.trick == ["2H", "AH"]


def test_a_play_out_of_turn_is_refused_without_penalty() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    with pytest.raises(IllegalAction, match="Ann's turn to play, not yours"):
        table.act(BEN, "play AH")
    with pytest.raises(IllegalAction):
        table.act(BEN, "play AC")  # out of turn and not held: still no misplay
    assert table.state.scores == [0, 0]
    assert table.state.game_misplays == [0, 0]


def test_a_teams_second_misplay_in_a_hand_forfeits_the_game() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    table.act(BEN, "play AH")
    table.act(CAT, "play AH")  # Cat: first misplay of team 1
    table.act(CAT, "play 5S")
    table.act(DAN, "play 10H")
    result = table.act(CAT, "play 2C")  # Cat again: team 1's second in this hand
    assert table.state.scores == [-200, 0]
    assert table.game.is_over(table.state)
    assert (table.state.winner, table.state.end_reason) == (2, "forfeit")
    (notice,) = result.notices
    assert notice.context["forfeit"] is True
    assert notice.context["winners"] == ["Ben", "Dan"]
    assert notice.context["misplays_hand"] == 2


def test_misplays_count_per_team() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play AH")
    table.act(ANN, "play 2H")
    table.act(BEN, "play 2C")
    assert not table.game.is_over(table.state)
    assert table.state.scores == [-100, -100]


def test_a_teams_third_misplay_in_the_game_forfeits_it() -> None:
    table = Table(seed="three misplays")
    for number in (1, 2, 3):
        table.bid(3, 3, 3, 3)
        while table.state.order.index(table.due) % 2 != 0:  # wait for team 1 to move
            table.play_first_legal()
        not_held = (table.hand_of(BEN) + table.hand_of(DAN))[0]
        result = table.act(table.due, f"play {not_held}")
        assert table.state.game_misplays == [number, 0]
        assert table.state.misplay_points == [-100, 0]
        if number < 3:
            assert not table.game.is_over(table.state)
            table.finish_round()
            assert table.state.hand_misplays == [0, 0]
    assert (table.state.winner, table.state.end_reason) == (2, "forfeit")
    assert only(result, "misplay").context["misplays_game"] == 3


def test_a_misplay_starts_a_fresh_deadline() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    (before,) = table.game.pending(table.state)
    table.act(ANN, "play AH")
    (after,) = table.game.pending(table.state)
    assert (before.seat, after.seat) == (ANN, ANN)
    assert before.key != after.key
    assert after.what == "a card to trick 1"


def test_the_misplay_penalties_appear_in_the_round_report() -> None:
    table = Table([SUITED])
    table.bid(13, 0, 0, 0)
    table.act(ANN, "play AH")
    result = table.finish_round()
    one = team_report(result, 1)
    assert (one["misplay_points"], one["round_points"], one["score"]) == (-100, 360, 260)


# -- timeouts and bots (SP-15) ----------------------------------------------------------------


def test_the_timeout_bid_is_2() -> None:
    table = Table([MIXED])
    assert table.game.timeout_action(table.state, ANN, seeded(0)) == Action("bid", (2,))


def test_the_timeout_play_is_a_random_legal_card() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    chosen = {
        table.game.timeout_action(table.state, BEN, seeded(seed)).args[0]
        for seed in range(40)
    }
    assert chosen == {"AH", "KH", "QH", "JH"}


def test_a_timeout_bid_is_said_as_the_referees_citing_rule_7() -> None:
    table = Table([MIXED])
    before = table.state
    action = table.game.timeout_action(before, ANN, seeded(0))
    said = table.game.deadline_move(before, ANN, action, table.apply(ANN, action))
    assert said.audience.public
    assert said.told("Ann") == ("No bid came from Ann by the deadline: the referee bid 2 for "
                                "them, as rule 7 says.")
    assert said.done_for_you() == "the referee bid 2 for you, as rule 7 says"


def test_a_timeout_card_is_said_with_the_card_and_how_it_was_chosen_citing_rule_7() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    before = table.state
    action = table.game.timeout_action(before, BEN, seeded(0))
    said = table.game.deadline_move(before, BEN, action, table.apply(BEN, action))
    card = card_text(str(action.args[0]))
    assert said.told("Ben") == (
        f"No card came from Ben by the deadline: the referee played {card} for them, chosen "
        "at random among the cards they could legally play, as rule 7 says.")
    assert said.done_for_you() == (
        f"the referee played {card} for you, chosen at random among the cards you could "
        "legally play, as rule 7 says")


def test_only_the_player_due_can_time_out() -> None:
    table = Table([MIXED])
    with pytest.raises(IllegalAction, match="owes no action"):
        table.game.timeout_action(table.state, BEN, seeded(0))


def test_bots_bid_validly_and_play_legal_cards() -> None:
    table = Table(seed="bots")
    for step in range(200):
        action = table.game.bot_action(table.state, table.due, seeded(step))
        if action.verb == "bid":
            assert action.args[0] in VALID_BIDS
        else:
            player = table.state.order.index(table.due)
            assert action.args[0] in legal_plays(table.state.hands[player], table.state.trick)
        table.apply(table.due, action)
    assert table.state.game_misplays == [0, 0]


# -- concession and forfeit (SP-16) -------------------------------------------------------------


def test_the_game_ends_when_the_second_partner_concedes() -> None:
    table = Table([MIXED])
    first = table.act(CAT, "concede")
    assert not table.game.is_over(table.state)
    (notice,) = first.notices
    assert notice.audience.public and notice.template == "concession"
    assert (notice.context["partner"], notice.context["partner_conceded"]) == ("Ann", False)
    table.act(BEN, "concede")  # one of each team: nobody wins yet
    assert not table.game.is_over(table.state)
    second = table.act(ANN, "concede")
    assert table.game.is_over(table.state)
    assert (table.state.winner, table.state.end_reason) == (2, "concession")
    assert only(second, "concession").context["winners"] == ["Ben", "Dan"]


def test_a_player_concedes_only_once() -> None:
    table = Table([MIXED])
    table.act(CAT, "concede")
    with pytest.raises(IllegalAction, match="already conceded"):
        table.act(CAT, "concede")


def test_sp_19_a_concession_mailed_to_the_referee_alone_is_posted_to_the_whole_table() -> None:
    """Ruling SP-19: a concession counts from the referee's announcement to
    the whole table, which it makes at once whatever the scope it came in."""
    table = Table([MIXED])
    action = Action("concede", (), Scope.SECRET, frozenset())
    table.game.accepts(action, Scope.SECRET)
    result = table.apply(CAT, action)
    (notice,) = result.notices
    assert notice.audience.public and notice.template == "concession"
    assert [e.public for e in result.events] == [True]
    assert table.state.conceded == [table.state.order.index(CAT)]


def test_sp_20_a_concession_stands_across_rounds_and_cannot_be_withdrawn() -> None:
    """Ruling SP-20 (house): a concession stands for the rest of the game,
    across rounds, until the partner concedes too; it cannot be withdrawn."""
    table = Table(seed="rotation")
    table.act(CAT, "concede")
    for line in ("withdraw concession", "withdraw my concession", "unconcede"):
        with pytest.raises(ParseError, match="cannot be withdrawn"):
            table.game.parse(line)
    table.finish_round()
    assert table.state.round == 2 and not table.game.is_over(table.state)
    assert table.state.conceded == [table.state.order.index(CAT)]
    assert "cannot be withdrawn" in table.game.help(table.state, CAT)
    partner = table.state.order[(table.state.order.index(CAT) + 2) % 4]
    table.act(partner, "concede")
    assert table.game.is_over(table.state) and table.state.end_reason == "concession"


# -- what people see (SP-17) ---------------------------------------------------------------------


def test_hand_answers_in_secret_and_changes_nothing() -> None:
    table = Table([MIXED])
    before = table.state
    result = table.act(DAN, "hand")
    assert result.state is before
    assert result.events == []
    assert result.reply == "Your hand is below, for you alone."
    (notice,) = result.notices
    assert notice.audience.seats == {DAN} and not notice.audience.public
    assert notice.context["reason"] == "request"
    assert notice.context["you"]["hand"] == sort_hand(MIXED[3].split())


def test_the_public_view_shows_counts_and_played_cards_but_no_hand() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    view = table.game.view(table.state, None)
    assert "you" not in view
    assert cards_named(view) == {"2H"}
    assert [p["cards_left"] for p in view["players"]] == [12, 13, 13, 13]
    assert [p["bid"] for p in view["players"]] == [4, 3, 3, 3]
    assert view["to_move"] == "Ben"


def test_a_seat_view_adds_only_that_seats_hand_and_legal_cards() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    view = table.game.view(table.state, BEN)
    assert view["you"]["legal"] == ["AH", "KH", "QH", "JH"]
    assert cards_named(view) == set(MIXED[1].split()) | {"2H"}
    assert table.game.view(table.state, CAT)["you"]["legal"] == []


def test_help_says_what_the_seat_can_do_now() -> None:
    table = Table([MIXED])
    assert "bid 4" in table.game.help(table.state, ANN)
    assert "Ann's turn to bid" in table.game.help(table.state, BEN)
    table.bid(4, 3, 3, 3)
    table.act(ANN, "play 2H")
    text = table.game.help(table.state, BEN)
    assert "play AH" in text and "A♥ K♥ Q♥ J♥" in text
    assert "'hand'" in text


def test_the_summary_gives_round_scores_bids_and_whose_move() -> None:
    table = Table([MIXED])
    table.bid(4, 3)
    summary = table.game.summary(table.state)
    assert summary["round"] == 1
    assert summary["bids"] == {"Ann": 4, "Ben": 3}
    assert summary["to_move"] == "Cat"
    assert summary["scores"] == {"team 1 (Ann & Cat)": 0, "team 2 (Ben & Dan)": 0}
    assert summary["over"] is False


def test_pending_names_the_one_seat_to_act_and_what_it_owes() -> None:
    table = Table([MIXED])
    (bid,) = table.game.pending(table.state)
    assert (bid.seat, bid.what) == (ANN, "a bid for round 1")
    table.bid(4, 3, 3, 3)
    (play,) = table.game.pending(table.state)
    assert (play.seat, play.what) == (ANN, "a card to trick 1")
    assert play.key != bid.key


# -- persistence and replay -----------------------------------------------------------------------


def test_the_state_dumps_to_json_and_loads_back_equal() -> None:
    table = Table(seed="dump")
    for _ in range(70):
        table.apply(table.due, table.game.bot_action(table.state, table.due, seeded(1)))
    assert table.state.tricks and table.state.trick
    data = json.loads(json.dumps(table.game.dump(table.state)))
    assert table.game.load(data) == table.state
    table.finish_round()
    assert table.state.reports
    assert table.game.load(table.game.dump(table.state)) == table.state


def test_apply_never_changes_the_state_it_is_given() -> None:
    table = Table([MIXED])
    table.bid(4, 3, 3, 3)
    before = table.game.dump(table.state)
    state = table.state
    table.game.apply(state, ANN, Action("play", ("2H",)), seeded(0))
    table.game.apply(state, ANN, Action("play", ("AH",)), seeded(0))
    assert table.game.dump(state) == before


def play_bot_game(
    game: Spades, seed: str, options: Mapping[str, str], max_rounds: int = 60
) -> tuple[SpadesState, list[tuple[int, Action]]]:
    state = game.new(game.parse_options(options), SEATS, KeyedDraws(seed)).state
    log: list[tuple[int, Action]] = []
    while not game.is_over(state) and state.round <= max_rounds:
        (pending,) = game.pending(state)
        action = game.bot_action(state, pending.seat, seeded(f"{seed}:{len(log)}"))
        log.append((pending.seat, action))
        state = game.apply(state, pending.seat, action, KeyedDraws(seed)).state
    return state, log


def test_a_game_replays_from_its_seed_and_action_log() -> None:
    game = Spades()
    final, log = play_bot_game(game, "replay", {"target": "250"})
    assert game.is_over(final)
    stored = json.loads(json.dumps([[seat, action.to_json()] for seat, action in log]))
    options = game.parse_options({"target": "250"})
    replayed = game.new(options, SEATS, KeyedDraws("replay")).state
    for step, (seat, data) in enumerate(stored, start=1):
        replayed = game.apply(replayed, seat, Action.from_json(data), KeyedDraws("replay")).state
        if step % 100 == 0:  # as the service stores it between messages
            replayed = game.load(game.dump(replayed))
    assert game.dump(replayed) == game.dump(final)


# -- random playouts (Hypothesis) ----------------------------------------------


def chaotic_action(
    game: Spades, state: SpadesState, seat: int, rng: random.Random, wild: float
) -> Action:
    """Mostly a bot's move; sometimes any valid bid, or any card of the deck
    (a misplay unless it happens to be legal), or a concession."""
    roll = rng.random()
    if roll < wild / 20:
        return Action("concede")
    if roll < wild:
        if state.phase == "bidding":
            return Action("bid", (rng.choice(VALID_BIDS),))
        return Action("play", (str(rng.choice(full_deck())),))
    return game.bot_action(state, seat, SequentialDraws(rng))


def check_round_cards(results: Sequence[Result[SpadesState]]) -> None:
    """13 tricks a round, 4 cards each, the 52 cards each once."""
    cards = [c for r in results for e in r.events if e.kind == "play" for c in [e.data["card"]]]
    tricks = [e for r in results for e in r.events if e.kind == "trick"]
    assert len(tricks) == 13
    assert all(len(e.data["cards"]) == 4 for e in tricks)
    assert sorted(cards) == sorted(str(c) for c in full_deck())


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.text(min_size=1, max_size=8),
    target=st.sampled_from(["100", "100", "250", "500"]),
    wild=st.sampled_from([0.0, 0.0, 0.002, 0.02]),
)
def test_random_games_keep_every_rule(seed: str, target: str, wild: float) -> None:
    game = Spades()
    opening = game.new(game.parse_options({"target": target}), SEATS, KeyedDraws(seed))
    state = opening.state
    assert_no_public_leak(game, state, opening, None, None)
    round_results: list[Result[SpadesState]] = []
    all_notices: list[Notice] = list(opening.notices)
    events: list[Event] = list(opening.events)
    step = 0
    while not game.is_over(state) and state.round <= 40:
        (pending,) = game.pending(state)
        step += 1
        action = chaotic_action(game, state, pending.seat, random.Random(f"{seed}/{step}"), wild)
        try:
            result = game.apply(state, pending.seat, action, KeyedDraws(seed))
        except IllegalAction:
            assert action.verb == "concede"
            continue
        assert_no_public_leak(game, state, result, action, pending.seat)
        assert sum(n.audience.public for n in result.notices) == 1
        seats = [s for n in secret(result) for s in n.audience.seats]
        assert len(seats) == len(set(seats))
        all_notices.extend(result.notices)
        events.extend(result.events)
        round_results.append(result)
        if result.state.round != state.round:
            check_round_cards(round_results)
            round_results = []
        before, state = state, result.state
        # the cards in hand, in the trick and in completed tricks are one deck
        if state.round == before.round and state.phase != "over":
            held = [c for h in state.hands for c in h] + state.trick
            held += [c for t in state.tricks for c in t.cards]
            assert sorted(held) == sorted(str(c) for c in full_deck())
    assert_notice_shapes(all_notices)
    # the Spadescores are the sum of the round breakdowns and the misplays since
    totals = [sum(r["teams"][t]["misplay_points"] + r["teams"][t]["round_points"]
                  for r in state.reports) for t in (0, 1)]  # fmt: skip
    if state.phase != "over" or state.end_reason != "score":
        totals = [totals[t] + state.misplay_points[t] for t in (0, 1)]
    assert state.scores == totals
    for earlier, later in zip(state.reports, state.reports[1:], strict=False):
        assert [t["score"] for t in earlier["teams"]] == [
            t["previous_score"] for t in later["teams"]
        ]
    # SP-13: the game is won only after a round's scoring, at the target, untied
    for report in state.reports[:-1] if state.end_reason == "score" else state.reports:
        scores = [t["score"] for t in report["teams"]]
        assert max(scores) < int(target) or scores[0] == scores[1]
    if state.end_reason == "score":
        scores = [t["score"] for t in state.reports[-1]["teams"]]
        assert max(scores) >= int(target) and scores[0] != scores[1]
        assert state.winner == scores.index(max(scores)) + 1
    elif state.end_reason == "forfeit":
        loser = 2 - (state.winner or 0)
        assert state.hand_misplays[loser] == 2 or state.game_misplays[loser] == 3
    elif state.end_reason == "concession":
        loser = 2 - (state.winner or 0)
        assert {loser, loser + 2} <= set(state.conceded)
    kinds = {e.kind for e in events}
    assert "hands" in kinds and all(not e.public for e in events if e.kind == "hands")


def test_nothing_public_ever_names_a_card_still_in_a_hand() -> None:
    game = Spades()
    result = game.new(game.parse_options({"target": "200"}), SEATS, KeyedDraws("leak"))
    assert_no_public_leak(game, result.state, result, None, None)
    rng = random.Random(7)
    step = 0
    while not game.is_over(result.state):
        state = result.state
        (pending,) = game.pending(state)
        action = chaotic_action(game, state, pending.seat, rng, wild=0.01)
        step += 1
        try:
            result = game.apply(state, pending.seat, action, KeyedDraws("leak"))
        except IllegalAction:
            continue
        assert_no_public_leak(game, state, result, action, pending.seat)
        assert all(not n.audience.public for n in result.notices if n.template == "hand")


def test_playouts_reach_the_end_of_a_game_to_500() -> None:
    game = Spades()
    for seed in ("a", "b", "c"):
        final, _ = play_bot_game(game, seed, {})
        assert game.is_over(final) and final.end_reason == "score"
        assert max(final.scores) >= 500


def test_the_engine_hook_refuses_a_deal_that_is_not_one_deck() -> None:
    with pytest.raises(ValueError, match="52 cards"):
        Spades(deals=[[SUITED[0]] * 4])
    with pytest.raises(ValueError, match="four hands"):
        Spades(deals=[SUITED[:3]])


def _imports(module: str) -> set[str]:
    """The modules ``module`` of the Spades package imports, wherever in
    it: at the top, inside a function or under ``TYPE_CHECKING``."""
    import referee.games.spades as package

    path = Path(package.__file__).with_name(f"{module}.py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{module}.py: a relative import"
            found.add(node.module)
    return found


def _outside_referee(imports: set[str]) -> set[str]:
    """The imports that are neither ours nor the standard library's."""
    return {name for name in imports
            if not name.startswith("referee.") and name.partition(".")[0]
            not in sys.stdlib_module_names}


def test_engine_imports_only_the_contract_and_the_cards() -> None:
    """Nor the views, the words or the bot: the game class wires them."""
    imports = _imports("rules")
    assert {name for name in imports if name.startswith("referee")} == {
        "referee.games.base", "referee.games.cards", "referee.games.draws", "referee.games.names"}
    assert not _outside_referee(imports)


@pytest.mark.parametrize("module", ["words", "views"])
def test_words_and_views_add_only_the_rules(module: str) -> None:
    """The views add the bot's view of a seat too (what the seat may see)."""
    imports = _imports(module)
    assert {name for name in imports if name.startswith("referee")} <= {
        "referee.games.base", "referee.games.cards", "referee.games.spades.rules",
        *(("referee.games.spades.bot",) if module == "views" else ())}
    assert not _outside_referee(imports)


def test_the_game_is_its_rules_words_and_views() -> None:
    """The game class holds its views, wires its bot to the rules, and
    names the check of its mails (``verify.py``)."""
    imports = _imports("__init__")
    assert {name for name in imports if name.startswith("referee")} == {
        "referee.games.base", "referee.games.draws", "referee.games.spades.bot",
        "referee.games.spades.rules", "referee.games.spades.words",
        "referee.games.spades.views", "referee.games.mailcheck",
        "referee.games.spades.verify"}
    assert not _outside_referee(imports)


def test_the_hand_as_dealt_opens_its_commitment_at_every_step_of_a_round() -> None:
    """A player who asks for their hand mid-round is given the hand as dealt
    (held and played cards) with its salt: it must open the round's
    hand-sha256 whenever it is asked (ruling SP-17)."""
    game = Spades()
    state = game.new(game.parse_options({"target": "200"}), SEATS, KeyedDraws("dealt")).state
    steps = 0
    while not game.is_over(state) and steps < 400:
        for player in range(4):
            dealt = dealt_hand(state, player)
            assert len(dealt) == 13
            assert hand_commitment(dealt, state.hand_salts[player]) == state.hand_sha256[player]
        (pending,) = game.pending(state)
        action = game.bot_action(state, pending.seat, seeded(f"dealt:{steps}"))
        state = game.apply(state, pending.seat, action, KeyedDraws("dealt")).state
        steps += 1
    assert state.round >= 3  # rounds were dealt again, and each opened


def test_a_game_of_edition_1_commits_to_no_hand_as_it_began() -> None:
    """A game stored before the hands were committed (no ``hand_salts``,
    2026-11-27) is of edition 1: it plays on dealing hands without salts or
    fingerprints, so no mail promises a check its opening never offered."""
    game = Spades()
    state = game.new(game.parse_options({"target": "200"}), SEATS, KeyedDraws("old")).state
    stored = game.dump(state)
    for key in ("hand_salts", "hand_sha256", "edition"):
        del stored[key]
    old = game.load(stored)
    assert (old.edition, old.hand_salts, old.hand_sha256) == (1, [], [])
    with_salts = game.dump(state)
    del with_salts["edition"]
    assert game.load(with_salts).edition == 2
    rounds = {1}
    steps = 0
    while not game.is_over(old) and old.round < 3 and steps < 200:
        (pending,) = game.pending(old)
        action = game.bot_action(old, pending.seat, seeded(f"old:{steps}"))
        result = game.apply(old, pending.seat, action, KeyedDraws("old"))
        old = result.state
        for event in result.events:
            if event.kind == "deal":
                rounds.add(old.round)
                assert event.data == {"round": old.round}  # no hand-sha256
        for notice in result.notices:
            assert not notice.context.get("hand_commitments")
            assert notice.context.get("hand_salt") is None
        assert (old.hand_salts, old.hand_sha256) == ([], [])
        steps += 1
    assert rounds >= {1, 2}
    replayed = game.new({"target": 200, "edition": 1}, SEATS, KeyedDraws("old"))
    assert replayed.state.hand_salts == [] and "hand_sha256" not in replayed.events[1].data
