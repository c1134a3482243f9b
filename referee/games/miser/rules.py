"""Miser's rules: the state of a game and everything the referee does with
it: the deal and the draw, each move of a turn, who owes which step, the
referee's move for a silent player, and how a contract, an attack or a bid
for the centre resolves, in the words of rule text 004 (Miser) and its
rulings MI-1 … MI-15 (docs/rulings.md).

Each exchange is a sub-state of the game (``contract``, ``attack`` or
``auction``) with its own steps, and :meth:`MiserRules.pending` names every
player who owes one with a key naming the exchange and the step.

Players are numbered 1..n in seat order (ruling MI-3); the state indexes
them 0-based in that order. Seats appear only in audiences, pendings and
notice contexts. House readings are marked ``House reading:`` beside the
code. The data of each mail comes from the views, which the game class
gives the rules (:class:`MiserMail` says what the rules ask of them), and
the reading of a name from the words, through the hooks of
:class:`MiserRules`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol

from referee.games.base import (
    JSON,
    Action,
    Audience,
    Event,
    FollowedOrders,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    Pending,
    Placing,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
    winners_first,
)
from referee.games.cards import Card, full_deck, rank_value_ace_high
from referee.games.draws import Draws, Rng

PENNIES = 20  # Set-Up: "20 pennies for each player"
WAGER_CAP = 3  # Basic Rules: "Only three pennies may be wagered by a player in any turn"
PASS_COST = 3  # Passing: "she must put 3 pennies into the centre"
DECK_SIZE = 52  # ruling MI-1: a deck of 52 cards, no jokers
#: Set-Up: "3 or more players"; ruling MI-1: as many as the deck deals, each
#: player at least one card.
MIN_PLAYERS, MAX_PLAYERS = 3, DECK_SIZE
BOT_PLAYS = ("sensible", "random")

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
    stake: int = 0  # what the victim put in (ruling MI-11: all she had, if short)
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
    #: Bidders done since the last bid or raise. A bid or a raise is its
    #: bidder's "done" too (house reading of ruling MI-8): she has nothing to
    #: answer until someone else bids or raises, when she owes a step again.
    done: list[int] = field(default_factory=list)
    declined: list[int] = field(default_factory=list)  # others who said they will not join
    step: int = 1  # bids and raises so far


@dataclass
class MiserState:
    """One game of Miser. Player indexes follow the seat order."""

    seats: list[int]  # seat positions in seat order
    names: list[str]
    pennies_each: int
    wager_cap: int
    first: int  # who won the draw (ruling MI-2)
    draws: list[list[str | None]]  # each round of the draw: a card per player, None if out
    removed: list[str]  # face down, out of the game (ruling MI-1)
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
    #: Other names each player goes by, from the service (the local part of
    #: her address), which others may write to name her; empty for a bot.
    aliases: list[list[str]] = field(default_factory=list)
    #: How a bot seat plays (``--option bot``): ``sensible`` (:mod:`.bot`)
    #: or ``random``; a game stored before the option plays random.
    bot: str = "random"
    #: The edition of the rules the game began under (:attr:`MiserRules.edition`).
    edition: int = 3


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
    """Rule text 004: "Card values are determined as in Blackjack. (So 10 =
    Jack = Queen = King; Ace = 11)"; ruling MI-13: an ace is always 11."""
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


def _card_codes(cards: Sequence[str]) -> list[str]:
    """``["QS", "10h", "A♠"]`` -> ``["QS", "10H", "AS"]``; raises on a non-card."""
    out = []
    for text in cards:
        card = Card.parse(text)
        if card is None:
            raise ValueError(f"{text!r} is not a card")
        out.append(str(card))
    return out


# -- the draw (ruling MI-2) -----------------------------------------------------


def draw_for_first(n: int, rng: Rng) -> tuple[int, list[list[str | None]]]:
    """Each player draws a card; the highest rank (ace high) goes first, and
    the players tied for highest draw again from what is left (from a fresh
    deck, should it run out). A deck is shuffled (in the order of
    :func:`~referee.games.cards.full_deck`) and each drawing player, in seat
    order, takes the card from its end."""
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
    """Rule text 004, "Rules for Taking Out a Contract", and ruling MI-6:
    equal values split the whole centre, the odd penny staying; otherwise
    the higher card takes all of it."""
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
    """Rule text 004, "Rules for attacking another player", and ruling MI-7:
    the higher total takes the whole centre; equal totals lose their cards
    and the pennies stay. Ruling MI-12: no card is a total of 0."""
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
    """Rule text 004, "Making a Bid for the Pennies in the Centre", and
    rulings MI-8 and MI-9. With one highest bid, its bidder takes the centre
    as it stood before the bids; then she and the second-highest bidder(s)
    pay their bids into it, and the rest keep theirs. With a tie for
    highest, nobody takes the centre; the tied bidders and the next-highest
    bidder(s) pay their bids into it."""
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
            return None if player in au.done or not may_add(s, player) else "auction_bid"
        if s.hands[player] and player not in au.declined:
            return "auction_join"
    return None


def may_add(s: MiserState, player: int) -> bool:
    """Whether bidder ``player`` may still add to her bid: she holds more
    pennies than she has bid (ruling MI-16: only such a bidder is asked
    again after a raise). In a game begun before edition 3 every bidder
    is asked, as it began."""
    assert s.auction is not None
    if s.edition < 3:
        return True
    return s.pennies[player] > next(b.pennies for b in s.auction.bids if b.player == player)


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


