"""Logging an operator can read: a level, a file, plain text or JSON lines.

The referee logs one line per mail (who, which game, what was done), per
outbox send (with its game) and per fired deadline, under the ``referee``
logger. The libraries' own chatter (the scheduler, the connection pool,
migrations) stays at WARNING unless the level is ``debug``. No line carries
a secret at any level: a hand, a bid, a seed, a key, a private reply
address; mail is logged by what it did, never by body. So two libraries
stay capped even at ``debug`` (:data:`CAPPED`): imapclient's debug lines
are the IMAP protocol, every mail fetched in full, and SQLAlchemy's engine
logs each statement's parameters and rows, which hold game states, seeds,
the signing key and stored mail.

A log file (``--log-file``) is :class:`LogFile`: a full disk does not stop
the referee (one line on stderr when its lines start to be lost, one when
they are written again), and :func:`reopen_log` opens it again by its name
after logrotate moved it (the daemon does on SIGHUP).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.problems import disk_full

LEVELS = ("debug", "info", "warning", "error")
#: Loggers of the libraries, quiet unless the level is debug.
LIBRARIES = ("apscheduler", "imapclient", "aiosmtplib", "alembic", "sqlalchemy", "asyncio")
#: Loggers held at this level or above whatever the level: below it they
#: log secrets (see the module's docstring).
CAPPED = {"imapclient": logging.INFO, "sqlalchemy.engine": logging.WARNING}
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Marks the handler :func:`setup_logging` installed.
_OURS = "_referee_handler"
#: LogRecord attributes that are not extra fields given by the caller.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message,
    and any ``extra=`` fields of the call (such as ``game`` or ``sender``)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="seconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items()
                      if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class LogFile(logging.Handler):
    """Lines appended to a file, each with one ``write`` and no buffer, so
    that a write that failed leaves nothing behind to come out later.

    A line that cannot be written (a full disk, a quota) is lost, and the
    referee goes on: a full log must not stop the refereeing. That is said
    once on stderr when it starts; at the first line written again, the
    file gets a line saying how many were lost, and stderr one saying it is
    written again. Opening the file is the caller's to fail on (at start, or
    in :meth:`reopen`)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.fd = self._open()
        #: Why lines are being lost (None while they are written), and how many.
        self.failing: str | None = None
        self.lost = 0
        #: A line was cut short by a failed write: the next starts a new line.
        self.torn = False

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)

    def reopen(self) -> None:
        """Open the file again by its name, and write there from now on;
        an :class:`OSError` (the folder gone) leaves the old one in use."""
        fd = self._open()
        with self.lock or contextlib.nullcontext():
            old, self.fd = self.fd, fd
            os.close(old)

    def emit(self, record: logging.LogRecord) -> None:
        if self.fd < 0:
            return  # closed: the process is ending, or another log took over
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)  # a fault of ours, said as logging says it
            return
        if self.failing is not None:
            line = self.format(_note(
                f"{self.lost} log line(s) were lost while {self.path} could not be written "
                f"({self.failing})")) + "\n" + line
        data = ("\n" if self.torn else "") + line + "\n"
        try:
            self._write(data.encode("utf-8", "backslashreplace"))
        except OSError as e:
            self.lost += 1
            if self.failing is None:
                full = disk_full(e)
                self.failing = full or e.strerror or type(e).__name__
                said = f"{full} ({e.strerror})" if full else self.failing
                _say(f"--log-file {self.path}: cannot write it: {said}; the referee goes on, "
                     "and its log lines are lost until it can")
            return
        if self.failing is not None:
            _say(f"--log-file {self.path}: written again; {self.lost} log line(s) were lost")
            self.failing, self.lost = None, 0

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                done = os.write(self.fd, view)
            except OSError:
                self.torn = self.torn or len(view) < len(data)
                raise
            view = view[done:]
        self.torn = False

    def close(self) -> None:
        with self.lock or contextlib.nullcontext():
            if self.fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self.fd)
                self.fd = -1
        super().close()


def _note(text: str) -> logging.LogRecord:
    """A line of the log's own, about the log."""
    return logging.LogRecord(__name__, logging.WARNING, __file__, 0, text, None, None)


def _say(text: str) -> None:
    """A line on stderr, where the log file cannot be; nothing if stderr is
    gone too (a closed terminal)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"referee: {text}", file=sys.stderr, flush=True)


def reopen_log() -> Path | None:
    """Open the log file again by its name (logrotate moved it away, and
    sent SIGHUP): its path, or None when the referee logs to stderr. An
    :class:`OSError` when it cannot be opened: the old file stays in use."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, LogFile) and getattr(handler, _OURS, False):
            handler.reopen()
            return handler.path
    return None


def setup_logging(level: str = "warning", file: Path | None = None,
                  fmt: str = "text") -> None:
    """Configure the root logger for this process: the handler of an
    earlier call is replaced, any other (a test runner's) left alone."""
    handler: logging.Handler = LogFile(file) if file else logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    setattr(handler, _OURS, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level.upper())
    quiet = logging.DEBUG if level == "debug" else logging.WARNING
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(quiet)
    for name, floor in CAPPED.items():
        logging.getLogger(name).setLevel(max(quiet, floor))
