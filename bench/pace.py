"""Benchmark: how fast a game goes by mail, in simulated days.

Plays whole games by mail through the real referee (``referee.passes.run_pass``
over a Maildir in and out and SQLite, ``referee.testing.club.Club``), with
time injected, so a year of play takes seconds: Spades to 500 (rule 5), and
a Land of Agora tournament (loatcg, the EXAMPLE instructions: 8 rounds, a
Round Report every 7 days). Simulated players answer each mail that leaves
them on move after a random delay (seeded: 2 to 30 hours), writing the
sensible bot's move in the game's own words; now and then one goes quiet
for 3 to 8 days, so the referee's deadlines (3 days, a reminder a day
before) move for them. A tournament's members each act about once a day
(the same 2 to 30 hours after their last mail), going quiet the same way.

A pass runs whenever a player's mail lands and whenever a deadline or a
reminder is due: what the daemon does, without the wait.

Each game is played from the same seed by the same players (each one's
delays drawn from a seeded stream of their own) in each arm:

* before: ``--option autoplay=off orders=off``: every card a round trip;
* auto: autoplay on (the default), no standing orders: the cards of
  before (a player's choice is keyed by what they see), the forced ones
  played at once; only who reaches a deadline, where the referee plays
  a random card, differs (Spades only; a game that takes no orders has
  no auto arm);
* after: autoplay on, and the standing orders a reasonable player sends
  with a move they write anyway (no extra mail), see
  :func:`spades_orders`. Orders change which cards are played, so the
  game may take more or fewer rounds than before: compare days a round.

A code without forced moves (before issue 37) plays before alone and says
the other arms are unavailable.

Per game it prints days to finish, rounds, mails per player (received:
To or Cc; written), every move, the moves the referee made at a
player's deadline, and the others by who made them (``auto``: forced,
``order``: a standing order, ``referee``: a tournament's Round Report on
its timetable); then each arm's means against before. Usage::

    .venv/bin/python bench/pace.py [--games 2] [--tournaments 1] [--seed pace]
        [--quiet 0.03] [--only spades,loatcg]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from referee.games import get_game
from referee.games.base import Action, EngineError, Game, Scope, ScopeError
from referee.games.draws import SequentialDraws
from referee.games.spades.rules import PLAYING
from referee.store import models as m
from referee.testing.club import Club, player

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Pace:
    """How the simulated players answer: after ``low`` to ``high`` hours;
    with chance ``quiet`` a player on move goes quiet for ``away_low`` to
    ``away_high`` days first."""

    low: float = 2.0
    high: float = 30.0
    quiet: float = 0.03
    away_low: float = 3.0
    away_high: float = 8.0

    def delay(self, rng: random.Random) -> timedelta:
        wait = timedelta(hours=rng.uniform(self.low, self.high))
        if rng.random() < self.quiet:
            wait += timedelta(days=rng.uniform(self.away_low, self.away_high))
        return wait


#: A player's standing orders to send with a move: (engine, state, seat,
#: the move written) to the lines to add.
Orders = Callable[[Any, Any, int, Action], list[str]]


@dataclass(frozen=True)
class Arm:
    """One way of playing: the game's options and the players' orders."""

    name: str
    options: dict[str, str]
    orders: Orders | None = None


@dataclass
class Outcome:
    """What one game by mail took."""

    kind: str
    arm: str
    seed: str
    players: int
    days: float = 0.0
    received: Counter[str] = field(default_factory=Counter)
    written: Counter[str] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)
    passes: int = 0
    rounds: int = 0
    status: str = "active"

    @property
    def mails_in(self) -> float:
        """Mails a player got, on average."""
        return sum(self.received.values()) / self.players

    @property
    def mails_out(self) -> float:
        """Mails a player wrote, on average."""
        return sum(self.written.values()) / self.players

    @property
    def by_deadline(self) -> int:
        return self.sources["timeout"]

    @property
    def moves(self) -> int:
        return sum(n for source, n in self.sources.items() if source != "admin")

    def line(self) -> str:
        others = ", ".join(f"{n} {s}" for s, n in sorted(self.sources.items())
                           if s not in ("player", "timeout"))
        return (f"{self.kind:<7} {self.arm:<6} {self.seed:<14} {self.days:7.1f} {self.rounds:6d} "
                f"{self.mails_in:8.1f} {self.mails_out:8.1f} {self.moves:6d} "
                f"{self.by_deadline:8d}  {others or '-'}"
                + ("" if self.status == "finished" else f"  [{self.status}]"))


class Table(Club):
    """:class:`Club`, parsing only the mail sent since the last look (the
    parent parses the whole outbox at every pass: a year of Spades is
    thousands of mails)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.seen: set[str] = set()

    def new_mail(self) -> list[EmailMessage]:
        fresh = []
        for folder in ("new", "cur"):
            path = self.root / "out" / folder
            for name in sorted(os.listdir(path)) if path.is_dir() else []:
                if name not in self.seen:
                    self.seen.add(name)
                    msg = message_from_bytes((path / name).read_bytes(), policy=default)
                    assert isinstance(msg, EmailMessage)
                    fresh.append(msg)
        return fresh


