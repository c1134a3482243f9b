"""Miser's rules as data and pure functions: the state, card values, the
draw, who owes which step, and how a contract, an attack or a bid for the
centre resolves (rule text 004, rulings MI-1 … MI-15). :mod:`referee.games.miser`
is the engine that plays them by mail.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from referee.games.base import JSON, Audience, IllegalAction
from referee.games.cards import Card, full_deck, rank_value_ace_high

PENNIES = 20  # "20 pennies for each player"
WAGER_CAP = 3  # "Only three pennies may be wagered by a player in any turn"
PASS_COST = 3  # "she must put 3 pennies into the centre"
MIN_PLAYERS, MAX_PLAYERS = 3, 8
DECK_SIZE = 52

TURN = "turn"
OFFER = "offer"
CONTRACT = "contract"
ATTACK = "attack"
AUCTION = "auction"
OVER = "over"


# -- state --------------------------------------------------------------------


@dataclass
class Contract:
    """A contract of the turn player (``by``) and a partner against a victim."""

    partner: int
    victim: int
    wagers: list[int]  # the turn player's, the partner's
    audience: list[int] | None  # the seats that saw the offer; None: public
    accepted: bool = False
    stake: int = 0  # what the victim put in (MI-11: all she had, if short)
    cards: list[str | None] = field(default_factory=lambda: [None, None])  # face down


@dataclass
class Attack:
    """The turn player attacks a victim: both put pennies in, then cards face down."""

    victim: int
    wager: int
    stake: int
    cards: list[list[str]] = field(default_factory=lambda: [[], []])  # attacker's, victim's
    flipped: list[bool] = field(default_factory=lambda: [False, False])  # since the last card
    step: int = 0  # cards face down so far, both sides


@dataclass
class Bid:
    """One bidder's face-up card and the pennies she has bid (still in her purse)."""

    player: int
    card: str
    pennies: int


@dataclass
class Auction:
    """A bid for the centre, opened by the turn player."""

    bids: list[Bid]
    done: list[int] = field(default_factory=list)  # bidders done since the last bid or raise
    declined: list[int] = field(default_factory=list)  # others who said they will not join
    step: int = 1  # bids and raises so far


@dataclass
class MiserState:
    """One game of Miser. Player indexes follow the seat order."""

    seats: list[int]  # seat positions in seat order
    names: list[str]
    pennies_each: int
    wager_cap: int
    first: int  # who won the draw (MI-2)
    draws: list[list[str | None]]  # each round of the draw: a card per player, None if out
    removed: list[str]  # face down, out of the game (MI-1)
    hands: list[list[str]]
    pennies: list[int]
    turn: int
    centre: int = 0
    slush: list[str] = field(default_factory=list)  # cards played and shown
    turn_number: int = 1
    offers: int = 0  # contract offers made this turn
    contract: Contract | None = None
    attack: Attack | None = None
    auction: Auction | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # one report a resolved turn
    over: bool = False
    winners: list[int] = field(default_factory=list)  # one, or several on a tie
    knocked_out: list[int] = field(default_factory=list)


def evolve_state(state: MiserState) -> MiserState:
    """A copy of ``state`` to change: lists and the exchange are copied; the
    reports of resolved turns are never changed once made, so they are shared."""
    changes: dict[str, Any] = {
        f.name: [list(x) if isinstance(x, list) else x for x in value]
        for f in fields(state)
        if isinstance(value := getattr(state, f.name), list)
    }
    for name in (CONTRACT, ATTACK, AUCTION):
        changes[name] = copy.deepcopy(getattr(state, name))
    return replace(state, **changes)


# -- cards --------------------------------------------------------------------


def card_value(code: str) -> int:
    """MI-13: as in Blackjack, 10 = J = Q = K, and an ace is always 11."""
    rank = code[:-1]
    if rank == "A":
        return 11
    if rank in ("K", "Q", "J"):
        return 10
    return int(rank)


def card_text(code: str) -> str:
    """``"QS"`` as players read it: ``"Q♠"``."""
    return Card(code[:-1], code[-1]).symbol


