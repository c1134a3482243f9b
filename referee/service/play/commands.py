"""The command lines of one mail, run against one seat of one game: each
line read by the game's grammar (or a generic command), applied in order,
and answered in a transcript line.

Runs inside intake's transaction, on a ``GameSession`` it loaded.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email import message_from_string
from email.policy import default

from referee.games.base import (
    Action,
    Audience,
    EngineError,
    Notice,
    ParseError,
    Scope,
    polite,
)
from referee.service.play.session import GameSession
from referee.service.play.table import TABLE_COMMANDS, run_table, table_command

#: Lines the referee understands in every game, besides the game's own.
GENERIC_COMMANDS = ("help", "resign")  # and the table's (``table.TABLE_COMMANDS``)
#: The answer to "help": the game's own help follows the transcript.
HELP_TABLE = ("Help is below. In every game you may also write: status, history,\n"
              "resend, games, away 3d, and mail all, mail turns or mail digest.")
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


@dataclass
class TranscriptLine:
    """One command line of a player's mail, how it was read and what came of it."""

    text: str
    read_as: str
    result: str  # applied | penalty | refused | ignored
    message: str


#: The turn a move is for: "#12 play QH", "round 3: bid 5", "turn 12 play QH".
_TURN_BEFORE = re.compile(r"^(?:#\s*(\d+)|(?:round|turn|move)\s*#?\s*(\d+))\s*[:,.)-]?\s+(.+)$",
                          re.I)
#: ... or after it: "bid 5 round 3", "play QH (turn 12)", "bid 5 for round 3", "play QH #12".
_TURN_AFTER = re.compile(r"^(.+?)[\s,;(]+(?:(?:for|in)\s+)?(?:(?:round|turn|move)\s*#?\s*|#\s*)"
                         r"(\d+)\s*\)?[\s.!]*$", re.I)


#: The words that start a command in some game, for "did you mean".
VERBS = ("bid", "play", "pass", "hand", "concede", "help", "resign", "contract", "attack",
         "raise", "accept", "decline", "down", "flip", "done", "offer", "withdraw",
         "discard", "draw", "take", "craft", "purchase", "reveal", *TABLE_COMMANDS)


def did_you_mean(gs: GameSession, command: str) -> str | None:
    """A command of this game one slip away from ``command`` ("bdi 3"):
    a misspelt first word whose line, spelt right, the game reads. Prose
    ("Hello referee") reads as no command either way."""
    first, _, rest = command.strip().partition(" ")
    if not rest:
        return None
    for verb in difflib.get_close_matches(first.lower(), VERBS, n=3, cutoff=0.6):
        guess = f"{verb} {rest}"
        try:
            if gs.engine.parse(guess) is not None:
                return guess
        except ParseError:
            continue
    return None


def _subject_of(raw: str) -> str:
    """The subject of one of our queued mails, as its reader saw it."""
    msg = message_from_string(raw, policy=default)
    return str(msg["Subject"] or "")



def turn_of(line: str) -> tuple[str, int | None]:
    """The command of ``line`` and the turn it names, if it names one."""
    if m := _TURN_BEFORE.match(line):
        return m.group(3).strip(), int(m.group(1) or m.group(2))
    if m := _TURN_AFTER.match(line):
        return m.group(1).strip(), int(m.group(2))
    return line, None


