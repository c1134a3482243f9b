"""``referee prune``: drop the sent mail bodies and inbound records of games
that ended long ago."""

from __future__ import annotations

import argparse
from datetime import timedelta

from referee.cli.common import Command, Subparsers, duration, opened, parse_now
from referee.config import format_duration
from referee.service import now_utc


def add_parser(sub: Subparsers) -> None:
    prune = sub.add_parser("prune", help="drop sent mail bodies and inbound records of games "
                                         "that ended long ago")
    prune.add_argument("--older-than", required=True, metavar="DURATION",
                       help="games that ended longer ago than this, e.g. 180d")
    prune.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        age = duration("--older-than", args.older_than, maximum=timedelta(days=3660))
        bodies, inbound = referee.operator.prune((parse_now(args.now) or now_utc()) - age)
        print(f"pruned {bodies} sent mail body(ies) and {inbound} inbound record(s) of games "
              f"that ended more than {format_duration(age)} ago")
        return 0


COMMAND = Command("prune", add_parser, run)
