"""A copy pointed at another referee's mailbox answers no one (issue 33):
a fresh database (no game, no mail ever read) that meets a mailbox holding
mail about games (their tags) or mail a referee sent reads nothing, marks
nothing and sends nothing, says so in one line (exit 78), and ``check``
says the same; ``poll --adopt-mailbox`` takes the mailbox over, leaving the
mail there as it is and reading what comes after. A new install whose
mailbox holds only old unrelated mail reads it as ever.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.problems import EX_CONFIG
from tests.mailstack import MailStack
from tests.test_cli_faults import MAILDIRS, REFEREE
from tests.test_e2e import REF, Post, body, write_config

REFUSED = ("{where} holds {what}: is this a copy pointed at another referee's mailbox? Nothing "
           "was read; point [mailbox] at this referee's own, or, if this database should take "
           "it over, run: referee poll --adopt-mailbox (the mail there now stays unread; what "
           "comes after is read)")


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    (tmp_path / "club").mkdir()
    p = Post(mailstack, tmp_path / "club")
    yield p
    p.close()


def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REFEREE), "-c", str(config), *args], cwd=config.parent,
                          capture_output=True, text=True, timeout=120, check=False)


def seen_flags(stack: MailStack) -> list[bool]:
    """Whether each mail of the referee's INBOX is marked read, oldest first."""
    with stack.imap("referee") as client:
        client.select_folder("INBOX", readonly=True)
        flags = client.get_flags(client.search(["ALL"]))
    return [b"\\Seen" in flags[uid] for uid in sorted(flags)]


def outbox_rows(config: Path) -> int:
    with sqlite3.connect(config.parent / "referee.db") as db:
        return int(db.execute("SELECT count(*) FROM outbox").fetchone()[0])


def test_a_staging_copy_on_the_clubs_mailbox_reads_nothing_until_it_adopts_it(
        post: Post, tmp_path: Path) -> None:
    made = cli(post.config_path, "game", "new", "--at-once", "goofspiel", "--player",
               "alice@example.test",
               "--player", "bob@example.test")
    assert made.returncode == 0, made.stderr
    tag = made.stdout.strip()
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    post.write("alice", "bid 3", subject=f"Re: [{tag}] Round 1")
    post.stack.wait_for("referee", 1)
    # The staging copy: the same mailbox, a database of its own, fresh.
    (tmp_path / "staging").mkdir()
    staging = tmp_path / "staging" / "referee.toml"
    write_config(staging, post.stack)
    assert cli(staging, "init").returncode == 0

    refused = cli(staging, "poll")
    line = REFUSED.format(where=f"the mailbox imap:{REF}/INBOX",
                          what=f"mail about games this database does not know ({tag})")
    assert (refused.stderr, refused.returncode) == (f"referee: {line}\n", EX_CONFIG)
    assert seen_flags(post.stack) == [False]
    assert outbox_rows(staging) == 0
    check = cli(staging, "check")
    assert check.returncode == EX_CONFIG
    assert f"mailbox  FAIL {line}\n" in check.stdout
    # The last error, as long as status keeps one.
    assert f": {line[:200]}\n" in cli(staging, "status").stdout

    adopted = cli(staging, "poll", "--adopt-mailbox")
    assert (adopted.returncode, adopted.stderr) == (0, "")
    assert adopted.stdout == ("the mailbox is this database's now: the 1 mail(s) in it stay "
                              "unread; what comes from now on is read\n")
    assert seen_flags(post.stack) == [False]
    assert outbox_rows(staging) == 0
    post.assert_no_more_mail("alice", "bob")
    # The club's referee finds Alice's bid where it was.
    assert cli(post.config_path, "poll").returncode == 0
    assert "DONE (bid 3)" in body(post.new_mail("alice", 1)[0])
    # Mail that comes after the adoption is the staging copy's to read.
    post.write("carol", "hello, who is playing?", subject="a question")
    post.stack.wait_for("referee", 2)
    assert cli(staging, "poll").returncode == 0
    with sqlite3.connect(tmp_path / "staging" / "referee.db") as db:
        assert db.execute("SELECT sender FROM inbound").fetchall() == [("carol@example.test",)]


# -- a Maildir ------------------------------------------------------------------------

def maildir_club(folder: Path, *mails: str) -> Path:
    (folder / "referee.toml").write_text(MAILDIRS, encoding="utf-8")
    for sub in ("tmp", "new", "cur"):
        (folder / "in" / sub).mkdir(parents=True)
    for n, text in enumerate(mails):
        (folder / "in" / "new" / f"{n}.mail").write_text(text, encoding="utf-8")
    assert cli(folder / "referee.toml", "init").returncode == 0
    return folder / "referee.toml"


#: The referee's own report, come back to it through the club's list.
LIST_COPY = ("From: PBM Referee <referee@club.test>\nTo: players@club.test\n"
             "Subject: [goofspiel-3] Round 2\nMessage-ID: <pbm.12.goofspiel-3.ab@club.test>\n"
             "X-Referee-Mail: report\n\nROUND 2\n")


def test_a_fresh_database_on_a_maildir_holding_the_referees_own_mail_refuses_it(
        tmp_path: Path) -> None:
    config = maildir_club(tmp_path, LIST_COPY)
    line = REFUSED.format(where=f"the Maildir {tmp_path}/in",
                          what="mail about games this database does not know (goofspiel-3) "
                               "and 1 mail(s) a referee sent")
    refused = cli(config, "poll")
    assert (refused.stderr, refused.returncode) == (f"referee: {line}\n", EX_CONFIG)
    assert [p.name for p in (tmp_path / "in" / "new").iterdir()] == ["0.mail"]  # unmarked
    check = cli(config, "check")
    assert (check.returncode, f"mailbox  FAIL {line}\n" in check.stdout) == (EX_CONFIG, True)

    adopted = cli(config, "poll", "--adopt-mailbox")
    assert (adopted.returncode, adopted.stderr) == (0, "")
    assert [p.name for p in (tmp_path / "in" / "cur").iterdir()] == ["0.mail:2,S"]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out" / "new").iterdir())
    assert cli(config, "check").returncode == 0
    again = cli(config, "poll", "--adopt-mailbox")
    assert (again.returncode, again.stdout) == (
        0, "this database reads its mailbox already: nothing to adopt\n")


def test_a_new_install_whose_mailbox_holds_old_unrelated_mail_reads_it(tmp_path: Path) -> None:
    config = maildir_club(tmp_path, "From: mallory@elsewhere.test\nTo: referee@club.test\n"
                                    "Subject: hello\nMessage-ID: <1@elsewhere.test>\n\nhi\n")
    run = cli(config, "poll")
    assert (run.returncode, run.stderr) == (0, "")
    assert len(list((tmp_path / "out" / "new").iterdir())) == 1  # answered, as ever


def test_the_daemon_stops_on_another_referees_mailbox(tmp_path: Path) -> None:
    config = maildir_club(tmp_path, LIST_COPY)
    run = subprocess.run([str(REFEREE), "-c", str(config), "run"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == EX_CONFIG
    line = REFUSED.format(where=f"the Maildir {tmp_path}/in",
                          what="mail about games this database does not know (goofspiel-3) "
                               "and 1 mail(s) a referee sent")
    assert f"ERROR referee.scheduler: {line}; stopping\n" in run.stderr
    assert "Traceback" not in run.stderr
    assert [p.name for p in (tmp_path / "in" / "new").iterdir()] == ["0.mail"]
