"""Logs an operator can read: a line per mail, per send and per fired
deadline, in a file and as JSON; poll silent on success; no secret logged."""

from __future__ import annotations

import json
import logging
import mailbox
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.cli import main
from referee.logs import setup_logging
from tests.disks import SmallDisk
from tests.disks import small_disks as small_disks  # the fixture
from tests.test_cli import config as config  # the fixture

ALICE, BOB = "alice@club.test", "bob@club.test"


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
        h.close()
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)


def _mail(config: Path, sender: str, text: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "referee@club.test", "[goofspiel-1] bid"
    msg["Message-ID"] = f"<{sender.split('@')[0]}.{abs(hash(text))}@club.test>"
    msg.set_content(text)
    mailbox.Maildir(config.parent / "in", create=True).add(msg)


def test_poll_is_silent_on_success_and_prints_its_summary_with_v(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-c", str(config), "game", "new", "--at-once", "goofspiel", "--player", ALICE,
                 "--player", BOB]) == 0
    capsys.readouterr()
    assert main(["-c", str(config), "poll"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["-c", str(config), "-v", "poll"]) == 0
    assert capsys.readouterr().out.startswith("read 0 message(s), processed 0")


def test_a_line_per_mail_send_and_deadline_in_a_json_log_file_with_no_secret(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = ["-c", str(config), "--log-level", "info", "--log-file",
           str(config.parent / "referee.log"), "--log-format", "json"]
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", ALICE, "--player", BOB,
                 "--now", "2026-01-05T09:00:00"]) == 0
    # The operator is warned that no player's entropy is mixed (not a log line).
    assert capsys.readouterr().err.startswith("referee: warning: goofspiel-1 started at once")
    _mail(config, ALICE, "bid 4\nbid 99")
    assert main([*cli, "poll", "--now", "2026-01-05T10:00:00"]) == 0
    assert main([*cli, "poll", "--now", "2026-01-09T10:00:00"]) == 0  # Bob's deadline passed
    assert capsys.readouterr().err == ""
    text = (config.parent / "referee.log").read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    mails = [e for e in lines if e["logger"] == "referee.service.core"]
    assert [(e["sender"], e["game"], e["outcome"]) for e in mails] == [
        (ALICE, "goofspiel-1", "processed")]
    assert mails[0]["message"] == \
        f"mail from {ALICE} about goofspiel-1: processed (1 applied, 1 refused)"
    sends = [e for e in lines if e["logger"] == "referee.service.outgoing.outbox"]
    assert sends and all(e["message"].startswith("outbox ") for e in sends)
    # Each send names its game, in the line and as a field: grep finds a game's mail.
    assert all(e["message"].endswith(" game=goofspiel-1") for e in sends)
    assert all(e["game"] == "goofspiel-1" for e in sends)
    assert any(e["message"].endswith(f"for {ALICE} game=goofspiel-1")
               for e in sends)  # Alice's transcript
    deadlines = [e["message"] for e in lines if e["logger"] == "referee.service.play.deadlines"]
    assert deadlines == ["goofspiel-1: the deadline of Bob passed; the rules move for them"]
    assert "bid 4" not in text and "bid 99" not in text
    assert not [e for e in lines if not e["logger"].startswith("referee")]  # no library noise


def test_a_json_log_on_a_full_disk_says_once_and_counts_the_lines_it_lost(
        tmp_path: Path, small_disks: Callable[..., SmallDisk],
        capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk costs the lines it refused, never the referee: stderr says
    so once, and when the file takes lines again it says how many it lost."""
    disk = small_disks(tmp_path / "logs")
    path = disk.path / "referee.log"
    setup_logging("info", path, "json")
    log = logging.getLogger("referee.test")
    log.info("before")
    disk.fill()
    for n in range(200):  # more than the last block of the file holds
        log.info("while full %d", n)
    assert capsys.readouterr().err == (
        f"referee: --log-file {path}: cannot write it: the disk is full (No space left on "
        "device); the referee goes on, and its log lines are lost until it can\n")
    disk.free()
    log.info("after")
    err = capsys.readouterr().err
    assert err.startswith(f"referee: --log-file {path}: written again; ")
    lost = int(err.split("; ")[1].split()[0])
    note, after = [json.loads(line) for line in path.read_text().splitlines()[-2:]]
    assert (note["level"], note["logger"], note["message"]) == (
        "warning", "referee.logs",
        f"{lost} log line(s) were lost while {path} could not be written (the disk is full)")
    assert after["message"] == "after"
    written = path.read_text()
    assert 0 < lost <= 200 and "while full 199" not in written
    assert written.startswith('{"time"') and '"message": "before"' in written
