"""One pass of the referee: fetch new mail, process it, fire deadlines (and
close the club's open tables past ``[club] table_days``), send.

``referee poll`` runs one pass (for cron); the daemon runs the same steps on
its schedule. Each message is processed in a savepoint of its own, the
messages commit in short batches, and the mailbox is marked only after
the commit of a message's batch.
"""

from __future__ import annotations

import fcntl
import heapq
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from referee.games import GAMES
from referee.mail.imap import MAX_HEADER_BYTES, ImapSource, Waiting, fetch_plan
from referee.mail.inbound import Heading, read_heading
from referee.mail.maildir import MaildirSource
from referee.problems import EX_CONFIG, PAGES_FIX, ForeignMailbox, Problem, writing
from referee.service import Referee, now_utc
from referee.service.clock import ClockVerdict
from referee.service.intake.ownership import look

log = logging.getLogger(__name__)


@dataclass
class PassReport:
    read: int = 0
    processed: int = 0
    failed: int = 0
    timeouts: int = 0
    sent: int = 0
    #: Failed mail read again, as the operator asked (``referee inbound --retry``).
    reread: int = 0
    #: Of ``sent``, the mail sent while the pass read.
    streamed: int = 0
    #: Why the game pages could not be written, when they could not: the
    #: mail went on, and the pages wait for the next pass that can write them.
    pages: Problem | None = None
    #: The pass was asked to stop (a signal) and stopped after the mail it
    #: was reading: the rest (mail, deadlines, sending, pages) waits.
    stopped: bool = False
    #: What the pass found of this machine's clock (None: run at an
    #: injected time, not judged).
    clock: ClockVerdict | None = None
    #: The mails a database that adopted its mailbox left unread (None:
    #: nothing adopted).
    adopted: int | None = None

    def __str__(self) -> str:
        failed = (f" ({self.failed} failed: see the log, and referee inbound)"
                  if self.failed else "")
        again = f", read again {self.reread}" if self.reread else ""
        timeouts = ("deadlines held for the clock" if self.clock and self.clock.held
                    else f"timeouts {self.timeouts}")
        return (f"read {self.read} message(s), processed {self.processed}{failed}{again}, "
                f"{timeouts}, sent {self.sent}")


#: Committed messages marked ``\\Seen`` with one IMAP STORE.
SEEN_BATCH = 200
#: Mails read between two looks for new mail during a pass (a NOOP each,
#: and a SEARCH when the server announced mail): about a tenth of a second
#: of refereeing, the most a player's mail that came meanwhile waits.
LOOK_EVERY = 20
#: Seconds a pass reads before it looks for news, however few of its
#: LOOK_EVERY mails that was (a loaded machine, mail slow to referee): so a
#: mail that comes while a pass reads waits for one look, not for a batch.
LOOK_SECONDS = 4.0
#: Of one sender's mail found while a pass reads, how much the pass still
#: reads, counting theirs found at its start; the rest of theirs waits for
#: the next pass. A newcomer's mail is read in the pass it came during,
#: and a flood still coming in does not keep the pass from ending.
LATE_PER_SENDER = LOOK_EVERY
#: Mail found while a pass reads that the pass still reads, of all senders
#: together; the rest waits for the next pass, so a pass ends.
LATE_PER_PASS = 10 * LOOK_EVERY
#: Mails of one sender in one turn of a pass: every sender's first TURN
#: mails are read in the order they came, then every sender's next TURN,
#: and so on. Moves sent turn by turn are read as they came; a flood waits
#: behind everyone else's first TURN.
TURN = LOOK_EVERY
#: Of one player's mail in a pass, how much is read before anyone else's;
#: the rest of theirs takes turns with everyone's, so a player's flood (or
#: one forged in their name) keeps no newcomer's mail behind all of it.
PLAYERS_SHARE = LOOK_EVERY


