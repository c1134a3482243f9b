"""The rules of High Card, its command grammar and what each seat sees.

A game is a value-in, value-out state machine (``referee.games.base``): no
mail, no clock, no global random. The deal draws from ``draws.rng("deal")``,
a move the referee makes for a late player from ``move_rng``, so the
referee replays a game from its seed and action log, and ``referee verify``
checks it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from referee.games.base import (
    JSON,
    Action,
    Audience,
    DeadlineMove,
    Event,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    ParseError,
    Pending,
    Placing,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
    evolve,
    winners_first,
)
from referee.games.cards import SUITS, Card, full_deck, rank_value_ace_high
from referee.games.draws import Draws

#: Hand sizes the option ``cards`` takes.
CARDS = range(2, 11)
#: The most players: six hands of ten cards fit a deck.
MOST_PLAYERS = 5


@dataclass
class Round:
    """One round played: each seat's card, and the seat that took it."""

    number: int
    cards: list[str]
    by_referee: list[bool]
    winner: int


@dataclass
class HighCardState:
    """The hands (each its seat's secret), the cards sealed this round, the
    rounds taken and the rounds played."""

    options: dict[str, JSON]
    names: list[str]
    bots: list[bool]
    hands: list[list[str]]
    round: int = 1
    #: Sealed until every card of the round is in: seat -> card.
    sealed: dict[str, str] = field(default_factory=dict)
    by_referee: dict[str, bool] = field(default_factory=dict)
    taken: list[int] = field(default_factory=list)
    history: list[Round] = field(default_factory=list)
    over: bool = False


def strength(card: str) -> tuple[int, int]:
    """How high a card is: its rank (ace high), then its suit (S, H, D, C)."""
    c = Card.parse(card)
    assert c is not None
    return rank_value_ace_high(c.rank), -SUITS.index(c.suit)


