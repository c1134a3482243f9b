"""``referee check``, and every mail server failure of ``check``, ``poll`` and
``run`` as one line naming the key, with its own exit code (sysexits.h),
against the suite's real Dovecot and Postfix."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from referee.check import EX_CONFIG, EX_NOHOST, EX_NOPERM, EX_UNAVAILABLE
from referee.cli import main
from referee.config import load_config
from referee.service import Referee, now_utc
from tests.mailstack import GIVE_UP, MailStack
from tests.test_e2e import REF, toml_value

UNKNOWN_HOST = "no-such-host.invalid"


def write(path: Path, stack: MailStack, mailbox: dict[str, object] | None = None,
          smtp: dict[str, object] | None = None, auth: dict[str, object] | None = None) -> Path:
    sections: dict[str, dict[str, object]] = {
        "referee": {"address": REF, "database": "sqlite:///referee.db"},
        "mailbox": {"kind": "imap", "host": stack.host, "port": stack.imap_port,
                    "username": REF, "password": stack.password, "security": "none",
                    **(mailbox or {})},
        "smtp": {"kind": "smtp", "host": stack.host, "port": stack.smtp_port,
                 "security": "none", "timeout": "10s", **(smtp or {})},
        "auth": dict(auth or {}),
    }
    path.write_text("".join(
        f"[{name}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in keys.items()) + "\n"
        for name, keys in sections.items()), encoding="utf-8")
    return path


#: Each failure an operator can cause: the keys, the start of the one line, the exit code.
MAILBOX_FAILURES = {
    "wrong password": ({"password": "not-the-password"},
                       "[mailbox] password: the IMAP server at 127.0.0.1:", EX_NOPERM),
    "closed port": ({"port": 1}, "[mailbox] port: nothing answers at 127.0.0.1:1 ",
                    EX_UNAVAILABLE),
    "ssl on a plain port": ({"security": "ssl"},
                            "[mailbox] security: the IMAP server at 127.0.0.1:", EX_CONFIG),
    "starttls where there is none": ({"security": "starttls"},
                                     "[mailbox] security: the IMAP server at 127.0.0.1:",
                                     EX_CONFIG),
    "unknown host": ({"host": UNKNOWN_HOST},
                     f"[mailbox] host: '{UNKNOWN_HOST}' is not a host name that resolves",
                     EX_NOHOST),
}
SMTP_FAILURES = {
    "closed port": ({"port": 1}, "[smtp] port: nothing answers at 127.0.0.1:1 ",
                    EX_UNAVAILABLE),
    "ssl on a plain port": ({"security": "ssl"},
                            "[smtp] security: the SMTP relay at 127.0.0.1:", EX_CONFIG),
    "starttls where there is none": ({"security": "starttls"},
                                     "[smtp] security: the SMTP relay at 127.0.0.1:", EX_CONFIG),
    "unknown host": ({"host": UNKNOWN_HOST},
                     f"[smtp] host: '{UNKNOWN_HOST}' is not a host name that resolves",
                     EX_NOHOST),
    "a login the relay does not take": ({"username": REF, "password": "x"},
                                        "[smtp] username: the SMTP relay at 127.0.0.1:",
                                        EX_CONFIG),
}


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str, start: str) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith(f"referee: {start}"), err
    assert "Traceback" not in err


def _run(config: Path, start: str, exit_code: int) -> None:
    """``referee run`` refuses to start on a server that will not work as
    configured; one that does not answer, or whose name does not resolve
    (yet: DNS comes up late after a boot), is said once and retried."""
    command = [sys.executable, "-m", "referee.cli", "-c", str(config), "run"]
    if exit_code not in (EX_UNAVAILABLE, EX_NOHOST):
        run = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        assert run.returncode == exit_code
        _one_line(run.stderr, start)
        return
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        first = proc.stderr.readline()
        assert proc.stdout.readline().startswith("referee running for")  # signals handled
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=GIVE_UP) == 0
        assert f" WARNING referee.scheduler: {start}" in first
        assert first.endswith("; will try again\n")
        assert "Traceback" not in proc.stderr.read()


def test_check_says_ok_for_each_part(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path / "referee.toml", mailstack)
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    mailstack.clear("referee")
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == 0, out
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["config", "OK"], ["database", "OK"], ["lock", "OK"], ["mailbox", "OK"],
        ["smtp", "OK"], ["send", "OK"],
        ["auth", "WARN"], ["auth", "WARN"]]  # the default [auth]: see below
    assert f"IMAP {REF} at 127.0.0.1:{mailstack.imap_port} (none), folder INBOX" in out
    # The relay took a test mail to the referee, and it arrived (then was deleted).
    assert f"send     OK   a test mail to {REF} reached INBOX\n" in out
    assert mailstack.count("referee") == 0


def test_check_fails_when_the_relay_refuses_mail_to_the_referee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Login and connection are fine, but the relay takes no mail for the
    referee's address: every reply would fail, so check says which key."""
    from tests.smtpd import Refusing, smtpd

    refusing = Refusing()
    refusing.permanent.add(REF)
    with smtpd(refusing) as port:
        config = tmp_path / "referee.toml"
        config.write_text(
            f'[referee]\naddress = "{REF}"\n[mailbox]\nkind = "maildir"\npath = "in"\n'
            f'[smtp]\nkind = "smtp"\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\n',
            encoding="utf-8")
        assert main(["-c", str(config), "init"]) == 0
        capsys.readouterr()
        code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == EX_CONFIG, out
    assert f"smtp     OK   SMTP relay at 127.0.0.1:{port} (none, no login)\n" in out
    (send,) = [ln for ln in out.splitlines() if ln.startswith("send")]
    assert send == (f"send     FAIL [referee] address: the SMTP relay at 127.0.0.1:{port} "
                    f"refused a test mail from and to {REF} (recipients refused: {REF}: "
                    "550 5.1.1 no such user); set the referee's own address, one the relay "
                    "lets send from and delivers to")


