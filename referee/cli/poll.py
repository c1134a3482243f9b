"""``referee poll``: one pass (mail in, deadlines, mail out), as cron runs
it: silent on success, a line on stderr and a code for each trouble."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import datetime
from typing import TYPE_CHECKING

from referee import signals
from referee.cli.common import Command, Subparsers, opened, parse_now
from referee.problems import (
    EX_CONFIG,
    EX_TEMPFAIL,
    LOCK_FIX,
    ForeignMailbox,
    ServerProblem,
    writing,
)
from referee.service import Referee, now_utc

if TYPE_CHECKING:
    from referee.passes import PassReport


def add_parser(sub: Subparsers) -> None:
    poll = sub.add_parser("poll", help="one pass: mail in, deadlines, mail out")
    poll.add_argument("--now", help="take this as the current time (ISO-8601, UTC); the "
                                    "deadlines fire by it, whatever the mail's time says")
    poll.add_argument("--trust-clock", action="store_true",
                      help="this machine's clock is right: fire the deadlines by it though "
                           "the mail's time says otherwise")
    poll.add_argument("--adopt-mailbox", action="store_true",
                      help="a new database takes its mailbox over: the mail in it now stays "
                           "unread, what comes after is read")


def run(args: argparse.Namespace) -> int:
    from referee.passes import exclusive

    with opened(args, remember_games=True) as referee:
        config = referee.config
        lock = config.resolve(config.referee.lock_file)
        with writing(lock, "[referee] lock_file", LOCK_FIX), \
                exclusive(referee) as mine:
            if not mine:
                print(f"referee: another pass or the daemon is running (it holds "
                      f"{config.resolve(config.referee.lock_file)} or the database's "
                      "pass lease); this pass did nothing", file=sys.stderr)
                return EX_TEMPFAIL
            started = parse_now(args.now) or now_utc()
            asked = signals.StopAsked()
            try:
                report = _poll(referee, parse_now(args.now), asked, args.trust_clock,
                               args.adopt_mailbox)
            except (ServerProblem, ForeignMailbox) as e:
                referee.health.record_error(str(e), now_utc())
                raise
            if asked.signum is not None and report.stopped:
                # Not a completed pass: ``status --max-age`` must not count it.
                print(f"referee: stopped by {signals.name(asked.signum)} after "
                      f"{report.read} mail(s); the rest waits for the next pass",
                      file=sys.stderr)
                return signals.exit_code(asked.signum)
            # The real clock: a pass run with --now in the future must not
            # pass for a recent one in ``status --max-age``.
            referee.health.record_pass(str(report), now_utc())
            if report.pages is not None:
                referee.health.record_error(str(report.pages), now_utc())
            lost = referee.health.failed_since(started)
        return _said(referee, args, report, lost)


def _said(referee: Referee, args: argparse.Namespace, report: PassReport, lost: int) -> int:
    """What a completed pass says, and its code: silent on success, so a
    cron line mails the operator only on trouble."""
    logging.getLogger("referee").info("pass done: %s", report)
    if report.adopted is not None:
        print(f"the mailbox is this database's now: the {report.adopted} mail(s) in it "
              "stay unread; what comes from now on is read")
    elif args.adopt_mailbox:
        print("this database reads its mailbox already: nothing to adopt")
    if report.clock is not None and report.clock.warning and not _logged_to_stderr(args):
        # A warning, not trouble that stops the pass: said, exit 0.
        print(f"referee: {report.clock.warning}", file=sys.stderr)
    if args.verbose:
        print(report)
    if lost:
        # Mail that will never arrive is trouble, though the pass ran.
        print(f"referee: {lost} mail(s) failed for good in this pass: the relay "
              "refused them (see: referee outbox)", file=sys.stderr)
    # Games stalled for want of their package: the others were
    # played, and this pass says it as `check` does, with its code.
    stalled = [s for s in referee.guests.stalled() if s.active]
    for stall in stalled:
        print(f"referee: {stall}", file=sys.stderr)
    if report.pages is not None:
        # The mail went on; the pages wait for a pass that can write them.
        print(f"referee: {report.pages}", file=sys.stderr)
    if lost:
        return 1
    if report.pages is not None:
        return report.pages.exit_code
    return EX_CONFIG if stalled else 0


def _logged_to_stderr(args: argparse.Namespace) -> bool:
    """Whether the log already puts a warning on stderr (``-v``, or
    ``--log-level`` warning or lower, with no ``--log-file``)."""
    level = args.log_level or ("info" if args.verbose else "error")
    return args.log_file is None and level in ("debug", "info", "warning")


def _poll(referee: Referee, now: datetime | None, asked: signals.StopAsked,
          trust_clock: bool = False, adopt: bool = False) -> PassReport:
    """One pass, stopped between two mails by a signal once the mailbox is
    open (before, Ctrl-C ends the command at once: nothing began); a mail
    server that cannot be used is a :class:`ServerProblem`."""
    import ssl

    from imapclient.exceptions import IMAPClientError

    from referee.check import check_maildir, explain
    from referee.mail.imap import ImapSource
    from referee.passes import run_pass

    config = referee.config
    source = None
    if config.mailbox.kind == "imap":
        source = ImapSource(config.mailbox, config.referee.max_message_size)
        try:
            source.connect()
        except (IMAPClientError, OSError) as e:
            raise explain(e, "mailbox", config.mailbox) from None
    else:
        check_maildir(config)
    try:
        with asked:
            report = run_pass(referee, now, imap=source, stop=asked,
                              trust_clock=trust_clock, adopt=adopt)
    except (IMAPClientError, ConnectionError, TimeoutError, ssl.SSLError) as e:
        raise explain(e, "mailbox", config.mailbox) from None
    finally:
        if source is not None:
            source.close()
    if referee.relay_error is not None:
        raise explain(referee.relay_error, "smtp", config.smtp)
    return report


COMMAND = Command("poll", add_parser, run, plays_games=True)
