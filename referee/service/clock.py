"""Whether this machine's clock may fire deadlines: compared with the mail's
own time and with the last pass the clock was trusted at.

A deadline fires when the clock passes it, so a clock set ten days ahead
moves for every player at once, and nothing in the pass looks wrong. The
mail servers keep clocks of their own: when the newest mail arrived (its
INTERNALDATE over IMAP, which the server writes and no sender does; its
file's time in a Maildir, which the delivery agent writes) is a time the
world has certainly reached. A sender's Date header is the sender's word,
and not used. So, with :data:`SKEW` of give:

* a clock *behind* the newest mail's arrival is wrong, since mail cannot
  come from the future: a warning, and the deadlines go on (they would
  only fire late, and holding them would make them later still);
* a clock *ahead* of both the newest mail's arrival and the last pass it
  was trusted at has jumped, or the referee was stopped that long while no
  mail came: a warning, and no deadline or reminder fires until mail
  vouches for the clock again or the operator confirms it.

A trusted pass moves its mark on, so a club whose mail is quiet for days
while passes run every few minutes is never held. So what is caught is a
clock that *moved*: one off by the same amount since before the games
were made set their deadlines by itself and fires them on time (``check``
compares it once with the IMAP server's, through its test mail). With no
mail ever received there is nothing to compare. A pass run at an
injected time (``--now``) is not judged: that time is the operator's.

The marks are rows of the ``leases`` table, as ``health`` keeps its own:
:data:`MAIL` (the newest arrival seen), :data:`TRUSTED` (this machine's
time at the last trusted pass) and :data:`WARNING` (the warning, while
there is one). Each call is one short transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from referee.store import models as m

#: How far the clock may stray from the mail's own time: delivery takes
#: seconds to minutes, and a clock an hour off moves a deadline by an hour.
SKEW = timedelta(hours=1)
#: The newest arrival of mail seen (``expires_at``) and where (``holder``).
MAIL = "clock.mail"
#: This machine's time at the last pass its clock was trusted at, and why.
TRUSTED = "clock.trusted"
#: The warning of the last pass, while the clock and the mail disagree.
WARNING = "health.clock"
#: The last pass recorded (``service/health.py``): where the mark starts
#: in a database made before the clock was checked.
LAST_PASS = "health.pass"


@dataclass(frozen=True)
class ClockVerdict:
    """What a pass may do by its clock, and what to tell the operator."""

    #: Deadlines and reminders wait: the clock is ahead, and not confirmed.
    held: bool = False
    #: One line for the operator (a warning), or None.
    warning: str | None = None
    #: The same finding when the operator trusts the clock anyway (for the
    #: log at info), or None.
    note: str | None = None


class Clock:
    """Keeps the mail's newest arrival and the trusted mark; judges a pass."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        #: The newest arrival known to be stored (saves a write per pass).
        self._mail: datetime | None = None

    def knows_mail(self) -> bool:
        """Whether any mail's arrival was ever seen."""
        if self._mail is None:
            with self.sessions() as db:
                row = db.get(m.Lease, MAIL)
                self._mail = row.expires_at if row else None
        return self._mail is not None

    def saw_mail(self, arrived: datetime, where: str) -> None:
        """Mail arrived at ``arrived`` (naive UTC, by the server's clock)."""
        if self._mail is not None and arrived <= self._mail:
            return

        def keep() -> datetime:
            with self.sessions.begin() as db:
                row = db.get(m.Lease, MAIL)
                if row is None:
                    db.add(m.Lease(name=MAIL, holder=where[:200], expires_at=arrived))
                elif arrived > row.expires_at:
                    row.holder, row.expires_at = where[:200], arrived
                else:
                    return row.expires_at
            return arrived

        self._mail = _twice(keep)

    def first_mark(self, now: datetime) -> None:
        """Set the mark, in a database that has none yet (made before the
        clock was checked, or new), at the latest time it recorded (the last
        pass, mail sent, a game made; one later than ``now`` was an injected
        ``--now``, no reading of a clock), or, where it recorded none, at
        ``now``: no deadline there was set by another clock. Called before a
        pass or the daemon records anything itself."""
        def mark() -> None:
            with self.sessions.begin() as db:
                if db.get(m.Lease, TRUSTED) is None:
                    _put(db, TRUSTED, "begun", min(_last_known(db) or now, now))

        _twice(mark)

    def judge(self, now: datetime, confirmed: bool = False,
              always: bool = False) -> ClockVerdict:
        """Judge this machine's clock, reading ``now``, for one pass.
        ``confirmed``: the operator says it is right, this once
        (``--trust-clock``); ``always``: ``[referee] trust_clock``."""
        return _twice(lambda: self._judge(now, confirmed, always))

    def _judge(self, now: datetime, confirmed: bool, always: bool) -> ClockVerdict:
        with self.sessions.begin() as db:
            mail_row, trusted_row = db.get(m.Lease, MAIL), db.get(m.Lease, TRUSTED)
            mail = mail_row.expires_at if mail_row else None
            trusted = trusted_row.expires_at if trusted_row else now  # see :meth:`first_mark`
            finding, ahead = _finding(now, mail, trusted)
            waved = confirmed or always
            held = ahead and not waved
            # Held, the mark stays where the clock was last right.
            mark = trusted if held else now
            _put(db, TRUSTED, "held" if held else "trusted", mark)
            said = db.get(m.Lease, WARNING)
            if finding and not waved:
                # The times it was judged by, not its text (longer than a
                # row holds): :meth:`warning` says it again from them.
                _put(db, WARNING, " ".join(_iso(t) for t in (mail, trusted)), now)
            elif said is not None:
                db.delete(said)
        if waved:
            return ClockVerdict(note=finding)
        return ClockVerdict(held=held, warning=finding)

    def warning(self) -> dict[str, str] | None:
        """The warning of the last judged pass (when, what), or None."""
        with self.sessions() as db:
            row = db.get(m.Lease, WARNING)
            if row is None:
                return None
            mail, trusted = (_from_iso(t) for t in row.holder.split(" "))
            finding, _ = _finding(row.expires_at, mail, trusted or row.expires_at)
            return {"at": row.expires_at.isoformat() + "Z", "what": finding or ""}


