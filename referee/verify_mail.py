"""``referee verify TAG --mail PATH``: a player checks the referee's draws
from the mails they received, with no database and no config.

The mailbox (an mbox file or a Maildir folder) is read as the player has it,
and it is input from anyone: a stranger may send mail with the game's tag,
forge an opening, or craft a mail to crash or stall the check. So only the
referee's own mails are read: ``[TAG]`` in the subject, a Message-ID in the
shape the referee gives (``<pbm.N.TAG.MAC@DOMAIN>``) in the domain of the
From address. The MAC is the referee's HMAC with its secret key: a player
cannot check it, only its shape. The mails of one referee (its From address
and Message-ID domain) are one game; when several referees' mails carry the
tag (two clubs using the same tag, a stranger's forged mails), each is
checked on its own, and the game is verified when one referee's mails all
hold (``--referee ADDRESS`` picks one). The other mails with the tag are
ignored and counted.

Every mail is read within bounds: its size (:data:`MAX_MAIL`), its MIME
nesting, the text and HTML it may hold (:mod:`referee.mail.mime`), and the
lines a game's patterns see (:data:`MAX_LINE`): nothing grows with what a
stranger writes. Every commitment the mails publish must open, and every
draw they show must be the one the game's seed gives (docs/engines.md,
"Randomness and replay"). This module only walks the mailbox: what draws
a game's mails show and how to read them is the game's own
(``Game.mail_check``, :mod:`referee.games.mailcheck`).
"""

from __future__ import annotations

import email
import errno
import mailbox
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message
from pathlib import Path

from referee.games import GAMES, GameUnavailable, PackageFault
from referee.games.mailcheck import Check, Mail
from referee.mail import headers, mime
from referee.mail.compose import NO_GAME
from referee.mail.htmltext import html_text
from referee.problems import EX_DATAERR, EX_NOPERM, Problem
from referee.verify_entropy import (
    MAX_HEADER,
    TABLE_SUBJECT,
    check_entropy,
    header_text,
    sender_of,
)

__all__ = ["Mail", "MailboxError", "Verdict", "check_mailbox", "game_mails", "main",
           "read_mailbox", "verify_mailbox"]

#: sysexits.h EX_NOINPUT: no such file or folder.
EX_NOINPUT = 66
#: A mail larger than this is not one the referee sent (its longest mails
#: are a few dozen kilobytes): it is ignored unread.
MAX_MAIL = 2 * 1024 * 1024
#: A line longer than this is cut before any pattern sees it: the
#: referee's lines are short, and a pattern's work stays linear in it.
MAX_LINE = 2000
#: The most mails of one game read (a whole tournament sends a few hundred).
MAX_MAILS = 20000


class MailboxError(Problem):
    """The mailbox cannot be read: the sentence the player reads, and its
    exit code (sysexits.h)."""

    def __init__(self, message: str, exit_code: int = EX_NOINPUT) -> None:
        super().__init__(message, exit_code)


# -- reading the mailbox --------------------------------------------------------


