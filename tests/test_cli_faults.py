"""What an operator gets wrong, through the real ``referee`` command: each
fault one line on stderr naming the file or key and the fix, no traceback,
and the exit code of sysexits.h that tells the faults apart."""

from __future__ import annotations

import functools
import mailbox
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url

from referee.problems import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_DATAERR,
    EX_IOERR,
    EX_NOPERM,
    EX_UNAVAILABLE,
)
from referee.store.db import SCHEMA_HEAD
from tests.mailstack import GIVE_UP

REFEREE = Path(sys.executable).parent / "referee"
MAILDIRS = ('[referee]\naddress = "referee@club.test"\n'
            '[mailbox]\nkind = "maildir"\npath = "in"\n'
            '[smtp]\nkind = "maildir"\npath = "out"\n')
#: Root may read and write anything: as root, a permission is tried as
#: nobody (setpriv drops root's capabilities too).
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def referee(*args: str | Path, cwd: Path, as_nobody: bool = False
            ) -> subprocess.CompletedProcess[str]:
    command = [str(REFEREE), *map(str, args)]
    if as_nobody and os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root, and no setpriv (util-linux) to try a "
                        "permission as another user")
        if not nobody_can_run():
            pytest.skip(f"nobody may not run {REFEREE} (a folder above it is root's "
                        "alone): a permission cannot be tried as another user here")
        command = AS_NOBODY + command
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60,
                          check=False)


@functools.cache
def nobody_can_run() -> bool:
    """Whether nobody can run this checkout's referee at all (a checkout in
    a folder of root's alone, as ``mktemp -d`` makes, cannot be)."""
    run = subprocess.run([*AS_NOBODY, str(REFEREE), "--version"], capture_output=True,
                         timeout=60, check=False)
    return run.returncode == 0


def one_line(run: subprocess.CompletedProcess[str], code: int, line: str) -> None:
    """``run`` said exactly ``line`` on stderr, nothing else, and exited ``code``."""
    assert (run.stderr, run.returncode) == (f"referee: {line}\n", code)


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder everyone may enter, so a permission can be tried as nobody
    (pytest's own are root's alone)."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        yield Path(folder)


@pytest.fixture
def club(world: Path) -> Path:
    (world / "referee.toml").write_text(MAILDIRS, encoding="utf-8")
    assert referee("-c", "referee.toml", "init", cwd=world).returncode == 0
    return world


def test_a_config_that_is_a_folder_is_one_line(world: Path) -> None:
    (world / "referee.toml").mkdir()
    one_line(referee("status", cwd=world), EX_CONFIG, "bad config: referee.toml is a folder, "
             "not a config file; give the file's path with --config FILE")


def test_a_config_that_is_not_utf8_is_one_line(world: Path) -> None:
    (world / "referee.toml").write_bytes(b'[referee]\naddress = "caf\xe9@club.test"\n')
    one_line(referee("status", cwd=world), EX_CONFIG, "bad config: referee.toml: not UTF-8 "
             "text (byte 0xe9 at offset 24); save it as UTF-8")


def test_a_config_the_user_may_not_read_is_one_line_and_77(world: Path) -> None:
    """The README's 0640 file, run as a user outside its group."""
    config = world / "referee.toml"
    config.write_text(MAILDIRS, encoding="utf-8")
    config.chmod(0o000)
    fix = (f"may not read it; make it readable by the referee's user (chgrp referee {config}; "
           f"chmod 0640 {config})\n")
    run = referee("-c", config, "poll", cwd=world, as_nobody=True)
    assert run.returncode == EX_NOPERM
    assert run.stderr.startswith(f"referee: bad config: {config}: this user (")
    assert run.stderr.endswith(fix)
    assert run.stderr.count("\n") == 1
    # check: its config line, which fails; nothing else can be tried.
    run = referee("-c", config, "check", cwd=world, as_nobody=True)
    assert (run.returncode, run.stderr) == (EX_NOPERM, "")
    assert run.stdout.startswith(f"config   FAIL {config}: this user (")
    assert run.stdout.endswith(fix)
    assert run.stdout.count("\n") == 1


def test_a_config_with_several_bad_keys_is_one_line_naming_each(world: Path) -> None:
    (world / "referee.toml").write_text('[referee]\naddress = "referee"\n'
                                        '[deadlines]\ndefault = "soon"\n', encoding="utf-8")
    one_line(referee("poll", cwd=world), EX_CONFIG,
             "bad config: referee.toml: referee.address: 'referee' is not a mail address like "
             "referee@example.org | deadlines.default: 'soon' is not a duration; write e.g. "
             "3d, 12h, 1d12h, 30m or 45s")


@pytest.mark.parametrize("command", ["init", "status", "poll"])
def test_a_database_whose_driver_is_not_installed_names_the_extra(
        world: Path, command: str) -> None:
    (world / "referee.toml").write_text(
        '[referee]\naddress = "referee@club.test"\n'
        'database = "postgresql+pg8000://referee:secret@db.club.test/referee"\n',
        encoding="utf-8")
    one_line(referee(command, cwd=world), EX_CONFIG,
             "[referee] database: the driver of postgresql+pg8000://referee:***@db.club.test/"
             "referee (pg8000) is not installed; install pg8000, or write postgresql+psycopg:// "
             "and pip install 'pbm-referee[postgres]'")


