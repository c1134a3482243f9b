"""The sensible bot of the sealed-bid games (Goofspiel, Game of Pure Skill):
it weighs the prize against the cards left.

It sees what its seat may see (:class:`BidderView`: the prize, the carried
pot, the prizes still in the referee's pack, its own pack and the others'
packs, which are public, never a sealed bid) and scores each card it could
bid, taking each other bid as any card of that seat's pack, alike. Against
one other player with a few cards (Goofspiel's six) it looks ahead to the
end of the game and bids the card that wins most often; otherwise it
weighs what the round is worth if the card wins, ties or loses, plus its
share of what is still to play for with the cards it would keep. A little
noise from the seed's draws keeps it from being read like a table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.games.bidding.openings import OPENINGS
from referee.games.draws import Rng

#: The noise added to each card's worth, as a share of the round's prize:
#: enough to part near-equal cards, never to pick a bad one.
NOISE = 0.15
#: The most cards a seat may hold for the look-ahead to the end (two
#: players): six cards are some 50,000 positions, worked out once.
LOOKAHEAD_CARDS = 6
EXACT_CARRY = 4
#: The look-ahead picks at random among the cards within this many points
#: of the best: a bot that always bid the same card for the same prize
#: would tie every round with another bot, and be read by a person.
SLACK = 0.3


@dataclass(frozen=True)
class BidderView:
    """What a seat knows when it bids: nothing another seat keeps sealed."""

    prize: int
    carry: tuple[int, ...]
    #: The prizes not yet drawn (the referee's pack is public, 000 rule 4d).
    pot: tuple[int, ...]
    own: tuple[int, ...]
    #: Every other seat's pack as it stands: public, since bids are shown
    #: once a round resolves (000 rule 4g). A bid sealed this round is still
    #: in its pack here.
    others: tuple[tuple[int, ...], ...]
    #: The winner takes the bid cards too (Goofspiel, G2-1).
    take_bids: bool
    #: A tie carries the pot to the next round (Goofspiel, G2-2), else the
    #: prize is discarded (000 rule 4f).
    carries: bool
    #: The seat's total less the other's, with two players (the take piles
    #: are public); 0 with more.
    lead: int = 0


def choose_bid(view: BidderView, rng: Rng) -> int:
    """The card to bid: with one other player and few cards, one of those
    that win most often (:func:`chances`); else the one worth most, by
    :func:`worth`, with noise."""
    if len(view.others) == 1 and len(view.own) <= LOOKAHEAD_CARDS:
        odds = {c: chances(view, c) for c in sorted(view.own)}
        best = max(odds.values())
        return rng.choice([c for c, p in odds.items() if p >= best - SLACK])
    noisy = {c: worth(view, c) + NOISE * view.prize * rng.random() for c in sorted(view.own)}
    return max(noisy, key=lambda c: noisy[c])


def chances(view: BidderView, card: int) -> float:
    """What bidding ``card`` is worth against one other player who bids any
    card of eir pack, alike, now and in every round to come, with each
    prize to come drawn at random: the total the seat can expect to end
    ahead by, bidding best in each round to come. A pot carried by a tie
    is counted as won by the side with the more points left in hand, in
    proportion (looking ahead through carries would take a hundred times
    longer, for little)."""
    (other,) = view.others
    rules = (view.take_bids, view.carries)
    if _is_opening(view):
        # The first round of a game of six cards: worked out once per
        # install (scripts/bidding_openings.py), not in every new process.
        shipped = OPENINGS.get((*rules, view.prize))
        if shipped is not None:
            return shipped[card - 1]
    return _bid_margin(rules, view.own, other, view.pot, view.prize, sum(view.carry), card)


Rules = tuple[bool, bool]
#: Both packs whole in a game of :data:`LOOKAHEAD_CARDS` cards.
OPENING_PACK = tuple(range(1, LOOKAHEAD_CARDS + 1))


def _is_opening(view: BidderView) -> bool:
    """Whether ``view`` is the first round of a two-player game of six
    cards: both packs whole, nothing carried, the pot all but the prize."""
    return (view.own == OPENING_PACK and view.others == (OPENING_PACK,) and not view.carry
            and view.pot == tuple(c for c in OPENING_PACK if c != view.prize))


def opening_chances(rules: Rules, prize: int) -> tuple[float, ...]:
    """:func:`chances` of each card (1 to six) in the first round for
    ``prize``, worked out (what ``openings.py`` ships)."""
    pot = tuple(c for c in OPENING_PACK if c != prize)
    return tuple(_bid_margin(rules, OPENING_PACK, OPENING_PACK, pot, prize, 0, c)
                 for c in OPENING_PACK)


def all_openings() -> dict[tuple[bool, bool, int], tuple[float, ...]]:
    """Every first round's :func:`opening_chances`, by (take_bids, carries, prize)."""
    return {(take, carry, prize): opening_chances((take, carry), prize)
            for take in (False, True) for carry in (False, True) for prize in OPENING_PACK}