class HighCard(Game[HighCardState]):
    """High Card: a sealed card a round, the highest takes it."""

    kind = "highcard"
    title = "High Card"
    state_type: ClassVar[type] = HighCardState
    # The mails are in this package's templates/ folder.
    templates_package: ClassVar[str] = "pbm_highcard"
    turn_word: ClassVar[str] = "round"
    verbs: ClassVar[frozenset[str]] = frozenset({"play"})
    option_help: ClassVar[Mapping[str, str]] = {"cards": "cards in each hand, 2 to 10"}

    _PLAY = re.compile(r"^(?:i\s+)?play\s*[:=]?\s*(?:the\s+)?(.*?)[.!]*$", re.I)

    # -- setup --------------------------------------------------------------
    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"cards": 5}
        for key, value in raw.items():
            if key != "cards":
                raise OptionError(f"Unknown option {key!r} for High Card; options: cards.")
            if not value.strip().isdigit() or int(value) not in CARDS:
                raise OptionError(f"Option cards must be from {CARDS[0]} to {CARDS[-1]}; "
                                  f"got {value!r}.")
            options["cards"] = int(value)
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        return 2, MOST_PLAYERS

    def new(self, options: Mapping[str, JSON], seats: Sequence[SeatInfo],
            draws: Draws) -> Result[HighCardState]:
        deck = [str(c) for c in full_deck()]
        draws.rng("deal").shuffle(deck)
        size = int(options["cards"])
        hands = [sorted(deck[i * size:(i + 1) * size], key=strength, reverse=True)
                 for i in range(len(seats))]
        state = HighCardState(dict(options), [s.name for s in seats], [s.bot for s in seats],
                              hands, taken=[0] * len(seats))
        notices = [Notice(Audience.everyone(), "opening", self.view(state, None)),
                   *self._hands(state)]
        return Result(state, [Event("deal", f"{size} cards dealt to each player.")], notices)

    # -- play ---------------------------------------------------------------
    def parse(self, line: str) -> Action | None:
        m = self._PLAY.match(line.strip())
        if not m:
            return None
        card = Card.parse(m.group(1))
        if card is None:
            raise ParseError(f"I could not read {m.group(1)!r} as a card; write it like "
                             "'play QH' or 'play queen of hearts'.")
        return Action("play", (str(card),))

    def read_as(self, action: Action) -> str:
        return f"play {action.args[0]}" if action.verb == "play" else super().read_as(action)

    def accepts(self, action: Action, scope: Scope) -> None:
        if action.verb == "play" and scope is not Scope.SECRET:
            raise ScopeError("A card is sealed: send it to the referee alone, not to the "
                             "other players. This one was not played; send it again.")

    def apply(self, state: HighCardState, seat: int, action: Action,
              draws: Draws) -> Result[HighCardState]:
        if action.verb != "play":
            raise IllegalAction(f"High Card has no {action.verb!r} command.")
        if state.over:
            raise IllegalAction("The game is over.")
        card = str(action.args[0])
        if str(seat) in state.sealed:
            raise IllegalAction(f"You have played {state.sealed[str(seat)]} in round "
                                f"{state.round} already; a card played is final.")
        if card not in state.hands[seat - 1]:
            raise IllegalAction(f"You hold no {card}; your hand: "
                                f"{' '.join(state.hands[seat - 1])}.")
        new = evolve(state)
        new.hands[seat - 1].remove(card)
        new.sealed[str(seat)] = card
        new.by_referee[str(seat)] = len(action.args) > 1 and action.args[1] == "referee"
        events = [Event("play", f"{new.names[seat - 1]} played a card for round {new.round}",
                        public=False, data={"seat": seat, "card": card})]
        notices: list[Notice] = []
        if len(new.sealed) == len(new.names):
            events.append(self._resolve(new))
            notices.append(Notice(Audience.everyone(), "round_report", self.view(new, None)))
            if not new.over:
                notices += self._hands(new)
        return Result(new, events, notices, f"Your {card} for round {state.round} is sealed.")

    def _resolve(self, state: HighCardState) -> Event:
        """Every card is in: the highest takes the round."""
        cards = [state.sealed[str(seat)] for seat in range(1, len(state.names) + 1)]
        winner = max(range(len(cards)), key=lambda i: strength(cards[i])) + 1
        state.taken[winner - 1] += 1
        state.history.append(Round(state.round, cards, [state.by_referee.get(str(s), False)
                                                        for s in range(1, len(cards) + 1)],
                                   winner))
        text = (f"Round {state.round}: " + ", ".join(
            f"{name} {card}" for name, card in zip(state.names, cards, strict=True))
            + f"; {state.names[winner - 1]} takes it.")
        state.sealed, state.by_referee = {}, {}
        if not state.hands[0]:
            state.over = True
        else:
            state.round += 1
        return Event("round", text)

    def _hands(self, state: HighCardState) -> list[Notice]:
        """Each player's hand, to that player alone."""
        return [Notice(Audience.only(seat), "hand", self.view(state, seat))
                for seat in range(1, len(state.names) + 1) if not state.bots[seat - 1]]

    def pending(self, state: HighCardState) -> list[Pending]:
        if state.over:
            return []
        return [Pending(seat, f"round-{state.round}", f"a card for round {state.round}")
                for seat in range(1, len(state.names) + 1) if str(seat) not in state.sealed]

    def timeout_action(self, state: HighCardState, seat: int, draws: Draws) -> Action:
        rng = self.move_rng(state, seat, draws, "timeout")
        return Action("play", (rng.choice(state.hands[seat - 1]), "referee"))

    def deadline_move(self, before: HighCardState, seat: int, action: Action,
                      result: Result[HighCardState]) -> DeadlineMove:
        """How the table and the seat are told of the card the referee
        played for a late player: the table learns the card with the round,
        the seat now."""
        return DeadlineMove("card", "played a card drawn at random from {their} hand for {them}",
                            did_secret=f"played {action.args[0]} for {{them}}, drawn at random "
                                       "from {their} hand")

    def bot_action(self, state: HighCardState, seat: int, draws: Draws) -> Action:
        rng = self.move_rng(state, seat, draws, "bot")
        return Action("play", (rng.choice(state.hands[seat - 1]),))

    def replace_with_bot(self, state: HighCardState, seat: int) -> Result[HighCardState]:
        new = evolve(state)
        new.bots[seat - 1] = True
        name = new.names[seat - 1]
        return Result(new, [Event("resign", f"{name} has left; a bot plays the seat.")],
                      [Notice(Audience.everyone(), "resign", {"name": name})])

    def is_over(self, state: HighCardState) -> bool:
        return state.over

    def placings(self, state: HighCardState) -> list[Placing] | None:
        """For the club's standings: the winner first, the rest second; all
        tied when nobody wins."""
        if not state.over:
            return None
        winner = self.winner(state)
        return winners_first(range(1, len(state.names) + 1), [winner] if winner else [])

    def turn(self, state: HighCardState) -> int:
        return state.round

    # -- what people see ----------------------------------------------------
    def winner(self, state: HighCardState) -> int | None:
        """The seat with the most rounds taken, once over; None on a tie."""
        best = max(state.taken)
        top = [i + 1 for i, n in enumerate(state.taken) if n == best]
        return top[0] if state.over and len(top) == 1 else None

    def view(self, state: HighCardState, seat: int | None) -> dict[str, JSON]:
        winner = self.winner(state)
        view: dict[str, JSON] = {
            "title": self.title,
            "round": state.round,
            "rounds": int(state.options["cards"]),
            "players": [{"seat": i + 1, "name": name, "bot": state.bots[i],
                         "taken": state.taken[i], "played": str(i + 1) in state.sealed}
                        for i, name in enumerate(state.names)],
            "history": [{"number": r.number, "winner": state.names[r.winner - 1],
                         "cards": [{"name": state.names[i], "card": c,
                                    "by_referee": r.by_referee[i]}
                                   for i, c in enumerate(r.cards)]}
                        for r in state.history],
            "over": state.over,
            "winner": state.names[winner - 1] if winner else None,
        }
        if seat is not None:
            view["hand"] = list(state.hands[seat - 1])
            view["my_card"] = state.sealed.get(str(seat))
        return view

    def help(self, state: HighCardState, seat: int | None) -> str:
        if state.over:
            return "The game is over; the last round report has the result."
        lines = [f"Round {state.round} of {state.options['cards']}."]
        if seat is not None:
            hand = state.hands[seat - 1]
            lines.append(f"Your hand: {' '.join(hand)}.")
            if str(seat) in state.sealed:
                lines.append(f"You have played {state.sealed[str(seat)]}; wait for the report.")
            else:
                lines.append(f"Play one card, to the referee alone, for example:\n\n"
                             f"  play {hand[0]}\n")
        return "\n".join(lines)

    def summary(self, state: HighCardState) -> dict[str, JSON]:
        winner = self.winner(state)
        return {"round": state.round,
                "scores": dict(zip(state.names, state.taken, strict=True)),
                "result": (None if not state.over else
                           f"{state.names[winner - 1]} wins" if winner else "no winner")}

    def status(self, state: HighCardState) -> str:
        taken = ", ".join(f"{n} {t}" for n, t in zip(state.names, state.taken, strict=True))
        if state.over:
            winner = self.winner(state)
            result = f"{state.names[winner - 1]} wins." if winner else "a tie: no winner."
            return f"The game is over: {result}\nRounds taken: {taken}."
        sealed = [state.names[int(s) - 1] for s in sorted(state.sealed)]
        return "\n".join([f"Round {state.round} of {state.options['cards']}.",
                          f"Rounds taken: {taken}.",
                          *([f"Cards are in from {', '.join(sealed)}."] if sealed else [])])

    def asks(self, state: HighCardState, seat: int) -> str | None:
        return "your card" if any(p.seat == seat for p in self.pending(state)) else None

