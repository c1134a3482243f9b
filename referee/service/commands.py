"""The command lines of one mail, run against one seat of one game: each
line read by the game's grammar (or a generic command), applied in order,
and answered in a transcript line.

Runs inside intake's transaction, on a ``GameSession`` it loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from referee.engine.base import Action, EngineError, ParseError, Scope
from referee.service.common import TranscriptLine
from referee.service.session import GameSession

#: Lines the referee understands in every game, besides the game's own.
GENERIC_COMMANDS = ("help", "resign")
#: Stop reading a mail after this many lines in a row that are no command.
MAX_UNKNOWN_LINES = 5
#: A mail is read up to this many command lines: no reply, and no pass,
#: grows with what one mail holds.
MAX_LINES = 100
#: The transcript quotes a line, and an answer to it, up to so many characters.
MAX_QUOTE = 200
MAX_ANSWER = 1000
#: The reply lists this many lines of the transcript, then says how many more.
MAX_LISTED = 30


def run_commands(
    gs: GameSession, seat: int, lines: Sequence[str], scope: Scope,
    seen_by: frozenset[int], inbound_id: int,
) -> list[TranscriptLine]:
    """Apply each line of a mail that came in ``scope`` (seen by the seats
    ``seen_by`` besides the sender); returns the transcript."""
    out, stopped = _run(gs, seat, lines[:MAX_LINES], scope, seen_by, inbound_id)
    if len(lines) > MAX_LINES and not stopped:
        out.append(TranscriptLine("", "", "ignored", f"Only the first {MAX_LINES} lines of a "
                                  f"mail are read; {len(lines) - MAX_LINES} more were not."))
    for t in out:
        t.text, t.message = _cut(t.text, MAX_QUOTE), _cut(t.message, MAX_ANSWER)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def _run(
    gs: GameSession, seat: int, lines: Sequence[str], scope: Scope,
    seen_by: frozenset[int], inbound_id: int,
) -> tuple[list[TranscriptLine], bool]:
    """The transcript, and whether reading stopped before the last line."""
    out: list[TranscriptLine] = []
    unknown = 0
    for line in lines:
        word = line.strip().lower().rstrip(".!")
        if word in GENERIC_COMMANDS:
            action: Action | None = Action(word)
        else:
            try:
                action = gs.engine.parse(line)
            except ParseError as e:
                out.append(TranscriptLine(line, "?", "refused", str(e)))
                unknown = 0
                continue
        if action is None:
            unknown += 1
            if unknown >= MAX_UNKNOWN_LINES:
                out.append(TranscriptLine(line, "", "ignored",
                                          "Not a command; the rest of the mail was ignored."))
                return out, True
            out.append(TranscriptLine(line, "", "ignored", "Not a command."))
            continue
        unknown = 0
        read_as = gs.engine.read_as(action)
        if action.verb == "help":
            out.append(TranscriptLine(line, "help", "applied", "Help is below."))
            continue
        if gs.row.status == "cancelled":
            out.append(TranscriptLine(line, read_as, "refused", "The game was cancelled."))
            continue
        if gs.engine.is_over(gs.state):
            out.append(TranscriptLine(line, read_as, "refused", "The game is over."))
            continue
        try:
            if action.verb != "resign":
                gs.engine.accepts(action, scope)
            if action.verb == "join" and gs.engine.takes_members_by_mail:
                action = dataclasses.replace(action, args=gs.join_args(seat))
            action = dataclasses.replace(action, scope=scope, seen_by=seen_by)
            verdict, text = gs.apply(seat, action, "player", inbound_id)
            out.append(TranscriptLine(line, read_as, verdict, text))
            gs.run_bots()
        except EngineError as e:
            out.append(TranscriptLine(line, read_as, "refused", str(e)))
            if action.verb == "resign":
                return out, True
        if action.verb == "resign":
            out.append(TranscriptLine("", "", "ignored",
                                      "You have left the game; the rest was ignored."))
            return out, True
    return out, False