def run_commands(
    gs: GameSession, seat: int, lines: Sequence[str], scope: Scope,
    seen_by: frozenset[int], inbound_id: int, answers: Sequence[str] = (),
) -> list[TranscriptLine]:
    """Apply each line of a mail that came in ``scope`` (seen by the seats
    ``seen_by`` besides the sender); returns the transcript.

    ``answers`` are the ids of the mail it answers (In-Reply-To, else
    References, the latest first): a move without a turn of its own is tied
    to the turn that mail showed, else to the turn when the mail is read.
    """
    answered = gs.answered(answers)
    seen = answered.turn if answered is not None else None
    out, stopped = _run(gs, seat, lines[:MAX_LINES], scope, seen_by, inbound_id,
                        seen if seen is not None else gs.turn())
    player = gs.row.seats[seat - 1].player
    if (answered is not None and answered.secret and scope is not Scope.SECRET
            and player is not None and player.address in answered.recipients):
        # Its moves count all the same; only its sender is told what the
        # mail it answered, and may have quoted, showed.
        gs.notices.append(Notice(Audience.only(seat), "secret_shown", {
            "shown_subject": _subject_of(answered.raw),
            "shown_to": "the list" if scope is Scope.PUBLIC else "the other players on it"}))
    if len(lines) > MAX_LINES and not stopped:
        out.append(TranscriptLine("", "", "ignored", f"Only the first {MAX_LINES} lines of a "
                                  f"mail are read; {len(lines) - MAX_LINES} more were not."))
    for t in out:
        t.text, t.message = _cut(t.text, MAX_QUOTE), _cut(t.message, MAX_ANSWER)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def _stale(gs: GameSession, seen: int | None, named: int | None,
           command: str) -> str | None:
    """Why a move for turn ``named`` (written in its line) or ``seen`` (the
    turn its mail answered or found) may not be applied now; None if it may.
    A move is never carried to a turn its player had not seen."""
    now = gs.turn()
    if now is None:
        return None
    word = gs.engine.turn_word
    again = (f"If you still want it, send it again, answering the latest mail or "
             f"naming the {word}: '{command} {word} {now}'.")
    if named is not None:
        if named == now:
            return None
        if named > now:
            return (f"{word.capitalize()} {named} has not begun: it is {word} {now} now, so "
                    f"this line was not applied. {again}")
        return (f"{word.capitalize()} {named} is over: it is {word} {now} now, so this line "
                f"was not applied to {word} {now}. {again}")
    if seen is None or seen == now:
        return None
    return (f"This line was meant for {word} {seen}, which is over: it is {word} {now} now, "
            f"so it was not applied to {word} {now}. {again}")


def _run(
    gs: GameSession, seat: int, lines: Sequence[str], scope: Scope,
    seen_by: frozenset[int], inbound_id: int, seen: int | None,
) -> tuple[list[TranscriptLine], bool]:
    """The transcript, and whether reading stopped before the last line.
    ``seen`` is the turn the mail's moves are tied to when they name none."""
    out: list[TranscriptLine] = []
    unknown = 0
    for line in lines:
        command, named = polite(line), None
        if gs.turn() is not None:
            command, named = turn_of(command)
        word = command.lower().rstrip(".!")
        if verb := table_command(command):
            out.append(TranscriptLine(command, verb, *run_table(gs, seat, command)))
            unknown = 0
            continue
        if word in GENERIC_COMMANDS:
            action: Action | None = Action(word)
        else:
            try:
                action = gs.engine.parse(command)
            except ParseError as e:
                out.append(TranscriptLine(line, "?", "refused", str(e)))
                unknown = 0
                continue
        if action is None and (guess := did_you_mean(gs, command)):
            out.append(TranscriptLine(line, "", "refused",
                                      f"Not a command: did you mean '{guess}'?"))
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
            out.append(TranscriptLine(line, "help", "applied", HELP_TABLE))
            continue
        if gs.row.status == "cancelled":
            out.append(TranscriptLine(line, read_as, "refused", "The game was cancelled."))
            continue
        if gs.engine.is_over(gs.state):
            out.append(TranscriptLine(line, read_as, "refused", "The game is over."))
            continue
        if action.verb not in gs.engine.untimed_verbs and action.verb != "resign" and (
                why := _stale(gs, seen, named, command)):
            out.append(TranscriptLine(line, read_as, "refused", why))
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


def done_line(transcript: Sequence[TranscriptLine]) -> str | None:
    """What an answer comes to when all it says is that the mail's moves
    were done ("You: play QH (done)"), else None: a refusal, a penalty, an
    answer to a question (``status``, ``help``) is a mail's own news."""
    moves = [t for t in transcript if t.result != "ignored"]
    if not moves or any(t.result != "applied" or not t.text or t.read_as in (
            *TABLE_COMMANDS, *GENERIC_COMMANDS) for t in moves):
        return None
    return f"You: {'; '.join(t.text for t in moves)} (done)"