def sort_hand(cards: Sequence[str]) -> list[str]:
    """Highest value first, then by rank and suit."""
    return sorted(cards, key=lambda c: (-card_value(c), -rank_value_ace_high(c[:-1]), c[-1]))


def hand_text(cards: Sequence[str]) -> str:
    return " ".join(card_text(c) for c in sort_hand(cards)) or "(no cards)"


def shown_cards(cards: Sequence[str]) -> list[dict[str, JSON]]:
    return [{"card": c, "text": card_text(c), "value": card_value(c)} for c in cards]


# -- the draw (MI-2) ------------------------------------------------------------


def draw_for_first(n: int, rng: random.Random) -> tuple[int, list[list[str | None]]]:
    """Each player draws a card; the highest rank (ace high) goes first, and
    the players tied for highest draw again from what is left (from a fresh
    deck, should it run out)."""
    deck: list[str] = []
    drawing = list(range(n))
    rounds: list[list[str | None]] = []
    while True:
        if len(deck) < len(drawing):
            deck = [str(c) for c in full_deck()]
            rng.shuffle(deck)
        row: list[str | None] = [None] * n
        for p in drawing:
            row[p] = deck.pop()
        rounds.append(row)
        best = max(rank_value_ace_high(str(row[p])[:-1]) for p in drawing)
        drawing = [p for p in drawing if rank_value_ace_high(str(row[p])[:-1]) == best]
        if len(drawing) == 1:
            return drawing[0], rounds


# -- resolutions ------------------------------------------------------------------


def resolve_contract(s: MiserState) -> dict[str, Any]:
    """MI-6: equal values split the whole centre, the odd penny staying;
    otherwise the higher card takes all of it."""
    c = s.contract
    assert c is not None and c.cards[0] is not None and c.cards[1] is not None
    by, partner = s.turn, c.partner
    cards = [c.cards[0], c.cards[1]]
    values = [card_value(x) for x in cards]
    pot = s.centre
    if values[0] == values[1]:
        share = pot // 2
        s.pennies[by] += share
        s.pennies[partner] += share
        s.centre = pot - 2 * share
        takers = [s.names[by], s.names[partner]]
        outcome = "split"
    else:
        winner = by if values[0] > values[1] else partner
        s.pennies[winner] += pot
        s.centre = 0
        takers = [s.names[winner]]
        outcome = "won"
        share = pot
    s.slush.extend(cards)
    return {
        "kind": "contract",
        "by": s.names[by],
        "partner": s.names[partner],
        "victim": s.names[c.victim],
        "wagers": list(c.wagers),
        "stake": c.stake,
        "cards": [
            {"name": s.names[p], **shown_cards([x])[0]}
            for p, x in zip((by, partner), cards, strict=True)
        ],
        "pot": pot,
        "outcome": outcome,
        "takers": takers,
        "share": share,
        "left": s.centre,
    }


def resolve_attack(s: MiserState) -> dict[str, Any]:
    """MI-7: the higher total takes the whole centre; equal totals lose their
    cards and the pennies stay. MI-12: no card is a total of 0."""
    a = s.attack
    assert a is not None
    sides = [s.turn, a.victim]
    totals = [sum(card_value(x) for x in cards) for cards in a.cards]
    pot = s.centre
    if totals[0] == totals[1]:
        taker = None
    else:
        taker = sides[0] if totals[0] > totals[1] else sides[1]
        s.pennies[taker] += pot
        s.centre = 0
    for cards in a.cards:
        s.slush.extend(cards)
    return {
        "kind": "attack",
        "attacker": s.names[sides[0]],
        "victim": s.names[sides[1]],
        "wager": a.wager,
        "stake": a.stake,
        "sides": [
            {"name": s.names[p], "cards": shown_cards(cards), "total": total}
            for p, cards, total in zip(sides, a.cards, totals, strict=True)
        ],
        "pot": pot,
        "taker": s.names[taker] if taker is not None else None,
        "left": s.centre,
    }


