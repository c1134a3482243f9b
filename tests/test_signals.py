"""Signals as daemons take them, sent to the real ``referee`` processes:
SIGHUP makes the daemon open its log file again (logrotate moved it) and
is logged, never its death; SIGINT, SIGTERM and SIGHUP end ``poll`` after
the mail it is reading, with one line and 128 + the signal (the shell's
code), and the next pass referees the rest, every mail exactly once; Ctrl-C
while the daemon starts is one line."""

from __future__ import annotations

import mailbox
import re
import signal
import socket
import subprocess
from collections import Counter
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.mailstack import REPO_ROOT, MailStack
from tests.test_cli_faults import REFEREE, referee
from tests.test_cli_faults import club as club  # the fixture
from tests.test_cli_faults import world as world  # the fixture
from tests.test_disk_full import mail_in, new_game, wait_for
from tests.test_e2e import REF, Post, daemon, opened_game, person, progress, referee_command

#: Enough mail that a pass is still reading when the signal comes.
MANY = 60
#: Mails in the Maildir: files cost nothing to write, and a pass over them
#: runs long past its first commit (the signal's cue) however fast it is.
FILES = 400
#: Budgets that answer every one of them.
LIMITS = {"replies_per_hour": 1000, "replies_per_day": 1000}
STOPPED = re.compile(r"referee: stopped by (SIG[A-Z]+) after (\d+) mail\(s\); the rest waits "
                     r"for the next pass\n")


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path, limits=LIMITS)
    yield p
    p.close()


# -- the daemon and SIGHUP ------------------------------------------------------------

