"""The contract every engine owes (``referee.testing``), checked on every
built-in kind, as a game package checks its own: seeded random playouts,
driven the way the service drives a game, to the end, and a whole game by
mail (see ``referee/testing/contract.py`` for what each invariant says).

What the contract cannot say of a kind (its options and seat counts, and
what is secret in its state) is its :class:`~referee.testing.Contract` in
:data:`TABLE`, which reads the state's JSON (``Game.dump``), never its
classes, so a game may reorganise its package freely. The tests at the end
plant leaks and check that the secrets check catches them.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.games import GAMES, KINDS
from referee.games.base import JSON, Action, Audience, Game, Notice, Placing, Result
from referee.games.draws import Draws
from referee.games.loatcg.instructions import parse_instructions
from referee.testing import (
    Contract,
    Findings,
    Knowing,
    Secrets,
    card_names,
    caught,
    check_game,
    deal_again,
    play_by_mail,
    start_by_mail,
)
from referee.testing.contract import text

# -- what the contract cannot say: a row per kind ---------------------------------


def _bidding_secrets(state: JSON) -> Secrets:
    # A sealed bid is a small number, which no value can tell from a score:
    # the noninterference checks (``_bidding_hide``) guard it.
    return {}


def _bidding_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Sealed bids (000 4e, G2-9) are each seat's own until the round
    resolves and takes them out of the packs; a pack is public."""
    s = {**state, "bids": dict(state["bids"])}
    for seat, bid in s["bids"].items():
        pack = s["packs"][int(seat) - 1]
        if int(seat) not in knowing and bid in pack:
            s["bids"][seat] = rng.choice(pack)
    return s


def _spades_secrets(state: JSON) -> Secrets:
    """A hand's unplayed cards (SP-17)."""
    return {seat: card_names(hand) for seat, hand in zip(state["order"], state["hands"],
                                                          strict=True)}


def _spades_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    s = {**state, "hands": [list(hand) for hand in state["hands"]]}
    deal_again(rng, [hand for seat, hand in zip(s["order"], s["hands"], strict=True)
                      if seat not in knowing])
    return s


def _miser_cards(state: JSON) -> dict[int, list[list[Any]]]:
    """Where each seat's secret cards lie (MI-14): its hand and its cards face
    down in a contract or an attack; seat 0, the cards removed unseen (MI-1).
    A contract's card is a list of one, or of none before it is played."""
    seats, turn = state["seats"], state["seats"][state["turn"]]
    places: dict[int, list[list[Any]]] = {0: [state["removed"]]}
    for seat, hand in zip(seats, state["hands"], strict=True):
        places[seat] = [hand]
    if (c := state["contract"]) is not None:
        for seat, card in zip((turn, seats[c["partner"]]), c["cards"], strict=True):
            places[seat].append([card] if card else [])
    if (a := state["attack"]) is not None:
        for seat, cards in zip((turn, seats[a["victim"]]), a["cards"], strict=True):
            places[seat].append(cards)
    return places


def _miser_secrets(state: JSON) -> Secrets:
    # The draw for first player (MI-2) is public and from a deck reshuffled
    # after it, so its cards cannot be told by value from the same cards dealt.
    drawn = {c for row in state["draws"] for c in row if c}
    return {seat: card_names([c for place in places for c in place if c not in drawn])
            for seat, places in _miser_cards(state).items()}


