"""The contract every engine owes, checked on every registered kind, as
OpenSpiel's ``random_sim_test`` checks every game: seeded random playouts,
driven the way the service drives a game, to the end, checking at each step
that

* replaying the seed and the action log gives the same state
  (``Reading.replay``);
* ``pending`` is empty exactly when the game is over;
* every ``timeout_action`` and ``bot_action`` of a pending obligation applies;
* no view or notice for the public or another seat holds a seat's secret;
* ``apply`` (and ``replace_with_bot``) never changes the state it is given;
* every playout ends within its bound.

The rules of each game are its own tests'. What the contract cannot say of
a kind (its options and seat counts, and what is secret in its state) is
its row of :data:`TABLE`, which reads the state's JSON (``Game.dump``),
never its classes, so a game may reorganise its package freely.

Secrets are checked three ways, each catching what the others cannot:

* by value: the strings of a row's ``secrets`` (a card in a hand, a salt, an
  instruction's line) are never a whole string, key or value, of what an
  audience outside the secret's seat is shown;
* views by noninterference: what an observer is shown of a state does not
  change when everything the observer may not see (the row's ``hide``) is
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

import copy
import dataclasses
import functools
import json
import random
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from referee.games import GAMES, KINDS
from referee.games.base import (
    JSON,
    Action,
    Audience,
    EngineError,
    Game,
    Notice,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
)
from referee.games.draws import Draws, KeyedDraws, SequentialDraws
from referee.games.loatcg.instructions import parse_instructions
from tests.games.seeded import seeded

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
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


# -- what the contract cannot say: a row per kind ---------------------------------


@dataclass(frozen=True)
class Row:
    """How to set up a kind's playouts, and what is secret in its state."""

    #: Raw ``--option`` pairs and a seat count, taken in turn by the playouts.
    setups: tuple[tuple[dict[str, str], int], ...]
    playouts: int
    #: The most steps a playout may take: the game must be over by then.
    steps: int
    #: Each seat's secrets in a dumped state (:data:`Secrets`).
    secrets: Callable[[JSON], Secrets]
    #: A dumped state with all that none of the knowing seats may see drawn
    #: again: to the public, every secret.
    hide: Callable[[JSON, Knowing, random.Random], JSON]


def _card_names(cards: Sequence[str]) -> list[Secret]:
    """Cards as the engines write them: ``QH`` and ``Q♥``."""
    return [frozenset({c, c[:-1] + SUIT_SYMBOLS[c[-1]]}) for c in cards]


def _deal_again(rng: random.Random, places: Sequence[list[Any]]) -> None:
    """Shuffle the cards of ``places`` among them, each keeping its size."""
    cards = [c for place in places for c in place]
    rng.shuffle(cards)
    for place in places:
        place[:], cards = cards[: len(place)], cards[len(place) :]


def _bidding_secrets(state: JSON) -> Secrets:
    # A sealed bid is a small number, which no value can tell from a score:
    # the noninterference checks (``_bidding_hide``) guard it.
    return {}


def _bidding_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Sealed bids (000 4e, G2-9) are each seat's own until the round
    resolves and takes them out of the packs; a pack is public."""
    s = {**state, "bids": dict(state["bids"])}
    for seat, bid in s["bids"].items():
        pack = s["packs"][int(seat) - 1]
        if int(seat) not in knowing and bid in pack:
            s["bids"][seat] = rng.choice(pack)
    return s


def _spades_secrets(state: JSON) -> Secrets:
    """A hand's unplayed cards (SP-17)."""
    return {seat: _card_names(hand) for seat, hand in zip(state["order"], state["hands"],
                                                          strict=True)}


def _spades_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    s = {**state, "hands": [list(hand) for hand in state["hands"]]}
    _deal_again(rng, [hand for seat, hand in zip(s["order"], s["hands"], strict=True)
                      if seat not in knowing])
    return s


def _miser_cards(state: JSON) -> dict[int, list[list[Any]]]:
    """Where each seat's secret cards lie (MI-14): its hand and its cards face
    down in a contract or an attack; seat 0, the cards removed unseen (MI-1).
    A contract's card is a list of one, or of none before it is played."""
    seats, turn = state["seats"], state["seats"][state["turn"]]
    places: dict[int, list[list[Any]]] = {0: [state["removed"]]}
    for seat, hand in zip(seats, state["hands"], strict=True):
        places[seat] = [hand]
    if (c := state["contract"]) is not None:
        for seat, card in zip((turn, seats[c["partner"]]), c["cards"], strict=True):
            places[seat].append([card] if card else [])
    if (a := state["attack"]) is not None:
        for seat, cards in zip((turn, seats[a["victim"]]), a["cards"], strict=True):
            places[seat].append(cards)
    return places


