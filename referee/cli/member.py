"""``referee member add``: the operator makes someone a member of the club,
who may then open tables by mail (``[club] open_tables = "members"``) and
be invited to them, without having played a game here."""

from __future__ import annotations

import argparse
from email.utils import formataddr

from referee.cli.common import Command, Subparsers, opened, parse_now
from referee.service import RefereeError
from referee.service.club.tables import Refused


def add_parser(sub: Subparsers) -> None:
    member = sub.add_parser("member", help="manage the club's members").add_subparsers(
        dest="member_cmd", required=True)
    add = member.add_parser("add", help="make an address a member: it may open tables by "
                                        "mail and be invited")
    add.add_argument("address", help='"Name <addr>" or addr')
    add.add_argument("--name", help="the name the club knows them by")
    add.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        written = formataddr((args.name, args.address)) if args.name else args.address
        try:
            player = referee.club.add_member(written, parse_now(args.now))
        except Refused as e:
            raise RefereeError(str(e)) from None
        name = f"{player.name} <{player.address}>" if player.name else player.address
        print(f"{name}: a member since {player.member_since:%Y-%m-%d}")
        return 0


COMMAND = Command("member", add_parser, run)
