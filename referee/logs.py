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
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


def setup_logging(level: str = "warning", file: Path | None = None,
                  fmt: str = "text") -> None:
    """Configure the root logger for this process: the handler of an
    earlier call is replaced, any other (a test runner's) left alone."""
    handler: logging.Handler = (logging.FileHandler(file, encoding="utf-8") if file
                                else logging.StreamHandler())
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
