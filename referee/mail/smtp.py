"""The outbox sender: mails queued rows over SMTP (aiosmtplib) or into a Maildir.

A row is marked sent only after the server's 250. A crash between the 250 and
the mark resends the same message with the same Message-ID. 4xx replies,
timeouts and dropped connections are retried with backoff and jitter until
``give_up_after``; 5xx replies are permanent (RFC 5321 §4.2.1).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from email import message_from_string
from email.policy import SMTP

import aiosmtplib
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from referee.config import Config
from referee.mail.compose import verp_address
from referee.mail.maildir import MaildirSink
from referee.store import models as m

log = logging.getLogger(__name__)

FIRST_RETRY = timedelta(minutes=1)
MAX_RETRY = timedelta(hours=2)


def backoff(attempts: int, rng: random.Random | None = None) -> timedelta:
    """Delay before the next try: doubling from a minute, capped, with jitter."""
    base: timedelta = min(FIRST_RETRY * 2 ** max(attempts - 1, 0), MAX_RETRY)
    jitter: float = 0.75 + 0.5 * (rng or random.Random()).random()
    return base * jitter


class OutboxSender:
    """Sends due outbox rows; one short transaction per row."""

    def __init__(self, config: Config, sessions: sessionmaker[Session]) -> None:
        self.config = config
        self.sessions = sessions

    def due(self, now: datetime, limit: int = 500) -> list[int]:
        with self.sessions() as db:
            q = (select(m.Outbox.id)
                 .where(m.Outbox.sent_at.is_(None), m.Outbox.failed_at.is_(None),
                        m.Outbox.next_attempt_at <= now)
                 .order_by(m.Outbox.id).limit(limit))
            return list(db.scalars(q))

    def send(self, now: datetime) -> int:
        """Send everything due, in batches; returns how many were sent."""
        total, tried = 0, set[int]()
        while True:
            ids = [i for i in self.due(now) if i not in tried]
            if not ids:
                return total
            tried.update(ids)
            total += self._send_batch(ids, now)

    def _send_batch(self, ids: list[int], now: datetime) -> int:
        if self.config.smtp.kind == "maildir":
            sink = MaildirSink(self.config.resolve(self.config.smtp.path))
            for oid in ids:
                with self.sessions.begin() as db:
                    row = db.get(m.Outbox, oid)
                    assert row is not None
                    sink.deliver(row.raw.encode("utf-8"))
                    row.sent_at, row.attempts = now, row.attempts + 1
            return len(ids)
        return asyncio.run(self._send_smtp(ids, now))

    async def _send_smtp(self, ids: Sequence[int], now: datetime) -> int:
        s = self.config.smtp
        client = aiosmtplib.SMTP(
            hostname=s.host, port=s.port, use_tls=s.security == "ssl",
            start_tls=s.security == "starttls", timeout=s.timeout,
        )
        sent = 0
        try:
            await client.connect()
            if s.username:
                await client.login(s.username, s.password)
        except (aiosmtplib.SMTPException, OSError) as e:
            log.warning("SMTP connection failed: %s", e)
            for oid in ids:
                self._failed(oid, now, f"connection: {e}", permanent=False)
            return 0
        try:
            for oid in ids:
                with self.sessions() as db:
                    row = db.get(m.Outbox, oid)
                    assert row is not None
                    raw, rcpts = row.raw, list(row.recipients)
                msg = message_from_string(raw, policy=SMTP)
                try:
                    sender = self.config.referee.address
                    if s.verp:
                        sender = verp_address(sender, oid)
                    errors, _ = await client.send_message(msg, sender=sender, recipients=rcpts)
                except aiosmtplib.SMTPRecipientsRefused as e:
                    permanent = all(r.code >= 500 for r in e.recipients)
                    self._failed(oid, now, "recipients refused: " + "; ".join(
                        f"{r.recipient}: {r.code} {r.message}" for r in e.recipients),
                        permanent=permanent,
                        refused={r.recipient: f"{r.code} {r.message}" for r in e.recipients
                                 if r.code >= 500})
                    continue
                except aiosmtplib.SMTPResponseException as e:
                    self._failed(oid, now, f"{e.code} {e.message}", permanent=e.code >= 500)
                    continue
                except (aiosmtplib.SMTPException, OSError) as e:
                    self._failed(oid, now, str(e), permanent=False)
                    break
                with self.sessions.begin() as db:
                    row = db.get(m.Outbox, oid)
                    assert row is not None
                    row.sent_at, row.attempts = now, row.attempts + 1
                    # Partial refusals do not raise: record them on the row,
                    # and queue the same message again for those refused
                    # for now (4xx), with the same Message-ID.
                    row.last_error = "; ".join(f"{a}: {r.code} {r.message}"
                                               for a, r in errors.items())
                    retry = [a for a, r in errors.items() if r.code < 500]
                    _mark_bounced(db, {a: f"{r.code} {r.message}"
                                       for a, r in errors.items() if r.code >= 500}, now)
                    if retry:
                        db.add(m.Outbox(game_id=row.game_id, recipients=retry, raw=row.raw,
                                        created_at=row.created_at, attempts=row.attempts,
                                        next_attempt_at=now + backoff(row.attempts)))
                sent += 1
        finally:
            try:
                await client.quit()
            except (aiosmtplib.SMTPException, OSError):
                client.close()
        return sent

    def _failed(self, oid: int, now: datetime, error: str, permanent: bool,
                refused: dict[str, str] | None = None) -> None:
        with self.sessions.begin() as db:
            row = db.get(m.Outbox, oid)
            assert row is not None
            _mark_bounced(db, refused or {}, now)
            row.attempts += 1
            row.last_error = error[:2000]
            if permanent or now - row.created_at >= self.config.smtp.give_up_after:
                row.failed_at = now
                log.error("outbox %s failed for good: %s", oid, error)
            else:
                row.next_attempt_at = now + backoff(row.attempts)
                log.warning("outbox %s will be retried: %s", oid, error)


def _mark_bounced(db: Session, refused: dict[str, str], now: datetime) -> None:
    """A recipient our relay refused for good (5xx) is a player whose mail is
    not getting through: note it on the player, as a bounce report would, so
    ``referee status`` shows it."""
    for address, said in refused.items():
        player = db.scalar(select(m.Player).where(m.Player.address == address.lower()))
        if player is not None:
            player.bounced_at, player.bounce = now, said