def offer_json(s: MiserState) -> dict[str, JSON]:
    """The contract offer on the table, as its event and its notices show it."""
    c = s.contract
    assert c is not None
    return {
        "by": s.names[s.turn],
        "partner": s.names[c.partner],
        "victim": s.names[c.victim],
        "wagers": list(c.wagers),
        "total": sum(c.wagers),
        "private": c.audience is not None,
        "audience": (
            [s.names[s.seats.index(x)] for x in c.audience] if c.audience is not None else []
        ),
        "audience_text": names_text(
            [s.names[s.seats.index(x)] for x in c.audience] if c.audience is not None else []
        ),
    }


def names_text(names: Sequence[str]) -> str:
    """``Ann``, ``Ann and Ben``, ``Ann, Ben and Cat``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


# -- the referee's play of the rules ---------------------------------------------


class MiserMail(Protocol):
    """What the rules ask of the game's views (its Observer,
    :class:`referee.games.miser.views.MiserViews`, which the game class
    gives them) for the data of the notices a move sends: the rules state
    the move's facts, the views what each audience may see."""

    def common(self, s: MiserState, *, offer: bool = False) -> dict[str, JSON]:
        """The public facts every notice carries (with the private offer
        on the table for ``offer``, a notice to the offer's audience)."""
        ...

    def opening(self, s: MiserState) -> dict[str, JSON]:
        """The opening mail's data (the seating, the draw, the deal)."""
        ...

    def bid(self, s: MiserState, bid: Bid) -> dict[str, JSON]:
        """One bid for the centre, as the auction mail shows it."""
        ...

    def hand_notice(self, s: MiserState, player: int, reason: str) -> Notice:
        """The secret mail of a player's hand and pennies."""
        ...

    def your_move(self, s: MiserState, player: int) -> Notice:
        """The secret mail telling a player the step she owes now."""
        ...


