"""The contract every engine owes, as seeded random playouts driven the way
the service drives a game (OpenSpiel's ``random_sim_test``), checking at
each step that

* replaying the seed and the action log gives the same state
  (``Reading.replay``): ``replay``;
* ``pending`` is empty exactly when the game is over, and ``placings``
  rank every seat once then and never before: ``pending``;
* every ``timeout_action`` and ``bot_action`` of a pending obligation
  applies, and a seat's timeout can be said (``deadline_move``): ``legal``;
* no view or notice for the public or another seat holds a seat's secret:
  ``secrets``;
* ``apply`` (and ``replace_with_bot``) never changes the state it is given:
  ``pure``;
* every playout ends within its bound: ``ends``.

What the contract cannot say of a game (its options and seat counts, and
what is secret in its state) is its :class:`Contract`, which reads the
state's JSON (``Game.dump``), never its classes.

Secrets are checked three ways, each catching what the others cannot:

* by value: the strings of ``Contract.secrets`` (a card in a hand, a salt, an
  instruction's line) are never a whole string, key or value, of what an
  audience outside the secret's seat is shown;
* views by noninterference: what an observer is shown of a state does not
  change when everything the observer may not see (``Contract.hide``) is
  drawn again, which catches a sealed bid or a hand's counts, numbers no
  value can tell from a score;
* steps by noninterference: a step taken again in a twin world that differs
  only in what neither the observer nor the mover may know (another RNG, for
  a deal; or the rest hidden drawn again, with another move of the same form
  for a move the rules take only in secret, a sealed bid) shows the observer
  the same notices, unless the outcome differs in what the observer may know
  (the step revealed something, as a round's resolution does).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    JSON,
    Action,
    EngineError,
    Game,
    Notice,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
)
from referee.games.cards import SUIT_SYMBOLS
from referee.games.draws import Draws, KeyedDraws, SequentialDraws

#: An observer: a seat, or None for the public.
Observer = int | None
#: The seats whose knowledge a twin world keeps (none: the public's).
Knowing = frozenset[int]
#: A secret, as the strings it may be written as (``QH`` and ``Q♥``).
Secret = frozenset[str]
#: Each seat's secrets, which nobody else may be shown. Seat 0 holds what
#: nobody may be shown at all (the Dealor's salt, the cards removed unseen).
Secrets = dict[int, list[Secret]]

DAY = 24 * 60 * 60
#: The service's deadline for an obligation with no ``due_in`` of its own.
DEADLINE = 3 * DAY
#: How often, a day, a player who owes a move writes in (so about half the
#: moves owed are made by the deadline sweep), a player who owes nothing (a
#: tournament's member) writes in, and a newcomer deals themselves in.
OWING_MAILS, FREE_MAILS, JOINS = 0.25, 1.0, 0.25


def no_secrets(state: JSON) -> Secrets:
    """A game with nothing hidden: every seat sees the whole state."""
    return {}


def nothing_hidden(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """A game with nothing hidden: there is nothing to draw again."""
    return state


@dataclass(frozen=True)
class Contract:
    """What the contract cannot say of a game: how to set up its playouts,
    and what is secret in its state (docs/plugins.md)."""

    #: Raw ``--option`` pairs and a seat count, taken in turn by the playouts.
    setups: tuple[tuple[Mapping[str, str], int], ...]
    #: How many seeded playouts to run (each seed ``contract-KIND-N``).
    playouts: int = 8
    #: The most steps a playout may take: the game must be over by then.
    steps: int = 1000
    #: Each seat's secrets in a dumped state (:data:`Secrets`): seat -> the
    #: secrets only that seat may be shown; seat 0: what nobody may be shown.
    secrets: Callable[[JSON], Secrets] = no_secrets
    #: A dumped state with all that none of the ``knowing`` seats may see
    #: drawn again with ``rng`` (to the public, every secret); for a game
    #: with secrets it must draw every one of them again, hands and sealed
    #: moves alike, or the noninterference checks see nothing.
    hide: Callable[[JSON, Knowing, random.Random], JSON] = nothing_hidden
    #: The game by mail (:func:`referee.testing.play_by_mail`): its raw
    #: options, the players who write in, and the seats bots play (who move
    #: within the pass, so a long game takes fewer passes); None: the first
    #: of ``setups``, every seat a player.
    by_mail: tuple[Mapping[str, str], int, int] | None = None


def card_names(cards: Sequence[str]) -> list[Secret]:
    """Cards as the referee's games write them (``QH`` and ``Q♥``), each a
    :data:`Secret`."""
    return [frozenset({c, c[:-1] + SUIT_SYMBOLS[c[-1]]}) for c in cards]


def deal_again(rng: random.Random, places: Sequence[list[Any]]) -> None:
    """Shuffle the cards of ``places`` among them, each keeping its size
    (the hands a ``hide`` draws again)."""
    cards = [c for place in places for c in place]
    rng.shuffle(cards)
    for place in places:
        place[:], cards = cards[: len(place)], cards[len(place) :]


# -- what an observer is shown ----------------------------------------------------


def looks(engine: Game[Any], state: Any, observer: Observer) -> dict[str, JSON]:
    """What ``observer`` is shown of ``state``: the public gets the view for
    None, the summary, the status a player's ``status`` shows, and the public
    view (whose ``shown`` rows start with the seat and key of the operator's
    deadline row, lookup keys the public never sees, so only the seat and
    words shown are kept); a seat, its view."""
    if observer is not None:
        return {"view": engine.view(state, observer)}
    public = engine.public_view(state)
    return {"view": engine.view(state, None), "summary": engine.summary(state),
            "status": engine.status(state),
            "public_view": {**public, "shown": [row[2:] for row in public["shown"]]}}


def text(value: JSON) -> str:
    """A JSON value as text, in which a secret is looked for as a whole
    string (``"QH"``, quotes included), never inside another."""
    return json.dumps(value, ensure_ascii=False)


def sees(notice: Notice, observer: Observer) -> bool:
    return notice.audience.public or (observer is not None and observer in notice.audience.seats)


def shown_to(result: Result[Any], observer: Observer) -> list[JSON]:
    """The notices of a step that reach ``observer``, and for the public the
    public events (the game's page)."""
    out: list[JSON] = [
        {"template": n.template, "to": sorted(n.audience.seats) if n.audience.seats else "all",
         "context": dict(n.context)} for n in result.notices if sees(n, observer)]
    if observer is None:
        out += [{"event": e.kind, "text": e.text, "data": dict(e.data)}
                for e in result.events if e.public]
    return out


# -- a playout, driven as GameSession drives a game -------------------------------


INVARIANTS = ("replay", "pending", "legal", "secrets", "pure", "ends")


@dataclass
class Findings:
    """What broke the contract, by invariant (the first few of each)."""

    found: dict[str, list[str]] = field(default_factory=lambda: {i: [] for i in INVARIANTS})

    def add(self, invariant: str, what: str) -> None:
        if len(self.found[invariant]) < 5:
            self.found[invariant].append(what)


@dataclass
class SeatRow:
    """A seat as the service's row holds it."""

    position: int
    name: str
    bot: bool
    #: A bot from the start: ``Reading.replay`` gives ``new`` its flag.
    born_bot: bool
    #: Dealt in by mail after the start, so not given to ``new``.
    joined: bool = False


class Playout:
    """One seeded game to its end. Each step is logged as the service logs
    it; bots move at once on an obligation without ``due_in``; every other
    obligation is fired by the deadline sweep when it falls due; players write
    in at random times (their move is a random bot's choice, or an old move
    again, by a random scope), some resign and, where the game takes members
    by mail, some deal themselves in."""

    def __init__(self, engine: Game[Any], contract: Contract, number: int, findings: Findings,
                 stop_at: str | None = None) -> None:
        self.engine, self.row, self.findings = engine, contract, findings
        self.stop_at = stop_at
        kind = engine.kind
        self.seed = f"contract-{kind}-{number}"
        self.rng = random.Random(self.seed)
        raw, count = self.row.setups[number % len(self.row.setups)]
        self.options = engine.parse_options(raw)
        low, high = engine.seat_count(self.options)
        assert low <= count <= high, f"{kind}: the Contract seats {count} players, not {low}-{high}"
        bots = self.rng.random() < 0.5
        self.seats = [SeatRow(p, f"Player {p}", b, b) for p in range(1, count + 1)
                      for b in [bots and self.rng.random() < 0.4]]
        #: In odd playouts players resign now and then, and resend old moves.
        self.erratic = number % 2 == 1
        self.log: list[tuple[int, int, JSON]] = []
        self.step, self.clock = 0, 0.0
        self.since: dict[tuple[int, str], float] = {}
        self.shown: dict[Observer, str] = {}
        #: A move the game owes was refused: the playout cannot go on.
        self.stuck = False
        infos = [SeatInfo(s.position, s.name, s.bot) for s in self.seats]
        result = engine.new(self.options, infos, KeyedDraws(self.seed))
        self.json = engine.dump(result.state)
        self.check_notices(result, self.json, "")
        self.state = engine.load(self.json)
        self.settle()

    def stopped(self) -> bool:
        return self.stop_at is not None and bool(self.findings.found[self.stop_at])

    def observers(self) -> list[Observer]:
        return [None, *(s.position for s in self.seats)]

    def humans(self) -> list[int]:
        return [s.position for s in self.seats if not s.bot]

    # -- the loop ---------------------------------------------------------------

    def play(self) -> None:
        while not self.engine.is_over(self.state) and not self.stopped() and not self.stuck:
            if self.step > self.row.steps:
                self.findings.add("ends", f"{self.seed}: not over after {self.row.steps} steps")
                return
            if self.run_bots():
                continue
            due = {(p.seat, p.key): self.since[(p.seat, p.key)]
                   + (DEADLINE if p.due_in is None else p.due_in)
                   for p in self.engine.pending(self.state)}
            if not due:
                return  # a game not over that owes nothing: found by settle
            soonest = min(due.values())
            write, at = self.next_mail()
            if at < soonest:
                self.clock = at
                write()
            else:
                self.clock = soonest
                self.sweep([seat for (seat, _), when in due.items() if when == soonest])
        if not self.stopped() and not self.stuck:
            self.check_replay()

    def next_mail(self) -> tuple[Callable[[], None], float]:
        """What a person does next, and when: a player writes in (about half
        the moves owed are made before the deadline; members who owe nothing
        write daily), now and then resigning; a newcomer deals themselves in."""
        humans = self.humans()
        owe = any(p.seat in humans and p.due_in is None for p in self.engine.pending(self.state))
        writes = (OWING_MAILS if owe else FREE_MAILS * len(humans)) if humans else 0.0
        joins = JOINS if self.engine.takes_members_by_mail and len(self.seats) < 8 else 0.0
        if not writes + joins:
            return self.mail, float("inf")
        at = self.clock + self.rng.expovariate((writes + joins) / DAY)
        if self.rng.random() * (writes + joins) >= writes:
            return self.join, at
        if self.erratic and self.rng.random() < 0.03:
            return self.resign, at
        return self.mail, at

    def run_bots(self) -> bool:
        """``GameSession.run_bots``: a bot owing a move without ``due_in``
        moves at once."""
        bots = [p for p in self.engine.pending(self.state)
                if p.seat and p.due_in is None and self.seats[p.seat - 1].bot]
        if not bots:
            return False
        seat = bots[0].seat
        action = self.chosen("bot_action", seat, KeyedDraws(self.seed))
        self.stuck = action is None
        return action is not None and self.take(seat, action, may_refuse=False)

    def sweep(self, due: list[int]) -> None:
        """The deadline sweep: one of the seats whose obligation falls due
        now acts through ``timeout_action`` (seat 0: the referee's own
        timetable; a bot member: its timetabled turn)."""
        seat = self.rng.choice(sorted(due))
        action = self.chosen("timeout_action", seat, KeyedDraws(self.seed))
        self.stuck = action is None
        if action is not None:
            self.take(seat, action, may_refuse=False)

    def resign(self) -> None:
        """A player resigns (or the operator resigns them): a bot takes the seat."""
        seat = self.rng.choice(self.humans())
        if self.take(seat, Action("resign"), may_refuse=False):
            self.seats[seat - 1].bot = True

    def mail(self) -> None:
        """A player writes in: the move a random bot would make, or now and
        then one of their last moves again (a mail sent twice, or late: the
        rules refuse it, or it is a move again, a Spades misplay), by a
        random scope; ``accepts`` and ``apply`` may refuse it, as for any mail."""
        humans = self.humans()
        owing = [p.seat for p in self.engine.pending(self.state)
                 if p.seat in humans and p.due_in is None]
        seat = self.rng.choice(owing or humans)
        made = [Action.from_json(data) for _, s, data in self.log[-20:] if s == seat]
        made = [a for a in made if a.verb not in ("resign", "join")]
        if made and self.erratic and self.rng.random() < 0.05:
            action = self.rng.choice(made)
        else:
            try:
                action = self.engine.bot_action(self.state, seat,
                                                SequentialDraws(random.Random(
                                                    f"{self.seed}:mail:{self.step + 1}")))
            except EngineError:
                return  # nothing open to this seat now
            self.unchanged("bot_action")
        scoped = self.scoped(seat, action)
        if scoped is not None:
            self.take(seat, scoped, may_refuse=True)

    def join(self) -> None:
        """Someone deals themselves in by mail (``service/intake/joining.py``): a
        seat at the next position, then ``Action("join", (name, former))``."""
        position = len(self.seats) + 1
        self.seats.append(SeatRow(position, f"Newcomer {position}", False, False, joined=True))
        former = self.rng.random() < 0.25
        scoped = self.scoped(position, Action("join", (f"Newcomer {position}", former)))
        if scoped is None or not self.take(position, scoped, may_refuse=True):
            self.seats.pop()

    def scoped(self, seat: int, action: Action) -> Action | None:
        """``action`` as it came by mail: a random scope (and, in private, the
        seats on the mail), or None if ``accepts`` refuses that scope."""
        scope = self.rng.choice(list(Scope))
        others = [s.position for s in self.seats if s.position != seat]
        seen_by: frozenset[int] = frozenset()
        if scope is Scope.PRIVATE and others:
            seen_by = frozenset(self.rng.sample(others, self.rng.randint(1, len(others))))
        elif scope is Scope.PRIVATE:
            scope = Scope.SECRET
        try:
            self.engine.accepts(action, scope)
        except ScopeError:
            return None
        return dataclasses.replace(action, scope=scope, seen_by=seen_by)

    def chosen(self, how: str, seat: int, draws: Draws) -> Action | None:
        """The move ``timeout_action`` or ``bot_action`` chooses for ``seat``."""
        try:
            action: Action = getattr(self.engine, how)(self.state, seat, draws)
        except EngineError as e:
            self.findings.add("legal", f"{self.seed} step {self.step}: {how} for seat {seat} "
                                       f"raised {type(e).__name__}: {e}")
            return None
        self.unchanged(how)
        return action

    # -- one step ---------------------------------------------------------------

    def take(self, seat: int, action: Action, *, may_refuse: bool) -> bool:
        """``GameSession.apply``: one step, logged, then every check."""
        step, before = self.step + 1, self.json
        try:
            result = self.apply(self.state, seat, action, KeyedDraws(self.seed))
        except EngineError as e:
            self.unchanged(f"a refused {action.verb}")
            if not may_refuse:
                self.stuck = True
                self.findings.add("legal", f"{self.seed} step {step}: seat {seat}'s "
                                           f"{action} raised {type(e).__name__}: {e}")
            return False
        self.unchanged(action.verb)
        self.step = step
        self.log.append((step, seat, action.to_json()))
        after = self.engine.dump(result.state)
        self.check_notices(result, after, text(list(action.args)))
        self.check_twin(before, seat, action, result)
        # The service stores the state and loads it again for the next step.
        self.json, self.state = after, self.engine.load(after)
        self.settle()
        return True

    def apply(self, state: Any, seat: int, action: Action, draws: Draws) -> Result[Any]:
        if action.verb == "resign":
            return self.engine.replace_with_bot(state, seat)
        return self.engine.apply(state, seat, action, draws)

    def unchanged(self, what: str) -> None:
        """The state given to the engine is as it was (``Game.apply``: "must
        not mutate the state it is given")."""
        if self.engine.dump(self.state) != self.json:
            self.findings.add("pure", f"{self.seed} step {self.step}: {what} changed its input")
            self.state = self.engine.load(self.json)

    def settle(self) -> None:
        """After each step: the clocks of new obligations start, and the
        state's own checks run."""
        pending = self.engine.pending(self.state)
        self.since = {(p.seat, p.key): self.since.get((p.seat, p.key), self.clock)
                      for p in pending}
        if bool(pending) == self.engine.is_over(self.state):
            self.findings.add("pending", f"{self.seed} step {self.step}: over "
                                         f"{self.engine.is_over(self.state)}, pending {pending}")
        self.check_placings()
        self.check_obligations()
        self.check_views()

    # -- the checks -------------------------------------------------------------

    def check_placings(self) -> None:
        """The result ranks the seats (``Game.placings``) only once the game
        is over, and then every seat once, at a place from 1 (part of the
        ``pending`` invariant: what the end of a game owes)."""
        placings = self.engine.placings(self.state)
        if placings is None:
            return
        placed = sorted(seat for p in placings for seat in p.seats)
        seats = sorted(s.position for s in self.seats)
        if not self.engine.is_over(self.state) or placed != seats or any(
                p.place < 1 for p in placings):
            self.findings.add("pending", f"{self.seed} step {self.step}: placings "
                                         f"{placings} for seats {seats}, over "
                                         f"{self.engine.is_over(self.state)}")

    def check_obligations(self) -> None:
        """Every pending obligation's ``timeout_action`` and ``bot_action``
        apply (a seat past its deadline, or handed to a bot, can always move)."""
        for p in self.engine.pending(self.state):
            for how in ("timeout_action", "bot_action"):
                draws = KeyedDraws(self.seed)
                action = self.chosen(how, p.seat, draws)
                if action is None:
                    continue
                try:
                    result = self.engine.apply(self.state, p.seat, action, draws)
                except EngineError as e:
                    self.findings.add("legal", f"{self.seed} step {self.step}: {how} {action} "
                                               f"for {p} is refused: {e}")
                    continue
                finally:
                    self.unchanged(f"applying a {how}")
                if how == "timeout_action" and p.seat:
                    self.check_said(p.seat, action, result)

    def check_said(self, seat: int, action: Action, result: Result[Any]) -> None:
        """The move the referee makes for a silent ``seat`` can be said, to
        the table and to the seat (``Game.deadline_move``)."""
        try:
            said = self.engine.deadline_move(self.state, seat, action, result)
            said.told("Someone")
            said.done_for_you()
        except (KeyError, IndexError, ValueError, EngineError) as e:
            self.findings.add("legal", f"{self.seed} step {self.step}: the timeout {action} "
                                       f"for seat {seat} cannot be said: {e!r}")
        self.unchanged("saying a timeout")

    def seen(self, observer: Observer) -> str:
        """What ``observer`` is shown of the state now, as text."""
        if observer not in self.shown:
            self.shown[observer] = text(looks(self.engine, self.state, observer))
        return self.shown[observer]

    def check_views(self) -> None:
        """The public's views, and a seat's, hold no secret of another seat;
        what one observer is shown does not change when all it may not see
        is drawn again. (One seat a step: the views grow with the game.)"""
        secrets = self.row.secrets(self.json)
        self.shown = {}
        for observer in {None, self.rng.choice(self.observers())}:
            leaked = leaks(forbidden(secrets, {observer}), self.seen(observer))
            if leaked:
                self.findings.add("secrets", f"{self.seed} step {self.step}: the views for "
                                             f"{who(observer)} show {leaked}")
        observer = self.rng.choice(self.observers())
        hidden = self.engine.load(self.row.hide(self.json, knowing(observer), self.rng))
        shown = looks(self.engine, self.state, observer)
        other = looks(self.engine, hidden, observer)
        if shown != other:
            self.findings.add("secrets", f"{self.seed} step {self.step}: what {who(observer)} "
                                         "is shown changes with what they may not see, at "
                                         f"{where(shown, other)}")

    def check_notices(self, result: Result[Any], after: JSON, named: str) -> None:
        """No notice or public event names a secret of a seat outside its
        audience, unless the audience saw it before or the move named it
        (a card just played, which a new deal may hold again)."""
        secrets = self.row.secrets(after)
        # What the audience saw before: the views of the state not yet
        # replaced (none before ``new``).
        public = self.seen(None) if self.step else ""
        for notice in result.notices:
            seats = notice.audience.seats
            saw = [public, named, *(self.seen(s) for s in seats if self.step)]
            leaked = leaks(forbidden(secrets, set() if notice.audience.public else seats),
                           text(dict(notice.context)), saw)
            if leaked:
                self.findings.add("secrets", f"{self.seed} step {self.step}: notice "
                                             f"{notice.template!r} to {notice.audience} shows "
                                             f"{leaked}")
        for event in result.events:
            leaked = leaks(forbidden(secrets, set()), text([event.text, dict(event.data)]),
                           [public, named])
            if event.public and leaked:
                self.findings.add("secrets", f"{self.seed} step {self.step}: public event "
                                             f"{event.kind!r} shows {leaked}")

    def check_twin(self, before: JSON, seat: int, action: Action, result: Result[Any]) -> None:
        """The step taken again in a twin world that differs from this one
        only in what one observer may not know: either the same state with
        another RNG (chance: a deal), or the state with all the observer may
        not see drawn again, and, for a move the rules take only in secret,
        another such move. Unless the outcome differs in what the observer
        may know (the step revealed something: a round resolved), the
        observer gets the same notices."""
        observer = self.rng.choice(self.observers())
        rng = random.Random(f"{self.seed}:twin:{self.step}")
        chance = rng.random() < 0.5
        if chance:
            twin, seed = self.engine.load(before), self.seed + ":twin"
        else:
            twin = self.engine.load(self.row.hide(before, knowing(observer, seat), rng))
            seed = self.seed
        secret = observer != seat and action.verb != "resign" and self.secret_only(action)
        if secret and not chance:
            action = self.another(twin, seat, action, rng)
        try:
            again = self.apply(twin, seat, action, KeyedDraws(seed))
        except EngineError:
            return  # the move is not open in the twin world: nothing to compare
        if looks(self.engine, again.state, observer) != looks(
                self.engine, result.state, observer) or not self.alike(
                self.engine.dump(again.state), self.engine.dump(result.state), observer):
            return  # the step showed the observer something that depends on what was hidden
        if not chance and not secret and [e for e in again.events if not e.public] != [
                e for e in result.events if not e.public]:
            # The same move found other hidden facts (a trade failed for
            # another party, and rule 10 says who): a reveal no state keeps.
            return
        shown, other = shown_to(result, observer), shown_to(again, observer)
        if shown != other:
            self.findings.add("secrets", f"{self.seed} step {self.step}: {action} shows "
                                         f"{who(observer)} notices that depend on what they "
                                         f"may not see, at {where(shown, other)}")

    def alike(self, one: JSON, other: JSON, observer: Observer) -> bool:
        """The two dumped states are the same in all ``observer`` may know:
        in every part that ``hide`` does not draw again (in two draws of
        each). A round's history, say, is known though no view shows it."""
        paths = {path for state in (one, other) for n in range(2)
                 for path in drawn(state, self.row.hide(state, knowing(observer),
                                                         random.Random(n)))}
        return agree(one, other, paths)

    def secret_only(self, action: Action) -> bool:
        """The rules take this move only in secret (a sealed bid, a card face
        down), so what it is belongs to its seat."""
        try:
            self.engine.accepts(action, Scope.PUBLIC)
        except ScopeError:
            return True
        return False

    def another(self, state: Any, seat: int, action: Action, rng: random.Random) -> Action:
        """Another secret move of the same form that ``seat`` could make (a
        bid the referee chose stays one: the round report says so)."""
        for how in ("bot_action", "timeout_action") * 3:
            try:
                other: Action = getattr(self.engine, how)(state, seat, SequentialDraws(rng))
            except EngineError:
                break
            if (other.verb, len(other.args)) == (action.verb, len(action.args)) and (
                    self.secret_only(other)):
                return other
        return action

    def check_replay(self) -> None:
        """``Reading.replay``: ``new`` with the seats there at the start (a
        bot only if it was one from the start), then each logged action with
        the RNG of its step; a resignation through ``replace_with_bot``."""
        engine = self.engine
        infos = [SeatInfo(s.position, s.name, s.born_bot) for s in self.seats if not s.joined]
        state = engine.new(self.options, infos, KeyedDraws(self.seed)).state
        for _, seat, data in self.log:
            state = self.apply(state, seat, Action.from_json(data), KeyedDraws(self.seed)).state
        if engine.dump(state) != self.json:
            self.findings.add("replay", f"{self.seed}: replaying {len(self.log)} actions gives "
                                        "another state")


def forbidden(secrets: Secrets, audience: Collection[Observer]) -> list[Secret]:
    """The secrets of every seat outside ``audience``, and seat 0's."""
    return [x for seat, v in secrets.items() if seat == 0 or seat not in audience for x in v]


def leaks(secrets: list[Secret], shown: str, saw: Sequence[str] = ()) -> list[str]:
    """How ``secrets`` are written in the text ``shown``, but for a secret
    also written in a text the audience ``saw`` already."""
    found: set[str] = set()
    for secret in secrets:
        written = [w for w in secret if quoted(w) in shown]
        if written and not any(quoted(w) in t for w in secret for t in saw):
            found.update(written)
    return sorted(found)


@functools.cache
def quoted(word: str) -> str:
    return text(word)


Path = tuple[str | int, ...]


def drawn(value: JSON, other: JSON, path: Path = ()) -> Iterator[Path]:
    """The paths at which ``other`` differs from ``value``, each as deep as
    their shapes agree."""
    if value == other:
        return
    if isinstance(value, dict) and isinstance(other, dict) and value.keys() == other.keys():
        for k, v in value.items():
            yield from drawn(v, other[k], (*path, k))
    elif isinstance(value, list) and isinstance(other, list) and len(value) == len(other):
        for i, v in enumerate(value):
            yield from drawn(v, other[i], (*path, i))
    else:
        yield path


def agree(one: JSON, other: JSON, paths: set[Path], path: Path = ()) -> bool:
    """``one`` and ``other`` are the same but at ``paths``."""
    if path in paths or one == other:
        return True
    if isinstance(one, dict) and isinstance(other, dict) and one.keys() == other.keys():
        return all(agree(v, other[k], paths, (*path, k)) for k, v in one.items())
    if isinstance(one, list) and isinstance(other, list) and len(one) == len(other):
        return all(agree(v, other[i], paths, (*path, i)) for i, v in enumerate(one))
    return False


def where(one: Any, other: Any) -> str:
    """Where two shown values first differ, for the finding's message."""
    one, other = json.loads(text(one)), json.loads(text(other))
    path = next(drawn(one, other), ())
    return "/".join(str(step) for step in path) or "the top"


def knowing(*observers: Observer) -> Knowing:
    return frozenset(o for o in observers if o is not None)


def who(observer: Observer) -> str:
    return "the public" if observer is None else f"seat {observer}"


# -- running the contract ---------------------------------------------------------


def check_game(engine: Game[Any], contract: Contract) -> Findings:
    """Every playout of ``contract`` with ``engine``: what broke the
    contract, by invariant (:data:`INVARIANTS`)."""
    found = Findings()
    for number in range(contract.playouts):
        Playout(engine, contract, number, found).play()
    return found


def caught(engine: Game[Any], contract: Contract, invariant: str = "secrets") -> list[str]:
    """What the playouts find of ``invariant``, stopping at the first
    playout that finds anything: for a test that plants a defect and checks
    that the contract catches it."""
    found = Findings()
    for number in range(contract.playouts):
        Playout(engine, contract, number, found, stop_at=invariant).play()
        if found.found[invariant]:
            break
    return found.found[invariant]