def _miser_secrets(state: JSON) -> Secrets:
    # The draw for first player (MI-2) is public and from a deck reshuffled
    # after it, so its cards cannot be told by value from the same cards dealt.
    drawn = {c for row in state["draws"] for c in row if c}
    return {seat: _card_names([c for place in places for c in place if c not in drawn])
            for seat, places in _miser_cards(state).items()}


def _miser_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Hands, face-down cards and the removed cards are dealt again among
    themselves; a contract offer made in private (MI-14) is another offer
    if none of the knowing saw it."""
    s = {**state, "removed": list(state["removed"]),
         "hands": [list(hand) for hand in state["hands"]],
         **{k: copy.deepcopy(state[k]) for k in ("contract", "attack")}}
    places = _miser_cards(s)
    _deal_again(rng, [p for seat, own in places.items() if seat not in knowing for p in own])
    if (c := s["contract"]) is not None:
        # Its cards were lists of one (``_miser_cards``): write them back.
        parties = (s["seats"][s["turn"]], s["seats"][c["partner"]])
        c["cards"] = [(places[seat][1] or [None])[0] for seat in parties]
        unseen = [p for p, seat in enumerate(s["seats"]) if p != s["turn"] and seat not in knowing]
        if not c["accepted"] and c["audience"] is not None and unseen and not (
                knowing & set(c["audience"])):
            c["partner"] = rng.choice(unseen)
            c["victim"] = rng.choice([p for p in range(len(s["seats"]))
                                      if p not in (s["turn"], c["partner"])])
            c["wagers"] = [rng.randint(1, s["wager_cap"]) for _ in range(2)]
            c["audience"] = sorted({parties[0], s["seats"][c["partner"]]})
    return s


LOATCG_INSTRUCTIONS = """\
1. points ore 1
2. Weavers: points wool 2
3. set ore wool lumber 5
4. Spoilage: count apple as ore
5. Earrings: pairs diamond 5 odd -15
"""
#: Other instructions, for a tournament whose unreported ones are unknown.
LOATCG_OTHERS = ("points lumber 3", "No Hoarding: hoard 7 all -10",
                 "points steel paper fabric 4", "points apple -1", "Glut: hoard 4 wool -6")


def _loatcg_secrets(state: JSON) -> Secrets:
    """Until the Freeze, the salt and every instruction no Round Report
    published are the Dealor's alone (rule 4, TCG-19, TCG-20). A hand's
    counts are guarded by ``_loatcg_hide``."""
    if state["frozen"]:
        return {}
    reported = {r["instruction"] for r in state["reports"]}
    knowers: dict[int, list[int]] = {}
    for m in state["members"]:
        for n in m["known"]:
            knowers.setdefault(n, []).append(m["seat"])
    secrets: Secrets = {0: [frozenset({state["salt"]})]}
    for i in parse_instructions(state["instructions"]):
        # Its words, as reports and reveals quote them, and its rule, as the
        # Final Report writes it: the Dealor's alone, or the one member's who
        # paid to see it (rule 8). One several members know is left unchecked.
        if i.number not in reported and len(knowers.get(i.number, [])) <= 1:
            owner = knowers.get(i.number, [0])[0]
            secrets.setdefault(owner, []).append(frozenset({i.english(), i.rule.canonical()}))
    return secrets


def _loatcg_hide(state: JSON, knowing: Knowing, rng: random.Random) -> JSON:
    """Other members' hands and the instructions revealed to them, what a
    private offer none of the knowing saw offers and between whom, the
    Discard Pile as it stands (a secret discard lands there; reports publish
    it), the salt; if no member is among the knowing, also which instruction
    each report showed and what the others say (a member's score, which e
    sees, hangs on them all)."""
    s = {**state, **{k: copy.deepcopy(state[k]) for k in ("members", "offers")},
         "reports": [dict(r) for r in state["reports"]]}
    rounds, seats = s["rounds"], [m["seat"] for m in s["members"]]
    for m in s["members"]:
        if m["seat"] not in knowing:
            m["known"] = sorted(rng.sample(range(1, rounds + 1), rng.randint(0, rounds)))
            if not s["frozen"]:
                m["hand"] = {t: rng.randint(0, 9) for t in m["hand"]}
    if s["frozen"]:  # the Final Report shows the rest (rule 6)
        return s
    s["salt"] = f"{rng.getrandbits(256):064x}"
    s["discard_pile"] = {t: rng.randint(0, 9) for t in s["discard_pile"]}
    unseen = [x for x in seats if x not in knowing]
    for o in s["offers"]:
        if o["audience"] and not knowing & set(o["audience"]) and len(unseen) >= 2:
            o["give"] = {rng.choice(list(s["discard_pile"])): rng.randint(1, 2)}
            o["want"] = {rng.choice(list(s["discard_pile"])): rng.randint(1, 2)}
            o["audience"] = sorted(rng.sample(unseen, 2))
            o["maker"], taker = o["audience"]
            o["takers"] = [taker]
    if not knowing & set(seats):
        bodies = [i.canonical().split(". ", 1)[1]
                  for i in parse_instructions(s["instructions"])]
        reported = {r["instruction"] for r in s["reports"]}
        place = rng.sample(range(rounds), rounds)  # the new place of each instruction
        moved = [""] * rounds
        for n, body in enumerate(bodies, start=1):
            moved[place[n - 1]] = body if n in reported else rng.choice(LOATCG_OTHERS)
        for r in s["reports"]:
            r["instruction"] = place[r["instruction"] - 1] + 1
        s["instructions"] = "".join(f"{n}. {body}\n" for n, body in enumerate(moved, start=1))
    return s


_LOATCG = {"instructions": LOATCG_INSTRUCTIONS}

TABLE: dict[str, Row] = {
    # Bots play sensibly by default; a setup with ``bot=random`` plays the random ones.
    "goofspiel": Row(setups=(({}, 2), ({"players": "3", "cards": "8", "tie": "discard"}, 3),
                             ({"bot": "random"}, 2)),
                     playouts=10, steps=200, secrets=_bidding_secrets, hide=_bidding_hide),
    "pure-skill": Row(setups=(({}, 3), ({"players": "2", "prize_order": "descending"}, 2),
                              ({"bot": "random"}, 3)),
                      playouts=8, steps=200, secrets=_bidding_secrets, hide=_bidding_hide),
    "spades": Row(setups=(({"target": "200"}, 4), ({"target": "200", "bot": "random"}, 4)),
                  playouts=6, steps=3000, secrets=_spades_secrets, hide=_spades_hide),
    "miser": Row(setups=(({}, 3), ({"pennies": "12"}, 5), ({"pennies": "8", "wager": "2"}, 8),
                         ({"bot": "random"}, 3)),
                 playouts=12, steps=3000, secrets=_miser_secrets, hide=_miser_hide),
    "loatcg": Row(setups=(({**_LOATCG, "report_days": "4"}, 2), (_LOATCG, 0),
                          ({**_LOATCG, "report_days": "5"}, 4),
                          ({**_LOATCG, "bot": "random"}, 2)),
                  playouts=8, steps=1500, secrets=_loatcg_secrets, hide=_loatcg_hide),
}


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

    def __init__(self, kind: str, engine: Game[Any], number: int, findings: Findings,
                 stop_at: str | None = None) -> None:
        self.engine, self.row, self.findings, self.stop_at = engine, TABLE[kind], findings, stop_at
        self.seed = f"contract-{kind}-{number}"
        self.rng = random.Random(self.seed)
        raw, count = self.row.setups[number % len(self.row.setups)]
        self.options = engine.parse_options(raw)
        low, high = engine.seat_count(self.options)
        assert low <= count <= high, f"{kind}: TABLE seats {count} players, not {low}-{high}"
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
                                                seeded(f"{self.seed}:mail:{self.step + 1}"))
            except EngineError:
                return  # nothing open to this seat now
            self.unchanged("bot_action")
        scoped = self.scoped(seat, action)
        if scoped is not None:
            self.take(seat, scoped, may_refuse=True)

    def join(self) -> None:
        """Someone deals themselves in by mail (``service/joining.py``): a
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
        self.check_obligations()
        self.check_views()

    # -- the checks -------------------------------------------------------------

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
                    self.engine.apply(self.state, p.seat, action, draws)
                except EngineError as e:
                    self.findings.add("legal", f"{self.seed} step {self.step}: {how} {action} "
                                               f"for {p} is refused: {e}")
                self.unchanged(f"applying a {how}")

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


