"""The referee's configuration: one TOML file, validated on load.

Every key, with its default, is documented in ``config.example.toml``. A bad
file fails at start with :class:`ConfigError`, whose message names the key
and the problem.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import tomllib
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
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


def parse_duration(text: str) -> timedelta:
    """Read ``"3d"``, ``"1d12h"``, ``"90m"``, ``"2w"``: whole numbers, each
    with its unit. A bare number is refused: seconds or days, nobody can tell."""
    s = text.strip().replace(" ", "")
    if s.isdigit():
        raise ValueError(f"{text!r} needs a unit, like {s}d or {s}h")
    parts = _DURATION.findall(s)
    if not parts or "".join(n + u for n, u in parts).lower() != s.lower():
        raise ValueError(f"{text!r} is not a duration; write e.g. 3d, 12h, 1d12h, 30m or 45s")
    return timedelta(seconds=sum(int(n) * _UNITS[u.lower()] for n, u in parts))


def checked_duration(text: str, maximum: timedelta) -> timedelta:
    """A duration an operator gave: with a unit (a bare "2" is no longer
    taken as seconds), more than nothing and at most ``maximum``. Raises
    ValueError saying what would be right."""
    value = parse_duration(text)
    if not timedelta(0) < value <= maximum:
        raise ValueError(f"{text!r} must be more than nothing and at most {_days(maximum)}")
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


#: The longest duration the operator gives, in the config or on the command
#: line: a year, so a slip of the keyboard ("2000d") is refused, not done.
MAX_DURATION = timedelta(days=366)
#: The longest deadline or reminder a game may have ([deadlines] and ``game
#: new --option deadline=``).
MAX_DEADLINE = timedelta(days=90)
#: RFC 2177 §3: a server may log off a client idle for 30 minutes, so IDLE
#: is re-issued at least every 29.
MAX_IDLE = timedelta(minutes=29)


def config_duration(value: object) -> timedelta:
    """A duration written in the config: a string with its unit, as on the
    command line. A bare number is refused: ``default = 3`` was 3 seconds,
    where 3 days was meant."""
    if isinstance(value, timedelta):
        return value  # given by code (config_from_dict), not by a file
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f'{value!r} is not a duration; write e.g. "3d", "12h", "1d12h", '
                         '"30m" or "45s"')
    n = str(value).strip()
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f'{value} is less than nothing; write a duration with its unit, '
                             'like "3d" (days), "12h", "30m" or "45s"')
        if not float(value).is_integer():
            raise ValueError(f'{value} needs a unit, in whole numbers; write e.g. "1d12h", '
                             '"36h", "90m" or "45s"')
        n = str(int(value))
    if n.isdigit():
        raise ValueError(f'{n} needs a unit; write "{n}d" (days), "{n}h" (hours), '
                         f'"{n}m" (minutes) or "{n}s" (seconds)')
    return parse_duration(n)


def _duration_up_to(most: timedelta, zero: bool = False,
                    why: str = "") -> Callable[[object], timedelta]:
    """A validator of a duration key: more than nothing (or nothing too,
    where ``zero``: a key for which nothing means none) and at most
    ``most`` (``why`` says why, when it is not a slip of the keyboard)."""
    def check(value: object) -> timedelta:
        delta = config_duration(value)
        low = timedelta(0) <= delta if zero else timedelta(0) < delta
        if not (low and delta <= most):
            floor = "" if zero else "more than nothing and "
            raise ValueError(f"{value!r} must be {floor}at most {_days(most)}{why}")
        return delta
    return check


def _days(span: timedelta) -> str:
    """A limit as an operator counts it: "90 days", not "12 weeks 6 days"."""
    if span >= timedelta(days=1) and not span % timedelta(days=1):
        return f"{span.days} days"
    return format_duration(span)


#: The longest a mail server may be waited for ([smtp] timeout).
MAX_SERVER_WAIT = timedelta(hours=1)


def _server_wait(value: object, info: ValidationInfo) -> object:
    """``[smtp] timeout``: a duration with its unit, as seconds (the SMTP
    library's). A bare number, once the file's only way to write it, is
    still read as seconds, with a warning naming what to write instead
    (refusing it would stop, at an upgrade, every club that copied it)."""
    if isinstance(value, str):
        return _duration_up_to(MAX_SERVER_WAIT)(value).total_seconds()
    if not isinstance(value, int | float) or isinstance(value, bool):
        return value  # the float validator says what it is not
    if not 0 < value <= MAX_SERVER_WAIT.total_seconds():
        raise ValueError(f"{value} (seconds, as a bare number is read) must be more than "
                         'nothing and at most an hour; write it with its unit, like "60s"')
    if info.context is not None and "warnings" in info.context:
        info.context["warnings"].append(
            f'smtp.timeout: {value} has no unit and is read as seconds; write timeout = '
            f'"{max(1, round(value))}s"')
    return value


#: A duration key of the config: with its unit, more than nothing, at most a year.
Duration = Annotated[timedelta, BeforeValidator(_duration_up_to(MAX_DURATION))]
#: A game's deadline or reminder: at most MAX_DEADLINE, as ``--option deadline=``.
DeadlineDuration = Annotated[timedelta, BeforeValidator(_duration_up_to(MAX_DEADLINE))]


def _optional_path(value: object) -> object:
    """An empty path is no path: ``path = ""`` was the config's own folder."""
    return None if isinstance(value, str) and not value.strip() else value


def _required_path(value: object) -> object:
    if isinstance(value, str) and not value.strip():
        raise ValueError('is empty (it would be the config\'s own folder); name a path, '
                         'relative to the config\'s folder or absolute')
    return value


OptionalPath = Annotated[Path | None, BeforeValidator(_optional_path)]
RequiredPath = Annotated[Path, BeforeValidator(_required_path)]


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
    #: a relative path is taken from the config file's folder. Every user
    #: of the machine may not read it (but in Docker's /run/secrets).
    password_file: OptionalPath = None

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
                with open(path, encoding="utf-8") as f:
                    mode = os.fstat(f.fileno()).st_mode
                    text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                reason = getattr(e, "strerror", None) or str(e)
                raise ValueError(f"password_file: cannot read {path}: {reason}") from None
            if _everyone_may_read(path, mode):
                raise ValueError(
                    f"password_file: every user of this machine may read {path} (mode "
                    f"{stat.S_IMODE(mode):04o}); chmod 600 {path} (or 640, with the "
                    "referee's user in its group)")
            self.password = text.removesuffix("\n").removesuffix("\r")
        return self


#: Where Docker mounts secrets: its own tmpfs, seen only in the containers
#: given the secret, and made 0444 unless the compose file says otherwise.
DOCKER_SECRETS = Path("/run/secrets")


def _everyone_may_read(path: Path, mode: int) -> bool:
    """Whether a password file is readable by every user (as ssh refuses a
    key). Its group may read it: the README's own way is a file of root's
    that the referee's group reads (chgrp referee; chmod 640)."""
    return (stat.S_ISREG(mode) and bool(mode & stat.S_IROTH)
            and not path.absolute().is_relative_to(DOCKER_SECRETS))


def _host(value: object) -> object:
    """A server's name or address alone: a URL or a port in it never resolves."""
    if not isinstance(value, str):
        return value
    host = value.strip()
    name, colon, port = host.rpartition(":")
    if "://" in host or "/" in host:
        raise ValueError(f"{value!r} is not a host name; write the name alone, like "
                         "mail.example.org (the port in port, TLS in security)")
    if colon and port.isdigit() and ":" not in name:
        raise ValueError(f"{value!r} holds a port; write host = {name!r} and port = {port}")
    if any(c.isspace() for c in host):
        raise ValueError(f"{value!r} is not a host name; write one, like mail.example.org")
    return host


Host = Annotated[str, BeforeValidator(_host)]


def _needs_host(section: str, kind: str, host: str) -> None:
    if not host:
        raise ValueError(f'host is empty; name the {section} server (kind = "{kind}"), '
                         "like mail.example.org")


def _database_url(value: str) -> str:
    """A database URL; a file's path where the URL belongs is refused with
    the URL to write (SQLAlchemy would end in a traceback)."""
    v = str(value).strip()
    if "://" not in v:
        if not v or "@" in v:  # empty, or a login without its scheme: not echoed
            raise ValueError("is not a database URL; write sqlite:///FILE or "
                             "postgresql+psycopg://USER@HOST/DB")
        relative = "" if v.startswith("/") else " (taken from the config's folder)"
        raise ValueError(f"{v!r} is a file's path, not a database URL; write "
                         f"sqlite:///{v}{relative}")
    return v


class RefereeSection(_Section):
    address: Address
    name: str = "PBM Referee"
    public_list: Address | None = None
    #: The List-Id of the public list (RFC 2919), if it differs from the list address.
    list_id: str | None = None
    database: Annotated[str, BeforeValidator(_database_url)] = "sqlite:///referee.db"
    #: Mail larger than this many bytes is refused with a short reply.
    max_message_size: int = Field(default=10_000_000, gt=0)
    #: Held by a pass (``poll``) or the daemon (``run``), so two never overlap.
    lock_file: RequiredPath = Path("referee.lock")
    #: "one": one referee process at a time (the lock file and the database's
    #: pass lease). "many" (PostgreSQL only): several ``run``/``poll``
    #: processes share the database and the mailbox, claiming mail, games
    #: and outbox rows one by one.
    workers: Literal["one", "many"] = "one"
    #: Fire deadlines by this machine's clock whatever the mail's own time
    #: says (see ``service/clock.py``): for a clock kept right by NTP on a
    #: machine that is off for hours while no mail comes.
    trust_clock: bool = False

    @model_validator(mode="after")
    def _as_written(self) -> RefereeSection:
        if self.public_list is not None and self.public_list == self.address:
            raise ValueError(
                "public_list is the referee's own address: public reports would come back "
                "to the referee, unread by anyone; name the players' list, or leave it out")
        if self.list_id is not None:
            list_id = self.list_id.strip().strip("<>")
            if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
                                r"(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)+", list_id):
                raise ValueError(
                    f"list_id: {self.list_id!r} is no List-Id (RFC 2919: words joined by "
                    "dots, no @ or spaces); write the id in the list's own List-Id header, "
                    "like players.example.org")
        if self.workers == "many" and not self.database.startswith("postgresql"):
            # passes.many_workers: on SQLite "many" was "one" in silence, and a
            # second worker found the first holding the lock (poll: 75; run: stops).
            raise ValueError(
                'workers = "many" needs PostgreSQL: SQLite takes one referee process '
                'at a time, and a second would only wait; set workers = "one", or '
                'database = "postgresql+psycopg://…"')
        return self

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]