def many_workers(referee: Referee) -> bool:
    """Whether this process is one of several sharing the database and the
    mailbox: ``[referee] workers = "many"`` on PostgreSQL."""
    cfg = referee.config
    return cfg.referee.workers == "many" and cfg.database_url.startswith("postgresql")


def intake(referee: Referee, now: datetime | None = None,
           imap: ImapSource | None = None,
           after_each: Callable[[], None] | None = None,
           stop: Callable[[], bool] | None = None,
           after_players: Callable[[], None] | None = None) -> tuple[int, int, int]:
    """Read and process every new message; returns (read, processed, failed).

    Each message is refereed in a savepoint of its own, and the messages
    commit in batches (``intake.receive.Batch``: a few dozen, or a quarter
    of a second's, and before each FETCH, look for news and ``\\Seen``, so
    no lock is held while a server answers); a message is marked read in
    the mailbox only after its batch committed. With several workers each
    message is claimed by the one that reads it first, in a transaction of
    its own, and the cursor moves past what is done. ``after_each`` runs
    after each commit (the pass sends its mail); ``stop`` is asked after
    each message (the daemon or ``poll`` was told to stop: the mail being
    read finishes and commits, the rest waits for the next pass).

    From an IMAP mailbox, players' mail is read first, and senders take
    turns of :data:`TURN` mails (:class:`Backlog`); every
    :data:`LOOK_EVERY` mails (or :data:`LOOK_SECONDS`, if sooner) the pass
    asks the server for news: mail that came meanwhile takes its turn in
    this pass, up to :data:`LATE_PER_SENDER` of a sender's and
    :data:`LATE_PER_PASS` in all, and the rest is left to the next pass. So
    a flood, a stranger's or a player's, neither keeps another sender's
    mail behind more than a turn of it nor holds a pass for ever.
    ``after_players`` runs after each batch that held players' mail (the
    daemon sends their answers then, not at the end of the pass).
    """
    cfg = referee.config
    read = processed = failed = 0
    fresh = referee.intake.ownership.fresh()
    if cfg.mailbox.kind == "maildir":
        path = cfg.resolve(cfg.mailbox.path)
        source = MaildirSource(path)
        if fresh and (foreign := look(source.headings())):
            raise ForeignMailbox(foreign.refusal(f"the Maildir {path}"), EX_CONFIG)
        pass_batch = referee.intake.batch()
        keys: list[str] = []

        def commit_maildir() -> None:
            if pass_batch.commit():
                for key in keys:
                    source.mark_done(key)
                keys.clear()
                if after_each is not None:
                    after_each()

        try:
            for key, raw in source.messages():
                read += 1
                outcome = referee.process(raw, key, now=now or now_utc(), batch=pass_batch)
                processed += outcome.status not in ("duplicate", "elsewhere")
                failed += outcome.status == "failed"
                keys.append(key)
                if pass_batch.full():
                    commit_maildir()
                if stop is not None and stop():
                    break
            commit_maildir()
        finally:
            pass_batch.close()
        _saw_mail(referee, source.newest, source.newest_arrival, f"maildir:{path}")
        return read, processed, failed
    own = imap is None
    shared = many_workers(referee)
    src = imap or ImapSource(cfg.mailbox, cfg.referee.max_message_size)
    done: list[int] = []
    backlog = Backlog(referee.intake.triage.players_mail)
    stopped = False
    newest: datetime | None = None  # when the newest mail found arrived
    # Several workers each commit a mail at once: a batch's locks (a game's
    # row, held until its commit) would keep the others waiting.
    batch = None if shared else referee.intake.batch()

    def commit() -> None:
        if batch is not None and batch.commit() and after_each is not None:
            after_each()

    try:
        src.connect()
        src.left = False  # this pass's SEARCH finds what the last one left
        headings: list[Heading] = []
        for mails in src.waiting(referee.intake.cursor(src.mailbox)):
            if fresh:
                headings += [read_heading(w.head) for w in mails]
            newest = _newest(newest, mails)
            backlog.add(mails, this_pass=True)
        if fresh and (foreign := look(headings)):
            raise ForeignMailbox(foreign.refusal(f"the mailbox {src.mailbox}"), EX_CONFIG)
        del headings
        while not stopped and (taken := backlog.take(LOOK_EVERY)):
            brought: set[int] = set()
            reached = len(taken)  # the mails the FETCHes got to
            began = time.monotonic()
            for f in src.fetch(taken, before=commit):
                read += 1
                brought.add(f.uid)
                position = None if shared else backlog.position(f.uid)
                cursor = None if position is None else (src.mailbox, f.uidvalidity, position)
                outcome = referee.process(f.raw, f.source_key, now=now or now_utc(),
                                          cursor=cursor, size=f.size, batch=batch)
                processed += outcome.status not in ("duplicate", "elsewhere")
                failed += outcome.status == "failed"
                if outcome.status != "elsewhere":
                    backlog.settle(f.uid)
                    done.append(f.uid)
                if batch is None:
                    if after_each is not None:
                        after_each()
                elif batch.full():
                    commit()
                if len(done) >= SEEN_BATCH:
                    commit()
                    src.mark_seen(done)
                    done = []
                if stop is not None and stop():
                    stopped = True
                    break
                if time.monotonic() - began >= LOOK_SECONDS:
                    # Slow going: look for news now; the rest of the mails
                    # taken take their turn again.
                    reached = next(i for i, w in enumerate(taken) if w.uid == f.uid) + 1
                    break
            commit()
            if stopped:
                break
            backlog.gone([w.uid for w in taken[:reached] if w.uid not in brought])
            backlog.put_back(taken[reached:])
            if after_players is not None and any(
                    w.uid in backlog.players for w in taken[:reached]):
                after_players()
            if src.news():
                for mails in src.waiting(None, after=backlog.last):
                    newest = _newest(newest, mails)
                    backlog.add(mails, this_pass=False)
        src.left = backlog.left > 0
        src.mark_seen(done)
        if shared and backlog.found:
            referee.intake.settle_cursor(src.mailbox, src.uidvalidity, [
                (uid, src.key_of(uid)) for uid in backlog.found if uid not in backlog.expunged])
        _saw_mail(referee, newest, src.newest_arrival, src.mailbox)
    finally:
        if batch is not None:
            batch.close()
        if own:
            src.close()
    return read, processed, failed


