"""What each seat and the public may see of a sealed-bid game, and the data
of its mails (the opening, the round report) and of ``referee status``.

Bids are sealed until their round resolves, then everything is public
(ruling PS-12, docs/rulings.md; G2-9): a seat's view adds only its own bid
of the round being played. Totals are shown beside what is still in the
hands and the carried pot, apart (G2-6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import JSON, Action, Course, IllegalAction, PageTable
from referee.games.bidding.bot import BidderView
from referee.games.bidding.rules import BiddingRules, BiddingState, RoundRecord
from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS


class BiddingViews:
    """The views of the sealed-bid games: OpenSpiel's Observer, an object the
    game holds. It is given each state to show, and the rules it shows it
    by (:class:`~referee.games.bidding.rules.BiddingRules`: the kind's
    names of cards, the totals, who wins); it makes the data of the mails
    the rules send (:class:`~referee.games.bidding.rules.BiddingMail`) and
    what a bot sees."""

    def __init__(self, rules: BiddingRules) -> None:
        self.rules = rules

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        """The game as its table for its page (:func:`bidding_page`)."""
        return bidding_page(view, events)


    def report(self, state: BiddingState, rounds: list[RoundRecord]) -> dict[str, JSON]:
        view = self.view(state, None)
        view["rounds"] = [self._record_view(state, r) for r in rounds]
        return view

    def _record_view(self, state: BiddingState, r: RoundRecord) -> dict[str, JSON]:
        return {
            "number": r.number,
            "prize": self.rules._prize(r.prize),
            "carried_in": self.rules._cards(r.carried_in),
            "carried_in_points": sum(r.carried_in),
            "bids": [
                {
                    "name": state.names[i],
                    "card": self.rules._name(b),
                    "by_referee": r.chosen_by_referee[i],
                    "bot": state.bots[i],
                    "bot_random": self.rules.bot_at_random(state, i + 1),
                }
                for i, b in enumerate(r.bids)
            ],
            "winner": state.names[r.winner - 1] if r.winner else None,
            "won": self.rules._cards(r.won),
            "won_points": sum(r.won),
            "outcome": r.outcome,
            "automatic": r.automatic,
        }

    def view(self, state: BiddingState, seat: int | None) -> dict[str, JSON]:
        scores = self.rules.scores(state)
        winner = self.rules.winner(state)
        clinched = self.rules.clinched(state)
        players = [
            {
                "seat": i + 1,
                "name": state.names[i],
                "bot": state.bots[i],
                "bot_random": self.rules.bot_at_random(state, i + 1),
                "score": scores[i],
                "take": self.rules._cards(sorted(state.takes[i])),
                "pack": self.rules._cards(state.packs[i]),
                "has_bid": str(i + 1) in state.bids,
                "suit": SUIT_NAMES[suit] if (suit := self.rules._suit(i)) else None,
            }
            for i in range(len(state.names))
        ]
        view: dict[str, JSON] = {
            "kind": state.kind,
            "title": self.rules.title,
            "rule_text": self.rules.rule_text,
            "round": state.round,
            "rounds": [],
            "total_rounds": int(state.options["cards"]),
            "prize": self.rules._prize(state.prize) if state.prize is not None else None,
            "prize_value": state.prize,
            "carry": self.rules._cards(state.carry),
            "carry_points": sum(state.carry),
            "in_hands": sum(state.pot) + sum(sum(p) for p in state.packs) + (state.prize or 0),
            "players": players,
            "over": state.over,
            "winner": state.names[winner - 1] if winner else None,
            "clinched": state.names[clinched - 1] if clinched else None,
            "tie_rule": state.options["tie"],
            "take_bids": state.options["take_bids"],
            "bots_win": state.options["bots_win"],
            "prize_order": state.options["prize_order"],
            "card_range": self._range_text(int(state.options["cards"])),
            "example_bid": self.rules._name(min(3, int(state.options["cards"]))),
            # The rounds resolved so far, bids and all: public once resolved (PS-12).
            "played": [self._record_view(state, r) for r in state.history],
        }
        if seat is not None and str(seat) in state.bids:
            view["my_bid"] = self.rules._name(state.bids[str(seat)])
        return view

    def summary(self, state: BiddingState) -> dict[str, JSON]:
        winner = self.rules.winner(state)
        return {
            "round": state.round,
            "prize": self.rules._prize(state.prize) if state.prize is not None else None,
            "scores": {state.names[i]: s for i, s in enumerate(self.rules.scores(state))},
            "waiting_for": [state.names[p.seat - 1] for p in self.rules.pending(state)],
            "result": (
                None if not state.over
                else f"{state.names[winner - 1]} wins" if winner else "no winner"
            ),
        }

    def status(self, state: BiddingState) -> str:
        """The round and its prize, the carried pot, each total in points and
        who has sealed a bid (never what: PS-12, G2-9); the result once over."""
        scores = self.rules.scores(state)
        totals = ", ".join(f"{name}{' (bot)' if bot else ''} {score}" for name, bot, score
                           in zip(state.names, state.bots, scores, strict=True))
        if state.over:
            winner = self.rules.winner(state)
            result = (f"{state.names[winner - 1]} wins." if winner else
                      "no single player has the highest total, so there is no winner.")
            return (f"The game is over after {len(state.history)} rounds: {result}\n"
                    f"Final points: {totals}.")
        lines = [f"Round {state.round} of {state.options['cards']}: the prize is "
                 f"{self.rules._prize(state.prize or 0)}."]
        if state.carry:
            lines.append(f"Carried over from tied rounds: {self.rules._cards(state.carry)} "
                         f"({sum(state.carry)} points), to this round's winner.")
        lines.append(f"Points: {totals}.")
        if (clinched := self.rules.clinched(state)) is not None:
            lines.append(f"{state.names[clinched - 1]} has clinched the game: nobody can "
                         "catch up now.")
        sealed = [state.names[i] for i in range(len(state.names)) if str(i + 1) in state.bids]
        if sealed:
            lines.append(f"Sealed bids are in from {', '.join(sealed)}.")
        return "\n".join(lines)

    def _range_text(self, top: int) -> str:
        if self.rules._ranks():
            return f"A (1) to {self.rules._name(top)} ({top})"
        return f"1 to {top}"

    def bidder_view(self, state: BiddingState, seat: int) -> BidderView:
        """What ``seat`` knows when it bids: the public state and its own
        pack, never another seat's sealed bid."""
        if state.prize is None:
            raise IllegalAction("There is no prize to bid for now.")
        scores = self.rules.scores(state)
        return BidderView(
            prize=state.prize,
            carry=tuple(state.carry),
            pot=tuple(sorted(state.pot)),
            own=tuple(sorted(state.packs[seat - 1])),
            others=tuple(tuple(sorted(p)) for i, p in enumerate(state.packs) if i != seat - 1),
            take_bids=bool(state.options["take_bids"]),
            carries=state.options["tie"] == "carry",
            lead=(scores[seat - 1] - sum(scores) + scores[seat - 1]) if len(scores) == 2 else 0,
        )


    def receipt(self, state: BiddingState, seat: int, moves: Sequence[Action]) -> str:
        """A sealed bid answered at once, to its maker alone: its value and
        round, how many of the round's bids are in, who is still to bid (a
        view for everyone shows that much: ``status``), and that the round
        is resolved when the last is in or at the deadline."""
        n = len(state.names)
        bid = state.bids.get(str(seat))
        if state.over or bid is None:
            return "Your bid is in."
        waiting = [state.names[i] for i in range(n) if str(i + 1) not in state.bids]
        said = [f"Your bid of {self.rules._name(bid)} for round {state.round} is in, sealed; "
                f"{len(state.bids)} of {n} bids are in."]
        if waiting:
            said.append(f"Still to bid: {', '.join(waiting)}. When the last bid is in, or "
                        "at the deadline, the round is resolved and its report comes to you.")
        return " ".join(said)

    def asks(self, state: BiddingState, seat: int) -> str | None:
        """Every seat bids each round."""
        return "your bid" if any(p.seat == seat for p in self.rules.pending(state)) else None