HEADER = (f"{'game':<7} {'arm':<6} {'seed':<14} {'days':>7} {'rounds':>6} {'mail in':>8} "
          f"{'mail out':>8} {'moves':>6} {'deadline':>8}  other moves")


# -- the referee's side ---------------------------------------------------------------


def owing(club: Club, tag: str) -> dict[int, datetime]:
    """Each seat that owes a move in game ``tag``: since when."""
    d, g = m.table_of(m.Deadline).c, m.table_of(m.Game).c
    with club.referee.reading.sessions() as db:
        rows = db.connection().execute(
            select(d.seat, func.min(d.since)).select_from(
                m.table_of(m.Deadline).join(m.table_of(m.Game), d.game_id == g.id))
            .where(g.tag == tag).group_by(d.seat)).all()
    return {int(seat): since for seat, since in rows}


def next_timer(club: Club) -> datetime | None:
    """When a deadline or a reminder is next due, in any game."""
    d = m.table_of(m.Deadline).c
    with club.referee.reading.sessions() as db:
        conn = db.connection()
        due = conn.execute(select(func.min(d.due_at))).scalar()
        remind = conn.execute(select(func.min(d.remind_at))).scalar()
    times = [t for t in (due, remind) if t is not None]
    return min(times) if times else None


def sources(club: Club, tag: str) -> Counter[str]:
    """The game's moves by who made them: player, timeout (a player's
    deadline), auto (forced), order (standing), referee (seat 0), ..."""
    a, g = m.table_of(m.ActionLog).c, m.table_of(m.Game).c
    with club.referee.reading.sessions() as db:
        rows = db.connection().execute(
            select(a.source, a.seat == 0, func.count()).select_from(
                m.table_of(m.ActionLog).join(m.table_of(m.Game), a.game_id == g.id))
            .where(g.tag == tag).group_by(a.source, a.seat == 0)).all()
    # Seat 0's moves are the referee's own on its timetable (a tournament's
    # Round Reports): no player's lateness.
    return Counter({"referee" if ours else str(s): int(n) for s, ours, n in rows})


def count_mail(outcome: Outcome, sent: Sequence[EmailMessage]) -> None:
    for msg in sent:
        for header in ("To", "Cc"):
            if msg[header]:
                for address in msg[header].addresses:
                    if address.addr_spec.startswith("player"):
                        outcome.received[address.addr_spec] += 1


# -- the players' side ---------------------------------------------------------------


def write(club: Club, engine: Game[Any], state: Any, seat: int, count: int, tag: str,
          seed: str, orders: Orders | None = None) -> bool:
    """The player in ``seat`` writes the sensible bot's move (and the
    ``orders`` they send with it), to the referee alone if the rules take
    the move so, else copied to the table. The bot's draws (ties only) are
    keyed by ``seed`` and what the seat sees: one position, one choice, in
    every arm."""
    seen = json.dumps(engine.view(state, seat), sort_keys=True, default=str)
    rng = random.Random(f"{seed}-{seat}-{seen}")
    try:
        action = engine.sensible_bot_action(state, seat, SequentialDraws(rng))
    except EngineError:
        return False
    cc: list[str] | None = None
    try:
        engine.accepts(action, Scope.SECRET)
    except ScopeError:
        cc = [player(n) for n in range(1, count + 1) if n != seat]
    extra = orders(engine, state, seat, action) if orders else []
    text = "\n".join([engine.read_as(action), *extra]) + "\n"
    club.send(f"Player {seat} <{player(seat)}>", text, f"Re: [{tag}] my move", cc)
    return True


