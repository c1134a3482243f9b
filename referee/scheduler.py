"""The daemon (``referee run``): APScheduler jobs for deadlines and the outbox,
and a mail watcher that uses IMAP IDLE where the server offers it and polls
otherwise. SIGTERM and SIGINT stop it cleanly between two mails; SIGHUP
(logrotate's ``postrotate``, a closing terminal) opens the log file again by
its name and is logged, and the daemon goes on; a dropped server connection
is retried with capped exponential backoff.

A lost mailbox connection (an IMAP restart: EOF or BYE during IDLE, a refused
connect while the server is down) is logged once at WARNING, retried from
:data:`RECONNECT_FIRST` seconds doubling to :data:`RECONNECT_MAX`, and its end
is logged when a pass succeeds again. A database that is busy (a locked
SQLite file) or away is the same: one line, then another try within seconds
(:data:`DATABASE_RETRY_MAX` at most), as ``referee poll`` says it in one line
and cron runs it again. The outbox job runs every few seconds, so a relay
back after an outage drains as soon as its rows are due.

Under systemd (``Type=notify``) the daemon says READY=1 once its threads
run, STOPPING=1 when told to stop, the last pass as its STATUS, and, with
``WatchdogSec=``, WATCHDOG=1 from a job of its own: only while the mail
watcher has shown life lately (between two mails of a pass, each second
of IDLE, each slice of a wait). A pass stuck for good, or a job that holds
the lock for good, stops the watcher's signs of life, so the pings stop
and systemd restarts the daemon.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from types import FrameType

from apscheduler.schedulers.background import BackgroundScheduler
from imapclient.exceptions import IMAPClientError

from referee.check import explain
from referee.logs import reopen_log
from referee.mail.imap import ImapSource
from referee.notify import Notifier
from referee.passes import (
    intake,
    keep_faults,
    many_workers,
    publish_pages,
    reread,
    send_outbox,
)
from referee.problems import (
    EX_CONFIG,
    EX_NOPERM,
    EX_TEMPFAIL,
    EX_UNAVAILABLE,
    ForeignMailbox,
    Problem,
    ServerProblem,
)
from referee.service import Referee, now_utc
from referee.store.db import cannot_use, damaged, database_problem

log = logging.getLogger(__name__)

DEADLINE_EVERY = timedelta(seconds=60)
#: The outbox retries from 5 s (service/outgoing/outbox.py): look for due rows that often.
LEASE_EVERY = timedelta(seconds=30)
OUTBOX_EVERY = timedelta(seconds=5)
#: Backoff after a fault that is not a lost connection (the database away, a bug).
MAX_BACKOFF = 300.0
#: Reconnecting to the mailbox: first wait, and the cap of the doubling.
RECONNECT_FIRST = 1.0
RECONNECT_MAX = 30.0
#: Between a pass that read mail and the next, the lock is free this long
#: (seconds), so a job waiting for it runs before that next pass.
PASS_GAP = 0.02
#: Reading mail again after the database was busy or away: from
#: RECONNECT_FIRST, doubling to this.
DATABASE_RETRY_MAX = 10.0
#: How often (seconds) the main thread looks whether SIGHUP came: the
#: handler only notes it, as the log's own lock may be held by the very
#: line it interrupted.
HANGUP_LOOK = 1.0


def database_reason(error: BaseException) -> str:
    """The database's own words for why it is away, in one line."""
    text = str(getattr(error, "orig", None) or error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class Daemon:
    """Runs the referee until asked to stop. One lock serialises all passes."""

    def __init__(self, referee: Referee, notifier: Notifier | None = None,
                 trust_clock: bool = False) -> None:
        self.referee = referee
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.scheduler = BackgroundScheduler(timezone="UTC")
        #: What stopped the daemon for good (a refused login, another
        #: referee's mailbox), if anything.
        self.problem: Problem | None = None
        #: The operator says the clock is right as it is at the start
        #: (``run --trust-clock``): the first sweep confirms it.
        self.confirm_clock = trust_clock
        #: Whether the clock's last warning held the deadlines; None: no
        #: warning stands. The daemon says a warning when it comes and when
        #: it goes, not every minute.
        self.clock_warned: bool | None = None
        #: Set once the mail watcher has looked at the mailbox (or failed to).
        self.looked = threading.Event()
        #: Since when (monotonic) the relay could not be reached; None while it can.
        self.relay_down_since: float | None = None
        #: Why the pages cannot be written, once said; None while they can.
        self.pages_problem: Problem | None = None
        self.notifier = notifier if notifier is not None else Notifier.from_environment()
        watchdog = self.notifier.watchdog
        #: Seconds: systemd's watchdog, and how often the daemon tells it
        #: (and the mail watcher shows life): a quarter of it.
        self.watchdog = watchdog.total_seconds() if watchdog else None
        self.beat = self.watchdog / 4 if self.watchdog else None
        #: When (monotonic) the mail watcher last showed life.
        self.mail_alive = time.monotonic()
        #: SIGHUP came: the log file is to be opened again.
        self.hangup = threading.Event()

    def give_up(self, error: BaseException, section: str) -> bool:
        """Stop for good on a refused login or a config that does not match
        the server: trying again would fail the same way for ever, unseen.
        Returns False for a problem worth retrying (a server down, a lost
        connection)."""
        cfg = self.referee.config
        problem = explain(error, section, cfg.mailbox if section == "mailbox" else cfg.smtp)
        if problem.exit_code not in (EX_NOPERM, EX_CONFIG):
            return False
        log.error("%s; stopping", problem)
        self._note_error(str(problem))
        self.problem = problem
        self.stop.set()
        return True

    def database_fault(self, error: BaseException) -> str | None:
        """What to log of a database the daemon cannot use now (``error``,
        :func:`cannot_use`), in one line: busy or away, or the line every
        command gives (a full disk, a permission). None for a damaged file,
        which no retry mends: said as the daemon's problem, and it stops
        (65, as every command says it)."""
        problem = database_problem(error, self.referee.config.database_url)
        if damaged(error):
            if self.problem is None:
                log.error("%s; stopping", problem)
                self.problem = problem
            self.stop.set()
            return None
        if problem.exit_code in (EX_TEMPFAIL, EX_UNAVAILABLE):
            return f"the database is busy or away ({database_reason(error)})"
        return str(problem)

    def _guarded(self, what: str, fn: Callable[[], object]) -> None:
        with self.lock:
            if self.stop.is_set():
                return  # stopping: it waits for the next start
            try:
                fn()
            except Exception as e:
                if not cannot_use(e):
                    log.exception("%s failed; will try again", what)
                    self._note_error(f"{what} failed: {type(e).__name__}: {e}")
                elif said := self.database_fault(e):
                    # Nothing to record it in, and the job runs again soon.
                    log.warning("%s: %s; will try again", what, said)

    def _note_error(self, text: str) -> None:
        """The last error, for ``referee status`` (if the database takes it)."""
        try:
            self.referee.health.record_error(text, now_utc())
        except Exception:
            log.debug("could not record the error for status", exc_info=True)

    def _note_pass(self, text: str) -> None:
        self.notifier.status(text)
        try:
            self.referee.health.record_pass(text, now_utc())
        except Exception:
            log.debug("could not record the pass for status", exc_info=True)

    def _going(self) -> bool:
        """Whether to stop: the mail watcher asks between two mails, each
        second of IDLE and each slice of a wait, so asking is its sign of life."""
        self.mail_alive = time.monotonic()
        return self.stop.is_set()

    def _rest(self, seconds: float) -> None:
        """Wait ``seconds`` or until told to stop, showing life meanwhile."""
        left = seconds
        while not self._going() and left > 0:
            step = min(left, self.beat or left)  # one wait when no watchdog asks for life
            if self.stop.wait(step):
                return
            left -= step

    def heartbeat(self, now: float | None = None) -> bool:
        """WATCHDOG=1, if the mail watcher showed life within half the
        watchdog; whether it was sent. Runs as a job without the lock, so a
        pass or a job stuck holding the lock cannot keep the pings going."""
        assert self.watchdog is not None
        now = time.monotonic() if now is None else now
        if now - self.mail_alive > self.watchdog / 2:
            log.warning("no sign of life from the mail watcher for %.0f s; systemd's watchdog "
                        "will restart the daemon unless it comes back", now - self.mail_alive)
            return False
        return self.notifier.alive()

    def deadlines(self) -> None:
        self._guarded("deadlines", self._deadlines_pass)

    def _deadlines_pass(self) -> None:
        # Failed mail the operator asked to read again (``referee inbound
        # --retry``) is read within the minute; a mailbox away delays only it.
        try:
            again = reread(self.referee)
        except (IMAPClientError, OSError) as e:
            log.warning("mail to read again waits: the mailbox is away (%s)", e)
            again = []
        if self._clock_held():
            swept = "deadlines held for the clock"
        else:
            swept = f"deadlines swept ({self.referee.sweep.fire()} fired)"
            if expired := self.referee.club.expire():
                swept += f", {expired} open table(s) expired"
        self._send()
        self._publish()
        keep_faults(self.referee)
        self._note_pass(f"daemon: {swept}, outbox sent"
                        + (f", {len(again)} mail(s) read again" if again else ""))

    def _clock_held(self) -> bool:
        """Judge the clock (``service/clock``): whether the deadlines wait.
        A warning is logged when it comes, and a line when it goes."""
        confirmed, self.confirm_clock = self.confirm_clock, False
        verdict = self.referee.clock.judge(now_utc(), confirmed,
                                           self.referee.config.referee.trust_clock)
        if verdict.warning and self.clock_warned != verdict.held:
            log.warning("%s", verdict.warning)
            self.clock_warned = verdict.held
        elif verdict.warning is None and self.clock_warned is not None:
            log.warning("the clock agrees with the mail again; deadlines fire by it")
            self.clock_warned = None
        if verdict.note:
            log.info("%s; trusted, as the operator said", verdict.note)
        return verdict.held

    def _send(self) -> None:
        """Send what is due. A relay that cannot be reached is one line when
        it goes and one when mail goes out again, however many mails wait
        and however often they are tried meanwhile."""
        sent = send_outbox(self.referee)
        error = self.referee.relay_error
        if error is None:
            if sent and self.relay_down_since is not None:
                log.warning("the SMTP relay answers again after %.0f s; the mail that waited "
                            "goes out", time.monotonic() - self.relay_down_since)
                self.relay_down_since = None
            return
        if self.give_up(error, "smtp"):
            return
        if self.relay_down_since is None:
            self.relay_down_since = time.monotonic()
            problem = explain(error, "smtp", self.referee.config.smtp)
            log.warning("%s; mail waits in the outbox; will try again", problem)
            self._note_error(str(problem))

    def relay_away(self, problem: ServerProblem) -> None:
        """The relay could not be reached at start: said once, like a relay lost later."""
        self.relay_down_since = time.monotonic()
        log.warning("%s; mail waits in the outbox; will try again", problem)

    def _publish(self) -> None:
        """Write the pages that are behind. A folder the referee cannot write
        is one line when it starts failing and one when it is mended; mail
        goes on meanwhile."""
        try:
            publish_pages(self.referee)
        except Problem as e:
            # Said again only for another kind of fault: on a full disk the
            # page that fails first changes with the room left.
            if self.pages_problem is None or self.pages_problem.exit_code != e.exit_code:
                log.error("%s; the game pages wait, the mail goes on", e)
                self._note_error(str(e))
                self.pages_problem = e
            return
        if self.pages_problem is not None:
            log.warning("the game pages are written again")
            self.pages_problem = None

    def keep_lease(self) -> None:
        """Renew the database's pass lease while the daemon runs. Losing it
        means another process took the referee's work over: stop rather
        than send the same mail twice."""
        try:
            held = self.referee.lease.renew()
        except Exception as e:
            if not cannot_use(e):
                log.exception("renewing the pass lease failed; will try again")
            elif said := self.database_fault(e):
                log.warning("renewing the pass lease: %s; will try again", said)
            return
        if not held:
            log.error("another referee process holds the pass lease (%s); stopping",
                      self.referee.lease.holder_now())
            self.stop.set()

    def outbox(self) -> None:
        self._guarded("outbox", self._send)

    def watch_mail(self) -> None:
        """Intake forever: after each pass that read mail another at once;
        after one that read nothing wait for IDLE news or the poll interval."""
        cfg = self.referee.config.mailbox
        delay = RECONNECT_FIRST
        lost_since: float | None = None  # monotonic time the connection was lost
        busy_since: float | None = None  # monotonic time the database was first busy
        source = (ImapSource(cfg, self.referee.config.referee.max_message_size)
                  if cfg.kind == "imap" else None)
        while not self._going():
            try:
                try:
                    with self.lock:
                        read, processed, failed = intake(self.referee, imap=source,
                                                         stop=self._going,
                                                         after_players=self._send)
                        if read:
                            self._send()
                            self._publish()
                            # Under the lock, so the passes are recorded in
                            # the order they ran: a deadlines pass waiting
                            # for the lock is recorded after this one.
                            self._note_pass(f"daemon: read {read} message(s), processed "
                                            f"{processed}"
                                            + (f" ({failed} failed)" if failed else ""))
                finally:
                    self.looked.set()
                if lost_since is not None:
                    log.warning("mailbox connection restored after %.1f s; reading mail again",
                                time.monotonic() - lost_since)
                    lost_since = None
                if busy_since is not None:
                    log.warning("the database answers again after %.1f s; reading mail again",
                                time.monotonic() - busy_since)
                    busy_since = None
                if self._look_again(source, read, processed):
                    # At once, but for a moment without the lock: a job that
                    # waits for it (the outbox, the deadlines) goes first, or
                    # a flood would hold it from them pass after pass. The
                    # backoff stays as it is.
                    self.stop.wait(PASS_GAP)
                    continue
                if source is not None and source.has_idle():
                    self._idle(source)
                else:
                    self._rest(cfg.poll_interval.total_seconds())
                # Reset only once the connection has lived through a wait: a
                # server that takes the login and drops IDLE at once is not
                # asked again every second.
                delay = RECONNECT_FIRST
            except (IMAPClientError, OSError) as e:
                if source is not None:
                    source.drop()
                if self.give_up(e, "mailbox"):
                    break
                if lost_since is None:
                    lost_since = time.monotonic()
                    log.warning("mailbox connection lost (%s); reconnecting in %.0f s", e, delay)
                    self._note_error(f"mailbox connection lost: {e}")
                else:
                    log.info("mailbox still unreachable (%s); next try in %.0f s", e, delay)
                self._rest(delay)
                delay = min(delay * 2, RECONNECT_MAX)
            except ForeignMailbox as e:
                # A fresh database on another referee's mailbox: reading on
                # would answer its players; the operator must say.
                log.error("%s; stopping", e)
                self._note_error(str(e))
                self.problem = e
                self.stop.set()
                break
            except Exception as e:
                if not cannot_use(e):
                    # A fault of ours: the watcher must live on, or the
                    # daemon would stop reading mail unseen.
                    log.exception("reading mail failed; trying again in %.0f s", delay)
                    if source is not None:
                        source.close()
                    self._rest(delay)
                    delay = min(delay * 2, MAX_BACKOFF)
                    continue
                # A locked SQLite file, a database restarting, a full disk:
                # one line, not a traceback, and the mail is read again
                # within seconds. The mailbox connection is fine and kept.
                # A damaged file stops the daemon.
                if (said := self.database_fault(e)) is None:
                    break
                delay = min(delay, DATABASE_RETRY_MAX)
                if busy_since is None:
                    busy_since = time.monotonic()
                    log.warning("%s; reading mail again in %.0f s", said, delay)
                else:
                    log.info("still: %s; next try in %.0f s", said, delay)
                self._rest(delay)
                delay = min(delay * 2, DATABASE_RETRY_MAX)
        if source is not None:
            source.close()

    def _look_again(self, source: ImapSource | None, read: int, processed: int) -> bool:
        """Whether to look for mail again at once rather than wait: mail that
        came during a pass was announced by the server in the middle of it
        (and IDLE never tells it again), or not at all if a poll is next.

        So a pass that read mail is followed by another, until one reads
        nothing; that one ends with its SEARCH, and what comes after it is
        announced to the IDLE that follows (or was announced with the SEARCH
        itself: :meth:`ImapSource.announced`). This ends: each mail read
        moves the mailbox's cursor past it, a failed one too. With several
        workers the cursor moves only past mail recorded, so a mail another
        worker holds is read again and again: there only mail this worker
        processed counts.
        """
        if self.stop.is_set():
            return False
        fresh = processed if many_workers(self.referee) else read
        return fresh > 0 or (source is not None and source.announced())

    def _idle(self, source: ImapSource) -> None:
        """IDLE until news, the re-issue interval (RFC 2177) or a stop."""
        source.idle(self.referee.config.mailbox.idle_timeout.total_seconds(), self._going)

    def reopen_log(self) -> None:
        """SIGHUP: open the log file again by its name (logrotate moved it),
        and say so there; without a log file, say it was ignored."""
        try:
            path = reopen_log()
        except OSError as e:
            log.error("SIGHUP: cannot open the log file again (%s: %s); logging on to the "
                      "file it had open", e.filename, e.strerror)
            return
        if path is None:
            log.warning("SIGHUP received: no log file to open again (the log goes to "
                        "stderr); going on")
        else:
            log.warning("SIGHUP received: log file %s opened again", path)

    def run(self) -> int:
        self.scheduler.add_job(self.deadlines, "interval",
                               seconds=DEADLINE_EVERY.total_seconds(), id="deadlines")
        self.scheduler.add_job(self.outbox, "interval",
                               seconds=OUTBOX_EVERY.total_seconds(), id="outbox")
        self.scheduler.add_job(self.keep_lease, "interval",
                               seconds=LEASE_EVERY.total_seconds(), id="lease")
        if self.beat is not None:
            # However late it runs (a loaded machine), a beat is not skipped.
            self.scheduler.add_job(self.heartbeat, "interval", seconds=self.beat,
                                   id="heartbeat", misfire_grace_time=None, coalesce=True)
        self.referee.clock.first_mark(now_utc())  # before the daemon records a pass of its own
        self.scheduler.start()
        watcher = threading.Thread(target=self.watch_mail, name="mail", daemon=True)
        watcher.start()
        address = self.referee.config.referee.address
        log.info("referee running for %s", address)
        self.notifier.ready(f"running for {address}")
        # The first sweep waits for the first look at the mailbox, which
        # learns the mail's own time: the clock is judged knowing it.
        while not self.looked.wait(1) and not self.stop.is_set():
            pass
        self.deadlines()
        while not self.stop.wait(HANGUP_LOOK):
            if self.hangup.is_set():
                self.hangup.clear()
                self.reopen_log()
        log.info("stopping")
        self.notifier.stopping()
        self.scheduler.shutdown(wait=True)
        watcher.join(timeout=30)
        return self.problem.exit_code if self.problem else 0


def run_daemon(referee: Referee,
               check: Callable[[], Sequence[tuple[str, ServerProblem]]] = tuple,
               trust_clock: bool = False) -> int:
    """Run until stopped. ``check`` tries the servers first
    (``check_servers``): those not answering yet are each said once and
    tried again. SIGHUP is the daemon's from the start (a closing terminal
    while the servers are tried does not end it); SIGTERM and SIGINT once
    it runs (before, Ctrl-C ends the start: one line, 130). ``trust_clock``:
    the operator confirms the clock as it is at the start."""
    daemon = Daemon(referee, trust_clock=trust_clock)

    def _hangup(_signum: int, _frame: FrameType | None) -> None:
        daemon.hangup.set()

    signal.signal(signal.SIGHUP, _hangup)
    for section, problem in check():
        if section == "smtp":
            daemon.relay_away(problem)
        else:
            log.warning("%s; will try again", problem)

    def _stop(signum: int, _frame: FrameType | None) -> None:
        log.info("signal %d received", signum)
        daemon.stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    with contextlib.suppress(OSError):  # a terminal already closed: the log says it too
        print(f"referee running for {referee.config.referee.address}; stop with Ctrl-C or "
              "SIGTERM", flush=True)
    return daemon.run()