# -- the tests --------------------------------------------------------------------


def row(kind: str) -> Row:
    if kind not in TABLE:
        pytest.fail(f"{kind} is registered but has no row in TABLE: say there how to set up "
                    "its playouts and what is secret in its state")
    return TABLE[kind]


@functools.cache
def findings(kind: str) -> Findings:
    """Every playout of ``kind``, run once for all the tests."""
    found = Findings()
    for number in range(row(kind).playouts):
        Playout(kind, GAMES[kind], number, found).play()
    return found


#: Defects the contract found, by invariant and kind: each case fails now
#: (``xfail(strict=True)``), and must pass once the engine is fixed.
DEFECTS: dict[tuple[str, str], str] = {}


def kinds(invariant: str) -> list[Any]:
    return [pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=reason))
            if (reason := DEFECTS.get((invariant, kind))) else kind for kind in KINDS]


def assert_holds(invariant: str, kind: str) -> None:
    found = findings(kind).found[invariant]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("kind", kinds("replay"))
def test_replaying_the_seed_and_action_log_gives_the_same_state(kind: str) -> None:
    assert_holds("replay", kind)


@pytest.mark.parametrize("kind", kinds("pending"))
def test_pending_is_empty_exactly_when_the_game_is_over(kind: str) -> None:
    assert_holds("pending", kind)


