"""The sensible bot of Spades (rule text 001): it bids from its hand and plays
as a partner.

It sees what its seat may see (:class:`SeatView`: its own hand, the bids,
the tricks taken, the cards played this round and the trick on the table,
never another hand). It bids the tricks its hand should take (aces, guarded
kings, high and long spades, short side suits to ruff), or nil with a weak
hand. In play it follows low, wins cheaply, leaves a trick its partner is
winning to the partner, covers and protects a partner's nil, ducks when its
own nil is at stake, and leads its winners, else low from its longest suit.
The seed's draws only part equal choices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.games.cards import full_deck, rank_value_ace_high
from referee.games.draws import Rng

TRUMP = "S"
PLAYERS = 4
#: At most this many expected tricks, and no high spade, to bid nil.
NIL_AT_MOST = 1.0


@dataclass(frozen=True)
class SeatView:
    """What one player knows: eir own hand and the public play."""

    me: int  # the player's index in the playing order, 0-3
    hand: tuple[str, ...]
    bids: tuple[int | None, ...]
    tricks_won: tuple[int, ...]
    #: The trick on the table, in play order, and who led it.
    trick: tuple[str, ...]
    leader: int
    #: Every card played this round, the trick on the table's included.
    played: frozenset[str]
    #: (player, suit): the player showed out of the suit this round.
    voids: frozenset[tuple[int, str]]

    @property
    def partner(self) -> int:
        return (self.me + 2) % PLAYERS


def rank(card: str) -> int:
    return rank_value_ace_high(card[:-1])


def suit(card: str) -> str:
    return card[-1]


# -- bidding ------------------------------------------------------------------------


def estimate(hand: Sequence[str]) -> float:
    """The tricks a hand should take: high spades and spade length, side
    aces and guarded kings and queens, and ruffs in short side suits."""
    spades = sorted((rank(c) for c in hand if suit(c) == TRUMP), reverse=True)
    n = len(spades)
    tricks = 0.0
    # A spade honour counts when it has enough small spades to guard it.
    for i, r in enumerate(spades):
        guard_needed = 14 - r  # A needs none, K one, Q two, J three
        if guard_needed <= 3 and n - 1 >= guard_needed and i <= guard_needed:
            tricks += 1.0 if guard_needed <= 1 else 0.6
    tricks += max(0, n - 4) * 0.9
    short = 0.0
    for s in ("H", "C", "D"):
        ranks = sorted((rank(c) for c in hand if suit(c) == s), reverse=True)
        if 14 in ranks:
            tricks += 1.0 if len(ranks) <= 5 else 0.7
        if 13 in ranks and len(ranks) >= 2:
            tricks += 0.8 if 14 in ranks else 0.55
        if 12 in ranks and len(ranks) >= 3 and (14 in ranks or 13 in ranks):
            tricks += 0.3
        if len(ranks) <= 1:
            short += 1.0 if not ranks else 0.5
    # Ruffs need spades beyond the ones already counted for length.
    tricks += min(short, max(0, min(n, 4) - 1) * 0.5)
    return tricks


def choose_bid(view: SeatView, rng: Rng) -> int:
    """Nil with a weak hand and no high spade while the partner has not bid
    nil; else the hand's expected tricks, rounded, at least 2 (rule 2)."""
    hand = view.hand
    tricks = estimate(hand)
    spades = [rank(c) for c in hand if suit(c) == TRUMP]
    high = [c for c in hand if rank(c) >= 13]
    if (tricks <= NIL_AT_MOST and len(spades) <= 3 and max(spades, default=0) <= 10
            and not high and view.bids[view.partner] != 0):
        return 0
    return min(13, max(2, int(tricks + 0.5)))


# -- play ---------------------------------------------------------------------------


def legal(view: SeatView) -> list[str]:
    if not view.trick:
        return list(view.hand)
    follow = [c for c in view.hand if suit(c) == suit(view.trick[0])]
    return follow or list(view.hand)


def winning(trick: Sequence[str]) -> int:
    """The position in ``trick`` of the card winning it so far (SP-7)."""
    trumps = [i for i, c in enumerate(trick) if suit(c) == TRUMP]
    led = suit(trick[0])
    candidates = trumps or [i for i, c in enumerate(trick) if suit(c) == led]
    return max(candidates, key=lambda i: rank(trick[i]))


def wins(trick: Sequence[str], card: str) -> bool:
    return winning([*trick, card]) == len(trick)


def unseen(view: SeatView, s: str) -> list[int]:
    """The ranks of suit ``s`` neither played nor in the hand: in other hands."""
    return [rank(str(c)) for c in full_deck() if c.suit == s
            and str(c) not in view.played and str(c) not in view.hand]