class MailboxSection(_Login):
    kind: Literal["imap", "maildir"] = "maildir"
    host: Host = "127.0.0.1"
    port: int | None = Field(default=None, gt=0, lt=65536)
    security: Literal["ssl", "starttls", "none"] = "ssl"
    folder: str = "INBOX"
    path: RequiredPath = Path("mail/inbox")
    #: How long between polls when the server offers no IDLE (daemon only).
    poll_interval: Duration = timedelta(seconds=60)
    #: Re-issue IDLE this often (RFC 2177: at most 29 minutes).
    idle_timeout: Annotated[timedelta, BeforeValidator(_duration_up_to(
        MAX_IDLE, why=" (RFC 2177: a server may log off a client idle for 30)"))
    ] = timedelta(minutes=10)

    @model_validator(mode="after")
    def _imap_needs_credentials(self) -> MailboxSection:
        if self.kind == "imap" and not self.username:
            raise ValueError("username is required when kind = \"imap\"")
        if self.kind == "imap":
            _needs_host("IMAP", self.kind, self.host)
        if self.port is None and self.kind == "imap":
            self.port = 993 if self.security == "ssl" else 143
        return self


class SmtpSection(_Login):
    kind: Literal["smtp", "maildir"] = "maildir"
    host: Host = "127.0.0.1"
    port: int | None = Field(default=None, gt=0, lt=65536)
    security: Literal["ssl", "starttls", "none"] = "starttls"
    path: RequiredPath = Path("mail/sent")
    #: Give up on a mail that a server keeps refusing for this long.
    give_up_after: Duration = timedelta(days=5)
    #: How long to wait for the server, as seconds (the SMTP library's
    #: unit); written with its unit ("60s"), a bare number read as seconds
    #: with a warning.
    timeout: Annotated[float, BeforeValidator(_server_wait), Field(gt=0, le=3600)] = 60.0
    #: SMTP connections the outbox sends over at once (more only for enough
    #: mail); a player's mails always share one, in order.
    connections: int = Field(default=4, ge=1)
    #: Send each mail with its own envelope sender, referee+bounce-N@domain
    #: (VERP), so any bounce names the mail it is about. The relay must let
    #: the referee send from those addresses, and they must reach its mailbox.
    verp: bool = False

    @model_validator(mode="after")
    def _default_port(self) -> SmtpSection:
        if self.kind == "smtp":
            _needs_host("SMTP", self.kind, self.host)
        if self.port is None and self.kind == "smtp":
            self.port = {"ssl": 465, "starttls": 587, "none": 25}[self.security]
        return self


