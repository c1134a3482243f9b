"""A full disk under the pages, the log file, the Maildirs and the lock file,
through the real ``referee`` command and daemon on a real full disk (a
small tmpfs, filled): one line with 74 (EX_IOERR) naming what to free or
move, no traceback, no temporary file left, and the mail goes on."""

from __future__ import annotations

import mailbox
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.problems import EX_IOERR, ROOM_FIX
from tests.disks import SmallDisk
from tests.disks import small_disks as small_disks  # the fixture
from tests.test_cli_faults import REFEREE, configure, one_line, referee
from tests.test_cli_faults import club as club  # the fixture
from tests.test_cli_faults import world as world  # the fixture

Disks = Callable[..., SmallDisk]
FULL = f"the disk is full (No space left on device); {ROOM_FIX}"


def new_game(club: Path) -> None:
    made = referee("game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
                   "--player",
                   "bob@club.test", cwd=club)
    assert made.returncode == 0, made.stderr


def mail_in(club: Path, n: int, who: str = "alice", text: str = "status") -> str:
    """A player's mail delivered into the referee's Maildir; its Message-ID."""
    for sub in ("tmp", "new", "cur"):
        (club / "in" / sub).mkdir(parents=True, exist_ok=True)
    (club / "in" / "new" / f"{n}.mail").write_text(
        f"From: {who}@club.test\nTo: referee@club.test\nSubject: [goofspiel-1] {n}\n"
        f"Message-ID: <{n}@club.test>\n\n{text}\n", encoding="utf-8")
    return f"<{n}@club.test>"


def replies_to(club: Path, message_id: str) -> int:
    """How many mails of the dry run answer ``message_id``."""
    return sum(msg["In-Reply-To"] == message_id for msg in mailbox.Maildir(club / "out"))


def wait_for(what: str, check: Callable[[], bool], timeout: float = 60,
             every: float = 0.1) -> None:
    """Until ``check`` holds, looked at ``every`` seconds; ``timeout`` only
    guards against a hang."""
    give_up = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < give_up, f"no {what} after {timeout} s"
        time.sleep(every)


# -- the pages ---------------------------------------------------------------------

def test_poll_with_the_pages_disk_full_answers_the_mail_and_says_so_in_one_line(
        club: Path, small_disks: Disks) -> None:
    """It was an OSError traceback at the end of every pass, a stray .tmp
    file, and check said OK. The pages stay behind, and the first pass that
    can write them does."""
    disk = small_disks(club / "pages")
    configure(club, "", '[web]\npath = "pages"\n')
    new_game(club)
    (disk.path / ".goofspiel-1.html.k7vyh2tv.tmp").touch()  # a pass killed mid-write
    disk.fill()
    bid = mail_in(club, 1)
    said = f"[web] path {disk.path}: cannot write {disk.path}/goofspiel-1.html: {FULL}"
    one_line(referee("poll", cwd=club), EX_IOERR, said)
    assert replies_to(club, bid) == 1  # the mail went on
    assert disk.temporary_files() == []  # its own taken away, the killed pass's swept
    status = referee("status", cwd=club)
    assert "last pass: " in status.stdout and "last pass: none yet" not in status.stdout
    assert f"Z: {said}\n" in status.stdout  # the last error
    check = referee("check", cwd=club)
    assert check.returncode == EX_IOERR, check.stdout
    assert f"pages    FAIL [web] path {disk.path}: cannot write it: {FULL}\n" in check.stdout

    disk.free()
    again = referee("poll", cwd=club)
    assert (again.stderr, again.returncode) == ("", 0)
    written = {p.name for p in disk.path.iterdir()}
    assert {"goofspiel-1.html", "goofspiel-1.atom", "index.html", "index.atom"} <= written
    assert disk.temporary_files() == []
    assert replies_to(club, bid) == 1  # answered once


def test_pages_into_a_full_disk_is_one_line_74_and_leaves_no_temporary_file(
        club: Path, small_disks: Disks) -> None:
    disk = small_disks(club / "disk")
    new_game(club)
    disk.fill()
    folder = disk.path / "pages"
    one_line(referee("pages", folder, cwd=club), EX_IOERR,
             f"pages {folder}: cannot write {folder}/goofspiel-1.html: {FULL}")
    assert disk.temporary_files() == []


