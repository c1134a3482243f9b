"""Health and the outbox: ``status`` shows the outbox, failed inbound mail,
the last completed pass and the last error; ``referee outbox`` and
``referee inbound`` list and retry; ``status --max-age`` says whether passes
still complete (HEALTHCHECK)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.cli import main
from referee.config import load_config
from referee.service import Referee, now_utc
from referee.service.health import _subject
from referee.service.outgoing.delivery import Delivery
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_check import write
from tests.test_e2e import REF

#: Refused for good by the suite's Postfix (554 Relay access denied).
STRANGER, OTHER = "someone@elsewhere.invalid", "other@elsewhere.invalid"


def _out(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_status_shows_the_outbox_the_last_pass_and_the_last_error_and_outbox_retries(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    mailstack.clear_all()  # the stack is the session's: mail of earlier tests would be read
    config = write(tmp_path / "referee.toml", mailstack, smtp={"port": 1})
    cli = ["-c", str(config)]
    assert main([*cli, "init"]) == 0
    capsys.readouterr()
    code, out, _ = _out([*cli, "status", "--max-age", "15m"], capsys)
    assert code == 1 and out.startswith("outbox: 0 waiting\nlast pass: none yet\n")
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", STRANGER,
                 "--player", OTHER]) == 0
    capsys.readouterr()
    code, out, _ = _out([*cli, "status"], capsys)
    first = out.splitlines()[0]
    assert re.fullmatch(r"outbox: [1-9]\d* waiting, the oldest waiting since \S+Z", first)
    assert "last error" not in out  # game new said it, and nothing ran a pass
    later = (now_utc() + timedelta(minutes=10)).isoformat()
    assert main([*cli, "poll", "--now", later]) == 69
    code, out, _ = _out([*cli, "status"], capsys)
    assert re.search(r"^last error: \S+Z: \[smtp\] port: nothing answers at 127\.0\.0\.1:1 ",
                     out, re.M)
    # The relay is back, and refuses the players' addresses for good.
    write(tmp_path / "referee.toml", mailstack)
    later = (now_utc() + timedelta(minutes=20)).isoformat()
    code, out, err = _out([*cli, "poll", "--now", later], capsys)
    # Mail that will never arrive is trouble: a line for each (the log's)
    # and the pass's sum last, with a code cron and monitoring see.
    assert (code, out) == (1, "")
    assert re.fullmatch(r"(.* ERROR referee\.service\.outgoing\.outbox: outbox \d+ failed for "
                        r"good: .*\n){2}referee: 2 mail\(s\) failed for good in this pass: the "
                        r"relay refused them \(see: referee outbox\)\n", err), err
    code, out, _ = _out([*cli, "status", "--max-age", "15m"], capsys)
    assert code == 0
    assert re.search(r"^outbox: 0 waiting, [1-9] failed \(see: referee outbox\)$", out,
                     re.M), out
    assert re.search(r"^last pass: \S+Z \(read 0 message\(s\), processed 0, timeouts 0, "
                     r"sent 0\)$", out, re.M), out
    code, out, _ = _out([*cli, "outbox"], capsys)
    oid = re.findall(r"^ +(\d+)  failed ", out, re.M)[-1]
    assert f"goofspiel-1  to {STRANGER}" in out and "'[goofspiel-1]" in out
    assert "(3 attempt(s), failed for good)" in out and "Relay access denied" in out
    code, out, _ = _out([*cli, "outbox", "--retry", oid], capsys)
    assert (code, out) == (0, "1 mail(s) queued again\n")  # and tried at once: refused again
    code, out, _ = _out([*cli, "outbox"], capsys)
    assert re.search(rf"^ +{oid}  failed .*\(4 attempt\(s\), failed for good\)$", out, re.M)
    code, _, err = _out([*cli, "outbox", "--retry", "9999"], capsys)
    assert code == 1 and "There is no unsent mail 9999 in the outbox." in err


def test_failed_inbound_mail_shows_in_status_and_inbound_reads_it_again_from_imap_once(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mailstack.clear_all()  # the stack is the session's: mail of earlier tests would be read
    config = write(tmp_path / "referee.toml", mailstack)
    cli = ["-c", str(config)]
    alice, bob = mailstack.address("alice"), mailstack.address("bob")
    assert main([*cli, "init"]) == 0
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", alice, "--player",
                 bob]) == 0
    capsys.readouterr()
    mailstack.wait_for("alice", 1)
    mailstack.send(f"From: {alice}\r\nTo: {REF}\r\nSubject: [goofspiel-1] my bid\r\n"
                   f"Message-ID: <bid-1@example.test>\r\n\r\nbid 4\r\n", alice, REF)
    mailstack.wait_for("referee", 1)
    for built in ("answer", "reply"):  # a fault of ours: the answer, and the note of a fault
        monkeypatch.setattr(Delivery, built, lambda *_a, **_k: 1 / 0)
    later = (now_utc() + timedelta(minutes=1)).isoformat()
    assert main([*cli, "poll", "--now", later]) == 0
    monkeypatch.undo()
    code, out, _ = _out([*cli, "status"], capsys)
    found = re.search(r"^inbound: 1 failed \(see: referee inbound\)\n"
                      r"  (\d+) at \S+Z from alice@example\.test: internal error: "
                      r"ZeroDivisionError: division by zero$", out, re.M)
    assert found, out
    iid = found.group(1)
    code, out, _ = _out([*cli, "inbound", "--json"], capsys)
    (row,) = json.loads(out)
    assert row["source"].startswith(f"imap:{REF}/INBOX;UIDVALIDITY=")
    code, out, _ = _out([*cli, "inbound", "--retry", iid], capsys)
    assert (code, out) == (0, f"1 mail(s) to read again\n{iid:>6}  read again: processed\n")
    answers = [x for x in mailstack.wait_for("alice", 2)
               if x["In-Reply-To"] == "<bid-1@example.test>"]
    assert len(answers) == 1 and "DONE (bid 4)" in str(answers[0].get_body(("plain",)))
    later = (now_utc() + timedelta(minutes=2)).isoformat()
    assert main([*cli, "poll", "--now", later]) == 0  # nothing read twice
    code, out, _ = _out([*cli, "status"], capsys)
    assert "inbound:" not in out
    referee = Referee(load_config(config))
    try:
        with referee.sessions() as db:
            moves = [a.action["args"] for a in db.scalars(
                select(m.ActionLog).where(m.ActionLog.source == "player"))]
            replies = [r for r in db.scalars(select(m.Outbox))
                       if "In-Reply-To: <bid-1@example.test>" in r.raw]
    finally:
        referee.close()
    assert moves == [[4]] and len(replies) == 1  # refereed once, answered once


def test_the_outbox_shows_a_subject_as_its_reader_sees_it() -> None:
    """RFC 2047 encoded words, as the composer writes a non-ASCII subject,
    are decoded for ``referee outbox``."""
    raw = ("Subject: =?utf-8?q?=5Bgoofspiel-1=5D_Round_6=3A_Alice_takes_5_=E2=80=94_GAME_OVE?=\n"
           " =?utf-8?q?R=3A_Bob_wins?=\nTo: bob@example.test\n\nbody\n")
    assert _subject(raw) == "[goofspiel-1] Round 6: Alice takes 5 — GAME OVER: Bob wins"


def test_health_reads_the_last_pass_alone_and_says_whether_it_is_recent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The image's HEALTHCHECK, each minute: whatever the number of games,
    it reads no game, only the last pass."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    config = tmp_path / "referee.toml"
    config.write_text((Path(__file__).resolve().parents[1] / "config.example.toml").read_text())
    cli = ["-c", str(config)]
    assert main([*cli, "init"]) == 0
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "a@example.org",
                 "--player", "b@example.org"]) == 0
    capsys.readouterr()
    assert _out([*cli, "health"], capsys) == (
        1, "last pass: none yet\n", "referee: no pass completed in the last 15 minutes\n")
    assert main([*cli, "poll"]) == 0
    statements: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        code, out, err = _out([*cli, "health", "--max-age", "5m"], capsys)
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert (code, err) == (0, "")
    assert re.fullmatch(r"last pass: \S+Z \(read 0 message\(s\), processed 0, timeouts 0, "
                        r"sent \d+\)\n", out), out
    assert statements and not [s for s in statements if re.search(r"\b(games|seats)\b", s)]
