"""Issue 23: every public draw of a game re-derives from the seed and the
public record alone, never from the secret moves. For random seeds and
random playouts of every kind, each check below draws again, following
docs/engines.md ("Randomness and replay") with :class:`KeyedDraws` alone,
what the game's public record shows: Goofspiel's and Pure Skill's prizes
and the bids the referee chose, Miser's draw for first player and (once the
seed is revealed) its deal, Spades' seating and first deal, and the
tournament's salt and the instruction each Round Report showed."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import get_game
from referee.games.base import EngineError, SeatInfo
from referee.games.cards import full_deck
from referee.games.draws import KeyedDraws
from referee.games.loatcg.instructions import digest
from tests.games.seeded import seeded

SEEDS = st.text(alphabet="0123456789abcdef", min_size=8, max_size=32)
PLAYOUTS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def playout(kind: str, seed: str, play: int, options: dict[str, str], n: int,
            steps: int = 4000) -> tuple[Any, Any]:
    """A game of ``kind`` with ``seed`` played to its end: the players'
    moves a bot's choices drawn from their own generator (``play``), now and
    then the referee's move at a deadline. Returns the first and last state."""
    engine = get_game(kind)
    draws = KeyedDraws(seed)
    seats = [SeatInfo(i, f"P{i}") for i in range(1, n + 1)]
    first = state = engine.new(engine.parse_options(options), seats, draws).state
    chooser = random.Random(play)
    for step in range(steps):
        if engine.is_over(state):
            return first, state
        owed = engine.pending(state)
        seat = chooser.choice([p.seat for p in owed] + [s.position for s in seats
                                                       if kind == "loatcg"])
        try:
            if seat == 0 or chooser.random() < 0.3:
                action = engine.timeout_action(state, seat, draws)
            else:
                action = engine.bot_action(state, seat, seeded(f"{play}:{step}"))
            state = engine.apply(state, seat, action, draws).state
        except EngineError:
            continue
    raise AssertionError(f"{kind} {seed}: not over after {steps} steps")


@PLAYOUTS
@given(seed=SEEDS, play=st.integers(0, 2**32), kind=st.sampled_from(["goofspiel", "pure-skill"]))
def test_the_prizes_and_the_referees_bids_re_derive_from_the_seed(
        seed: str, play: int, kind: str) -> None:
    _, over = playout(kind, seed, play, {}, 2 if kind == "goofspiel" else 3)
    draws = KeyedDraws(seed)
    cards = int(over.options["cards"])
    pot = list(range(1, cards + 1))
    packs = [list(range(1, cards + 1)) for _ in over.names]
    for record in over.history:  # the round reports, public
        assert record.prize == draws.rng("prize", record.number).choice(sorted(pot))
        pot.remove(record.prize)
        for i, (bid, chosen) in enumerate(zip(record.bids, record.chosen_by_referee,
                                              strict=True)):
            if chosen:
                rng = draws.rng("timeout", i + 1, f"round-{record.number}")
                assert bid == rng.choice(sorted(packs[i]))
            packs[i].remove(bid)


@PLAYOUTS
@given(seed=SEEDS, play=st.integers(0, 2**32), n=st.sampled_from([3, 4, 9, 17]))
def test_miser_draw_for_first_and_deal_re_derive_from_the_seed(
        seed: str, play: int, n: int) -> None:
    first, _ = playout("miser", seed, play, {"pennies": "6"}, n)
    draws = KeyedDraws(seed)
    # MI-2, from the seed alone: the draws are in the opening mail.
    rng, deck, drawing, rows = draws.rng("first"), [], list(range(n)), []
    while len(drawing) > 1 or not rows:
        if len(deck) < len(drawing):
            deck = [str(c) for c in full_deck()]
            rng.shuffle(deck)
        row: list[str | None] = [None] * n
        for p in drawing:
            row[p] = deck.pop()
        rows.append(row)
        ranks = {p: "23456789TJQKA".index(str(row[p])[:-1].replace("10", "T")) for p in drawing}
        drawing = [p for p in drawing if ranks[p] == max(ranks.values())]
    assert first.draws == rows and first.first == drawing[0]
    # MI-1, once the seed is revealed: the deal, each hand and the cards removed.
    deck = [str(c) for c in full_deck()]
    draws.rng("deal").shuffle(deck)
    cut = 52 % n
    assert first.removed == sorted(deck[:cut])
    assert [sorted(h) for h in first.hands] == [sorted(deck[cut:][i::n]) for i in range(n)]
    assert {len(h) for h in first.hands} == {52 // n}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, play=st.integers(0, 2**32))
def test_spades_seating_and_deal_re_derive_from_the_seed(seed: str, play: int) -> None:
    first, _ = playout("spades", seed, play, {"target": "100"}, 4)
    draws = KeyedDraws(seed)
    rng = draws.rng("seating")  # SP-1, public: the opening mail's seating
    a, b, c, d = 1, 2, 3, 4
    teams = [list(pair) for pair in rng.choice([((a, b), (c, d)), ((a, c), (b, d)),
                                                ((a, d), (b, c))])]
    rng.shuffle(teams)
    for team in teams:
        rng.shuffle(team)
    assert first.order == [teams[0][0], teams[1][0], teams[0][1], teams[1][1]]
    # The operator's audit (SP-17: hands are never published): round 1's deal.
    deck = [str(c) for c in full_deck()]
    draws.rng("deal", 1).shuffle(deck)
    assert [sorted(h) for h in first.hands] == [sorted(deck[i * 13:(i + 1) * 13])
                                                for i in range(4)]


LOATCG = "1. points ore 1\n2. points wool 2\n3. set ore wool lumber 5\n4. points apple -1\n"


@PLAYOUTS
@given(seed=SEEDS, play=st.integers(0, 2**32), n=st.integers(0, 4))
def test_the_salt_and_each_reports_instruction_re_derive_from_the_seed(
        seed: str, play: int, n: int) -> None:
    _, over = playout("loatcg", seed, play, {"instructions": LOATCG, "report_days": "4"}, n)
    draws = KeyedDraws(seed)
    # The Final Report gives the salt and every report's instruction number.
    assert over.salt == f"{draws.rng('salt').getrandbits(256):064x}"
    assert over.digest == digest(over.instructions, over.salt)
    reported: list[int] = []
    for report in over.reports:
        left = [k for k in range(1, over.rounds + 1) if k not in reported]
        assert report.instruction == draws.rng("report", report.number).choice(left)
        reported.append(report.instruction)
