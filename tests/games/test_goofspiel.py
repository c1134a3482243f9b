"""The bidding engine against rule texts 000 (pure-skill) and 003 (goofspiel),
and the G2-* and PS-* rulings."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.base import (
    Action,
    IllegalAction,
    OptionError,
    ParseError,
    Scope,
    ScopeError,
    SeatInfo,
)
from referee.games.bidding import BiddingGame
from referee.games.bidding.rules import BiddingState
from referee.games.draws import KeyedDraws, SequentialDraws
from referee.games.goofspiel import Goofspiel
from referee.games.pure_skill import PureSkill
from referee.mail.compose import Composer
from tests.games.seeded import seeded

GOOF = Goofspiel()
PURE = PureSkill()


def start(game: BiddingGame, bots: tuple[bool, ...] = (), seed: str = "t",
          **options: str) -> BiddingState:
    opts = game.parse_options(options)
    n = int(opts["players"])
    bots = bots or (False,) * n
    seats = [SeatInfo(i + 1, "ABCDEFG"[i], bots[i]) for i in range(n)]
    return game.new(opts, seats, KeyedDraws(seed)).state


def play(game: BiddingGame, state: BiddingState, *bids: int) -> BiddingState:
    for seat, value in enumerate(bids, start=1):
        state = game.apply(state, seat, Action("bid", (value,)), seeded(seat)).state
    return state


def mail(game: BiddingGame, state: BiddingState, template: str = "opening") -> str:
    """The body of a bidding mail to everyone, rendered as the service does."""
    context = {**game.view(state, None), "tag": f"{game.kind}-1",
               "deadline": "Thu 05 Mar 2026 12:00 UTC"}
    if template == "round_report":
        context["rounds"] = game.views.report(state, state.history[-1:])["rounds"]
    return Composer("referee@club.test", "Club Referee").render("bidding", template, context)[1]


# -- rule text 003: the worked example ------------------------------------------

def test_worked_example_of_rule_text_003_ends_35_to_28() -> None:
    state = start(GOOF, prize_order="5,1,6,4,3,2")
    assert state.prize == 5
    state = play(GOOF, state, 5, 3)
    assert GOOF.scores(state) == [13, 0]
    assert state.packs == [[1, 2, 3, 4, 6], [1, 2, 4, 5, 6]]
    state = play(GOOF, state, 1, 2)
    assert GOOF.scores(state) == [13, 4]
    state = play(GOOF, state, 2, 6)
    assert GOOF.scores(state) == [13, 18]
    assert GOOF.view(state, None)["in_hands"] == 32  # "Total Up For Grabs: 32"
    state = play(GOOF, state, 4, 4)
    assert state.carry == [4, 4, 4]
    assert GOOF.view(state, None)["in_hands"] == 20  # G2-6: the carry is not in it
    assert state.prize == 3
    state = play(GOOF, state, 6, 1)
    # G2-10: round 6 is played from the last cards automatically.
    assert state.over
    assert GOOF.scores(state) == [35, 28]
    assert sorted(state.takes[0]) == sorted([5, 5, 3, 3, 4, 4, 4, 6, 1])
    assert sorted(state.takes[1]) == sorted([2, 1, 1, 6, 6, 2, 2, 3, 5])
    assert GOOF.winner(state) == 1
    assert state.history[-1].automatic


# The example game of rule text 003, one row a round: the inventories P, A and B
# before the draw, "Total Up For Grabs", the prize, the bids, and each take pile
# after the round ("Result - A (...), B (...)").
EXAMPLE_003 = [
    ([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], 63, 5, (5, 3),
     [5, 5, 3], []),
    ([1, 2, 3, 4, 6], [1, 2, 3, 4, 6], [1, 2, 4, 5, 6], 50, 1, (1, 2),
     [5, 5, 3], [2, 1, 1]),
    ([2, 3, 4, 6], [2, 3, 4, 6], [1, 4, 5, 6], 46, 6, (2, 6),
     [5, 5, 3], [2, 1, 1, 6, 6, 2]),
    ([2, 3, 4], [3, 4, 6], [1, 4, 5], 32, 4, (4, 4),
     [5, 5, 3], [2, 1, 1, 6, 6, 2]),
    ([2, 3], [3, 6], [1, 5], 20, 3, (6, 1),
     [5, 5, 3, 3, 4, 4, 4, 6, 1], [2, 1, 1, 6, 6, 2]),
    ([2], [3], [5], 10, 2, (3, 5),
     [5, 5, 3, 3, 4, 4, 4, 6, 1], [2, 1, 1, 6, 6, 2, 2, 3, 5]),
]


def test_worked_example_of_rule_text_003_move_by_move() -> None:
    state = start(GOOF, prize_order="5,1,6,4,3,2")
    for number, (pot, a, b, grabs, prize, bids, *_) in enumerate(EXAMPLE_003, 1):
        if number < 6:
            assert state.round == number and state.prize == prize
            assert sorted([*state.pot, prize]) == pot
            assert state.packs == [a, b]
            view = GOOF.view(state, None)
            assert view["in_hands"] == grabs  # G2-6: "Total Up For Grabs"
            # Round 5: "Pot randomly plays: 3 (4 4 4 roll over ...) = 15".
            assert view["carry_points"] == (12 if number == 5 else 0)
            state = play(GOOF, state, *bids)
        else:
            # G2-10: the last cards were played by themselves with round 5's bids.
            record = state.history[-1]
            assert record.automatic and record.prize == prize
            assert record.bids == list(bids) and a + b == list(bids)
            assert prize + sum(record.bids) == grabs
    piles: list[list[int]] = [[], []]
    for record, row in zip(state.history, EXAMPLE_003, strict=True):
        if record.winner:
            piles[record.winner - 1] += record.won
        assert (sorted(piles[0]), sorted(piles[1])) == (sorted(row[6]), sorted(row[7]))
    assert state.over and GOOF.scores(state) == [35, 28]
    assert GOOF.winner(state) == 1
    assert [r.outcome for r in state.history] == [
        "won", "won", "won", "carried", "won", "won"]


def test_round_reports_show_hands_and_carried_pot_apart_g2_6() -> None:
    state = play(GOOF, start(GOOF, prize_order="5,1,6,4,3,2"), 5, 3)
    for bids in [(1, 2), (2, 6), (4, 4)]:
        state = play(GOOF, state, *bids)
    text = mail(GOOF, state, "round_report")
    assert "Tie for the highest bid: 4 4 4 (12 points) carries over to the next round." in text
    assert "  Points still in hands: 20; carried pot: 12\n" in text
    assert "ROUND 5 OF 6: THE PRIZE IS 3\n" in text
    assert "Carried over from tied rounds: 4 4 4 (12 points)." in text
    assert "The winner of this round takes the prize, both bids and the carried pot." in text


def test_winner_takes_prize_and_both_bids_g2_1() -> None:
    state = play(GOOF, start(GOOF, prize_order="5,1,6,4,3,2"), 5, 3)
    assert sorted(state.takes[0]) == [3, 5, 5]


def test_consecutive_ties_accumulate_the_carry_g2_2_and_g2_3() -> None:
    state = start(GOOF, prize_order="6,5,3,4,2,1")
    state = play(GOOF, state, 6, 6)
    assert sorted(state.carry) == [6, 6, 6]  # 18
    state = play(GOOF, state, 5, 5)
    assert sum(state.carry) == 33
    state = play(GOOF, state, 3, 3)
    assert sum(state.carry) == 42
    assert state.packs == [[1, 2, 4], [1, 2, 4]]  # tied bids are not returned
    state = play(GOOF, state, 4, 1)
    assert GOOF.scores(state) == [42 + 4 + 4 + 1, 0]
    assert state.carry == []


def test_tie_in_the_last_round_discards_the_whole_pot_g2_4() -> None:
    state = start(GOOF, prize_order="1,2,3,4,5,6")
    state = play(GOOF, state, 1, 2)
    state = play(GOOF, state, 2, 1)
    state = play(GOOF, state, 3, 4)
    state = play(GOOF, state, 4, 3)
    state = play(GOOF, state, 6, 5)  # round 6 is forced: 5 v 6, no tie
    assert state.over
    state = start(GOOF, prize_order="1,2,3,4,5,6")
    for a, b in [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]:
        state = play(GOOF, state, a, b)
    assert state.over and state.history[-1].outcome == "discarded-last"
    assert GOOF.scores(state) == [0, 0]
    assert sum(state.discards) == 63


def test_equal_totals_mean_no_winner_g2_5() -> None:
    state = start(GOOF, prize_order="1,2,3,4,5,6")
    for a, b in [(1, 5), (4, 1), (5, 6), (6, 4), (2, 2)]:
        state = play(GOOF, state, a, b)
    assert state.over  # round 6 ties 3 v 3: its pot, 6+3+3 and the carried 5+2+2, is discarded
    assert GOOF.scores(state) == [21, 21]
    assert GOOF.winner(state) is None
    assert GOOF.summary(state)["result"] == "no winner"
    text = mail(GOOF, state, "round_report")
    assert "Tie in the last round: nobody wins the pot; 2 2 3 3 5 6 is discarded." in text
    assert "There is no winner: no single player has the highest total.\n" in text


def test_report_says_when_a_game_is_clinched_but_play_goes_on_g2_7() -> None:
    state = start(GOOF, prize_order="6,5,4,3,2,1")
    state = play(GOOF, state, 6, 1)
    state = play(GOOF, state, 5, 2)
    state = play(GOOF, state, 4, 3)
    # A has 6+6+1 + 5+5+2 + 4+4+3 = 36 > 63/2: no one can catch up.
    assert GOOF.clinched(state) == 1
    assert not state.over


def test_a_card_not_held_is_refused_with_the_pack_g2_8_ps_7() -> None:
    state = play(GOOF, start(GOOF, prize_order="5,1,6,4,3,2"), 5, 3)
    with pytest.raises(IllegalAction, match=r"You hold no 5; your pack: 1 2 3 4 6"):
        GOOF.apply(state, 1, Action("bid", (5,)), seeded(0))


def test_a_bid_is_final_g2_9_ps_6() -> None:
    state = start(PURE)
    state = PURE.apply(state, 1, Action("bid", (4,)), seeded(0)).state
    with pytest.raises(IllegalAction, match="already bid 4"):
        PURE.apply(state, 1, Action("bid", (5,)), seeded(0))


def test_bids_must_be_secret_g2_9_ps_12() -> None:
    bid = Action("bid", (3,))
    GOOF.accepts(bid, Scope.SECRET)
    for scope in (Scope.PRIVATE, Scope.PUBLIC):
        with pytest.raises(ScopeError, match="referee alone"):
            GOOF.accepts(bid, scope)


def test_sealed_bids_stay_out_of_public_views_and_events_ps_12() -> None:
    state = start(PURE)
    result = PURE.apply(state, 1, Action("bid", (13,)), seeded(0))
    assert all(not e.public for e in result.events)
    assert result.notices == []
    assert "my_bid" not in PURE.view(result.state, None)
    assert "13" not in str(PURE.view(result.state, None)["players"])
    assert PURE.view(result.state, 1)["my_bid"] == "K"


def test_the_public_view_does_not_depend_on_a_sealed_bid_ps_12_g2_9() -> None:
    state = start(PURE)
    views, texts, summaries = [], set(), []
    for value in (1, 7, 13):
        result = PURE.apply(state, 2, Action("bid", (value,)), seeded(0))
        assert result.notices == [] and all(not e.public for e in result.events)
        texts |= {e.text for e in result.events}
        summaries.append(PURE.summary(result.state))
        views.append(PURE.view(result.state, None))
    assert texts == {"B: bid sealed for round 1"}
    assert views[0] == views[1] == views[2] and summaries[0] == summaries[2]
    assert views[0]["players"][1]["has_bid"] is True


def test_a_referee_chosen_bid_stays_sealed_until_the_round_resolves_ps_8_ps_12() -> None:
    state = start(PURE)
    act = PURE.timeout_action(state, 1, seeded(3))
    result = PURE.apply(state, 1, act, seeded(3))
    assert result.notices == [] and all(not e.public for e in result.events)
    assert PURE.view(result.state, None) == PURE.view(
        PURE.apply(state, 1, Action("bid", (1,), ), seeded(3)).state, None)


def test_a_referee_chosen_bid_is_said_sealed_to_the_table_and_named_to_its_bidder() -> None:
    """Rule 4e of Pure Skill says what the referee does; Goofspiel's text is
    silent (ruling G2-8), so its house rule is cited, never by its id."""
    for game, rule in ((PURE, "as rule 4e says"), (GOOF, "by the house rule for silent players")):
        state = start(game)
        act = game.timeout_action(state, 1, seeded(3))
        said = game.deadline_move(state, 1, act, game.apply(state, 1, act, seeded(3)))
        assert said.audience.public
        assert said.told("A") == ("No bid came from A by the deadline: the referee drew a card "
                                  f"at random from their pack as their bid, {rule}.")
        assert said.done_for_you() == (f"the referee bid {game._name(act.args[0])} for you, a "
                                       f"card drawn at random from your pack, {rule}")


def test_prize_is_drawn_uniformly_from_the_pot_g2_11() -> None:
    firsts = {start(GOOF, seed=str(i)).prize for i in range(200)}
    assert firsts == {1, 2, 3, 4, 5, 6}


# -- rule text 000 ---------------------------------------------------------------

def test_a_round_ends_as_soon_as_all_bids_are_in_ps_1() -> None:
    state = start(PURE, prize_order="descending")
    assert [(p.seat, p.key) for p in PURE.pending(state)] == [
        (1, "round-1"), (2, "round-1"), (3, "round-1")]
    state = play(PURE, state, 5, 6)
    assert state.round == 1 and state.history == []
    assert [(p.seat, p.key) for p in PURE.pending(state)] == [(3, "round-1")]
    result = PURE.apply(state, 3, Action("bid", (7,)), seeded(0))
    # The third bid ends round 1 at once, and round 2 opens with new deadlines.
    assert [r.number for r in result.state.history] == [1]
    assert [n.template for n in result.notices] == ["round_report"]
    assert [(p.seat, p.key) for p in PURE.pending(result.state)] == [
        (1, "round-2"), (2, "round-2"), (3, "round-2")]


def test_a_round_ends_at_the_deadline_with_a_random_card_for_the_silent_ps_1_ps_8() -> None:
    state = play(PURE, start(PURE, prize_order="descending"), 5, 6)
    act = PURE.timeout_action(state, 3, seeded(9))
    assert act.args[1] == "referee" and act.args[0] in state.packs[2]
    result = PURE.apply(state, 3, act, seeded(9))
    assert result.state.round == 2
    assert result.state.history[0].chosen_by_referee == [False, False, True]
    report = result.notices[0].context["rounds"][0]["bids"][2]
    assert report == {"name": "C", "card": PURE._name(act.args[0]), "by_referee": True,
                      "bot": False, "bot_random": False}


def test_suits_are_hearts_diamonds_clubs_in_seat_order_ps_5() -> None:
    state = start(PURE)
    assert [p["suit"] for p in PURE.view(state, None)["players"]] == [
        "hearts", "diamonds", "clubs"]
    assert "Alice" not in mail(PURE, state)  # (the seats are named A, B, C here)
    assert "A holds the hearts, B the diamonds, C the clubs;\nthe referee holds the spades." \
        in mail(PURE, state)
    assert GOOF.view(start(GOOF), None)["players"][0]["suit"] is None


def test_a_bid_may_name_the_players_own_suit_ps_5() -> None:
    assert PURE.parse("bid QH") == Action("bid", (12, "H"))
    assert PURE.parse("bid Q♥") == Action("bid", (12, "H"))
    assert PURE.parse("I bid the queen of hearts") is not None
    assert PURE.parse("bid queen of diamonds") == Action("bid", (12, "D"))
    assert PURE.parse("bid td") == Action("bid", (10, "D"))
    state = start(PURE)
    after = PURE.apply(state, 2, Action("bid", (12, "D")), seeded(0)).state
    assert after.bids == {"2": 12}
    # A card of another suit is a card the player does not hold (PS-7): not a bid.
    for seat, card in [(1, (12, "D")), (3, (12, "S"))]:
        with pytest.raises(IllegalAction, match=r"You hold no Q[♦♠]; your pack: A 2 3"):
            PURE.apply(state, seat, Action("bid", card), seeded(0))
    with pytest.raises(ParseError):
        GOOF.parse("bid 5h")  # Goofspiel's cards have no suits



def test_pure_skill_defaults_follow_rule_text_000() -> None:
    state = start(PURE)
    assert len(state.packs) == 3 and state.packs[0] == list(range(1, 14))
    assert len(state.pot) == 12  # one prize is already shown


def test_tied_top_bids_discard_the_prize_whatever_the_third_ps_2() -> None:
    state = start(PURE, prize_order="ascending")
    state = play(PURE, state, 9, 9, 2)
    assert PURE.scores(state) == [0, 0, 0]
    assert 1 in state.discards
    assert state.history[-1].outcome == "discarded"


def test_a_tie_below_a_unique_top_bid_does_not_matter_ps_2() -> None:
    state = play(PURE, start(PURE, prize_order="descending"), 3, 3, 10)
    assert PURE.scores(state) == [0, 0, 13]


def test_bid_cards_never_score_ps_3() -> None:
    state = play(PURE, start(PURE, prize_order="descending"), 13, 1, 2)
    assert state.takes[0] == [13]
    assert sorted(state.discards) == [1, 2, 13]


def test_card_values_ace_1_to_king_13_ps_4() -> None:
    assert PURE.parse("bid A") == Action("bid", (1,))
    assert PURE.parse("bid K") == Action("bid", (13,))
    assert PURE.parse("bid king") == Action("bid", (13,))
    assert PURE.parse("I bid 13") == Action("bid", (13,))
    assert PURE.parse("bid q") == Action("bid", (12,))
    assert PURE.parse("Bid: 10.") == Action("bid", (10,))


def test_lines_that_are_no_bid_parse_to_none_and_bad_cards_explain() -> None:
    assert GOOF.parse("Thanks, good game!") is None
    with pytest.raises(ParseError, match="could not read 'banana'"):
        GOOF.parse("bid banana")
    with pytest.raises(ParseError):
        GOOF.parse("bid 14")


def test_missing_bid_is_a_uniform_card_of_the_pack_ps_8() -> None:
    state = play(PURE, start(PURE, prize_order="descending"), 13, 12, 11)
    picks = {PURE.timeout_action(state, 1, seeded(i)).args[0] for i in range(300)}
    assert picks == set(range(1, 13))
    act = PURE.timeout_action(state, 1, seeded(1))
    after = PURE.apply(state, 1, act, seeded(1)).state
    assert after.auto["1"] is True


def test_round_13_is_resolved_automatically_ps_9() -> None:
    state = start(PURE, prize_order="ascending")
    for v in range(1, 13):
        state = play(PURE, state, v, v, v + 1 if v < 12 else 13)
    assert state.over and len(state.history) == 13 and state.history[-1].automatic


def test_tie_on_total_means_no_winner_ps_10() -> None:
    state = start(PURE, prize_order="ascending")
    for v in range(1, 13):
        state = play(PURE, state, v, v, v)
    assert state.over and PURE.scores(state) == [0, 0, 0]
    assert PURE.winner(state) is None


def test_bots_take_prizes_but_never_win_ps_11() -> None:
    state = start(PURE, bots=(False, False, True), prize_order="descending")
    state = play(PURE, state, 1, 2, 13)  # the bot takes the K
    for _ in range(12):
        if state.over:
            break
        r = state.round
        state = play(PURE, state, state.packs[0][0], state.packs[1][-1], state.packs[2][0])
        assert state.round != r or state.over
    assert state.over
    scores = PURE.scores(state)
    winner = PURE.winner(state)
    assert winner in (None, 1, 2)
    if winner:
        assert scores[winner - 1] == max(scores[0], scores[1])


def _bot_and_humans(*rounds: tuple[int, int, int]) -> BiddingState:
    state = start(PURE, bots=(False, False, True), prize_order="descending")
    for bids in rounds:
        state = play(PURE, state, *bids)
    return state


def test_a_bot_never_clinches_the_game_ps_11_g2_7() -> None:
    # The bot takes K Q J 10 9 (55); 36 points are left, the players have 0.
    state = _bot_and_humans((1, 2, 13), (3, 4, 12), (5, 6, 11), (7, 8, 10), (2, 1, 9))
    assert PURE.scores(state) == [0, 0, 55]
    assert PURE.clinched(state) is None
    assert PURE.view(state, None)["clinched"] is None


def test_a_player_clinches_past_a_bot_that_leads_ps_11_g2_7() -> None:
    # The bot takes K Q J (36), A takes 10 9 8 7 (34); 21 points are left for B.
    state = _bot_and_humans((1, 2, 13), (3, 4, 12), (5, 6, 11), (13, 7, 1), (12, 8, 2),
                            (11, 9, 3), (10, 5, 4))
    assert PURE.scores(state) == [34, 0, 36]
    assert PURE.clinched(state) == 1
    text = mail(PURE, state)
    assert "A has clinched the game: nobody can catch up now.\n" in text
    assert "Play goes on to the last round." in text  # G2-7: a fact, not a stop
    assert not state.over


def test_resign_replaces_the_seat_with_a_bot_ps_13() -> None:
    state = start(PURE)
    result = PURE.replace_with_bot(state, 2)
    assert result.state.bots == [False, True, False]
    assert "bot" in (result.reply or "")
    (notice,) = result.notices  # everyone is told at once
    assert notice.audience.public and notice.template == "resign"
    # Rule 8: "replaced by a bot who plays randomly", whatever the bot option.
    assert notice.context == {"name": state.names[1], "bots_win": False, "at_random": True}
    assert PURE.bot_at_random(result.state, 2)


def test_a_resigned_seat_bids_uniformly_and_is_left_out_of_the_winner_test_ps_13() -> None:
    state = PURE.replace_with_bot(start(PURE, prize_order="descending"), 2).state
    picks = {PURE.bot_action(state, 2, seeded(i)).args for i in range(300)}
    assert picks == {(v,) for v in range(1, 14)}  # a bid, not a referee's timeout card
    state = play(PURE, state, 1, 13, 2)  # the bot takes the K
    while not state.over:
        state = play(PURE, state, *(sorted(p)[0] for p in state.packs))
    assert PURE.scores(state)[1] > max(PURE.scores(state)[0], PURE.scores(state)[2])
    assert PURE.winner(state) in (None, 1, 3)


# -- options ----------------------------------------------------------------------

def test_options_are_validated_with_a_message_naming_the_key() -> None:
    with pytest.raises(OptionError, match="tie must be discard or carry"):
        GOOF.parse_options({"tie": "split"})
    with pytest.raises(OptionError, match="Unknown option 'colour'"):
        GOOF.parse_options({"colour": "red"})
    with pytest.raises(OptionError, match="prize_order must list each"):
        GOOF.parse_options({"prize_order": "1,2,3"})
    with pytest.raises(OptionError, match="players must be from 2 to 12"):
        GOOF.parse_options({"players": "1"})


def test_a_game_needs_at_least_two_cards_so_a_bid_is_ever_chosen() -> None:
    # With one card the only round plays itself inside the opening, which would
    # announce a prize already gone and report no round.
    with pytest.raises(OptionError, match="cards must be from 2 to 13; got 1"):
        GOOF.parse_options({"cards": "1"})


def test_the_opening_says_when_bid_cards_are_discarded_even_on_a_carried_tie() -> None:
    state = start(PURE, tie="carry")
    text = mail(PURE, state)
    assert "bid cards stay in the pot" not in text
    assert ("On a tie the prize stays in the pot and goes to the winner of\n"
            "the next round; a tie in the last round discards it.") in text
    # The pot of a carried tie holds the prize alone: bids never score here.
    state = play(PURE, state, 5, 5, 1)
    assert sorted(state.carry) == [state.history[0].prize]
    text = mail(PURE, state, "round_report")
    assert "both bids" not in text
    assert "The winner of this round takes the prize and the carried pot." in text


def test_the_stake_of_a_carried_tie_names_all_the_bids_with_three_players() -> None:
    state = play(GOOF, start(GOOF, players="3", prize_order="ascending"), 6, 6, 1)
    assert "takes the prize, all the bids and the carried pot." in mail(
        GOOF, state, "round_report")


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_the_opening_does_not_call_a_fixed_prize_order_random(order: str) -> None:
    text = " ".join(mail(GOOF, start(GOOF, prize_order=order)).split())
    assert "at random" not in text
    assert f"shows the prizes of its own pack in {order} order, one a round" in text


def test_the_pure_skill_opening_says_bots_cannot_win_and_what_the_winner_gets_ps_11() -> None:
    text = mail(PURE, start(PURE, bots=(False, False, True)))
    assert "Bots take prizes, but their totals do not count for the win (clause 8)." in text
    assert "The winner receives 8 points and the referee A$8 (clause 5)." in text
    assert "Bots take prizes" not in mail(GOOF, start(GOOF))


def test_one_engine_serves_both_games_by_options() -> None:
    opts = PURE.parse_options({"players": "2", "cards": "6", "tie": "carry",
                               "take_bids": "yes"})
    state = PURE.new(opts, [SeatInfo(1, "A"), SeatInfo(2, "B")], KeyedDraws("x")).state
    assert state.packs == [[1, 2, 3, 4, 5, 6]] * 2


# -- whole games ------------------------------------------------------------------

def _playout(game: BiddingGame, seed: int, options: dict[str, str]) -> BiddingState:
    rng = random.Random(seed)
    state = start(game, seed=str(seed), **options)
    step = 0
    while not state.over:
        for p in game.pending(state):
            step += 1
            act = game.bot_action(state, p.seat, SequentialDraws(rng))
            state = game.apply(state, p.seat, act, KeyedDraws(str(seed))).state
    return state


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_pure_skill_prizes_taken_plus_discarded_stay_91(seed: int) -> None:
    state = _playout(PURE, seed, {})
    prizes_discarded = sum(r.prize for r in state.history if r.outcome != "won")
    assert sum(PURE.scores(state)) + prizes_discarded == 91
    assert len(state.history) == 13 and all(p == [] for p in state.packs)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_goofspiel_points_stay_63(seed: int) -> None:
    state = _playout(GOOF, seed, {})
    assert sum(GOOF.scores(state)) + sum(state.discards) == 63
    for _ in range(1):
        mid = start(GOOF, seed=str(seed))
        view = GOOF.view(mid, None)
        assert view["in_hands"] == 63


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from([PURE, GOOF]))
def test_replay_from_seed_and_action_log_gives_the_same_state(seed: int,
                                                               game: BiddingGame) -> None:
    rng = random.Random(seed)
    state = start(game, seed=str(seed))
    log: list[tuple[int, Action]] = []
    while not state.over:
        p = game.pending(state)[0]
        act = game.bot_action(state, p.seat, SequentialDraws(rng))
        log.append((p.seat, act))
        state = game.apply(state, p.seat, act, KeyedDraws(str(seed))).state
    again = start(game, seed=str(seed))
    for seat, act in log:
        again = game.apply(again, seat, act, KeyedDraws(str(seed))).state
    assert game.dump(again) == game.dump(state)
    assert game.load(game.dump(state)) == state


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from([PURE, GOOF]),
       st.sampled_from(["carry", "discard"]), st.booleans())
def test_no_state_of_a_game_changes_after_it_was_made(seed: int, game: BiddingGame,
                                                      tie: str, take_bids: bool) -> None:
    """A move copies only what it changes and shares the rest (the names,
    options, the records of rounds) with the state it was given: every
    state of a whole game, kept in memory, still dumps as it did when made."""
    rng = random.Random(seed)
    state = start(game, seed=str(seed), tie=tie, take_bids="yes" if take_bids else "no")
    kept = [(state, game.dump(state))]
    while not state.over:
        p = game.pending(state)[0]
        act = game.bot_action(state, p.seat, SequentialDraws(rng))
        if rng.random() < 0.05 and not state.bots[p.seat - 1]:
            state = game.replace_with_bot(state, p.seat).state
        else:
            state = game.apply(state, p.seat, act, KeyedDraws(str(seed))).state
        kept.append((state, game.dump(state)))
    for made, dumped in kept:
        assert game.dump(made) == dumped


def test_a_game_of_edition_1_records_no_seat_handed_to_a_bot() -> None:
    """A game stored before 2026-11-27 holds no ``replaced``: edition 1,
    whose seats handed to bots were never recorded. It has no ``bot``
    option either, so every bot of it bids at random, as PS-13 wants."""
    stored = PURE.dump(start(PURE))
    del stored["replaced"], stored["edition"]
    del stored["options"]["bot"]
    old = PURE.load(stored)
    assert old.edition == 1
    result = PURE.replace_with_bot(old, 2)
    assert result.state.bots == [False, True, False] and result.state.replaced == []
    assert PURE.bot_at_random(result.state, 2) and PURE.bot_at_random(result.state, 1)
    later = PURE.dump(PURE.replace_with_bot(start(PURE), 2).state)
    del later["edition"]
    assert PURE.load(later).edition == 2 and PURE.load(later).replaced == [2]
