"""What the operator must fix, said in one line, and the exit codes of
sysexits.h that say which kind of fault it is.

:mod:`referee.check` makes :class:`ServerProblem` from what the IMAP and SMTP
libraries raise; the classes live apart from it so that the command line can
catch one without importing those libraries at every start (``status`` needs
neither).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: sysexits.h EX_DATAERR: a file the referee reads is there but is not what it
#: should be: a database that is not an SQLite one, or is damaged (a
#: half-copied backup). No retry mends it, unlike a full disk (74).
EX_DATAERR = 65
#: sysexits.h EX_NOHOST: a host name that does not resolve.
EX_NOHOST = 68
#: sysexits.h EX_UNAVAILABLE: a server does not answer (down, wrong port, a
#: dropped connection).
EX_UNAVAILABLE = 69
#: sysexits.h EX_CANTCREAT: a file or folder the referee writes cannot be made.
EX_CANTCREAT = 73
#: sysexits.h EX_IOERR: a write that failed for want of room (a full disk or
#: quota) or a disk that fails a read or write; the referee did nothing it
#: will not redo, and trying again once room is made succeeds.
EX_IOERR = 74
#: sysexits.h EX_TEMPFAIL: busy (another pass, a locked database); try again.
EX_TEMPFAIL = 75
#: sysexits.h EX_NOPERM: a login refused, a file the referee's user may not
#: read or write.
EX_NOPERM = 77
#: sysexits.h EX_CONFIG: the config is wrong, or does not match the server or
#: what is installed.
EX_CONFIG = 78


@dataclass
class Problem(Exception):
    """Something the operator must fix, said in one line, with its exit code."""

    message: str
    exit_code: int

    def __str__(self) -> str:
        return self.message


@dataclass
class ServerProblem(Problem):
    """A mail server the referee cannot use as configured, said in one line."""


@dataclass
class ForeignMailbox(Problem):
    """A fresh database met a mailbox that holds another referee's mail: the
    pass read nothing (``service/intake/ownership.py``)."""


#: How to mend a lock file the referee cannot make.
LOCK_FIX = "name a file in a folder the referee's user can write"
#: How to mend a pages folder the referee cannot write.
PAGES_FIX = ("name a folder that can be made, writable by the referee's user (under "
             "systemd, list it in ReadWritePaths=)")


#: How to mend a disk that is full.
ROOM_FIX = "free some space there, or name a place on another disk"


def disk_full(error: OSError) -> str | None:
    """What a write that failed for want of room says of the disk (a full
    disk, a quota used up), or None for any other fault."""
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.errno == errno.EDQUOT:
        return "the disk quota of this user is used up"
    return None


@contextmanager
def writing(path: str | Path | None, option: str, fix: str) -> Iterator[None]:
    """Turn a file or folder at or under ``path`` that cannot be written into
    one line naming ``option`` (a config key or a command-line option): 77
    for a permission denied, 74 for a full disk or quota, else 73. An error
    about another file passes on."""
    try:
        yield
    except OSError as e:
        where = e.filename
        if path is None or where is None or not _within(Path(os.fsdecode(where)), Path(path)):
            raise  # not about the file named: a fault of another part, said by it
        what = "it" if Path(os.fsdecode(where)).absolute() == Path(path).absolute() \
            else os.fsdecode(where)
        if isinstance(e, PermissionError):
            raise Problem(f"{option} {path}: this user may not write {what}; give the "
                          "referee's user write access, or name another", EX_NOPERM) from None
        if full := disk_full(e):
            raise Problem(f"{option} {path}: cannot write {what}: {full} ({e.strerror}); "
                          f"{ROOM_FIX}", EX_IOERR) from None
        raise Problem(f"{option} {path}: cannot write {what} ({e.strerror}); {fix}",
                      EX_CANTCREAT) from None


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    path, folder = path.absolute(), folder.absolute()
    return path == folder or folder in path.parents
