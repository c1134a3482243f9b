"""Outages of the real mail servers under a running referee (issue 8, "outages heal fast").

- Dovecot restarted (or crashed and started again) under ``referee run``: the daemon
  notices the closed connection at once, reconnects from 1 s, and a move mailed after
  the restart is answered, long before the IDLE re-issue (10 minutes) or a poll.
- Postfix down and back: replies queued meanwhile are sent when it returns, each once.

No test here measures how fast: each waits for what must happen, with a hang guard
(``GIVE_UP``) far shorter than the waits a fault would cause.
- Big mails: bodies are fetched in batches bounded by bytes, and every mail is processed.

The servers are the session's ``mailstack``; each outage is undone before the test
ends, also when it fails (``MailStack.server_down``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee.mail.imap import FETCH_BYTES, ImapSource
from referee.passes import run_pass
from referee.scheduler import Daemon
from referee.store import models as m
from tests.mailstack import GIVE_UP, MailStack
from tests.test_e2e import REF, T0, Post, body, daemon, opened_game, person
from tests.test_spades_mail import kinds

MB = 1_000_000


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- Dovecot restarted under the daemon ---------------------------------------------

@pytest.mark.parametrize("crash", [False, True], ids=["restart", "crash"])
def test_after_dovecot_restarts_under_the_daemon_a_move_is_answered_without_a_poll(
        mailstack: MailStack, tmp_path: Path, crash: bool) -> None:
    # restart: SIGTERM to Dovecot's processes, whose imap processes say BYE;
    # crash: SIGKILL, the daemon's connection just reaches EOF in the middle of IDLE.
    # Polls an hour apart and IDLE re-issued every 25 minutes: the move is
    # answered within the hang guard only if the lost connection is noticed.
    post = Post(mailstack, tmp_path, mailbox={"poll_interval": "1h", "idle_timeout": "25m"})
    try:
        tag = opened_game(post)
        log = tmp_path / "run.log"
        with daemon(post, log) as proc:
            post.write("bob", "help", subject=f"[{tag}]")
            post.new_mail("bob", 1)  # answered: the daemon is connected
            time.sleep(1)  # and back in IDLE
            cpu, started = cpu_seconds(proc.pid), time.monotonic()
            post.stack.restart_server("dovecot", crash=crash)
            bid = post.write("alice", "bid 4", subject=f"[{tag}]")
            (reply,) = post.new_mail("alice", 1)
            assert reply["In-Reply-To"] == bid and "DONE (bid 4)" in body(reply)
            # No spinning on a dead socket meanwhile (it spun at 90% of a CPU), nor
            # after. A share of the time passed, which a busy machine only lowers.
            time.sleep(2)
            used, passed = cpu_seconds(proc.pid) - cpu, time.monotonic() - started
            assert used < 0.5 * passed, f"the daemon used {used:.1f} s of CPU in {passed:.1f} s"
        text = log.read_text()
        assert text.count("mailbox connection lost") == 1, text
        assert "WARNING" in text.split("mailbox connection lost")[0].splitlines()[-1]
        assert "mailbox connection restored" in text, text
        assert [a[1:3] for a in post.actions(tag)] == [("bid", [4])]
    finally:
        post.close()


def test_while_dovecot_is_down_the_watcher_retries_from_one_second_and_warns_once(
        post: Post, caplog: pytest.LogCaptureFixture) -> None:
    tag = opened_game(post)
    caplog.set_level(logging.INFO, logger="referee.scheduler")
    daemon = Daemon(post.referee)  # its mail watcher alone, in a thread
    watcher = threading.Thread(target=daemon.watch_mail, name="mail", daemon=True)
    watcher.start()
    try:
        post.write("bob", "help", subject=f"[{tag}]")
        post.new_mail("bob", 1)
        with post.stack.server_down("dovecot"):
            # Sent meanwhile: Postfix keeps it until Dovecot's LMTP is back.
            bid = post.write("alice", "bid 4", subject=f"[{tag}]")
            time.sleep(4)
        (reply,) = post.new_mail("alice", 1)
    finally:
        daemon.stop.set()
        watcher.join(timeout=GIVE_UP)
    assert not watcher.is_alive()
    assert reply["In-Reply-To"] == bid and "DONE (bid 4)" in body(reply)
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "referee.scheduler"]
    lost = [(level, text) for level, text in said if "connection lost" in text]
    assert lost == [(logging.WARNING, lost[0][1])] and "reconnecting in 1 s" in lost[0][1], said
    retries = [text for level, text in said if "still unreachable" in text]
    assert retries and all(level == logging.INFO for level, text in said
                           if "still unreachable" in text)
    # Refused at 1 s, then 3 s after the loss, ...: the waits double from 1 s to
    # at most 30 s, however long Dovecot takes to come back. So the mail is
    # read within a wait of its return, not after the IDLE re-issue.
    waits = [t.rsplit("next try in ", 1)[1] for t in retries]
    assert waits == [f"{min(2 ** n, 30)} s" for n in range(1, len(waits) + 1)], waits
    assert sum("connection restored" in text for _, text in said) == 1, said


# -- Postfix down and back ---------------------------------------------------------

def mail(user: str, text: str, subject: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = person(user)
    msg["To"] = REF
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(idstring=user, domain="mua.example.test")
    msg.set_content(text)
    return msg


def outbox(post: Post) -> list[m.Outbox]:
    with post.referee.sessions() as db:
        rows = list(db.scalars(select(m.Outbox).order_by(m.Outbox.id)))
        db.expunge_all()
        return rows


def wait_until(what: str, check: Any, timeout: float = GIVE_UP) -> None:
    """Wait for ``check()`` to hold; ``timeout`` is a hang guard, not a measure."""
    give_up = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < give_up, f"no {what} after {timeout} s"
        time.sleep(0.1)


def test_replies_queued_while_postfix_is_down_are_sent_once_when_it_returns(
        post: Post, tmp_path: Path) -> None:
    tag = opened_game(post)
    before = len(outbox(post))
    log = tmp_path / "run.log"
    with daemon(post, log):
        with post.stack.server_down("postfix"):
            # Players' mail still comes in (another MX): straight to Dovecot's LMTP.
            moves: dict[str, str] = {}  # Message-ID -> player
            for user, text, subject in (("alice", "bid 4", f"[{tag}]"),
                                        ("bob", "bid 2", f"[{tag}] mine"),
                                        ("bob", "help", f"[{tag}] what now")):
                msg = mail(user, text, subject)
                assert post.stack.deliver(msg, user, REF) == {}
                moves[str(msg["Message-ID"])] = user
            # The daemon reads them, and its sends fail for as long as Postfix is down.
            wait_until("failed send", lambda: any(
                r.attempts >= 1 and r.sent_at is None for r in outbox(post)[before:]))
            time.sleep(1)
            rows = outbox(post)[before:]
            assert rows and all(r.sent_at is None and r.failed_at is None for r in rows)
            assert all("connection" in r.last_error for r in rows if r.attempts)
        # Sent on the outbox's next tries (its backoff starts at 5 s), long
        # before the hang guard.
        wait_until("drained outbox", lambda: all(
            r.sent_at is not None for r in outbox(post)[before:]))
        rows = outbox(post)[before:]
        expected = Counter(a.split("@")[0] for r in rows for a in r.recipients)
        for user, count in expected.items():
            post.new_mail(user, count)
        time.sleep(3)  # a second copy would come within this
    # The relay's outage is one line when it went and one when it came back,
    # however many mails waited and however often they were tried.
    said = log.read_text()
    assert said.count("[smtp] port: nothing answers at") == 1, said
    assert said.count("the SMTP relay answers again after") == 1, said
    assert "will be retried" not in said
    # Each reply exactly once: as many messages as rows to the player, all distinct.
    for user in ("alice", "bob"):
        got = post.stack.fetch_all(user)[post.read[user] - expected[user]:]
        assert post.stack.count(user) == post.read[user], f"{user} got more mail"
        ids = Counter(str(x["Message-ID"]) for x in got)
        assert len(got) == expected[user] and max(ids.values()) == 1, (user, ids)
        for mid, sender in moves.items():
            if sender == user:
                assert sum(x["In-Reply-To"] == mid for x in got) == 1, (user, mid)
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [4]), ("bid", [2])]


# -- big mails: bodies in batches bounded by bytes ----------------------------------

def big_mail(user: str, text: str, subject: str, size: int) -> EmailMessage:
    msg = mail(user, text, subject)
    msg.add_attachment(b"\x00" * (size * 3 // 4), maintype="application",
                       subtype="octet-stream", filename="scan.bin")
    return msg


def test_big_mails_are_fetched_within_the_byte_bound_and_all_processed(post: Post) -> None:
    tag = post.referee.operator.create_game("goofspiel", [person("alice"), person("bob")], now=T0,
                                   seed="big")
    post.stack.clear("referee")
    sent = [  # (Message-ID, about how big)
        (post.write("alice", "help", subject=f"[{tag}] small 1"), 0),
    ]
    for i, (user, text) in enumerate((("alice", "help"), ("bob", "bid 3"), ("bob", "help"))):
        msg = big_mail(user, text, f"[{tag}] big {i}", 4 * MB)
        post.stack.send(msg, user, REF)
        sent.append((str(msg["Message-ID"]), 4 * MB))
    sent.append((post.write("alice", "bid 5", subject=f"[{tag}] small 2"), 0))
    alone = big_mail("alice", "help", f"[{tag}] bigger than a batch", 9 * MB)
    post.stack.send(alone, "alice", REF)
    sent.append((str(alone["Message-ID"]), 9 * MB))
    over = big_mail("bob", "help", f"[{tag}] over the cap", 11 * MB)
    post.stack.send(over, "bob", REF)
    sent.append((str(over["Message-ID"]), 11 * MB))
    sent.append((post.write("bob", "help", subject=f"[{tag}] small 3"), 0))
    post.stack.wait_for("referee", len(sent))

    fetches: list[tuple[list[int], str]] = []
    sizes: dict[int, int] = {}

    class Source(ImapSource):
        def connect(self) -> Any:
            fresh = self.client is None
            client = super().connect()
            if fresh:
                inner = client.fetch

                def fetch(messages: Any, data: Any, modifiers: Any = None) -> Any:
                    answer = inner(messages, data, modifiers)
                    fetches.append((list(messages), " ".join(map(str, data))))
                    for uid, items in answer.items():
                        if b"RFC822.SIZE" in items:
                            sizes[uid] = int(items[b"RFC822.SIZE"])
                    return answer

                client.fetch = fetch
            return client

    source = Source(post.config.mailbox, post.config.referee.max_message_size)
    try:
        report = run_pass(post.referee, T0 + timedelta(hours=1), imap=source)
    finally:
        source.close()
    assert report.read == len(sent) and report.failed == 0, report

    bodies = [uids for uids, data in fetches if data == "BODY.PEEK[]"]
    assert sorted(u for uids in bodies for u in uids) == sorted(
        u for u, s in sizes.items() if s <= post.config.referee.max_message_size)
    for uids in bodies:
        assert len(uids) == 1 or sum(sizes[u] for u in uids) <= FETCH_BYTES, (
            [sizes[u] for u in uids])
    # Two 4 MB mails share a FETCH, the third waits for the next; 9 MB comes alone,
    # and of the 11 MB mail (over the 10 MB cap) only the header is fetched.
    big = [u for u, s in sizes.items() if 3 * MB < s < 6 * MB]
    assert len(big) == 3 and not any(set(big) <= set(uids) for uids in bodies)
    [nine] = [u for u, s in sizes.items() if 6 * MB < s < 10 * MB]
    assert [nine] in bodies
    [header] = [(uids, data) for uids, data in fetches if "[HEADER]" in data]
    assert sizes[header[0][0]] > post.config.referee.max_message_size

    with post.referee.sessions() as db:
        rows = {str(r.message_id): r for r in db.scalars(select(m.Inbound))}
    assert sorted(rows) == sorted(mid.strip("<>") for mid, _ in sent)
    statuses = {mid: rows[mid.strip("<>")].status for mid, _ in sent}
    assert statuses.pop(str(over["Message-ID"])) == "refused"  # too big: told so
    assert set(statuses.values()) == {"processed"}, statuses
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [3]), ("bid", [5])]
    # Alice's "bid 5" ends the round: its answer and the round's report are
    # one mail; every other mail is answered alone.
    expected = {"transcript": len(sent) - 2, "transcript round_report": 1, "too_large": 1}

    def replies() -> Counter[str]:
        return Counter(" ".join(kinds(x)) for u in ("alice", "bob")
                       for x in post.stack.fetch_all(u)
                       if x["In-Reply-To"] in {mid for mid, _ in sent})

    # Sent in the pass; Postfix delivers them a moment later.
    wait_until("every reply delivered", lambda: replies() == expected)
    assert replies() == expected


# -- the lock file deleted under the daemon -----------------------------------------

def test_with_the_lock_file_deleted_under_the_daemon_cron_passes_do_nothing(
        post: Post, tmp_path: Path) -> None:
    """A tmp cleaner removed the daemon's lock file, and cron ran ``referee
    poll`` beside it: 233 of 300 replies went out twice. The database's pass
    lease now refuses the cron pass, so every reply goes out once."""
    import subprocess

    from tests.test_e2e import REPO_ROOT, referee_command

    tag = opened_game(post)
    with daemon(post, tmp_path / "run.log") as proc:
        lock = post.config.resolve(post.config.referee.lock_file)
        # The daemon takes the lock file, then the lease.
        wait_until("lock file", lock.exists)
        wait_until("lease held by the daemon",
                   lambda: f":{proc.pid}:" in (post.referee.lease.holder_now() or ""))
        lock.unlink()
        sent = [post.write(user, f"help\nmail {n}", subject=f"[{tag}] {n}")
                for n in range(6) for user in ("alice", "bob")]
        for _ in range(3):
            cron = subprocess.run(referee_command(post, "poll"), cwd=REPO_ROOT,
                                  capture_output=True, text=True, timeout=60)
            assert cron.returncode == 75, cron.stderr
            assert "pass lease" in cron.stderr
        replies = post.new_mail("alice", 6) + post.new_mail("bob", 6)
        time.sleep(2)  # anything sent twice would have arrived by now
    post.assert_no_more_mail("alice", "bob")
    assert sorted(str(x["In-Reply-To"]) for x in replies) == sorted(sent)


# -- a UIDVALIDITY change -------------------------------------------------------------

def test_after_a_uidvalidity_change_no_mail_is_applied_or_answered_twice(
        post: Post) -> None:
    """A restored or rebuilt mailbox gets a new UIDVALIDITY, and the referee
    reads it all again: mail with a Message-ID is recognised by it, mail
    without one by its digest, so none is applied or answered twice (a
    repeated Spades play would even have counted as a misplay)."""
    tag = opened_game(post)
    post.write("alice", "bid 4", subject=f"[{tag}]")
    undated = (f"From: {person('bob')}\r\nTo: {REF}\r\nSubject: [{tag}] no id\r\n\r\n"
               "bid 2\r\n").encode()
    post.stack.deliver(undated, "bob", REF)  # straight into Dovecot: no Message-ID added
    post.in_referee_inbox += 1
    post.poll(T0)
    assert len(post.actions(tag)) == 2
    # Postfix or Dovecot may hand either mail over first: whoever bid last
    # ended the round and got the answer and the report in one mail; the
    # other, the answer, then the report.
    last = post.actions(tag)[-1][0]
    post.new_mail("alice", 1 if last == 1 else 2)
    post.new_mail("bob", 1 if last == 2 else 2)
    proc = post.stack._doveadm("mailbox", "update", "-u", "referee", "--uid-validity",
                               "4242", "INBOX")
    assert proc.returncode == 0, proc.stderr
    report = post.poll(T0 + timedelta(minutes=5))
    assert report.read == 2 and report.processed == 0  # read again, known as seen
    assert len(post.actions(tag)) == 2
    with post.referee.sessions() as db:
        notes = [r.note for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]
    assert [n.startswith("duplicate of inbound") for n in notes] == [False, False, True, True]
    time.sleep(1)
    post.assert_no_more_mail("alice", "bob")