def play(kind: str, arm: Arm, seed: str, count: int, pace: Pace, root: Path,
         members_act: bool = False, max_days: int = 3000) -> Outcome:
    """One game of ``kind`` for ``count`` players by mail, to its end.

    Players who owe a move answer after :meth:`Pace.delay` from when they
    came to owe it (the pass that told them), if they owe it still. Where
    ``members_act`` (a tournament), each player also writes a move about
    once a day whether or not they owe one."""
    engine: Any = get_game(kind)
    club = Table(root)
    outcome = Outcome(kind, arm.name, seed, count)
    # Each player's delays come from a stream of their own: the same
    # player in every arm, whatever the others do.
    rngs = {n: random.Random(f"{seed}-player-{n}") for n in range(1, count + 1)}
    try:
        names = [f"Player {n} <{player(n)}>" for n in range(1, count + 1)]
        start = club.now
        tag = club.referee.operator.create_game(kind, names, options=dict(arm.options),
                                                seed=seed, now=start)
        answers: dict[int, tuple[datetime, datetime]] = {}  # seat: (owed since, answer at)
        free: dict[int, datetime] = {}  # a member's next mail, owed or not
        if members_act:
            free = {n: start + pace.delay(rngs[n]) for n in range(1, count + 1)}
        now = start
        while now - start < timedelta(days=max_days):
            sent = club.poll(now)
            outcome.passes += 1
            count_mail(outcome, sent)
            outcome.status = club.referee.reading.status(tag)[0]["status"]
            if outcome.status != "active":
                break
            owed = {s: t for s, t in owing(club, tag).items() if 1 <= s <= count}
            for seat in list(answers):
                if answers[seat][0] != owed.get(seat):
                    del answers[seat]  # moved for them, or a new move owed
            for seat, since in owed.items():
                if seat not in answers:
                    answers[seat] = (since, now + pace.delay(rngs[seat]))
            timer = next_timer(club)
            times = [at for _, at in answers.values()] + list(free.values())
            times += [timer] if timer is not None else []
            if not times:
                break
            now = max(min(times), now + timedelta(seconds=1))
            state = engine.load(club.referee.reading.stored_state(tag))
            for seat, (_, at) in sorted(answers.items()):
                if at <= now:
                    if write(club, engine, state, seat, count, tag, seed, arm.orders):
                        outcome.written[player(seat)] += 1
                    del answers[seat]
            for seat, at in sorted(free.items()):
                if at <= now:
                    if seat not in owed and write(club, engine, state, seat, count, tag, seed):
                        outcome.written[player(seat)] += 1
                    free[seat] = now + pace.delay(rngs[seat])
        outcome.days = (now - start) / DAY
        outcome.sources = sources(club, tag)
        outcome.rounds = int(club.referee.reading.stored_state(tag).get("round", 0))
        return outcome
    finally:
        club.close()


# -- the arms ---------------------------------------------------------------------------


def autoplay_known() -> bool:
    """Whether this code makes forced moves and follows standing orders
    (issue 37: the game options ``autoplay`` and ``orders``)."""
    return importlib.util.find_spec("referee.service.play.standing") is not None


#: Ranks that take no trick in a suit held only in them, as a player
#: reckons it: with such a suit they follow low whatever was led.
SMALL = ("2", "3", "4", "5", "6", "7", "8", "9")