def _miser_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Hands, face-down cards and the removed cards are dealt again among
    themselves; a contract offer made in private (MI-14) is another offer
    if none of the knowing saw it."""
    s = {**state, "removed": list(state["removed"]),
         "hands": [list(hand) for hand in state["hands"]],
         **{k: copy.deepcopy(state[k]) for k in ("contract", "attack")}}
    places = _miser_cards(s)
    deal_again(rng, [p for seat, own in places.items() if seat not in knowing for p in own])
    if (c := s["contract"]) is not None:
        # Its cards were lists of one (``_miser_cards``): write them back.
        parties = (s["seats"][s["turn"]], s["seats"][c["partner"]])
        c["cards"] = [(places[seat][1] or [None])[0] for seat in parties]
        unseen = [p for p, seat in enumerate(s["seats"]) if p != s["turn"] and seat not in knowing]
        if not c["accepted"] and c["audience"] is not None and unseen and not (
                knowing & set(c["audience"])):
            c["partner"] = rng.choice(unseen)
            c["victim"] = rng.choice([p for p in range(len(s["seats"]))
                                      if p not in (s["turn"], c["partner"])])
            c["wagers"] = [rng.randint(1, s["wager_cap"]) for _ in range(2)]
            c["audience"] = sorted({parties[0], s["seats"][c["partner"]]})
    return s


LOATCG_INSTRUCTIONS = """\
1. points ore 1
2. Weavers: points wool 2
3. set ore wool lumber 5
4. Spoilage: count apple as ore
5. Earrings: pairs diamond 5 odd -15
"""
#: Other instructions, for a tournament whose unreported ones are unknown.
LOATCG_OTHERS = ("points lumber 3", "No Hoarding: hoard 7 all -10",
                 "points steel paper fabric 4", "points apple -1", "Glut: hoard 4 wool -6")


def _loatcg_secrets(state: JSON) -> Secrets:
    """Until the Freeze, the salt and every instruction no Round Report
    published are the Dealor's alone (rule 4, TCG-19, TCG-20). A hand's
    counts are guarded by ``_loatcg_hide``."""
    if state["frozen"]:
        return {}
    reported = {r["instruction"] for r in state["reports"]}
    knowers: dict[int, list[int]] = {}
    for m in state["members"]:
        for n in m["known"]:
            knowers.setdefault(n, []).append(m["seat"])
    secrets: Secrets = {0: [frozenset({state["salt"]})]}
    for i in parse_instructions(state["instructions"]):
        # Its words, as reports and reveals quote them, and its rule, as the
        # Final Report writes it: the Dealor's alone, or the one member's who
        # paid to see it (rule 8). One several members know is left unchecked.
        if i.number not in reported and len(knowers.get(i.number, [])) <= 1:
            owner = knowers.get(i.number, [0])[0]
            secrets.setdefault(owner, []).append(frozenset({i.english(), i.rule.canonical()}))
    return secrets


def _loatcg_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Other members' hands and the instructions revealed to them, what a
    private offer none of the knowing saw offers and between whom, the
    Discard Pile as it stands (a secret discard lands there; reports publish
    it), the salt; if no member is among the knowing, also which instruction
    each report showed and what the others say (a member's score, which e
    sees, hangs on them all)."""
    s = {**state, **{k: copy.deepcopy(state[k]) for k in ("members", "offers")},
         "reports": [dict(r) for r in state["reports"]]}
    rounds, seats = s["rounds"], [m["seat"] for m in s["members"]]
    for m in s["members"]:
        if m["seat"] not in knowing:
            m["known"] = sorted(rng.sample(range(1, rounds + 1), rng.randint(0, rounds)))
            if not s["frozen"]:
                m["hand"] = {t: rng.randint(0, 9) for t in m["hand"]}
    if s["frozen"]:  # the Final Report shows the rest (rule 6)
        return s
    s["salt"] = f"{rng.getrandbits(256):064x}"
    s["discard_pile"] = {t: rng.randint(0, 9) for t in s["discard_pile"]}
    unseen = [x for x in seats if x not in knowing]
    for o in s["offers"]:
        if o["audience"] and not knowing & set(o["audience"]) and len(unseen) >= 2:
            o["give"] = {rng.choice(list(s["discard_pile"])): rng.randint(1, 2)}
            o["want"] = {rng.choice(list(s["discard_pile"])): rng.randint(1, 2)}
            o["audience"] = sorted(rng.sample(unseen, 2))
            o["maker"], taker = o["audience"]
            o["takers"] = [taker]
    if not knowing & set(seats):
        bodies = [i.canonical().split(". ", 1)[1]
                  for i in parse_instructions(s["instructions"])]
        reported = {r["instruction"] for r in s["reports"]}
        place = rng.sample(range(rounds), rounds)  # the new place of each instruction
        moved = [""] * rounds
        for n, body in enumerate(bodies, start=1):
            moved[place[n - 1]] = body if n in reported else rng.choice(LOATCG_OTHERS)
        for r in s["reports"]:
            r["instruction"] = place[r["instruction"] - 1] + 1
        s["instructions"] = "".join(f"{n}. {body}\n" for n, body in enumerate(moved, start=1))
    return s


