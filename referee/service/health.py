"""The referee's health for ``status``, ``outbox`` and ``inbound``: the
outbox's queue, failed mail out and in and their retry, the last completed
pass and the last error.

The last pass and the last error are kept as two named rows of the
``leases`` table (``health.pass``, ``health.error``: the text in ``holder``,
the time in ``expires_at``), so no table is added for two values. Each call
is one short transaction or a read.
"""

from __future__ import annotations

from datetime import datetime
from email import policy
from email.parser import HeaderParser
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from referee.mail.headers import one_line
from referee.service.errors import RefereeError
from referee.service.intake.receive import RETRY
from referee.service.play.guests import WAITING
from referee.store import models as m

LAST_PASS = "health.pass"
LAST_ERROR = "health.error"
#: How many outbox rows ``referee outbox`` (and inbound records ``referee
#: inbound``) lists, newest first.
LISTED = 50
#: How many failed inbound mails ``status`` shows, newest first.
RECENT = 5


class Health:
    """Records passes and errors; reads the outbox's state."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def record_pass(self, report: str, now: datetime) -> None:
        self._put(LAST_PASS, report, now)

    def record_error(self, text: str, now: datetime) -> None:
        self._put(LAST_ERROR, text, now)

    def _put(self, name: str, text: str, now: datetime) -> None:
        with self.sessions.begin() as db:
            row = db.get(m.Lease, name)
            if row is None:
                db.add(m.Lease(name=name, holder=one_line(text)[:200], expires_at=now))
            else:
                row.holder, row.expires_at = one_line(text)[:200], now

    def last_pass(self) -> dict[str, str] | None:
        """The last completed pass (when, what), or None: one row read, for
        a health check that runs every minute whatever the number of games."""
        with self.sessions() as db:
            return _entry(db.get(m.Lease, LAST_PASS))

    def summary(self) -> dict[str, Any]:
        """The outbox (queued, failed, oldest waiting), the inbound mail that
        failed (how many, the latest few, and how many wait to be read
        again), the last pass and error."""
        with self.sessions() as db:
            waiting = (m.Outbox.sent_at.is_(None), m.Outbox.failed_at.is_(None))
            queued = db.scalar(select(func.count()).select_from(m.Outbox).where(*waiting))
            oldest = db.scalar(select(func.min(m.Outbox.created_at)).where(*waiting))
            failed = db.scalar(select(func.count()).select_from(m.Outbox)
                               .where(m.Outbox.failed_at.is_not(None)))
            in_failed = db.scalar(select(func.count()).select_from(m.Inbound)
                                  .where(m.Inbound.status == "failed"))
            retrying = db.scalar(select(func.count()).select_from(m.Inbound)
                                 .where(m.Inbound.status == RETRY))
            waiting = db.scalar(select(func.count()).select_from(m.Inbound)
                                .where(m.Inbound.status == WAITING))
            last = {name: db.get(m.Lease, name) for name in (LAST_PASS, LAST_ERROR)}
        return {
            "outbox": {"queued": queued or 0, "failed": failed or 0,
                       "oldest_waiting": _iso(oldest)},
            "inbound": {"failed": in_failed or 0, "retrying": retrying or 0,
                        "waiting": waiting or 0,
                        "recent": self.inbound(RECENT, failed_only=True) if in_failed else []},
            "last_pass": _entry(last[LAST_PASS]),
            "last_error": _entry(last[LAST_ERROR]),
        }

    def inbound(self, limit: int | None = LISTED,
                failed_only: bool = False) -> list[dict[str, Any]]:
        """The inbound mail that failed, waits to be read again, or waits for
        its game's package, newest first (``limit`` None: all): when it came,
        from whom, its subject and why."""
        states = ("failed",) if failed_only else ("failed", RETRY, WAITING)
        with self.sessions() as db:
            q = (select(m.Inbound).where(m.Inbound.status.in_(states))
                 .order_by(m.Inbound.id.desc()).limit(limit))
            return [{
                "id": row.id, "received_at": _iso(row.received_at),
                "sender": row.sender or None, "subject": one_line(row.subject or "")[:200],
                "state": {"failed": "failed", WAITING: WAITING}.get(row.status,
                                                                     "to read again"),
                "reason": one_line(row.note or "")[:500], "source": row.source_key,
            } for row in db.scalars(q)]

    def retry_inbound(self, iid: int) -> None:
        """Read a failed inbound mail again, from the mailbox, at the next pass."""
        with self.sessions.begin() as db:
            row = db.get(m.Inbound, iid)
            if row is not None and row.status == WAITING:
                raise RefereeError(f"Inbound mail {iid} waits for its game's package; it is "
                                   "read again by itself once the package is installed "
                                   "(see: referee status).")
            if row is None or row.status != "failed":
                raise RefereeError(f"There is no failed inbound mail {iid} "
                                   "(see: referee inbound).")
            row.status = RETRY

    def outbox(self, limit: int = LISTED) -> list[dict[str, Any]]:
        """The mail waiting or failed, newest first."""
        with self.sessions() as db:
            q = (select(m.Outbox, m.Game.tag).outerjoin(m.Game, m.Outbox.game_id == m.Game.id)
                 .where(m.Outbox.sent_at.is_(None)).order_by(m.Outbox.id.desc()).limit(limit))
            return [{
                "id": row.id, "game": tag, "to": list(row.recipients),
                "subject": _subject(row.raw), "queued_at": _iso(row.created_at),
                "attempts": row.attempts,
                "state": "failed" if row.failed_at else "waiting",
                "next_attempt_at": None if row.failed_at else _iso(row.next_attempt_at),
                "last_error": row.last_error,
            } for row, tag in db.execute(q)]

    def failed_since(self, when: datetime) -> int:
        """How many mails of the outbox failed for good at ``when`` or later."""
        with self.sessions() as db:
            return int(db.scalar(select(func.count()).select_from(m.Outbox).where(
                m.Outbox.failed_at >= when)) or 0)

    def retry(self, oid: int, now: datetime) -> None:
        """Send a failed or waiting mail again at the next outbox run."""
        with self.sessions.begin() as db:
            row = db.get(m.Outbox, oid)
            if row is None or row.sent_at is not None:
                raise RefereeError(f"There is no unsent mail {oid} in the outbox.")
            row.failed_at, row.next_attempt_at = None, now


def _subject(raw: str) -> str:
    """The mail's subject as its reader sees it (RFC 2047 words decoded)."""
    head = HeaderParser(policy=policy.default).parsestr(raw[:16384], headersonly=True)
    return one_line(str(head.get("Subject", "")))[:200]


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() + "Z" if when else None


def _entry(row: m.Lease | None) -> dict[str, str] | None:
    return {"at": row.expires_at.isoformat() + "Z", "what": row.holder} if row else None
