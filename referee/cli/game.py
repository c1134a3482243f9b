"""``referee game new/resign/extend/cancel``: an operator makes a game, or
acts on one (a seat to a bot, deadlines later, an end with no winner); the
mail it queues goes out at once unless a pass or the daemon runs.

No game is named here: an option a game takes as a text in a file is the
game's to declare (``Game.option_files``), and ``game new`` gives it a
flag ``--NAME FILE``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from referee.cli.common import Command, Subparsers, duration, opened, parse_now, send_unless_busy
from referee.config import format_duration
from referee.service import Referee, RefereeError, now_utc
from referee.service.club.tables import Refused

#: Where a flag's value goes that names a file whose text is an option.
FILE = "file:"


class GameParser(argparse.ArgumentParser):
    """A parser of ``game``'s subcommands. ``new``'s takes the flags the
    games declare too; they are added the first time they may be wanted
    (an option it does not know yet, its help or its usage shown), so that
    ``game new KIND`` with none of them loads no other game's rules."""

    #: The flag the games' own come before (``new``'s ``--seed``).
    games_before: argparse.Action | None = None
    _games_added = False

    def _add_game_flags(self) -> None:
        if self.games_before is None or self._games_added:
            return
        self._games_added = True
        from referee.games import GAMES

        helps: dict[str, tuple[list[str], str]] = {}
        for kind, engine in sorted(GAMES.items()):
            for name, text in getattr(engine, "option_files", {}).items():
                helps.setdefault(name, ([], text))[0].append(kind)
        first = len(self._actions)
        for name, (kinds, text) in helps.items():
            self.add_argument(f"--{name}", dest=f"{FILE}{name}", metavar="FILE",
                              help=f"{', '.join(kinds)}: {text}")
        # In the usage and the help where they always stood: before --seed.
        added = self._actions[first:]
        for actions in (self._actions, self._optionals._group_actions):
            kept = [a for a in actions if a not in added]
            at = kept.index(self.games_before)
            actions[:] = [*kept[:at], *added, *kept[at:]]

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        words = sys.argv[1:] if args is None else args
        if any(word.startswith("-") and word.partition("=")[0] not in self._option_string_actions
               for word in words):
            self._add_game_flags()  # an option not spelled out as one of ours: maybe a game's
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_game_flags()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_game_flags()
        return super().format_help()


def add_parser(sub: Subparsers) -> None:
    game = sub.add_parser("game", help="manage games").add_subparsers(
        dest="game_cmd", required=True, parser_class=GameParser)
    new = game.add_parser("new", help="create a game and mail the opening")
    new.add_argument("kind")
    new.add_argument("--player", action="append", default=[], metavar="ADDR",
                     help='a player, "Name <addr>" or addr; repeat per player')
    new.add_argument("--bot", action="count", default=0,
                     help="add a bot seat (sensible; --option bot=random for a random one)")
    new.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    assert isinstance(new, GameParser)
    new.games_before = new.add_argument("--seed",
                                        help="the game's random seed (default: random)")
    new.add_argument("--now", help="the time to start the game at (ISO-8601)")
    new.add_argument("--at-once", action="store_true",
                     help="start now with the operator's seed alone: no player adds entropy "
                          "(by default the players are seated and the game starts when each "
                          "has added theirs, or at the start deadline)")
    new.add_argument("--start-within", metavar="DURATION",
                     help="the start deadline, from now, like 2d (default: the game's move "
                          "deadline)")
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


def run(args: argparse.Namespace) -> int:
    with opened(args, remember_games=True) as referee:
        print(SUBCOMMANDS[args.game_cmd](referee, args))
        sys.stdout.flush()
        send_unless_busy(referee, parse_now(args.now))
        return 0


def _new(referee: Referee, args: argparse.Namespace) -> str:
    """``game new``: the new game's tag."""
    from referee.games import GAMES

    engine = GAMES.get(args.kind)
    members_by_mail = engine is not None and engine.takes_members_by_mail
    if not args.player and not args.bot and not members_by_mail:
        raise RefereeError("name the players with --player ADDR")
    options = _options(args.option)
    for key, path in vars(args).items():
        if key.startswith(FILE) and path is not None:
            options[key.removeprefix(FILE)] = _read_text(path)
    now = parse_now(args.now)
    if args.at_once or not args.player:
        # No seat to wait for (bots alone, or members who join by mail),
        # or the operator's explicit opt-out: the operator's seed alone.
        tag = referee.operator.create_game(args.kind, args.player, bots=args.bot,
                                           options=options, seed=args.seed, now=now,
                                           operator_seed=bool(args.at_once and args.player))
        if args.at_once and args.player:
            print(f"referee: warning: {tag} started at once: its draws come from the "
                  "operator's seed alone, with no player's entropy, and its opening says so; "
                  "without --at-once the players add theirs first (docs/fairness.md)",
                  file=sys.stderr)
        return tag
    start = now or now_utc()
    start_by = (start + duration("--start-within", args.start_within)
                if args.start_within else None)
    try:
        table = referee.club.open_for_operator(args.kind, args.player, bots=args.bot,
                                               options=options, now=start, start_by=start_by,
                                               seed=args.seed)
    except Refused as e:
        raise RefereeError(str(e)) from None
    return (f"{table.tag}: {len(table.seated)} player(s) seated and mailed; the game starts "
            f"when each has added entropy, at the latest {table.expires_at:%Y-%m-%d %H:%M} "
            f"UTC\n{table.tag}: seed-sha256 {table.seed_sha256}")


def _resign(referee: Referee, args: argparse.Namespace) -> str:
    name = referee.operator.resign_player(args.tag, args.address, parse_now(args.now))
    return f"{args.tag}: a bot now plays {name}'s seat"


def _extend(referee: Referee, args: argparse.Namespace) -> str:
    by = duration("--by", args.by)
    moved = referee.operator.extend_deadlines(args.tag, by, args.reason, parse_now(args.now))
    return f"{args.tag}: {moved} deadline(s) moved {format_duration(by)} later"


def _cancel(referee: Referee, args: argparse.Namespace) -> str:
    referee.operator.cancel_game(args.tag, args.reason, parse_now(args.now))
    return f"{args.tag}: cancelled"


#: Each subcommand, and what it does: the line it prints.
SUBCOMMANDS: dict[str, Callable[[Referee, argparse.Namespace], str]] = {
    "new": _new, "resign": _resign, "extend": _extend, "cancel": _cancel}


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


COMMAND = Command("game", add_parser, run, plays_games=True)
