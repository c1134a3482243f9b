"""Whose mailbox this is. A database that holds no game and has read no
mail, meeting a mailbox that holds mail about games (a tag in a subject:
every tag is one it does not know) or mail a referee sent (its
X-Referee-Mail header), is most likely a copy pointed at another referee's
mailbox, a staging copy with a fresh database: reading that mail would
answer the club's players as strangers, and mark it read for the real
referee. So it reads nothing until the operator adopts the mailbox
(``referee poll --adopt-mailbox``).

Adopting leaves the mail there then as it is (unread over IMAP; in a
Maildir, flagged done without being read) and reads what comes after: a
database taking over a mailbox, or a new one on an address that has served
a club before, has nothing to say to old mail but "who are you?".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from referee.mail.inbound import Heading
from referee.store import models as m

#: The row of the ``leases`` table saying which mailbox was adopted, and when.
ADOPTED = "mailbox.adopted"
#: The games a refusal names; the rest it counts.
NAMED = 5


@dataclass(frozen=True)
class Foreign:
    """What a fresh database found in a mailbox it has never read."""

    #: The game tags named in subjects, sorted.
    tags: tuple[str, ...]
    #: How many of the mails a referee sent.
    sent: int

    def refusal(self, where: str) -> str:
        """The one line a pass that reads nothing says, ``where`` naming the mailbox."""
        found = []
        if self.tags:
            named = ", ".join(self.tags[:NAMED])
            more = f" and {len(self.tags) - NAMED} more" if len(self.tags) > NAMED else ""
            found.append(f"mail about games this database does not know ({named}{more})")
        if self.sent:
            found.append(f"{self.sent} mail(s) a referee sent")
        return (f"{where} holds {' and '.join(found)}: is this a copy pointed at another "
                "referee's mailbox? Nothing was read; point [mailbox] at this referee's own, "
                "or, if this database should take it over, run: referee poll --adopt-mailbox "
                "(the mail there now stays unread; what comes after is read)")


def look(headings: Iterable[Heading]) -> Foreign | None:
    """What in ``headings`` says the mailbox is another referee's, or None."""
    tags: set[str] = set()
    sent = 0
    for h in headings:
        if h.tag:
            tags.add(h.tag)
        sent += h.referee_mail
    return Foreign(tuple(sorted(tags)), sent) if tags or sent else None


class Ownership:
    """Whether the database is fresh, and its adoption of a mailbox."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        #: False once found not fresh: a database never becomes fresh again.
        self._fresh: bool | None = None

    def fresh(self) -> bool:
        """Whether the database holds no game, has read no mail (no record,
        no mailbox cursor) and adopted no mailbox."""
        if self._fresh is not False:
            with self.sessions() as db:
                found = (db.scalar(select(column).limit(1)) is not None
                         for column in (m.Game.id, m.Inbound.id, m.Cursor.mailbox))
                self._fresh = not any(found) and db.get(m.Lease, ADOPTED) is None
        return self._fresh

    def adopt(self, mailbox: str, now: datetime,
              position: tuple[int, int] | None = None) -> None:
        """The mailbox is this database's from now on; ``position``
        (UIDVALIDITY, UID): IMAP mail up to it is left as it is."""
        with self.sessions.begin() as db:
            db.add(m.Lease(name=ADOPTED, holder=mailbox[:200], expires_at=now))
            if position is not None and position[1] and db.get(m.Cursor, mailbox) is None:
                db.add(m.Cursor(mailbox=mailbox, uidvalidity=position[0],
                                last_uid=position[1]))
        self._fresh = False
