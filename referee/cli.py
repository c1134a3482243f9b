"""The ``referee`` command line: init, game new, player rotate, poll, run, status,
pages, replay, verify, demo."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from referee import signals
from referee.config import (
    MAX_DURATION,
    Config,
    ConfigError,
    checked_duration,
    format_duration,
    load_config,
)
from referee.games import PackageFault
from referee.logs import LEVELS, setup_logging
from referee.problems import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_NOPERM,
    EX_TEMPFAIL,
    LOCK_FIX,
    ForeignMailbox,
    Problem,
    ServerProblem,
    writing,
)
from referee.service import Referee, RefereeError, now_utc
from referee.service.reading import first_difference
from referee.store.db import DATABASE_ERROR, cannot_use, database_problem, safe_url

if TYPE_CHECKING:
    from referee.check import Line

if TYPE_CHECKING:
    from referee.passes import PassReport

if TYPE_CHECKING:
    from referee.check import Line
    from referee.passes import PassReport

# What the imports made lives as long as the process: the collector need not
# walk it again on each full pass (a tenth of ``status`` at 10,000 games went
# to that). Here, not in ``main``: once a process, however often it is called.
gc.freeze()

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


def _options(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"referee: --option {pair!r} must be KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _read_text(path: str) -> str:
    """A text file named on the command line, or a one-line error."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise RefereeError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None


