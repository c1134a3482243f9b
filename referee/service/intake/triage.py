"""Which new mail to read first: a player's (their From, their private
address, or the tag of a game in progress) before anyone else's, so that a
flood from a stranger never keeps a move waiting. Reads the headings only
(``mail.inbound.read_heading``); what a mail really is, the chain decides.

A read-only session per call.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from referee.mail.inbound import Heading
from referee.service.outgoing.addresses import Addresses
from referee.store import models as m

#: Values of one IN list (SQLite's limit on parameters is far above).
CHUNK = 500


class Triage:
    """Tells the mail of players from the rest, a batch of headings at a time."""

    def __init__(self, sessions: sessionmaker[Session], addresses: Addresses) -> None:
        self.sessions, self.addresses = sessions, addresses

    def players_mail(self, headings: Sequence[Heading]) -> list[bool]:
        """For each heading, whether its mail is a player's to all
        appearances: from a player's address, to a player's private
        address (of a seat, or of the player), or naming a game in progress.
        Four queries a batch."""
        senders = {h.sender for h in headings if h.sender}
        tokens = {t for h in headings for a in h.recipients if (t := self.addresses.token_of(a))}
        tags = {h.tag for h in headings if h.tag}
        with self.sessions() as db:
            players = _found(db, m.Player.address, senders)
            owned = _found(db, m.Seat.token, tokens) | _found(db, m.Player.token, tokens)
            active = _found(db, m.Game.tag, tags, m.Game.status == "active")
        return [h.sender in players or h.tag in active
                or any(self.addresses.token_of(a) in owned for a in h.recipients)
                for h in headings]


def _found(db: Session, column: InstrumentedAttribute[str] | InstrumentedAttribute[str | None],
           values: set[str], *where: ColumnElement[bool]) -> set[str]:
    """Those of ``values`` that ``column`` holds."""
    found: set[str] = set()
    wanted = sorted(values)
    for i in range(0, len(wanted), CHUNK):
        q = select(column).where(column.in_(wanted[i:i + CHUNK]), *where)
        found.update(v for v in db.scalars(q) if v is not None)
    return found
