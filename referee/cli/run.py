"""``referee run``: the daemon (IMAP IDLE or polling, deadlines, outbox),
holding the lock and the database's pass lease while it runs."""

from __future__ import annotations

import argparse
import logging

from referee.cli.common import Command, Subparsers, opened
from referee.problems import LOCK_FIX, writing
from referee.service import RefereeError
from referee.store.db import DATABASE_ERROR, cannot_use, database_problem


def add_parser(sub: Subparsers) -> None:
    run = sub.add_parser("run", help="the daemon: IMAP IDLE or polling, deadlines, outbox")
    run.add_argument("--trust-clock", action="store_true",
                     help="this machine's clock is right, as it is at the start: fire the "
                          "deadlines by it though the mail's time says otherwise")


def run(args: argparse.Namespace) -> int:
    from referee.check import check_servers
    from referee.passes import exclusive
    from referee.scheduler import run_daemon

    stopped: int | None = None  # the daemon's exit code, once it ran
    with opened(args, remember_games=True) as referee:
        config = referee.config
        lock = config.resolve(config.referee.lock_file)
        try:
            with writing(lock, "[referee] lock_file", LOCK_FIX), \
                    exclusive(referee) as mine:
                if not mine:
                    raise RefereeError(
                        f"another referee holds {config.resolve(config.referee.lock_file)} "
                        "or the database's pass lease; stop it first (or let its pass finish)")
                for stall in referee.guests.stalled():
                    if stall.active:  # they wait; the daemon reads them once it is back
                        logging.getLogger("referee").error("%s", stall)
                stopped = run_daemon(referee, lambda: check_servers(config), args.trust_clock)
        except DATABASE_ERROR as e:
            if stopped is None or not cannot_use(e):
                raise
            # The daemon ran and stopped; its database (full, damaged) would
            # not take the pass lease back, which expires on its own. Said
            # once: a damaged file was the daemon's own last line.
            if stopped == 0:
                logging.getLogger("referee").warning(
                    "%s; the pass lease was not given back and expires on its own",
                    database_problem(e, config.database_url))
        return stopped


COMMAND = Command("run", add_parser, run, plays_games=True, daemon=True)
