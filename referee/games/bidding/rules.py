"""The rules of the sealed-bid games: the state, the draw of each prize, a
bid, the resolution of a round, and the totals that win.

One set of rules with options serves rule text 000 (Game of Pure Skill) and
rule text 003 (Goofspiel); each kind sets only its defaults. Each round a
prize is drawn from the referee's pack (the Pot) and shown to everyone,
every player bids one card of their own pack in secret, and the single
highest bid takes the prize. Readings of points the texts leave open are
the rulings G2-* and PS-* (docs/rulings.md), cited where they apply. The
cards are named here too, since the rules' replies and history name them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Protocol

from referee.games.base import (
    EDITION,
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
from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS, SUITS, parse_rank, rank_value_ace_low
from referee.games.draws import Draws

#: 000 rule 4b: "The value of an Ace is 1, a King is 13, a Queen is 12, a
#: Jack is 11, and all other cards' values are their numeric values."
RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
TIE_RULES = ("discard", "carry")
#: How a bot seat plays (``--option bot=...``): ``sensible`` weighs the prize
#: against the cards left (:mod:`referee.games.bidding.bot`), ``random``
#: bids any card of its pack. A game stored before the option plays random.
BOT_PLAYS = ("sensible", "random")
#: PS-5: the players' packs are the hearts, diamonds and clubs, in seat order;
#: the referee's is the spades. The suit has no effect on play.
SEAT_SUITS = ("H", "D", "C")


@dataclass
class RoundRecord:
    """One resolved round, as the public report tells it."""

    number: int
    prize: int
    carried_in: list[int]
    bids: list[int]
    chosen_by_referee: list[bool]
    winner: int | None  # seat position, None on a tie
    won: list[int]  # the cards the winner took, or the pot carried/discarded
    outcome: str  # "won", "discarded", "carried", "discarded-last"
    automatic: bool  # the last round, played from the last cards (G2-10, PS-9)


@dataclass
class BiddingState:
    """A game as it stands: the packs, the Pot, the prize shown, the sealed
    bids of the round, the take piles and the rounds resolved."""

    kind: str
    options: dict[str, JSON]
    names: list[str]
    bots: list[bool]
    packs: list[list[int]]
    pot: list[int]  # the referee's pack of prizes not yet drawn
    round: int = 0
    prize: int | None = None
    carry: list[int] = field(default_factory=list)
    bids: dict[str, int] = field(default_factory=dict)  # sealed: seat -> value
    auto: dict[str, bool] = field(default_factory=dict)  # bid chosen by the referee
    takes: list[list[int]] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)
    history: list[RoundRecord] = field(default_factory=list)
    over: bool = False
    #: Seats whose player left and a bot took over (000 rule 8); not
    #: recorded in a game of edition 1.
    replaced: list[int] = field(default_factory=list)
    #: The edition of the rules the game began under (:attr:`BiddingRules.edition`).
    edition: int = 2


def _evolve(state: BiddingState) -> BiddingState:
    """A copy of ``state`` to change, so :meth:`BiddingRules.apply` never
    mutates its input. Like :func:`referee.games.base.evolve`, but it copies
    only what a move changes: the packs, take piles, pot, carry, discards,
    bids, seats' bots and replacements. The names and options never change,
    and a round's record is never changed once made, so they are shared (a
    deep copy of the history cost most of a bid's rules time)."""
    return replace(
        state,
        bots=list(state.bots),
        packs=[list(p) for p in state.packs],
        pot=list(state.pot),
        carry=list(state.carry),
        bids=dict(state.bids),
        auto=dict(state.auto),
        takes=[list(t) for t in state.takes],
        discards=list(state.discards),
        history=list(state.history),
        replaced=list(state.replaced),
    )


class BiddingMail(Protocol):
    """What the rules ask of the game's views (its Observer,
    :class:`referee.games.bidding.views.BiddingViews`, which the game class
    gives them) for the data of the notices a round sends."""

    def report(self, state: BiddingState, rounds: list[RoundRecord]) -> dict[str, JSON]:
        """The data of the opening mail and of the report of ``rounds``."""
        ...


