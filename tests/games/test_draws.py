"""Draws keyed by what they are for (``referee/games/draws.py``): the stream
is the one docs/engines.md describes, so a player can draw it again, and
games played with the counter scheme before it still replay exactly."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from referee.games import get_game
from referee.games.base import Action, SeatInfo
from referee.games.draws import (
    COUNTER,
    KEYED,
    MIXED,
    KeyedDraws,
    SequentialDraws,
    Stream,
    draw_seed,
    draws_for,
    mixed_seed,
    valid_entropy,
)
from referee.games.loatcg.instructions import canonicalize

FIXTURES = Path(__file__).parent / "fixtures"


def block(text: str) -> bytes:
    """One block of a stream, as ``printf '%s' TEXT | sha256sum`` gives it."""
    return hashlib.sha256(text.encode()).digest()


def words(name: str, blocks: int) -> list[int]:
    """The stream's first words, by the documented format, without draws.py."""
    data = b"".join(block(f"{name}/{n}") for n in range(blocks))
    return [int.from_bytes(data[i:i + 8], "big") for i in range(0, len(data), 8)]


def test_a_stream_is_named_by_the_seed_the_purpose_and_the_key() -> None:
    draws = KeyedDraws("5eed")
    assert draws.name("prize", 5) == "5eed/prize/5"
    assert draws.name("deal", 3, 2) == "5eed/deal/3/2"
    assert draws.name("timeout", 2, "attack-7:1") == "5eed/timeout/2/attack-7:1"
    assert draws.rng("salt").name == "5eed/salt"
    for bad in (("a/b",), ("deal", "x/y"), ("deal", "")):
        with pytest.raises(ValueError, match="no '/'"):
            draws.name(*bad)


def test_a_stream_reads_sha256_blocks_eight_bytes_a_word() -> None:
    stream = Stream("5eed/prize/5")
    expected = words("5eed/prize/5", 3)
    assert [stream.getrandbits(64) for _ in range(12)] == expected
    assert Stream("x").random() == (words("x", 1)[0] >> 11) / 2**53
    assert Stream("x").getrandbits(256) == int.from_bytes(block("x/0"), "big")
    assert Stream("x").getrandbits(3) == words("x", 1)[0] >> 61


def test_below_choice_randint_and_shuffle_follow_the_documented_algorithms() -> None:
    w = words("s/deal", 20)
    assert Stream("s/deal").below(13) == w[0] % 13
    assert Stream("s/deal").choice("abcdefg") == "abcdefg"[w[0] % 7]
    assert Stream("s/deal").randint(1, 8) == 1 + w[0] % 8
    deck = list(range(52))
    Stream("s/deal").shuffle(deck)
    by_hand, it = list(range(52)), iter(w)
    for i in range(51, 0, -1):
        j = next(it) % (i + 1)  # no rejection: 2**64 - 2**64 % n is never reached here
        by_hand[i], by_hand[j] = by_hand[j], by_hand[i]
    assert deck == by_hand


def test_below_rejects_the_words_past_the_last_whole_multiple() -> None:
    # n = 2**63 + 1: a word at or above 2**63 + 1 is drawn again (each about 1 in 2).
    n = 2**63 + 1
    w = words("r", 2)
    expected = next(x for x in w if x < 2**64 - 2**64 % n) % n
    assert Stream("r").below(n) == expected
    with pytest.raises(ValueError):
        Stream("r").below(0)


def test_draws_are_uniform_enough() -> None:
    counts = [0] * 6
    for k in range(6000):
        counts[KeyedDraws("u").rng("die", k).randint(1, 6) - 1] += 1
    assert min(counts) > 900 and max(counts) < 1100


def test_a_draw_depends_on_its_key_alone() -> None:
    draws = KeyedDraws("5eed")
    first = draws.rng("deal", 1)
    assert [first.random() for _ in range(3)] != [draws.rng("deal", 2).random() for _ in range(3)]
    again = draws.rng("deal", 1)
    assert again.random() == draws.rng("deal", 1).random()


def test_the_schemes() -> None:
    assert isinstance(draws_for(KEYED, "s", 7, "bot"), KeyedDraws)
    counter = draws_for(COUNTER, "s", 7, "bot")
    assert isinstance(counter, SequentialDraws)
    # One generator for every purpose: the counter scheme's rng_for(seed:bot, 7).
    one = counter.rng("prize", 1)
    assert counter.rng("deal", 2) is one
    with pytest.raises(ValueError, match="unknown draw scheme"):
        draws_for("dice", "s", 0)


