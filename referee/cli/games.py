"""``referee games``: every kind of game, built in or installed: its title,
seat counts and options."""

from __future__ import annotations

import argparse
import json
from typing import Any

from referee.cli.common import Command, Subparsers
from referee.games import PackageFault
from referee.service.play.pace import help_lines


def add_parser(sub: Subparsers) -> None:
    games = sub.add_parser("games", help="list every kind of game, built in or installed: "
                                         "title, players, options")
    games.add_argument("--json", action="store_true", help="the kinds as JSON")


def run(args: argparse.Namespace) -> int:
    """A few lines per kind; 1 if one cannot be loaded."""
    games = describe_games()
    if args.json:
        print(json.dumps(games, indent=2))
    for game in [] if args.json else games:
        if "title" not in game:
            print(f"{game['kind']}: cannot be loaded ({game['from']}): {game['error']}")
            continue
        print(f"{game['kind']}: {game['title']}, {_seats(*game['seats'])} ({game['from']})")
        for key, option in game["options"].items():
            said = f"  {key}={_option_text(option['default'])}"
            print(f"{said:<34} {option['help']}".rstrip())
    if not args.json:
        print("Every game also takes deadline=, reminder= and mail= (all, turns or digest),")
        print("and the referee's own options (the first value is the default):")
        for line in help_lines():
            print(line)
    return 1 if any("title" not in g for g in games) else 0


def describe_games() -> list[dict[str, Any]]:
    """Every kind of game, built in or installed: its title, seat counts and
    options (each with its default) with the default options; a kind whose
    package failed to load says why instead."""
    from referee.games import GAMES
    from referee.games.base import EngineError

    out: list[dict[str, Any]] = []
    for kind, source in sorted(GAMES.sources().items()):
        entry: dict[str, Any] = {"kind": kind, "package": source.package,
                                 "from": source.where}
        try:
            engine = GAMES[kind]
        except KeyError as e:
            out.append({**entry, "error": str(e)})
            continue
        try:
            options = engine.parse_options({})
            low, high = engine.seat_count(options)
        except PackageFault as e:
            out.append({**entry, "error": str(e)})
            continue
        except EngineError as e:  # a game with no default for an option it needs
            options, low, high = {}, 0, 0
            entry["error"] = str(e)
        out.append({**entry, "title": engine.title, "seats": [low, high],
                    "options": {k: {"default": v, "help": engine.option_help.get(k, "")}
                                for k, v in options.items()},
                    "takes_members_by_mail": engine.takes_members_by_mail})
    return out


def _seats(low: int, high: int) -> str:
    """A kind's seat counts in words."""
    if high >= 1000:
        return f"{low} or more players" if low else "any number of members, who join by mail"
    if low == high:
        return f"{low} players"
    return f"{low} to {high} players"


def _option_text(value: Any) -> str:
    """An option's default as written on the command line; a text of many
    lines by its size alone."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "(none)"
    if isinstance(value, str) and "\n" in value.strip():
        return f"(a text of {len(value.strip().splitlines())} lines)"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


COMMAND = Command("games", add_parser, run, plays_games=True)