def _version() -> str:
    """The installed distribution's version (pyproject.toml's, once installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pbm-referee")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
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

    sub.add_parser("init", help="create or upgrade the database")
    sub.add_parser("check", help="read the config, log in to the mail servers, open the "
                                 "database: one line per part")

    game = sub.add_parser("game", help="manage games").add_subparsers(dest="game_cmd",
                                                                       required=True)
    new = game.add_parser("new", help="create a game and mail the opening")
    new.add_argument("kind")
    new.add_argument("--player", action="append", default=[], metavar="ADDR",
                     help='a player, "Name <addr>" or addr; repeat per player')
    new.add_argument("--bot", action="count", default=0,
                     help="add a bot seat (sensible; --option bot=random for a random one)")
    new.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    new.add_argument("--instructions", metavar="FILE",
                     help="loatcg: the Scoring Instructions (see docs/loatcg-instructions.md)")
    new.add_argument("--seed", help="the game's random seed (default: random)")
    new.add_argument("--now", help="the time to start the game at (ISO-8601)")
    resign = game.add_parser("resign", help="hand a player's seat to a bot")
    resign.add_argument("tag")
    resign.add_argument("address")
    resign.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")
    extend = game.add_parser("extend", help="move a game's open deadlines later")
    extend.add_argument("tag")
    extend.add_argument("--by", required=True, help="how much later, like 2d or 36h")
    extend.add_argument("--reason", default="", help="a line for the players")
    extend.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")
    cancel = game.add_parser("cancel", help="end a game with no winner; everyone is told")
    cancel.add_argument("tag")
    cancel.add_argument("--reason", default="", help="a line for the players")
    cancel.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")

    player = sub.add_parser("player", help="manage players").add_subparsers(
        dest="player_cmd", required=True)
    rotate = player.add_parser(
        "rotate", help="give a player a new private reply address; the old one stops counting")
    rotate.add_argument("address", help='"Name <addr>" or addr')
    readdress = player.add_parser(
        "readdress", help="move a player to a new mail address (after a bounce); the table "
                          "is told")
    readdress.add_argument("old", help="the address the player has now")
    readdress.add_argument("new", help="the new address")
    readdress.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")

    prune = sub.add_parser("prune", help="drop sent mail bodies and inbound records of games "
                                         "that ended long ago")
    prune.add_argument("--older-than", required=True, metavar="DURATION",
                       help="games that ended longer ago than this, e.g. 180d")
    prune.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")

    poll = sub.add_parser("poll", help="one pass: mail in, deadlines, mail out")
    poll.add_argument("--now", help="take this as the current time (ISO-8601, UTC); the "
                                    "deadlines fire by it, whatever the mail's time says")
    poll.add_argument("--trust-clock", action="store_true",
                      help="this machine's clock is right: fire the deadlines by it though "
                           "the mail's time says otherwise")
    poll.add_argument("--adopt-mailbox", action="store_true",
                      help="a new database takes its mailbox over: the mail in it now stays "
                           "unread, what comes after is read")

    run = sub.add_parser("run", help="the daemon: IMAP IDLE or polling, deadlines, outbox")
    run.add_argument("--trust-clock", action="store_true",
                     help="this machine's clock is right, as it is at the start: fire the "
                          "deadlines by it though the mail's time says otherwise")

    status = sub.add_parser("status", help="the outbox, the last pass and error; games, "
                                           "whose move, deadlines, scores")
    status.add_argument("tag", nargs="?")
    status.add_argument("--json", action="store_true", help="the games as JSON")
    status.add_argument("--max-age", metavar="DURATION",
                        help="exit 1 when no pass completed this recently (for HEALTHCHECK "
                             "and monitoring), e.g. 15m")

    health = sub.add_parser("health", help="exit 1 when no pass completed recently (a "
                                           "health check: reads one row, lists no game)")
    health.add_argument("--max-age", metavar="DURATION", default="15m",
                        help="how recently a pass must have completed (default 15m)")

    outbox = sub.add_parser("outbox", help="mail waiting or failed; retry a failed one")
    outbox.add_argument("--retry", metavar="ID", help="send this mail again (or: all failed)")
    outbox.add_argument("--json", action="store_true")

    inbound = sub.add_parser("inbound", help="mail that failed to be read; read one again")
    inbound.add_argument("--retry", metavar="ID",
                         help="read this mail again from the mailbox (or: all failed)")
    inbound.add_argument("--json", action="store_true")

    pages = sub.add_parser("pages", help="write the game pages (static HTML)")
    pages.add_argument("dir", nargs="?", help="the folder (default: [web] path)")
    pages.add_argument("--now", help="the time the pages say they were written (ISO-8601, UTC)")

    replay = sub.add_parser("replay", help="rebuild a game from its seed and action log")
    replay.add_argument("tag")

    verify = sub.add_parser(
        "verify", help="check a game's draws: from its seed and action log (the operator's "
                       "audit), or with --mail from the mail a player received")
    verify.add_argument("tag")
    verify.add_argument("--mail", metavar="PATH", type=Path,
                        help="a player's mailbox (an mbox file or a Maildir folder): "
                             "needs no database and no config")

    games = sub.add_parser("games", help="list every kind of game, built in or installed: "
                                         "title, players, options")
    games.add_argument("--json", action="store_true", help="the kinds as JSON")

    demo = sub.add_parser("demo", help="play a whole game by mail, with no server")
    demo.add_argument("kind", nargs="?", default="goofspiel")
    demo.add_argument("--dir", default="referee-demo",
                      help="working folder: new, empty, or an earlier demo's (emptied)")
    demo.add_argument("--seed", default="demo")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = _command(args)
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
        starting = " while starting" if args.command == "run" else ""
        print(f"referee: stopped by SIGINT{starting}", file=sys.stderr)
        return signals.exit_code(signal.SIGINT)


#: The commands that referee or list games: a game package that fails to
#: load, or clashes with another, is a line at their start (the rest play on).
PLAYS_GAMES = ("poll", "run", "game", "games", "demo", "replay", "verify")


def _command(args: argparse.Namespace) -> int:
    _start_logging(args)
    if args.command in PLAYS_GAMES:
        from referee.games import GAMES

        GAMES.problems()  # each a line of the log, an error
    if args.command == "games":
        return _list_games(args.json)
    if args.command == "demo":
        from referee.demo import run_demo

        with writing(args.dir, "--dir", "give --dir a folder that can be made"):
            return run_demo(args.kind, args.dir, args.seed)
    if args.command == "verify" and args.mail is not None:
        return _verify_mail(args.tag, args.mail)  # a player's: no config, no database
    try:
        config = load_config(args.config)
    except ConfigError as e:
        if args.command != "check":
            raise
        return _config_fails(e)
    try:
        if args.command == "check":
            return run_check(config, args.config, args.log_file)
        return _dispatch(args, config)
    except DATABASE_ERROR as e:
        if not cannot_use(e):
            raise  # about the data in hand: a bug, shown whole
        # Nothing was done that the next run will not do; the code says
        # whether to wait (busy) or to fix something (a permission, a
        # server, a full disk, a damaged file).
        raise database_problem(e, config.database_url) from None


def _start_logging(args: argparse.Namespace) -> None:
    """Log as the options say; a ``--log-file`` that cannot be opened is one line."""
    # A one-shot command says what went wrong in its own line; the daemon's
    # warnings (a server down, a mail retried) are its only voice.
    quiet = "warning" if args.command == "run" else "error"
    with writing(args.log_file, "--log-file", "name a file in a folder that exists"):
        setup_logging(args.log_level or ("info" if args.verbose else quiet),
                      args.log_file, args.log_format)


def _dispatch(args: argparse.Namespace, config: Config) -> int:
    from referee.store.db import make_engine, schema_problem, sqlite_folder_problem, upgrade

    if args.command == "init":
        if missing := sqlite_folder_problem(config.database_url):
            code = EX_NOPERM if "not writable" in missing else EX_CANTCREAT
            raise Problem(f"{missing} ([referee] database); create it, writable by "
                          "the referee's user", code)
        upgrade(config.database_url)
        print(f"database ready: {safe_url(config.referee.database)}")
        return 0
    # One engine checks the schema and then serves the command: a second
    # would connect (and on PostgreSQL learn the server) all over again.
    db_engine = make_engine(config.database_url)
    if problem := schema_problem(db_engine, config.database_url, _init_command(args.config)):
        db_engine.dispose()
        raise problem
    referee = Referee(config, db_engine)
    try:
        if args.command in ("poll", "run", "game"):
            from referee.games import GAMES

            # Which distribution each installed kind came from, so that a
            # game whose package is later lost names what to install.
            referee.guests.remember(GAMES.sources(), now_utc())
        if args.command == "game" and args.game_cmd != "new":
            if args.game_cmd == "resign":
                name = referee.operator.resign_player(args.tag, args.address, parse_now(args.now))
                print(f"{args.tag}: a bot now plays {name}'s seat")
            elif args.game_cmd == "extend":
                by = _duration("--by", args.by)
                moved = referee.operator.extend_deadlines(args.tag, by, args.reason,
                                                          parse_now(args.now))
                print(f"{args.tag}: {moved} deadline(s) moved {format_duration(by)} later")
            else:
                referee.operator.cancel_game(args.tag, args.reason, parse_now(args.now))
                print(f"{args.tag}: cancelled")
            _send_unless_busy(referee, config, parse_now(args.now))
            return 0
        if args.command == "game":
            from referee.games import GAMES

            engine = GAMES.get(args.kind)
            members_by_mail = engine is not None and engine.takes_members_by_mail
            if not args.player and not args.bot and not members_by_mail:
                raise RefereeError("name the players with --player ADDR")
            options = _options(args.option)
            if args.instructions is not None:
                options["instructions"] = _read_text(args.instructions)
            tag = referee.operator.create_game(args.kind, args.player, bots=args.bot,
                                      options=options, seed=args.seed,
                                      now=parse_now(args.now))
            print(tag)
            _send_unless_busy(referee, config, parse_now(args.now))
            return 0
        if args.command == "player" and args.player_cmd == "readdress":
            name, tags = referee.operator.readdress_player(args.old, args.new, parse_now(args.now))
            told = f"; told {', '.join(tags)}" if tags else ""
            print(f"{name} now gets mail at {args.new}{told}")
            _send_unless_busy(referee, config, parse_now(args.now))
            return 0
        if args.command == "player":
            referee.operator.rotate_token(args.address)
            print(f"{args.address}: new private reply address; it goes out with the next mail")
            return 0
        if args.command == "poll":
            from referee.passes import exclusive

            lock = config.resolve(config.referee.lock_file)
            with writing(lock, "[referee] lock_file", LOCK_FIX), \
                    exclusive(referee) as mine:
                if not mine:
                    print(f"referee: another pass or the daemon is running (it holds "
                          f"{config.resolve(config.referee.lock_file)} or the database's "
                          "pass lease); this pass did nothing", file=sys.stderr)
                    return EX_TEMPFAIL
                started = parse_now(args.now) or now_utc()
                asked = signals.StopAsked()
                try:
                    report = _poll(referee, parse_now(args.now), asked, args.trust_clock,
                                   args.adopt_mailbox)
                except (ServerProblem, ForeignMailbox) as e:
                    referee.health.record_error(str(e), now_utc())
                    raise
                if asked.signum is not None and report.stopped:
                    # Not a completed pass: ``status --max-age`` must not count it.
                    print(f"referee: stopped by {signals.name(asked.signum)} after "
                          f"{report.read} mail(s); the rest waits for the next pass",
                          file=sys.stderr)
                    return signals.exit_code(asked.signum)
                # The real clock: a pass run with --now in the future must not
                # pass for a recent one in ``status --max-age``.
                referee.health.record_pass(str(report), now_utc())
                if report.pages is not None:
                    referee.health.record_error(str(report.pages), now_utc())
                lost = referee.health.failed_since(started)
            # Silent on success, so a cron line mails the operator only on trouble.
            logging.getLogger("referee").info("pass done: %s", report)
            if report.adopted is not None:
                print(f"the mailbox is this database's now: the {report.adopted} mail(s) in it "
                      "stay unread; what comes from now on is read")
            elif args.adopt_mailbox:
                print("this database reads its mailbox already: nothing to adopt")
            if report.clock is not None and report.clock.warning and not _logged_to_stderr(args):
                # A warning, not trouble that stops the pass: said, exit 0.
                print(f"referee: {report.clock.warning}", file=sys.stderr)
            if args.verbose:
                print(report)
            if lost:
                # Mail that will never arrive is trouble, though the pass ran.
                print(f"referee: {lost} mail(s) failed for good in this pass: the relay "
                      "refused them (see: referee outbox)", file=sys.stderr)
            # Games stalled for want of their package: the others were
            # played, and this pass says it as `check` does, with its code.
            stalled = [s for s in referee.guests.stalled() if s.active]
            for stall in stalled:
                print(f"referee: {stall}", file=sys.stderr)
            if report.pages is not None:
                # The mail went on; the pages wait for a pass that can write them.
                print(f"referee: {report.pages}", file=sys.stderr)
            if lost:
                return 1
            if report.pages is not None:
                return report.pages.exit_code
            return EX_CONFIG if stalled else 0
        if args.command == "run":
            from referee.check import check_servers
            from referee.passes import exclusive
            from referee.scheduler import run_daemon

            lock = config.resolve(config.referee.lock_file)
            with writing(lock, "[referee] lock_file", LOCK_FIX), \
                    exclusive(referee) as mine:
                if not mine:
                    raise RefereeError(
                        f"another referee holds {config.resolve(config.referee.lock_file)} "
                        "or the database's pass lease; stop it first (or let its pass finish)")
                for stall in referee.guests.stalled():
                    if stall.active:  # they wait; the daemon reads them once it is back
                        logging.getLogger("referee").error("%s", stall)
                return run_daemon(referee, lambda: check_servers(config), args.trust_clock)
        if args.command == "prune":
            age = _duration("--older-than", args.older_than, maximum=timedelta(days=3660))
            bodies, inbound = referee.operator.prune((parse_now(args.now) or now_utc()) - age)
            print(f"pruned {bodies} sent mail body(ies) and {inbound} inbound record(s) of games "
                  f"that ended more than {format_duration(age)} ago")
            return 0
        if args.command == "status":
            # One game is read whole (an unknown tag fails before any output);
            # all games stream, a batch at a time, so memory stays flat.
            games = referee.reading.status(args.tag) if args.tag else referee.reading.iter_status()
            health = {**referee.health.summary(), "clock": referee.clock.warning()}
            if args.json:
                write_json_list(games, sys.stdout)
            else:
                print(format_health(health))
                for line in status_lines(games):
                    print(line)
            return _fresh(health, args.max_age)
        if args.command == "health":
            last = referee.health.last_pass()
            print(f"last pass: {last['at']} ({last['what']})" if last else "last pass: none yet")
            if clock := referee.clock.warning():
                print(_clock_line(clock))
            return _fresh({"last_pass": last}, args.max_age)
        if args.command == "outbox":
            return _outbox(referee, config, args.retry, args.json)
        if args.command == "inbound":
            return _inbound(referee, config, args.retry, args.json)
        if args.command == "pages":

            from referee.web import write_pages

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
        if args.command == "verify":
            audit = referee.reading.examine(args.tag)
            if audit.problems:
                print(audit.problems[0])
                return 1
            print(audit.summary())
            print("verified")
            return 0
        if args.command == "replay":
            state = referee.reading.replay(args.tag)
            print(json.dumps(state, indent=2))
            difference = first_difference(json.loads(json.dumps(state)),
                                          referee.reading.stored_state(args.tag, as_loaded=True))
            if difference is None:
                print(f"{args.tag}: the replay matches the stored state")
                return 0
            print(f"{args.tag}: the replay differs from the stored state at {difference}")
            return 1
    finally:
        referee.close()
    return 2


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


def _list_games(as_json: bool) -> int:
    """``referee games``: a few lines per kind; 1 if one cannot be loaded."""
    games = describe_games()
    if as_json:
        print(json.dumps(games, indent=2))
    for game in [] if as_json else games:
        if "title" not in game:
            print(f"{game['kind']}: cannot be loaded ({game['from']}): {game['error']}")
            continue
        print(f"{game['kind']}: {game['title']}, {_seats(*game['seats'])} ({game['from']})")
        for key, option in game["options"].items():
            said = f"  {key}={_option_text(option['default'])}"
            print(f"{said:<34} {option['help']}".rstrip())
    if not as_json:
        print("Every game also takes deadline=, reminder= and mail= (all, turns or digest).")
    return 1 if any("title" not in g for g in games) else 0


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


def _logged_to_stderr(args: argparse.Namespace) -> bool:
    """Whether the log already puts a warning on stderr (``-v``, or
    ``--log-level`` warning or lower, with no ``--log-file``)."""
    level = args.log_level or ("info" if args.verbose else "error")
    return args.log_file is None and level in ("debug", "info", "warning")


def _poll(referee: Referee, now: datetime | None, asked: signals.StopAsked,
          trust_clock: bool = False, adopt: bool = False) -> PassReport:
    """One pass, stopped between two mails by a signal once the mailbox is
    open (before, Ctrl-C ends the command at once: nothing began); a mail
    server that cannot be used is a :class:`ServerProblem`."""
    import ssl

    from imapclient.exceptions import IMAPClientError

    from referee.check import check_maildir, explain
    from referee.mail.imap import ImapSource
    from referee.passes import run_pass

    config = referee.config
    source = None
    if config.mailbox.kind == "imap":
        source = ImapSource(config.mailbox, config.referee.max_message_size)
        try:
            source.connect()
        except (IMAPClientError, OSError) as e:
            raise explain(e, "mailbox", config.mailbox) from None
    else:
        check_maildir(config)
    try:
        with asked:
            report = run_pass(referee, now, imap=source, stop=asked,
                              trust_clock=trust_clock, adopt=adopt)
    except (IMAPClientError, ConnectionError, TimeoutError, ssl.SSLError) as e:
        raise explain(e, "mailbox", config.mailbox) from None
    finally:
        if source is not None:
            source.close()
    if referee.relay_error is not None:
        raise explain(referee.relay_error, "smtp", config.smtp)
    return report


def run_check(config: Config, path: str, log_file: Path | None = None) -> int:
    """``referee check``: one line per part; the exit code of the first failure."""
    from referee.check import (
        Line,
        check_files,
        check_games,
        check_imap,
        check_maildir,
        check_maildir_writable,
        check_smtp,
        probe_delivery,
    )
    from referee.service.clock import clock_against

    lines = [Line("config", "OK", f"{path}: the referee is {config.referee.address}"),
             _check_database(config, path)]
    database_ok = lines[-1].verdict == "OK"
    lines += check_files(config, log_file)
    if database_ok:
        lines += check_games(config)

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

    parts: list[tuple[str, Callable[[], str]]] = [("mailbox", mailbox), ("smtp", smtp)]
    for part, fn in parts:
        try:
            lines.append(Line(part, "OK", fn()))
        except Problem as e:
            lines.append(Line(part, "FAIL", str(e), e.exit_code))
    if all(ln.verdict == "OK" for ln in lines if ln.part in ("database", "mailbox")):
        lines += _whose_mailbox(config)
    # A test mail through the relay to the referee itself: at a plus address
    # where private reply addresses or VERP need one (and the mailbox is
    # read over IMAP, to see it arrive), else at its own address.
    auth = config.auth
    plus = (auth.require == "verified" or config.smtp.verp) and config.mailbox.kind == "imap"
    servers_ok = all(ln.verdict == "OK" for ln in lines if ln.part in ("mailbox", "smtp"))
    if servers_ok and config.smtp.kind == "smtp":
        part = "plus" if plus else "send"
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
    for line in lines:
        print(line)
    return next((ln.exit_code for ln in lines if ln.exit_code), 0)


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
            if problem := schema_problem(engine, url, _init_command(path)):
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


def _init_command(path: str) -> str:
    """The command that sets up or upgrades the database of the config at ``path``."""
    return f"referee --config {path} init"


def _verify_mail(tag: str, path: Path) -> int:
    """``verify TAG --mail PATH``: a player's check of the draws and
    commitments in the mail they received; prints ``verified`` (0) or the
    first mismatch (1)."""
    try:
        from referee.verify_mail import verify_mailbox
    except ImportError:
        raise RefereeError("verify --mail is not part of this installation") from None
    problems = verify_mailbox(tag, path)
    if problems:
        print(problems[0])
        return 1
    print("verified")
    return 0


def _send_unless_busy(referee: Referee, config: Config, now: datetime | None) -> None:
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


def _duration(option: str, text: str, maximum: timedelta = MAX_DURATION) -> timedelta:
    """A duration given on the command line: with a unit, positive, at most a year."""
    try:
        return checked_duration(text, maximum)
    except ValueError as e:
        raise RefereeError(f"{option}: {e}") from None


#: How far ahead of this machine's clock a recorded pass may be (another
#: worker's clock) and still count as having happened.
CLOCK_SKEW = timedelta(minutes=1)


def _fresh(health: dict[str, Any], max_age: str | None) -> int:
    """0, or 1 when ``--max-age`` is given and no pass completed that recently."""
    if max_age is None:
        return 0
    age = _duration("--max-age", max_age)
    last = health["last_pass"]
    now = now_utc()
    at = datetime.fromisoformat(last["at"].rstrip("Z")) if last else None
    if at is not None and at > now + CLOCK_SKEW:
        # Written by an older version for a pass run with --now: no evidence.
        print(f"referee: the last pass is recorded at {last['at']}, later than now; no pass "
              f"is known to have completed in the last {format_duration(age)}", file=sys.stderr)
        return 1
    if at is None or at < now - age:
        print(f"referee: no pass completed in the last {format_duration(age)}",
              file=sys.stderr)
        return 1
    return 0


def _outbox(referee: Referee, config: Config, retry: str | None, as_json: bool) -> int:
    rows = referee.health.outbox()
    if retry is not None:
        ids = ([r["id"] for r in rows if r["state"] == "failed"] if retry == "all"
               else [_number("--retry", retry)])
        for oid in ids:
            referee.health.retry(oid, now_utc())
        print(f"{len(ids)} mail(s) queued again")
        _send_unless_busy(referee, config, None)
        return 0
    if _json_or_empty(rows, as_json, "The outbox is empty: every mail went out."):
        return 0
    for r in rows:
        when = (f"next try {r['next_attempt_at']}" if r["state"] == "waiting"
                else "failed for good")
        print(f"{r['id']:>6}  {r['state']:<7} {r['queued_at']}  {r['game'] or '-'}  "
              f"to {', '.join(r['to'])}  {r['subject']!r}  ({r['attempts']} attempt(s), "
              f"{when})")
        if r["last_error"]:
            print(f"        {r['last_error']}")
    return 0


def _json_or_empty(rows: list[dict[str, Any]], as_json: bool, empty: str) -> bool:
    """Print ``rows`` as JSON, or say ``empty`` when there are none; True
    when that was the whole answer."""
    if as_json:
        print(json.dumps(rows, indent=2))
        return True
    if not rows:
        print(empty)
    return False


def _number(option: str, text: str, what: str = "outbox") -> int:
    if not text.isdigit():
        raise RefereeError(f"{option}: {text!r} is not an {what} id (see: referee {what})")
    return int(text)


def _inbound(referee: Referee, config: Config, retry: str | None, as_json: bool) -> int:
    """``referee inbound``: the mail that failed, and reading it again. The
    mail itself stays in the mailbox (the referee keeps only its record), so
    reading again fetches it from there by its source key."""
    if retry is not None:
        ids = ([r["id"] for r in referee.health.inbound(limit=None) if r["state"] == "failed"]
               if retry == "all" else [_number("--retry", retry, "inbound")])
        for iid in ids:
            referee.health.retry_inbound(iid)
        print(f"{len(ids)} mail(s) to read again")
        if ids:
            _reread_unless_busy(referee, config)
        return 0
    rows = referee.health.inbound()
    if _json_or_empty(rows, as_json, "No inbound mail failed."):
        return 0
    for r in rows:
        print(f"{r['id']:>6}  {r['state']:<7} {r['received_at']}  from {r['sender'] or '-'}  "
              f"{r['subject']!r}")
        print(f"        {r['reason']}")
    return 0


def _reread_unless_busy(referee: Referee, config: Config) -> None:
    """Read the mail asked for again now, and send its answers, unless a pass
    or the daemon runs: then it reads them (the daemon within a minute)."""
    from imapclient.exceptions import IMAPClientError

    from referee.check import explain
    from referee.passes import exclusive, reread

    with exclusive(referee) as mine:
        if not mine:
            print("a pass or the daemon is running: it reads them (the daemon within a minute)")
            return
        try:
            done = reread(referee)
        except (IMAPClientError, OSError) as e:
            raise explain(e, "mailbox", config.mailbox) from None
    for iid, status in done:
        print(f"{iid:>6}  read again: {status}")
    _send_unless_busy(referee, config, None)


def format_health(health: dict[str, Any]) -> str:
    box, last, error = health["outbox"], health["last_pass"], health["last_error"]
    waiting = f", the oldest waiting since {box['oldest_waiting']}" if box["oldest_waiting"] \
        else ""
    failed = f", {box['failed']} failed (see: referee outbox)" if box["failed"] else ""
    lines = [f"outbox: {box['queued']} waiting{waiting}{failed}"]
    inbound = health["inbound"]
    if inbound["failed"] or inbound["retrying"] or inbound["waiting"]:
        again = f", {inbound['retrying']} to read again" if inbound["retrying"] else ""
        waiting = (f", {inbound['waiting']} waiting for their game's package"
                   if inbound["waiting"] else "")
        lines.append(f"inbound: {inbound['failed']} failed{again}{waiting} "
                     "(see: referee inbound)")
        for r in inbound["recent"]:
            lines.append(f"  {r['id']} at {r['received_at']} from {r['sender'] or '-'}: "
                         f"{r['reason']}")
    lines.append(f"last pass: {last['at']} ({last['what']})" if last else "last pass: none yet")
    if error:
        lines.append(f"last error: {error['at']}: {error['what']}")
    if health.get("clock"):
        lines.append(_clock_line(health["clock"]))
    return "\n".join(lines) + "\n"


def _clock_line(clock: dict[str, str]) -> str:
    """The clock's warning as ``status`` and ``health`` show it."""
    return f"clock: {clock['at']}: {clock['what']}"


