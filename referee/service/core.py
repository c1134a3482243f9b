"""The referee over one database, one mail identity and its outbox: it
builds the wings and the rooms at the root, and is the one door the
CLI, the passes, the daemon, the pages and the demo come in by. Past the
door they use the rooms themselves: ``intake`` (mail in), ``sweep`` (the
deadlines), ``operator`` (the operator's actions), ``tables`` (the club's
open tables, in the caller's transaction), ``club`` (the operator's
commands on them, and their expiry), ``reading`` (status,
history, replay), ``health``, ``clock`` (may it fire deadlines), ``lease``,
``pages`` and ``guests`` (the game packages the games need). It opens no
transaction itself; each room says in its docstring which one it runs in.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parseaddr

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.mail.headers import one_line
from referee.service.clock import Clock
from referee.service.club.office import ClubOffice
from referee.service.club.tables import Tables
from referee.service.health import Health
from referee.service.intake.letter import Outcome
from referee.service.intake.receive import Batch, Cursor, Intake
from referee.service.lease import Lease
from referee.service.outgoing.delivery import Delivery
from referee.service.outgoing.outbox import OutboxSender, composer_for
from referee.service.outgoing.streaming import OutboxStream
from referee.service.pages import Pages
from referee.service.play.deadlines import DeadlineSweep
from referee.service.play.guests import Guests
from referee.service.play.operator import Operator
from referee.service.reading import Reading
from referee.store.db import make_engine, now_utc, sessions

log = logging.getLogger(__name__)
#: How much of a mail is read for its From line in the log.
MAX_HEAD = 64 * 1024


def _sender(raw: bytes) -> str:
    """The From address of a raw mail, made safe for a log line."""
    try:
        head = BytesHeaderParser(policy=compat32).parsebytes(raw[:MAX_HEAD], headersonly=True)
        address = parseaddr(str(head.get("From", "")))[1]
    except Exception:
        return ""
    return one_line(address)[:200]


class Referee:
    """The referee service. Every method that depends on the time takes
    ``now`` (naive UTC); without it, the clock's."""

    def __init__(self, config: Config, db_engine: Engine | None = None) -> None:
        """``db_engine``: one already open on the configured database (the
        command line's, which checked its schema); else a new one."""
        self.config = config
        self.db_engine = db_engine or make_engine(config.database_url)
        self.sessions: sessionmaker[Session] = sessions(self.db_engine)
        self.composer = composer_for(config, self.sessions)
        self.delivery = Delivery(config, self.composer)
        self.intake = Intake(config, self.sessions, self.delivery)
        self.sweep = DeadlineSweep(self.sessions, self.composer, self.delivery)
        self.operator = Operator(config, self.sessions, self.delivery)
        self.tables = Tables(config, self.operator)
        self.club = ClubOffice(config, self.sessions, self.delivery, self.tables)
        self.reading = Reading(self.sessions)
        self.lease = Lease(self.sessions)
        self.health = Health(self.sessions)
        self.guests = Guests(self.sessions)
        self.clock = Clock(self.sessions)
        self.pages = Pages(self.sessions, config.referee.workers == "many")
        #: Why the last outbox send could not reach the relay (None: it could).
        self.relay_error: Exception | None = None

    def close(self) -> None:
        self.db_engine.dispose()

    def process(self, raw: bytes, source_key: str, now: datetime | None = None,
                cursor: Cursor | None = None, size: int | None = None,
                batch: Batch | None = None) -> Outcome:
        """Referee one inbound message (see :meth:`Intake.process`; with
        ``batch``, in a savepoint of it, which the caller commits), and log
        one line of it: who, which game, what was done (counts, never the
        command lines: a bid is a secret); a line the log would not keep
        is not worked out (its sender is a parse of the mail's head)."""
        outcome = self.intake.process(raw, source_key, now or now_utc(), cursor, size,
                                      batch=batch)
        level = logging.DEBUG if outcome.status == "duplicate" else logging.INFO
        if not log.isEnabledFor(level):
            return outcome
        sender = _sender(raw)
        done = Counter(t.result for t in outcome.transcript)
        what = ", ".join(f"{n} {result}" for result, n in sorted(done.items()))
        log.log(level, "mail from %s%s: %s%s", sender or "(no sender)",
                f" about {outcome.tag}" if outcome.tag else "", outcome.status,
                f" ({what})" if what else "",
                extra={"sender": sender, "game": outcome.tag, "outcome": outcome.status,
                       "source": source_key})
        return outcome

    def send_outbox(self, now: datetime | None = None) -> int:
        """Mail what is queued and due; returns how many were sent. A relay
        that cannot be reached is kept in :attr:`relay_error`."""
        sender = OutboxSender(self.config, self.sessions, self.composer)
        sent = sender.send(now or now_utc())
        self.relay_error = sender.relay_error
        return sent

    def outbox_stream(self, now: datetime | None = None) -> OutboxStream:
        """A sender of the mail queued while a pass reads (see ``streaming``):
        for a relay over SMTP and one worker alone."""
        return OutboxStream(self.config, self.sessions,
                            OutboxSender(self.config, self.sessions, self.composer), now)
