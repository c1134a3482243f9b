"""Benchmark: a player's bid under ``referee run`` while a flood comes in.

Starts the real Postfix + Dovecot of the test suite (``tests/mailstack.py``,
as root), measures the raw delivery rate of the servers alone as a
yardstick, then starts ``referee run`` (the real daemon, a process of its
own, on SQLite, with the default [limits]) over a goofspiel game of Alice
and Bob. Once the daemon has answered Alice (so it waits in IDLE), it
floods the referee's mailbox with mails from a stranger (Carol, in no
game), then sends Bob's bid, and prints:

* the flood's submission and delivery (msg/s, against the raw rate);
* how many seconds after its delivery Bob's bid was applied (target:
  within 5 s), and after its submission; when his answer reached him;
* how long the daemon took to read the whole flood, and what it answered;
* how long it took to stop on SIGTERM; with ``--stop-during``, Bob
  writes nothing and the SIGTERM comes once the daemon has read 100 mails
  of the flood, in the middle of it.
* with ``--during``, Bob writes nothing either: once the daemon has read
  100 mails of the flood, Dave (in no game, a newcomer) writes, and it
  prints how many seconds after its delivery his mail was read (target:
  within 10 s) and how many mails of the flood were read after it.
* with ``--from-player``, the flood comes from Alice, a player of the
  game, asking its status: Bob's bid, or Dave's mail, waits for no more
  of her flood than a stranger's.
* the daemon's peak RSS (GNU ``time``, read when it exits: outside anything
  timed).

Bob's bid is "delivered" when the referee's INBOX holds every mail sent so
far (STATUS from an unselected connection, every 20 ms); "applied" when its
action is in the database (a read-only SQLite query, every 20 ms).

Usage (as root, from the checkout)::

    .venv/bin/python bench/flood.py [--flood 1000] [--raw 600] [--stop-during | --during]
                                    [--from-player]

Exits 1 when the bid (or Dave's mail) missed the target.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    machine,
    mail,
    raw_rates,
    say,
    submit,
    wait_inbox,
    write_config,
)
from referee.config import load_config  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.db import upgrade  # noqa: E402
from tests.mailstack import MailStack, _short_tmpdir  # noqa: E402

#: Bob's bid must be applied this soon after its delivery.
TARGET_SECONDS = 5.0
#: With ``--during``: Dave's mail must be read this soon after its delivery.
DURING_TARGET_SECONDS = 10.0
#: With ``--stop-during``: SIGTERM once the daemon has read this many mails
#: of the flood; with ``--during``, Dave writes then.
STOP_AFTER = 100


def query(db: Path, sql: str, *args: object) -> int:
    """One count from the daemon's SQLite file, read-only (it never waits for a writer)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def wait_until(what: str, check: object, timeout: float, log: Path) -> float:
    """Poll ``check()`` every 20 ms; the monotonic time it first held."""
    assert callable(check)
    give_up = time.monotonic() + timeout
    while not check():
        if time.monotonic() > give_up:
            raise TimeoutError(f"no {what} after {timeout} s; end of the daemon's log:\n"
                               f"{log.read_text()[-3000:]}")
        time.sleep(0.02)
    return time.monotonic()


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (the referee, under GNU time)."""
    with contextlib.suppress(OSError):
        return [int(x) for x in
                Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def flood(stack: MailStack, folder: Path, count: int, raw: float,
          stop_during: bool = False, during: bool = False, from_player: bool = False) -> bool:
    """The run itself; True when the bid (or Dave's mail) was read within the target."""
    db = folder / "referee.db"
    # The default [limits] and IDLE re-issue (10 min).
    config = write_config(folder, stack, f"sqlite:///{db}", limits="")
    cfg = load_config(config)
    upgrade(cfg.database_url)
    alice, bob, stranger = (stack.address(u) for u in ("alice", "bob", "carol"))
    newcomer = stack.address("dave")
    flooder = alice if from_player else stranger
    ref = Referee(cfg)
    try:
        tag = ref.operator.create_game("goofspiel", [alice, bob], seed="flood")
        ref.send_outbox()
    finally:
        ref.close()
    stack.wait_for("alice", 1)
    stack.wait_for("bob", 1)
    stack.clear_all()
    log = folder / "run.log"
    rss = folder / "run.rss"
    cmd = [sys.executable, "-m", "referee.cli", "--config", str(config), "-v", "run"]
    if Path("/usr/bin/time").exists():
        cmd = ["/usr/bin/time", "-f", "%M", "-o", str(rss), *cmd]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        # The daemon's first pass reads Alice's "help" and answers it; then it
        # waits in IDLE.
        submit(stack, [mail(alice, f"[{tag}]", "help\n")])
        wait_until("answer to Alice", lambda: stack.count("alice") >= 1, 60, log)
        time.sleep(0.5)
        inbox = 1
        before = query(db, "select count(*) from inbound")
        flooders = query(db, "select count(*) from inbound where sender = ?", flooder)
        msgs = ([mail(alice, f"[{tag}] status {i}", "status\n") for i in range(count)]
                if from_player else
                [mail(stranger, f"hello {i}", f"help\nwho are you? ({i})\n")
                 for i in range(count)])
        start = time.monotonic()
        submit(stack, msgs)
        submitted = time.monotonic()
        if stop_during or during:
            wait_until("the flood's first mails read",
                       lambda: query(db, "select count(*) from inbound") >= before + STOP_AFTER,
                       600, log)
        if during:
            submit(stack, [mail(newcomer, "hello", "Can I play?\n")])
            inbox += count + 1
            delivered = wait_inbox(stack, "referee", inbox, timeout=600)
            late = wait_until("Dave's mail read",
                              lambda: query(db, "select count(*) from inbound where sender = ?",
                                            newcomer) >= 1, 600, log)
            flood_read = query(db, "select count(*) from inbound where sender = ?",
                               flooder) - flooders
            drained = wait_until(
                "flood read",
                lambda: query(db, "select count(*) from inbound") >= before + count + 1, 600,
                log)
        elif not stop_during:
            bid = mail(bob, f"[{tag}]", "bid 3\n")
            submit(stack, [bid])
            sent_at = time.monotonic()
            inbox += count + 1
            delivered = wait_inbox(stack, "referee", inbox, timeout=600)
            applied = wait_until("bid applied",
                                 lambda: query(db, "select count(*) from actions") >= 1, 600,
                                 log)
            answer = wait_until("answer to Bob", lambda: stack.count("bob") >= 1, 600, log)
            drained = wait_until(
                "flood read",
                lambda: query(db, "select count(*) from inbound") >= before + count + 1, 600,
                log)
            answered = query(db, "select count(*) from outbox where recipients like ?",
                             f"%{flooder}%")
    finally:
        # To the referee itself: GNU time, its parent, would die of it and
        # never write the peak RSS.
        told = time.monotonic()
        for pid in children(proc.pid) or [proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            say("the daemon did not stop within 60 s of SIGTERM")
            proc.kill()
            proc.wait()
        stopped = time.monotonic() - told
    if during:
        took = late - delivered
        say(f"flood: {count} mails from {flooder}; Dave's mail, sent once the daemon had read "
            f"{STOP_AFTER} of them, read {took:.2f} s after its delivery with "
            f"{count - flood_read} of the flood still unread; target "
            f"{DURING_TARGET_SECONDS:.0f} s: "
            + ("met" if took <= DURING_TARGET_SECONDS else "MISSED"))
        say(f"the daemon read the whole flood {drained - start:.2f} s after it began; "
            f"it stopped {stopped:.2f} s after SIGTERM")
        report_rss(rss, proc.returncode, log)
        return took <= DURING_TARGET_SECONDS
    if stop_during:
        left = count + before - query(db, "select count(*) from inbound")
        say(f"SIGTERM once the daemon had read {STOP_AFTER} mails of the flood: it stopped "
            f"in {stopped:.2f} s, {left} mails not read yet")
        report_rss(rss, proc.returncode, log)
        return True
    took = applied - delivered
    rate = (count + 1) / (delivered - start)
    say(f"flood: {count} mails from {flooder} submitted in {submitted - start:.2f} s "
        f"(one SMTP connection), delivered with Bob's bid at {rate:.1f} msg/s "
        f"= {rate / raw:.2f} of raw")
    say(f"Bob's bid applied {took:.2f} s after its delivery "
        f"({applied - sent_at:.2f} s after its submission); target {TARGET_SECONDS:.0f} s: "
        + ("met" if took <= TARGET_SECONDS else "MISSED"))
    say(f"Bob's answer reached his INBOX {answer - delivered:.2f} s after his bid's delivery")
    say(f"the daemon read the whole flood {drained - start:.2f} s after it began "
        f"({(count + 1) / (drained - start):.1f} msg/s; "
        f"{drained - delivered:.2f} s after the last delivery); "
        f"{answered} answer(s) queued to the flood's sender (default [limits]); "
        f"it stopped {stopped:.2f} s after SIGTERM")
    report_rss(rss, proc.returncode, log)
    return took <= TARGET_SECONDS


def report_rss(rss: Path, code: int | None, log: Path) -> None:
    """The daemon's peak RSS, and the end of its log if it failed."""
    if rss.exists() and rss.read_text().split():
        say(f"the daemon's peak RSS: {int(rss.read_text().split()[-1]) / 1024:.0f} MB")
    if code != 0:
        say(f"the daemon exited {code}; end of its log:\n{log.read_text()[-3000:]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flood", type=int, default=1000, help="mails of the flood (1000)")
    p.add_argument("--raw", type=int, default=600, help="messages of the raw run (600)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--stop-during", action="store_true",
                      help=f"SIGTERM once {STOP_AFTER} mails of the flood are read; time the stop")
    when.add_argument("--during", action="store_true",
                      help=f"a newcomer writes once {STOP_AFTER} mails of the flood are read; "
                           "time until it is read")
    p.add_argument("--from-player", action="store_true",
                   help="the flood comes from Alice, a player, not from a stranger")
    args = p.parse_args()
    say(f"machine: {machine()}")
    path = _short_tmpdir()
    stack = MailStack.start(path)
    folder = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    try:
        say(f"mail stack: Postfix + Dovecot on 127.0.0.1 in {path}")
        delivery, _, _ = raw_rates(stack, args.raw)
        say(f"raw: Postfix -> Dovecot delivery {delivery:.1f} msg/s "
            f"({args.raw} messages, one SMTP connection)")
        ok = flood(stack, folder, args.flood, delivery, args.stop_during, args.during,
                   args.from_player)
    finally:
        stack.stop()
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