def resolve_auction(s: MiserState) -> dict[str, Any]:
    """MI-8, MI-9. With one highest bid, its bidder takes the centre as it
    stood before the bids; then she and the second-highest bidder(s) pay
    their bids into it, and the rest keep theirs. With a tie for highest,
    nobody takes the centre; the tied bidders and the next-highest bidder(s)
    pay their bids into it."""
    au = s.auction
    assert au is not None
    amounts = sorted({b.pennies for b in au.bids}, reverse=True)
    top = [b.player for b in au.bids if b.pennies == amounts[0]]
    second = [b.player for b in au.bids if len(amounts) > 1 and b.pennies == amounts[1]]
    pot = s.centre
    winner = top[0] if len(top) == 1 else None
    if winner is not None:
        s.pennies[winner] += pot
        s.centre = 0
        payers = [winner, *second]
    else:
        payers = [*top, *second]
    outcome: dict[int, str] = {}
    for b in au.bids:
        if b.player in payers:
            s.pennies[b.player] -= b.pennies
            s.centre += b.pennies
            outcome[b.player] = "paid"
        else:
            outcome[b.player] = "kept"
        s.slush.append(b.card)
    return {
        "kind": "auction",
        "opener": s.names[s.turn],
        "bids": [
            {
                "name": s.names[b.player],
                **shown_cards([b.card])[0],
                "pennies": b.pennies,
                "outcome": outcome[b.player],
            }
            for b in au.bids
        ],
        "pot": pot,
        "winner": s.names[winner] if winner is not None else None,
        "top_tie": [s.names[p] for p in top] if winner is None else [],
        "second": [s.names[p] for p in second],
        "left": s.centre,
    }


def report_text(s: MiserState, report: Mapping[str, Any]) -> str:
    """One line for the history of a resolved contract, attack or auction."""
    if report["kind"] == "contract":
        shown = ", ".join(f"{c['name']} {c['text']}" for c in report["cards"])
        if report["outcome"] == "split":
            how = f"equal values: {' and '.join(report['takers'])} take {report['share']} each"
        else:
            how = f"{report['takers'][0]} takes {pennies_text(report['pot'])}"
        return f"Contract against {report['victim']}: {shown}; {how}."
    if report["kind"] == "attack":
        shown = "; ".join(
            f"{side['name']} {' '.join(c['text'] for c in side['cards']) or 'no card'} "
            f"= {side['total']}"
            for side in report["sides"]
        )
        if report["taker"] is None:
            return f"Attack on {report['victim']}: {shown}; a tie, the pennies stay."
        return f"Attack on {report['victim']}: {shown}; {report['taker']} takes {report['pot']}."
    shown = ", ".join(f"{b['name']} {b['pennies']} ({b['text']})" for b in report["bids"])
    if report["winner"] is None:
        how = f"a tie for highest: nobody takes the centre of {report['pot']}"
    else:
        how = f"{report['winner']} takes the centre of {report['pot']}"
    return f"Bids for the centre: {shown}; {how}; the centre now holds {report['left']}."


# -- who owes what ------------------------------------------------------------------


OWED_TEXT = {
    "turn": "a turn (pass, contract, attack or bid)",
    "answer": "an answer to a contract offer",
    "contract_card": "a card face down for the contract",
    "attack_first": "a first card face down for the attack",
    "attack": "a card face down, or flip",
    "auction_bid": "a raise, or done",
    "auction_join": "a bid to join, or done",
}


def stage_of(s: MiserState) -> str:
    if s.over:
        return OVER
    if s.contract is not None:
        return CONTRACT if s.contract.accepted else OFFER
    if s.attack is not None:
        return ATTACK
    if s.auction is not None:
        return AUCTION
    return TURN


def is_bidder(s: MiserState, player: int) -> bool:
    return s.auction is not None and any(b.player == player for b in s.auction.bids)


