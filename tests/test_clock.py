"""A clock far from the mail's own time fires no deadline without a word
(issue 33): a clock ten days ahead of the mail is one warning line per
pass and no move is made for anyone until the operator confirms it
(``poll --trust-clock``, ``[referee] trust_clock``); one behind it is a
warning, and the deadlines go on; ``--now`` is the operator's time and is
not judged.

A machine's clock cannot be set from a test, so the world is put ten days
in the past instead: the game is made at ``--now`` ten days ago, and the
player's mail is filed into the referee's IMAP folder with that day as its
INTERNALDATE (or, in a Maildir, its file's time), as the server would have
received it then. The referee, on this machine's right clock, is then
ten days ahead of everything it knows, as a clock set ten days fast is.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.mailstack import MailStack
from tests.test_cli_faults import MAILDIRS, REFEREE
from tests.test_e2e import REF, Post, body

WHEN = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"
AHEAD = (rf"referee: the clock says {WHEN}, 10 days after the newest mail arrived \({WHEN} by "
         rf"the mail server's clock\) and the last time it was trusted \({WHEN}\); no deadline "
         r"or reminder fires until it is set right, or, if it is right \(the referee was "
         r"stopped that long while no mail came\), confirmed with: referee poll --trust-clock "
         r"\(or run --trust-clock\)\n")
BEHIND = (rf"referee: the clock says {WHEN}, 10 days before the newest mail arrived \({WHEN} "
          r"by the mail server's clock\): deadlines fire that late until it is set right \(if "
          r"the mail server's clock is the wrong one, set \[referee\] trust_clock = true\)\n")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def iso(when: datetime) -> str:
    return when.isoformat()


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def referee(post: Post, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REFEREE), "-c", str(post.config_path), *args],
                          cwd=post.config_path.parent, capture_output=True, text=True,
                          timeout=120, check=False)


def new_game(post: Post, at: datetime) -> str:
    """A goofspiel game of Alice and Bob made at ``at``; both read the opening."""
    made = referee(post, "game", "new", "--at-once", "goofspiel", "--player", "alice@example.test",
                   "--player", "bob@example.test", "--now", iso(at))
    assert made.returncode == 0, made.stderr
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    return made.stdout.strip()


def file_mail(post: Post, user: str, subject: str, text: str, arrived: datetime) -> None:
    """A mail from ``user`` in the referee's INBOX as the IMAP server
    received it at ``arrived`` (its INTERNALDATE)."""
    msg = EmailMessage()
    msg["From"] = f"{user.capitalize()} <{user}@example.test>"
    msg["To"] = REF
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{time.time_ns()}.{user}@mua.example.test>"
    msg.set_content(text)
    with post.stack.imap("referee") as client:
        client.append("INBOX", msg.as_bytes(), msg_time=arrived.replace(tzinfo=UTC))


def round_of(post: Post, tag: str) -> int:
    """The game's round as ``status`` shows it: 1 until both have bid."""
    status = referee(post, "status", tag)
    assert status.returncode == 0, status.stderr
    found = re.search(rf"^{tag}  \(goofspiel, active\)  round (\d+)$", status.stdout, re.M)
    assert found, status.stdout
    return int(found.group(1))