def _newest(newest: datetime | None, mails: list[Waiting]) -> datetime | None:
    """The later of ``newest`` and when the newest of ``mails`` arrived."""
    times = [w.arrived for w in mails if w.arrived is not None]
    return max([*times, newest] if newest is not None else times, default=None)


def _saw_mail(referee: Referee, found: datetime | None,
              newest: Callable[[], datetime | None], where: str) -> None:
    """Keep when the newest mail arrived, for the clock (``service/clock``):
    the newest this pass ``found``, or, while none was ever seen, the
    mailbox's ``newest`` (asked only then)."""
    if found is None and not referee.clock.knows_mail():
        found = newest()
    if found is not None:
        referee.clock.saw_mail(found, where)


class Turns:
    """Mail of one rank (players', or the rest) in turns by sender: every
    sender's first :data:`TURN` mails of the pass, in the order they came,
    then every sender's next :data:`TURN`, and so on. One sender's backlog
    keeps no one else's mail behind more than a turn of it, and mail that
    keeps no one waiting is read in the order it came."""

    def __init__(self) -> None:
        self.heap: list[tuple[int, int, Waiting]] = []  # (turn, UID, mail)

    def __bool__(self) -> bool:
        return bool(self.heap)

    def push(self, turn: int, mail: Waiting) -> None:
        """``mail``, of its sender's ``turn``-th turn of the pass (from 0)."""
        heapq.heappush(self.heap, (turn, mail.uid, mail))

    def pop(self) -> Waiting:
        """The mail whose turn is next."""
        return heapq.heappop(self.heap)[2]


