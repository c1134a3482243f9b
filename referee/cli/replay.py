"""``referee replay``: rebuild a game from its seed and action log, and say
whether it matches the stored state."""

from __future__ import annotations

import argparse
import json

from referee.cli.common import Command, Subparsers, opened
from referee.service.reading import first_difference


def add_parser(sub: Subparsers) -> None:
    replay = sub.add_parser("replay", help="rebuild a game from its seed and action log")
    replay.add_argument("tag")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        state = referee.reading.replay(args.tag)
        print(json.dumps(state, indent=2))
        difference = first_difference(json.loads(json.dumps(state)),
                                      referee.reading.stored_state(args.tag, as_loaded=True))
        if difference is None:
            print(f"{args.tag}: the replay matches the stored state")
            return 0
        print(f"{args.tag}: the replay differs from the stored state at {difference}")
        return 1


COMMAND = Command("replay", add_parser, run, plays_games=True)