def boss(view: SeatView, card: str) -> bool:
    """No card of its suit left in another hand beats it."""
    return all(r < rank(card) for r in unseen(view, suit(card)))


def lowest(cards: Iterable[str]) -> str:
    """The cheapest card: a low side card before any spade."""
    return min(cards, key=lambda c: (suit(c) == TRUMP, rank(c), c))


def highest(cards: Iterable[str]) -> str:
    return max(cards, key=lambda c: (suit(c) != TRUMP, rank(c), c))


def nil_alive(view: SeatView, player: int) -> bool:
    return view.bids[player] == 0 and view.tricks_won[player] == 0


def needs(view: SeatView, player: int) -> int:
    """Tricks the team of ``player`` still needs for its contract (SP-8)."""
    team = (player, (player + 2) % PLAYERS)
    return sum(view.bids[p] or 0 for p in team) - sum(view.tricks_won[p] for p in team)


def choose_card(view: SeatView, rng: Rng) -> str:
    cards = legal(view)
    if len(cards) == 1:
        return cards[0]
    if not view.trick:
        return _lead(view, cards, rng)
    return _follow(view, cards)


def _lead(view: SeatView, cards: list[str], rng: Rng) -> str:
    if nil_alive(view, view.me):
        # Lead the card least likely to win: low in a suit others still hold.
        return min(cards, key=lambda c: (suit(c) == TRUMP,
                                         sum(r > rank(c) for r in unseen(view, suit(c))) == 0,
                                         rank(c)))
    winners = [c for c in cards if boss(view, c) and (suit(c) == TRUMP or not _ruffed(view, c))]
    side = [c for c in winners if suit(c) != TRUMP]
    if side:
        return highest(side)
    if nil_alive(view, view.partner):
        # Take the lead and keep it: the partner discards under it.
        return highest(winners or cards)
    spades = [c for c in cards if suit(c) == TRUMP]
    if winners and len(spades) * 2 >= len(unseen(view, TRUMP)):
        return highest(winners)  # draw the others' spades
    others = [c for c in cards if suit(c) != TRUMP] or cards
    # Low from the longest side suit; the seed parts equal lengths.
    length = {s: sum(suit(c) == s for c in others) for s in {suit(c) for c in others}}
    longest = max(length.values())
    chosen = rng.choice(sorted(s for s, n in length.items() if n == longest))
    return lowest(c for c in others if suit(c) == chosen)


def _ruffed(view: SeatView, card: str) -> bool:
    """An opponent has shown out of the card's suit and may trump it."""
    opponents = ((view.me + 1) % PLAYERS, (view.me + 3) % PLAYERS)
    return any((p, suit(card)) in view.voids and (p, TRUMP) not in view.voids
               for p in opponents)


def _follow(view: SeatView, cards: list[str]) -> str:
    trick = view.trick
    position = len(trick)  # 1: second to play, 3: last
    top = (view.leader + winning(trick)) % PLAYERS
    to_win = [c for c in cards if wins(trick, c)]
    to_lose = [c for c in cards if c not in to_win]
    partner_played = (view.partner - view.leader) % PLAYERS < position
    if nil_alive(view, view.me):
        if to_lose:
            return max(to_lose, key=lambda c: (suit(c) == suit(trick[0]) or suit(c) != TRUMP,
                                               rank(c)))
        return highest(to_win)
    if nil_alive(view, view.partner) and (not partner_played or top == view.partner):
        # Cover the nil: win the trick above anything the partner plays.
        return highest(to_win) if to_win else lowest(cards)
    if top == view.partner and (position == 3 or _safe(view, trick[winning(trick)])):
        return lowest(to_lose or cards)
    if to_win and (needs(view, view.me) > 0 or needs(view, (view.me + 1) % PLAYERS) > 0):
        # Win as cheaply as the trick allows; second to play, only with a
        # card that should hold (the partner plays after).
        cheapest = min(to_win, key=lambda c: (suit(c) == TRUMP, rank(c)))
        if position >= 2 or boss(view, cheapest) or suit(cheapest) == TRUMP:
            return cheapest
    if to_lose:
        return lowest(to_lose)
    return min(cards, key=lambda c: (suit(c) == TRUMP, rank(c)))


def _safe(view: SeatView, card: str) -> bool:
    """The partner's winning card should hold: the last opponent to play
    cannot beat it in suit, nor is known to be out of the suit."""
    last = (view.leader + 3) % PLAYERS
    led = suit(view.trick[0])
    if suit(card) == TRUMP:
        return boss(view, card)
    return boss(view, card) and (last, led) not in view.voids
