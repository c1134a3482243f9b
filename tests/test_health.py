"""Health and the outbox: ``status`` shows the outbox, the last completed
pass and the last error; ``referee outbox`` lists and retries; ``status
--max-age`` says whether passes still complete (HEALTHCHECK)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from referee.cli import main
from referee.service import now_utc
from tests.mailstack import MailStack
from tests.test_check import write

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
    assert main([*cli, "game", "new", "goofspiel", "--player", STRANGER,
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
    assert (code, out) == (0, "")
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