#: What ``check`` says of the default [auth], one line a finding: what is
#: open, and the key that closes it.
OPEN_AUTH = [
    'auth     WARN [auth] require = "none": a mail counts for the player its From names, and '
    'anyone can write any From; set require = "verified" so that only a player\'s own mail '
    "counts",
    "auth     WARN [auth] authserv_id is empty: nothing vouches for strangers, so one who asks "
    "to join is seated only after replying to a confirmation, and strangers (forged From "
    "lines too) get up to 50 replies a day ([limits] stranger_replies_per_day); set "
    "authserv_id to the id of your mail server's Authentication-Results",
]


@pytest.mark.parametrize(("auth", "warned"), [
    ({}, OPEN_AUTH),
    ({"authserv_id": "mx.club.test"}, OPEN_AUTH[:1]),
    ({"require": "verified", "authserv_id": "mx.club.test"}, []),
])
def test_check_warns_of_each_door_the_auth_config_leaves_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], auth: dict[str, str],
    warned: list[str],
) -> None:
    """The embedded set-up (Maildir in and out), so no server is asked."""
    keys = "".join(f'{k} = "{v}"\n' for k, v in auth.items())
    config = tmp_path / "referee.toml"
    config.write_text(f'[referee]\naddress = "{REF}"\n[auth]\n{keys}', encoding="utf-8")
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == 0, out
    assert [ln for ln in out.splitlines() if ln.startswith("auth     WARN")] == warned


def test_check_says_init_is_needed_before_init(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path / "referee.toml", mailstack)
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == EX_CONFIG
    assert (f"database FAIL [referee] database: sqlite:///{tmp_path.resolve()}/referee.db is "
            f"not set up; run: referee --config {config} init\n") in out