class BiddingRules(Game[BiddingState]):
    """The rules of Pure Skill and Goofspiel: simultaneous sealed bids for a
    shown prize. The grammar is :mod:`referee.games.bidding.words`; what each
    seat sees, and the data of each mail, :attr:`views`, which the game
    class (:class:`referee.games.bidding.BiddingGame`) gives, with its bot."""

    #: The views that make each notice's data (:class:`BiddingMail`).
    views: BiddingMail

    option_help: ClassVar[Mapping[str, str]] = {
        "players": "how many seats, 2 to 12",
        "cards": "each pack holds the cards 1 to this",
        "tie": "a tie at the top: carry the prize to the next round, or discard it",
        "take_bids": "yes: the winner takes the bid cards too",
        "bots_win": "yes: a bot seat can win",
        "prize_order": "random, ascending, descending, or a list like 5,1,6,4,3,2",
        "bot": "how a bot seat plays: sensible, or random",
    }

    defaults: ClassVar[dict[str, JSON]]
    rule_text: ClassVar[str]
    #: Pure Skill names its cards A 2 ... 10 J Q K; Goofspiel numbers them.
    rank_names: ClassVar[bool]
    #: The rule text has a player who leaves "replaced by a bot who plays
    #: randomly" (000 rule 8, PS-13), whatever the ``bot`` option says.
    replacement_plays_randomly: ClassVar[bool] = False
    #: 2 (2026-11-27): a seat handed to a bot is recorded (``replaced``).
    #: A game of edition 1 has no ``bot`` option, so all its bots bid at
    #: random, and its seats handed to bots are not recorded.
    edition: ClassVar[int] = 2

    # -- setup --------------------------------------------------------------
    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        opts: dict[str, JSON] = {**self.defaults, "bot": "sensible"}
        for key, value in raw.items():
            if key not in opts:
                known = ", ".join(sorted(opts))
                raise OptionError(f"Unknown option {key!r} for {self.kind}; options: {known}.")
            opts[key] = _parse_option(key, value.strip())
        cards = int(opts["cards"])
        order = opts["prize_order"]
        if isinstance(order, list) and sorted(order) != list(range(1, cards + 1)):
            raise OptionError(
                f"prize_order must list each of the cards 1 to {cards} once; got "
                f"{','.join(str(v) for v in order)}."
            )
        return opts

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        n = int(options["players"])
        return n, n

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], draws: Draws
    ) -> Result[BiddingState]:
        n = len(seats)
        cards = int(options["cards"])
        if n != int(options["players"]):
            raise OptionError(f"{self.title} needs {options['players']} players; got {n}.")
        state = BiddingState(
            kind=self.kind,
            options={k: v for k, v in options.items() if k != EDITION},
            edition=self.edition_begun(options),
            names=[s.name for s in seats],
            bots=[s.bot for s in seats],
            packs=[list(range(1, cards + 1)) for _ in seats],
            pot=list(range(1, cards + 1)),
            takes=[[] for _ in seats],
        )
        events = self._next_round(state, draws)
        notice = Notice(Audience.everyone(), "opening", self.views.report(state, []))
        return Result(state, events, [notice])

    def upgrade(self, data: JSON) -> JSON:
        """A state stored before editions were: of edition 1 if it lacks
        ``replaced`` (stored before 2026-11-27), else of edition 2."""
        if isinstance(data, dict) and "edition" not in data:
            return {**data, "edition": 2 if "replaced" in data else 1}
        return data

    # -- play ---------------------------------------------------------------
    def accepts(self, action: Action, scope: Scope) -> None:
        if action.verb == "bid" and scope is not Scope.SECRET:
            raise ScopeError(
                f"A bid must be secret, sent to the referee alone{self._rule('4e')}. "
                "This one also went to the list or to other players, so it was not applied. "
                "Send your bid again in a mail to the referee only."
            )

    def apply(
        self, state: BiddingState, seat: int, action: Action, draws: Draws
    ) -> Result[BiddingState]:
        if action.verb != "bid":
            raise IllegalAction(f"{self.title} has no {action.verb!r} command.")
        if state.over:
            raise IllegalAction("The game is over; there is nothing left to bid for.")
        i = seat - 1
        value = int(action.args[0])
        auto = len(action.args) > 1 and action.args[1] == "referee"
        suit = action.args[1] if len(action.args) > 1 and action.args[1] in SUITS else None
        if str(seat) in state.bids:
            raise IllegalAction(
                f"You have already bid {self._name(state.bids[str(seat)])} in round "
                f"{state.round}, and a bid is final{self._rule('4e')}."
            )
        if value not in state.packs[i] or (suit is not None and suit != self._suit(i)):
            held = self._name(value) + (SUIT_SYMBOLS[suit] if suit else "")
            raise IllegalAction(
                f"You hold no {held}; your pack: {self._cards(state.packs[i])}"
                + (f" ({SUIT_NAMES[own]})." if (own := self._suit(i)) else ".")
            )
        new = _evolve(state)
        new.bids[str(seat)] = value
        new.auto[str(seat)] = auto
        who = "the referee chose" if auto else "sealed"
        events = [
            Event(
                "bid",
                f"{new.names[i]}: bid {who} for round {new.round}",
                public=False,
                data={"seat": seat, "value": value, "auto": auto},
            )
        ]
        reply = f"Your bid of {self._name(value)} for round {new.round} is sealed."
        notices: list[Notice] = []
        if len(new.bids) == len(new.names):
            events += self._resolve(new, draws, notices)
        return Result(new, events, notices, reply)

    def pending(self, state: BiddingState) -> list[Pending]:
        if state.over:
            return []
        return [
            Pending(i + 1, f"round-{state.round}", f"a bid for round {state.round}")
            for i in range(len(state.names))
            if str(i + 1) not in state.bids
        ]

    def timeout_action(self, state: BiddingState, seat: int, draws: Draws) -> Action:
        # 000 rule 4e and PS-8: a card chosen uniformly from the pack.
        rng = self.move_rng(state, seat, draws, "timeout")
        return Action("bid", (rng.choice(sorted(state.packs[seat - 1])), "referee"))

    def follow_orders(self, state: BiddingState, seat: int,
                      orders: Sequence[JSON]) -> FollowedOrders:
        """A standing bid (issue 37) is made in the round whose prize is its
        card, if the seat has not bid yet; it is dropped once its card has
        left the seat's pack, or its prize has been played. The last round
        plays itself (G2-10, PS-9): nothing is forced before it."""
        left: list[JSON] = []
        dropped: list[str] = []
        action: Action | None = None
        i = seat - 1
        if state.over or not 0 <= i < len(state.packs):
            return FollowedOrders(None, [], [])
        for order in orders:
            text = str(order.get("text", ""))
            value, prize = int(order["bid"][0]), int(order["prize"])
            if value not in state.packs[i]:
                dropped.append(f"{text}: {self._name(value)} is no longer in your pack.")
            elif prize != state.prize and prize not in state.pot:
                dropped.append(f"{text}: the prize {self._name(prize)} has been played.")
            elif prize != state.prize:
                left.append(order)
            elif str(seat) in state.bids:
                dropped.append(f"{text}: you had bid in round {state.round} already.")
            elif action is None:
                action = Action("bid", tuple(order["bid"]))
            else:
                dropped.append(f"{text}: another order made your bid for round "
                               f"{state.round}.")
        return FollowedOrders(action, left, dropped)

    def random_bot_action(self, state: BiddingState, seat: int, draws: Draws) -> Action:
        """A card of the pack, each as likely."""
        rng = self.move_rng(state, seat, draws, "bot")
        return Action("bid", (rng.choice(sorted(state.packs[seat - 1])),))

    def bot_at_random(self, state: BiddingState, seat: int) -> bool:
        """A bot in ``seat`` bids at random: the game says so (``bot=random``,
        or a game stored before the option), or the rule text does for a
        player replaced by a bot (000 rule 8)."""
        if state.options.get("bot", "random") == "random":
            return True
        return self.replacement_plays_randomly and seat in state.replaced

    def replace_with_bot(self, state: BiddingState, seat: int) -> Result[BiddingState]:
        new = _evolve(state)
        new.bots[seat - 1] = True
        if new.edition >= 2:
            new.replaced.append(seat)
        how = "bids at random" if self.bot_at_random(new, seat) else "weighs each prize"
        text = f"{new.names[seat - 1]} has left the game; a bot that {how} takes the seat."
        # Everyone is told at once, not only in the next round report.
        notice = Notice(Audience.everyone(), "resign", {
            "name": new.names[seat - 1], "bots_win": bool(new.options["bots_win"]),
            "at_random": self.bot_at_random(new, seat)})
        return Result(new, [Event("resign", text)], [notice], text)

    def is_over(self, state: BiddingState) -> bool:
        return state.over

    def placings(self, state: BiddingState) -> list[Placing] | None:
        """The single highest total wins, the rest lose; no winner on a
        tie (000 rule 4h, 003: "the player with the most points wins")."""
        if not state.over:
            return None
        winner = self.winner(state)
        return winners_first(range(1, len(state.names) + 1), [winner] if winner else [])

    def turn(self, state: BiddingState) -> int:
        """The round whose prize is shown (000 rule 4, 003: the prize is
        turned up, then the bids are taken for it)."""
        return state.round

    # -- rounds ---------------------------------------------------------------
    def _next_round(self, state: BiddingState, draws: Draws) -> list[Event]:
        """Draw the next prize (4d, G2-11) from the pot's cards in ascending
        order (``prize`` keyed by the round); play the forced last round (G2-10)."""
        state.round += 1
        state.bids, state.auto = {}, {}
        order = state.options["prize_order"]
        if order == "random":
            prize = draws.rng("prize", state.round).choice(sorted(state.pot))
        elif order == "ascending":
            prize = min(state.pot)
        elif order == "descending":
            prize = max(state.pot)
        else:
            assert isinstance(order, list)
            prize = int(order[state.round - 1])
        state.pot.remove(prize)
        state.prize = prize
        events = [Event("prize", f"Round {state.round}: the prize is {self._prize(prize)}.")]
        if all(len(p) == 1 for p in state.packs):
            for i, pack in enumerate(state.packs):
                state.bids[str(i + 1)] = pack[0]
                state.auto[str(i + 1)] = False
            events += self._resolve(state, draws, None, automatic=True)
        return events

    def _resolve(
        self,
        state: BiddingState,
        draws: Draws,
        notices: list[Notice] | None,
        automatic: bool = False,
    ) -> list[Event]:
        """Resolve a round whose bids are all in (4f-4g, G2-1 ... G2-4)."""
        assert state.prize is not None
        n = len(state.names)
        bids = [state.bids[str(i + 1)] for i in range(n)]
        for i, b in enumerate(bids):
            state.packs[i].remove(b)
        top = max(bids)
        winners = [i for i, b in enumerate(bids) if b == top]
        take_bids = bool(state.options["take_bids"])
        pot = [state.prize, *state.carry, *(bids if take_bids else [])]
        carried_in = list(state.carry)
        if not take_bids:
            state.discards += bids
        last = state.round == int(state.options["cards"])
        winner: int | None = None
        if len(winners) == 1:
            winner = winners[0] + 1
            state.takes[winners[0]] += pot
            state.carry = []
            outcome = "won"
        elif state.options["tie"] == "carry" and not last:
            state.carry = pot
            outcome = "carried"
        else:
            state.discards += pot
            state.carry = []
            outcome = "discarded-last" if last and state.options["tie"] == "carry" else "discarded"
        record = RoundRecord(
            number=state.round,
            prize=state.prize,
            carried_in=carried_in,
            bids=bids,
            chosen_by_referee=[state.auto.get(str(i + 1), False) for i in range(n)],
            winner=winner,
            won=pot,
            outcome=outcome,
            automatic=automatic,
        )
        state.history.append(record)
        state.prize = None
        events = [Event("round", self._round_text(state, record))]
        resolved = [record]
        if last:
            state.over = True
        else:
            events += self._next_round(state, draws)
            if state.history[-1] is not record:
                resolved.append(state.history[-1])
        if notices is not None:
            notices.append(
                Notice(Audience.everyone(), "round_report", self.views.report(state, resolved))
            )
        return events

    def _round_text(self, state: BiddingState, r: RoundRecord) -> str:
        """The round's line in the history: its bids and outcome (4g)."""
        bids = ", ".join(
            f"{state.names[i]} {self._name(b)}" for i, b in enumerate(r.bids)
        )
        if r.outcome == "won":
            assert r.winner is not None
            end = f"{state.names[r.winner - 1]} takes {self._cards(r.won)} ({sum(r.won)})"
        elif r.outcome == "carried":
            end = f"tie: the pot ({sum(r.won)}) carries over"
        else:
            end = f"tie: {self._cards(r.won)} discarded"
        return f"Round {r.number}, prize {self._prize(r.prize)}: {bids}; {end}."

    # -- the totals -----------------------------------------------------------
    def scores(self, state: BiddingState) -> list[int]:
        return [sum(t) for t in state.takes]

    def winner(self, state: BiddingState) -> int | None:
        """The single highest total among those who may win (4h, PS-10, PS-11, G2-5)."""
        if not state.over:
            return None
        scores = self.scores(state)
        eligible = self._may_win(state)
        if not eligible:
            return None
        best = max(scores[i] for i in eligible)
        top = [i for i in eligible if scores[i] == best]
        return top[0] + 1 if len(top) == 1 else None

    def clinched(self, state: BiddingState) -> int | None:
        """A seat whose lead no longer can be caught (G2-7: a fact, not a stop)."""
        if state.over:
            return None
        scores = self.scores(state)
        at_stake = sum(state.pot) + sum(state.carry) + (state.prize or 0)
        if state.options["take_bids"]:
            at_stake += sum(sum(p) for p in state.packs)
        # Only those who may win can clinch, or be caught by (PS-11).
        order = sorted(self._may_win(state), key=lambda i: -scores[i])
        if not order:
            return None
        lead, rest = order[0], order[1:]
        if all(scores[lead] > scores[j] + at_stake for j in rest):
            return lead + 1
        return None

    @staticmethod
    def _may_win(state: BiddingState) -> list[int]:
        """The seat indexes whose totals count for the win (4h and PS-11)."""
        bots_win = state.options["bots_win"]
        return [i for i, bot in enumerate(state.bots) if bots_win or not bot]

    # -- names of rules and cards ---------------------------------------------
    def _rule(self, number: str) -> str:
        """" (rule 4e)" in Pure Skill; Goofspiel's rule text has no numbers."""
        return f" (rule {number})" if self.rule_text == "000" else ""

    def _name(self, value: int) -> str:
        return RANK_NAMES.get(value, str(value)) if self._ranks() else str(value)

    def _ranks(self) -> bool:
        return self.rank_names

    def _suit(self, i: int) -> str | None:
        """The suit of seat index ``i``'s pack (PS-5); Goofspiel's cards have none."""
        return SEAT_SUITS[i] if self._ranks() and i < len(SEAT_SUITS) else None

    def _cards(self, values: Sequence[int]) -> str:
        return " ".join(self._name(v) for v in sorted(values)) or "(none)"

    def _prize(self, value: int) -> str:
        if self._ranks():
            return f"{self._name(value)}♠ ({value} point{'s' if value != 1 else ''})"
        return f"{value}"


