"""A private Postfix + Dovecot on 127.0.0.1 for the test suite.

The servers are started by ``.ci/mailstack/start.sh`` with all their state in one
directory (see ``shared/MAILSTACK.md``)::

    client --SMTP--> Postfix 127.0.0.1:smtp_port --LMTP--> Dovecot --> DIR/mail/...
    client --IMAP--> Dovecot 127.0.0.1:imap_port

Domain ``example.test``; users :data:`USERS`, each with password ``secret``; plus
addressing (``referee+tok@example.test`` lands in referee's INBOX); the game list
``players@example.test`` expands to every player and the referee (a plain alias: no
``List-Id`` header is added, and the sender gets its own copy); ``ghost@example.test``
is accepted and then bounces, with a real delivery report to the envelope sender.
Every other domain is refused at RCPT, so nothing leaves the machine.

Tests get a running stack from the session fixture ``mailstack`` (``tests/conftest.py``);
the stack is shared by the whole session, so a test that counts messages calls
:meth:`MailStack.clear` (or :meth:`MailStack.clear_all`) first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import smtplib
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from pathlib import Path

from imapclient import IMAPClient

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = REPO_ROOT / ".ci" / "mailstack"

PLAYERS: tuple[str, ...] = ("alice", "bob", "carol", "dave", "erin", "frank")
USERS: tuple[str, ...] = ("referee", *PLAYERS, "list-owner")
LIST_LOCALPART = "players"

#: Environment variables that turn "cannot start the mail stack" from a skip into a failure.
REQUIRE_ENV = ("CI", "REFEREE_REQUIRE_MAILSTACK")
#: Set to keep the session's mail stack directory (logs, Maildirs) after the run.
KEEP_ENV = "REFEREE_KEEP_MAILSTACK"

_INSTALL_TIMEOUT = 900.0
_SCRIPT_TIMEOUT = 120.0
#: Seconds a test waits for mail, a process or a thread before it gives up: a
#: guard against a hang, never a measure of speed, so generous that a machine
#: busy with other heavy jobs never meets it (speed is measured under bench/).
GIVE_UP = 120.0


class MailStackError(RuntimeError):
    """The mail stack could not be installed, started or stopped."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def _run(args: Sequence[str | Path], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [str(a) for a in args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MailStackError(f"{' '.join(map(str, args))}: {exc}") from exc


def _failure(what: str, proc: subprocess.CompletedProcess[str]) -> MailStackError:
    output = "\n".join(s.strip() for s in (proc.stdout, proc.stderr) if s.strip())
    return MailStackError(f"{what} failed (exit {proc.returncode}):\n{output}")


