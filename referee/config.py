"""The referee's configuration: one TOML file, validated on load.

Every key, with its default, is documented in ``config.example.toml``. A bad
file fails at start with :class:`ConfigError`, whose message names the key
and the problem.
"""

from __future__ import annotations

import os
import re
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from referee.problems import EX_CONFIG, EX_NOPERM

_DURATION = re.compile(r"(\d+)\s*([wdhms])", re.I)
_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


class ConfigError(Exception):
    """The configuration cannot be used; the message, one line, names the
    file or the key and what to do. ``exit_code`` is sysexits.h's: 78 for a
    config that is wrong, 77 for one this user may not read."""

    def __init__(self, message: str, exit_code: int = EX_CONFIG) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def parse_duration(text: str | int | float) -> timedelta:
    """Read ``"3d"``, ``"1d12h"``, ``"90m"`` or a number of seconds."""
    if isinstance(text, int | float):
        return timedelta(seconds=text)
    s = text.strip().replace(" ", "")
    if s.isdigit():
        return timedelta(seconds=int(s))
    parts = _DURATION.findall(s)
    if not parts or "".join(n + u for n, u in parts).lower() != s.lower():
        raise ValueError(f"{text!r} is not a duration; write e.g. 3d, 12h, 1d12h, 30m or 45s")
    return timedelta(seconds=sum(int(n) * _UNITS[u.lower()] for n, u in parts))


def checked_duration(text: str, maximum: timedelta) -> timedelta:
    """A duration an operator gave: with a unit (a bare "2" is no longer
    taken as seconds), more than nothing and at most ``maximum``. Raises
    ValueError saying what would be right."""
    if text.strip().isdigit():
        raise ValueError(f"{text!r} needs a unit, like {text.strip()}d or {text.strip()}h")
    value = parse_duration(text)
    if not timedelta(0) < value <= maximum:
        raise ValueError(f"{text!r} must be more than nothing and at most "
                         f"{format_duration(maximum)}")
    return value


def format_duration(delta: timedelta) -> str:
    """``timedelta(days=2, hours=12)`` as "2 days 12 hours"."""
    seconds, parts = int(delta.total_seconds()), []
    for name, size in (("week", 604800), ("day", 86400), ("hour", 3600),
                       ("minute", 60), ("second", 1)):
        n, seconds = divmod(seconds, size)
        if n:
            parts.append(f"{n} {name}{'s' if n != 1 else ''}")
    return " ".join(parts) or "0 seconds"


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def _address(value: str) -> str:
    v = str(value).strip().lower()
    if not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+|[^@\s<>]+@[a-z0-9-]+", v):
        raise ValueError(f"{value!r} is not a mail address like referee@example.org")
    return v


Address = Annotated[str, BeforeValidator(_address)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Login(_Section):
    """A server login whose password may stay out of the file: in an
    environment variable (``password_env``) or a file of its own
    (``password_file``: systemd credentials, Docker secrets)."""

    username: str = ""
    password: str = ""
    #: The name of an environment variable holding the password.
    password_env: str = ""
    #: A file holding the password (one trailing newline is dropped);
    #: ``$CREDENTIALS_DIRECTORY`` and other variables in it are expanded, and
    #: a relative path is taken from the config file's folder.
    password_file: Path | None = None

    @model_validator(mode="after")
    def _password_from_outside(self, info: ValidationInfo) -> _Login:
        given = [k for k in ("password", "password_env", "password_file") if getattr(self, k)]
        if len(given) > 1:
            raise ValueError(f"set one of {', '.join(given)}, not several")
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise ValueError(f"password_env: the environment variable "
                                 f"{self.password_env} is not set")
            self.password = value
        elif self.password_file is not None:
            path = Path(os.path.expandvars(str(self.password_file)))
            if not path.is_absolute() and info.context:
                path = Path(info.context["base_dir"]) / path
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                reason = getattr(e, "strerror", None) or str(e)
                raise ValueError(f"password_file: cannot read {path}: {reason}") from None
            self.password = text.removesuffix("\n").removesuffix("\r")
        return self


class RefereeSection(_Section):
    address: Address
    name: str = "PBM Referee"
    public_list: Address | None = None
    #: The List-Id of the public list (RFC 2919), if it differs from the list address.
    list_id: str | None = None
    database: str = "sqlite:///referee.db"
    #: Mail larger than this many bytes is refused with a short reply.
    max_message_size: int = Field(default=10_000_000, gt=0)
    #: Held by a pass (``poll``) or the daemon (``run``), so two never overlap.
    lock_file: Path = Path("referee.lock")
    #: "one": one referee process at a time (the lock file and the database's
    #: pass lease). "many" (PostgreSQL only): several ``run``/``poll``
    #: processes share the database and the mailbox, claiming mail, games
    #: and outbox rows one by one.
    workers: Literal["one", "many"] = "one"
    #: Fire deadlines by this machine's clock whatever the mail's own time
    #: says (see ``service/clock.py``): for a clock kept right by NTP on a
    #: machine that is off for hours while no mail comes.
    trust_clock: bool = False

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]


class MailboxSection(_Login):
    kind: Literal["imap", "maildir"] = "maildir"
    host: str = "127.0.0.1"
    port: int | None = Field(default=None, gt=0, lt=65536)
    security: Literal["ssl", "starttls", "none"] = "ssl"
    folder: str = "INBOX"
    path: Path = Path("mail/inbox")
    #: Seconds between polls when the server offers no IDLE (daemon only).
    poll_interval: Duration = timedelta(seconds=60)
    #: Re-issue IDLE this often (RFC 2177 asks for less than 29 minutes).
    idle_timeout: Duration = timedelta(minutes=10)

    @model_validator(mode="after")
    def _imap_needs_credentials(self) -> MailboxSection:
        if self.kind == "imap" and not self.username:
            raise ValueError("username is required when kind = \"imap\"")
        if self.port is None and self.kind == "imap":
            self.port = 993 if self.security == "ssl" else 143
        return self