class DeadlinesSection(_Section):
    default: DeadlineDuration = timedelta(days=3)
    #: How long before the deadline the player is reminded: shorter than it.
    reminder: DeadlineDuration = timedelta(days=1)
    #: The most a player may ask, by mail ("away 3d"), to extend a game's
    #: deadlines, all their asks in that game together; "0s": none.
    away_max: Annotated[timedelta, BeforeValidator(_duration_up_to(
        MAX_DURATION, zero=True))] = timedelta(days=7)
    #: The days a player may be away in a calendar year (UTC), all games
    #: together: each ``away`` draws the whole days it covers (a day begun
    #: counts), an early ``back`` gives the unused ones back; 0: no absence.
    away_days_per_year: int = Field(default=30, ge=0, le=366)

    @model_validator(mode="after")
    def _reminder_before_deadline(self) -> DeadlinesSection:
        if self.reminder >= self.default:
            raise ValueError(
                f'reminder = "{as_written(self.reminder)}" is not shorter than default = '
                f'"{as_written(self.default)}": {REMINDER_TOO_LATE}; make it shorter, like '
                f'reminder = "{as_written(self.default / 3)}"')
        return self


#: Why a reminder at or after its deadline is refused.
REMINDER_TOO_LATE = "the reminder would go out as each turn opens"


