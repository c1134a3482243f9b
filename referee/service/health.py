"""The referee's health for ``status`` and ``outbox``: the outbox's queue,
failed mail and its retry, the last completed pass and the last error.

The last pass and the last error are kept as two named rows of the
``leases`` table (``health.pass``, ``health.error``: the text in ``holder``,
the time in ``expires_at``), so no table is added for two values. Each call
is one short transaction or a read.
"""

from __future__ import annotations

from datetime import datetime
from email.parser import HeaderParser
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from referee.mail.inbound import one_line
from referee.service.common import RefereeError
from referee.store import models as m

LAST_PASS = "health.pass"
LAST_ERROR = "health.error"
#: How many outbox rows ``referee outbox`` lists, newest first.
LISTED = 50


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

    def summary(self) -> dict[str, Any]:
        """The outbox (queued, failed, oldest waiting), the last pass and error."""
        with self.sessions() as db:
            waiting = (m.Outbox.sent_at.is_(None), m.Outbox.failed_at.is_(None))
            queued = db.scalar(select(func.count()).select_from(m.Outbox).where(*waiting))
            oldest = db.scalar(select(func.min(m.Outbox.created_at)).where(*waiting))
            failed = db.scalar(select(func.count()).select_from(m.Outbox)
                               .where(m.Outbox.failed_at.is_not(None)))
            last = {name: db.get(m.Lease, name) for name in (LAST_PASS, LAST_ERROR)}
        return {
            "outbox": {"queued": queued or 0, "failed": failed or 0,
                       "oldest_waiting": _iso(oldest)},
            "last_pass": _entry(last[LAST_PASS]),
            "last_error": _entry(last[LAST_ERROR]),
        }

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

    def retry(self, oid: int, now: datetime) -> None:
        """Send a failed or waiting mail again at the next outbox run."""
        with self.sessions.begin() as db:
            row = db.get(m.Outbox, oid)
            if row is None or row.sent_at is not None:
                raise RefereeError(f"There is no unsent mail {oid} in the outbox.")
            row.failed_at, row.next_attempt_at = None, now


def _subject(raw: str) -> str:
    head = HeaderParser().parsestr(raw[:16384], headersonly=True)
    return one_line(str(head.get("Subject", "")))[:200]


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() + "Z" if when else None


def _entry(row: m.Lease | None) -> dict[str, str] | None:
    return {"at": row.expires_at.isoformat() + "Z", "what": row.holder} if row else None
