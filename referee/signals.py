"""Signals as a one-shot pass takes them: SIGINT (Ctrl-C), SIGTERM and
SIGHUP (a closing terminal) ask ``referee poll`` to stop after the mail it
is reading, which finishes and commits; the rest waits for the next pass.
The command then ends with 128 + the signal's number, the shell's own code
for a process a signal ended (130 for SIGINT, 143 for SIGTERM).

The daemon's own handlers (stop on SIGTERM and SIGINT, reopen the log file
on SIGHUP) are :func:`referee.scheduler.run_daemon`'s.
"""

from __future__ import annotations

import signal
from types import FrameType, TracebackType
from typing import Any

#: The signals that ask a pass to stop.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def exit_code(signum: int) -> int:
    """The shell's exit code for a process a signal ended: 128 + its number."""
    return 128 + signum


def name(signum: int) -> str:
    """``SIGINT`` for 2."""
    return signal.Signals(signum).name


class StopAsked:
    """While the block runs, a signal of :data:`STOPPING` is remembered
    instead of ending the process; calling the object says whether one came
    (the pass asks between two mails). A second Ctrl-C is Python's own
    again, so an operator who will not wait for the mail being read ends
    the pass at once (:class:`KeyboardInterrupt`: one line, 130). Only in
    the main thread, where Python runs signal handlers."""

    def __init__(self) -> None:
        #: The first signal that came, if one did.
        self.signum: int | None = None
        self._before: dict[int, Any] = {}

    def __call__(self) -> bool:
        return self.signum is not None

    def _asked(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> StopAsked:
        for signum in STOPPING:
            before = signal.getsignal(signum)
            if before is signal.SIG_IGN:
                continue  # ignored by whoever started us (nohup, a job in the background)
            self._before[signum] = signal.signal(signum, self._asked)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for signum, handler in self._before.items():
            signal.signal(signum, handler)
