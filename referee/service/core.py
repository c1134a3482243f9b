"""The referee over one database, one mail identity and its outbox: builds
the service's rooms and is the one door the CLI, the passes, the daemon, the
pages and the demo go through. It opens no transaction itself; each room
says in its docstring which one it runs in.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parseaddr
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.mail.inbound import one_line
from referee.service.bounces import Bounces
from referee.service.common import Outcome, now_utc
from referee.service.deadlines import DeadlineSweep
from referee.service.delivery import Delivery
from referee.service.health import Health
from referee.service.intake import Cursor, Intake
from referee.service.lease import Lease
from referee.service.operator import Operator
from referee.service.outbox import OutboxSender, composer_for
from referee.service.pages import Pages
from referee.service.reading import Reading
from referee.service.routing import Routing
from referee.service.senders import Senders
from referee.service.streaming import OutboxStream
from referee.store.db import make_engine, sessions

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
        self.reading = Reading(self.sessions)
        self.composer = composer_for(config, self.reading)
        self.delivery = Delivery(config, self.composer)
        senders = Senders(config, self.delivery)
        routing = Routing(config, self.composer, self.delivery, senders)
        self.intake = Intake(config, self.sessions, self.delivery, senders,
                             Bounces(self.composer), routing)
        self.sweep = DeadlineSweep(self.sessions, self.composer, self.delivery)
        self.operator = Operator(config, self.sessions, self.delivery)
        self.lease = Lease(self.sessions)
        self.health = Health(self.sessions)
        self.pages = Pages(self.sessions, config.referee.workers == "many")
        #: Why the last outbox send could not reach the relay (None: it could).
        self.relay_error: Exception | None = None

    def close(self) -> None:
        self.db_engine.dispose()

    # -- mail in, deadlines, mail out ---------------------------------------
    def process(self, raw: bytes, source_key: str, now: datetime | None = None,
                cursor: Cursor | None = None, size: int | None = None) -> Outcome:
        """Referee one inbound message (see :meth:`Intake.process`), and log
        one line of it: who, which game, what was done (counts, never the
        command lines: a bid is a secret)."""
        outcome = self.intake.process(raw, source_key, now or now_utc(), cursor, size)
        sender = _sender(raw)
        done = Counter(t.result for t in outcome.transcript)
        what = ", ".join(f"{n} {result}" for result, n in sorted(done.items()))
        log.log(logging.DEBUG if outcome.status == "duplicate" else logging.INFO,
                "mail from %s%s: %s%s", sender or "(no sender)",
                f" about {outcome.tag}" if outcome.tag else "", outcome.status,
                f" ({what})" if what else "",
                extra={"sender": sender, "game": outcome.tag, "outcome": outcome.status,
                       "source": source_key})
        return outcome

    def cursor(self, mailbox: str) -> tuple[int, int] | None:
        return self.intake.cursor(mailbox)

    def fire_deadlines(self, now: datetime | None = None) -> int:
        """Due reminders and timeouts; returns how many timeouts fired."""
        return self.sweep.fire(now or now_utc())

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

    # -- the operator's actions ---------------------------------------------
    def create_game(
        self, kind: str, players: Sequence[str], bots: int = 0,
        options: dict[str, str] | None = None, now: datetime | None = None,
        seed: str | None = None, teams: Sequence[str | None] = (),
    ) -> str:
        """Create a game, queue the opening, and return its tag."""
        return self.operator.create_game(kind, players, bots, options or {},
                                         now or now_utc(), seed, teams)

    def resign_player(self, tag: str, address: str, now: datetime | None = None) -> str:
        return self.operator.resign_player(tag, address, now or now_utc())

    def cancel_game(self, tag: str, reason: str = "", now: datetime | None = None) -> None:
        self.operator.cancel_game(tag, reason, now or now_utc())

    def extend_deadlines(self, tag: str, by: timedelta, reason: str = "",
                         now: datetime | None = None) -> int:
        return self.operator.extend_deadlines(tag, by, reason, now or now_utc())

    def readdress_player(self, old: str, new: str,
                         now: datetime | None = None) -> tuple[str, list[str]]:
        return self.operator.readdress_player(old, new, now or now_utc())

    def prune(self, before: datetime) -> tuple[int, int]:
        return self.operator.prune(before)

    def rotate_token(self, address: str) -> None:
        self.operator.rotate_token(address)

    # -- reading --------------------------------------------------------------
    def status(self, tag: str | None = None) -> list[dict[str, Any]]:
        return self.reading.status(tag)

    def iter_status(self, tag: str | None = None) -> Iterator[dict[str, Any]]:
        """``status`` a game at a time, for output that streams."""
        return self.reading.iter_status(tag)

    def status_of(self, ids: Sequence[int]) -> Iterator[dict[str, Any]]:
        """``status`` of the games ``ids`` alone, in the order of their ids."""
        return self.reading.status_of(ids)

    def public_histories(self, tags: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        return self.reading.public_histories(tags)

    def stored_state(self, tag: str) -> Any:
        return self.reading.stored_state(tag)

    def replay(self, tag: str) -> Any:
        return self.reading.replay(tag)