def test_the_mixed_seed_is_sha256_of_the_seed_line_and_each_entropy_line() -> None:
    # printf 'seed: %s\nentropy 1: %s\nentropy 3: %s\n' 5eed '<a@b>' 'my cat' | sha256sum
    text = "seed: 5eed\nentropy 1: <a@b>\nentropy 3: my cat\n"
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert mixed_seed("5eed", [(3, "my cat"), (1, "<a@b>")]) == expected  # by position
    assert expected == "ae6db2639397f5eb4522cab9362965fa57351364bf2724921c3b4b211810108b"
    # No contribution: the seed's own line alone, which is its fingerprint's text.
    assert mixed_seed("5eed", []) == hashlib.sha256(b"seed: 5eed\n").hexdigest()
    # Any one contribution changed changes every draw.
    assert mixed_seed("5eed", [(1, "<a@c>"), (3, "my cat")]) != expected


def test_a_mixed_game_draws_from_keyed_draws_of_the_mixed_seed() -> None:
    entropy = [{"position": 2, "name": "Bob", "value": "x y", "how": "words"},
               {"position": 1, "name": "Ann", "value": "<m@id>", "how": "message-id"}]
    derived = mixed_seed("s", [(1, "<m@id>"), (2, "x y")])
    draws = draws_for(MIXED, "s", 4, "timeout", entropy=entropy)
    assert isinstance(draws, KeyedDraws) and draws.seed == derived
    assert draws.rng("prize", 1).random() == KeyedDraws(derived).rng("prize", 1).random()
    assert draw_seed(MIXED, "s", entropy) == derived
    assert draw_seed(KEYED, "s", entropy) == "s"  # another scheme: the seed itself


def test_a_contribution_is_one_line_of_printable_text() -> None:
    assert valid_entropy("<CAF=x+1@mail.gmail.com>") and valid_entropy("Tibbles, 1987 🐈")
    for bad in ("", "two\nlines", "tab\there", " padded", "x" * 201):
        assert not valid_entropy(bad)
    with pytest.raises(ValueError, match="entropy of seat 2"):
        mixed_seed("s", [(2, "a\nentropy 1: forged")])


# -- games played before keyed draws -----------------------------------------------


def counter_games() -> list[dict[str, Any]]:
    """Games played to their end with the counter scheme, by the engines as
    they were before keyed draws (the contract's playouts): each its kind,
    seed, options, seats at the start, action log and final state."""
    games: list[dict[str, Any]] = json.loads((FIXTURES / "counter_games.json").read_text())
    return games


def holds(old: Any, new: Any, path: str = "state") -> str | None:
    """Where ``new`` differs from ``old`` in what ``old`` holds (a field added
    since, with its value, is no difference), or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key not in new:
                return f"{path}.{key}: missing"
            if (found := holds(value, new[key], f"{path}.{key}")) is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if (found := holds(a, b, f"{path}[{i}]")) is not None:
                return found
        return None
    return None if old == new else f"{path}: was {old!r}, now {new!r}"


@pytest.mark.parametrize("recorded", counter_games(),
                         ids=lambda g: f"{g['kind']}-{g['seed']}")
def test_a_game_played_with_the_counter_scheme_replays_to_the_same_state(
        recorded: dict[str, Any]) -> None:
    engine = get_game(recorded["kind"])
    seed = recorded["seed"]
    seats = [SeatInfo(p, name, bot) for p, name, bot in recorded["seats"]]
    options = engine.parse_options(recorded["options"])
    if recorded["kind"] == "loatcg":
        # as the options were stored before instructions had words (TCG-19)
        options["instructions"] = canonicalize(recorded["options"]["instructions"])
    state = engine.new(options, seats, draws_for(COUNTER, seed, 0)).state
    for step, seat, data in recorded["log"]:
        action = Action.from_json(data)
        if action.verb == "resign":
            state = engine.replace_with_bot(state, seat).state
        else:
            state = engine.apply(state, seat, action, draws_for(COUNTER, seed, step)).state
    assert engine.is_over(state)
    assert holds(recorded["state"], engine.dump(state)) is None


def test_the_counter_games_cover_every_kind_and_every_draw() -> None:
    games = counter_games()
    assert {g["kind"] for g in games} == {"goofspiel", "pure-skill", "spades", "miser", "loatcg"}
    verbs = {a["verb"] for g in games for _, _, a in g["log"]}
    assert {"report", "draw", "reveal", "join", "resign"} <= verbs
    assert any(a.get("args", [None, None])[1:2] == ["referee"]
               for g in games for _, _, a in g["log"] if a["verb"] == "bid")