def test_check_and_poll_give_the_same_line_for_a_database_the_user_may_not_write(
        club: Path) -> None:
    """It was "busy or away, try again" (75) in poll and 69 in check."""
    if os.geteuid() != 0:
        (club / "referee.db").chmod(0o444)
    said = (f"[referee] database: sqlite:///{club}/referee.db: this user may not write it "
            "(attempt to write a readonly database); make the file and its folder writable "
            "by the referee's user")
    one_line(referee("poll", cwd=club, as_nobody=True), EX_NOPERM, said)
    check = referee("check", cwd=club, as_nobody=True)
    assert check.returncode == EX_NOPERM
    assert f"database FAIL {said}\n" in check.stdout


def test_status_into_a_reader_that_stops_is_quiet(club: Path) -> None:
    """`referee status | head -1`: the reader goes, and no traceback comes."""
    with subprocess.Popen([str(REFEREE), "status"], cwd=club, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        assert (proc.stderr.read(), proc.wait(timeout=60)) == (b"", 0)


@pytest.mark.parametrize(("log_file", "why"), [
    (".", "Is a directory"),
    ("logs/referee.log", "No such file or directory"),
])
def test_a_log_file_that_cannot_be_written_is_one_line(
        club: Path, log_file: str, why: str) -> None:
    one_line(referee("--log-file", log_file, "status", cwd=club), EX_CANTCREAT,
             f"--log-file {log_file}: cannot write it ({why}); name a file in a "
             "folder that exists")


def test_demo_into_a_folder_that_cannot_be_made_is_one_line(world: Path) -> None:
    one_line(referee("demo", "--dir", "/dev/null/demo", cwd=world), EX_CANTCREAT,
             "--dir /dev/null/demo: cannot write it (Not a directory); give "
             "--dir a folder that can be made")


def test_pages_into_a_folder_that_cannot_be_made_is_one_line(club: Path) -> None:
    one_line(referee("pages", "/dev/null/pages", cwd=club), EX_CANTCREAT,
             "pages /dev/null/pages: cannot write it (Not a directory); name a "
             "folder that can be made, writable by this user")


def test_pages_into_a_folder_the_user_may_not_write_is_77(club: Path) -> None:
    club.chmod(0o777)  # the database nobody reads is theirs too
    for path in club.glob("referee.db*"):
        path.chmod(0o666)
    (club / "locked").mkdir(mode=0o755)
    if os.geteuid() != 0:
        (club / "locked").chmod(0o555)
    one_line(referee("pages", "locked/pages", cwd=club, as_nobody=True), EX_NOPERM,
             "pages locked/pages: this user may not write it; give the referee's "
             "user write access, or name another")


def test_a_lock_file_that_cannot_be_made_is_one_line(club: Path) -> None:
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(
        text.replace("[mailbox]", 'lock_file = "/dev/null/referee.lock"\n[mailbox]'),
        encoding="utf-8")
    one_line(referee("poll", cwd=club), EX_CANTCREAT,
             "[referee] lock_file /dev/null/referee.lock: cannot write it (Not a directory)"
             "; name a file in a folder the referee's user can write")



def configure(club: Path, referee_keys: str = "", tail: str = "") -> None:
    """Add keys to [referee] of the club's config, and sections at its end."""
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(
        text.replace("[mailbox]", f"{referee_keys}[mailbox]") + tail, encoding="utf-8")


PAGES_LINE = ("[web] path {path}: cannot write it (Not a directory); name a folder that can be "
              "made, writable by the referee's user (under systemd, list it in "
              "ReadWritePaths=)")


@pytest.mark.parametrize(("keys", "tail", "part", "said"), [
    ('lock_file = "/dev/null/referee.lock"\n', "", "lock",
     "[referee] lock_file /dev/null/referee.lock: cannot write it (Not a directory); name a "
     "file in a folder the referee's user can write"),
    ("", '[web]\npath = "/dev/null/pages"\n', "pages",
     PAGES_LINE.format(path="/dev/null/pages")),
])
def test_check_tries_each_file_a_pass_writes(
        club: Path, keys: str, tail: str, part: str, said: str) -> None:
    """It said OK, and then every pass failed with a traceback."""
    configure(club, keys, tail)
    check = referee("check", cwd=club)
    assert check.returncode == EX_CANTCREAT, check.stdout
    assert f"{part:<9}FAIL {said}\n" in check.stdout
    one_line(referee("poll", cwd=club), EX_CANTCREAT, said)


def test_check_tries_the_dry_run_maildir(club: Path) -> None:
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "out"', 'path = "/dev/null/out"'),
                                       encoding="utf-8")
    check = referee("check", cwd=club)
    assert check.returncode == EX_CANTCREAT, check.stdout
    assert ("smtp     FAIL [smtp] path /dev/null/out: cannot be made in /dev/null (Not a "
            "directory); name a folder that can be made, writable by the referee's user\n"
            in check.stdout)


