"""The pass lease: a row in the database that one referee process holds
while it runs a pass (or for as long as the daemon runs), renewed as it
goes. Beside the lock file, which a tmp cleaner can delete, it makes the
database itself refuse a second pass: two passes at once would each send
the same outbox rows.

Each call is one short transaction. Leases run on the wall clock, never on
an injected ``--now``.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from referee.store import models as m
from referee.store.db import now_utc

#: The lease every pass and the daemon take.
PASS = "pass"


class Lease:
    """One named lease, held by this process."""

    def __init__(self, sessions: sessionmaker[Session], name: str = PASS,
                 ttl: timedelta = timedelta(minutes=2)) -> None:
        self.sessions, self.name, self.ttl = sessions, name, ttl
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        #: Set where several workers share the database ([referee] workers =
        #: "many", PostgreSQL): they claim rows one by one instead, and the
        #: lease is neither taken nor needed.
        self.shared = False
        #: When this process last took or renewed it (monotonic), None: not held.
        self._held_since: float | None = None

    def acquire(self, now: datetime | None = None) -> bool:
        """Take the lease, or renew it if this process holds it; False when
        another process holds it and it has not expired."""
        if self.shared:
            return True
        now = now or now_utc()
        with self.sessions.begin() as db:
            taken: CursorResult[Any] = db.execute(  # type: ignore[assignment]
                update(m.Lease)
                .where(m.Lease.name == self.name,
                       (m.Lease.holder == self.holder) | (m.Lease.expires_at < now))
                .values(holder=self.holder, expires_at=now + self.ttl)
            )
            if taken.rowcount:
                return True
        try:
            with self.sessions.begin() as db:
                db.add(m.Lease(name=self.name, holder=self.holder, expires_at=now + self.ttl))
            return True
        except IntegrityError:
            pass  # held by another process, or left by a dead one
        stale = self.holder_now()
        if stale is None or not _dead_here(stale):
            return False
        # A process of this host that was killed mid-pass left its lease:
        # it will never renew it, so it need not be waited out.
        with self.sessions.begin() as db:
            taken = db.execute(  # type: ignore[assignment]
                update(m.Lease).where(m.Lease.name == self.name, m.Lease.holder == stale)
                .values(holder=self.holder, expires_at=now + self.ttl))
            return bool(taken.rowcount)

    def take(self, now: datetime | None = None) -> bool:
        """:meth:`acquire`, remembering that this process holds it (see :meth:`keep`)."""
        if self.acquire(now):
            self._held_since = time.monotonic()
            return True
        return False

    def keep(self) -> None:
        """Renew the lease this process took, once a quarter of its time has
        gone by: a long pass (a backlog of thousands of moves) must not lose
        it to a cron run that finds it expired. A lease not taken is left
        alone."""
        if self._held_since is None or time.monotonic() - self._held_since < (
                self.ttl.total_seconds() / 4):
            return
        if self.acquire():
            self._held_since = time.monotonic()

    renew = acquire

    def holder_now(self) -> str | None:
        """Who holds the lease (expired or not), for messages."""
        with self.sessions() as db:
            row = db.get(m.Lease, self.name)
            return row.holder if row else None

    def release(self) -> None:
        self._held_since = None
        if self.shared:
            return
        with self.sessions.begin() as db:
            db.execute(update(m.Lease).where(m.Lease.name == self.name,
                                             m.Lease.holder == self.holder)
                       .values(expires_at=datetime(1970, 1, 1)))


def _dead_here(holder: str) -> bool:
    """Whether ``holder`` (host:pid:nonce) was a process of this host that
    no longer runs."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
