"""Naming a seat as people do (``referee.games.names``), which every game
uses: the whole name, a word of it, the part of the address before the @,
the start of a name, a seat number where a game numbers its seats; an
ambiguous name refused with the candidates, an unknown one with who may be
named."""

from __future__ import annotations

import pytest

from referee.games.base import IllegalAction
from referee.games.names import (
    AmbiguousName,
    Nameable,
    UnknownName,
    find_seat,
    local_part,
    name_words,
    words,
)

CLUB = [
    Nameable(1, "Ann Lee", ("ann",)),
    Nameable(2, "Bob Baker", ("bbaker",)),
    Nameable(3, "Ann Moss", ("amoss",)),
    Nameable(4, "Cat", ("cat",)),
    Nameable(5, "Mary-Jo O'Neil", ("mj",)),
]


@pytest.mark.parametrize(("written", "seat"), [
    ("Bob", 2),  # the first name
    ("bob", 2),
    ("BAKER", 2),  # any whole word of the name
    ("Bob Baker", 2),  # the whole name
    ("  bob   baker ", 2),
    ("'Bob Baker'", 2),
    ("bbaker", 2),  # the part of the address before the @
    ("bbaker@example.org", 2),  # an address, by that part
    ("Bak", 2),  # the start of a word of the name, when it is the only one
    ("Ann Lee", 1),
    ("lee", 1),
    ("Moss", 3),
    ("amoss", 3),
    ("cat", 4),
    ("o'neil", 5),
    ("Mary-Jo", 5),
])
def test_a_seat_is_named_as_people_name_each_other(written: str, seat: int) -> None:
    assert find_seat(written, CLUB) == seat


def test_the_whole_name_wins_over_a_word_of_another() -> None:
    people = [Nameable(1, "Ann"), Nameable(2, "Ann Lee")]
    assert find_seat("ann", people) == 1
    assert find_seat("ann lee", people) == 2
    assert find_seat("lee", people) == 2


def test_a_name_that_fits_two_seats_is_refused_with_both() -> None:
    people = [Nameable(1, "Ann Lee"), Nameable(2, "Ann Moss"), Nameable(3, "Bob")]
    with pytest.raises(AmbiguousName) as refused:
        find_seat("Ann", people)
    assert str(refused.value) == "'Ann' could be Ann Lee or Ann Moss: write the whole name."
    assert isinstance(refused.value, IllegalAction)  # a refusal the player reads


def test_an_alias_and_a_word_of_another_name_are_as_strong() -> None:
    people = [Nameable(1, "Robert Smith", ("bob",)), Nameable(2, "Bob Baker", ("bbaker",))]
    with pytest.raises(AmbiguousName, match=r"^'bob' could be Robert Smith or Bob Baker"):
        find_seat("bob", people)
    assert find_seat("bob baker", people) == 2
    with pytest.raises(AmbiguousName, match=r"^'ann' could be Ann Lee or Ann Moss"):
        find_seat("ann", CLUB)  # Ann Lee's address is ann@: still two Anns


def test_two_seats_of_one_name_are_told_apart_by_number_or_address() -> None:
    twins = [Nameable(1, "Ann", ("ann.a",)), Nameable(2, "Ann", ("ann.b",))]
    with pytest.raises(AmbiguousName, match=r"^'ann' could be Ann or Ann: write the part of "
                                            r"their address before the @\.$"):
        find_seat("ann", twins)
    assert find_seat("ann.b", twins) == 2
    with pytest.raises(AmbiguousName, match=r"^'ann' could be Ann \(seat 1\) or Ann \(seat 2\): "
                                            r"write the seat number\.$"):
        find_seat("ann", twins, numbered=True)


def test_an_unknown_name_is_refused_listing_who_may_be_named() -> None:
    with pytest.raises(UnknownName) as refused:
        find_seat("Zed", CLUB[:4], who="Member")
    assert str(refused.value) == (
        "There is no Member 'Zed'. You may name Ann Lee, Bob Baker, Ann Moss or Cat.")
    with pytest.raises(UnknownName, match=r"^There is no Member 'Zed': there are none yet\.$"):
        find_seat("Zed", [], who="Member")
    with pytest.raises(UnknownName, match=r"^There is no player ''"):
        find_seat("  ", CLUB)


def test_seat_numbers_name_seats_only_where_the_game_numbers_them() -> None:
    assert find_seat("4", CLUB, numbered=True) == 4
    assert find_seat("#4", CLUB, numbered=True) == 4
    assert find_seat("seat 4", CLUB, numbered=True) == 4
    with pytest.raises(UnknownName, match=r"You may name Ann Lee \(seat 1\), Bob Baker \(seat 2\)"):
        find_seat("9", CLUB, numbered=True)
    with pytest.raises(UnknownName):
        find_seat("4", CLUB)


def test_the_words_of_names_and_aliases() -> None:
    assert words("Lee, Ann") == ["lee", "ann"]
    assert words("Mary-Jo O'Neil") == ["mary-jo", "o'neil"]
    assert local_part("BBaker@Example.org") == "bbaker"
    assert local_part("Bob") == ""
    assert name_words(CLUB[:2]) == {"ann", "lee", "bob", "baker", "bbaker"}