def owed_step(s: MiserState, player: int) -> str | None:
    """The step ``player`` owes now, if any (one at a time)."""
    stage = stage_of(s)
    if stage == TURN:
        return "turn" if player == s.turn else None
    if stage == OFFER:
        assert s.contract is not None
        return "answer" if player == s.contract.partner else None
    if stage == CONTRACT:
        c = s.contract
        assert c is not None
        for p, card in zip((s.turn, c.partner), c.cards, strict=True):
            if p == player and card is None:
                return "contract_card"
        return None
    if stage == ATTACK:
        a = s.attack
        assert a is not None
        if player == s.turn and not a.cards[0]:
            return "attack_first"
        if player in (s.turn, a.victim) and a.cards[0]:
            side = attack_side(s, player)
            if not a.flipped[side] and s.hands[player]:
                return "attack"
        return None
    if stage == AUCTION:
        au = s.auction
        assert au is not None
        if is_bidder(s, player):
            return None if player in au.done else "auction_bid"
        if s.hands[player] and player not in au.declined:
            return "auction_join"
    return None


def pending_key(s: MiserState, player: int, owes: str) -> str:
    """The pending key: the exchange (by turn number) and the step, so each
    step has its own deadline. A second contract offer in a turn is
    ``contract-7.2``, and the turn after it ``turn-7.3``."""
    t = s.turn_number
    offer = f"contract-{t}" + (f".{s.offers}" if s.offers > 1 else "")
    if owes == "turn":
        return f"turn-{t}" + (f".{s.offers + 1}" if s.offers else "")
    if owes == "answer":
        return f"{offer}:accept"
    if owes == "contract_card":
        return f"{offer}:card:{s.seats[player]}"
    if owes in ("attack_first", "attack"):
        assert s.attack is not None
        return f"attack-{t}:{s.attack.step}"
    assert s.auction is not None
    return f"auction-{t}:" + ("join" if owes == "auction_join" else str(s.auction.step))


def attack_settled(s: MiserState) -> bool:
    """Both sides have said flip since the last card; a side holding no more
    cards can only flip, so it counts as flipped."""
    a = s.attack
    assert a is not None
    return bool(a.cards[0]) and all(
        a.flipped[i] or not s.hands[p] for i, p in enumerate((s.turn, a.victim))
    )


def contract_side(s: MiserState, player: int) -> int:
    c = s.contract
    assert c is not None
    if player == s.turn:
        return 0
    if player == c.partner:
        return 1
    raise IllegalAction("You are not a partner in this contract.")


def attack_side(s: MiserState, player: int) -> int:
    a = s.attack
    assert a is not None
    if player == s.turn:
        return 0
    if player == a.victim:
        return 1
    raise IllegalAction(
        f"This attack is between {s.names[s.turn]} and {s.names[a.victim]}; you have no part in it."
    )


def sees_offer(s: MiserState, player: int) -> bool:
    c = s.contract
    return c is not None and (c.audience is None or s.seats[player] in c.audience)


def offer_audience(s: MiserState) -> Audience:
    c = s.contract
    assert c is not None
    return Audience.everyone() if c.audience is None else Audience.only(*c.audience)


def now_text(s: MiserState) -> str:
    stage = stage_of(s)
    turn = s.names[s.turn]
    if stage == OVER:
        return "The game is over."
    if stage == CONTRACT:
        assert s.contract is not None
        return (f"Now {turn} and {s.names[s.contract.partner]} each put a card face down "
                "for their contract.")  # fmt: skip
    if stage == ATTACK:
        assert s.attack is not None
        return f"Now {turn} is attacking {s.names[s.attack.victim]}."
    if stage == AUCTION:
        return "Now the players are bidding for the centre."
    return f"It is {turn}'s turn."


def pennies_text(n: int) -> str:
    return f"{n} penny" if n == 1 else f"{n} pennies"


def cards_text(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def result_text(s: MiserState) -> str:
    if not s.over:
        return "no result yet."
    out = " and ".join(s.names[p] for p in s.knocked_out)
    out += " is" if len(s.knocked_out) == 1 else " are"
    standing = ", ".join(f"{s.names[p]} {s.pennies[p]}" for p in range(len(s.names)))
    if len(s.winners) == 1:
        w = s.winners[0]
        return f"{out} out of pennies; {s.names[w]} wins with {s.pennies[w]} ({standing})."
    tied = " and ".join(s.names[p] for p in s.winners)
    return (
        f"{out} out of pennies; {tied} tie for most with {s.pennies[s.winners[0]]} each, "
        f"so there is no single winner ({standing})."
    )
