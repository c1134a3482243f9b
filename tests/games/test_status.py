"""The ``status`` hook of every game: the game as it stands, for everyone,
in the game's own words, at each phase (before the first move, in a round,
between rounds, over). What may not be public never shows: the contract
test (``tests/games/test_contract.py``) checks that over seeded playouts;
these tests check the words."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from referee.games import get_game
from referee.games.base import Action, Game, Scope, SeatInfo
from referee.games.draws import KeyedDraws
from referee.games.spades.rules import card_text
from tests.games.seeded import seeded

State = Any


def start(kind: str, names: list[str], options: Mapping[str, str] | None = None,
          seed: str = "s") -> tuple[Game[Any], State]:
    engine = get_game(kind)
    seats = [SeatInfo(i, name) for i, name in enumerate(names, start=1)]
    # The states below are where the random bots' seeded moves lead.
    raw = {"bot": "random", **(options or {})}
    return engine, engine.new(engine.parse_options(raw), seats, KeyedDraws(seed)).state


def until(engine: Game[Any], state: State, done: Callable[[State], bool],
          seed: int = 1) -> State:
    """Play on as bots (and the referee's timetable) until ``done``."""
    draws = seeded(seed)
    for _ in range(10_000):
        if done(state):
            return state
        owed = engine.pending(state)[0]
        how = engine.timeout_action if owed.seat == 0 else engine.bot_action
        state = engine.apply(state, owed.seat, how(state, owed.seat, draws), draws).state
    raise AssertionError("never got there")


def move(engine: Game[Any], state: State, seat: int, verb: str, *args: Any) -> State:
    return engine.apply(state, seat, Action(verb, args), seeded(0)).state


# -- the bidding games ------------------------------------------------------------


def test_goofspiel_shows_the_round_its_prize_the_points_and_who_has_bid() -> None:
    engine, state = start("goofspiel", ["Ann", "Ben"], {"prize_order": "5,1,6,4,3,2"})
    assert engine.status(state) == "Round 1 of 6: the prize is 5.\nPoints: Ann 0, Ben 0."
    state = move(engine, state, 1, "bid", 3)
    assert engine.status(state) == ("Round 1 of 6: the prize is 5.\nPoints: Ann 0, Ben 0.\n"
                                    "Sealed bids are in from Ann.")
    assert " 3" not in engine.status(state)  # a sealed bid stays sealed (G2-9)


def test_goofspiel_between_rounds_shows_the_carried_pot_and_over_the_result() -> None:
    engine, state = start("goofspiel", ["Ann", "Ben"], {"prize_order": "5,1,6,4,3,2"})
    state = move(engine, move(engine, state, 1, "bid", 3), 2, "bid", 3)
    assert engine.status(state) == (
        "Round 2 of 6: the prize is 1.\n"
        "Carried over from tied rounds: 3 3 5 (11 points), to this round's winner.\n"
        "Points: Ann 0, Ben 0.")
    state = until(engine, state, lambda s: s.over)
    assert engine.status(state) == ("The game is over after 6 rounds: Ann wins.\n"
                                    "Final points: Ann 32, Ben 31.")


def test_pure_skill_names_its_prizes_as_cards_and_a_clinched_lead() -> None:
    engine, state = start("pure-skill", ["Ann", "Ben", "Cat"],
                          {"prize_order": "K,Q,J,10,9,8,7,6,5,4,3,2,A"})
    assert engine.status(state).startswith("Round 1 of 13: the prize is K♠ (13 points).\n")
    for card in (13, 12, 11, 10, 9, 8):
        state = move(engine, state, 1, "bid", card)
        state = move(engine, state, 2, "bid", card - 7)
        state = move(engine, state, 3, "bid", card - 6)
    assert engine.status(state).splitlines()[1:] == [
        "Points: Ann 63, Ben 0, Cat 0.",
        "Ann has clinched the game: nobody can catch up now."]


# -- Spades ---------------------------------------------------------------------


SPADES = ["Ann", "Ben", "Cat", "Dan"]


def test_spades_shows_the_teams_scores_and_bags_and_who_bids() -> None:
    engine, state = start("spades", SPADES, seed="s12")
    assert engine.status(state) == (
        "Round 1, in a game to 500.\n"
        "Scores: team 1 (Ann & Dan) 0 points, 0 bags; team 2 (Cat & Ben) 0 points, 0 bags.\n"
        "Bidding: Ann bids first.")
    state = move(engine, state, 1, "bid", 4)
    assert engine.status(state).endswith("\nBidding: Ann 4; Cat bids next.")


def test_spades_in_play_shows_bids_tricks_and_the_trick_on_the_table_but_no_hand() -> None:
    engine, state = start("spades", SPADES, seed="s12")
    state = until(engine, state, lambda s: s.phase == "playing" and len(s.trick) == 2)
    text = engine.status(state)
    assert text.splitlines()[2:] == [
        "Bids: Ann 3, Cat 2, Dan 2, Ben 2.",
        "Tricks taken: team 1 0 (bid 5), team 2 0 (bid 4); 0 of 13 tricks played.",
        "Trick 1: Ann 4♥, Cat 3♥; Dan plays next."]
    assert not [c for hand in state.hands for c in hand if card_text(c) in text]
    state = until(engine, state, lambda s: s.phase == "playing" and not s.trick
                  and len(s.tricks) == 1)
    assert engine.status(state).endswith(f"Trick 2: {state.names[state.turn]} leads.")


def test_spades_between_rounds_and_over() -> None:
    engine, state = start("spades", SPADES, seed="s12")
    state = until(engine, state, lambda s: s.round == 2)
    assert engine.status(state) == (
        "Round 2, in a game to 500.\n"
        "Scores: team 1 (Ann & Dan) 53 points, 3 bags; team 2 (Cat & Ben) 41 points, 1 bag.\n"
        "Bidding: Cat bids first.")
    state = until(engine, state, lambda s: s.phase == "over")
    (one, two), (bags_one, bags_two) = state.scores, state.bags
    won, lost = (one, two) if state.winner == 1 else (two, one)
    winner = "Team 1 (Ann & Dan)" if state.winner == 1 else "Team 2 (Cat & Ben)"
    assert engine.status(state) == (
        f"The game is over: {winner} wins with {won} to {lost}.\n"
        f"Final scores: team 1 (Ann & Dan) {one} points, {bags_one} bags; "
        f"team 2 (Cat & Ben) {two} points, {bags_two} bags.")


def test_spades_names_a_turn_by_its_bidding_or_trick_never_its_number() -> None:
    engine = get_game("spades")
    assert engine.turn_name(29) == "the bidding of round 3"
    assert engine.turn_name(30, 29) == "trick 1"
    assert engine.turn_name(29, 30) == "the bidding"
    assert engine.turn_name(28, 30) == "trick 13 of round 2"
    assert not engine.shows_turn_numbers
    assert get_game("goofspiel").turn_name(3) == "round 3"
    # Rule text 004 numbers no turns, nor do Miser's mails.
    miser = get_game("miser")
    assert (miser.turn_name(7), miser.turn_name(6, 7), miser.turn_name(8, 7)) == (
        "a new turn", "an earlier turn", "a later turn")
    assert not miser.shows_turn_numbers


# -- Miser ---------------------------------------------------------------------


def test_miser_shows_the_turn_the_pennies_the_centre_and_the_cards() -> None:
    engine, state = start("miser", ["Ann", "Ben", "Cat"], seed="t2")
    assert engine.status(state) == ("It is Ben's turn.\n"
                                    "Pennies: Ann 20, Ben 20, Cat 20; the centre holds 0 pennies.\n"
                                    "Cards in hand: Ann 17, Ben 17, Cat 17.")


def test_miser_shows_each_exchange_under_way_with_face_down_cards_counted() -> None:
    engine, state = start("miser", ["Ann", "Ben", "Cat"], seed="t2")
    attack = until(engine, state, lambda s: s.attack is not None)
    assert engine.status(attack).splitlines()[-1] == (
        "Attack: Ann on Ben, a wager of 3; face down: Ann 0, Ben 0.")
    auction = until(engine, attack, lambda s: s.auction is not None)
    assert engine.status(auction).splitlines()[-1] == (
        # A bid is its bidder's "done" until someone else bids or raises.
        "Bids for the centre: Ben 2 pennies (with 2♦ face up). Done: Ben.")
    contract = until(engine, auction, lambda s: s.contract is not None and s.contract.accepted)
    assert engine.status(contract).splitlines()[-1] == (
        "Contract: Ann and Ben against Cat; no card is face down yet.")
    over = until(engine, contract, lambda s: s.over)
    assert engine.status(over) == ("The game is over: Ann is out of pennies; "
                                   "Ben wins with 36 (Ann 0, Ben 36, Cat 21).")


def test_miser_shows_a_public_offer_but_never_a_private_one() -> None:
    engine, state = start("miser", ["Ann", "Ben", "Cat"], seed="t2")
    offer = Action("contract", ("Ann", "Cat", 2, 1))
    public = engine.apply(state, 2, offer, seeded(0)).state
    assert engine.status(public).splitlines()[-1] == (
        "Ben offers Ann a contract against Cat: wagers 2 and 1; Ann has yet to answer.")
    private = Action(offer.verb, offer.args, Scope.PRIVATE, frozenset({1}))
    assert engine.status(engine.apply(state, 2, private, seeded(0)).state) == (
        engine.status(state))


# -- the tournament ---------------------------------------------------------------


def test_the_tournament_shows_hand_scores_only_as_a_report_published_them() -> None:
    engine, state = start("loatcg", ["Ann", "Ben", "Cat"], seed="t")
    assert engine.status(state) == (
        "Round 1 of 8; Members: Ann, Ben and Cat.\n"
        "No Round Report yet: Hand Scores are published in the Round Reports.")
    state = move(engine, state, 2, "offer", {"wool": 1}, {"ore": 1}, [])
    reported = until(engine, state, lambda s: len(s.reports) == 1)
    text = engine.status(reported)
    scores = ", ".join(f"{n} {p}" for n, p in reported.reports[0].scores)
    assert text.splitlines()[:3] == [
        "Round 2 of 8; Members: Ann, Ben and Cat.",
        f"Hand Scores as Round Report 1 published them: {scores}.",
        "Scoring Instructions published so far (rule 5):"]
    assert text.endswith("Open public offers (rule 10):\n  #1 Ben gives 1 wool for 1 ore")
    # A discard changes a Hand Score; status shows it only once a report does.
    ann = reported.members[0]
    kind = next(k for k, n in ann.hand.items() if n)
    assert engine.status(move(engine, reported, 1, "discard", kind)) == text


def test_the_tournament_over_names_its_winners_and_final_hand_scores() -> None:
    engine, state = start("loatcg", ["Ann", "Ben", "Cat"], seed="t")
    state = until(engine, state, lambda s: s.frozen)
    text = engine.status(state)
    assert text.startswith("The tournament is over (rule 6): ")
    assert text.splitlines()[1] == "Final Hand Scores: " + ", ".join(
        f"{n} {p}" for n, p in state.final_scores) + "."