def test_a_clock_ten_days_ahead_of_the_mail_moves_for_no_one_until_confirmed(
        post: Post) -> None:
    past = now() - timedelta(days=10)
    tag = new_game(post, past)  # Bob's deadline: three days after, seven days ago
    file_mail(post, "alice", f"[{tag}]", "bid 3", past + timedelta(minutes=1))

    first = referee(post, "poll")
    assert first.returncode == 0
    assert re.fullmatch(AHEAD, first.stderr), first.stderr
    # Alice's mail is read and answered; Bob's seat is not played.
    assert "DONE (bid 3)" in body(post.new_mail("alice", 1)[0])
    assert round_of(post, tag) == 1
    post.assert_no_more_mail("bob")
    # Said at every pass, and kept for status and health.
    again = referee(post, "poll")
    assert (again.returncode, re.fullmatch(AHEAD, again.stderr) is not None) == (0, True)
    assert round_of(post, tag) == 1
    health = referee(post, "health")
    assert health.returncode == 0
    assert re.fullmatch(r"last pass: .*\nclock: \S+Z: " + AHEAD.removeprefix("referee: "),
                        health.stdout), health.stdout
    assert "\nclock: " in referee(post, "status").stdout

    confirmed = referee(post, "poll", "--trust-clock")
    assert (confirmed.returncode, confirmed.stderr) == (0, "")
    assert round_of(post, tag) == 2
    assert "(no bid arrived: the referee" in body(post.new_mail("bob", 1)[0])
    # Confirmed, the clock stays trusted while passes go on; the warning is gone.
    later = referee(post, "poll")
    assert (later.returncode, later.stderr) == (0, "")
    assert "clock:" not in referee(post, "health").stdout


def test_a_pass_at_an_injected_time_is_the_operators_and_fires(post: Post) -> None:
    """``poll --now`` is how the tests and an audit move time: it fires
    deadlines as before, with no word of the clock."""
    past = now() - timedelta(days=10)
    tag = new_game(post, past)
    file_mail(post, "alice", f"[{tag}]", "bid 3", past + timedelta(minutes=1))
    run = referee(post, "poll", "--now", iso(now()))
    assert (run.returncode, run.stderr) == (0, "")
    assert round_of(post, tag) == 2


def test_trust_clock_in_the_config_fires_by_the_clock_and_only_logs(post: Post) -> None:
    text = post.config_path.read_text(encoding="utf-8")
    post.config_path.write_text(text.replace("[mailbox]", "trust_clock = true\n\n[mailbox]"),
                                encoding="utf-8")
    past = now() - timedelta(days=10)
    tag = new_game(post, past)
    file_mail(post, "alice", f"[{tag}]", "bid 3", past + timedelta(minutes=1))
    run = referee(post, "--log-level", "info", "poll")
    assert run.returncode == 0
    assert "WARNING" not in run.stderr
    assert re.search(r"INFO referee.passes: the clock says .*; trusted, as the operator said\n",
                     run.stderr), run.stderr
    assert round_of(post, tag) == 2


def test_with_no_mail_ever_received_there_is_nothing_to_compare(post: Post) -> None:
    tag = new_game(post, now() - timedelta(days=10))
    run = referee(post, "poll")
    assert (run.returncode, run.stderr) == (0, "")
    assert round_of(post, tag) == 2


def test_a_quiet_mailbox_is_no_fault_while_passes_go_on(post: Post) -> None:
    """Mail a day old, and a pass a minute ago that trusted the clock: the
    clock moved on as passes ran, and the deadlines fire."""
    tag = new_game(post, now() - timedelta(days=4))
    file_mail(post, "alice", f"[{tag}]", "bid 3", now() - timedelta(days=1))
    first = referee(post, "poll", "--trust-clock")  # the day-old mail, confirmed once
    assert (first.returncode, first.stderr) == (0, "")
    file_mail(post, "carol", "hello", "who runs this?", now() - timedelta(days=1))
    second = referee(post, "poll")
    assert (second.returncode, second.stderr) == (0, "")


# -- a Maildir: the files' times ------------------------------------------------------

def maildir_club(folder: Path) -> None:
    (folder / "referee.toml").write_text(MAILDIRS, encoding="utf-8")
    for sub in ("tmp", "new", "cur"):
        (folder / "in" / sub).mkdir(parents=True)
    assert cli(folder, "init").returncode == 0


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REFEREE), "-c", "referee.toml", *args], cwd=folder,
                          capture_output=True, text=True, timeout=120, check=False)


def deliver(folder: Path, name: str, text: str, arrived: datetime) -> None:
    """A mail in the Maildir as the delivery agent wrote it at ``arrived``."""
    path = folder / "in" / "new" / name
    path.write_text(text, encoding="utf-8")
    stamp = arrived.replace(tzinfo=UTC).timestamp()
    os.utime(path, (stamp, stamp))


