"""``referee verify TAG --mail PATH``: a player checks the referee's draws
from the mails they received, with no database and no config.

The mailbox (an mbox file or a Maildir folder) is read as the player has it:
the game's mails are those with ``[TAG]`` in the subject. Every commitment
they publish must open, and every draw they show must be the one the game's
seed gives (docs/engines.md, "Randomness and replay"). This module only
walks the mailbox: what draws a game's mails show and how to read them is
the game's own (``Game.mail_check``, :mod:`referee.games.mailcheck`).
"""

from __future__ import annotations

import mailbox
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from email.utils import parsedate_to_datetime
from pathlib import Path

from referee.games import GAMES, GameUnavailable, PackageFault
from referee.games.mailcheck import Check, Mail
from referee.mail.headers import find_tag
from referee.verify_entropy import check_entropy

__all__ = ["Mail", "MailboxError", "game_mails", "main", "read_mailbox", "verify_mailbox"]


class MailboxError(Exception):
    """The mailbox cannot be read: the sentence the player reads."""


# -- reading the mailbox --------------------------------------------------------


def read_mailbox(path: Path) -> Iterator[EmailMessage]:
    """Every message of the Maildir folder or mbox file at ``path``."""
    if path.is_dir():
        if not (path / "cur").is_dir() and not (path / "new").is_dir():
            raise MailboxError(f"{path}: a folder, but not a Maildir (it has no cur or new)")
        box: mailbox.Mailbox[mailbox.Message] = mailbox.Maildir(path, factory=None, create=False)
    elif path.is_file():
        box = mailbox.mbox(path, create=False)
    else:
        raise MailboxError(f"{path}: no such mbox file or Maildir folder")
    for key in box.iterkeys():
        msg = message_from_bytes(box.get_bytes(key), policy=default)
        assert isinstance(msg, EmailMessage)
        yield msg


def game_mails(tag: str, messages: Iterator[EmailMessage]) -> list[Mail]:
    """The mails of game ``tag``, in the order they were sent: by Date, then
    by the referee's Message-ID (``<pbm.ID.TAG@...>``, ID counting up)."""
    keyed: list[tuple[tuple[float, int], Mail]] = []
    for msg in messages:
        subject = " ".join(str(msg["Subject"] or "").split())
        if find_tag(subject) != tag.lower():
            continue
        part = msg.get_body(("plain",))
        if not isinstance(part, EmailMessage):
            continue
        text = str(part.get_content()).replace("\r\n", "\n")
        date = _date(str(msg["Date"] or ""))
        parts = str(msg["Message-ID"] or "").split(".")
        number = int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0
        keyed.append(((date.timestamp() if date else 0.0, number), Mail(subject, date, text)))
    keyed.sort(key=lambda km: km[0])
    return [mail for _, mail in keyed]


def _date(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None


# -- the whole check ------------------------------------------------------------------

def verify_mailbox(tag: str, path: Path, notes: list[str] | None = None) -> list[str]:
    """What does not match in game ``tag``'s mails in the mailbox at
    ``path``, the first mismatch first; an empty list: verified. The
    game's kind reads its mails (``Game.mail_check``), after the players'
    entropy its opening lists (:func:`~referee.verify_entropy.check_entropy`);
    ``notes`` gets what held of the player's own.

    :raises MailboxError: when ``path`` is no mbox file or Maildir folder.
    """
    tag = tag.lower()
    kind = tag.rpartition("-")[0]
    if kind not in GAMES:
        known = ", ".join(sorted(GAMES))
        return [f"{tag}: not a game tag a referee gives (games: {known})"]
    messages = list(read_mailbox(path))
    mails = game_mails(tag, iter(messages))
    if not mails:
        return [f"no mail of {tag} is in the mailbox {path}"]
    check = Check(tag, mails)
    check_entropy(check, messages)
    if notes is not None:
        notes.extend(check.notes)
    try:
        GAMES[kind].mail_check(check)
    except (GameUnavailable, PackageFault) as e:
        return [str(e)]
    return check.result()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m referee.verify_mail TAG PATH``: prints ``verified`` (exit 0)
    or each mismatch, the first first (exit 1)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[1] == "--mail":
        args = [args[0], args[2]]
    if len(args) != 2:
        print("usage: python -m referee.verify_mail TAG --mail MBOX-OR-MAILDIR", file=sys.stderr)
        return 2
    notes: list[str] = []
    try:
        problems = verify_mailbox(args[0], Path(args[1]), notes)
    except MailboxError as e:
        print(e, file=sys.stderr)
        return 1
    if not problems:
        for note in notes:
            print(note)
        print("verified")
        return 0
    for problem in problems:
        print(problem)
    return 1


if __name__ == "__main__":
    sys.exit(main())