T = TypeVar("T")


def clock_against(now: datetime, server: datetime) -> str | None:
    """What a reading of the IMAP server's clock (``check``'s test mail,
    received at ``server``) says of this machine's clock reading ``now``:
    a warning, or None when they agree within :data:`SKEW`."""
    if abs(now - server) <= SKEW:
        return None
    return (f"this machine's clock says {_when(now)}, {_about(abs(now - server))} "
            f"{'ahead of' if now > server else 'behind'} the IMAP server's (the test mail "
            f"arrived {_when(server)} by its clock): set it right (NTP); the deadlines the "
            "players are told are off by as much")


def _twice(fn: Callable[[], T]) -> T:
    """``fn``, and once more if another worker made the same row meanwhile
    (``[referee] workers = "many"``): the second time it finds the row."""
    try:
        return fn()
    except IntegrityError:
        return fn()


def _finding(now: datetime, mail: datetime | None,
             trusted: datetime) -> tuple[str | None, bool]:
    """What the operator must hear of the clock (None: nothing), and
    whether the clock is ahead (deadlines would fire early)."""
    if mail is None:
        return None, False  # no mail ever arrived: nothing to compare
    if mail - now > SKEW:
        return (f"the clock says {_when(now)}, {_about(mail - now)} before the newest mail "
                f"arrived ({_when(mail)} by the mail server's clock): deadlines fire that "
                "late until it is set right (if the mail server's clock is the wrong one, "
                "set [referee] trust_clock = true)"), False
    since = max(mail, trusted)
    if now - since <= SKEW:
        return None, False
    return (f"the clock says {_when(now)}, {_about(now - since)} after the newest mail "
            f"arrived ({_when(mail)} by the mail server's clock) and the last time it was "
            f"trusted ({_when(trusted)}); no deadline or "
            "reminder fires until it is set right, or, if it is right (the referee was "
            "stopped that long while no mail came), confirmed with: referee poll "
            "--trust-clock (or run --trust-clock)"), True


def _last_known(db: Session) -> datetime | None:
    """The latest time this database recorded before the clock had a mark:
    the last pass, the last mail sent, the last game made."""
    row = db.get(m.Lease, LAST_PASS)
    times = [row.expires_at if row else None,
             db.scalar(select(func.max(m.Outbox.sent_at))),
             db.scalar(select(func.max(m.Game.created_at)))]
    return max((t for t in times if t is not None), default=None)


def _put(db: Session, name: str, text: str, when: datetime) -> None:
    row = db.get(m.Lease, name)
    if row is None:
        db.add(m.Lease(name=name, holder=text, expires_at=when))
    else:
        row.holder, row.expires_at = text, when


def _iso(when: datetime | None) -> str:
    return when.isoformat() if when else "-"


def _from_iso(text: str) -> datetime | None:
    return None if text == "-" else datetime.fromisoformat(text)


def _when(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _about(delta: timedelta) -> str:
    """A gap to the nearest of its largest unit: ``10 days``, ``3 hours``,
    ``75 minutes``."""
    seconds = delta.total_seconds()
    for name, size in (("day", 86400), ("hour", 3600)):
        if seconds >= 2 * size:
            return f"{round(seconds / size)} {name}s"
    return f"{round(seconds / 60)} minutes"