_LOATCG = {"instructions": LOATCG_INSTRUCTIONS}

TABLE: dict[str, Contract] = {
    # Bots play sensibly by default; a setup with ``bot=random`` plays the random ones.
    "goofspiel": Contract(setups=(({}, 2), ({"players": "3", "cards": "8", "tie": "discard"}, 3),
                                  ({"bot": "random"}, 2)),
                          playouts=10, steps=200, secrets=_bidding_secrets, hide=_bidding_hide),
    "pure-skill": Contract(setups=(({}, 3), ({"players": "2", "prize_order": "descending"}, 2),
                                   ({"bot": "random"}, 3)),
                           playouts=8, steps=200, secrets=_bidding_secrets, hide=_bidding_hide,
                           by_mail=({}, 2, 1)),
    "spades": Contract(setups=(({"target": "200"}, 4), ({"target": "200", "bot": "random"}, 4)),
                       playouts=6, steps=3000, secrets=_spades_secrets, hide=_spades_hide,
                       by_mail=({"target": "100"}, 1, 3)),
    "miser": Contract(setups=(({}, 3), ({"pennies": "12"}, 5), ({"pennies": "8", "wager": "2"}, 8),
                              ({"bot": "random"}, 3)),
                      playouts=12, steps=3000, secrets=_miser_secrets, hide=_miser_hide,
                      by_mail=({"pennies": "8"}, 2, 1)),
    "loatcg": Contract(setups=(({**_LOATCG, "report_days": "4"}, 2), (_LOATCG, 0),
                               ({**_LOATCG, "report_days": "5"}, 4),
                               ({**_LOATCG, "bot": "random"}, 2)),
                       playouts=8, steps=1500, secrets=_loatcg_secrets, hide=_loatcg_hide),
}


# -- the tests --------------------------------------------------------------------


def row(kind: str) -> Contract:
    if kind not in TABLE:
        pytest.fail(f"{kind} is registered but has no row in TABLE: say there how to set up "
                    "its playouts and what is secret in its state")
    return TABLE[kind]


@functools.cache
def findings(kind: str) -> Findings:
    """Every playout of ``kind``, run once for all the tests."""
    return check_game(GAMES[kind], row(kind))


#: Defects the contract found, by invariant and kind: each case fails now
#: (``xfail(strict=True)``), and must pass once the engine is fixed.
DEFECTS: dict[tuple[str, str], str] = {}


def kinds(invariant: str) -> list[Any]:
    return [pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=reason))
            if (reason := DEFECTS.get((invariant, kind))) else kind for kind in KINDS]


def assert_holds(invariant: str, kind: str) -> None:
    found = findings(kind).found[invariant]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("kind", kinds("replay"))
def test_replaying_the_seed_and_action_log_gives_the_same_state(kind: str) -> None:
    assert_holds("replay", kind)


@pytest.mark.parametrize("kind", kinds("pending"))
def test_pending_is_empty_exactly_when_the_game_is_over(kind: str) -> None:
    assert_holds("pending", kind)


@pytest.mark.parametrize("kind", kinds("legal"))
def test_every_timeout_and_bot_action_of_a_pending_obligation_applies(kind: str) -> None:
    assert_holds("legal", kind)


@pytest.mark.parametrize("kind", kinds("secrets"))
def test_no_view_or_notice_shows_a_secret_to_anyone_it_is_not_for(kind: str) -> None:
    assert_holds("secrets", kind)


