"""``referee verify TAG --mail PATH``, for a game started from a table by
mail (issue 38): the player's own entropy is in the mix. The mail that
answered the one that took their seat quoted it back (``your-entropy:``);
the game's opening must list it, the table's mails must commit to the
fingerprint the opening gives (fixed when the table opened, before any
contribution), and the draws are checked from the seed mixed with every
contribution the opening lists (``Check.entropy``; docs/fairness.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from email.errors import MessageError
from email.message import EmailMessage
from email.utils import parsedate_to_datetime

from referee.games.draws import valid_entropy
from referee.games.mailcheck import SEED_SHA, Check, Mail, opening_entropy, words
from referee.mail import headers

#: A table's tag in a subject: ``[spades-t12]``.
TABLE_SUBJECT = re.compile(r"\[\s*([a-z][a-z0-9-]{0,30}?-t[0-9]{1,9})\s*\]", re.I)
#: What the answer to the mail that took a seat quotes back.
YOURS = re.compile(r"^[ \t]*your-entropy: ([^\n]{1,200}?)[ \t\r]*$", re.M)
#: The table's start, as its mail about the game says it.
STARTED = re.compile(r"The table ([a-z][a-z0-9-]{0,30}?-t[0-9]{1,9}) is full, and its game "
                     r"of [^\[\]]{1,80} starts as \[([a-z][a-z0-9-]{0,40}-[0-9]{1,9})\]")


def check_entropy(check: Check, messages: Sequence[EmailMessage],
                  referee: str | None = None) -> None:
    """Set ``check.entropy`` to the contributions the opening lists, and
    record what does not hold of the player's own (or a note of what did).
    ``referee``: the address whose mails of the game are checked; its mail
    announcing the start (the answer to the mail whose seat filled the
    table) is read with the table's."""
    opening = opening_entropy(check)
    if opening is None:
        return
    at, fingerprint, listed = opening
    check.entropy = listed
    for position, value in listed:
        if not valid_entropy(value):
            check.mismatch(at, f"seat {position}'s entropy {value!r} is not one line of "
                               "printable text, as the derivation takes it")
    table = _table_of(check)
    mails = _table_mails(messages, table, fingerprint, listed)
    if table is not None and referee is not None:
        mails += _start_mails(messages, table, check.tag, referee)
    if not mails:
        if listed:
            check.notes.append("no mail of the table this game came from is in the mailbox: "
                               "your own entropy is not checked")
        return
    for mail, _ in mails:
        for found in SEED_SHA.finditer(mail.text):
            if found.group(1).lower() != fingerprint:
                check.elsewhere(mail, f"the table committed to the seed-sha256 "
                                      f"{found.group(1).lower()}, but the game's opening "
                                      f"gives {fingerprint}: the seed is not the one fixed "
                                      "when the table opened")
    quoted = [(mail, msg, m.group(1)) for mail, msg in mails for m in YOURS.finditer(mail.text)]
    if not quoted:
        check.notes.append(_own_mail(messages, listed))
        return
    mail, msg, mine = quoted[-1]  # words given later replace what the seat gave
    seats = [position for position, value in listed if value == mine]
    if not seats:
        check.mismatch(at, f"the opening does not list your entropy {mine}, which "
                           f"{mail} quoted back to you")
        return
    said = f"your entropy {mine} is seat {seats[0]}'s in the opening's mix"
    if mine.startswith("<") and mine.endswith(">"):
        answered = words(header_text(msg, "In-Reply-To"))
        if answered and answered != mine:
            check.elsewhere(mail, f"quotes your entropy as {mine}, but answers your mail "
                                  f"{answered}")
            return
        sent = [m for m in messages if words(header_text(m, "Message-ID")) == mine]
        said += " (the Message-ID of your mail" + (
            ", which is in the mailbox)" if sent else ")")
    check.notes.append(said)


def _own_mail(messages: Sequence[EmailMessage], listed: Sequence[tuple[int, str]]) -> str:
    """What the mailbox shows of the player's entropy where no answer
    quoted it back (the mail that took their seat started the game): a
    mail of theirs (a sent folder) whose Message-ID the opening lists."""
    seat_of = {value: position for position, value in listed}
    for msg in messages:
        if (mine := words(header_text(msg, "Message-ID"))) in seat_of:
            return (f"the Message-ID {mine} of your mail \"{words(header_text(msg, 'Subject'))}"
                    f"\" is seat {seat_of[mine]}'s entropy in the opening's mix")
    return ("no answer quoting your entropy back (your-entropy:) and no mail of yours whose "
            "Message-ID the opening lists is in the mailbox: compare the opening's entropy "
            "lines with your own sent mail")


