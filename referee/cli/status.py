"""``referee status`` and ``referee health``: how the referee is doing (the
outbox, the last pass and error, the clock), and for ``status`` each game
(whose move, deadlines, scores); with ``--max-age`` both exit 1 when no pass
completed that recently (for HEALTHCHECK and monitoring)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import IO, Any

from referee.cli.common import Command, Subparsers, duration, opened
from referee.config import format_duration
from referee.service import now_utc

#: How far ahead of this machine's clock a recorded pass may be (another
#: worker's clock) and still count as having happened.
CLOCK_SKEW = timedelta(minutes=1)


def add_status_parser(sub: Subparsers) -> None:
    status = sub.add_parser("status", help="the outbox, the last pass and error; games, "
                                           "whose move, deadlines, scores")
    status.add_argument("tag", nargs="?")
    status.add_argument("--json", action="store_true", help="the games as JSON")
    status.add_argument("--max-age", metavar="DURATION",
                        help="exit 1 when no pass completed this recently (for HEALTHCHECK "
                             "and monitoring), e.g. 15m")


def add_health_parser(sub: Subparsers) -> None:
    health = sub.add_parser("health", help="exit 1 when no pass completed recently (a "
                                           "health check: reads one row, lists no game)")
    health.add_argument("--max-age", metavar="DURATION", default="15m",
                        help="how recently a pass must have completed (default 15m)")


def run_status(args: argparse.Namespace) -> int:
    age = _max_age(args.max_age)  # a bad one refused before any output
    with opened(args) as referee:
        # One game is read whole (an unknown tag fails before any output);
        # all games stream, a batch at a time, so memory stays flat.
        games = referee.reading.status(args.tag) if args.tag else referee.reading.iter_status()
        games = with_away(games, referee.reading.away())
        health = {**referee.health.summary(), "clock": referee.clock.warning()}
        if args.json:
            write_json_list(games, sys.stdout)
        else:
            print(format_health(health))
            if (why := referee.club.standings_stale()) is not None:
                print(f"standings: out of date ({why}); the next pass works them out again, "
                      "or now: referee standings --rebuild")
            for line in status_lines(games):
                print(line)
        return _fresh(health, age)


def run_health(args: argparse.Namespace) -> int:
    age = _max_age(args.max_age)
    with opened(args) as referee:
        last = referee.health.last_pass()
        print(f"last pass: {last['at']} ({last['what']})" if last else "last pass: none yet")
        if clock := referee.clock.warning():
            print(_clock_line(clock))
        return _fresh({"last_pass": last}, age)


def _max_age(text: str | None) -> timedelta | None:
    return None if text is None else duration("--max-age", text)


def _fresh(health: dict[str, Any], age: timedelta | None) -> int:
    """0, or 1 when ``--max-age`` is given and no pass completed that recently."""
    if age is None:
        return 0
    last = health["last_pass"]
    now = now_utc()
    at = datetime.fromisoformat(last["at"].rstrip("Z")) if last else None
    if at is not None and at > now + CLOCK_SKEW:
        # Written by an older version for a pass run with --now: no evidence.
        print(f"referee: the last pass is recorded at {last['at']}, later than now; no pass "
              f"is known to have completed in the last {format_duration(age)}", file=sys.stderr)
        return 1
    if at is None or at < now - age:
        print(f"referee: no pass completed in the last {format_duration(age)}",
              file=sys.stderr)
        return 1
    return 0


def format_health(health: dict[str, Any]) -> str:
    box, last, error = health["outbox"], health["last_pass"], health["last_error"]
    waiting = f", the oldest waiting since {box['oldest_waiting']}" if box["oldest_waiting"] \
        else ""
    failed = f", {box['failed']} failed (see: referee outbox)" if box["failed"] else ""
    lines = [f"outbox: {box['queued']} waiting{waiting}{failed}"]
    inbound = health["inbound"]
    if inbound["failed"] or inbound["retrying"] or inbound["waiting"]:
        again = f", {inbound['retrying']} to read again" if inbound["retrying"] else ""
        waiting = (f", {inbound['waiting']} waiting for their game's package"
                   if inbound["waiting"] else "")
        lines.append(f"inbound: {inbound['failed']} failed{again}{waiting} "
                     "(see: referee inbound)")
        for r in inbound["recent"]:
            lines.append(f"  {r['id']} at {r['received_at']} from {r['sender'] or '-'}: "
                         f"{r['reason']}")
    lines.append(f"last pass: {last['at']} ({last['what']})" if last else "last pass: none yet")
    if error:
        lines.append(f"last error: {error['at']}: {error['what']}")
    if health.get("clock"):
        lines.append(_clock_line(health["clock"]))
    return "\n".join(lines) + "\n"


def _clock_line(clock: dict[str, str]) -> str:
    """The clock's warning as ``status`` and ``health`` show it."""
    return f"clock: {clock['at']}: {clock['what']}"


def write_json_list(items: Iterable[Any], out: IO[str]) -> None:
    """Write ``items`` as one JSON array, an item a line, as they come (the
    C encoder: an indented dump is several times slower)."""
    first = True
    for item in items:
        out.write("[\n" if first else ",\n")
        out.write(json.dumps(item))
        first = False
    out.write("[]\n" if first else "\n]\n")


def format_status(games: Iterable[dict[str, Any]]) -> str:
    return "\n".join(status_lines(games))


def with_away(games: Iterable[dict[str, Any]],
              away: dict[tuple[str, int], str]) -> Iterator[dict[str, Any]]:
    """``games`` with each player away now marked (``away_until``)."""
    tags = {tag for tag, _ in away}
    for g in games:
        if g["tag"] in tags:
            g = {**g, "players": [{**p, "away_until": away[g["tag"], p["seat"]]}
                                  if (g["tag"], p["seat"]) in away else p
                                  for p in g["players"]]}
        yield g


def status_lines(games: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The lines of ``status`` for ``games``, a game at a time."""
    empty = True
    for g in games:
        empty = False
        out = []
        out.append(f"{g['tag']}  ({g['kind']}, {g['status']})  round {g.get('round', '-')}")
        if g.get("waits"):
            out.append(f"  {g['tag']}: {g['waits']}")
        if g.get("prize"):
            out.append(f"  prize: {g['prize']}")
        for name, score in g.get("scores", {}).items():
            out.append(f"  {name:<24} {score}")
        for p in g["players"]:
            if p.get("bounced"):
                out.append(f"  mail to {p['name']} <{p['address']}> bounced at "
                           f"{p['bounced']['at']}: {p['bounced']['said']}")
        for p in g["players"]:
            if p.get("away_until") and g["status"] == "active":
                out.append(f"  {p['name']} is away until {p['away_until']}")
        for d in g["deadlines"]:
            out.append(f"  waiting for {d['name']}: {d['what']}, due {d['due_at']}")
        if g.get("result"):
            out.append(f"  result: {g['result']}")
        yield from out
    if empty:
        yield "No games yet. Start one with: referee game new KIND --player ADDR ..."


STATUS = Command("status", add_status_parser, run_status)
HEALTH = Command("health", add_health_parser, run_health)
