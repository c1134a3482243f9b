"""Tests of the Scoring Instruction language of the Land of Agora tournament
(rule text 002, rule 4, and rulings TCG-17 … TCG-19)."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import referee
from referee.games.loatcg import Loatcg
from referee.games.loatcg.instructions import (
    CARD_TYPES,
    EXAMPLE_INSTRUCTIONS,
    CountAs,
    Hoard,
    InstructionError,
    Pairs,
    Points,
    Sets,
    canonical_text,
    canonicalize,
    card_type,
    commitment,
    committed_text,
    digest,
    parse_instructions,
    score,
    score_breakdown,
)

EXAMPLE = parse_instructions(EXAMPLE_INSTRUCTIONS)


def hand(**counts: int) -> dict[str, int]:
    return counts


# -- the EXAMPLE set of rule text 002 -------------------------------------------


def test_the_example_set_is_eight_instructions_in_its_own_canonical_form() -> None:
    assert len(EXAMPLE) == 8
    assert [i.number for i in EXAMPLE] == list(range(1, 9))
    assert canonical_text(EXAMPLE) == EXAMPLE_INSTRUCTIONS
    assert EXAMPLE[0].rule == Points(("ore",), 1, "ore")
    assert EXAMPLE[3].rule == Sets(("ore", "wool", "lumber"), 5, "ore wool lumber")
    assert EXAMPLE[5].rule == Pairs("diamond", 5, -15)
    assert EXAMPLE[6].rule == CountAs("apple", "ore")
    assert EXAMPLE[7].rule == Hoard(7, CARD_TYPES, -10, "all")


#: The EXAMPLE set as a file an operator copies and edits; package data, so a
#: wheel carries it too.
EXAMPLE_FILE = Path(referee.__file__).parent / "examples" / "loatcg-instructions.txt"


def test_the_shipped_example_file_is_exactly_the_default_set() -> None:
    text = EXAMPLE_FILE.read_text(encoding="utf-8")
    assert parse_instructions(text) == EXAMPLE
    assert canonicalize(text) == EXAMPLE_INSTRUCTIONS
    game = Loatcg()
    assert game.parse_options({"instructions": text}) == game.parse_options({})
    # The words as rule text 002 sets them out, line for line.
    assert "6. Matching Earrings:  Each pair of diamonds in a hand is worth 5\n" in text
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    package_data = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["referee"]
    assert "examples/*.txt" in package_data


#: The EXAMPLE set in the words of rule text 002, spaces made single.
RULE_TEXT_WORDS = [
    "Each ore is worth 1 point.",
    "Each wool is worth 2 points.",
    "Each lumber is worth 3 points.",
    "Each set of (ore-wool-lumber) is worth 5 points (a card only belongs to one such set).",
    "Each Steel, Paper, or Fabric is worth 4 points.",
    "Matching Earrings: Each pair of diamonds in a hand is worth 5 points, but having a "
    "single remaining diamond (i.e. an odd number of diamonds) loses 15 points.",
    "Spoilage: For the remainder of the scoring, all apples are considered to be ore.",
    "No Hoarding: For each card type, if a hand has 7 or more of that type, the hand loses "
    "10 points.",
]


def test_tcg_19_the_example_set_is_quoted_in_the_rule_texts_own_words() -> None:
    assert [i.english() for i in EXAMPLE] == RULE_TEXT_WORDS


def test_an_instruction_written_as_its_rule_alone_reads_as_plain_english() -> None:
    rules_alone = "".join(f"{i.number}. {f'{i.title}: ' if i.title else ''}{i.rule.canonical()}\n"
                          for i in EXAMPLE)
    assert rules_alone.splitlines()[5] == "6. pairs diamond 5 odd -15"
    assert [i.english() for i in parse_instructions(rules_alone)] == [
        "Each ore is worth 1 point.",
        "Each wool is worth 2 points.",
        "Each lumber is worth 3 points.",
        "Each set of (ore-wool-lumber) is worth 5 points (a card only belongs to one such set).",
        "Each steel, paper or fabric is worth 4 points.",
        "Each pair of diamonds in a hand is worth 5 points, but having a "
        "single remaining diamond (an odd number of diamonds) loses 15 points.",
        "For the remainder of the scoring, all apples are considered to be ore.",
        "For each card type, if a hand has 7 or more of that type, the hand loses 10 points.",
    ]
    titled = parse_instructions("1. Spoilage: count apple as ore\n")[0]
    assert titled.english() == ("Spoilage: For the remainder of the scoring, all apples are "
                                "considered to be ore.")
    # A new tournament commits to those words, so a member can check what they were told.
    assert committed_text([titled]) == (
        "1. Spoilage: For the remainder of the scoring, all apples are considered to be ore.\n"
        "   = count apple as ore\n")


def test_words_go_on_over_indented_lines_and_need_their_rule() -> None:
    (one,) = parse_instructions("  1. Each ore\n     is worth   2 points.\n   = points ore 2\n")
    assert (one.words, one.rule.canonical()) == ("Each ore is worth 2 points.", "points ore 2")
    assert one.canonical() == "1. Each ore is worth 2 points.\n   = points ore 2"
    # the rule text's own layout: every line indented, numbers included
    two = parse_instructions("    1.  Each ore is worth 1 point.\n    = points ore 1\n"
                             "    2.  Each wool is worth 2\n        points.\n"
                             "    = points wool 2\n")
    assert [i.words for i in two] == ["Each ore is worth 1 point.", "Each wool is worth 2 points."]
    for bad, problem in [
        ("1. Each ore is worth 1 point.\n   and more\n", r"line 2: an instruction in words "
                                                          r"needs its rule on a line starting"),
        ("= points ore 1\n", "line 1: a '= rule' line must follow"),
        ("1. Each ore.\n   = points ore 1\n   = points ore 2\n", "line 3: instruction 1 has "
                                                                 "a second"),
        ("1. Each ore.\n   = pints ore 1\n", "line 2: unknown rule 'pints'"),
        ("1.\n   = points ore 1\n", "line 1: the instruction has no words"),
    ]:
        with pytest.raises(InstructionError, match=problem):
            parse_instructions(bad)


def test_points_per_card_type() -> None:
    assert score(EXAMPLE, hand(ore=2)) == 2
    assert score(EXAMPLE, hand(wool=3)) == 6
    assert score(EXAMPLE, hand(lumber=2)) == 6
    assert score(EXAMPLE, hand(steel=1, paper=2, fabric=1)) == 16


def test_tcg_18_sets_are_the_scarcest_type_on_top_of_the_card_points() -> None:
    # 3 ore + 2 wool x 2 + 5 lumber x 3 = 22, and min(3, 2, 5) = 2 sets of 5
    assert score_breakdown(EXAMPLE, hand(ore=3, wool=2, lumber=5)) == [3, 4, 15, 10, 0, 0, 0, 0]
    assert score(EXAMPLE, hand(ore=1, wool=1, lumber=1)) == 1 + 2 + 3 + 5
    assert score(EXAMPLE, hand(ore=4, wool=4)) == 12  # no lumber, no set


@pytest.mark.parametrize(
    ("diamonds", "points"), [(0, 0), (1, -15), (2, 5), (3, -10), (4, 10), (5, -5)]
)
def test_tcg_18_diamonds_score_five_a_pair_and_lose_fifteen_when_odd(
    diamonds: int, points: int
) -> None:
    assert score(EXAMPLE, hand(diamond=diamonds)) == points


def test_tcg_18_spoilage_apples_score_nothing_before_instruction_7() -> None:
    assert score_breakdown(EXAMPLE, hand(apple=6)) == [0] * 8
    # with ore, wool and lumber an apple does not make a set: it is no ore in 1-6
    assert score(EXAMPLE, hand(apple=1, wool=1, lumber=1)) == 5


def test_tcg_18_after_spoilage_apples_count_as_ore_for_hoarding_only() -> None:
    # 4 ore + 3 apples: 4 points, then 7 "ore" in instruction 8: -10
    assert score_breakdown(EXAMPLE, hand(ore=4, apple=3)) == [4, 0, 0, 0, 0, 0, 0, -10]
    # 7 apples are 7 ore after instruction 7, and no longer apples: one penalty
    assert score(EXAMPLE, hand(apple=7)) == -10
    assert score(EXAMPLE, hand(apple=6)) == 0


def test_tcg_18_hoarding_checks_all_eight_types_refined_included() -> None:
    assert score(EXAMPLE, hand(steel=7)) == 28 - 10
    assert score(EXAMPLE, hand(steel=7, paper=7, fabric=6)) == 80 - 20
    assert score(EXAMPLE, hand(wool=7, diamond=8)) == 14 + 20 - 20
    assert score(EXAMPLE, hand(ore=6)) == 6


def test_a_hand_exercising_every_example_instruction() -> None:
    h = hand(ore=2, wool=1, lumber=1, apple=5, diamond=3, steel=7)
    assert score_breakdown(EXAMPLE, h) == [2, 2, 3, 5, 28, -10, 0, -20]
    assert score(EXAMPLE, h) == 10


def test_tcg_17_scores_can_be_negative_and_an_empty_hand_scores_zero() -> None:
    assert score(EXAMPLE, hand(diamond=1)) == -15
    assert score(EXAMPLE, {}) == 0


def test_tcg_17_evaluation_is_a_pure_function_of_the_counts() -> None:
    h = hand(apple=7, ore=1)
    before = dict(h)
    assert score(EXAMPLE, h) == score(EXAMPLE, h) == 1 - 10
    assert h == before


def test_tcg_17_instructions_apply_in_numerical_order() -> None:
    early = parse_instructions("1. count apple as ore\n2. points ore 1\n")
    late = parse_instructions("1. points ore 1\n2. count apple as ore\n")
    assert score(early, hand(apple=3)) == 3
    assert score(late, hand(apple=3)) == 0
    assert score(tuple(reversed(early)), hand(apple=3)) == 3


# -- the language -----------------------------------------------------------------


def test_comments_blank_lines_plurals_and_groups() -> None:
    text = """
    # my tournament
    1) Gems: points Diamonds, steels +3

    2. set refined 10
    3. hoard 2 basic -1
    4. pairs apples 4
    """
    found = parse_instructions(text)
    assert canonical_text(found) == (
        "1. Gems: points diamond steel 3\n2. set refined 10\n3. hoard 2 basic -1\n"
        "4. pairs apple 4\n"
    )
    assert found[1].rule == Sets(("steel", "paper", "fabric"), 10, "refined")
    assert found[2].english() == (
        "For each of ore, wool, lumber, apple and diamond, if a hand has 2 or more of that "
        "type, the hand loses 1 point."
    )
    assert found[3].english() == "Each pair of apples in a hand is worth 4 points."
    assert score(found, hand(diamond=2, steel=1, paper=1, fabric=1, apple=3)) == (
        9 + 10 - 2 + 4
    )
    assert canonicalize(canonical_text(found)) == canonical_text(found)


def test_card_types_read_singular_or_plural() -> None:
    assert card_type("Apples") == "apple"
    assert card_type("ores") == "ore"
    assert card_type("fabric") == "fabric"
    assert card_type("gold") is None


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("1. points ore 1\n2. pints wool 2", 2, "unknown rule 'pints'"),
        ("1. points ore 1\n\n# c\n3. points wool 2", 4, "expected instruction 2 here, found 3"),
        ("points ore 1", 1, "starts with its number"),
        ("1. points gold 1", 1, "'gold' is not a card type"),
        ("1. points ore one", 1, "the points must be a whole number"),
        ("1. points ore", 1, "write points TYPES P"),
        ("1. set ore 5", 1, "a set needs at least two card types"),
        ("1. set ore ore 5", 1, "ore is named twice"),
        ("1. pairs diamond 5 even -15", 1, "write pairs TYPE P [odd Q]"),
        ("1. count apple as apple", 1, "apple cannot count as itself"),
        ("1. count apple to ore", 1, "write count TYPE as TYPE"),
        ("1. hoard 0 all -10", 1, "at least 1"),
        ("1. hoard 7 -10", 1, "write hoard N TYPES P"),
        ("1. : points ore 1", 1, "a title before ':' cannot be empty"),
        ("1.", 1, "no rule after its number"),
        ("1. points ore 99999999", 1, "whole number"),
    ],
)
def test_parser_errors_name_the_line_and_the_problem(text: str, line: int, words: str) -> None:
    with pytest.raises(InstructionError) as raised:
        parse_instructions(text)
    assert raised.value.line == line
    assert str(raised.value).startswith(f"line {line}: ")
    assert words in str(raised.value)


def test_a_text_with_no_instructions_is_refused() -> None:
    with pytest.raises(InstructionError, match="there are no instructions"):
        parse_instructions("# only a comment\n\n")


# -- TCG-19: the hash -----------------------------------------------------------


def test_tcg_19_the_digest_is_sha256_of_the_salt_line_and_the_canonical_text() -> None:
    salt = "ab" * 32
    committed = commitment(EXAMPLE_INSTRUCTIONS, salt)
    assert committed == f"salt: {salt}\n{EXAMPLE_INSTRUCTIONS}"
    assert digest(EXAMPLE_INSTRUCTIONS, salt) == hashlib.sha256(committed.encode()).hexdigest()
    assert digest(EXAMPLE_INSTRUCTIONS, "cd" * 32) != digest(EXAMPLE_INSTRUCTIONS, salt)
    # comments and spacing do not change what is committed to
    assert digest("# x\n 1.  points   ore 1 \n", salt) == digest("1. points ore 1\n", salt)
    # A tournament begun before instructions had words committed to its rules
    # alone: its Final Report's text still hashes to what it published.
    old = "1. points ore 1\n2. Spoilage: count apple as ore\n"
    assert commitment(old, salt) == f"salt: {salt}\n{old}"


# -- properties -------------------------------------------------------------------

_types = st.lists(st.sampled_from(CARD_TYPES), min_size=1, max_size=3, unique=True)
_points = st.integers(-50, 50)
_rule_lines = st.one_of(
    st.builds(lambda t, p: f"points {' '.join(t)} {p}", _types, _points),
    st.builds(
        lambda t, p: f"set {' '.join(t)} {p}",
        st.lists(st.sampled_from(CARD_TYPES), min_size=2, max_size=4, unique=True),
        _points,
    ),
    st.builds(lambda t, p, q: f"pairs {t} {p} odd {q}", st.sampled_from(CARD_TYPES), _points,
              _points),
    st.builds(lambda a, b: f"count {a} as {b}" if a != b else f"points {a} 1",
              st.sampled_from(CARD_TYPES), st.sampled_from(CARD_TYPES)),
    st.builds(lambda n, t, p: f"hoard {n} {' '.join(t)} {p}", st.integers(1, 9), _types, _points),
)
_hands = st.dictionaries(st.sampled_from(CARD_TYPES), st.integers(0, 12))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rules=st.lists(_rule_lines, min_size=1, max_size=8), h=_hands)
def test_any_instruction_set_round_trips_and_scores_as_the_sum_of_its_lines(
    rules: list[str], h: dict[str, int]
) -> None:
    text = "".join(f"{n}. {r}\n" for n, r in enumerate(rules, start=1))
    found = parse_instructions(text)
    assert parse_instructions(canonical_text(found)) == found
    before = dict(h)
    parts = score_breakdown(found, h)
    assert len(parts) == len(found)
    assert score(found, h) == sum(parts)
    assert h == before
    assert all(i.english().endswith(".") for i in found)