class Backlog:
    """The new mail of one pass, players' first: each mail that looks like
    a player's (``players_mail``), up to :data:`PLAYERS_SHARE` of a
    sender's, then the rest, each in :class:`Turns` by sender (every
    sender's first :data:`TURN` mails, in the order they came, then every
    sender's next, and so on). A sender's mail is read in the order it
    came: once one of theirs waits behind (with the rest, or left to the
    next pass), so does the rest of theirs.

    Mail found during the pass takes its turn in it while its sender has
    had fewer than :data:`LATE_PER_SENDER` mails found in the pass and the
    pass has taken fewer than :data:`LATE_PER_PASS` such mails; the rest is
    left to the next pass (:attr:`left`). So a newcomer's mail is read in
    the pass it came during, and a flood that goes on coming ends no later
    than those limits.

    Keeps the mailbox position the pass may store with a mail: past every
    mail found up to it that is done. Mail read out of turn does not move
    it past mail still waiting, so a crash leaves that mail to be read
    again; the one read out of turn is then a duplicate (its source key).
    """

    def __init__(self, players_mail: Callable[[list[Heading]], list[bool]]) -> None:
        self.players_mail = players_mail
        self.first = Turns()
        self.then = Turns()
        #: The UIDs that looked like players' mail.
        self.players: set[int] = set()
        #: Every UID found, ascending, and those done (or expunged).
        self.found: list[int] = []
        self.done: set[int] = set()
        self.expunged: set[int] = set()
        self._upto = 0  # found[:_upto] are all done
        #: The turn of each mail this pass reads.
        self.turn: dict[int, int] = {}
        #: Senders with mail waiting behind (or left to the next pass).
        self.behind: set[str] = set()
        #: Senders with mail left to the next pass.
        self.leaving: set[str] = set()
        #: How many mails of each sender this pass reads.
        self.count: Counter[str] = Counter()
        #: Mail found during the pass that it reads.
        self.late = 0
        #: Mail found and left to the next pass.
        self.left = 0

    @property
    def last(self) -> int:
        """The highest UID found."""
        return self.found[-1] if self.found else 0

    def add(self, mails: list[Waiting], this_pass: bool) -> None:
        """Mail found by a SEARCH, in UID order; ``this_pass``: the pass's
        own (at its start), else found while it read."""
        headings = [read_heading(w.head) for w in mails]
        for w, heading, players in zip(mails, headings, self.players_mail(headings),
                                       strict=True):
            self.found.append(w.uid)
            sender = heading.sender
            if not this_pass and not self._room(sender):
                self.leaving.add(sender)
                self.behind.add(sender)
                self.left += 1
                continue
            self.late += not this_pass
            turn = self.turn[w.uid] = self.count[sender] // TURN
            first = players and sender not in self.behind and self.count[sender] < PLAYERS_SHARE
            self.count[sender] += 1
            light = Waiting(w.uid, w.size, b"")
            if first:
                self.first.push(turn, light)
                self.players.add(w.uid)
            else:
                self.behind.add(sender)
                self.then.push(turn, light)

    def _room(self, sender: str) -> bool:
        """Whether the pass still reads a mail of ``sender`` found while it read."""
        return (sender not in self.leaving and self.count[sender] < LATE_PER_SENDER
                and self.late < LATE_PER_PASS)

    def take(self, count: int) -> list[Waiting]:
        """The next ``count`` mails to read, players' first, senders in turn."""
        out: list[Waiting] = []
        while len(out) < count and (self.first or self.then):
            out.append((self.first or self.then).pop())
        return out

    def put_back(self, mails: list[Waiting]) -> None:
        """Mails taken and not read (the pass looked for news first): each
        takes its turn again."""
        for w in mails:
            (self.first if w.uid in self.players else self.then).push(self.turn[w.uid], w)

    def position(self, uid: int) -> int | None:
        """The UID the cursor may move to once ``uid`` is done; None: not on."""
        i = self._upto
        while i < len(self.found) and (self.found[i] in self.done or self.found[i] == uid):
            i += 1
        return self.found[i - 1] if i > self._upto else None

    def settle(self, uid: int) -> None:
        """``uid`` is done (its transaction committed)."""
        self.done.add(uid)
        while self._upto < len(self.found) and self.found[self._upto] in self.done:
            self._upto += 1

    def gone(self, uids: list[int]) -> None:
        """Mail a FETCH did not bring (expunged meanwhile) is done: the
        cursor may move past it."""
        for uid in uids:
            self.expunged.add(uid)
            self.settle(uid)