def test_check_says_77_for_a_pages_folder_the_user_may_not_write(club: Path) -> None:
    club.chmod(0o777)
    for path in club.glob("referee.db*"):
        path.chmod(0o666)
    (club / "locked").mkdir(mode=0o755)
    if os.geteuid() != 0:
        (club / "locked").chmod(0o555)
    configure(club, 'lock_file = "/tmp/referee-check-nobody.lock"\n',
              '[web]\npath = "locked/pages"\n')
    check = referee("check", cwd=club, as_nobody=True)
    assert check.returncode == EX_NOPERM, check.stdout
    assert (f"pages    FAIL [web] path {club}/locked/pages: this user may not write it; give "
            "the referee's user write access, or name another\n" in check.stdout)
    assert "lock     OK" in check.stdout


def test_the_daemon_says_a_pages_folder_it_cannot_write_once_and_goes_on(club: Path) -> None:
    """Under systemd's ProtectSystem=strict a pages folder outside
    ReadWritePaths fails each pass: one line, and the players still get
    their answers."""
    configure(club, "", '[web]\npath = "/dev/null/pages"\n')
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "in"\n',
                                                    'path = "in"\npoll_interval = "1s"\n'),
                                       encoding="utf-8")
    new = referee("game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
                  "--player",
                  "bob@club.test", cwd=club)
    assert new.returncode == 0, new.stderr
    out = club / "out" / "new"
    sent = len(list(out.iterdir()))
    for sub in ("tmp", "new", "cur"):
        (club / "in" / sub).mkdir(parents=True)
    with subprocess.Popen([str(REFEREE), "--log-level", "info", "run"], cwd=club,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith("referee running for")
        for n, who in enumerate(("alice", "bob")):  # two passes that read mail
            (club / "in" / "new" / f"{n}.mail").write_text(
                f"From: {who}@club.test\nTo: referee@club.test\nSubject: [goofspiel-1]\n"
                f"Message-ID: <{n}@club.test>\n\nstatus\n", encoding="utf-8")
            deadline = time.monotonic() + GIVE_UP
            while len(list(out.iterdir())) < sent + n + 1:
                if time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"no answer; the daemon said: {proc.stderr.read()}")
                time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=GIVE_UP) == 0
        said = proc.stderr.read()
    assert said.count("[web] path") == 1, said
    assert f"ERROR referee.scheduler: {PAGES_LINE.format(path='/dev/null/pages')}; the game " \
           "pages wait, the mail goes on\n" in said
    assert "Traceback" not in said


def test_a_pass_run_with_now_in_the_future_is_no_recent_pass_for_status(club: Path) -> None:
    """``poll --now`` in a week recorded its pass a week ahead, and ``status
    --max-age`` took that for a recent pass for a week."""
    assert referee("poll", "--now", "2099-01-01T00:00:00", cwd=club).returncode == 0
    status = referee("status", "--max-age", "5m", cwd=club)
    assert status.returncode == 0  # it did run, now
    assert "2099" not in status.stdout
    # A pass recorded in the future (by an earlier version) is no evidence.
    with sqlite3.connect(club / "referee.db") as db:
        db.execute("UPDATE leases SET expires_at = '2099-01-01 00:00:00.000000' "
                   "WHERE name = 'health.pass'")
    one_line(referee("status", "--max-age", "5m", cwd=club), 1,
             "the last pass is recorded at 2099-01-01T00:00:00Z, later than now; no pass is "
             "known to have completed in the last 5 minutes")


def test_a_maildir_the_user_may_not_read_is_one_line_and_77(club: Path) -> None:
    """The Maildir made by root at a dry run, and the referee run as its own user."""
    club.chmod(0o777)
    for path in club.glob("referee.db*"):
        path.chmod(0o666)
    for sub in ("tmp", "new", "cur"):
        (club / "in" / sub).mkdir(parents=True)
    (club / "in").chmod(0o700 if os.geteuid() == 0 else 0o000)
    configure(club, 'lock_file = "/tmp/referee-maildir-nobody.lock"\n')
    said = (f"[mailbox] path: {club}/in: this user may not read {club}/in/cur; give the "
            "referee's user read and write access to the Maildir, or name another")
    one_line(referee("poll", cwd=club, as_nobody=True), EX_NOPERM, said)
    check = referee("check", cwd=club, as_nobody=True)
    assert check.returncode == EX_NOPERM
    assert f"mailbox  FAIL {said}\n" in check.stdout


def sections(**extra: str) -> str:
    """The maildir club's config with lines added to its sections (a
    section named anew is added at the end)."""
    keys = {"referee": 'address = "referee@club.test"\n',
            "mailbox": 'kind = "maildir"\npath = "in"\n',
            "smtp": 'kind = "maildir"\npath = "out"\n'}
    for name, lines in extra.items():
        keys[name] = keys.get(name, "") + lines
    return "".join(f"[{name}]\n{lines}" for name, lines in keys.items())


def check_and_poll_refuse(folder: Path, text: str, line: str, code: int = EX_CONFIG) -> None:
    """The config ``text`` is one line from ``check`` (its config part
    FAILs, with the code) and from ``poll`` (at start, on stderr)."""
    (folder / "referee.toml").write_text(text, encoding="utf-8")
    check = referee("check", cwd=folder)
    assert (check.stdout, check.stderr, check.returncode) == (
        f"config   FAIL referee.toml: {line}\n", "", code)
    one_line(referee("poll", cwd=folder), code, f"bad config: referee.toml: {line}")