class SmtpSection(_Login):
    kind: Literal["smtp", "maildir"] = "maildir"
    host: str = "127.0.0.1"
    port: int | None = Field(default=None, gt=0, lt=65536)
    security: Literal["ssl", "starttls", "none"] = "starttls"
    path: Path = Path("mail/sent")
    #: Give up on a mail that a server keeps refusing for this long.
    give_up_after: Duration = timedelta(days=5)
    timeout: float = Field(default=60.0, gt=0)
    #: SMTP connections the outbox sends over at once (more only for enough
    #: mail); a player's mails always share one, in order.
    connections: int = Field(default=4, ge=1)
    #: Send each mail with its own envelope sender, referee+bounce-N@domain
    #: (VERP), so any bounce names the mail it is about. The relay must let
    #: the referee send from those addresses, and they must reach its mailbox.
    verp: bool = False

    @model_validator(mode="after")
    def _default_port(self) -> SmtpSection:
        if self.port is None and self.kind == "smtp":
            self.port = {"ssl": 465, "starttls": 587, "none": 25}[self.security]
        return self


class DeadlinesSection(_Section):
    default: Duration = timedelta(days=3)
    reminder: Duration = timedelta(days=1)
    #: The most a player may ask, by mail ("away 3d"), to extend a game's
    #: deadlines, all their asks in that game together.
    away_max: Duration = timedelta(days=7)


class AuthSection(_Section):
    #: What a player's mail needs before its commands count: "none" takes From
    #: as it is; "verified" needs a pass in the trusted Authentication-Results
    #: or the player's private reply address.
    require: Literal["none", "verified"] = "none"
    #: The authserv-id of the operator's own mail server: only its
    #: Authentication-Results header (RFC 8601) is trusted. Empty: none is.
    authserv_id: str = ""


class LimitsSection(_Section):
    """What one address may cost the referee. Beyond a budget its mail is
    recorded but neither read nor answered, and it is told so once."""

    #: Mails from one address answered per hour, and per day.
    replies_per_hour: int = Field(default=60, gt=0)
    replies_per_day: int = Field(default=300, gt=0)
    #: The same mail (the same command lines) from one address, in a row, is
    #: answered this many times; after that it is taken for a loop (an
    #: autoresponder that marks nothing) and left unanswered (RFC 3834 §2).
    same_mail: int = Field(default=5, gt=0)
    #: Replies a day, all together, to strangers nothing vouches for (no
    #: aligned pass of the trusted Authentication-Results): the answers to
    #: an address in no game, and the mails that ask a joiner to confirm.
    #: A flood of forged From lines gets no more backscatter than this; 0:
    #: such strangers get no reply at all (and cannot join).
    stranger_replies_per_day: int = Field(default=50, ge=0)


class WebSection(_Section):
    #: Where the game pages (static HTML) are written after each pass; empty: none.
    path: Path | None = None


class Config(_Section):
    referee: RefereeSection
    mailbox: MailboxSection = MailboxSection()
    smtp: SmtpSection = SmtpSection()
    deadlines: DeadlinesSection = DeadlinesSection()
    auth: AuthSection = AuthSection()
    limits: LimitsSection = LimitsSection()
    web: WebSection = WebSection()
    #: The folder relative paths in this file are taken from.
    base_dir: Path = Path(".")

    def resolve(self, path: Path) -> Path:
        return path if path.is_absolute() else self.base_dir / path

    @property
    def database_url(self) -> str:
        url = self.referee.database
        prefix = "sqlite:///"
        if url.startswith(prefix) and not url.startswith(prefix + "/") and ":memory:" not in url:
            return prefix + str(self.resolve(Path(url[len(prefix):])).resolve())
        return url


def load_config(path: str | Path) -> Config:
    """Read and validate the TOML file at ``path``."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such config file; give its path with --config FILE "
                          "(config.example.toml documents every key)") from None
    except IsADirectoryError:
        raise ConfigError(f"{p} is a folder, not a config file; give the file's path "
                          "with --config FILE") from None
    except PermissionError:
        raise ConfigError(f"{p}: this user ({_user()}) may not read it; make it readable "
                          f"by the referee's user (chgrp referee {p}; chmod 0640 {p})",
                          EX_NOPERM) from None
    except OSError as e:
        raise ConfigError(f"{p}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset "
                          f"{e.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from None
    return config_from_dict(data, base_dir=p.resolve().parent, origin=str(p))


def _user() -> str:
    """The name of the user this process runs as (its uid when it has none)."""
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def config_from_dict(data: dict[str, Any], base_dir: Path, origin: str = "config") -> Config:
    try:
        return Config.model_validate({**data, "base_dir": base_dir},
                                     context={"base_dir": base_dir})
    except ValidationError as e:
        problems = []
        for err in e.errors():
            key = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key (see config.example.toml for the keys)"
            elif err["type"] == "missing":
                msg = "required key is missing"
            msg = " ".join(msg.split())
            problems.append(f"[{key}]: {msg}" if "." not in key else f"{key}: {msg}")
        # One line, however many keys are wrong: a cron mail or a log reads it whole.
        raise ConfigError(f"{origin}: {' | '.join(problems)}") from None