@dataclass(frozen=True, kw_only=True)
class MailStack:
    """A running private Postfix + Dovecot; build it with :meth:`start`."""

    dir: Path
    host: str = "127.0.0.1"
    smtp_port: int
    imap_port: int
    domain: str = "example.test"
    password: str = "secret"
    lmtp_port: int = 0
    users: tuple[str, ...] = field(default=USERS)

    # ---- life cycle -----------------------------------------------------------------

    @staticmethod
    def install() -> None:
        """Install Postfix and Dovecot if missing (a quick no-op once installed).

        Installing needs root; raises :class:`MailStackError` otherwise.
        """
        proc = _run(["bash", SCRIPTS / "install.sh"], _INSTALL_TIMEOUT)
        if proc.returncode != 0:
            raise _failure("installing the mail stack (.ci/mailstack/install.sh)", proc)

    @classmethod
    def start(cls, dir: str | Path) -> MailStack:
        """Install if needed, then start the servers with their state in ``dir``.

        ``dir`` must be at most 70 characters long and reachable by unprivileged users
        (no 0700 parent); it is created if missing.  Ports are picked free.  Needs root.
        Raises :class:`MailStackError` with the scripts' diagnostics on failure.
        """
        cls.install()
        path = Path(dir).absolute()
        proc = _run(["bash", SCRIPTS / "start.sh", path], _SCRIPT_TIMEOUT)
        if proc.returncode != 0:
            raise _failure(f"starting the mail stack in {path}", proc)
        values: dict[str, str] = {}
        for line in proc.stdout.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip()] = value.strip()
        try:
            return cls(
                dir=Path(values["MAILSTACK_DIR"]),
                host=values["MAIL_HOST"],
                smtp_port=int(values["SMTP_PORT"]),
                imap_port=int(values["IMAP_PORT"]),
                lmtp_port=int(values["LMTP_PORT"]),
                domain=values["MAIL_DOMAIN"],
                password=values["MAIL_PASSWORD"],
                users=tuple(values["MAIL_USERS"].split(",")),
            )
        except (KeyError, ValueError) as exc:
            raise MailStackError(f"unexpected output of start.sh: {proc.stdout!r}") from exc

    def stop(self) -> None:
        """Stop both servers and wait for all their processes (files stay in ``dir``)."""
        proc = _run(["bash", SCRIPTS / "stop.sh", self.dir], _SCRIPT_TIMEOUT)
        if proc.returncode != 0:
            raise _failure(f"stopping the mail stack in {self.dir}", proc)

    # ---- addresses ------------------------------------------------------------------

    def address(self, user: str, detail: str | None = None) -> str:
        """``user@example.test``, or ``user+detail@example.test`` with a detail."""
        local = user if detail is None else f"{user}+{detail}"
        return f"{local}@{self.domain}"

    @property
    def list_address(self) -> str:
        """The game list, ``players@example.test``: every player and the referee."""
        return self.address(LIST_LOCALPART)

    @property
    def players(self) -> tuple[str, ...]:
        return PLAYERS

    def _qualify(self, addr: str) -> str:
        return addr if "@" in addr or not addr else self.address(addr)

    # ---- SMTP -----------------------------------------------------------------------

    def smtp(self, timeout: float = GIVE_UP) -> smtplib.SMTP:
        """A new SMTP connection to Postfix (the caller closes it, e.g. ``with``)."""
        return smtplib.SMTP(self.host, self.smtp_port, timeout=timeout)

    def send(
        self,
        message: bytes | str | Message,
        mail_from: str,
        rcpt_tos: str | Sequence[str],
    ) -> dict[str, tuple[int, bytes]]:
        """Submit one message to Postfix over SMTP.

        ``message`` is raw bytes/str (sent as is) or an ``EmailMessage`` (serialised by
        ``smtplib.send_message``, Bcc removed).  ``mail_from`` is the envelope sender
        (``""`` for the null sender ``<>``); ``rcpt_tos`` one address or several.  Bare
        user names (no ``@``) get ``@example.test`` appended.  Returns smtplib's dict of
        refused recipients (empty when all were accepted); raises
        ``smtplib.SMTPRecipientsRefused`` when every recipient is refused.
        """
        rcpts = [rcpt_tos] if isinstance(rcpt_tos, str) else list(rcpt_tos)
        rcpts = [self._qualify(r) for r in rcpts]
        sender = self._qualify(mail_from)
        with self.smtp() as conn:
            if isinstance(message, Message):
                return conn.send_message(message, from_addr=sender, to_addrs=rcpts)
            return conn.sendmail(sender, rcpts, message)

    # ---- IMAP -----------------------------------------------------------------------

    @contextlib.contextmanager
    def imap(self, user: str) -> Iterator[IMAPClient]:
        """An IMAP connection logged in as ``user`` (no folder selected); logs out after."""
        client = IMAPClient(self.host, port=self.imap_port, ssl=False, timeout=GIVE_UP)
        try:
            client.login(self._login(user), self.password)
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def _login(self, user: str) -> str:
        return user.split("@", 1)[0]

    def count(self, user: str) -> int:
        """Number of messages in the user's INBOX."""
        with self.imap(user) as client:
            return self._count(client)

    @staticmethod
    def _count(client: IMAPClient) -> int:
        status = client.folder_status("INBOX", [b"MESSAGES"])
        return int(status[b"MESSAGES"])

    def fetch_all(self, user: str) -> list[EmailMessage]:
        """Every message in the user's INBOX, oldest first, without setting ``\\Seen``.

        Parsed with ``email.policy.default`` from the bytes as stored, so bodies keep
        their CRLF line endings (``get_content()`` gives ``"text\\r\\n"``).
        """
        with self.imap(user) as client:
            client.select_folder("INBOX", readonly=True)
            uids = client.search("ALL")
            if not uids:
                return []
            data = client.fetch(uids, [b"BODY.PEEK[]"])
        parser = BytesParser(policy=policy.default)
        return [parser.parsebytes(data[uid][b"BODY[]"]) for uid in sorted(data)]

    def wait_for(self, user: str, count: int, timeout: float = GIVE_UP) -> list[EmailMessage]:
        """Poll until the user's INBOX holds at least ``count`` messages; return them all.

        Raises ``TimeoutError`` (with the end of Postfix's log) if they do not arrive.
        """
        deadline = time.monotonic() + timeout
        with self.imap(user) as client:
            while True:
                have = self._count(client)
                if have >= count:
                    break
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"{self.address(user)} has {have} message(s) after {timeout} s, "
                        f"expected {count}; end of the Postfix log:\n{self.postfix_log(15)}"
                    )
                time.sleep(0.05)  # each STATUS rescans the Maildir
        return self.fetch_all(user)

    def clear(self, user: str) -> None:
        """Delete every message in the user's INBOX."""
        with self.imap(user) as client:
            client.select_folder("INBOX")
            uids = client.search("ALL")
            if uids:
                client.delete_messages(uids)
                client.expunge()

    def clear_all(self) -> None:
        """Empty every user's INBOX."""
        for user in self.users:
            self.clear(user)

    def kick(self, login: str) -> None:
        """Drop every IMAP session logged in as ``login``, as a server restart would.

        ``login`` exactly as the client logged in (``erin`` or ``erin@example.test``).
        Each session's imap process says ``* BYE`` and closes the connection.
        """
        proc = self._doveadm("kick", login)
        if proc.returncode != 0:
            raise _failure(f"kicking {login}", proc)

    def imap_pids(self, login: str) -> list[int]:
        """Process ids of Dovecot's imap processes serving ``login`` (``doveadm who``),
        the name exactly as the client logged in (``erin`` or ``erin@example.test``)."""
        proc = self._doveadm("who", "-1", login)
        if proc.returncode != 0:
            raise _failure(f"listing the sessions of {login}", proc)
        pids = []
        for line in proc.stdout.splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 3 and fields[0] == login and fields[2].isdigit():
                pids.append(int(fields[2]))
        return pids

    def crash_sessions(self, login: str) -> int:
        """SIGKILL the imap processes serving ``login``: their clients see the
        connection close with no ``BYE`` (a crash, or a restart that kills).
        Returns how many were killed."""
        pids = self.imap_pids(login)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def _doveadm(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run(["doveadm", "-c", self.dir / "dovecot" / "dovecot.conf", *args],
                    _SCRIPT_TIMEOUT)

    # ---- outages --------------------------------------------------------------------

    def stop_server(self, server: str, *, crash: bool = False) -> None:
        """Stop ``"dovecot"`` or ``"postfix"`` and wait for all its processes.

        By SIGTERM to each of its processes, as systemd stops a service (Dovecot's
        imap processes say ``* BYE``), or with ``crash`` by SIGKILL (clients see
        the connection close, nothing more).  The other server keeps running.
        """
        self._service("kill" if crash else "stop", server)

    def start_server(self, server: str) -> None:
        """Start ``"dovecot"`` or ``"postfix"`` again on its ports; returns once it answers."""
        self._service("start", server)

    def restart_server(self, server: str, *, crash: bool = False) -> None:
        """:meth:`stop_server` then :meth:`start_server` (about a second)."""
        self._service("crash-restart" if crash else "restart", server)

    @contextlib.contextmanager
    def server_down(self, server: str, *, crash: bool = False) -> Iterator[None]:
        """``server`` stopped inside the block and started again on leaving it,
        also when the block fails (the stack is shared by the whole session)."""
        self.stop_server(server, crash=crash)
        try:
            yield
        finally:
            self.start_server(server)

    def _service(self, action: str, server: str) -> None:
        if server not in ("dovecot", "postfix"):
            raise ValueError(f"no server {server!r}: dovecot or postfix")
        proc = _run(["bash", SCRIPTS / "service.sh", self.dir, action, server],
                    _SCRIPT_TIMEOUT)
        if proc.returncode != 0:
            raise _failure(f"{action} {server} (.ci/mailstack/service.sh)", proc)

    def deliver(self, message: bytes | Message, mail_from: str,
                rcpt_tos: str | Sequence[str]) -> dict[str, tuple[int, bytes]]:
        """Hand one message straight to Dovecot's LMTP, past Postfix (which may be
        down), as another MX would.  Arguments as for :meth:`send`."""
        rcpts = [rcpt_tos] if isinstance(rcpt_tos, str) else list(rcpt_tos)
        rcpts = [self._qualify(r) for r in rcpts]
        with smtplib.LMTP(self.host, self.lmtp_port, timeout=GIVE_UP) as conn:
            if isinstance(message, Message):
                return conn.send_message(message, from_addr=self._qualify(mail_from),
                                         to_addrs=rcpts)
            return conn.sendmail(self._qualify(mail_from), rcpts, message)

    # ---- diagnostics ----------------------------------------------------------------

    def postfix_log(self, lines: int = 50) -> str:
        """The last ``lines`` lines of Postfix's log."""
        return _tail(self.dir / "postfix" / "postfix.log", lines)

    def dovecot_log(self, lines: int = 50) -> str:
        """The last ``lines`` lines of Dovecot's log."""
        return _tail(self.dir / "dovecot" / "dovecot.log", lines)


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"({exc})"
    return "\n".join(text.splitlines()[-lines:])


def _short_tmpdir() -> Path:
    """A new 0755 directory with a short path (Dovecot's socket paths must stay short)."""
    base = "/tmp" if os.access("/tmp", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="mailstack-", dir=base))
    path.chmod(0o755)
    return path


def session_stack() -> Iterator[MailStack]:
    """Body of the session fixture ``mailstack``: start, yield, stop.

    If the stack cannot be started, the tests using it are skipped, or fail when one of
    :data:`REQUIRE_ENV` is set (as on CI).
    """
    import pytest

    path = _short_tmpdir()
    try:
        stack = MailStack.start(path)
    except MailStackError as exc:
        with contextlib.suppress(MailStackError):
            _run(["bash", SCRIPTS / "stop.sh", path], _SCRIPT_TIMEOUT)
        shutil.rmtree(path, ignore_errors=True)
        required = [name for name in REQUIRE_ENV if _env_flag(name)]
        if required:
            pytest.fail(
                f"mail stack required ({', '.join(required)} set) but not started: {exc}",
                pytrace=False,
            )
        first_lines = "\n".join(str(exc).splitlines()[:4])
        pytest.skip(f"mail stack not available: {first_lines}")
    try:
        yield stack
    finally:
        stack.stop()
        if not _env_flag(KEEP_ENV):
            shutil.rmtree(path, ignore_errors=True)