def spades_orders(engine: Any, state: Any, seat: int, action: Action) -> list[str]:
    """The standing orders a reasonable Spades player sends with a card
    they write (``action``), read from their hand after it: ``play low``
    for their next card when they bid nil, or when their team has taken
    the tricks it bid (a trick more is a bag); else, for each side suit
    they hold two or more cards of, all small, ``play <lowest> if <suit>
    led``. Each mail starts with ``cancel orders``: what is left of the
    last mail's orders goes, so none is dropped as no longer possible."""
    if state.phase != PLAYING or action.verb != "play" or seat not in state.order:
        return []
    me = state.order.index(seat)
    hand = [c for c in state.hands[me] if c != str(action.args[0])]
    if not hand:
        return []
    lines = ["cancel orders"]
    team = [p for p in range(len(state.order)) if p % 2 == me % 2]
    bid = sum(state.bids[p] or 0 for p in team)
    won = sum(state.tricks_won[p] for p in team)
    if state.bids[me] == 0 or won >= bid:
        return [*lines, "play low"]
    for suit, name in (("C", "clubs"), ("D", "diamonds"), ("H", "hearts")):
        held = [c for c in hand if c[-1] == suit]
        if len(held) >= 2 and all(c[:-1] in SMALL for c in held):
            lowest = min(held, key=lambda c: int(c[:-1]))
            lines.append(f"play {lowest} if {name} led")
    return lines if len(lines) > 1 else []


ORDERS: dict[str, Orders] = {"spades": spades_orders}


def arms(kind: str) -> list[Arm | str]:
    """The arms to play ``kind`` in: "before"; "auto" (autoplay alone,
    where the game takes orders: the same cards as before, sooner); "after"
    (autoplay and orders). An arm this code cannot play is its name alone."""
    before = Arm("before", {"autoplay": "off", "orders": "off"} if autoplay_known() else {})
    if not autoplay_known():
        return [before, "after"]
    orders = ORDERS.get(kind)
    if orders is None:
        return [before, Arm("after", {})]
    return [before, Arm("auto", {"orders": "off"}), Arm("after", {}, orders)]


# -- the report ---------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def change(before: float, after: float) -> str:
    if not before:
        return "-"
    return f"{100 * (after - before) / before:+.0f} %"


def summary(kind: str, name: str, before: list[Outcome], after: list[Outcome]) -> list[str]:
    lines = []
    for label, get in (("days to finish", lambda o: o.days),
                       ("days a round", lambda o: o.days / max(o.rounds, 1)),
                       ("mail in per player", lambda o: o.mails_in),
                       ("mail out per player", lambda o: o.mails_out),
                       ("mail in per player a round", lambda o: o.mails_in / max(o.rounds, 1)),
                       ("moves by deadline", lambda o: float(o.by_deadline))):
        b, a = mean([get(o) for o in before]), mean([get(o) for o in after])
        lines.append(f"{kind} {label}: before {b:.1f}, {name} {a:.1f} ({change(b, a)})")
    return lines


GAMES = {"spades": (4, False), "loatcg": (4, True)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2, help="Spades games to 500")
    parser.add_argument("--tournaments", type=int, default=1, help="loatcg tournaments")
    parser.add_argument("--seed", default="pace", help="prefix of each game's seed")
    parser.add_argument("--quiet", type=float, default=Pace.quiet,
                        help="chance a player on move goes quiet for 3 to 8 days")
    parser.add_argument("--only", default="", help="comma-separated kinds (default: all)")
    args = parser.parse_args(argv)
    pace = Pace(quiet=args.quiet)
    kinds = [k for k in args.only.split(",") if k] or list(GAMES)
    print(HEADER, flush=True)
    lines: list[str] = []
    for kind in kinds:
        count, members_act = GAMES[kind]
        played: dict[str, list[Outcome]] = {}
        n = args.tournaments if kind == "loatcg" else args.games
        for i in range(n):
            seed = f"{args.seed}-{kind}-{i}"
            for arm in arms(kind):
                if isinstance(arm, str):
                    print(f"{kind:<7} {arm:<6} {seed:<14} unavailable: this code has no "
                          "autoplay nor standing orders (issue 37)", flush=True)
                    continue
                with tempfile.TemporaryDirectory(prefix="pace-") as folder:
                    outcome = play(kind, arm, seed, count, pace, Path(folder), members_act)
                print(outcome.line(), flush=True)
                played.setdefault(arm.name, []).append(outcome)
        for name, outcomes in played.items():
            if name != "before":
                lines += summary(kind, name, played["before"], outcomes)
    print(flush=True)
    for line in lines:
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
