"""A relay that refuses the referee's SMTP login (a wrong ``[smtp] password``):
one line naming the key and exit 77 (EX_NOPERM), in ``check`` and ``poll``
alike. The suite's Postfix offers no AUTH, so an aiosmtpd relay on loopback
that demands it stands in (RFC 4954: 535 for bad credentials)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import AuthResult

from referee.check import EX_NOPERM
from referee.cli import main
from referee.service import now_utc
from tests.smtpd import smtpd


class Refusing:
    """Takes mail only after a login, and refuses every login."""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        return "250 OK"


def _refuse(server: Any, session: Any, envelope: Any, mechanism: str,
            auth_data: Any) -> AuthResult:
    return AuthResult(success=False, handled=False)


@pytest.fixture
def relay() -> Iterator[int]:
    with smtpd(Refusing(), authenticator=_refuse, auth_required=True,
               auth_require_tls=False) as port:
        yield port


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_refused_smtp_login_is_one_line_naming_the_password_in_check_and_poll(
        tmp_path: Path, relay: int, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "referee.toml"
    config.write_text(
        '[referee]\naddress = "referee@club.test"\n'
        '[mailbox]\nkind = "maildir"\npath = "in"\n'
        f'[smtp]\nkind = "smtp"\nhost = "127.0.0.1"\nport = {relay}\nsecurity = "none"\n'
        'username = "referee"\npassword = "wrong"\ntimeout = "5s"\n', encoding="utf-8")
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    assert main(["-c", str(config), "check"]) == EX_NOPERM
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("smtp")]
    assert line.startswith("smtp     FAIL [smtp] password: the SMTP relay at 127.0.0.1:"), line
    assert "check [smtp] username and password" in line
    main(["-c", str(config), "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
          "--player", "bob@club.test"])
    assert "referee: the mail is queued, not sent: [smtp] password:" in capsys.readouterr().err
    later = (now_utc() + timedelta(minutes=10)).isoformat()  # the opening's retry is due
    assert main(["-c", str(config), "poll", "--now", later]) == EX_NOPERM
    err = capsys.readouterr().err
    assert err.startswith("referee: [smtp] password: the SMTP relay at 127.0.0.1:"), err
    assert err.count("\n") == 1 and "Traceback" not in err