# -- the game's public page ------------------------------------------------------

View = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]


def bidding_page(view: View, events: Events) -> PageTable:
    """Goofspiel and Pure Skill (rule texts 003, 000): the prize, each
    player's points, prizes won and cards left; the rounds resolved."""
    played = view.get("played", [])
    players = [{**p, "take": _words(p["take"]), "pack": _words(p["pack"]),
                "symbol": _symbol(p["suit"])} for p in view["players"]]
    names = [p["name"] for p in view["players"]]
    totals = [0] * len(names)
    course: list[list[int | None]] = [[0] for _ in names]
    for r in played:
        if r["winner"] is not None:
            totals[names.index(r["winner"])] += r["won_points"]
        for i, t in enumerate(totals):
            course[i].append(t)
    data = {
        "round": view["round"], "total_rounds": view["total_rounds"],
        "prize": None if view["over"] else view["prize"],
        "carry": _words(view["carry"]), "carry_points": view["carry_points"],
        "players": players, "played": list(reversed(played)),
        "winner": view["winner"], "clinched": view["clinched"], "over": view["over"],
        "tie_rule": view["tie_rule"], "take_bids": view["take_bids"],
    }
    labels = ["start", *(str(r["number"]) for r in played)]
    return PageTable(data, Course("Points after each round", "points", labels,
                                  list(zip(names, course, strict=True))))


def _words(text: str) -> list[str]:
    """A view's list of cards as words (``"1 2 5"``; ``"(none)"`` for none)."""
    return [] if text.startswith("(") else text.split()


def _symbol(suit_name: str | None) -> str | None:
    by_name = {name: SUIT_SYMBOLS[code] for code, name in SUIT_NAMES.items()}
    return by_name.get(suit_name) if suit_name else None
