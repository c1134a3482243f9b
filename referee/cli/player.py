"""``referee player rotate/readdress``: a player's new private reply
address, or their move to a new mail address (the table is told)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from referee.cli.common import Command, Subparsers, opened, parse_now, send_unless_busy
from referee.service import Referee


def add_parser(sub: Subparsers) -> None:
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


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        SUBCOMMANDS[args.player_cmd](referee, args)
        return 0


def _rotate(referee: Referee, args: argparse.Namespace) -> None:
    """The new address goes out with the next mail: nothing is sent now."""
    referee.operator.rotate_token(args.address)
    print(f"{args.address}: new private reply address; it goes out with the next mail")


def _readdress(referee: Referee, args: argparse.Namespace) -> None:
    name, tags = referee.operator.readdress_player(args.old, args.new, parse_now(args.now))
    told = f"; told {', '.join(tags)}" if tags else ""
    print(f"{name} now gets mail at {args.new}{told}")
    send_unless_busy(referee, parse_now(args.now))


#: Each subcommand, and what it does.
SUBCOMMANDS: dict[str, Callable[[Referee, argparse.Namespace], None]] = {
    "rotate": _rotate, "readdress": _readdress}

COMMAND = Command("player", add_parser, run)
