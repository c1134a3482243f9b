"""``referee check``, and every mail server failure as one line naming the key.

:func:`explain` turns what the IMAP or SMTP libraries raise (a refused login,
a closed port, TLS where the server has none, an unknown host) into a
:class:`ServerProblem`: the sentence an operator reads and the exit code of
sysexits.h that ``poll``, ``run`` and ``check`` end with.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import socket
import ssl
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import aiosmtplib
from imapclient.exceptions import CapabilityError, IMAPClientError, LoginError

from referee.config import Config, MailboxSection, SmtpSection
from referee.mail.imap import ImapSource
from referee.mail.smtp import Refused, RelayUnavailable, SmtpRelay
from referee.problems import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_IOERR,
    EX_NOHOST,
    EX_NOPERM,
    EX_UNAVAILABLE,
    LOCK_FIX,
    PAGES_FIX,
    ROOM_FIX,
    Problem,
    ServerProblem,
    disk_full,
    writing,
)
from referee.store.db import sqlite_folder_problem

#: How to mend the folder of a log file that cannot be written.
LOG_FIX = "name a file in a folder the referee's user can write"
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


def check_servers(config: Config) -> list[tuple[str, ServerProblem]]:
    """What ``run`` checks at start. Raises :class:`ServerProblem` for a
    server that will not work as configured (a refused login, the wrong TLS
    mode); returns, with their sections, the problems the daemon rides out by
    retrying: a server that does not answer yet, or a host name that does
    not resolve yet (DNS is often the last thing up after a boot)."""
    later = []
    checks: list[tuple[str, Callable[[], object]]] = [
        ("mailbox", (lambda: check_imap(config.mailbox, config.referee.max_message_size))
         if config.mailbox.kind == "imap" else (lambda: check_maildir(config)))]
    if config.smtp.kind == "smtp":
        checks.append(("smtp", lambda: check_smtp(config.smtp)))
    for section, check in checks:
        try:
            check()
        except ServerProblem as e:
            if e.exit_code not in (EX_UNAVAILABLE, EX_NOHOST):
                raise
            later.append((section, e))
    return later


def check_maildir(config: Config) -> str:
    """The ``[mailbox]`` Maildir as this user finds it, or :class:`Problem`."""
    path = config.resolve(config.mailbox.path)
    try:
        if not path.exists():
            return f"Maildir {path} (made at the first pass)"
        missing = [sub for sub in ("cur", "new", "tmp") if not (path / sub).is_dir()]
        for sub in ("cur", "new"):
            if (path / sub).is_dir():
                os.listdir(path / sub)  # the referee reads both
    except PermissionError as e:
        raise Problem(f"[mailbox] path: {path}: this user may not read "
                      f"{os.fsdecode(e.filename or path)}; give the referee's user read and "
                      "write access to the Maildir, or name another", EX_NOPERM) from None
    if missing:
        raise ServerProblem(f"[mailbox] path: {path} is no Maildir (no {', '.join(missing)}/ "
                            "in it); create it or set the folder the mail is delivered to",
                            EX_CONFIG)
    return f"Maildir {path}"


#: What ``check`` writes to try a folder: a block, which a full disk or a
#: used-up quota refuses (an empty file takes no room, and would pass).
PROBE = b"\0" * 4096


def check_writable(folder: Path, option: str, fix: str) -> str:
    """Make ``folder`` if need be and write a block in a file there, as a
    pass would, or raise :class:`Problem` naming ``option`` (77: not this
    user's to write, 74: the disk is full, 73: cannot be made)."""
    with writing(folder, option, fix):
        folder.mkdir(parents=True, exist_ok=True)
        _probe(folder)
    return f"{folder} writable"


def _probe(folder: Path) -> None:
    """Write :data:`PROBE` in a file of ``folder`` that has no name
    (``O_TMPFILE``: nothing sees it); an :class:`OSError` about ``folder``."""
    with tempfile.TemporaryFile(dir=folder) as f:
        try:
            os.write(f.fileno(), PROBE)
            os.fsync(f.fileno())
        except OSError as e:  # a write names no file
            raise OSError(e.errno, e.strerror, os.fspath(folder)) from e


def _log(path: Path) -> str:
    """The log file (``--log-file``) is open already, this check's own log:
    what is left to try is room on its disk, with a block beside it."""
    with writing(path, "--log-file", LOG_FIX):
        try:
            _probe(path.absolute().parent)
        except OSError as e:
            raise OSError(e.errno, e.strerror, os.fspath(path)) from e
    return f"--log-file {path} writable"


def check_files(config: Config, log_file: Path | None = None) -> list[Line]:
    """Every file and folder a pass writes, tried as this user: the SQLite
    database's folder (its journal is made beside it), the lock file, the
    Maildirs of a dry run, the pages folder and the folder of the log file
    (``--log-file``)."""
    lines = []
    if missing := sqlite_folder_problem(config.database_url):
        code = EX_NOPERM if "not writable" in missing else EX_CANTCREAT
        lines.append(Line("database", "FAIL", f"{missing} ([referee] database); make it "
                          "writable by the referee's user (SQLite writes its journal there)",
                          code))
    lock = config.resolve(config.referee.lock_file)
    tries: list[tuple[str, Callable[[], str]]] = [("lock", lambda: _lock(lock))]
    if config.web.path is not None:
        pages = config.resolve(config.web.path)
        tries.append(("pages", lambda: "[web] path " + check_writable(
            pages, "[web] path", PAGES_FIX)))
    if log_file is not None:
        tries.append(("log", lambda: _log(log_file)))
    for part, fn in tries:
        try:
            lines.append(Line(part, "OK", fn()))
        except Problem as e:
            lines.append(Line(part, "FAIL", str(e), e.exit_code))
    return lines


def check_games(config: Config) -> list[Line]:
    """A line for each kind of stored game whose package cannot serve it
    now: FAIL (78) while games of it are active, which are stalled (no
    move, no deadline; their mail waits); WARN when they are all over
    (only their replay, audit and page wait). The engine of each kind a
    package brings is loaded, to find one that fails at import."""
    from referee.service.play.guests import stalled_in

    return [Line("games", "FAIL" if s.active else "WARN", str(s),
                 EX_CONFIG if s.active else 0) for s in stalled_in(config.database_url)]


def check_standings(config: Config) -> list[Line]:
    """The club's standings: a line when ``[club] standings`` is on (FAIL
    if the rating library cannot be imported), or when a season is set
    that does nothing while it is off."""
    club = config.club
    if not club.standings:
        if club.season == "none":
            return []
        return [Line("standings", "WARN", f'[club] season = "{club.season}" does nothing while '
                     "[club] standings = false; set standings = true to keep standings")]
    try:
        from importlib.metadata import version

        import openskill  # noqa: F401
        found = version("openskill")
    except ImportError:
        return [Line("standings", "FAIL", "[club] standings = true but the openskill library "
                     "is not installed; install it: pip install 'openskill>=6'", EX_CONFIG)]
    seasons = "all time only" if club.season == "none" else f"all time and by {club.season}"
    return [Line("standings", "OK", f"[club] standings on: tables of {seasons} "
                 f"(openskill {found})")]


def check_standings_current(config: Config) -> list[Line]:
    """A WARN line when the stored standings were worked out under other
    settings than the config's (``results.stale``): the next pass works
    them out again. Run once the database is known to be usable."""
    if not config.club.standings:
        return []
    from referee.service.play.results import stale_in

    why = stale_in(config)
    if why is None:
        return []
    return [Line("standings", "WARN", f"the tables are out of date: {why}; the next pass works "
                 "them out again, or now: referee standings --rebuild")]


def _lock(path: Path) -> str:
    with writing(path, "[referee] lock_file", LOCK_FIX), open(path, "a"):
        pass
    return f"[referee] lock_file {path} writable"


def check_maildir_writable(path: Path, key: str, found: str) -> str:
    """``found`` (what was seen of the Maildir at ``path``), once its
    folders are tried as writable: the referee moves mail in one, or writes
    mail into it; or raise :class:`Problem` naming ``key``."""
    fix = "name a folder that can be made, writable by the referee's user"
    for sub in ("tmp", "new", "cur"):
        if (path / sub).is_dir():
            check_writable(path / sub, key, fix)
    if not path.exists():
        # Made at the first pass, in the nearest folder there is.
        ancestor = next(p for p in path.absolute().parents if p.exists())
        try:
            _probe(ancestor)
        except PermissionError:
            raise Problem(f"{key} {path}: this user may not make it in {ancestor}; give the "
                          "referee's user write access, or name another", EX_NOPERM) from None
        except OSError as e:
            if full := disk_full(e):
                raise Problem(f"{key} {path}: cannot be made in {ancestor}: {full} "
                              f"({e.strerror}); {ROOM_FIX}", EX_IOERR) from None
            raise Problem(f"{key} {path}: cannot be made in {ancestor} ({e.strerror}); {fix}",
                          EX_CANTCREAT) from None
    return found


def probe_delivery(config: Config, plus: bool) -> tuple[str, bool, datetime | None]:
    """Send the referee a test mail through the relay, at its own address or
    (``plus``) at ``referee+check-TOKEN@domain``, and wait for it in the
    mailbox (then delete it). Private reply addresses and VERP need plus
    addressing to reach the referee. With an ``authserv_id`` the probe
    carries an Authentication-Results header of that id, as a forger would
    write it: the second value says the server kept it (it must strip such
    headers, or anyone can write themselves a pass). Without IMAP the probe
    is not waited for: the referee drops its own mail unread. The third
    value is when the IMAP server received it, by its own clock (None
    without IMAP): a reading of the server's clock, now."""
    local, _, domain = config.referee.address.partition("@")
    token = secrets.token_hex(6)
    to = f"{local}+check-{token}@{domain}" if plus else config.referee.address
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
    except Refused as e:
        login = f"to {config.smtp.username!r} " if config.smtp.username else ""
        raise ServerProblem(
            f"[referee] address: the SMTP relay at {config.smtp.host}:{config.smtp.port} "
            f"refused a test mail from and to {to} ({e.error}); set the referee's own "
            f"address, one the relay lets {login}send from and delivers to",
            EX_CONFIG) from None
    except Exception as e:
        raise explain(e, "smtp", config.smtp) from None
    if config.mailbox.kind != "imap":
        return f"the relay took a test mail to {to} (not waited for: no IMAP)", False, None
    source = ImapSource(config.mailbox, config.referee.max_message_size)
    end = time.monotonic() + PROBE_WAIT
    try:
        client = source.connect()
        while time.monotonic() < end:
            client.noop()
            found = client.search(["SUBJECT", f"referee check {token}"])
            if found:
                heads = client.fetch(found, ["BODY.PEEK[HEADER]", "INTERNALDATE"])
                kept = any(forged.encode() in re.sub(rb"\r?\n[ \t]+", b" ",
                                                     data.get(b"BODY[HEADER]", b""))
                           for data in heads.values())
                client.delete_messages(found)
                with contextlib.suppress(IMAPClientError):
                    client.expunge(found)
                arrived = [d[b"INTERNALDATE"] for d in heads.values()
                           if isinstance(d.get(b"INTERNALDATE"), datetime)]
                return (f"a test mail to {to} reached {config.mailbox.folder}", kept,
                        max(arrived).astimezone(UTC).replace(tzinfo=None) if arrived else None)
            time.sleep(0.2)
    except (IMAPClientError, OSError) as e:
        raise explain(e, "mailbox", config.mailbox) from None
    finally:
        source.close()
    if not plus:
        raise ServerProblem(
            f"a test mail to {to} did not reach {config.mailbox.folder} within "
            f"{PROBE_WAIT:.0f} s: the relay took it, so check that mail for [referee] address "
            f"is delivered to [mailbox] folder (and see: mailq on the relay)", EX_CONFIG)
    raise ServerProblem(
        f"mail to {to} did not reach {config.mailbox.folder} within {PROBE_WAIT:.0f} s: "
        "private reply addresses need plus addressing (Postfix recipient_delimiter = +, "
        "Dovecot lmtp_save_to_detail_mailbox = no)", EX_CONFIG)
