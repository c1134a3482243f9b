"""``referee inbound``: the mail that failed to be read, and reading it
again. The mail itself stays in the mailbox (the referee keeps only its
record), so reading again fetches it from there by its source key."""

from __future__ import annotations

import argparse

from referee.cli.common import Command, Subparsers, json_or_empty, number, opened, send_unless_busy
from referee.service import Referee


def add_parser(sub: Subparsers) -> None:
    inbound = sub.add_parser("inbound", help="mail that failed to be read; read one again")
    inbound.add_argument("--retry", metavar="ID",
                         help="read this mail again from the mailbox (or: all failed)")
    inbound.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        if args.retry is not None:
            ids = ([r["id"] for r in referee.health.inbound(limit=None)
                    if r["state"] == "failed"]
                   if args.retry == "all" else [number("--retry", args.retry, "inbound")])
            for iid in ids:
                referee.health.retry_inbound(iid)
            print(f"{len(ids)} mail(s) to read again")
            if ids:
                _reread_unless_busy(referee)
            return 0
        rows = referee.health.inbound()
        if json_or_empty(rows, args.json, "No inbound mail failed."):
            return 0
        for r in rows:
            print(f"{r['id']:>6}  {r['state']:<7} {r['received_at']}  "
                  f"from {r['sender'] or '-'}  {r['subject']!r}")
            print(f"        {r['reason']}")
        return 0


def _reread_unless_busy(referee: Referee) -> None:
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
            raise explain(e, "mailbox", referee.config.mailbox) from None
    for iid, status in done:
        print(f"{iid:>6}  read again: {status}")
    send_unless_busy(referee, None)


COMMAND = Command("inbound", add_parser, run)
