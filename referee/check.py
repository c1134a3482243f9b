"""``referee check``, and every mail server failure as one line naming the key.

:func:`explain` turns what the IMAP or SMTP libraries raise (a refused login,
a closed port, TLS where the server has none, an unknown host) into a
:class:`ServerProblem`: the sentence an operator reads and the exit code of
sysexits.h that ``poll``, ``run`` and ``check`` end with.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid

import aiosmtplib
from imapclient.exceptions import CapabilityError, IMAPClientError, LoginError

from referee.config import Config, MailboxSection, SmtpSection
from referee.mail.imap import ImapSource
from referee.mail.smtp import RelayUnavailable, SmtpRelay
from referee.problems import (
    EX_CONFIG,
    EX_NOHOST,
    EX_NOPERM,
    EX_UNAVAILABLE,
    ServerProblem,
)

#: How long ``check`` waits for its probe to reach the mailbox.
PROBE_WAIT = 15.0


def _cause(error: BaseException) -> BaseException:
    """The library's own error under our wrapper (RelayUnavailable)."""
    while isinstance(error, RelayUnavailable) and error.__cause__ is not None:
        error = error.__cause__
    return error


def explain(error: BaseException, section: str, cfg: MailboxSection | SmtpSection
            ) -> ServerProblem:
    """What went wrong talking to the ``[mailbox]`` or ``[smtp]`` server, and
    which key to change."""
    e = _cause(error)
    text = " ".join(str(e).split()) or type(e).__name__
    if text.startswith(("b'", 'b"')) and text[-1:] == text[1]:
        text = text[2:-1]  # imaplib's bytes, as the server said them
    where = f"{cfg.host}:{cfg.port}"
    server = "IMAP server" if section == "mailbox" else "SMTP relay"
    lower = text.lower()
    if isinstance(e, LoginError | aiosmtplib.SMTPAuthenticationError):
        return ServerProblem(
            f"[{section}] password: the {server} at {where} refused the login of "
            f"{cfg.username!r} ({text}); check [{section}] username and password", EX_NOPERM)
    if isinstance(e, socket.gaierror) or "name or service not known" in lower \
            or "temporary failure in name resolution" in lower:
        return ServerProblem(
            f"[{section}] host: {cfg.host!r} is not a host name that resolves ({text})",
            EX_NOHOST)
    if isinstance(e, ssl.SSLCertVerificationError) or "certificate verify failed" in lower:
        return ServerProblem(
            f"[{section}] host: the {server} at {where} has no valid TLS certificate for "
            f"{cfg.host!r} ({text}); use the name on its certificate", EX_CONFIG)
    dropped = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)
    if (isinstance(e, ssl.SSLError) and not isinstance(e, dropped)) \
            or "wrong version number" in lower:
        return ServerProblem(
            f"[{section}] security: the {server} at {where} does not speak TLS at once "
            f"(security = {cfg.security!r}: {text}); use security = \"starttls\" or "
            f"\"none\" on this port, or the port of its TLS service", EX_CONFIG)
    if "auth extension is not supported" in lower:
        return ServerProblem(
            f"[{section}] username: the {server} at {where} takes no login here ({text}); "
            f"leave username empty, or use security = \"starttls\" or \"ssl\"", EX_CONFIG)
    if (isinstance(e, CapabilityError) and "starttls" in lower) or "starttls" in lower:
        return ServerProblem(
            f"[{section}] security: the {server} at {where} offers no STARTTLS ({text}); "
            f"use security = \"ssl\" with its TLS port, or \"none\"", EX_CONFIG)
    if isinstance(e, IMAPClientError) and "select" in lower:
        return ServerProblem(
            f"[{section}] folder: the IMAP server at {where} has no folder "
            f"{getattr(cfg, 'folder', '')!r} ({text})", EX_CONFIG)
    if isinstance(e, ConnectionRefusedError) or "connection refused" in lower \
            or "connect call failed" in lower:
        return ServerProblem(
            f"[{section}] port: nothing answers at {where} ({text}); check [{section}] "
            f"host and port, and that the server is running", EX_UNAVAILABLE)
    return ServerProblem(
        f"[{section}] host: the {server} at {where} cannot be used ({type(e).__name__}: "
        f"{text}); check [{section}] host, port and security", EX_UNAVAILABLE)


def is_server_error(error: BaseException) -> bool:
    """Whether ``error`` came from talking to a mail server (not from our data)."""
    return isinstance(_cause(error), IMAPClientError | OSError | aiosmtplib.SMTPException
                      | RelayUnavailable)


# -- the parts of ``referee check`` --------------------------------------------

@dataclass
class Line:
    """One part of ``referee check``: OK, WARN or FAIL, and what it found."""

    part: str
    verdict: str
    text: str
    exit_code: int = 0

    def __str__(self) -> str:
        return f"{self.part:<9}{self.verdict:<5}{self.text}"


