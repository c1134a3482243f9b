"""What the operator must fix, said in one line, and the exit codes of
sysexits.h that say which kind of fault it is.

:mod:`referee.check` makes :class:`ServerProblem` from what the IMAP and SMTP
libraries raise; the classes live apart from it so that the command line can
catch one without importing those libraries at every start (``status`` needs
neither).
"""

from __future__ import annotations

from dataclasses import dataclass

#: sysexits.h EX_NOHOST: a host name that does not resolve.
EX_NOHOST = 68
#: sysexits.h EX_UNAVAILABLE: a server does not answer (down, wrong port, a
#: dropped connection).
EX_UNAVAILABLE = 69
#: sysexits.h EX_CANTCREAT: a file or folder the referee writes cannot be made.
EX_CANTCREAT = 73
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
