"""The sensible bot of Miser (rule text 004): it counts its cards and the
pennies at stake.

It sees what its seat may see (:class:`MiserView`: its own hand and cards
face down, everyone's pennies and card counts, the centre, the cards shown
in the slush pile, the bids, and a contract offer only if it saw it; never
another hand or another face-down card). On its turn it attacks a player
with no cards left (who cannot answer: rule text, "Strategy"), takes out a
contract when it holds a card high enough to win it, bids for the centre
when the centre is worth a low card and a penny, attacks with strong cards,
and passes only with nothing better. It defends an attack when its cards
can win it, accepts a contract when its cards make it pay, and never ends
the game by knocking a player out unless it then has the most pennies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from referee.games.base import Action
from referee.games.cards import full_deck
from referee.games.draws import Rng

#: A card this high (a ten or a court card, or an ace) wins most contracts
#: and most one-card attacks.
HIGH = 10
#: A card this low is cheap to leave face up on a bid for the centre.
LOW = 5
#: The centre must hold this much before a bid for it is worth a card.
CENTRE_WORTH = 5


@dataclass(frozen=True)
class ContractSeen:
    """A contract offer the seat saw: the partner, the victim, the wagers
    (the turn player's, the partner's)."""

    partner: int
    victim: int
    wagers: tuple[int, int]


@dataclass(frozen=True)
class AttackSeen:
    """An attack as the seat sees it: the sides, how many cards each has
    down (public, MI-7) and its own face-down cards if it is a side."""

    victim: int
    counts: tuple[int, int]
    mine: tuple[str, ...]


@dataclass(frozen=True)
class MiserView:
    """What one player knows (MI-14): her hand, and the public table."""

    me: int
    names: tuple[str, ...]
    hand: tuple[str, ...]
    pennies: tuple[int, ...]
    cards: tuple[int, ...]  # how many cards each player holds
    centre: int
    wager_cap: int
    turn: int
    owes: str
    offers: int  # contract offers made this turn
    slush: tuple[str, ...]
    contract: ContractSeen | None
    attack: AttackSeen | None
    #: The bids for the centre: (player, pennies), face-up cards in the slush.
    bids: tuple[tuple[int, int], ...]


def value(card: str) -> int:
    """Blackjack values, an ace always 11 (MI-13)."""
    rank = card[:-1]
    return 11 if rank == "A" else 10 if rank in ("K", "Q", "J") else int(rank)


def by_value(cards: Sequence[str]) -> list[str]:
    """Cards lowest value first (ties in card order, so a move is stable)."""
    return sorted(cards, key=lambda c: (value(c), c))


def unknown_mean(view: MiserView) -> float:
    """The mean value of a card the seat has not seen: what another player
    may hold or have face down."""
    seen = set(view.slush) | set(view.hand) | set(view.attack.mine if view.attack else ())
    rest = [value(str(c)) for c in full_deck() if str(c) not in seen]
    return sum(rest) / len(rest) if rest else 7.0


def choose_move(view: MiserView, rng: Rng) -> Action:
    """The seat's move for the step it owes."""
    step = {
        "turn": _turn,
        "answer": _answer,
        "contract_card": _contract_card,
        "attack_first": _attack_card,
        "attack": _attack_card,
        "auction_join": _auction,
        "auction_bid": _auction,
    }[view.owes]
    return step(view, rng)


# -- the turn ------------------------------------------------------------------------


