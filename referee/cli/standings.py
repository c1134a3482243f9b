"""``referee standings [KIND] [--season S] [--rebuild]``: the club's
standings as stored (issue 40), or worked out again from every finished
game first; the same record gives the same table."""

from __future__ import annotations

import argparse
import json

from referee.cli.common import Command, Subparsers, opened, parse_now
from referee.service import RefereeError
from referee.service.club.tables import Refused
from referee.service.play.results import as_text


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("standings", help="the club's standings per kind of game "
                                         "([club] standings = true)")
    p.add_argument("kind", nargs="?", help="one kind of game (default: every kind rated)")
    p.add_argument("--season", help="a season, like 2026-Q4 or 2026, or 'all' for all time "
                                    "(default: the season now, else all time)")
    p.add_argument("--rebuild", action="store_true",
                   help="work the tables out again from every finished game, then print them")
    p.add_argument("--json", action="store_true", help="the tables as JSON")
    p.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        try:
            found = referee.club.standings(args.kind, args.season, parse_now(args.now),
                                           rebuild=args.rebuild)
        except Refused as e:
            raise RefereeError(str(e)) from None
        if args.json:
            print(json.dumps([{"kind": t.kind, "title": t.title, "season": t.season or "all",
                               "lines": [{"place": ln.place, "name": ln.name,
                                          "points": ln.points, "games": ln.games,
                                          "won": ln.wins, "hidden": ln.hidden}
                                         for ln in t.lines]} for t in found], indent=2))
        elif not found:
            print("no game rated yet" + (f" ({args.kind})" if args.kind else ""))
        else:
            left = referee.club.standings_left_out()
            print(as_text(found, {k: v for k, v in left.items() if args.kind in (None, k)}))
        if not args.json and (why := referee.club.standings_stale()) is not None:
            print(f"These tables are out of date: {why}. The next pass works them out "
                  "again, or now: referee standings --rebuild")
        return 0


COMMAND = Command("standings", add_parser, run, plays_games=True)