def reread(referee: Referee, now: datetime | None = None,
           imap: ImapSource | None = None) -> list[tuple[int, str]]:
    """Read again each failed mail the operator asked for (``referee inbound
    --retry``), and each mail that waited for its game's package once the
    package is back, fetched from the mailbox by its source key; returns
    (record id, what came of it). A mail no longer in the mailbox (expunged,
    or the mailbox was reset or renamed since) is recorded failed again,
    saying so. Connects to the mailbox only when there is mail to read again."""
    referee.intake.wake()
    wanted = referee.intake.retries()
    if not wanted:
        return []
    cfg = referee.config
    done: list[tuple[int, str]] = []
    own = imap is None and cfg.mailbox.kind == "imap"
    src = ImapSource(cfg.mailbox, cfg.referee.max_message_size) if own else imap
    try:
        for iid, key in wanted:
            if not referee.intake.to_read_again(iid):
                continue  # back to waiting: its game's package raised again
            if cfg.mailbox.kind == "maildir":
                fetched = _from_maildir(cfg.resolve(cfg.mailbox.path), key)
            else:
                assert src is not None
                fetched = _from_imap(src, key)
            if isinstance(fetched, str):
                referee.intake.not_read_again(iid, fetched)
                done.append((iid, "failed"))
                log.warning("mail %s (%s) not read again: %s", iid, key, fetched)
                continue
            raw, size = fetched
            outcome = referee.intake.process(raw, key, now or now_utc(), size=size, again=iid)
            done.append((iid, outcome.status))
            log.info("mail %s (%s) read again: %s", iid, key, outcome.status,
                     extra={"source": key, "outcome": outcome.status, "game": outcome.tag})
    finally:
        if own and src is not None:
            src.close()
    return done


def _from_maildir(path: Path, key: str) -> tuple[bytes, int | None] | str:
    """A mail of the Maildir by its source key (``maildir:<name>``), read or
    not, or why there is none."""
    name = key.removeprefix("maildir:")
    if name == key:
        return "it did not come from this Maildir"
    for sub in ("cur", "new"):
        try:
            with os.scandir(path / sub) as entries:
                found = [e.path for e in entries if e.name.split(":", 1)[0] == name]
        except FileNotFoundError:
            continue
        for file in found:
            try:
                return Path(file).read_bytes(), None
            except FileNotFoundError:
                continue  # taken away meanwhile
    return "it is no longer in the Maildir"


def _from_imap(src: ImapSource, key: str) -> tuple[bytes, int | None] | str:
    """A mail of the IMAP folder by its source key
    (``imap:<user>/<folder>;UIDVALIDITY=<n>;UID=<n>``), or why there is none.
    A mail over the size cap brings only its header, as it did the first time."""
    mailbox, _, rest = key.partition(";UIDVALIDITY=")
    validity, _, uid_text = rest.partition(";UID=")
    if mailbox != src.mailbox or not validity.isdigit() or not uid_text.isdigit():
        return f"it did not come from {src.mailbox}"
    client = src.connect()
    uid = int(uid_text)
    if int(validity) != src.uidvalidity:
        return f"{src.mailbox} was reset since (a new UIDVALIDITY)"
    answer = client.fetch([uid], ["RFC822.SIZE"])
    if b"RFC822.SIZE" not in answer.get(uid, {}):
        return f"it is no longer in {src.mailbox}"
    size = int(answer[uid][b"RFC822.SIZE"])
    ((part, _),) = fetch_plan([(uid, size)], src.max_size)
    item, found = (("BODY.PEEK[]", b"BODY[]") if part == "body" else
                   (f"BODY.PEEK[HEADER]<0.{MAX_HEADER_BYTES}>", b"BODY[HEADER]<0>"))
    data = client.fetch([uid], [item]).get(uid, {})
    if found not in data:
        return f"it is no longer in {src.mailbox}"
    return data[found], size