#: Keys that meant something other than they say, each as an operator
#: writes it, and the one line that now names it.
UNMEANT = {
    "a deadline without its unit: 3 seconds, where 3 days was meant": (
        {"deadlines": "default = 3\n"},
        'deadlines.default: 3 needs a unit; write "3d" (days), "3h" (hours), "3m" '
        '(minutes) or "3s" (seconds)'),
    "a unit-less string": (
        {"deadlines": 'reminder = "12"\n'},
        'deadlines.reminder: 12 needs a unit; write "12d" (days), "12h" (hours), "12m" '
        '(minutes) or "12s" (seconds)'),
    "a float of days": (
        {"deadlines": "away_max = 1.5\n"},
        'deadlines.away_max: 1.5 needs a unit, in whole numbers; write e.g. "1d12h", '
        '"36h", "90m" or "45s"'),
    "a mailbox duration without its unit": (
        {"mailbox": "poll_interval = 60\n"},
        'mailbox.poll_interval: 60 needs a unit; write "60d" (days), "60h" (hours), "60m" '
        '(minutes) or "60s" (seconds)'),
    "a negative duration": (
        {"smtp": "give_up_after = -5\n"},
        'smtp.give_up_after: -5 is less than nothing; write a duration with its unit, like '
        '"3d" (days), "12h", "30m" or "45s"'),
    "a deadline of nothing": (
        {"deadlines": 'default = "0s"\n'},
        "deadlines.default: '0s' must be more than nothing and at most 90 days"),
    "a deadline longer than game new allows": (
        {"deadlines": 'default = "300d"\n'},
        "deadlines.default: '300d' must be more than nothing and at most 90 days"),
    "an IDLE servers log off": (
        {"mailbox": 'idle_timeout = "1h"\n'},
        "mailbox.idle_timeout: '1h' must be more than nothing and at most 29 minutes "
        "(RFC 2177: a server may log off a client idle for 30)"),
    "a reminder at its deadline": (
        {"deadlines": 'default = "2d"\nreminder = "2d"\n'},
        '[deadlines]: reminder = "2d" is not shorter than default = "2d": the reminder would '
        'go out as each turn opens; make it shorter, like reminder = "16h"'),
    "a reminder after the default deadline": (
        {"deadlines": 'default = "12h"\n'},
        '[deadlines]: reminder = "1d" is not shorter than default = "12h": the reminder would '
        'go out as each turn opens; make it shorter, like reminder = "4h"'),
    "several workers on SQLite": (
        {"referee": 'workers = "many"\n'},
        '[referee]: workers = "many" needs PostgreSQL: SQLite takes one referee process at a '
        'time, and a second would only wait; set workers = "one", or database = '
        '"postgresql+psycopg://…"'),
    "public reports to the referee itself": (
        {"referee": 'public_list = "Referee@club.test"\n'},
        "[referee]: public_list is the referee's own address: public reports would come back "
        "to the referee, unread by anyone; name the players' list, or leave it out"),
    "a List-Id that is an address": (
        {"referee": 'public_list = "players@club.test"\nlist_id = "players@club.test"\n'},
        "[referee]: list_id: 'players@club.test' is no List-Id (RFC 2919: words joined by "
        "dots, no @ or spaces); write the id in the list's own List-Id header, like "
        "players.example.org"),
    "a port in the host": (
        {"smtp": 'host = "mail.club.test:587"\n'},
        "smtp.host: 'mail.club.test:587' holds a port; write host = 'mail.club.test' and "
        "port = 587"),
    "a URL for a host": (
        {"mailbox": 'host = "imaps://mail.club.test"\n'},
        "mailbox.host: 'imaps://mail.club.test' is not a host name; write the name alone, "
        "like mail.example.org (the port in port, TLS in security)"),
    "a port out of range": (
        {"mailbox": "port = 99300\n"},
        "mailbox.port: Input should be less than 65536"),
    "an empty lock file: the config's folder": (
        {"referee": 'lock_file = ""\n'},
        "referee.lock_file: is empty (it would be the config's own folder); name a path, "
        "relative to the config's folder or absolute"),
    "an authserv-id with the rest of the header": (
        {"auth": 'authserv_id = "mx.club.test; dmarc=pass"\n'},
        "[auth]: authserv_id: 'mx.club.test; dmarc=pass' is more than an authserv-id; write "
        "the first word of your server's Authentication-Results header alone, like "
        "mx.example.org"),
    "an hour's budget above the day's": (
        {"limits": "replies_per_hour = 500\n"},
        "[limits]: replies_per_hour (500) is more than replies_per_day (300), which an hour "
        "cannot exceed; raise replies_per_day or lower replies_per_hour"),
    "no replies at all": (
        {"limits": "replies_per_day = 0\n"},
        "limits.replies_per_day: Input should be greater than 0"),
    "an SMTP timeout in milliseconds": (
        {"smtp": "timeout = 60000\n"},
        "smtp.timeout: 60000 (seconds, as a bare number is read) must be more than nothing "
        'and at most an hour; write it with its unit, like "60s"'),
    "an SMTP timeout longer than an hour": (
        {"smtp": 'timeout = "2h"\n'},
        "smtp.timeout: '2h' must be more than nothing and at most 1 hour"),
}


@pytest.mark.parametrize("fault", UNMEANT)
def test_a_key_that_would_not_mean_what_it_says_is_one_line_in_check_and_poll(
        world: Path, fault: str) -> None:
    """``default = 3`` made every deadline 3 seconds long, check said OK,
    and the next poll moved for every player."""
    keys, line = UNMEANT[fault]
    check_and_poll_refuse(world, sections(**keys), line)