def _parse_option(key: str, value: str) -> JSON:
    """Read one option's text, naming the key and the allowed values on error."""
    if key in ("players", "cards"):
        try:
            n = int(value)
        except ValueError:
            raise OptionError(f"Option {key} must be a whole number; got {value!r}.") from None
        # One card would leave nothing to choose: the only round plays itself.
        low, high = (2, 12) if key == "players" else (2, 13)
        if not low <= n <= high:
            raise OptionError(f"Option {key} must be from {low} to {high}; got {n}.")
        return n
    if key == "bot":
        if value not in BOT_PLAYS:
            raise OptionError(f"Option bot must be sensible or random; got {value!r}.")
        return value
    if key == "tie":
        if value not in TIE_RULES:
            raise OptionError(f"Option tie must be discard or carry; got {value!r}.")
        return value
    if key in ("take_bids", "bots_win"):
        truth = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}
        if value.lower() not in truth:
            raise OptionError(f"Option {key} must be yes or no; got {value!r}.")
        return truth[value.lower()]
    if key == "prize_order":
        if value in ("random", "ascending", "descending"):
            return value
        out: list[int] = []
        for word in value.split(","):
            rank = parse_rank(word)
            if rank is None:
                raise OptionError(
                    "Option prize_order must be random, ascending, descending or a list "
                    f"of cards such as 5,1,6,4,3,2; could not read {word!r}."
                )
            out.append(rank_value_ace_low(rank))
        return out
    raise OptionError(f"Unknown option {key!r}.")
