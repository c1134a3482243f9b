"""``referee outbox``: the mail waiting or failed, and sending a failed one again."""

from __future__ import annotations

import argparse

from referee.cli.common import Command, Subparsers, json_or_empty, number, opened, send_unless_busy
from referee.service import Referee, now_utc


def add_parser(sub: Subparsers) -> None:
    outbox = sub.add_parser("outbox", help="mail waiting or failed; retry a failed one")
    outbox.add_argument("--retry", metavar="ID", help="send this mail again (or: all failed)")
    outbox.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    with opened(args) as referee:
        if args.retry is not None:
            return _retry(referee, args.retry)
        rows = referee.health.outbox()
        if json_or_empty(rows, args.json, "The outbox is empty: every mail went out."):
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


def _retry(referee: Referee, retry: str) -> int:
    """``--retry ID`` (or ``all``): queued again, and sent unless a pass runs."""
    rows = referee.health.outbox()
    ids = ([r["id"] for r in rows if r["state"] == "failed"] if retry == "all"
           else [number("--retry", retry)])
    for oid in ids:
        referee.health.retry(oid, now_utc())
    print(f"{len(ids)} mail(s) queued again")
    send_unless_busy(referee, None)
    return 0


COMMAND = Command("outbox", add_parser, run)