def test_an_smtp_timeout_without_its_unit_is_read_as_seconds_and_one_warning_line(
        club: Path) -> None:
    """The one duration the file once wrote as a bare number (timeout =
    60.0, seconds): a club that copied it goes on after an upgrade, and is
    told, in check and at each start, what to write instead."""
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "out"\n',
                                                    'path = "out"\ntimeout = 60.0\n'))
    line = 'referee.toml: smtp.timeout: 60.0 has no unit and is read as seconds; write ' \
           'timeout = "60s"'
    check = referee("check", cwd=club)
    assert (check.returncode, check.stderr) == (0, ""), check.stdout
    assert f"\nconfig   WARN {line}\n" in check.stdout
    poll = referee("poll", cwd=club)
    assert (poll.returncode, poll.stderr) == (0, f"referee: {line}\n")
    (club / "referee.toml").write_text(text.replace('path = "out"\n',
                                                    'path = "out"\ntimeout = "60s"\n'))
    assert referee("poll", cwd=club).stderr == ""
    assert "WARN referee.toml" not in referee("check", cwd=club).stdout


@pytest.mark.parametrize("command", ["status", "health"])
def test_a_max_age_without_its_unit_is_one_line_before_any_output(
        club: Path, command: str) -> None:
    """``status --max-age 2`` printed the whole status, then refused."""
    one_line(referee(command, "--max-age", "2", cwd=club), 1,
             "--max-age: '2' needs a unit, like 2d or 2h")


def test_a_password_file_every_user_may_read_is_one_line_naming_it(world: Path) -> None:
    secret = world / "smtp-password"
    secret.write_text("relay pass\n", encoding="utf-8")
    secret.chmod(0o644)
    text = sections(smtp='username = "referee"\npassword_file = "smtp-password"\n')
    check_and_poll_refuse(world, text, (
        f"[smtp]: password_file: every user of this machine may read {secret} (mode 0644); "
        f"chmod 600 {secret} (or 640, with the referee's user in its group)"))
    secret.chmod(0o640)  # root's, read by the referee's group: as the config itself
    (world / "referee.toml").write_text(text, encoding="utf-8")
    check = referee("check", cwd=world)
    assert check.stdout.startswith("config   OK   referee.toml: the referee is "
                                   "referee@club.test\n"), check.stdout


def test_a_config_saved_with_a_byte_order_mark_is_read_and_one_warning_line(
        club: Path) -> None:
    """Notepad and other Windows editors write one; tomllib refused it as
    "Invalid statement (at line 1, column 1)", a character nobody sees. It
    changes nothing the file says, so it is read (a club that ran on it
    goes on after an upgrade), and said: a WARN line from ``check``, a
    line at each command's start."""
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    line = ("referee.toml: begins with a UTF-8 byte-order mark (an invisible character some "
            "Windows editors write), read as if it did not; save it as UTF-8 without BOM")
    check = referee("check", cwd=club)
    assert (check.returncode, check.stderr) == (0, ""), check.stdout
    assert check.stdout.startswith("config   OK   referee.toml: the referee is "
                                   f"referee@club.test\nconfig   WARN {line}\n"
                                   "database OK   ")
    for command in ("init", "poll", "status"):
        run = referee(command, cwd=club)
        assert (run.returncode, run.stderr) == (0, f"referee: {line}\n"), command
    (club / "referee.toml").write_text(text, encoding="utf-8")  # saved without it
    assert referee("poll", cwd=club).stderr == ""
    assert "WARN referee.toml" not in referee("check", cwd=club).stdout


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_config_saved_as_utf16_is_one_line_saying_to_save_it_as_utf8(
        world: Path, encoding: str) -> None:
    """Notepad's "Unicode" (with its byte-order mark, or without one)."""
    (world / "referee.toml").write_bytes(MAILDIRS.encode(encoding))
    line = 'UTF-16 text (what Notepad calls "Unicode"), not UTF-8; save it as UTF-8'
    check = referee("check", cwd=world)
    assert (check.stdout, check.returncode) == (
        f"config   FAIL referee.toml: {line}\n", EX_CONFIG)
    one_line(referee("poll", cwd=world), EX_CONFIG, f"bad config: referee.toml: {line}")


def test_a_database_given_for_the_config_is_one_line(club: Path) -> None:
    """``-c referee.db``: it was "not UTF-8 text … save it as UTF-8"."""
    one_line(referee("-c", "referee.db", "poll", cwd=club), EX_CONFIG,
             "bad config: referee.db is no text file (a NUL byte at offset 15); give the "
             "config file's path with --config FILE")


@pytest.mark.parametrize(("options", "line"), [
    (["deadline=12h"],
     "Option reminder: 1d (the config's [deadlines] reminder) is not shorter than the "
     "deadline, 12h: the reminder would go out as each turn opens; give --option "
     "reminder=4h"),
    (["deadline=2d", "reminder=2d"],
     "Option reminder: 2d is not shorter than the deadline, 2d: the reminder would go out "
     "as each turn opens; give --option reminder=16h"),
    (["reminder=0s"], "Option reminder: '0s' must be more than nothing and at most 90 days"),
])
def test_a_games_reminder_at_or_after_its_deadline_is_refused(
        club: Path, options: list[str], line: str) -> None:
    new = referee("game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
                  "--player",
                  "bob@club.test", *(a for o in options for a in ("--option", o)), cwd=club)
    one_line(new, 1, line)
    assert referee("status", cwd=club).stdout.count("goofspiel-") == 0


