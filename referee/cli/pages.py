"""``referee pages``: write the game pages (static HTML)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.cli.common import Command, Subparsers, opened, parse_now
from referee.problems import EX_CONFIG, writing
from referee.service import RefereeError


def add_parser(sub: Subparsers) -> None:
    pages = sub.add_parser("pages", help="write the game pages (static HTML)")
    pages.add_argument("dir", nargs="?", help="the folder (default: [web] path)")
    pages.add_argument("--now", help="the time the pages say they were written (ISO-8601, UTC)")


def run(args: argparse.Namespace) -> int:
    from referee.web import write_pages

    with opened(args) as referee:
        config = referee.config
        folder = Path(args.dir) if args.dir else config.web.path
        if folder is None:
            raise RefereeError("name the folder, or set [web] path in the config")
        with writing(folder, "pages" if args.dir else "[web] path",
                     "name a folder that can be made, writable by this user"):
            unserved: list[str] = []
            count = write_pages(referee, config.resolve(folder) if not args.dir else folder,
                                parse_now(args.now), unserved)
        print(f"{count} game page(s) and index.html written to {folder}")
        for line in unserved:
            print(f"referee: {line}; its page is left as it was", file=sys.stderr)
        return EX_CONFIG if unserved else 0


COMMAND = Command("pages", add_parser, run)
