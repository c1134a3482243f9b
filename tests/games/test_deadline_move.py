"""How a move the referee made for a silent seat is said
(``Game.deadline_move``, ``DeadlineMove``): the contract's default, which a
game from a package of its own gets unless it says it in its own words."""

from __future__ import annotations

from typing import Any

from referee.games.base import Action, Audience, DeadlineMove, Event, Game, Result


class Sealed(Game[Any]):
    """A game of nothing but the default words."""

    kind = "sealed"
    title = "Sealed"


def test_a_public_move_is_said_as_read_to_the_table_and_the_seat_by_the_house_rule() -> None:
    said = Sealed().deadline_move(None, 1, Action("bid", (5,)),
                                  Result(None, [Event("bid", "Ann bids 5")]))
    assert said.audience == Audience.everyone()
    assert said.told("Ann") == ('No move came from Ann by the deadline: the referee wrote "bid 5" '
                                "for them, by the house rule for silent players.")
    assert said.done_for_you() == ('the referee wrote "bid 5" for you, by the house rule for '
                                   "silent players")


def test_a_move_whose_events_are_secret_is_told_to_the_table_only_as_made() -> None:
    said = Sealed().deadline_move(None, 1, Action("bid", (5,)),
                                  Result(None, [Event("bid", "Ann bids 5", public=False)]))
    assert said.told("Ann") == ("No move came from Ann by the deadline: the referee moved for "
                                "them, by the house rule for silent players.")
    assert said.done_for_you() == ('the referee wrote "bid 5" for you, by the house rule for '
                                   "silent players")


def test_braces_in_a_move_are_said_as_they_are() -> None:
    said = Sealed().deadline_move(None, 1, Action("say", ("{them}",)), Result(None))
    assert said.told("Ann") == ('No move came from Ann by the deadline: the referee wrote '
                                '"say {them}" for them, by the house rule for silent players.')


def test_a_game_says_its_own_words_with_its_rule() -> None:
    said = DeadlineMove("bid", "bid 2 for {them}", rule="as rule 7 says")
    assert said.told("Carol Cooper") == ("No bid came from Carol Cooper by the deadline: the "
                                         "referee bid 2 for them, as rule 7 says.")
    assert said.done_for_you() == "the referee bid 2 for you, as rule 7 says"