def test_a_maildir_clock_ahead_of_the_files_times_holds_the_deadlines(tmp_path: Path) -> None:
    maildir_club(tmp_path)
    past = now() - timedelta(days=10)
    made = cli(tmp_path, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
               "--player", "bob@club.test", "--now", iso(past))
    assert made.returncode == 0, made.stderr
    deliver(tmp_path, "1.mail", "From: alice@club.test\nTo: referee@club.test\n"
            "Subject: [goofspiel-1]\nMessage-ID: <1@club.test>\n\nbid 3\n",
            past + timedelta(minutes=1))
    held = cli(tmp_path, "poll")
    assert held.returncode == 0
    assert re.fullmatch(AHEAD, held.stderr), held.stderr
    assert "goofspiel-1  (goofspiel, active)  round 1\n" in cli(tmp_path, "status").stdout
    assert cli(tmp_path, "poll", "--trust-clock").returncode == 0
    assert "goofspiel-1  (goofspiel, active)  round 2\n" in cli(tmp_path, "status").stdout


def test_a_clock_behind_the_mail_is_a_warning_and_the_deadlines_go_on(tmp_path: Path) -> None:
    """Mail cannot come from the future (an IMAP server files none later
    than its own clock), so a clock behind the newest mail is wrong: the
    deadlines would only fire late, and are not held."""
    maildir_club(tmp_path)
    made = cli(tmp_path, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
               "--player", "bob@club.test", "--now", iso(now() - timedelta(days=4)))
    assert made.returncode == 0, made.stderr
    deliver(tmp_path, "1.mail", "From: alice@club.test\nTo: referee@club.test\n"
            "Subject: [goofspiel-1]\nMessage-ID: <1@club.test>\n\nbid 3\n",
            now() + timedelta(days=10))
    run = cli(tmp_path, "poll")
    assert run.returncode == 0
    assert re.fullmatch(BEHIND, run.stderr), run.stderr
    assert "goofspiel-1  (goofspiel, active)  round 2\n" in cli(tmp_path, "status").stdout


def test_the_daemon_says_the_clock_once_and_moves_for_no_one(tmp_path: Path) -> None:
    """``run`` logs the warning when it comes, not every minute, and holds
    the deadlines; ``run --trust-clock`` confirms the clock at its start."""
    maildir_club(tmp_path)
    past = now() - timedelta(days=10)
    assert cli(tmp_path, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
               "--player", "bob@club.test", "--now", iso(past)).returncode == 0
    deliver(tmp_path, "1.mail", "From: alice@club.test\nTo: referee@club.test\n"
            "Subject: [goofspiel-1]\nMessage-ID: <1@club.test>\n\nbid 3\n",
            past + timedelta(minutes=1))

    said = daemon(tmp_path, "run", until="deadlines held for the clock")
    assert said.count("the clock says") == 1, said
    assert re.search(r"WARNING referee.scheduler: " + AHEAD.removeprefix("referee: "), said)
    assert "goofspiel-1  (goofspiel, active)  round 1\n" in cli(tmp_path, "status").stdout

    said = daemon(tmp_path, "run", "--trust-clock", until="deadlines swept (1 fired)")
    assert "WARNING" not in said, said
    assert "goofspiel-1  (goofspiel, active)  round 2\n" in cli(tmp_path, "status").stdout


def daemon(folder: Path, *args: str, until: str) -> str:
    """Run the daemon until ``health`` reports ``until`` as its last pass;
    what it logged."""
    with subprocess.Popen([str(REFEREE), "-c", "referee.toml", "--log-level", "info", *args],
                          cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stderr is not None
        give_up = time.monotonic() + 60  # a hang guard, not a measure
        while until not in cli(folder, "health").stdout:
            if time.monotonic() > give_up or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"the daemon never reported {until!r}: {proc.stderr.read()}")
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        return proc.stderr.read()

