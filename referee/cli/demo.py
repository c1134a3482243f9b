"""``referee demo``: play a whole game by mail, with no server."""

from __future__ import annotations

import argparse

from referee.cli.common import Command, Subparsers
from referee.problems import writing


def add_parser(sub: Subparsers) -> None:
    demo = sub.add_parser("demo", help="play a whole game by mail, with no server")
    demo.add_argument("kind", nargs="?")
    demo.add_argument("--dir", default="referee-demo",
                      help="working folder: new, empty, or an earlier demo's (emptied)")
    demo.add_argument("--seed", default="demo")


def run(args: argparse.Namespace) -> int:
    from referee.demo import DEMO_KIND, run_demo

    with writing(args.dir, "--dir", "give --dir a folder that can be made"):
        return run_demo(DEMO_KIND if args.kind is None else args.kind, args.dir, args.seed)


COMMAND = Command("demo", add_parser, run, plays_games=True)