def as_written(delta: timedelta) -> str:
    """A duration as the config and the command line take it: "1d12h"."""
    seconds, out = int(delta.total_seconds()), ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, seconds = divmod(seconds, size)
        out += f"{n}{unit}" if n else ""
    return out or "0s"


class AuthSection(_Section):
    #: What a player's mail needs before its commands count: "none" takes From
    #: as it is; "verified" needs a pass in the trusted Authentication-Results
    #: or the player's private reply address.
    require: Literal["none", "verified"] = "none"
    #: The authserv-id of the operator's own mail server: only its
    #: Authentication-Results header (RFC 8601) is trusted. Empty: none is.
    authserv_id: str = ""

    @model_validator(mode="after")
    def _one_word(self) -> AuthSection:
        # Compared with the header's first word (before ";"): anything more never matches.
        if re.search(r"[\s;=]", self.authserv_id.strip()):
            raise ValueError(
                f"authserv_id: {self.authserv_id!r} is more than an authserv-id; write the "
                "first word of your server's Authentication-Results header alone, like "
                "mx.example.org")
        self.authserv_id = self.authserv_id.strip()
        return self


class LimitsSection(_Section):
    """What one address may cost the referee. Beyond a budget only the
    moves in its mail are read, the answers to them within a budget of
    their own, and it is told so once."""

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
    #: Of those, replies a day to the addresses of one domain (as their
    #: From claims it): names forged at one domain leave the rest of the
    #: day's replies to newcomers from every other.
    stranger_replies_per_domain: int = Field(default=10, ge=0)

    @model_validator(mode="after")
    def _hour_within_day(self) -> LimitsSection:
        if self.replies_per_hour > self.replies_per_day:
            raise ValueError(
                f"replies_per_hour ({self.replies_per_hour}) is more than replies_per_day "
                f"({self.replies_per_day}), which an hour cannot exceed; raise "
                "replies_per_day or lower replies_per_hour")
        return self