def run_pass(referee: Referee, now: datetime | None = None,
             imap: ImapSource | None = None,
             stop: Callable[[], bool] | None = None, trust_clock: bool = False,
             adopt: bool = False) -> PassReport:
    """Mail to read again, intake, deadlines, outbox, pages: the whole of
    ``referee poll``. Game pages that cannot be written are the report's
    ``pages`` problem, not the pass's end: the mail has gone on.

    To a relay on another machine, with one worker, the mail of each message
    goes out while the next ones are read (``service/streaming``); the
    outbox's own send follows, for whatever is left. ``stop`` is asked
    between two mails and between two steps: once it says so, the pass ends
    there (``report.stopped``) and the rest waits for the next one.

    The deadlines fire only on a clock the mail does not contradict
    (``service/clock``), or that the operator confirms (``trust_clock``, or
    ``[referee] trust_clock``); an injected ``now`` is the operator's time,
    and is not judged. ``adopt``: a fresh database takes its mailbox over
    (:func:`adopt_mailbox`) before it reads."""
    report = PassReport()

    def stopping() -> bool:
        report.stopped = report.stopped or (stop is not None and stop())
        return report.stopped

    if now is None:
        referee.clock.first_mark(now_utc())
    if adopt:
        report.adopted = adopt_mailbox(referee, imap, now)
    stream = None
    if send_while_reading(referee):
        stream = referee.outbox_stream(now)
    try:
        report.reread = len(reread(referee, now, imap))
        # Standings worked out under settings the config has changed since
        # (``[club] season``, ``standings``) are worked out again first.
        referee.club.refresh_standings()

        def after_each() -> None:
            referee.lease.keep()
            if stream is not None:
                stream.feed()

        if not stopping():
            report.read, report.processed, report.failed = intake(
                referee, now, imap, after_each, stop=None if stop is None else stopping)
        if not stopping():
            if now is None:
                report.clock = judge_clock(referee, trust_clock)
            if report.clock is None or not report.clock.held:
                report.timeouts = referee.sweep.fire(now)
                # The club's open tables past ``[club] table_days`` close
                # by the same clock, those seated told; an operator's table
                # past its start deadline starts (issue 38).
                referee.club.expire(now)
            if stream is not None:
                stream.feed(force=True)
    finally:
        report.streamed = stream.close() if stream is not None else 0
    report.sent = report.streamed
    if stopping():
        return report
    report.sent += send_outbox(referee, now)
    if stopping():
        return report
    try:
        publish_pages(referee, now)
    except Problem as e:
        report.pages = e
    keep_faults(referee, now)
    return report


def judge_clock(referee: Referee, confirmed: bool = False) -> ClockVerdict:
    """Judge this machine's clock for a pass (``service/clock``), and log
    what was found: a warning, or, when the operator trusts the clock
    anyway, a line at info."""
    verdict = referee.clock.judge(now_utc(), confirmed, referee.config.referee.trust_clock)
    if verdict.warning:
        log.warning("%s", verdict.warning)
    elif verdict.note:
        log.info("%s; trusted, as the operator said", verdict.note)
    return verdict