def test_the_daemon_says_a_full_pages_disk_once_and_once_when_it_is_mended(
        club: Path, small_disks: Disks) -> None:
    disk = small_disks(club / "pages")
    configure(club, "", '[web]\npath = "pages"\n')
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "in"\n',
                                                    'path = "in"\npoll_interval = "1s"\n'),
                                       encoding="utf-8")
    new_game(club)
    disk.fill()
    said = club / "run.out"
    with said.open("w") as out:
        proc = subprocess.Popen([str(REFEREE), "run"], cwd=club, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
    try:
        for n, who in enumerate(("alice", "bob", "alice"), start=1):  # passes that read mail
            mid = mail_in(club, n, who)
            wait_for(f"answer to mail {n}", lambda mid=mid: replies_to(club, mid) == 1)
        assert said.read_text().count("[web] path") == 1, said.read_text()
        disk.free()
        mid = mail_in(club, 4, "bob")
        wait_for("answer to mail 4", lambda: replies_to(club, mid) == 1)
        wait_for("the pages written again",
                 lambda: "the game pages are written again" in said.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = said.read_text()
    assert log.count("[web] path") == 1, log
    assert (f"ERROR referee.scheduler: [web] path {disk.path}: cannot write "
            f"{disk.path}/goofspiel-1.html: {FULL}; the game pages wait, the mail goes on\n"
            in log)
    assert log.count("the game pages are written again") == 1
    assert (disk.path / "goofspiel-1.html").exists() and disk.temporary_files() == []
    assert "Traceback" not in log


# -- check --------------------------------------------------------------------------

def test_check_writes_on_each_disk_a_pass_writes_and_a_full_one_is_74(
        club: Path, small_disks: Disks) -> None:
    """check made an empty file, which a full disk takes: it said OK."""
    disk = small_disks(club / "disk")
    for sub in ("tmp", "new", "cur"):
        (disk.path / "out" / sub).mkdir(parents=True)
    (disk.path / "pages").mkdir()
    configure(club, "", '[web]\npath = "disk/pages"\n')
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "out"', 'path = "disk/out"'),
                                       encoding="utf-8")
    disk.fill()
    check = referee("--log-file", "disk/referee.log", "check", cwd=club)
    assert check.returncode == EX_IOERR, check.stdout
    assert f"pages    FAIL [web] path {disk.path}/pages: cannot write it: {FULL}\n" \
        in check.stdout
    assert f"log      FAIL --log-file disk/referee.log: cannot write it: {FULL}\n" \
        in check.stdout
    assert f"smtp     FAIL [smtp] path {disk.path}/out/tmp: cannot write it: {FULL}\n" \
        in check.stdout
    assert "lock     OK" in check.stdout and "Traceback" not in check.stdout + check.stderr
    disk.free()
    check = referee("--log-file", "disk/referee.log", "check", cwd=club)
    assert check.returncode == 0, check.stdout
    assert "log      OK   --log-file disk/referee.log writable\n" in check.stdout


def test_a_lock_file_on_a_disk_with_no_room_for_it_is_74_in_check_and_poll(
        club: Path, small_disks: Disks) -> None:
    """No file can be made there (every inode taken): the same line in both."""
    disk = small_disks(club / "run", inodes=2)
    (disk.path / "other").touch()  # the last file the disk holds
    configure(club, 'lock_file = "run/referee.lock"\n')
    said = f"[referee] lock_file {disk.path}/referee.lock: cannot write it: {FULL}"
    check = referee("check", cwd=club)
    assert check.returncode == EX_IOERR, check.stdout
    assert f"lock     FAIL {said}\n" in check.stdout
    one_line(referee("poll", cwd=club), EX_IOERR, said)


# -- the log file -------------------------------------------------------------------

LOG_LOST = ("--log-file {path}: cannot write it: the disk is full (No space left on "
            "device); the referee goes on, and its log lines are lost until it can")


def test_a_log_file_on_a_full_disk_is_one_line_and_the_mail_goes_on(club: Path) -> None:
    """It was a "--- Logging error ---" traceback for every line logged."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here, whose every write fails as on a full disk")
    new_game(club)
    mids = [mail_in(club, n, who) for n, who in enumerate(("alice", "bob", "alice"), 1)]
    run = referee("--log-file", "/dev/full", "--log-level", "info", "poll", cwd=club)
    one_line(run, 0, LOG_LOST.format(path="/dev/full"))
    assert [replies_to(club, mid) for mid in mids] == [1, 1, 1]


def test_the_daemon_started_with_its_log_disk_full_goes_on_and_says_when_it_logs_again(
        club: Path, small_disks: Disks) -> None:
    """A full log must not stop the refereeing: one line on stderr when
    lines start to be lost, one when they are written again, and the file
    says how many were lost."""
    disk = small_disks(club / "logs")
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "in"\n',
                                                    'path = "in"\npoll_interval = "1s"\n'),
                                       encoding="utf-8")
    new_game(club)
    disk.fill()
    said = club / "run.out"
    with said.open("w") as out:
        proc = subprocess.Popen([str(REFEREE), "--log-file", "logs/referee.log", "--log-level",
                                 "info", "run"], cwd=club, stdout=out, stderr=out, text=True)
    try:
        wait_for("the log's line on stderr", lambda: "--log-file" in said.read_text())
        for n, who in enumerate(("alice", "bob"), start=1):
            mid = mail_in(club, n, who)
            wait_for(f"answer to mail {n}", lambda mid=mid: replies_to(club, mid) == 1)
        assert said.read_text().count("--log-file") == 1, said.read_text()
        disk.free()
        mid = mail_in(club, 3, "bob")
        wait_for("answer to mail 3", lambda: replies_to(club, mid) == 1)
        wait_for("the log written again", lambda: "written again" in said.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = said.read_text().splitlines()
    assert lines[0].startswith("referee running for")
    assert lines[1:] == [
        "referee: " + LOG_LOST.format(path="logs/referee.log"),
        lines[2]]
    assert lines[2].startswith("referee: --log-file logs/referee.log: written again; ")
    log = (disk.path / "referee.log").read_text(encoding="utf-8")
    lost = lines[2].rsplit("; ", 1)[1]  # "N log line(s) were lost"
    assert (f"WARNING referee.logs: {lost} while logs/referee.log could not be written "
            "(the disk is full)\n") in log
    assert "mail from bob@club.test about goofspiel-1" in log  # mail 3, logged
    assert "Logging error" not in said.read_text() + log


# -- the database -------------------------------------------------------------------

def test_the_daemon_with_its_database_disk_full_says_so_once_and_reads_the_mail_after(
        club: Path, small_disks: Disks) -> None:
    """It said "the database is busy or away (database or disk is full)":
    a full disk is no busy database. The mail waits, and is answered once
    there is room."""
    disk = small_disks(club / "db", size="4m")
    configure(club, 'database = "sqlite:///db/referee.db"\n')
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "in"\n',
                                                    'path = "in"\npoll_interval = "1s"\n'),
                                       encoding="utf-8")
    assert referee("init", cwd=club).returncode == 0
    new_game(club)
    said = club / "run.out"
    with said.open("w") as out:
        proc = subprocess.Popen([str(REFEREE), "run"], cwd=club, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
    full = (f"WARNING referee.scheduler: [referee] database: sqlite:///{disk.path}/referee.db: "
            "the disk (or quota) holding it is full (database or disk is full); make room "
            "there, or move the database; reading mail again in ")
    try:
        mid = mail_in(club, 1)
        wait_for("answer to mail 1", lambda: replies_to(club, mid) == 1)
        disk.fill()
        mid = mail_in(club, 2, "bob")
        # A job (the deadlines, the lease) may meet the full disk first, in
        # a line of its own; the mail watcher says it as it reads mail 2.
        wait_for("the mail watcher's line", lambda: full in said.read_text())
        assert replies_to(club, mid) == 0
        disk.free()
        wait_for("answer to mail 2", lambda: replies_to(club, mid) == 1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = said.read_text()
    assert log.count(full) == 1, log
    assert log.count("WARNING referee.scheduler: the database answers again after ") == 1, log
    assert "busy or away" not in log and "Traceback" not in log