def _table_of(check: Check) -> str | None:
    """The table the game came from, as its start's mail says."""
    for mail in check.mails:
        if (found := STARTED.search(words(mail.text))) and found.group(2) == check.tag:
            return found.group(1).lower()
    return None


def _table_mails(messages: Sequence[EmailMessage], table: str | None, fingerprint: str,
                 listed: Sequence[tuple[int, str]]) -> list[tuple[Mail, EmailMessage]]:
    """The mails of ``table``, by date; with no mail saying which table
    the game came from, of the tables whose mails commit to ``fingerprint``
    or quote back entropy the opening lists."""
    every: list[tuple[str, Mail, EmailMessage]] = []
    for msg in messages:
        subject = " ".join(header_text(msg, "Subject").split())
        found = TABLE_SUBJECT.search(subject)
        text = plain(msg) if found else None
        if found is None or text is None:
            continue
        every.append((found.group(1).lower(), Mail(subject, _date(msg), text), msg))
    if table is not None:
        tags = {table}
    else:
        values = {value for _, value in listed}
        tags = {tag for tag, mail, _ in every
                if any(f.group(1).lower() == fingerprint for f in SEED_SHA.finditer(mail.text))
                or any(y.group(1) in values for y in YOURS.finditer(mail.text))}
    chosen = [(mail, msg) for tag, mail, msg in every if tag in tags]
    chosen.sort(key=lambda mm: mm[0].date.timestamp() if mm[0].date else 0.0)
    return chosen


def _start_mails(messages: Sequence[EmailMessage], table: str, tag: str,
                 referee: str) -> list[tuple[Mail, EmailMessage]]:
    """The mails of ``referee`` saying that ``table`` started as game
    ``tag``: the one answering the mail whose seat filled the table quotes
    its entropy back. Last among the table's: what it quotes is what the
    seat gave in the end."""
    out: list[tuple[Mail, EmailMessage]] = []
    for msg in messages:
        subject = " ".join(header_text(msg, "Subject").split())
        if f"[{tag}]" not in subject.lower() or sender_of(msg) != referee.lower():
            continue
        if (text := plain(msg)) is None:
            continue
        found = STARTED.search(words(text))
        if found and found.group(1).lower() == table and found.group(2).lower() == tag:
            out.append((Mail(subject, _date(msg), text), msg))
    return out


#: What the stdlib may raise on a crafted mail's header or part: a mail
#: anyone may send is read as having no such header or text, never raised.
MALFORMED = (MessageError, LookupError, ValueError, TypeError, AttributeError, UnicodeError,
             RecursionError, AssertionError)


#: The longest header read: the referee's longest, References, holds at
#: most 10 ids of 250 characters; the stdlib's parser takes time growing
#: faster than a header's length (a 410 KB subject: seconds each reading).
MAX_HEADER = 4000


def header_text(msg: EmailMessage, name: str) -> str:
    """Header ``name`` of ``msg`` as text; "" when absent, unreadable, or
    longer than :data:`MAX_HEADER` as written (not the referee's)."""
    raw = next((value for key, value in msg.raw_items() if key.lower() == name.lower()), None)
    if raw is None or len(raw) > MAX_HEADER:
        return ""
    try:
        return str(msg[name] or "")
    except MALFORMED:
        return ""


def plain(msg: EmailMessage) -> str | None:
    """The text of ``msg``'s plain-text body, LF line ends; None when it
    has none or it cannot be read (an unknown charset: not the referee's,
    whose mails are UTF-8)."""
    try:
        part = msg.get_body(("plain",))
        if not isinstance(part, EmailMessage):
            return None
        return str(part.get_content()).replace("\r\n", "\n")
    except MALFORMED:
        return None


def sender_of(msg: EmailMessage) -> str:
    """The address of ``msg``'s From, lower case; "" when unreadable."""
    try:
        _, sender = headers.sender([header_text(msg, "From")])
    except (headers.Unreadable, *MALFORMED):
        return ""
    return sender.lower()


def _date(msg: EmailMessage) -> datetime | None:
    try:
        return parsedate_to_datetime(header_text(msg, "Date")) if header_text(msg, "Date") else None
    except MALFORMED:
        return None
