"""A mail server the referee cannot use as configured, said in one line.

:mod:`referee.check` makes these from what the IMAP and SMTP libraries raise;
the class lives apart from it so that the command line can catch one without
importing those libraries at every start (``status`` needs neither).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ServerProblem(Exception):
    """A mail server the referee cannot use as configured, said in one line."""

    message: str
    exit_code: int

    def __str__(self) -> str:
        return self.message