class ClubSection(_Section):
    """The club's own games, started by mail (``referee.service.club``):
    who may open a table, how long one stays open, and what an opener
    may cost."""

    #: Who may open a table by mail: "anyone" who writes; the "members"
    #: (anyone who has played a game here, or whom the operator added);
    #: or the "operator" alone, at the command line.
    open_tables: Literal["anyone", "members", "operator"] = "members"
    #: Days an open table waits for its players before it expires.
    table_days: int = Field(default=14, ge=1, le=366)
    #: Invitations one writer may send a day (``new KIND with NAME ...``).
    invites_per_day: int = Field(default=10, ge=0)
    #: Open tables one opener may have at once.
    tables_per_member: int = Field(default=3, ge=1)
    #: Keep the club's standings (issue 40): each player's rating per kind
    #: of game, from the results of the games finished here. False: none
    #: is worked out, shown or answered.
    standings: bool = False
    #: The standings' seasons: a table of its own each "quarter" or "year"
    #: (UTC) beside the all-time one; "none": the all-time table alone.
    season: Literal["quarter", "year", "none"] = "none"


class WebSection(_Section):
    #: Where the game pages (static HTML) are written after each pass,
    #: relative to the config's folder; empty: none.
    path: OptionalPath = None


class Config(_Section):
    referee: RefereeSection
    mailbox: MailboxSection = MailboxSection()
    smtp: SmtpSection = SmtpSection()
    deadlines: DeadlinesSection = DeadlinesSection()
    auth: AuthSection = AuthSection()
    limits: LimitsSection = LimitsSection()
    club: ClubSection = ClubSection()
    web: WebSection = WebSection()
    #: The folder relative paths in this file are taken from.
    base_dir: Path = Path(".")
    #: What the file is read in spite of (a byte-order mark), a line each:
    #: ``check`` shows each as WARN, every other command says it at start.
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return self._warnings

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
        raw = p.read_bytes()
        data = tomllib.loads(_text(p, raw))
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
    config = config_from_dict(data, base_dir=p.resolve().parent, origin=str(p))
    if raw.startswith(codecs.BOM_UTF8):
        config.warnings.insert(0,
            f"{p}: begins with a UTF-8 byte-order mark (an invisible character some Windows "
            "editors write), read as if it did not; save it as UTF-8 without BOM")
    return config


def _text(path: Path, raw: bytes) -> str:
    """The config file's text: UTF-8, with or without the byte-order mark
    an editor on Windows writes (tomllib refuses it, as "Invalid statement
    at line 1, column 1": a character nobody sees). It changes nothing of
    what the file says, so it is read, and said as a warning (a club that
    ran on it must not stop at an upgrade). Raises UnicodeDecodeError
    for other bytes, and ConfigError for what is no UTF-8 text at all."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _utf16_without_bom(raw):
        raise ConfigError(f'{path}: UTF-16 text (what Notepad calls "Unicode"), not UTF-8; '
                          "save it as UTF-8")
    if b"\0" in raw:
        raise ConfigError(f"{path} is no text file (a NUL byte at offset {raw.index(0)}); "
                          "give the config file's path with --config FILE")
    return raw.decode("utf-8").removeprefix("\ufeff")


def _utf16_without_bom(raw: bytes) -> bool:
    """Whether ``raw`` looks like UTF-16 text of ASCII: every other byte NUL."""
    head = raw[:200]
    return len(head) >= 4 and any(head[i::2].count(0) == len(head[i::2]) for i in (0, 1))


def _user() -> str:
    """The name of the user this process runs as (its uid when it has none)."""
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def config_from_dict(data: dict[str, Any], base_dir: Path, origin: str = "config") -> Config:
    warnings: list[str] = []
    try:
        config = Config.model_validate({**data, "base_dir": base_dir},
                                       context={"base_dir": base_dir, "warnings": warnings})
        config.warnings.extend(f"{origin}: {warning}" for warning in warnings)
        return config
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
