"""The ``referee`` command line: one module a command (``init``, ``check``,
``game new/resign/extend/cancel``, ``player rotate/readdress``, ``prune``,
``poll``, ``run``, ``status`` and ``health``, ``outbox``, ``inbound``,
``pages``, ``replay``, ``verify``, ``games``, ``demo``, the club's
``tables``, ``table cancel``, ``member add`` and ``standings``), each with its parser
section and its handler (a :class:`~referee.cli.common.Command`), in the
table :data:`COMMANDS` that :func:`main` walks; what several share is
:mod:`referee.cli.common`. Here: the options of every command, the logging
they ask for, and how an error becomes a line and an exit code."""

from __future__ import annotations

import sys

# Ctrl-C while the modules load (the first half second of any command) is
# one line and 130, as later: it raised KeyboardInterrupt in whichever
# import it met, a traceback of 20 lines.
try:
    import argparse
    import gc
    import logging
    import os
    import signal
    from collections.abc import Iterator, Sequence
    from contextlib import contextmanager
    from pathlib import Path

    from referee import signals
    from referee.cli import (
        check,
        demo,
        game,
        games,
        inbound,
        init,
        member,
        outbox,
        pages,
        player,
        poll,
        prune,
        replay,
        run,
        standings,
        status,
        tables,
        verify,
    )
    from referee.cli.common import Command
    from referee.cli.status import format_status as format_status
    from referee.config import ConfigError
    from referee.games import PackageFault
    from referee.logs import LEVELS, setup_logging
    from referee.problems import EX_CONFIG, Problem, writing
    from referee.service import RefereeError
except KeyboardInterrupt:
    print("referee: stopped by SIGINT while starting", file=sys.stderr)
    raise SystemExit(130) from None  # 128 + SIGINT, as signals.exit_code says

#: What Ctrl-C before a command began says.
STOPPED_STARTING = "referee: stopped by SIGINT while starting"

# What the imports made lives as long as the process: the collector need not
# walk it again on each full pass (a tenth of ``status`` at 10,000 games went
# to that). Here, not in ``main``: once a process, however often it is called.
gc.freeze()

#: Every command, by name, in the order ``referee --help`` lists them.
COMMANDS: dict[str, Command] = {command.name: command for command in (
    init.COMMAND, check.COMMAND, game.COMMAND, player.COMMAND, prune.COMMAND,
    poll.COMMAND, run.COMMAND, status.STATUS, status.HEALTH, outbox.COMMAND,
    inbound.COMMAND, pages.COMMAND, replay.COMMAND, verify.COMMAND, games.COMMAND,
    demo.COMMAND, tables.TABLES, tables.TABLE, member.COMMAND,
    standings.COMMAND)}


def _version() -> str:
    """The installed distribution's version (pyproject.toml's, once installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pbm-referee")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The options every command takes, and each command's own section."""
    p = argparse.ArgumentParser(prog="referee", description="A play-by-mail game referee.")
    p.add_argument("--version", action="version", version=f"referee {_version()}")
    p.add_argument("--config", "-c", default="referee.toml", help="config file (TOML)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log what happens (--log-level info), and print poll's summary")
    p.add_argument("--log-level", choices=LEVELS,
                   help="error by default (warning for run), info with -v; debug adds the "
                        "libraries' own")
    p.add_argument("--log-file", type=Path, metavar="FILE", help="log here, not to stderr")
    p.add_argument("--log-format", choices=("text", "json"), default="text",
                   help="json: one JSON object a line")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with _held_logs() as held:
            # The games' own options load their packages: a while, for Ctrl-C.
            args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        print(STOPPED_STARTING, file=sys.stderr)
        return signals.exit_code(signal.SIGINT)
    command = COMMANDS[args.command]
    try:
        code = _command(command, args, held)
        sys.stdout.flush()  # here, where a reader gone away is still caught
        return code
    except BrokenPipeError:
        # The reader stopped reading (`status | head -1`): what it wanted it
        # has. Point stdout at nothing, so the flush at exit cannot fail too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Problem as e:
        print(f"referee: {e}", file=sys.stderr)
        return e.exit_code
    except ConfigError as e:
        print(f"referee: bad config: {e}", file=sys.stderr)
        return e.exit_code
    except RefereeError as e:
        print(f"referee: {e}", file=sys.stderr)
        return 1
    except PackageFault as e:
        # A game package raised in an operator's command (its `new`, its
        # replay): the package's line, as `check` says it.
        print(f"referee: {e}", file=sys.stderr)
        return EX_CONFIG
    except KeyboardInterrupt:
        # Ctrl-C where no handler of ours waits for it (a command starting,
        # a second Ctrl-C in poll): what was not committed is not done.
        print(STOPPED_STARTING if command.daemon else "referee: stopped by SIGINT",
              file=sys.stderr)
        return signals.exit_code(signal.SIGINT)


def _command(command: Command, args: argparse.Namespace, held: list[logging.LogRecord]) -> int:
    _start_logging(args)
    for record in held:
        logging.getLogger(record.name).handle(record)
    if command.plays_games:
        from referee.games import GAMES

        GAMES.problems()  # each a line of the log, an error
    return command.run(args)


def _start_logging(args: argparse.Namespace) -> None:
    """Log as the options say; a ``--log-file`` that cannot be opened is one line."""
    # A one-shot command says what went wrong in its own line; the daemon's
    # warnings (a server down, a mail retried) are its only voice.
    quiet = "warning" if COMMANDS[args.command].daemon else "error"
    with writing(args.log_file, "--log-file", "name a file in a folder that exists"):
        setup_logging(args.log_level or ("info" if args.verbose else quiet),
                      args.log_file, args.log_format)


class _Holder(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _held_logs() -> Iterator[list[logging.LogRecord]]:
    """What is logged while the command line is read (a game package found
    broken as ``game new`` asks the games for their flags), held for the
    logging the options ask for, which cannot start before they are read."""
    records: list[logging.LogRecord] = []
    holder = _Holder(records)
    root = logging.getLogger()
    root.addHandler(holder)
    try:
        yield records
    finally:
        root.removeHandler(holder)