def read_mailbox(path: Path) -> Iterator[bytes]:
    """The bytes of every message of the Maildir folder or mbox file at ``path``.

    :raises MailboxError: no such file or folder, one this user may not
        read, or a folder that is no Maildir.
    """
    try:
        if path.is_dir():
            if not (path / "cur").is_dir() and not (path / "new").is_dir():
                raise MailboxError(f"{path}: a folder, but not a Maildir (it has no cur or new)",
                                   EX_DATAERR)
            box: mailbox.Mailbox[mailbox.Message] = mailbox.Maildir(path, factory=None,
                                                                    create=False)
        elif path.is_file():
            box = mailbox.mbox(path, create=False)
        else:
            raise MailboxError(f"{path}: no such mbox file or Maildir folder")
        for key in box.iterkeys():
            try:
                yield box.get_bytes(key)
            except KeyError:  # a Maildir file gone since the listing
                continue
    except MailboxError:
        raise
    except PermissionError:
        raise MailboxError(f"{path}: this user may not read it (permission denied)",
                           EX_NOPERM) from None
    except (OSError, mailbox.Error, UnicodeError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or type(e).__name__
        code = EX_NOINPUT if isinstance(e, OSError) and e.errno == errno.ENOENT else EX_DATAERR
        raise MailboxError(f"{path}: the mailbox cannot be read ({why})", code) from None


#: The Message-ID of a referee's mail of a game: ``pbm.N.TAG.MAC@DOMAIN``
#: (the MAC since mails were signed; older games have none). Bounded: a
#: row id of at most 15 digits, a domain of at most 253 characters.
_REFEREE_ID = re.compile(r"pbm\.(\d{1,15})\.([a-z][a-z0-9-]{0,60}-\d{1,15})"
                         r"(?:\.[0-9a-f]{10})?@([a-z0-9][a-z0-9.-]{0,252})")


@dataclass(frozen=True)
class Received:
    """One mail with the game's tag: who it claims to be from, and the mail."""

    referee: str | None  # the referee's address, or None: not a referee's mail
    number: int  # the outbox row of its Message-ID: the order sent
    mail: Mail


def _texts(msg: Message) -> tuple[str | None, str | None]:
    """The mail's first plain-text part and the text of its HTML parts (as a
    client shows them), each within :mod:`referee.mail.mime`'s budget;
    attachments and forwarded mails are not read."""
    budget = mime.Budget()
    plain: str | None = None
    html: list[str] = []
    todo = [msg]
    while todo:  # no recursion: the nesting is bounded before, but stay flat
        part = todo.pop(0)
        if part.get_content_disposition() == "attachment":
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain" and plain is None:
            plain = budget.take_text(mime.decoded(part))
        elif ctype == "text/html":
            html.append(html_text(budget.take_html(mime.decoded(part))))
        elif part.get_content_maintype() == "multipart":
            todo += mime.children(part)
    return plain, ("\n".join(html) if html else None)


def _lines(text: str) -> str:
    """``text`` with LF line ends and each line cut at :data:`MAX_LINE`."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if all(len(line) <= MAX_LINE for line in text.split("\n")):
        return text
    return "\n".join(line[:MAX_LINE] for line in text.split("\n"))


def received(tag: str, raw: bytes) -> Received | None:
    """The mail ``raw`` when it carries ``[TAG]`` in its subject (else
    None), with the referee that sent it when it is a referee's mail of
    that game. Never raises on any bytes; its work is bounded by their size."""
    if len(raw) > MAX_MAIL:
        return Received(None, 0, Mail("", None, ""))  # counted, never read
    try:
        msg = email.message_from_bytes(raw, policy=policy.compat32)
    except RecursionError:  # the stdlib's parser recurses a level a part
        return Received(None, 0, Mail("", None, ""))
    try:
        fields = headers.read_headers(msg)
        subject = headers.subject(fields)
        if headers.find_tag(subject) != tag:
            return None
        referee: str | None = None
        number = 0
        mid = _REFEREE_ID.fullmatch(headers.first_id(headers.first(fields, "message-id")) or "")
        try:
            _, sender = headers.sender(fields.get("from", []))
        except headers.Unreadable:
            sender = ""
        # A game's mail, or the club's about the game (its start: Message-ID
        # tagged NO_GAME) that carries the game's tag in its subject.
        if (mid and mid.group(2) in (tag, NO_GAME) and sender.rpartition("@")[2] == mid.group(3)
                and mime.nesting(msg) <= mime.MAX_MIME_DEPTH):
            referee, number = sender, int(mid.group(1))
        if referee is None:
            return Received(None, 0, Mail(subject, None, ""))
        plain, html = _texts(msg)
        if plain is None and html is None:
            return Received(None, 0, Mail(subject, None, ""))
        text = _lines(plain if plain is not None else html or "")
        shown = _lines(html) if html is not None and plain is not None else None
        date = headers.date(headers.first(fields, "date"))
        return Received(referee, number, Mail(subject[:MAX_LINE], date, text, shown))
    except (RecursionError, LookupError, ValueError, TypeError, AttributeError,
            IndexError, UnicodeError, AssertionError):
        # Whatever a crafted mail makes the stdlib raise: not one we read.
        return Received(None, 0, Mail("", None, ""))


def game_mails(tag: str, messages: Iterator[bytes]) -> list[Mail]:
    """The mails of game ``tag`` from its referee (the one with the most
    mails), in the order they were sent."""
    found = collect(tag.lower(), messages)
    if not found.by_referee:
        return []
    return max(found.by_referee.values(), key=len)


@dataclass
class Found:
    """The mails with the tag: each referee's, in the order sent, and how
    many others were ignored."""

    by_referee: dict[str, list[Mail]] = field(default_factory=dict)
    ignored: int = 0


def collect(tag: str, messages: Iterator[bytes]) -> Found:
    keyed: dict[str, list[tuple[float, int, Mail]]] = {}
    found = Found()
    for raw in messages:
        got = received(tag, raw)
        if got is None:
            continue
        if got.referee is None:
            found.ignored += 1
            continue
        mails = keyed.setdefault(got.referee, [])
        if len(mails) >= MAX_MAILS:
            found.ignored += 1
            continue
        when = got.mail.date.timestamp() if got.mail.date else 0.0
        mails.append((when, got.number, got.mail))
    for referee, mails in keyed.items():
        mails.sort(key=lambda m: (m[0], m[1]))
        # One mail a Message-ID: a list's copy of a mail the player also got
        # alone, or a mail saved twice, is read once.
        seen: set[tuple[float, int]] = set()
        kept = found.by_referee[referee] = []
        for when, number, mail in mails:
            if (when, number) not in seen:
                seen.add((when, number))
                kept.append(mail)
    return found


# -- the whole check ------------------------------------------------------------------


@dataclass
class Verdict:
    """What ``verify --mail`` found: the mismatches of the game it checked
    (none: verified), whose mails those were, and what it ignored."""

    problems: list[str]
    referee: str | None = None
    ignored: int = 0
    others: list[str] = field(default_factory=list)  # other referees' mails that do not hold
    #: What held of the player's own entropy (issue 38), said before ``verified``.
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What the command prints: ``verified`` (after what held of the
        player's entropy) or the first mismatch, then notes."""
        out = [self.problems[0]] if self.problems else [*self.notes, "verified"]
        if self.ignored:
            mails = "mail" if self.ignored == 1 else "mails"
            out.append(f"{self.ignored} {mails} with the tag not from the referee"
                       f"{' ' + self.referee if self.referee else ''} (by From and Message-ID) "
                       f"{'was' if self.ignored == 1 else 'were'} ignored")
        out += self.others
        return out


def check_mailbox(tag: str, path: Path, referee: str | None = None) -> Verdict:
    """Check game ``tag`` from the mailbox at ``path``: the mails of each
    referee that sent mail with the tag (or of ``referee`` alone) are
    checked as one game; the first that holds is the verdict.

    :raises MailboxError: when ``path`` is no mbox file or Maildir folder,
        or cannot be read.
    """
    tag = tag.lower()
    kind = tag.rpartition("-")[0]
    if kind not in GAMES:
        known = ", ".join(sorted(GAMES))
        return Verdict([f"{tag}: not a game tag a referee gives (games: {known})"])
    raws = list(read_mailbox(path))
    found = collect(tag, iter(raws))
    groups = found.by_referee
    ignored = found.ignored
    if referee is not None:
        referee = referee.lower()
        ignored += sum(len(m) for r, m in groups.items() if r != referee)
        groups = {r: m for r, m in groups.items() if r == referee}
    if not groups:
        who = f" from {referee}" if referee else ""
        return Verdict([f"no mail of {tag}{who} is in the mailbox {path}"], referee, ignored)
    messages = _parsed(raws)
    checked = {r: _check(tag, kind, mails, _of_referee(messages, r), r)
               for r, mails in groups.items()}
    results = {r: problems for r, (problems, _) in checked.items()}
    good = [r for r, problems in results.items() if not problems]
    if good:
        chosen = max(good, key=lambda r: len(groups[r]))
    else:
        chosen = max(results, key=lambda r: len(groups[r]))
    others = [f"the mails of {tag} from {r} ({len(groups[r])}) do not hold: {problems[0]}"
              for r, problems in results.items() if r != chosen and problems]
    others += [f"the mails of {tag} from {r} ({len(groups[r])}) hold too"
               for r, problems in results.items() if r != chosen and not problems]
    return Verdict(results[chosen], chosen if len(groups) > 1 or ignored else None,
                   ignored, others, checked[chosen][1])


def _parsed(raws: Sequence[bytes]) -> list[EmailMessage]:
    """The mails the players' entropy is looked for in (a table's mails, the
    player's own sent mail): each parsed within the same bounds as the
    game's (its size, its MIME nesting); one the parser cannot take is left
    out."""
    out: list[EmailMessage] = []
    for raw in raws:
        if len(raw) > MAX_MAIL:
            continue
        try:
            # First as the game's mails are read (compat32 reads a header
            # in time linear in its length): a mail nested too deep, or
            # with a header longer than any the referee writes, is not
            # parsed again by the policy that reads headers' structure,
            # whose time grows faster than their length.
            rough = email.message_from_bytes(raw, policy=policy.compat32)
            if mime.nesting(rough) > mime.MAX_MIME_DEPTH or not _headers_short(rough):
                continue
            msg = email.message_from_bytes(raw, policy=policy.default)
            if isinstance(msg, EmailMessage):
                out.append(msg)
        except (RecursionError, LookupError, ValueError, TypeError, AttributeError,
                IndexError, UnicodeError, AssertionError):
            continue
    return out


def _headers_short(msg: Message) -> bool:
    """Whether every header of ``msg`` and of its parts is at most
    :data:`~referee.verify_entropy.MAX_HEADER` characters as written."""
    todo = [msg]
    while todo:
        part = todo.pop()
        if any(len(str(value)) > MAX_HEADER for _, value in part.raw_items()):
            return False
        todo += mime.children(part)
    return True


def _of_referee(messages: Sequence[EmailMessage], referee: str) -> list[EmailMessage]:
    """``messages`` without the table mails (``[spades-t12]``) of anyone
    but ``referee``: a stranger's table mail cannot blame an honest game."""
    return [msg for msg in messages
            if not TABLE_SUBJECT.search(header_text(msg, "Subject"))
            or sender_of(msg) == referee.lower()]


def _check(tag: str, kind: str, mails: list[Mail], messages: Sequence[EmailMessage],
           referee: str | None = None) -> tuple[list[str], list[str]]:
    """The mismatches of one referee's mails of the game, and what held of
    the player's entropy: the contributions the opening lists first
    (:func:`~referee.verify_entropy.check_entropy`), then the game's own
    check (``Game.mail_check``) from the seed mixed with them."""
    check = Check(tag, mails)
    try:
        check_entropy(check, messages, referee)
        GAMES[kind].mail_check(check)
    except (GameUnavailable, PackageFault) as e:
        return [str(e)], check.notes
    except (ValueError, LookupError, TypeError, ArithmeticError, RecursionError,
            AttributeError, UnicodeError) as e:
        # A check met what its patterns let through but cannot use: never
        # a traceback, and never "verified".
        return [f"the mails of {tag} cannot be read: {type(e).__name__} in the game's check"], []
    check.check_parts()
    return check.result(), check.notes


def verify_mailbox(tag: str, path: Path, notes: list[str] | None = None) -> list[str]:
    """What does not match in game ``tag``'s mails in the mailbox at
    ``path``, the first mismatch first; an empty list: verified. ``notes``
    gets what held of the player's own entropy.

    :raises MailboxError: when ``path`` is no mbox file or Maildir folder.
    """
    verdict = check_mailbox(tag, path)
    if notes is not None:
        notes.extend(verdict.notes)
    return verdict.problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m referee.verify_mail TAG --mail PATH [--referee ADDRESS]``:
    prints ``verified`` (exit 0) or the first mismatch (exit 1)."""
    args = list(sys.argv[1:] if argv is None else argv)
    referee = None
    if len(args) >= 2 and args[-2] == "--referee":
        referee, args = args[-1], args[:-2]
    if len(args) == 3 and args[1] == "--mail":
        args = [args[0], args[2]]
    if len(args) != 2:
        print("usage: python -m referee.verify_mail TAG --mail MBOX-OR-MAILDIR "
              "[--referee ADDRESS]", file=sys.stderr)
        return 2
    try:
        verdict = check_mailbox(args[0], Path(args[1]), referee)
    except MailboxError as e:
        print(f"referee: {e}", file=sys.stderr)
        return e.exit_code
    for line in verdict.lines():
        print(line)
    return 1 if verdict.problems else 0


if __name__ == "__main__":
    sys.exit(main())
