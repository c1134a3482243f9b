"""A name reads as one person (issue 34, "names that read as another's"):
normalised, stripped of what no one sees, and refused beside a seated
player's name it reads as, by Unicode TR 39's confusable skeletons."""

from __future__ import annotations

import pytest

from referee.mail.compose import Composer, subject_value
from referee.service.play.player_names import clean, first_alike, reads_as

ALICE = "Alice"
#: Each reads as "Alice" and is not "Alice" as written.
LOOKALIKES = {
    "Cyrillic A": "\u0410lice",
    "zero-width space": "Al\u200bice",
    "fullwidth A": "\uff21lice",
    "right-to-left override": "\u202eecilA",
    "digit one for l": "A1ice",
    "capital I for l": "AIice",
    "zero-width joiner": "Ali\u200dce",
    "soft hyphen": "Al\u00adice",
    "noncharacter": "Al\ufffeice",
}


def test_a_name_is_normalised_to_nfkc() -> None:
    assert clean("\uff21lice") == "Alice"
    assert clean("\ufb01ona") == "fiona"  # the ligature fi
    assert clean("Zoe\u0301") == "Zo\u00e9"


def test_zero_width_and_direction_controls_are_dropped() -> None:
    assert clean("Al\u200bice") == "Alice"
    assert clean("\u202eecilA\u202c") == "ecilA"
    assert clean("\u2067Bob\u2069\u200f") == "Bob"
    assert clean("\ufeffCarol") == "Carol"


def test_control_characters_and_line_breaks_are_one_space() -> None:
    assert clean("Al\x0bice") == "Al ice"
    assert clean("Ann\r\nLee\u2028Smith\x00") == "Ann Lee Smith"
    assert clean("  Ann \t  Lee ") == "Ann Lee"


def test_surrogates_and_noncharacters_are_dropped() -> None:
    assert clean("\ud800Bob\ufffe\uffff") == "Bob"


def test_no_cleaned_name_breaks_a_subject() -> None:
    """A name with a control character made every mail of its game fail
    ("a subject must be one line"), and the pass with it."""
    composer = Composer("referee@club.test", "Referee")
    for raw in ("Al\x0bice", "Bob\x85", "Carol\u2028x", "D\x1bave", "E\x7fve"):
        name = clean(raw)
        assert name.isprintable()
        # A name stored before names were cleaned is a space in the subject.
        for given in (name, raw):
            subject, _ = composer.render("common", "readdressed", {
                "tag": "goofspiel-1", "game_title": "Goofspiel", "name": given,
                "address": "a@club.test"})
            assert subject.startswith("[goofspiel-1] ") and subject.isprintable()
            subject_value(subject)  # raised "a subject must be one line"


@pytest.mark.parametrize("how", sorted(LOOKALIKES))
def test_a_lookalike_reads_as_the_seated_player(how: str) -> None:
    assert reads_as(LOOKALIKES[how], [ALICE, "Bob"]) == ALICE


def test_a_lookalike_in_another_case_reads_as_the_seated_player() -> None:
    assert reads_as("\u0430lice", [ALICE]) == ALICE  # a Cyrillic small a
    assert reads_as("aIice", [ALICE]) == ALICE


def test_a_namesake_as_plainly_written_is_not_refused() -> None:
    """The seat numbers tell two Anns apart ("Ann 2")."""
    assert reads_as("Alice", [ALICE]) is None
    assert reads_as("alice", [ALICE]) is None
    assert reads_as("  Alice ", [ALICE]) is None


def test_names_that_read_differently_pass() -> None:
    assert reads_as("Alicia", [ALICE, "Bob"]) is None
    assert reads_as("Bob Lee", [ALICE, "Bob"]) is None
    assert reads_as("\u0416\u0435\u043d\u044f", [ALICE]) is None  # Женя
    assert reads_as("Alice", []) is None


def test_the_players_of_a_new_game_are_told_apart() -> None:
    assert first_alike(["Alice", "Bob", "\u0410lice"]) == ("Alice", "\u0410lice")
    assert first_alike(["Ann", "Ann"]) == ("Ann", "Ann")
    assert first_alike(["Ann", "Bob", "Carol"]) is None
