"""``referee check``: read the config, log in to the mail servers, open the
database: one line per part, and the exit code of the first failure."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.common import Command, Subparsers, database_errors, init_command
from referee.config import Config, ConfigError, load_config
from referee.problems import EX_CONFIG, Problem, ServerProblem
from referee.service import Referee, now_utc
from referee.store.db import DATABASE_ERROR, cannot_use, database_problem, safe_url

if TYPE_CHECKING:
    from referee.check import Line


def add_parser(sub: Subparsers) -> None:
    sub.add_parser("check", help="read the config, log in to the mail servers, open the "
                                 "database: one line per part")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as e:
        return _config_fails(e)
    with database_errors(config):
        return run_check(config, args.config, args.log_file)


def run_check(config: Config, path: str, log_file: Path | None = None) -> int:
    """``referee check``: one line per part; the exit code of the first failure."""
    from referee.check import (
        Line,
        check_files,
        check_games,
        check_standings,
        check_standings_current,
    )

    lines = [Line("config", "OK", f"{path}: the referee is {config.referee.address}"),
             *(Line("config", "WARN", warning) for warning in config.warnings),
             _check_database(config, path)]
    database_ok = lines[-1].verdict == "OK"
    lines += check_files(config, log_file)
    lines += check_standings(config)
    if database_ok:
        lines += check_games(config)
        if all(ln.verdict == "OK" for ln in lines if ln.part == "standings"):
            lines += check_standings_current(config)
    lines += _servers(config)
    if all(ln.verdict == "OK" for ln in lines if ln.part in ("database", "mailbox")):
        lines += _whose_mailbox(config)
    if all(ln.verdict == "OK" for ln in lines if ln.part in ("mailbox", "smtp")):
        lines += _probe(config)
    lines += _auth(config)
    for line in lines:
        print(line)
    return next((ln.exit_code for ln in lines if ln.exit_code), 0)


def _servers(config: Config) -> list[Line]:
    """The mailbox's line and the relay's: logged in to, or the Maildir
    each is, writable."""
    from referee.check import (
        Line,
        check_imap,
        check_maildir,
        check_maildir_writable,
        check_smtp,
    )

    def mailbox() -> str:
        if config.mailbox.kind == "imap":
            return check_imap(config.mailbox, config.referee.max_message_size)
        return check_maildir_writable(config.resolve(config.mailbox.path), "[mailbox] path",
                                      check_maildir(config))

    def smtp() -> str:
        if config.smtp.kind == "smtp":
            return check_smtp(config.smtp)
        out = config.resolve(config.smtp.path)
        return check_maildir_writable(out, "[smtp] path",
                                      f"dry run: mail goes into the Maildir {out}")

    lines = []
    parts: list[tuple[str, Callable[[], str]]] = [("mailbox", mailbox), ("smtp", smtp)]
    for part, fn in parts:
        try:
            lines.append(Line(part, "OK", fn()))
        except Problem as e:
            lines.append(Line(part, "FAIL", str(e), e.exit_code))
    return lines


def _probe(config: Config) -> list[Line]:
    """A test mail through the relay to the referee itself, once both
    servers answered: at a plus address where private reply addresses or
    VERP need one (and the mailbox is read over IMAP, to see it arrive),
    else at its own address; the clock against its arrival, and an
    Authentication-Results header the server should have stripped."""
    from referee.check import Line, probe_delivery
    from referee.service.clock import clock_against

    if config.smtp.kind != "smtp":
        return []
    auth = config.auth
    plus = (auth.require == "verified" or config.smtp.verp) and config.mailbox.kind == "imap"
    part = "plus" if plus else "send"
    lines = []
    try:
        reached, kept, arrived = probe_delivery(config, plus)
        lines.append(Line(part, "OK", reached))
        if arrived is not None and (skew := clock_against(now_utc(), arrived)):
            lines.append(Line("clock", "WARN", skew))
        if kept:
            lines.append(Line(
                "auth", "FAIL", f"[auth] authserv_id: the server kept an "
                f"Authentication-Results header of {auth.authserv_id} that the sender "
                "wrote (the probe's): anyone could write themselves a pass; make the "
                "server strip such headers from incoming mail (see the README), or "
                "unset authserv_id", EX_CONFIG))
    except ServerProblem as e:
        lines.append(Line(part, "FAIL", str(e), e.exit_code))
    return lines


def _auth(config: Config) -> list[Line]:
    """What ``[auth]`` lets count as a player's mail: a warning for each
    way it trusts too much or too little, or that it is as it should be."""
    from referee.check import Line

    auth = config.auth
    lines = []
    if auth.require == "none":
        lines.append(Line("auth", "WARN", '[auth] require = "none": a mail counts for the '
                          "player its From names, and anyone can write any From; set "
                          'require = "verified" so that only a player\'s own mail counts'))
    if not auth.authserv_id:
        lines.append(Line("auth", "WARN", "[auth] authserv_id is empty: nothing vouches for "
                          "strangers, so one who asks to join is seated only after replying "
                          "to a confirmation, and strangers (forged From lines too) get up to "
                          f"{config.limits.stranger_replies_per_day} replies a day ([limits] "
                          "stranger_replies_per_day); set authserv_id to the id of your mail "
                          "server's Authentication-Results"))
    if auth.require == "verified" and not auth.authserv_id:
        lines.append(Line("auth", "WARN", '[auth] require = "verified" with no authserv_id: '
                          "only replies to the private reply addresses count; set "
                          "authserv_id to also trust your server's DMARC/DKIM/SPF results"))
    elif auth.require == "verified":
        lines.append(Line("auth", "OK", f"verified: private reply addresses, and "
                          f"Authentication-Results of {auth.authserv_id}"))
    return lines


def _whose_mailbox(config: Config) -> list[Line]:
    """A FAIL line when a fresh database meets another referee's mailbox,
    as ``poll`` refuses it (``service/intake/ownership``)."""
    from imapclient.exceptions import IMAPClientError

    from referee.check import Line, explain
    from referee.passes import foreign_mail

    referee = Referee(config)
    try:
        said = foreign_mail(referee)
    except (IMAPClientError, OSError) as e:
        problem = explain(e, "mailbox", config.mailbox)
        return [Line("mailbox", "FAIL", str(problem), problem.exit_code)]
    finally:
        referee.close()
    return [Line("mailbox", "FAIL", said, EX_CONFIG)] if said else []



def _config_fails(error: ConfigError) -> int:
    """``check`` of a config that cannot be used: its FAIL line, and its
    code; nothing else can be tried without it."""
    from referee.check import Line

    print(Line("config", "FAIL", str(error), error.exit_code))
    return error.exit_code


def _check_database(config: Config, path: str) -> Line:
    """``check``'s database line: at this code's schema, and taking a write
    (as the first thing of a pass is), or the line any command would give."""
    from referee.check import Line
    from referee.store.db import make_engine, schema_problem, try_write

    url = config.database_url
    try:
        engine = make_engine(url)
        try:
            if problem := schema_problem(engine, url, init_command(path)):
                raise problem
            try_write(engine, url)
        finally:
            engine.dispose()
    except DATABASE_ERROR as e:
        if not cannot_use(e):
            raise
        problem = database_problem(e, url)
        return Line("database", "FAIL", str(problem), problem.exit_code)
    except Problem as e:
        return Line("database", "FAIL", str(e), e.exit_code)
    return Line("database", "OK", f"{safe_url(config.referee.database)}: writable")


COMMAND = Command("check", add_parser, run)