def adopt_mailbox(referee: Referee, imap: ImapSource | None = None,
                  now: datetime | None = None) -> int | None:
    """A fresh database takes its mailbox over (``service/intake/ownership``):
    the mail in it now is left as it is, and what comes after is read.
    Returns how many mails were left, or None when the database is not
    fresh (it reads the mailbox already: nothing to adopt)."""
    if not referee.intake.ownership.fresh():
        return None
    cfg = referee.config
    when = now or now_utc()
    if cfg.mailbox.kind == "maildir":
        path = cfg.resolve(cfg.mailbox.path)
        left = MaildirSource(path).pass_over()
        referee.intake.ownership.adopt(f"maildir:{path}", when)
        return left
    src = imap or ImapSource(cfg.mailbox, cfg.referee.max_message_size)
    try:
        uids = src.connect().search(["ALL"])
        referee.intake.ownership.adopt(src.mailbox, when, (src.uidvalidity, max(uids, default=0)))
    finally:
        if imap is None:
            src.close()
    return len(uids)


def foreign_mail(referee: Referee) -> str | None:
    """The line a pass of a fresh database would refuse its mailbox with
    (``service/intake/ownership``), or None: what ``check`` says too."""
    if not referee.intake.ownership.fresh():
        return None
    cfg = referee.config
    if cfg.mailbox.kind == "maildir":
        path = cfg.resolve(cfg.mailbox.path)
        found = look(MaildirSource(path).headings()) if path.is_dir() else None
        return found.refusal(f"the Maildir {path}") if found else None
    src = ImapSource(cfg.mailbox, cfg.referee.max_message_size)
    try:
        found = look(read_heading(w.head) for mails in src.waiting(None) for w in mails)
    finally:
        src.close()
    return found.refusal(f"the mailbox {src.mailbox}") if found else None


def send_while_reading(referee: Referee) -> bool:
    """Whether a pass sends its mail while it reads: over SMTP, with one
    worker, to a relay on another machine. A relay far away answers each
    command in milliseconds, which the refereeing then fills (a relay 10 ms
    away: 200 moves in 5.6 s instead of 6.8 s); one on this machine answers
    at once and shares its CPUs, and sending alongside made a pass slower
    (300 moves over the loopback: 7.1 s instead of 5.3 s on 2 CPUs)."""
    smtp = referee.config.smtp
    return smtp.kind == "smtp" and not many_workers(referee) and not _on_this_machine(smtp.host)


def _on_this_machine(host: str) -> bool:
    return host.lower() in ("localhost", "::1", "ip6-localhost") or host.startswith("127.")


def publish_pages(referee: Referee, now: datetime | None = None) -> None:
    """Write the game pages that are behind, when ``[web] path`` is set, as
    of ``now`` (the pass's time)."""
    cfg = referee.config
    if cfg.web.path is not None:
        from referee.web import publish

        folder = cfg.resolve(cfg.web.path)
        with writing(folder, "[web] path", PAGES_FIX):
            publish(referee, folder, now)


def keep_faults(referee: Referee, now: datetime | None = None) -> None:
    """Keep the line of each game package that raised in this process, for
    ``check`` to name; forget it for each that serves again."""
    referee.guests.keep_faults(GAMES.faults(), GAMES.served(), now or now_utc())


def send_outbox(referee: Referee, now: datetime | None = None) -> int:
    return referee.send_outbox(now)


@contextmanager
def exclusive(referee: Referee) -> Iterator[bool]:
    """Hold the referee's lock file and the database's pass lease while the
    block runs; yields False, and holds nothing, when another pass or the
    daemon has either. Two passes that overlapped (a slow cron run, or cron
    beside the daemon) would each send the same outbox rows. The lease is the
    guard that stays when a tmp cleaner deletes the lock file."""
    config = referee.config
    if many_workers(referee):
        # Several workers share the work, claiming mail, games and outbox
        # rows one by one: neither the lock file nor the pass lease.
        referee.lease.shared = True
        yield True
        return
    path = config.resolve(config.referee.lock_file)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            if not referee.lease.take():
                yield False
                return
            try:
                yield True
            finally:
                referee.lease.release()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


__all__ = ["Backlog", "PassReport", "Turns", "adopt_mailbox", "exclusive", "foreign_mail", "intake",
           "judge_clock", "many_workers", "publish_pages", "reread", "run_pass", "send_outbox",
           "send_while_reading"]