# -- the database: a later release's, damaged, full, or a path ----------------------

def database_line(club: Path, said: str) -> str:
    """The start of every line about the club's database."""
    return f"[referee] database: sqlite:///{club}/referee.db{said}"


#: Every kind of command that opens the database, each as a user would type it.
DATABASE_COMMANDS = [["init"], ["status"], ["poll"], ["run"], ["health"], ["outbox"],
                     ["pages", "pages"], ["game", "new", "--at-once", "goofspiel", "--player",
                                          "alice@club.test", "--player", "bob@club.test"]]
#: The commands a fault is tried in where every one was tried for another
#: fault of the same path (each run of the referee is a second of the suite).
SOME_COMMANDS = [["init"], ["status"], ["poll"], ["run"]]


def each_command_says(club: Path, code: int, line: str,
                      commands: list[list[str]] = SOME_COMMANDS) -> None:
    """Every command ends with ``line`` and ``code``, and ``check`` fails
    its database line with them."""
    for command in commands:
        one_line(referee(*command, cwd=club), code, line)
    check = referee("check", cwd=club)
    assert check.returncode == code, check.stdout
    assert f"database FAIL {line}\n" in check.stdout
    assert check.stderr == ""


def test_a_database_a_later_release_upgraded_is_one_line_and_78_in_every_command(
        club: Path) -> None:
    """A rollback: `init` ended in Alembic's traceback ("Can't locate
    revision identified by '0099'"), every other command said to run it."""
    with sqlite3.connect(club / "referee.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '0099'")
    each_command_says(club, EX_CONFIG, database_line(
        club, " is at schema revision 0099, newer than this referee knows (its newest is "
        f"{SCHEMA_HEAD}): a later release upgraded it; install that release (or a later one) "
        "again, or restore a backup from before the upgrade"), DATABASE_COMMANDS)
    with sqlite3.connect(club / "referee.db") as db:  # init left it as it was
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0099",)]


def test_an_older_database_names_both_revisions_and_init(club: Path) -> None:
    with sqlite3.connect(club / "referee.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '0012'")
    each_command_says(club, EX_CONFIG, database_line(
        club, f" is at schema revision 0012, older than this referee's {SCHEMA_HEAD}; run: "
        "referee --config referee.toml init"), SOME_COMMANDS[1:])


#: Files where the database should be: what SQLite says, and what is written.
NOT_DATABASES = {
    "a text file": ("is not an SQLite database (file is not a database)",
                    b"database = sqlite:///referee.db\n"),
    "a picture": ("is not an SQLite database (file is not a database)",
                  b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200)),
}


@pytest.mark.parametrize("kind", NOT_DATABASES)
def test_a_file_that_is_not_a_database_is_one_line_and_65_in_every_command(
        club: Path, kind: str) -> None:
    said, content = NOT_DATABASES[kind]
    (club / "referee.db").write_bytes(content)
    each_command_says(club, EX_DATAERR, database_line(
        club, f" {said}; restore it from a backup or point [referee] database elsewhere"),
        DATABASE_COMMANDS if kind == "a text file" else SOME_COMMANDS)


