"""``referee init``: create the database, or upgrade it to this code's schema."""

from __future__ import annotations

import argparse

from referee.cli.common import Command, Subparsers, database_errors, read_config
from referee.problems import EX_CANTCREAT, EX_NOPERM, Problem
from referee.store.db import safe_url


def add_parser(sub: Subparsers) -> None:
    sub.add_parser("init", help="create or upgrade the database")


def run(args: argparse.Namespace) -> int:
    from referee.store.db import sqlite_folder_problem, upgrade

    config = read_config(args.config)
    with database_errors(config):
        if missing := sqlite_folder_problem(config.database_url):
            code = EX_NOPERM if "not writable" in missing else EX_CANTCREAT
            raise Problem(f"{missing} ([referee] database); create it, writable by "
                          "the referee's user", code)
        upgrade(config.database_url)
        print(f"database ready: {safe_url(config.referee.database)}")
        return 0


COMMAND = Command("init", add_parser, run)