@pytest.mark.parametrize("kind", kinds("pure"))
def test_apply_never_changes_the_state_it_is_given(kind: str) -> None:
    assert_holds("pure", kind)


@pytest.mark.parametrize("kind", kinds("ends"))
def test_every_playout_ends_within_its_bound(kind: str) -> None:
    assert_holds("ends", kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_whole_game_plays_by_mail(kind: str, tmp_path: Path) -> None:
    """The kit's game by Maildir, as a game package's tests run it: the
    game ends, no mail to a player nor public page shows another seat's
    secret, and the audit holds."""
    played = play_by_mail(GAMES[kind], row(kind), tmp_path)
    assert not played.problems, "\n".join(played.problems)
    assert played.status != "active" and played.moves_written


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_game_starts_by_mail_from_a_table_filled_by_joins(kind: str, tmp_path: Path) -> None:
    """The kit's start by mail, as a game package's tests run it: ``new
    KIND`` opens a table, the joins fill it, and the game starts with them."""
    started = start_by_mail(GAMES[kind], row(kind), tmp_path)
    assert not started.problems, "\n".join(started.problems)
    assert started.game.startswith(f"{kind}-")


def test_every_row_of_the_table_is_a_registered_kind() -> None:
    assert set(TABLE) <= set(KINDS), f"rows for no registered kind: {set(TABLE) - set(KINDS)}"


# -- the secrets check can fail ---------------------------------------------------


def planted(kind: str, monkeypatch: pytest.MonkeyPatch, method: str,
            leaky: Callable[[Game[Any], Callable[..., Any]], Callable[..., Any]]) -> Game[Any]:
    """The registered engine of ``kind`` with ``method`` made leaky."""
    engine = copy.copy(GAMES[kind])
    monkeypatch.setattr(engine, method, leaky(engine, getattr(engine, method)))
    return engine


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_views_that_show_the_whole_state(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose view for the public (and for each seat) carries its
    whole dumped state, hands, bids and hidden text included."""
    def leaky(engine: Game[Any], view: Callable[..., Any]) -> Callable[..., Any]:
        return lambda state, seat: {**view(state, seat), "leak": engine.dump(state)}

    assert caught(planted(kind, monkeypatch, "view", leaky), row(kind)), f"{kind}: nothing found"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_a_status_that_tells_the_whole_state(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose ``status`` for everyone tells its whole state in words:
    the hands, the sealed bids, the current Hand Scores."""
    def leaky(engine: Game[Any], status: Callable[..., Any]) -> Callable[..., Any]:
        return lambda state: f"{status(state)}\n{text(engine.dump(state))}"

    assert caught(planted(kind, monkeypatch, "status", leaky), row(kind)), f"{kind}: nothing found"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_a_step_that_shows_everyone_the_movers_view(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game that also mails everyone, at each move, what the mover alone
    may see: a Spades hand, a sealed bid, a member's hand."""
    def leaky(engine: Game[Any], apply: Callable[..., Any]) -> Callable[..., Any]:
        def leaking(state: Any, seat: int, action: Action, draws: Draws) -> Result[Any]:
            result: Result[Any] = apply(state, seat, action, draws)
            leak = Notice(Audience.everyone(), "leak", engine.view(result.state, seat))
            return dataclasses.replace(result, notices=[*result.notices, leak])
        return leaking

    assert caught(planted(kind, monkeypatch, "apply", leaky), row(kind)), f"{kind}: nothing found"


@pytest.mark.parametrize("kind", ["goofspiel", "spades"])
def test_the_pending_check_catches_placings_that_leave_a_seat_out(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose result, for the club's standings, places only its
    first seat's side, and does so before the game is over."""
    def partial(engine: Game[Any], placings: Callable[..., Any]) -> Callable[..., Any]:
        return lambda state: [Placing((1,), 1)]

    found = caught(planted(kind, monkeypatch, "placings", partial), row(kind), "pending")
    assert any("placings" in line for line in found), f"{kind}: nothing found"