def _turn(view: MiserView, rng: Rng) -> Action:
    me, hand = view.me, by_value(view.hand)
    if not hand:
        return Action("pass")
    others = [p for p in range(len(view.names)) if p != me]
    wager = min(view.wager_cap, view.pennies[me])
    bare = [p for p in others if not view.cards[p] and _may_knock(view, p, wager)]
    if bare:
        victim = max(bare, key=lambda p: (view.pennies[p], -p))
        return Action("attack", (view.names[victim], wager))
    high = [c for c in hand if value(c) >= HIGH]
    partners = [p for p in others if view.cards[p] and view.pennies[p] > 1]
    if high and view.offers == 0 and partners:
        # The partner most likely to hold less; the victim the richest other.
        partner = min(partners, key=lambda p: (view.pennies[p], rng.random()))
        victims = [p for p in others if p != partner and _may_knock(view, p, 2 * view.wager_cap)]
        if victims:
            victim = max(victims, key=lambda p: (view.pennies[p], rng.random()))
            theirs = min(view.wager_cap, view.pennies[partner] - 1)
            return Action("contract", (view.names[partner], view.names[victim], 1, theirs))
    if view.centre >= CENTRE_WORTH and value(hand[0]) <= LOW:
        return Action("bid", (hand[0], 1))
    if len(high) >= 2 and view.pennies[me] > wager:
        targets = [p for p in others if _may_knock(view, p, wager)]
        if targets:
            victim = max(targets, key=lambda p: (view.pennies[p] - 3 * view.cards[p],
                                                 rng.random()))
            return Action("attack", (view.names[victim], wager))
    if view.centre >= CENTRE_WORTH:
        return Action("bid", (hand[0], 1))
    if view.pennies[me] <= 3:
        # A pass would put her last pennies in and end the game against her.
        targets = [p for p in others if _may_knock(view, p, wager)]
        if targets:
            return Action("attack", (view.names[max(targets, key=lambda p: view.pennies[p])],
                                     wager))
    return Action("pass")


def _may_knock(view: MiserView, victim: int, stake: int) -> bool:
    """Taking ``stake`` from ``victim`` ends the game only if the seat then
    has the most pennies (MI-10): else the victim must keep a penny."""
    if view.pennies[victim] > stake:
        return True
    gain = view.centre + min(stake, view.pennies[victim])
    after = [v for p, v in enumerate(view.pennies) if p not in (view.me, victim)]
    return view.pennies[view.me] + gain > max(after, default=0)


# -- a contract ----------------------------------------------------------------------


def _answer(view: MiserView, rng: Rng) -> Action:
    """Accept when the seat's best card should beat or match the turn
    player's, and it can pay its wager and keep a penny."""
    c = view.contract
    if c is None:
        return Action("decline")
    best = max((value(x) for x in view.hand), default=0)
    wager = c.wagers[1]
    if best >= HIGH and view.pennies[view.me] > wager:
        return Action("accept")
    return Action("decline")


def _contract_card(view: MiserView, rng: Rng) -> Action:
    """The highest card: the higher card takes the whole centre (MI-6)."""
    return Action("down", (by_value(view.hand)[-1],))


# -- an attack -----------------------------------------------------------------------


def _attack_card(view: MiserView, rng: Rng) -> Action:
    """Put cards down until the seat's total should beat the other side's,
    as many as the centre is worth; else flip. A victim with no card that
    can win leaves the attack unanswered and keeps her cards."""
    a = view.attack
    assert a is not None
    side = 0 if view.me == view.turn else 1
    mine_total = sum(value(c) for c in a.mine)
    theirs = a.counts[1 - side]
    hand = by_value(view.hand)
    if side == 0 and theirs == 0 and not a.mine and not view.cards[a.victim]:
        return Action("down", (hand[0],))  # an undefended victim: any card wins (MI-12)
    expect = theirs * max(unknown_mean(view), 8.0)
    need = expect + 1 - mine_total
    if (side == 1 or a.mine) and need <= 0:
        return Action("flip")
    budget = 1 + view.centre // 6 - len(a.mine)
    if not hand or budget <= 0:
        return Action("flip") if a.mine or side == 1 else Action("down", (hand[0],))
    enough = [c for c in hand if value(c) >= need]
    if enough:
        return Action("down", (enough[0],))
    if side == 1 and not a.mine and (value(hand[-1]) < HIGH or budget < 2):
        return Action("flip")  # not worth a fight it cannot win
    return Action("down", (hand[-1],))


# -- a bid for the centre ------------------------------------------------------------


def _auction(view: MiserView, rng: Rng) -> Action:
    """Join or raise while the centre is worth more than the bid: a bid
    the seat may not top it leaves where it is (MI-8)."""
    top = max((p for _, p in view.bids), default=0)
    mine = next((p for who, p in view.bids if who == view.me), None)
    others_top = max((p for who, p in view.bids if who != view.me), default=0)
    purse = view.pennies[view.me]
    if mine is None:
        hand = by_value(view.hand)
        if hand and view.centre >= CENTRE_WORTH and value(hand[0]) <= LOW \
                and top + 1 <= min(purse - 1, view.centre - 2):
            return Action("bid", (hand[0], top + 1))
        return Action("done")
    if mine <= others_top and others_top + 1 <= min(purse - 1, view.centre - 2):
        return Action("raise", ("to", others_top + 1))
    return Action("done")
