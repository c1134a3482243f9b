"""What one address may cost: a reply budget per hour and per day, a loop
breaker for the same mail again and again (RFC 3834 §2), a budget of its
own for the answers to moves a game accepted, and the notices that go out
at most once a day; and what strangers nothing vouches for may cost: a
number of replies a day for each domain their From claims, and for all
of them together.

Budgets limit replies, never moves: mail over its budget is still read for
the moves in it (``chain.Play``), so a flood forged in a player's name
silences neither their moves nor the answers to them.

Runs inside intake's transaction: the count and the mail it counts commit
together.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from enum import Enum

from sqlalchemy.orm import Session

from referee.config import LimitsSection
from referee.mail.inbound import InboundMessage
from referee.service.intake.letter import Letter
from referee.store import correspondents
from referee.store.correspondents import Budget

log = logging.getLogger(__name__)

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
#: The budget of a player's mail that nothing verified is kept under the
#: address with this mark in front (no address starts with it).
UNVERIFIED = "?"
#: The longest key the correspondents' table holds.
ADDRESS_MAX = 320
#: The count of all replies to strangers nothing vouches for is kept under
#: this key, and the once-a-day marks of their notices under keys that start
#: with it: a space is in no sender address (``no sender``).
STRANGERS = "* strangers"
#: The answers to moves a game accepted are counted under the key of the
#: budget with this in front: only a mail that moved spends it.
MOVES = "* moves "
#: The once-a-day mark of an answer to talk in reply to one of our mails.
TALK = "* talk "


class Allowance(Enum):
    ANSWER = "answer"
    #: Over the budget: only its moves are read.
    OVER = "over"
    #: The same mail again, more times in a row than ``same_mail``.
    LOOP = "loop"


class Budgets:
    """Counts the mail of each address against the configured limits."""

    def __init__(self, limits: LimitsSection) -> None:
        self.limits = limits

    def charge(self, db: Session, address: str, content: str, now: datetime) -> Allowance:
        """Count one mail from ``address`` whose command lines digest to
        ``content``; say whether to read all of it and answer it, or only
        its moves (over the budget, or the same mail again)."""
        row = self._row(db, address, now)
        if content == row.last_digest:
            row.repeats += 1
        else:
            row.last_digest, row.repeats = content, 1
        if row.repeats > self.limits.same_mail:
            allowance = Allowance.LOOP
        else:
            allowance = Allowance.ANSWER if self._spend(row, now) else Allowance.OVER
        correspondents.write(db, row)
        return allowance

    def answer_move(self, db: Session, address: str, now: datetime) -> bool:
        """Whether the answer to a mail over ``address``'s budget whose move
        a game accepted may go: within a budget of the same size that only
        such answers spend, so mail that moves nothing (a forged flood)
        never uses it up. Counts the answer."""
        row = self._row(db, f"{MOVES}{address}"[:ADDRESS_MAX], now)
        spent = self._spend(row, now)
        correspondents.write(db, row)
        return spent

    def tell(self, db: Session, address: str, now: datetime) -> bool:
        """Whether to tell ``address`` now that its budget is spent: once
        for each hour or day it is spent for."""
        row = self._row(db, address, now)
        window = row.day_start if row.day_count >= self.limits.replies_per_day else row.hour_start
        if row.told_at is not None and row.told_at >= window:
            correspondents.write(db, row)  # a row new is kept all the same
            return False
        row.told_at = now
        correspondents.write(db, row)
        return True

    def talk_answered(self, db: Session, address: str, now: datetime) -> bool:
        """Whether a mail from ``address`` in reply to one of ours that
        holds no command may be answered now: once a day, so an
        autoresponder nothing marks, whose text changes each time, gets
        one answer a day (and, the mails it is not answered not being
        counted, no notice that a budget is spent)."""
        row = self._row(db, f"{TALK}{address}"[:ADDRESS_MAX], now)
        if row.not_verified_at is not None and now - row.not_verified_at < DAY:
            return False
        row.not_verified_at = now
        correspondents.write(db, row)
        return True

    def refund(self, db: Session, address: str) -> None:
        """Take back the answer :meth:`charge` counted for the mail just
        read from ``address``: it was not answered after all."""
        row = correspondents.read(db, address, datetime.min)
        if not row.new:
            row.hour_count = max(row.hour_count - 1, 0)
            row.day_count = max(row.day_count - 1, 0)
            correspondents.write(db, row)

    def _spend(self, row: Budget, now: datetime) -> bool:
        """Count one answer on ``row`` if its hour and day have room."""
        if now - row.hour_start >= HOUR:
            row.hour_start, row.hour_count = now, 0
        if now - row.day_start >= DAY:
            row.day_start, row.day_count = now, 0
        if (row.hour_count < self.limits.replies_per_hour
                and row.day_count < self.limits.replies_per_day):
            row.hour_count += 1  # the counts are of mails answered
            row.day_count += 1
            return True
        return False

    def reopens_at(self, db: Session, address: str) -> datetime:
        """When all of the mail from an address over its budget is read again."""
        row = correspondents.read(db, address, datetime.min)
        assert not row.new
        if row.day_count >= self.limits.replies_per_day:
            return row.day_start + DAY
        return row.hour_start + HOUR

    def once_a_day(self, db: Session, address: str, now: datetime) -> bool:
        """Whether a "not verified" notice may go to ``address`` now; at most
        one a day, so forged mail in a player's name cannot flood them."""
        row = self._row(db, address, now)
        if row.not_verified_at is not None and now - row.not_verified_at < DAY:
            return False
        row.not_verified_at = now
        correspondents.write(db, row)
        return True

    def tell_stranger(self, db: Session, what: str, address: str, now: datetime) -> bool:
        """Whether a notice of kind ``what`` (a join to confirm, say) may go
        now to ``address``, a stranger nothing vouches for: once a day for
        each address and kind, and within the day's replies to such
        strangers (:meth:`stranger_reply`), which it counts."""
        row = self._row(db, f"{STRANGERS} {what} {address}"[:ADDRESS_MAX], now)
        if row.not_verified_at is not None and now - row.not_verified_at < DAY:
            return False
        if not self.stranger_reply(db, address, now):
            correspondents.write(db, row)  # a row new is kept all the same
            return False
        row.not_verified_at = now
        correspondents.write(db, row)
        return True

    def stranger_reply(self, db: Session, address: str, now: datetime) -> bool:
        """Whether one more reply may go to ``address``, a stranger nothing
        vouches for: at most ``stranger_replies_per_domain`` a day to the
        addresses of its domain, and ``stranger_replies_per_day`` to all
        of them together, so mail forged in any number of names gets
        bounded backscatter, and names forged at one domain leave room for
        newcomers from every other. Counts the reply; the first refusal of
        a day, for each bound, is logged."""
        domain = address.rpartition("@")[2].lower()
        per_domain = self._row(db, f"{STRANGERS} @{domain}"[:ADDRESS_MAX], now)
        in_all = self._row(db, STRANGERS, now)
        room = (self._room(per_domain, self.limits.stranger_replies_per_domain, now,
                           f" at {domain}", "stranger_replies_per_domain")
                and self._room(in_all, self.limits.stranger_replies_per_day, now,
                               "", "stranger_replies_per_day"))
        if room:
            per_domain.day_count += 1
            in_all.day_count += 1
        correspondents.write(db, per_domain)
        correspondents.write(db, in_all)
        return room

    @staticmethod
    def _room(row: Budget, limit: int, now: datetime, what: str, key: str) -> bool:
        """Whether the day's count on ``row`` is below ``limit``; the first
        time a day it is not, a line in the log says so."""
        if now - row.day_start >= DAY:
            row.day_start, row.day_count = now, 0
        if row.day_count < limit:
            return True
        if row.told_at is None or row.told_at < row.day_start:
            row.told_at = now
            log.warning("%d replies to strangers nothing vouches for%s since %s UTC "
                        "([limits] %s): no more until %s UTC", row.day_count, what,
                        f"{row.day_start:%Y-%m-%d %H:%M}", key,
                        f"{row.day_start + DAY:%Y-%m-%d %H:%M}")
        return False

    @staticmethod
    def _row(db: Session, address: str, now: datetime) -> Budget:
        """The row of ``address`` (a new one, written by its first
        :func:`correspondents.write`)."""
        return correspondents.read(db, address, now)


def budget_key(letter: Letter) -> str:
    """Whose budget a mail spends: what the referee can trust of who sent
    it. Mail verified as the player's (to their private address, or an
    aligned pass of the trusted Authentication-Results) spends the
    player's own; any other mail in their name spends a budget of its own,
    so a flood forged in a player's name cannot silence their real mail."""
    assert letter.player is not None
    address = letter.player.address
    if letter.verdict is not None and letter.verdict.passed:
        return address
    return f"{UNVERIFIED}{address}"[:ADDRESS_MAX]


def content_digest(msg: InboundMessage) -> str:
    """What a mail says: its command lines."""
    return hashlib.sha256("\n".join(msg.lines).encode("utf-8", "surrogatepass")).hexdigest()


def loop_digest(letter: Letter) -> str:
    """What the loop breaker compares: the command lines and the game the
    subject names. An autoresponder answering our mails of one game says
    the same thing again and again; a player in fifty games who bids "bid 1"
    in each, one mail per game, does not."""
    said = "\n".join([letter.subject_tag or "", *letter.lines])
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()