class MiserRules(Game[MiserState]):
    """Rule text 004 as the referee plays it: setup, each move, who owes
    what, the referee's move for a silent player and a random bot's. What
    a notice shows beside the move's facts comes from :attr:`views`, which
    the game class (:class:`referee.games.miser.Miser`) gives, with its
    sensible bot; the reading of names is a hook that
    :class:`~referee.games.miser.words.MiserWords` supplies."""

    #: The views that make each notice's data (:class:`MiserMail`).
    views: MiserMail

    option_help: ClassVar[Mapping[str, str]] = {
        "pennies": "what each player starts with",
        "wager": "the most one may wager on a contract or an attack",
        "bot": "how a bot seat plays: sensible, or random",
    }
    #: 2 (2026-11-25): a bid or a raise is its bidder's "done" (the house
    #: reading of ruling MI-8). In a game of edition 1 a bidder writes
    #: "done" after her own bid or raise too, as the game began.
    #: 3 (2026-11-29): a bidder who has bid every penny she holds cannot
    #: add, so she is finished bidding and is not asked again (ruling
    #: MI-16). In a game of an earlier edition she still writes "done".
    edition: ClassVar[int] = 3

    def __init__(
        self,
        *,
        deal: Sequence[Sequence[str]] | None = None,
        draw: Sequence[str] | None = None,
    ) -> None:
        """The registered engine shuffles. A test may fix the ``deal`` (one
        hand a player in seat order; the cards left out are the ones removed
        face down, ruling MI-1) and the ``draw`` for first player (one card a
        player in seat order, one of them highest, ruling MI-2)."""
        self._deal = [sort_hand(_card_codes(hand)) for hand in deal] if deal else None
        if self._deal is not None:
            dealt = [c for hand in self._deal for c in hand]
            n = len(self._deal)
            if not MIN_PLAYERS <= n <= MAX_PLAYERS:
                raise ValueError(f"a deal has {MIN_PLAYERS} to {MAX_PLAYERS} hands")
            if any(len(hand) != DECK_SIZE // n for hand in self._deal):
                raise ValueError(f"each of {n} hands holds {DECK_SIZE // n} cards")
            if len(set(dealt)) != len(dealt):
                raise ValueError("a card is dealt twice")
        self._draw = _card_codes(draw) if draw else None
        if self._draw is not None:
            ranks = sorted((rank_value_ace_high(c[:-1]) for c in self._draw), reverse=True)
            if len(ranks) > 1 and ranks[0] == ranks[1]:
                raise ValueError("a fixed draw needs one highest card")

    # -- setup ----------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"pennies": PENNIES, "wager": WAGER_CAP, "bot": "sensible"}
        for key, value in raw.items():
            if key not in options:
                raise OptionError(
                    f"Miser has no option {key!r}; its options are pennies, wager, bot")
            text = value.strip()
            if key == "bot":
                if text not in BOT_PLAYS:
                    raise OptionError(f"bot: {value!r} must be sensible or random")
                options[key] = text
                continue
            if not text.isdecimal() or len(text) > 4:
                raise OptionError(f"{key}: {value!r} is not a whole number")
            if int(text) < 1:
                raise OptionError(f"{key}: it must be at least 1")
            options[key] = int(text)
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        return MIN_PLAYERS, MAX_PLAYERS

    def upgrade(self, data: JSON) -> JSON:
        """A state stored before editions were. One stored before
        2026-11-25 holds no aliases (or, stored again since, none for any
        player, where every later game holds a list for each): of edition 1,
        and its players had no other names. Any other: of edition 2."""
        if not isinstance(data, dict) or "edition" in data:
            return data
        if data.get("aliases"):
            return {**data, "edition": 2}
        return {**data, "edition": 1, "aliases": [[] for _ in data["seats"]]}

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], draws: Draws
    ) -> Result[MiserState]:
        n = len(seats)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS or len({s.position for s in seats}) != n:
            raise OptionError(f"Miser needs {MIN_PLAYERS} to {MAX_PLAYERS} players: 3 or more "
                              "(rule text 004), and a deck of 52 deals each at least one card")
        ordered = sorted(seats, key=lambda s: s.position)  # ruling MI-3: seat order
        first, drawn = draw_for_first(n, draws.rng("first"))
        if self._draw is not None:
            fixed = self._draw
            if len(fixed) != n:
                raise OptionError(f"the fixed draw is for {len(fixed)} players")
            row: list[str | None] = list(fixed)
            drawn = [row]
            first = max(range(n), key=lambda p: rank_value_ace_high(fixed[p][:-1]))
        # Ruling MI-2: the full deck is reshuffled after the draw; ruling MI-1:
        # 52 mod n random cards are removed face down and the rest dealt equally:
        # the shuffled deck's first 52 mod n cards, then one card each in turn.
        deck = [str(c) for c in full_deck()]
        draws.rng("deal").shuffle(deck)
        cut = DECK_SIZE % n
        removed, rest = deck[:cut], deck[cut:]
        hands = [sort_hand(rest[i::n]) for i in range(n)]
        if self._deal is not None:
            if len(self._deal) != n:
                raise OptionError(f"the fixed deal is for {len(self._deal)} players")
            hands = [list(hand) for hand in self._deal]
            dealt = {c for hand in hands for c in hand}
            removed = [c for c in deck if c not in dealt]
        pennies = int(options.get("pennies") or PENNIES)
        state = MiserState(
            seats=[s.position for s in ordered],
            names=[s.name for s in ordered],
            aliases=[list(s.aliases) for s in ordered],
            pennies_each=pennies,
            wager_cap=int(options.get("wager") or WAGER_CAP),
            first=first,
            draws=drawn,
            removed=sorted(removed),
            hands=hands,
            pennies=[pennies] * n,
            turn=first,
            bot=str(options.get("bot") or "random"),
            edition=self.edition_begun(options),
        )
        size = len(hands[0])
        draw_text = "; ".join(
            ", ".join(f"{state.names[p]} {card_text(c)}" for p, c in enumerate(row) if c)
            for row in drawn
        )
        events = [
            Event(
                "seating",
                "Seating: " + ", ".join(f"{state.names[p]}" for p in range(n)) + ".",
                data={"seats": list(state.seats), "names": list(state.names)},
            ),
            Event(
                "draw",
                f"The draw for first player: {draw_text}. {state.names[first]} goes first.",
                data={"draws": [list(r) for r in drawn], "first": state.names[first]},
            ),
            Event(
                "deal",
                f"{size} cards dealt to each player, {cut} removed face down; "
                f"{pennies} pennies each.",
                data={"hand_size": size, "removed": cut, "pennies": pennies},
            ),
            Event(
                "hands",
                "The deal.",
                public=False,
                data={
                    "hands": {state.names[p]: list(hands[p]) for p in range(n)},
                    "removed": list(state.removed),
                },
            ),
        ]
        notices = [Notice(Audience.everyone(), "opening", self.views.opening(state))]
        notices += [self.views.hand_notice(state, p, "deal") for p in range(n)]
        return Result(state, events, notices)

    # -- hooks: the reading of names (words.py) -------------------------------

    def _read_contract(self, s: MiserState, text: str) -> tuple[str, str, int, int]:
        """A contract kept as written, read now that the names are known: words.py."""
        raise NotImplementedError

    def _read_attack(self, s: MiserState, text: str) -> tuple[str, int]:
        """An attack kept as written, read now that the names are known: words.py."""
        raise NotImplementedError

    def _resolve_name(self, s: MiserState, written: str) -> int:
        """The player a written name, alias, prefix or seat number means: words.py."""
        raise NotImplementedError

    # -- play -----------------------------------------------------------------

    def accepts(self, action: Action, scope: Scope) -> None:
        """A face-down card is accepted only in a mail to the referee alone
        (ruling MI-14): anyone else on the mail would see the card. Everything
        else is accepted in every scope; a contract offer's answers follow the
        audience of the offer."""
        if action.verb == "down" and scope is not Scope.SECRET:
            raise ScopeError(
                "A card put face down must stay hidden until the flip, and this mail also "
                "went to other players or the list, so it would show the card. It was not "
                "played: send it again in a mail to the referee alone."
            )

    def apply(
        self, state: MiserState, seat: int, action: Action, draws: Draws
    ) -> Result[MiserState]:
        player = self._player(state, seat)
        if action.verb == "hand":
            notice = self.views.hand_notice(state, player, "request")
            return Result(state, notices=[notice], reply="Your hand is below, for you alone.")
        if state.over:
            raise IllegalAction(f"The game is over: {result_text(state)}")
        verb = action.verb
        owes = owed_step(state, player)
        if verb == "pass" and owes in ("auction_bid", "auction_join"):
            verb = "done"  # in an auction, "pass" is read as "done"
        handler = {
            "pass": self._pass,
            "contract": self._offer,
            "attack": self._attack,
            "bid": self._bid,
            "raise": self._raise,
            "accept": self._accept,
            "decline": self._decline,
            "lapse": self._decline,
            "down": self._down,
            "flip": self._flip,
            "done": self._done,
        }.get(verb)
        if handler is None:
            raise IllegalAction(f"Miser has no command {action.verb!r}.")
        return handler(state, player, action)

    def pending(self, state: MiserState) -> list[Pending]:
        """Who owes which step. The answer to a contract offer made in
        private is a private obligation (ruling MI-14: contract talks may be
        private): views for everyone show the offerer's turn instead, as
        the public summary does."""
        out = []
        c = state.contract
        for p in range(len(state.names)):
            owes = owed_step(state, p)
            if owes is None:
                continue
            key = pending_key(state, p, owes)
            if owes == "answer" and c is not None and c.audience is not None:
                cover = (state.seats[state.turn], OWED_TEXT[TURN])
                out.append(Pending(state.seats[p], key, OWED_TEXT[owes], private=True,
                                   cover=cover))
            else:
                out.append(Pending(state.seats[p], key, OWED_TEXT[owes]))
        return out

    def timeout_action(self, state: MiserState, seat: int, draws: Draws) -> Action:
        """Ruling MI-15: a silent turn player passes; an unanswered offer
        lapses; a partner who does not play plays a random card; silence in
        an attack is "flip"; silence in an auction is "done".

        House reading: an attacker who owes her first card (ruling MI-7: "the
        attacker plays at least one card") has not yet a side to flip, so,
        like a silent partner, she plays a random card.
        """
        player = self._player(state, seat)
        owes = owed_step(state, player)
        if owes is None:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        if owes == "turn":
            return Action("pass")
        if owes == "answer":
            return Action("lapse")
        if owes in ("contract_card", "attack_first"):
            rng = self.move_rng(state, seat, draws, "timeout")
            return Action("down", (rng.choice(sorted(state.hands[player])),))
        if owes == "attack":
            return Action("flip")
        return Action("done")

    def follow_orders(self, state: MiserState, seat: int,
                      orders: Sequence[JSON]) -> FollowedOrders:
        """A standing ``pass next N`` (issue 37) passes at each of the seat's
        next N turns, as each comes (rule 3's pass, which costs what a pass
        written would). Nothing in Miser is forced: every step leaves a choice."""
        if state.over or seat not in state.seats:
            return FollowedOrders(None, [], [])
        player = state.seats.index(seat)
        if owed_step(state, player) != "turn":
            return FollowedOrders(None, list(orders), [])
        first, rest = dict(orders[0]), list(orders[1:])
        count = int(first.get("count", 1)) - 1
        if count > 0:
            rest = [{**first, "count": count, "text": passes_text(count)}, *rest]
        return FollowedOrders(Action("pass"), rest, [])

    def random_bot_action(self, state: MiserState, seat: int, draws: Draws) -> Action:
        """A random player with a little sense: it never bids or wagers more
        pennies than it holds, prefers to attack players with no cards, bids
        for a centre worth having, and adds cards to an attack while it has
        fewer down than its opponent."""
        player = self._player(state, seat)
        owes = owed_step(state, player)
        if owes is None:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        rng = self.move_rng(state, seat, draws, "bot")
        if owes == "turn":
            return _bot_turn(state, player, rng)
        if owes == "answer":
            return Action("accept" if rng.random() < 0.6 else "decline")
        hand = sort_hand(state.hands[player])
        if owes in ("contract_card", "attack_first"):
            return Action("down", (rng.choice(hand),))
        if owes == "attack":
            assert state.attack is not None
            side = 0 if player == state.turn else 1
            mine, theirs = len(state.attack.cards[side]), len(state.attack.cards[1 - side])
            if hand and ((mine < theirs and rng.random() < 0.7) or rng.random() < 0.15):
                return Action("down", (rng.choice(hand),))
            return Action("flip")
        assert state.auction is not None
        purse = state.pennies[player]
        if owes == "auction_join":
            if state.centre >= 4 and rng.random() < 0.35:
                pennies = min(purse, max(1, state.centre // 3))
                return Action("bid", (hand[-1], pennies))
            return Action("done")
        top = max(b.pennies for b in state.auction.bids)
        mine_bid = next(b.pennies for b in state.auction.bids if b.player == player)
        if mine_bid < top and top + 1 <= min(purse, state.centre) and rng.random() < 0.5:
            return Action("raise", ("to", top + 1))
        return Action("done")

    def replace_with_bot(self, state: MiserState, seat: int) -> Result[MiserState]:
        """A player resigns: a bot takes the seat (the service marks it), and
        everyone is told, since a bot now plays that purse and hand."""
        player = self._player(state, seat)
        name = state.names[player]
        text = f"{name} has left the game; a bot takes the seat."
        context = {**self.views.common(state), "name": name}
        return Result(
            state,
            [Event("resign", text, data={"player": name})],
            [Notice(Audience.everyone(), "resign", context)],
            text,
        )

    def turn(self, state: MiserState) -> int:
        """The turn number: one player's turn, with every exchange it opens."""
        return state.turn_number

    def turn_name(self, turn: int, now: int | None = None) -> str:
        """Rule text 004 numbers no turns, and neither do the players' mails:
        a turn is named by where it stands from the one being played."""
        if now is None or turn == now:
            return "a new turn"
        return "an earlier turn" if turn < now else "a later turn"

    def is_over(self, state: MiserState) -> bool:
        return state.over

    def placings(self, state: MiserState) -> list[Placing] | None:
        """"One player is considered to have won and the rest to have lost.
        There is no second place": the one with most pennies first, the
        rest second; a tie for most has no single winner, so none wins."""
        if not state.over:
            return None
        winners = [state.seats[p] for p in state.winners] if len(state.winners) == 1 else []
        return winners_first(state.seats, winners)

    # -- the turn -------------------------------------------------------------

    def _pass(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "pass")
        s = evolve_state(state)
        # Ruling MI-4: with fewer than 3 pennies she puts in all she has.
        paid = min(PASS_COST, s.pennies[player])
        s.pennies[player] -= paid
        s.centre += paid
        report = {"kind": "pass", "name": s.names[player], "paid": paid}
        text = f"{s.names[player]} passes and puts {pennies_text(paid)} in the centre."
        return self._end_turn(s, report, text)

    def _offer(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "take out a contract")
        _require_cards(state, player)
        if len(action.args) == 1:  # kept as written until the names are known
            written_partner, written_victim, mine, yours = self._read_contract(
                state, str(action.args[0])
            )
        else:
            written_partner, written_victim, mine, yours = _args(action, 4)
        partner = self._resolve_name(state, str(written_partner))
        victim = self._resolve_name(state, str(written_victim))
        if player in (partner, victim):
            raise IllegalAction("Your partner and your victim must be two other players.")
        if partner == victim:
            raise IllegalAction("Your partner cannot also be the victim.")
        if not state.hands[partner]:
            raise IllegalAction(
                f"{state.names[partner]} has no cards left, so cannot enter a contract "
                "(rule text: a player out of cards cannot enter into contracts)."
            )
        self._check_wager(state, player, mine, "Your wager")
        self._check_wager(state, partner, yours, f"{state.names[partner]}'s wager")
        s = evolve_state(state)
        s.offers += 1
        audience = action.came_to(s.seats[player])
        seen = None if audience.public else sorted({*audience.seats, s.seats[partner]})
        s.contract = Contract(partner, victim, [int(mine), int(yours)], seen)
        offer = offer_json(s)
        context = {**self.views.common(s, offer=True), "offer": offer}
        text = (
            f"{s.names[player]} offers {s.names[partner]} a contract against "
            f"{s.names[victim]}: {s.names[player]} wagers {mine}, {s.names[partner]} {yours}."
        )
        return Result(
            s,
            [Event("offer", text, public=seen is None, data=offer)],
            [Notice(offer_audience(s), "offer", context)],
            f"Your offer is made; {s.names[partner]} answers 'accept' or 'decline'.",
        )

    def _accept(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        offer = _offer_to(state, player)
        s = evolve_state(state)
        c = s.contract
        assert c is not None
        by, partner, victim = s.turn, c.partner, c.victim
        s.pennies[by] -= c.wagers[0]
        s.pennies[partner] -= c.wagers[1]
        # Ruling MI-6: the victim matches the sum; ruling MI-11: if short, all she has.
        c.stake = min(sum(c.wagers), s.pennies[victim])
        s.pennies[victim] -= c.stake
        s.centre += sum(c.wagers) + c.stake
        c.accepted = True
        text = (
            f"{s.names[partner]} accepts: {s.names[by]} ({c.wagers[0]}) and "
            f"{s.names[partner]} ({c.wagers[1]}) take out a contract against "
            f"{s.names[victim]}, who puts in {c.stake}. The centre holds {pennies_text(s.centre)}."
        )
        context = {**self.views.common(s), "offer": offer, "short": c.stake < sum(c.wagers)}
        notices = [Notice(Audience.everyone(), "contract", context)]
        notices += [self.views.your_move(s, p) for p in (by, partner)]
        return Result(s, [Event("contract", text, data=dict(offer))], notices)

    def _decline(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        offer = _offer_to(state, player)
        s = evolve_state(state)
        c = s.contract
        assert c is not None
        audience = offer_audience(s)
        lapsed = action.verb == "lapse"
        s.contract = None
        how = "lapsed unanswered" if lapsed else f"was declined by {s.names[player]}"
        text = f"{s.names[s.turn]}'s contract offer {how}; {s.names[s.turn]} chooses again."
        context = {**self.views.common(s), "offer": offer, "lapsed": lapsed}
        return Result(
            s,
            [Event("lapse" if lapsed else "decline", text, public=c.audience is None, data=offer)],
            [Notice(audience, "declined", context)],
            text,
        )

    def _attack(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "attack")
        _require_cards(state, player)
        if len(action.args) == 1:  # kept as written until the names are known
            written, wager = self._read_attack(state, str(action.args[0]))
        else:
            written, wager = _args(action, 2)
        victim = self._resolve_name(state, str(written))
        if victim == player:
            raise IllegalAction("You cannot attack yourself.")
        self._check_wager(state, player, wager, "Your wager")
        s = evolve_state(state)
        stake = min(int(wager), s.pennies[victim])  # rulings MI-7, MI-11
        s.pennies[player] -= int(wager)
        s.pennies[victim] -= stake
        s.centre += int(wager) + stake
        s.attack = Attack(victim, int(wager), stake)
        text = (
            f"{s.names[player]} attacks {s.names[victim]}, wagering {wager}; "
            f"{s.names[victim]} puts in {stake}. The centre holds {pennies_text(s.centre)}."
        )
        context = {**self.views.common(s), "short": stake < int(wager)}
        # The attacker is told what comes next in the answer to her own mail,
        # not in a separate mail: the same mail may already put cards down.
        low = sort_hand(s.hands[player])[-1]
        reply = (
            f"{text} Now put one or more cards face down, in a mail to the referee "
            f"alone, like 'down {low}'."
        )
        return Result(
            s,
            [Event("attack", text, data={"attacker": s.names[player], "victim": s.names[victim],
                                          "wager": int(wager), "stake": stake})],
            [Notice(Audience.everyone(), "attack", context)],
            reply,
        )  # fmt: skip

    def _bid(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        card, pennies = _args(action, 2)
        card = str(card)
        stage = stage_of(state)
        auction = state.auction
        # A pending offer may be private (ruling MI-14): anyone but the turn player
        # gets the same answer whether or not one is pending.
        if stage in (TURN, OFFER) and player != state.turn:
            raise IllegalAction(
                f"It is {state.names[state.turn]}'s turn; you may join a bid for the centre "
                "only once it is made."
            )
        if stage == OFFER:
            _require_turn(state, player, "bid for the centre")
        if stage not in (TURN, AUCTION):
            raise IllegalAction(f"There is no bidding for the centre now. {now_text(state)}")
        if auction is not None and any(b.player == player for b in auction.bids):
            mine = next(b.pennies for b in auction.bids if b.player == player)
            raise IllegalAction(
                f"You are already bidding {pennies_text(mine)}. To add 2, write 'raise 2'; "
                f"to bring your bid to {mine + 2}, write 'raise to {mine + 2}'."
            )
        _require_cards(state, player)
        if card not in state.hands[player]:
            raise IllegalAction(
                f"You do not hold {card_text(card)}. Your cards: {hand_text(state.hands[player])}."
            )
        amount = self._check_bid(state, player, pennies)
        s = evolve_state(state)
        s.hands[player].remove(card)
        # Edition 2: her bid is her "done" (MI-8); edition 1: she owes one.
        done = [player] if s.edition >= 2 else []
        if s.auction is None:
            s.auction = Auction([Bid(player, card, amount)], done=done)
            what = "open"
            text = (
                f"{s.names[player]} bids {pennies_text(amount)} for the centre "
                f"({pennies_text(s.centre)}), with {card_text(card)} face up."
            )
        else:
            s.auction.bids.append(Bid(player, card, amount))
            s.auction.done = done
            s.auction.step += 1
            if player in s.auction.declined:
                s.auction.declined.remove(player)
            what = "join"
            text = (
                f"{s.names[player]} joins the bidding: {card_text(card)} "
                f"and {pennies_text(amount)}."
            )
        result = self._auction_step(s, player, what, text)
        if what == "open" and not s.over and s.auction is not None:
            result.notices += [
                self.views.your_move(s, p)
                for p in range(len(s.names))
                if owed_step(s, p) == "auction_join"
            ]
        return result

    def _raise(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        auction = state.auction
        if auction is None or not any(b.player == player for b in auction.bids):
            raise IllegalAction(
                "You have no bid to raise. " + ("Join the bidding with 'bid 7H 2'."
                                                if owed_step(state, player) == "auction_join"
                                                else now_text(state))
            )  # fmt: skip
        mine = next(b for b in auction.bids if b.player == player)
        if len(action.args) == 2 and action.args[0] == "to":
            total = action.args[1]
        else:
            (add,) = _args(action, 1)
            total = mine.pennies + add if isinstance(add, int) else add
        if not isinstance(total, int) or total <= mine.pennies:
            raise IllegalAction(
                f"Your bid is {pennies_text(mine.pennies)}; a raise must make it more "
                "(bids are never withdrawn)."
            )
        self._check_bid(state, player, total)
        s = evolve_state(state)
        assert s.auction is not None
        next(b for b in s.auction.bids if b.player == player).pennies = total
        s.auction.done = [player] if s.edition >= 2 else []
        s.auction.step += 1
        text = f"{s.names[player]} raises to {pennies_text(total)}."
        return self._auction_step(s, player, "raise", text)

    def _done(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        owes = owed_step(state, player)
        if owes == "auction_bid":
            s = evolve_state(state)
            assert s.auction is not None
            s.auction.done.append(player)
            text = f"{s.names[player]} is done bidding."
        elif owes == "auction_join":
            s = evolve_state(state)
            assert s.auction is not None
            s.auction.declined.append(player)
            text = f"{s.names[player]} will not join the bidding."
        elif state.auction is not None and is_bidder(state, player) and not may_add(
                state, player):
            raise IllegalAction(
                "You have bid every penny you hold, so you cannot add to your bid: you are "
                "finished bidding, and your bid stands until the bidding ends."
            )
        elif state.auction is not None and is_bidder(state, player):
            raise IllegalAction(
                "Your bid stands, and you owe nothing until someone else bids or raises; you "
                "may still raise it ('raise 1')."
            )
        elif state.auction is not None and state.hands[player]:
            raise IllegalAction(
                "You have said you will not join; you still may, with 'bid 7H 2', "
                "until the bidding ends."
            )
        else:
            raise IllegalAction(f"There is no bidding to be done with now. {now_text(state)}")
        return self._auction_step(s, player, "done", text)

    def _auction_step(self, s: MiserState, player: int, what: str, text: str) -> Result[MiserState]:
        """Announce one step of the auction, and resolve it when nobody owes
        a step: every bidder has said done since the last bid or raise, and
        every other player holding cards has joined or said she will not."""
        assert s.auction is not None
        bid = next((b for b in s.auction.bids if b.player == player), None)
        data = {
            "player": s.names[player],
            "what": what,
            "pennies": bid.pennies if bid else None,
            "card": bid.card if bid else None,
        }
        events = [Event("auction", text, data=data)]
        if any(owed_step(s, p) for p in range(len(s.names))):
            context = {**self.views.common(s), "name": s.names[player], "step": what,
                       "bid": self.views.bid(s, bid) if bid else None,
                       "bid_is_done": s.edition >= 2}  # fmt: skip
            return Result(s, events, [Notice(Audience.everyone(), "auction", context)])
        report = resolve_auction(s)
        result = self._end_turn(s, report, report_text(s, report))
        result.events[:0] = events
        return result

    # -- face-down cards and the flip -------------------------------------------

    def _down(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        cards = [str(c) for c in action.args]
        if not cards:
            raise IllegalAction("Name the card to put face down, like 'down QS'.")
        stage = stage_of(state)
        if stage == CONTRACT:
            assert state.contract is not None
            side = contract_side(state, player)
            if state.contract.cards[side] is not None:
                raise IllegalAction("Your card for this contract is already down.")
            if len(cards) != 1:
                raise IllegalAction("Each partner in a contract puts down exactly one card.")
        elif stage == ATTACK:
            assert state.attack is not None
            side = attack_side(state, player)
            if side == 1 and not state.attack.cards[0]:
                raise IllegalAction(
                    f"Wait for {state.names[state.turn]}'s first card; then you may answer."
                )
        else:
            raise IllegalAction(f"No card is to be put face down now. {now_text(state)}")
        missing = [c for c in cards if c not in state.hands[player]]
        if missing or len(set(cards)) != len(cards):
            shown = ", ".join(card_text(c) for c in missing) or "a card twice"
            raise IllegalAction(
                f"You do not hold {shown}. Your cards: {hand_text(state.hands[player])}."
            )
        s = evolve_state(state)
        for card in cards:
            s.hands[player].remove(card)
        name = s.names[player]
        hidden = Event("down_cards", f"{name} puts {' '.join(cards)} face down.",
                       public=False, data={"player": name, "cards": list(cards)})  # fmt: skip
        reply = f"Face down: {' '.join(card_text(c) for c in cards)}."
        if stage == CONTRACT:
            c = s.contract
            assert c is not None
            c.cards[side] = cards[0]
            text = f"{name} puts a card face down for the contract."
            events = [Event("down", text, data={"player": name, "count": 1}), hidden]
            if all(x is not None for x in c.cards):
                report = resolve_contract(s)
                result = self._end_turn(s, report, report_text(s, report))
                result.events[:0] = events
                result.reply = reply
                return result
        else:
            a = s.attack
            assert a is not None
            a.cards[side].extend(cards)
            a.step += len(cards)
            a.flipped = [False, False]  # each side says "flip" again after a new card
            count = len(a.cards[side])
            text = f"{name} puts {cards_text(len(cards))} face down ({count} down in all)."
            events = [Event("down", text, data={"player": name, "count": len(cards)}), hidden]
            if attack_settled(s):
                return self._flip_attack(s, events, reply, "down")
        context = {**self.views.common(s), "name": name, "count": len(cards)}
        notices = [Notice(Audience.everyone(), "down", context)]
        a = s.attack
        if a is not None and side == 0 and len(a.cards[0]) == len(cards) and s.hands[a.victim]:
            # The attacker's first card: the victim may now answer.
            notices.append(self.views.your_move(s, a.victim))
        return Result(s, events, notices, reply)

    def _flip(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        if stage_of(state) != ATTACK:
            raise IllegalAction(f"There is nothing to flip now. {now_text(state)}")
        assert state.attack is not None
        side = attack_side(state, player)
        if not state.attack.cards[0]:
            if side == 0:
                raise IllegalAction("Put at least one card face down first, like 'down QS'.")
            raise IllegalAction(f"Wait for {state.names[state.turn]}'s first card.")
        if state.attack.flipped[side]:
            raise IllegalAction("You have said flip; the other side must say it too.")
        s = evolve_state(state)
        assert s.attack is not None
        s.attack.flipped[side] = True
        name = s.names[player]
        events = [Event("flip", f"{name} is ready to flip.", data={"player": name})]
        if attack_settled(s):
            return self._flip_attack(s, events, None, "flip")
        context = {**self.views.common(s), "name": name}
        return Result(s, events, [Notice(Audience.everyone(), "flip", context)])

    def _flip_attack(
        self, s: MiserState, events: list[Event], reply: str | None, last: str
    ) -> Result[MiserState]:
        """Turn up an attack's cards. ``last`` is the move that settled it
        ("down" or "flip"), so a report of the referee's move for a silent
        player says which it made."""
        report = {**resolve_attack(s), "last_move": last}
        result = self._end_turn(s, report, report_text(s, report))
        result.events[:0] = events
        result.reply = reply
        return result

    # -- the end of a turn (ruling MI-10) ---------------------------------------

    def _end_turn(self, s: MiserState, report: dict[str, Any], text: str) -> Result[MiserState]:
        """Report a resolved turn to everyone. A player left with no pennies
        is knocked out and the game ends; otherwise the next player's turn."""
        n = len(s.names)
        s.contract = s.attack = s.auction = None
        report = {"turn": s.turn_number, **report}
        s.history.append(report)
        events = [Event("resolved", text, data=report)]
        knocked = [p for p in range(n) if s.pennies[p] == 0]
        if knocked:
            s.over = True
            s.knocked_out = knocked
            top = max(s.pennies)
            s.winners = [p for p in range(n) if s.pennies[p] == top]
            data = {
                "winners": [s.names[p] for p in s.winners],
                "pennies": dict(zip(s.names, s.pennies, strict=True)),
            }
            events.append(Event("game_over", result_text(s), data=data))
        else:
            s.turn = (s.turn + 1) % n
            s.turn_number += 1
            s.offers = 0
        context = {**self.views.common(s), "report": report}
        notices = [Notice(Audience.everyone(), "round_report", context)]
        if not s.over:
            notices.append(self.views.your_move(s, s.turn))
        return Result(s, events, notices)

    # -- checks -----------------------------------------------------------------

    def _check_wager(self, state: MiserState, player: int, wager: JSON, whose: str) -> None:
        if not isinstance(wager, int) or not 1 <= wager <= state.wager_cap:
            raise IllegalAction(f"{whose} must be 1 to {state.wager_cap} pennies.")
        if wager > state.pennies[player]:
            has = "you have" if whose == "Your wager" else f"{state.names[player]} has"
            raise IllegalAction(f"{whose} is {wager}, but {has} only {state.pennies[player]}.")

    def _check_bid(self, state: MiserState, player: int, pennies: JSON) -> int:
        if not isinstance(pennies, int) or pennies < 1:
            raise IllegalAction("A bid is 1 penny or more.")
        if pennies > state.pennies[player]:
            raise IllegalAction(
                f"You hold {pennies_text(state.pennies[player])}; you cannot bid more than that."
            )
        return pennies

    def _player(self, state: MiserState, seat: int) -> int:
        if seat not in state.seats:
            raise IllegalAction("You have no seat in this game.")
        return state.seats.index(seat)


def _offer_to(s: MiserState, player: int) -> dict[str, JSON]:
    if stage_of(s) != OFFER or s.contract is None or s.contract.partner != player:
        raise IllegalAction(f"No contract offer awaits your answer. {now_text(s)}")
    return {
        "by": s.names[s.turn],
        "partner": s.names[player],
        "victim": s.names[s.contract.victim],
        "wagers": list(s.contract.wagers),
        "total": sum(s.contract.wagers),
        "private": s.contract.audience is not None,
    }


def passes_text(count: int) -> str:
    """A standing pass as the ``orders`` answer lists it."""
    return "pass next turn" if count == 1 else f"pass next {count} turns"


def _require_turn(s: MiserState, player: int, doing: str) -> None:
    if player == s.turn and stage_of(s) == OFFER:
        assert s.contract is not None
        raise IllegalAction(f"Your contract offer awaits {s.names[s.contract.partner]}'s answer.")
    if player != s.turn:
        raise IllegalAction(f"It is {s.names[s.turn]}'s turn, not yours: you cannot {doing} now.")
    if stage_of(s) != TURN:
        raise IllegalAction(f"Your turn is under way. {now_text(s)}")


def _require_cards(s: MiserState, player: int) -> None:
    if not s.hands[player]:
        raise IllegalAction(
            "You have no cards left, so on your turn you can only pass (write 'pass')."
        )


def _args(action: Action, count: int) -> tuple[JSON, ...]:
    if len(action.args) != count:
        raise IllegalAction(f"I cannot read that {action.verb}; write 'help' for examples.")
    return action.args


# -- bots -----------------------------------------------------------------------------


def _bot_turn(s: MiserState, player: int, rng: Rng) -> Action:
    hand = sort_hand(s.hands[player])
    purse = s.pennies[player]
    if not hand:
        return Action("pass")
    n = len(s.names)
    others = [p for p in range(n) if p != player]
    wager = min(rng.randint(1, s.wager_cap), purse)
    bare = [p for p in others if not s.hands[p]]
    if bare and rng.random() < 0.8:
        return Action("attack", (s.names[rng.choice(bare)], wager))
    roll = rng.random()
    if s.centre >= 6 and roll < 0.4:
        return Action("bid", (hand[-1], min(purse, max(1, s.centre // 3))))
    partners = [p for p in others if s.hands[p]]
    if s.offers == 0 and partners and roll < 0.6:
        partner = rng.choice(partners)
        victim = rng.choice([p for p in others if p != partner])
        yours = min(rng.randint(1, s.wager_cap), s.pennies[partner])
        return Action("contract", (s.names[partner], s.names[victim], wager, yours))
    if roll < 0.85:
        return Action("attack", (s.names[rng.choice(others)], wager))
    return Action("pass")
