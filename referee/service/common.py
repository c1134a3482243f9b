"""Small values every room of the service shares: the operator's error, the
outcome of one message, the clock as stored, and reading a player's address.
No transaction is opened here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import getaddresses

from sqlalchemy.exc import InterfaceError, OperationalError

#: The database errors that mean "away or busy, try again later" (a lost
#: connection, a locked SQLite file). Any other database error is about the
#: data in hand, and trying again would fail the same way for ever.
DATABASE_AWAY = (OperationalError, InterfaceError)


class RefereeError(Exception):
    """An operator's request cannot be done; the message says why."""


@dataclass
class TranscriptLine:
    """One command line of a player's mail, how it was read and what came of it."""

    text: str
    read_as: str
    result: str  # applied | penalty | refused | ignored
    message: str


@dataclass
class Outcome:
    """What processing one message did, for logs and tests."""

    status: str
    tag: str | None = None
    transcript: list[TranscriptLine] = field(default_factory=list)


def now_utc() -> datetime:
    """The current UTC time as stored: naive, in UTC, to the second (deadlines
    and ``status`` show whole seconds)."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def parse_player(text: str) -> tuple[str, str]:
    """``"Alice <alice@x.org>"`` or ``alice@x.org`` -> (address, name)."""
    pairs = getaddresses([text])
    if len(pairs) != 1 or "@" not in pairs[0][1]:
        raise RefereeError(f"{text!r} is not a mail address like 'Alice <alice@example.org>'")
    name, addr = pairs[0]
    addr = addr.strip().lower()
    return addr, name.strip() or addr.partition("@")[0].capitalize()
