"""``referee verify``: check a game's draws, from its seed and action log
(the operator's audit), or with ``--mail`` from the mail a player received
(a player's check: no config, no database)."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.cli.common import Command, Subparsers, opened
from referee.service import RefereeError


def add_parser(sub: Subparsers) -> None:
    verify = sub.add_parser(
        "verify", help="check a game's draws: from its seed and action log (the operator's "
                       "audit), or with --mail from the mail a player received")
    verify.add_argument("tag")
    verify.add_argument("--mail", metavar="PATH", type=Path,
                        help="a player's mailbox (an mbox file or a Maildir folder): "
                             "needs no database and no config")


def run(args: argparse.Namespace) -> int:
    if args.mail is not None:
        return _verify_mail(args.tag, args.mail)
    with opened(args) as referee:
        audit = referee.reading.examine(args.tag)
        if audit.problems:
            print(audit.problems[0])
            return 1
        print(audit.summary())
        print("verified")
        return 0


def _verify_mail(tag: str, path: Path) -> int:
    """``verify TAG --mail PATH``: a player's check of the draws and
    commitments in the mail they received; prints ``verified`` (0) or the
    first mismatch (1)."""
    try:
        from referee.verify_mail import verify_mailbox
    except ImportError:
        raise RefereeError("verify --mail is not part of this installation") from None
    notes: list[str] = []
    problems = verify_mailbox(tag, path, notes)
    if problems:
        print(problems[0])
        return 1
    for note in notes:
        print(note)
    print("verified")
    return 0


COMMAND = Command("verify", add_parser, run, plays_games=True)