def write_json_list(items: Iterable[Any], out: IO[str]) -> None:
    """Write ``items`` as one JSON array, an item a line, as they come (the
    C encoder: an indented dump is several times slower)."""
    first = True
    for item in items:
        out.write("[\n" if first else ",\n")
        out.write(json.dumps(item))
        first = False
    out.write("[]\n" if first else "\n]\n")


def format_status(games: Iterable[dict[str, Any]]) -> str:
    return "\n".join(status_lines(games))


def status_lines(games: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The lines of ``status`` for ``games``, a game at a time."""
    empty = True
    for g in games:
        empty = False
        out = []
        out.append(f"{g['tag']}  ({g['kind']}, {g['status']})  round {g.get('round', '-')}")
        if g.get("waits"):
            out.append(f"  {g['tag']}: {g['waits']}")
        if g.get("prize"):
            out.append(f"  prize: {g['prize']}")
        for name, score in g.get("scores", {}).items():
            out.append(f"  {name:<24} {score}")
        for p in g["players"]:
            if p.get("bounced"):
                out.append(f"  mail to {p['name']} <{p['address']}> bounced at "
                           f"{p['bounced']['at']}: {p['bounced']['said']}")
        for d in g["deadlines"]:
            out.append(f"  waiting for {d['name']}: {d['what']}, due {d['due_at']}")
        if g.get("result"):
            out.append(f"  result: {g['result']}")
        yield from out
    if empty:
        yield "No games yet. Start one with: referee game new KIND --player ADDR ..."


if __name__ == "__main__":
    raise SystemExit(main())