def _played(club: Path) -> bytes:
    """The club's database after a game was made in it, checkpointed whole."""
    new = referee("game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
                  "--player",
                  "bob@club.test", cwd=club)
    assert new.returncode == 0, new.stderr
    with sqlite3.connect(club / "referee.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return (club / "referee.db").read_bytes()


@pytest.mark.parametrize("part", [1 / 4, 1 / 2, 9 / 10])
def test_a_half_copied_database_is_one_line_and_65_in_every_command(
        club: Path, part: float) -> None:
    whole = _played(club)
    (club / "referee.db").write_bytes(whole[:int(len(whole) * part)])
    each_command_says(club, EX_DATAERR, database_line(
        club, " is damaged (database disk image is malformed); restore it from a backup or "
        "point [referee] database elsewhere"))


def test_check_reads_every_page_a_command_may_not_reach(club: Path) -> None:
    """A page garbled where ``status`` does not look (the strangers' reply
    counts): status cannot tell, check reads the whole file (PRAGMA
    quick_check) and fails it."""
    whole = bytearray(_played(club))
    with sqlite3.connect(club / "referee.db") as db:
        (page,) = db.execute("PRAGMA page_size").fetchone()
        (root,) = db.execute("SELECT rootpage FROM sqlite_master "
                             "WHERE name = 'stranger_replies'").fetchone()
    whole[(root - 1) * page:root * page] = b"\xff" * page
    (club / "referee.db").write_bytes(bytes(whole))
    assert referee("status", cwd=club).returncode == 0
    check = referee("check", cwd=club)
    assert check.returncode == EX_DATAERR, check.stdout
    (line,) = [ln for ln in check.stdout.splitlines() if ln.startswith("database")]
    assert line.startswith("database FAIL " + database_line(club, " is damaged ("))
    assert line.endswith("); restore it from a backup or point [referee] database elsewhere")


def _mail(club: Path, n: int, who: str = "alice") -> str:
    """A player's mail about goofspiel-1 in the referee's Maildir; its Message-ID."""
    for sub in ("tmp", "new", "cur"):
        (club / "in" / sub).mkdir(parents=True, exist_ok=True)
    (club / "in" / "new" / f"{n}.mail").write_text(
        f"From: {who}@club.test\nTo: referee@club.test\nSubject: [goofspiel-1] {n}\n"
        f"Message-ID: <{n}@club.test>\n\nstatus\n", encoding="utf-8")
    return f"<{n}@club.test>"


def _answers(club: Path, message_id: str) -> int:
    """How many mails of the dry run answer ``message_id``."""
    return sum(msg["In-Reply-To"] == message_id for msg in mailbox.Maildir(club / "out"))


DAMAGED = (" is damaged (database disk image is malformed); restore it from a backup or "
           "point [referee] database elsewhere")


def test_poll_meeting_a_damaged_page_is_one_line_and_the_mail_waits_for_the_backup(
        club: Path) -> None:
    """The players' table garbled (a page status does not read): it was a
    58-line traceback, and the mail was recorded as a fault of ours."""
    whole = _played(club)
    garbled = bytearray(whole)
    with sqlite3.connect(club / "referee.db") as db:
        (page,) = db.execute("PRAGMA page_size").fetchone()
        (root,) = db.execute("SELECT rootpage FROM sqlite_master "
                             "WHERE name = 'players'").fetchone()
    garbled[(root - 1) * page:root * page] = b"\xff" * page
    (club / "referee.db").write_bytes(bytes(garbled))
    asked = _mail(club, 1)
    one_line(referee("poll", cwd=club), EX_DATAERR, database_line(club, DAMAGED))
    (club / "referee.db").write_bytes(whole)  # the backup, restored
    assert referee("poll", cwd=club).returncode == 0
    assert _answers(club, asked) == 1


def test_a_database_damaged_under_the_daemon_stops_it_in_one_line_and_65(club: Path) -> None:
    """A backup half copied over the file while the daemon runs: it logged
    a traceback for each mail and each retry, and went on for ever."""
    whole = _played(club)
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(text.replace('path = "in"\n',
                                                    'path = "in"\npoll_interval = "1s"\n'),
                                       encoding="utf-8")
    said = club / "run.out"
    with said.open("w") as out:
        proc = subprocess.Popen([str(REFEREE), "run"], cwd=club, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
    try:
        asked = _mail(club, 1)
        give_up = time.monotonic() + GIVE_UP
        while _answers(club, asked) == 0:
            assert time.monotonic() < give_up, said.read_text()
            time.sleep(0.1)
        (club / "referee.db").write_bytes(whole[:len(whole) // 2])
        _mail(club, 2, "bob")
        assert proc.wait(timeout=GIVE_UP) == EX_DATAERR
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first, last = said.read_text().splitlines()
    assert first.startswith("referee running for referee@club.test")
    assert last.endswith(f" ERROR referee.scheduler: {database_line(club, DAMAGED)}; stopping")


def test_an_empty_database_file_is_one_not_set_up(club: Path) -> None:
    """SQLite takes an empty file for an empty database: `init` sets it up."""
    (club / "referee.db").write_bytes(b"")
    one_line(referee("status", cwd=club), EX_CONFIG, database_line(
        club, " is not set up; run: referee --config referee.toml init"))
    assert referee("init", cwd=club).returncode == 0
    assert referee("status", cwd=club).returncode == 0


@pytest.mark.parametrize(("path", "url"), [
    ("/var/lib/referee/referee.db", "sqlite:////var/lib/referee/referee.db"),
    ("referee.db", "sqlite:///referee.db (taken from the config's folder)"),
])
@pytest.mark.parametrize("command", ["check", "init", "status"])
def test_a_path_where_the_database_url_belongs_is_one_line_and_78(
        world: Path, path: str, url: str, command: str) -> None:
    (world / "referee.toml").write_text(
        MAILDIRS.replace("[mailbox]", f'database = "{path}"\n[mailbox]'), encoding="utf-8")
    said = f"referee.database: '{path}' is a file's path, not a database URL; write {url}"
    run = referee(command, cwd=world)
    if command == "check":  # its config part FAILs, on stdout, as its only line
        assert (run.stdout, run.stderr, run.returncode) == (
            f"config   FAIL referee.toml: {said}\n", "", EX_CONFIG)
    else:
        one_line(run, EX_CONFIG, f"bad config: referee.toml: {said}")


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A disk of 4 MiB of its own (a tmpfs), to fill; skipped where this
    user may not mount one."""
    if os.geteuid() != 0:
        pytest.skip("only root may mount a small disk (tmpfs) to fill")
    with tempfile.TemporaryDirectory() as folder:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755",
                                  "referee-test", folder], capture_output=True, text=True,
                                 timeout=60, check=False)
        if mounted.returncode != 0:
            pytest.skip(f"a tmpfs cannot be mounted here: {mounted.stderr.strip()}")
        try:
            yield Path(folder)
        finally:
            subprocess.run(["umount", "--lazy", folder], check=True, timeout=60)


def fill(disk: Path, leave: int = 0) -> None:
    """Fill ``disk`` up to ``leave`` bytes, as another program's files would."""
    with open(disk / "filler", "wb") as f:
        try:
            while (left := shutil.disk_usage(disk).free - leave) > 0:
                f.write(bytes(min(left, 1 << 16)))
                f.flush()
        except OSError:
            pass


def test_a_full_disk_under_the_database_is_one_line_and_74_in_every_command(
        small_disk: Path) -> None:
    """It said "the server does not answer … fix the host and port"."""
    (small_disk / "referee.toml").write_text(MAILDIRS, encoding="utf-8")
    assert referee("init", cwd=small_disk).returncode == 0
    assert referee("check", cwd=small_disk).returncode == 0
    fill(small_disk)
    start = f"referee: {database_line(small_disk, '')}: the disk (or quota) holding it is full ("
    end = "); make room there, or move the database\n"
    for command in [*SOME_COMMANDS, DATABASE_COMMANDS[-1]]:
        run = referee(*command, cwd=small_disk)
        assert run.returncode == EX_IOERR, (command, run.stderr)
        assert run.stderr.startswith(start) and run.stderr.endswith(end), run.stderr
        assert run.stderr.count("\n") == 1, run.stderr
    check = referee("check", cwd=small_disk)
    assert check.returncode == EX_IOERR, check.stdout
    assert f"database FAIL {start.removeprefix('referee: ')}" in check.stdout
    (small_disk / "filler").unlink()  # room again: all is well
    assert referee("poll", cwd=small_disk).returncode == 0


def test_check_fails_a_disk_too_full_for_the_journal_though_a_read_works(
        small_disk: Path) -> None:
    (small_disk / "referee.toml").write_text(MAILDIRS, encoding="utf-8")
    assert referee("init", cwd=small_disk).returncode == 0
    fill(small_disk, leave=512 * 1024)
    assert referee("status", cwd=small_disk).returncode == 0
    check = referee("check", cwd=small_disk)
    assert check.returncode == EX_IOERR, check.stdout
    (line,) = [ln for ln in check.stdout.splitlines() if ln.startswith("database")]
    assert line.startswith("database FAIL " + database_line(
        small_disk, ": the disk (or quota) holding it is full ("))
    assert line.endswith(" KiB free, less than the 1 MiB its journal may need); make room "
                         "there, or move the database")


# -- PostgreSQL: a server that takes no writes, and a password never shown ----------

@pytest.fixture
def postgres() -> Iterator[str]:
    from tests.databases import postgres_url

    yield from postgres_url()


def postgres_club(world: Path, url: str) -> None:
    (world / "referee.toml").write_text(
        MAILDIRS.replace("[mailbox]", f'database = "{url}"\n[mailbox]'), encoding="utf-8")


def test_check_tries_a_write_and_fails_a_server_that_takes_none(
        world: Path, postgres: str) -> None:
    """A standby, or default_transaction_read_only: reads pass, so only a
    write tells; check and poll say the same."""
    postgres_club(world, postgres)
    assert referee("init", cwd=world).returncode == 0
    read_only = f"{postgres}?options=-c%20default_transaction_read_only%3Don"
    postgres_club(world, read_only)
    assert referee("status", cwd=world).returncode == 0
    shown = make_url(read_only).render_as_string(hide_password=False)  # as SQLAlchemy spells it
    said = (f"[referee] database: {shown}: the server takes no writes here (cannot execute "
            "UPDATE in a read-only transaction); point the URL at a server that does (the "
            "primary, not a standby)")
    check = referee("check", cwd=world)
    assert check.returncode == EX_CONFIG, check.stdout
    assert f"database FAIL {said}\n" in check.stdout
    one_line(referee("poll", cwd=world), EX_CONFIG, said)


def test_no_command_prints_the_database_password_at_any_level(
        world: Path, postgres: str) -> None:
    """`init` printed "database ready: postgresql+psycopg://user:pgsecret@…",
    into the journal under the shipped unit. The local server trusts
    anyone, so any password logs in."""
    secret = "pgsecret"
    url = postgres.replace("postgres@", f"postgres:{secret}@", 1)
    masked = url.replace(secret, "***")
    postgres_club(world, url)
    said: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = referee("--log-level", "debug", "--log-file", "debug.log", *args, cwd=world)
        said.extend([done.stdout, done.stderr])
        return done

    init = run("init")
    assert (init.returncode, init.stdout) == (0, f"database ready: {masked}\n")
    check = run("check")
    assert f"database OK   {masked}: writable\n" in check.stdout
    assert run("status").returncode == 0
    assert run("poll").returncode == 0
    # poll's lines when the database cannot be used: no such database, and
    # a server that does not answer; the password in the query too.
    for broken in (url.rsplit("/", 1)[0] + "/no_such_database", url.replace(":5432/", ":1/"),
                   f"{postgres.replace(':5432/', ':1/')}?password={secret}"):
        postgres_club(world, broken)
        for command in ("poll", "check", "init"):
            done = run(command)
            assert done.returncode in (EX_CONFIG, EX_UNAVAILABLE), done.stderr
            assert "***" in done.stderr + done.stdout
    log = (world / "debug.log").read_text(encoding="utf-8")
    assert "DEBUG" in log  # it logged at debug
    assert secret not in log
    for text in said:
        assert secret not in text, text