def test_sighup_makes_the_daemon_open_its_log_file_again_after_logrotate_moved_it(
        post: Post, tmp_path: Path) -> None:
    """SIGHUP (logrotate's postrotate) ended the daemon, in silence."""
    tag = opened_game(post)
    log, rotated, said = tmp_path / "referee.log", tmp_path / "referee.log.1", tmp_path / "out"
    with said.open("w") as out:
        proc = subprocess.Popen(referee_command(post, "--log-file", str(log), "--log-level",
                                                "info", "run"),
                                cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        post.write("bob", "help", subject=f"[{tag}]")
        post.new_mail("bob", 1, timeout=60)
        log.rename(rotated)  # logrotate: the daemon writes on into the moved file
        proc.send_signal(signal.SIGHUP)
        wait_for("the log file opened again", lambda: proc.poll() is not None or (
            log.exists() and "SIGHUP received" in log.read_text()))
        assert proc.poll() is None, f"SIGHUP ended the daemon: {said.read_text()}"
        bid = post.write("alice", "bid 4", subject=f"[{tag}]")
        (reply,) = post.new_mail("alice", 1, timeout=60)
        assert reply["In-Reply-To"] == bid
        wait_for("the bid's line in the new file",
                 lambda: "mail from alice@example.test" in log.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, said.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    new, old = log.read_text(), rotated.read_text()
    assert f" WARNING referee.scheduler: SIGHUP received: log file {log} opened again\n" in new
    assert "mail from bob@example.test" in old and "mail from alice" not in old
    assert "Traceback" not in new + old + said.read_text()


def test_sighup_without_a_log_file_is_logged_and_the_daemon_goes_on(
        post: Post, tmp_path: Path) -> None:
    tag = opened_game(post)
    said = tmp_path / "run.log"
    with daemon(post, said) as proc:  # it must stop with 0 on SIGTERM, at the end
        post.write("bob", "help", subject=f"[{tag}]")
        post.new_mail("bob", 1, timeout=60)
        proc.send_signal(signal.SIGHUP)
        wait_for("SIGHUP logged",
                 lambda: proc.poll() is not None or "SIGHUP" in said.read_text())
        assert proc.poll() is None, f"SIGHUP ended the daemon: {said.read_text()}"
        bid = post.write("alice", "bid 4", subject=f"[{tag}]")
        (reply,) = post.new_mail("alice", 1, timeout=60)
        assert reply["In-Reply-To"] == bid
    assert said.read_text().count(
        "WARNING referee.scheduler: SIGHUP received: no log file to open again (the log "
        "goes to stderr); going on\n") == 1


def test_ctrl_c_while_the_daemon_starts_is_one_line(world: Path) -> None:
    """It was a traceback: the daemon was trying the IMAP server (one that
    takes the connection and never says a word)."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        (world / "referee.toml").write_text(
            '[referee]\naddress = "referee@club.test"\n'
            f'[mailbox]\nkind = "imap"\nhost = "127.0.0.1"\nport = {silent.getsockname()[1]}\n'
            'username = "referee"\npassword = "secret"\nsecurity = "none"\n'
            '[smtp]\nkind = "maildir"\npath = "out"\n', encoding="utf-8")
        assert referee("init", cwd=world).returncode == 0
        proc = subprocess.Popen([str(REFEREE), "run"], cwd=world, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        silent.settimeout(60)
        connection, _ = silent.accept()  # the daemon, starting, waits for a greeting
        with connection:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
    assert (out, err, proc.returncode) == ("", "referee: stopped by SIGINT while starting\n",
                                           130)


#: Python that runs ``referee ARGS`` as its script does, with Ctrl-C
#: pressed as the module named first loads: at a point a hand can hit, but
#: every time.
CTRL_C_AT_IMPORT = """
import importlib.abc, os, signal, sys

module, sys.argv = sys.argv[1], ["referee", *sys.argv[2:]]

class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == module:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
from referee.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize(("module", "args"), [
    ("referee.config", ["poll"]),  # as the command line loads
    ("referee.games.goofspiel", ["game", "new", "--help"]),  # as the games give their options
])
def test_ctrl_c_while_a_command_loads_is_one_line_and_130(
        club: Path, module: str, args: list[str]) -> None:
    """It was a traceback of the import it met, 20 lines and more."""
    python = REFEREE.parent / "python"
    run = subprocess.run([str(python), "-c", CTRL_C_AT_IMPORT, module, *args], cwd=club,
                         capture_output=True, text=True, timeout=120, check=False)
    assert (run.stdout, run.stderr, run.returncode) == (
        "", "referee: stopped by SIGINT while starting\n", 130)


# -- poll stopped between two mails ---------------------------------------------------

def mail(user: str, n: int, tag: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = person(user)
    msg["To"] = REF
    msg["Subject"] = f"[{tag}] {n}"
    msg["Message-ID"] = make_msgid(idstring=f"{user}{n}", domain="mua.example.test")
    msg.set_content(f"help\nnote {n}\n")  # each its own, or a run of them is a loop
    return msg


def interrupted(command: list[str], cwd: Path, db: Path, signum: int
                ) -> tuple[subprocess.CompletedProcess[str], int]:
    """Start ``command``, a pass; once it has refereed a mail, send it
    ``signum``; what it did, and the mail it refereed."""
    before = progress(db)[0]
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        # Looked at often: a fast pass referees a batch in a few milliseconds.
        wait_for("a mail refereed", lambda: progress(db)[0] > before or proc.poll() is not None,
                 every=0.005)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(command, proc.returncode, out, err), \
        progress(db)[0] - before


def test_ctrl_c_ends_poll_after_the_mail_it_reads_and_the_next_pass_reads_the_rest_once(
        post: Post) -> None:
    """It was a 43-line traceback. Over IMAP: each mail is refereed once,
    and answered once, by this pass or the next."""
    tag = opened_game(post)
    sent: dict[str, str] = {}  # Message-ID -> player
    for n in range(MANY):
        user = ("alice", "bob")[n % 2]
        msg = mail(user, n, tag)
        assert post.stack.deliver(msg, user, REF) == {}
        sent[str(msg["Message-ID"])] = user
        post.in_referee_inbox += 1
    post.stack.wait_for("referee", post.in_referee_inbox, timeout=60)

    run, refereed = interrupted(referee_command(post, "poll"), REPO_ROOT, post.db_path,
                                signal.SIGINT)
    stopped = STOPPED.fullmatch(run.stderr)
    assert stopped and stopped[1] == "SIGINT", run.stderr
    assert run.returncode == 130 and run.stdout == ""
    assert 0 < int(stopped[2]) == refereed < MANY  # each mail read was refereed, whole

    again = subprocess.run(referee_command(post, "poll"), cwd=REPO_ROOT, capture_output=True,
                           text=True, timeout=120)
    assert (again.stderr, again.returncode) == ("", 0)
    with post.referee.sessions() as db:
        rows = list(db.scalars(select(m.Inbound)))
        outbox = list(db.scalars(select(m.Outbox)))
    assert sorted(str(r.message_id) for r in rows) == sorted(mid.strip("<>") for mid in sent)
    assert {r.status for r in rows} == {"processed"}
    assert len(outbox) == 2 + MANY and all(r.sent_at is not None for r in outbox)
    replies = post.new_mail("alice", MANY // 2, timeout=60) \
        + post.new_mail("bob", MANY // 2, timeout=60)
    assert Counter(str(x["In-Reply-To"]).strip() for x in replies) == \
        Counter(dict.fromkeys(sent, 1))
    assert [a[1:3] for a in post.actions(tag)] == []  # help and notes: no move


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)],
                         ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_ends_poll_after_the_mail_it_reads_none_lost_none_twice(
        club: Path, signum: int, code: int) -> None:
    """From a Maildir: a closing terminal (SIGHUP) or a stop (SIGTERM)."""
    text = (club / "referee.toml").read_text(encoding="utf-8")
    (club / "referee.toml").write_text(
        text + "[limits]\n" + "".join(f"{k} = {v}\n" for k, v in LIMITS.items()),
        encoding="utf-8")
    new_game(club)
    sent = [mail_in(club, n, ("alice", "bob")[n % 2], f"help\nnote {n}") for n in range(FILES)]
    run, refereed = interrupted([str(REFEREE), "poll"], club, club / "referee.db", signum)
    stopped = STOPPED.fullmatch(run.stderr)
    assert stopped and stopped[1] == signal.Signals(signum).name, run.stderr
    assert run.returncode == code
    assert 0 < int(stopped[2]) == refereed < FILES
    assert len(list((club / "in" / "new").iterdir())) == FILES - refereed  # the rest waits

    again = referee("poll", cwd=club)
    assert (again.stderr, again.returncode) == ("", 0)
    out = list(mailbox.Maildir(club / "out"))
    answers = Counter(str(msg["In-Reply-To"]).strip() for msg in out)
    assert [answers[mid] for mid in sent] == [1] * FILES
    assert len(out) == 2 + FILES  # the openings, and an answer to each mail
    assert list((club / "in" / "new").iterdir()) == []