@functools.lru_cache(maxsize=400_000)
def _game_margin(rules: Rules, own: tuple[int, ...], other: tuple[int, ...],
                 pot: tuple[int, ...], carry: int = 0) -> float:
    """The margin to expect from a round not yet drawn, bidding best."""
    if not own:
        return 0.0
    total = 0.0
    for prize in pot:
        rest = tuple(p for p in pot if p != prize)
        total += max(_bid_margin(rules, own, other, rest, prize, carry, c) for c in own)
    return total / len(pot)


def _bid_margin(rules: Rules, own: tuple[int, ...], other: tuple[int, ...],
                pot: tuple[int, ...], prize: int, carry: int, card: int) -> float:
    take_bids, carries = rules
    mine = tuple(c for c in own if c != card)
    total = 0.0
    for bid in other:
        theirs = tuple(c for c in other if c != bid)
        stake = prize + carry + (card + bid if take_bids else 0)
        if card == bid:
            if carries and mine and len(mine) <= EXACT_CARRY:
                total += _game_margin(rules, mine, theirs, pot, stake)
                continue
            if carries and mine:
                total += stake * _edge(rules, mine, theirs, pot)
        else:
            total += stake if card > bid else -stake
        total += _game_margin(rules, mine, theirs, pot)
    return total / len(other)


@functools.lru_cache(maxsize=400_000)
def _edge(rules: Rules, mine: tuple[int, ...], theirs: tuple[int, ...],
          pot: tuple[int, ...]) -> float:
    """How much of a carried pot the seat may count on: how much likelier
    its best bid next round wins than loses."""
    total = 0.0
    for prize in pot:
        rest = tuple(p for p in pot if p != prize)
        best = max(mine, key=lambda c: _bid_margin(rules, mine, theirs, rest, prize, 0, c))
        total += sum((best > o) - (best < o) for o in theirs) / len(theirs)
    return total / len(pot) if pot else 0.0


def worth(view: BidderView, card: int) -> float:
    """What bidding ``card`` is worth to the seat now: its own gain less the
    others' on average, from this round and from the rounds to come."""
    n_others = len(view.others)
    below = [_share(p, lambda o: o < card) for p in view.others]
    at_most = [_share(p, lambda o: o <= card) for p in view.others]
    win = _product(below)
    stake: float = view.prize + sum(view.carry)
    if view.take_bids:
        stake += card + sum(_mean([o for o in p if o < card]) for p in view.others)
    # A card that does not win lets another take the stake, if one bid is top.
    lose = 1 - _product(at_most)
    now = win * stake - lose * stake / n_others
    # What is left to play for, shared in proportion to the cards kept.
    ahead: float = sum(view.pot)
    kept = sum(view.own) - card
    theirs = [sum(p) - _mean(p) for p in view.others]
    if view.take_bids:
        ahead += kept + sum(theirs)
    # Squared: the seat with more left takes more than its share of what is
    # left, as the larger cards win the rounds.
    everyone = kept ** 2 + sum(t ** 2 for t in theirs)
    share = kept ** 2 / everyone if everyone else 0.0
    later = ahead * share - ahead * (1 - share) / n_others
    return now + later


def _share(pack: Sequence[int], test: Callable[[int], bool]) -> float:
    return sum(1 for o in pack if test(o)) / len(pack) if pack else 0.0


def _product(values: Sequence[float]) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values) if values else 0.0