@pytest.mark.parametrize("kind", kinds("legal"))
def test_every_timeout_and_bot_action_of_a_pending_obligation_applies(kind: str) -> None:
    assert_holds("legal", kind)


@pytest.mark.parametrize("kind", kinds("secrets"))
def test_no_view_or_notice_shows_a_secret_to_anyone_it_is_not_for(kind: str) -> None:
    assert_holds("secrets", kind)


@pytest.mark.parametrize("kind", kinds("pure"))
def test_apply_never_changes_the_state_it_is_given(kind: str) -> None:
    assert_holds("pure", kind)


@pytest.mark.parametrize("kind", kinds("ends"))
def test_every_playout_ends_within_its_bound(kind: str) -> None:
    assert_holds("ends", kind)


def test_every_row_of_the_table_is_a_registered_kind() -> None:
    assert set(TABLE) <= set(KINDS), f"rows for no registered kind: {set(TABLE) - set(KINDS)}"


# -- the secrets check can fail ---------------------------------------------------


def caught(kind: str, engine: Game[Any]) -> list[str]:
    """What the secrets check finds in ``kind``'s playouts with ``engine``,
    stopping at the first playout that finds anything."""
    found = Findings()
    for number in range(row(kind).playouts):
        Playout(kind, engine, number, found, stop_at="secrets").play()
        if found.found["secrets"]:
            break
    return found.found["secrets"]


def planted(kind: str, monkeypatch: pytest.MonkeyPatch, method: str,
            leaky: Callable[[Game[Any], Callable[..., Any]], Callable[..., Any]]) -> Game[Any]:
    """The registered engine of ``kind`` with ``method`` made leaky."""
    engine = copy.copy(GAMES[kind])
    monkeypatch.setattr(engine, method, leaky(engine, getattr(engine, method)))
    return engine


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_views_that_show_the_whole_state(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose view for the public (and for each seat) carries its
    whole dumped state, hands, bids and hidden text included."""
    def leaky(engine: Game[Any], view: Callable[..., Any]) -> Callable[..., Any]:
        return lambda state, seat: {**view(state, seat), "leak": engine.dump(state)}

    assert caught(kind, planted(kind, monkeypatch, "view", leaky)), f"{kind}: nothing found"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_a_status_that_tells_the_whole_state(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose ``status`` for everyone tells its whole state in words:
    the hands, the sealed bids, the current Hand Scores."""
    def leaky(engine: Game[Any], status: Callable[..., Any]) -> Callable[..., Any]:
        return lambda state: f"{status(state)}\n{text(engine.dump(state))}"

    assert caught(kind, planted(kind, monkeypatch, "status", leaky)), f"{kind}: nothing found"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_secrets_check_catches_a_step_that_shows_everyone_the_movers_view(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game that also mails everyone, at each move, what the mover alone
    may see: a Spades hand, a sealed bid, a member's hand."""
    def leaky(engine: Game[Any], apply: Callable[..., Any]) -> Callable[..., Any]:
        def leaking(state: Any, seat: int, action: Action, draws: Draws) -> Result[Any]:
            result: Result[Any] = apply(state, seat, action, draws)
            leak = Notice(Audience.everyone(), "leak", engine.view(result.state, seat))
            return dataclasses.replace(result, notices=[*result.notices, leak])
        return leaking

    assert caught(kind, planted(kind, monkeypatch, "apply", leaky)), f"{kind}: nothing found"
