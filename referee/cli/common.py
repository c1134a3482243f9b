"""What several commands of the command line share: the table entry each
command module makes (:class:`Command`), the referee a command works on
(its config read, its database checked, closed after), the times and
durations given on the command line, and the sending of what an operator's
command queued. How an error becomes an exit code is :func:`referee.cli.main`'s."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

from referee.config import MAX_DURATION, Config, checked_duration, load_config
from referee.service import Referee, RefereeError, now_utc
from referee.store.db import DATABASE_ERROR, cannot_use, database_problem

#: What ``add_subparsers`` returns: each command adds its parser to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@dataclass(frozen=True)
class Command:
    """One command of the table :func:`referee.cli.main` walks: its parser
    section (``add_parser`` adds its subparser) and its handler (``run``,
    the exit code)."""

    name: str
    add_parser: Callable[[Subparsers], None]
    run: Callable[[argparse.Namespace], int]
    #: It referees or lists games: a game package that fails to load, or
    #: clashes with another, is a line at its start (the rest play on).
    plays_games: bool = False
    #: The daemon: its warnings (a server down, a mail retried) are its only
    #: voice, so it logs them unasked; a Ctrl-C before it is up stops it
    #: "while starting".
    daemon: bool = False


def init_command(path: str) -> str:
    """The command that sets up or upgrades the database of the config at ``path``."""
    return f"referee --config {path} init"


def read_config(path: str) -> Config:
    """The config at ``path``, each warning of its reading (a byte-order
    mark) said once: in the log where it shows warnings (the daemon's, or
    ``-v``), else as a line on stderr, which cron mails."""
    config = load_config(path)
    log = logging.getLogger("referee")
    for warning in config.warnings:
        if log.isEnabledFor(logging.WARNING):
            log.warning("%s", warning)
        else:
            print(f"referee: {warning}", file=sys.stderr)
    return config


@contextmanager
def database_errors(config: Config) -> Iterator[None]:
    """A database that cannot be used, as the one line any command gives."""
    try:
        yield
    except DATABASE_ERROR as e:
        if not cannot_use(e):
            raise  # about the data in hand: a bug, shown whole
        # Nothing was done that the next run will not do; the code says
        # whether to wait (busy) or to fix something (a permission, a
        # server, a full disk, a damaged file).
        raise database_problem(e, config.database_url) from None


@contextmanager
def opened(args: argparse.Namespace, remember_games: bool = False) -> Iterator[Referee]:
    """The referee of the config ``--config`` names, on its database at this
    code's schema; closed after. ``remember_games``: note which distribution
    each installed kind came from, so that a game whose package is later
    lost names what to install."""
    from referee.store.db import make_engine, schema_problem

    config = read_config(args.config)
    with database_errors(config):
        # One engine checks the schema and then serves the command: a second
        # would connect (and on PostgreSQL learn the server) all over again.
        db_engine = make_engine(config.database_url)
        if problem := schema_problem(db_engine, config.database_url,
                                     init_command(args.config)):
            db_engine.dispose()
            raise problem
        referee = Referee(config, db_engine)
        try:
            if remember_games:
                from referee.games import GAMES

                referee.guests.remember(GAMES.sources(), now_utc())
            yield referee
        finally:
            referee.close()


def parse_now(text: str | None) -> datetime | None:
    """``--now`` as stored: naive UTC. A time without a zone is taken as UTC."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SystemExit(f"referee: --now {text!r} is not an ISO-8601 time") from None
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when


def duration(option: str, text: str, maximum: timedelta = MAX_DURATION) -> timedelta:
    """A duration given on the command line: with a unit, positive, at most a year."""
    try:
        return checked_duration(text, maximum)
    except ValueError as e:
        raise RefereeError(f"{option}: {e}") from None


def number(option: str, text: str, what: str = "outbox") -> int:
    """An id given on the command line, of a row ``referee WHAT`` lists."""
    if not text.isdigit():
        raise RefereeError(f"{option}: {text!r} is not an {what} id (see: referee {what})")
    return int(text)


def json_or_empty(rows: list[dict[str, Any]], as_json: bool, empty: str) -> bool:
    """Print ``rows`` as JSON, or say ``empty`` when there are none; True
    when that was the whole answer."""
    if as_json:
        print(json.dumps(rows, indent=2))
        return True
    if not rows:
        print(empty)
    return False


def send_unless_busy(referee: Referee, now: datetime | None) -> None:
    """Send what an operator's command queued, unless a pass or the daemon
    runs: then its outbox job sends it, and sending here too could send twice."""
    from referee.passes import exclusive, send_outbox

    with exclusive(referee) as mine:
        if mine:
            send_outbox(referee, now)
    if referee.relay_error is not None:
        from referee.check import explain

        problem = explain(referee.relay_error, "smtp", referee.config.smtp)
        print(f"referee: the mail is queued, not sent: {problem}", file=sys.stderr)
