"""The sensible bot member of the Land of Agora tournament (rule text 002):
it crafts and trades toward what the revealed instructions reward.

It sees what its member may see (:class:`MemberView`: its own hand, the
instructions the Round Reports published (their words, not their numbers,
rule 5) and those the Dealor revealed to it (with their numbers, rule 8),
and the offers open to it; never another hand or an instruction kept from
it). It scores a hand by the instructions it knows, in order, the ones
known without a number last, and counts each card of an unknown kind of
score a little. Each turn it takes the one action that gains most: it pays
apples for an instruction while some are unknown, crafts or trades when its
known score gains, draws with a spare apple, and keeps at most one offer of
its own open, one card for one of another type, withdrawn once it no longer
pays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from referee.games.base import JSON, Action, Scope
from referee.games.draws import Rng
from referee.games.loatcg.instructions import BASIC, CARD_TYPES, Rule

REVEAL_APPLES = 3  # rule 8: "Discard 3 Apples for the Dealor to Secretly reveal…"
INSTRUCTION_APPLES = 7  # rule 8: "Discard 7 Apples and specify a number<=N"
RECIPES: dict[str, tuple[str, str]] = {
    "steel": ("ore", "lumber"),
    "paper": ("ore", "wool"),
    "fabric": ("lumber", "wool"),
}
#: What a card is taken to be worth under the instructions not yet known,
#: in all: most instruction sets reward holding cards.
UNKNOWN_CARD = 1.0
#: A trade or a craft must gain this much to be worth a turn.
MARGIN = 0.5


@dataclass(frozen=True)
class OfferSeen:
    """An offer open to the member: its number, maker and the two sides."""

    number: int
    maker: int
    give: Mapping[str, int]
    want: Mapping[str, int]
    public: bool


@dataclass(frozen=True)
class MemberView:
    """What one member knows: eir hand and what was told to em or to all."""

    seat: int
    hand: Mapping[str, int]
    #: The instructions e knows the number of (revealed to em, rule 8), in
    #: numerical order, then those a Round Report published whose number e
    #: does not know, in the order of the reports.
    rules: tuple[Rule, ...]
    known_numbers: tuple[int, ...]
    rounds: int  # N, the number of Scoring Instructions (rule 4)
    reports: int  # Round Reports published so far
    offers: tuple[OfferSeen, ...]  # open to em, made by others
    mine: tuple[OfferSeen, ...]  # eir own open offers

    @property
    def unknown(self) -> int:
        """How many instructions e knows nothing of."""
        return max(0, self.rounds - len(self.rules))


def worth(view: MemberView, hand: Mapping[str, int]) -> float:
    """The hand's score by the instructions known, in order, plus a little
    for each card under those not known."""
    counts = {t: int(hand.get(t, 0)) for t in CARD_TYPES}
    total = float(sum(rule.evaluate(counts) for rule in view.rules))
    cards = sum(int(hand.get(t, 0)) for t in CARD_TYPES)
    return total + UNKNOWN_CARD * cards * view.unknown / max(1, view.rounds)


def _with(hand: Mapping[str, int], add: Mapping[str, int] = {},
          take: Mapping[str, int] = {}) -> dict[str, int]:
    out = {t: int(hand.get(t, 0)) for t in CARD_TYPES}
    for t, n in add.items():
        out[t] += n
    for t, n in take.items():
        out[t] -= n
    return out


def _holds(hand: Mapping[str, int], cards: Mapping[str, int]) -> bool:
    return all(hand.get(t, 0) >= n for t, n in cards.items())


def choose_action(view: MemberView, rng: Rng) -> Action:
    """The member's one action this turn."""
    seat, hand = view.seat, view.hand

    def quietly(verb: str, *args: JSON) -> Action:
        return Action(verb, args, Scope.SECRET, frozenset({seat}))

    now = worth(view, hand)
    apples = hand.get("apple", 0)
    if view.unknown:
        unknown = [k for k in range(1, view.rounds + 1) if k not in view.known_numbers]
        if apples >= INSTRUCTION_APPLES and unknown:
            return quietly("instruction", unknown[0])
        if apples >= REVEAL_APPLES:
            return quietly("reveal")
    # Withdraw an offer of eir own that no longer pays.
    for o in view.mine:
        if not _holds(hand, o.give) or worth(view, _with(hand, o.want, o.give)) < now + MARGIN:
            return Action("withdraw", (o.number,), Scope.PUBLIC)
    moves: list[tuple[float, int, Action]] = []
    for kind, need in RECIPES.items():
        if _holds(hand, {t: 1 for t in need}):
            gain = worth(view, _with(hand, {kind: 1}, {t: 1 for t in need})) - now
            moves.append((gain, len(moves), quietly("craft", kind)))
    for o in view.offers:
        if _holds(hand, o.want) and not set(o.give) & set(o.want):
            gain = worth(view, _with(hand, o.give, o.want)) - now
            moves.append((gain, len(moves), Action("execute", (o.number,), Scope.PRIVATE,
                                                   frozenset({o.maker}))))
    if apples and not (view.unknown and apples < REVEAL_APPLES and view.reports < 2):
        # Two basic cards for an apple, on average over the deal (definition C).
        after = [worth(view, _with(hand, {a: 1} if a == b else {a: 1, b: 1}, {"apple": 1}))
                 for a in BASIC for b in BASIC]
        # Keep apples for a reveal while instructions are unknown.
        if not view.unknown or apples > REVEAL_APPLES:
            moves.append((sum(after) / len(after) - now, len(moves), quietly("draw")))
    good = [m for m in moves if m[0] >= MARGIN]
    if good:
        return max(good, key=lambda m: (m[0], -m[1]))[2]
    if not view.mine:
        offer = _offer(view, now)
        if offer is not None:
            return offer
    return quietly("hand")


def _offer(view: MemberView, now: float) -> Action | None:
    """One card e holds for one card of another type, made publicly: the
    pair that gains em most, if any gains enough."""
    hand = view.hand
    best: tuple[float, str, str] | None = None
    for give in CARD_TYPES:
        if not hand.get(give, 0):
            continue
        for want in CARD_TYPES:
            if want == give:
                continue
            gain = worth(view, _with(hand, {want: 1}, {give: 1})) - now
            if gain >= 2 * MARGIN and (best is None or gain > best[0]):
                best = (gain, give, want)
    if best is None:
        return None
    _, give, want = best
    return Action("offer", ({give: 1}, {want: 1}, []), Scope.PUBLIC)