@pytest.mark.parametrize("failure", MAILBOX_FAILURES)
def test_a_mailbox_failure_is_one_line_naming_the_key_in_check_poll_and_run(
    failure: str, tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    keys, start, exit_code = MAILBOX_FAILURES[failure]
    config = write(tmp_path / "referee.toml", mailstack, mailbox=keys)
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == exit_code
    (line,) = [ln for ln in out.splitlines() if ln.startswith("mailbox")]
    assert line.startswith(f"mailbox  FAIL {start}"), line
    assert "smtp     OK" in out
    code, out, err = _main(["-c", str(config), "poll"], capsys)
    assert (code, out) == (exit_code, "")
    _one_line(err, start)
    _run(config, start, exit_code)


@pytest.mark.parametrize("failure", SMTP_FAILURES)
def test_a_relay_failure_is_one_line_naming_the_key_in_check_poll_and_run(
    failure: str, tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    keys, start, exit_code = SMTP_FAILURES[failure]
    config = write(tmp_path / "referee.toml", mailstack, smtp=keys)
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == exit_code
    (line,) = [ln for ln in out.splitlines() if ln.startswith("smtp")]
    assert line.startswith(f"smtp     FAIL {start}"), line
    # A game's opening cannot go out: game new says so, and so does the next poll.
    code, out, err = _main(["-c", str(config), "game", "new", "--at-once", "goofspiel",
                            "--player", "alice@example.test", "--player", "bob@example.test"],
                           capsys)
    assert (code, out) == (0, "goofspiel-1\n")
    warning, _, err = err.partition("\n")  # --at-once: the operator's seed alone
    assert warning.startswith("referee: warning: goofspiel-1 started at once"), warning
    assert err.startswith(f"referee: the mail is queued, not sent: {start}"), err
    later = (now_utc() + timedelta(minutes=10)).isoformat()
    code, out, err = _main(["-c", str(config), "poll", "--now", later], capsys)
    assert (code, out) == (exit_code, "")
    _one_line(err, start)
    _run(config, start, exit_code)


def test_the_daemon_gives_up_when_the_login_is_refused_instead_of_retrying(
    tmp_path: Path, mailstack: MailStack, caplog: pytest.LogCaptureFixture
) -> None:
    """The password was changed under a running daemon: it stops with the
    one line, at ERROR, and exit code 77."""
    from referee.scheduler import Daemon

    config = write(tmp_path / "referee.toml", mailstack, mailbox={"password": "changed"})
    assert main(["-c", str(config), "init"]) == 0
    referee = Referee(load_config(config))
    daemon = Daemon(referee)
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(daemon.run()))
    runner.start()
    runner.join(timeout=GIVE_UP)
    stopped = not runner.is_alive()
    daemon.stop.set()
    runner.join()
    referee.close()
    assert stopped and result == [EX_NOPERM]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith("[mailbox] password: the IMAP server")
    assert errors[0].endswith("; stopping")


def test_check_warns_when_verified_mode_has_no_authserv_id_and_probes_plus_addressing(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    mailstack.clear("referee")
    config = write(tmp_path / "referee.toml", mailstack, auth={"require": "verified"})
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == 0, out
    assert 'auth     WARN [auth] require = "verified" with no authserv_id' in out
    (plus,) = [ln for ln in out.splitlines() if ln.startswith("plus")]
    assert plus.startswith("plus     OK   a test mail to referee+check-")
    assert plus.endswith("reached INBOX")
    assert mailstack.count("referee") == 0  # the probe is deleted


def test_check_fails_verified_mode_when_the_server_keeps_a_forged_authentication_results(
    tmp_path: Path, mailstack: MailStack, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suite's Postfix and Dovecot run no DMARC milter, so nothing strips
    an Authentication-Results header a sender writes with the server's own
    authserv-id: the probe carries one, and check says it survived."""
    mailstack.clear("referee")
    config = write(tmp_path / "referee.toml", mailstack,
                   auth={"require": "verified", "authserv_id": "mail.example.test"})
    assert main(["-c", str(config), "init"]) == 0
    capsys.readouterr()
    code, out, _ = _main(["-c", str(config), "check"], capsys)
    assert code == EX_CONFIG, out
    fail = [ln for ln in out.splitlines() if ln.startswith("auth     FAIL")]
    assert fail == [
        "auth     FAIL [auth] authserv_id: the server kept an Authentication-Results header "
        "of mail.example.test that the sender wrote (the probe's): anyone could write "
        "themselves a pass; make the server strip such headers from incoming mail (see the "
        "README), or unset authserv_id"], out
    assert mailstack.count("referee") == 0  # the probe is deleted
