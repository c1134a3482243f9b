"""``referee tables`` and ``referee table cancel``: the club's open tables
(the games asked for by mail, not started yet) as the index lists them,
and the operator closing one (those seated or invited are told by mail,
which goes out at once unless a pass or the daemon runs)."""

from __future__ import annotations

import argparse
from typing import Any

from referee.cli.common import (
    Command,
    Subparsers,
    json_or_empty,
    opened,
    parse_now,
    send_unless_busy,
)
from referee.service import RefereeError
from referee.service.club.tables import Refused, TableView


def add_tables_parser(sub: Subparsers) -> None:
    tables = sub.add_parser("tables", help="the club's open tables: kind, who sits, seats "
                                           "left, opened by, expires")
    tables.add_argument("--json", action="store_true", help="the tables as JSON")


def add_table_parser(sub: Subparsers) -> None:
    table = sub.add_parser("table", help="manage the club's open tables").add_subparsers(
        dest="table_cmd", required=True)
    cancel = table.add_parser("cancel", help="close an open table; those seated are told")
    cancel.add_argument("tag")
    cancel.add_argument("--now", help="take this as the current time (ISO-8601, UTC)")


def row(t: TableView) -> dict[str, Any]:
    """A table as ``--json`` gives it: the index's fields, and who is
    invited, the seats it takes and its options."""
    return {"tag": t.tag, "kind": t.kind, "title": t.title, "opener": t.opener,
            "seated": list(t.seated), "invited": list(t.invited),
            "seats_left": t.seats_left, "seats_min": t.seats_min,
            "seats_max": t.seats_max, "options": dict(t.options),
            "rematch_of": t.rematch_of,
            "opened": t.opened_at.isoformat() if t.opened_at else None,
            "expires": t.expires_at.isoformat()}


def line(t: TableView) -> str:
    """A table in one line: ``KIND-t1 TITLE, opened by Alice: Alice, Bob
    seated; 2 seats left; expires 2026-01-15 09:00``."""
    invited = f" ({', '.join(t.invited)} invited)" if t.invited else ""
    seats = f"{t.seats_left} seat{'' if t.seats_left == 1 else 's'} left"
    rematch = f", a rematch of {t.rematch_of}" if t.rematch_of else ""
    return (f"{t.tag} {t.title}{rematch}, opened by {t.opener}: {', '.join(t.seated)} "
            f"seated{invited}; {seats}; expires {t.expires_at:%Y-%m-%d %H:%M}")


def run_tables(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        views = referee.club.listing()
        if not json_or_empty([row(t) for t in views], args.json, "no open tables"):
            for t in views:
                print(line(t))
        return 0


def run_table(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        now = parse_now(args.now)
        try:
            closed = referee.club.cancel(args.tag, now)
        except Refused as e:
            raise RefereeError(str(e)) from None
        told = len(closed.seated) + len(closed.invited)
        print(f"{closed.tag}: cancelled; {told} told")
        send_unless_busy(referee, now)
        return 0


TABLES = Command("tables", add_tables_parser, run_tables, plays_games=True)
TABLE = Command("table", add_table_parser, run_table, plays_games=True)