def check_imap(cfg: MailboxSection, max_size: int) -> str:
    """Log in and select the folder; what was found, or :class:`ServerProblem`."""
    source = ImapSource(cfg, max_size)
    try:
        client = source.connect()
        idle = "IDLE offered" if client.has_capability("IDLE") else "no IDLE: polled"
        count = client.folder_status(cfg.folder, ["MESSAGES"]).get(b"MESSAGES", "?")
    except (IMAPClientError, OSError) as e:
        raise explain(e, "mailbox", cfg) from None
    finally:
        source.close()
    return (f"IMAP {cfg.username} at {cfg.host}:{cfg.port} ({cfg.security}), folder "
            f"{cfg.folder} ({count} messages), {idle}")


def check_smtp(cfg: SmtpSection) -> str:
    """Connect, and log in when a username is set; or :class:`ServerProblem`."""
    async def _try() -> None:
        relay = SmtpRelay(cfg)
        await relay.connect()
        await relay.quit()

    try:
        asyncio.run(_try())
    except (RelayUnavailable, aiosmtplib.SMTPException, OSError) as e:
        raise explain(e, "smtp", cfg) from None
    login = f"as {cfg.username}" if cfg.username else "no login"
    return f"SMTP relay at {cfg.host}:{cfg.port} ({cfg.security}, {login})"


def check_servers(config: Config) -> list[ServerProblem]:
    """What ``run`` checks at start. Raises :class:`ServerProblem` for a
    server that will not work as configured (a refused login, the wrong TLS
    mode, a host name that does not resolve); returns the problems the
    daemon rides out by retrying (a server that does not answer yet)."""
    later = []
    checks: list[Callable[[], object]] = [
        (lambda: check_imap(config.mailbox, config.referee.max_message_size))
        if config.mailbox.kind == "imap" else (lambda: check_maildir(config))]
    if config.smtp.kind == "smtp":
        checks.append(lambda: check_smtp(config.smtp))
    for check in checks:
        try:
            check()
        except ServerProblem as e:
            if e.exit_code != EX_UNAVAILABLE:
                raise
            later.append(e)
    return later


def check_maildir(config: Config) -> str:
    path = config.resolve(config.mailbox.path)
    if not path.exists():
        return f"Maildir {path} (made at the first pass)"
    missing = [sub for sub in ("cur", "new", "tmp") if not (path / sub).is_dir()]
    if missing:
        raise ServerProblem(f"[mailbox] path: {path} is no Maildir (no {', '.join(missing)}/ "
                            "in it); create it or set the folder the mail is delivered to",
                            EX_CONFIG)
    return f"Maildir {path}"


def probe_plus_address(config: Config) -> tuple[str, bool]:
    """Send the referee a mail at ``referee+check-TOKEN@domain`` and wait for
    it in the mailbox (then delete it): private reply addresses and VERP
    need plus addressing to reach the referee. With an ``authserv_id`` the
    probe carries an Authentication-Results header of that id, as a forger
    would write it: the second value says the server kept it (it must strip
    such headers, or anyone can write themselves a pass)."""
    local, _, domain = config.referee.address.partition("@")
    token = secrets.token_hex(6)
    to = f"{local}+check-{token}@{domain}"
    msg = EmailMessage()
    msg["From"] = config.referee.address
    msg["To"] = to
    msg["Subject"] = f"referee check {token}"
    msg["Message-ID"] = make_msgid(idstring=f"check-{token}", domain=domain)
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Loop"] = config.referee.address
    forged = f"referee check forgery {token}"
    if config.auth.authserv_id:
        msg["Authentication-Results"] = (f"{config.auth.authserv_id}; dmarc=pass ({forged}) "
                                         f"header.from={domain}")
    msg.set_content("A probe of `referee check`; it deletes it once it has arrived.\n")

    async def _send() -> None:
        relay = SmtpRelay(config.smtp)
        await relay.connect()
        try:
            await relay.send(msg.as_string(), config.referee.address, [to])
        finally:
            await relay.quit()

    try:
        asyncio.run(_send())
    except Exception as e:
        raise explain(e, "smtp", config.smtp) from None
    source = ImapSource(config.mailbox, config.referee.max_message_size)
    end = time.monotonic() + PROBE_WAIT
    try:
        client = source.connect()
        while time.monotonic() < end:
            client.noop()
            found = client.search(["SUBJECT", f"referee check {token}"])
            if found:
                heads = client.fetch(found, ["BODY.PEEK[HEADER]"])
                kept = any(forged.encode() in re.sub(rb"\r?\n[ \t]+", b" ",
                                                     data.get(b"BODY[HEADER]", b""))
                           for data in heads.values())
                client.delete_messages(found)
                with contextlib.suppress(IMAPClientError):
                    client.expunge(found)
                return f"mail to {to} reached {config.mailbox.folder}", kept
            time.sleep(0.2)
    except (IMAPClientError, OSError) as e:
        raise explain(e, "mailbox", config.mailbox) from None
    finally:
        source.close()
    raise ServerProblem(
        f"mail to {to} did not reach {config.mailbox.folder} within {PROBE_WAIT:.0f} s: "
        "private reply addresses need plus addressing (Postfix recipient_delimiter = +, "
        "Dovecot lmtp_save_to_detail_mailbox = no)", EX_CONFIG)
