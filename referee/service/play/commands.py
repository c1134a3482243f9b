"""The command lines of one mail, run against one seat of one game: each
line read by the game's grammar (or a generic command), applied in order,
and answered in a transcript line.

Runs inside intake's transaction, on a ``GameSession`` it loaded.
"""

from __future__ import annotations

import dataclasses
import difflib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from email import message_from_string
from email.policy import default
from typing import Any

from sqlalchemy import func, select

from referee.games.base import (
    Action,
    Audience,
    EngineError,
    Game,
    IllegalAction,
    Notice,
    ParseError,
    Scope,
    polite,
)
from referee.games.cards import Card
from referee.games.draws import SequentialDraws
from referee.mail.compose import format_when
from referee.service.outgoing.quiet import DONE
from referee.service.play.orders import STANDING_READ, standing_line
from referee.service.play.session import DEADLINE_MOVE_YOURS, GameSession
from referee.service.play.table import (
    ROOM,
    TABLE_COMMANDS,
    help_text,
    run_table,
    table_command,
    waiting,
)
from referee.store import models as m

#: Lines the referee understands in every game, besides the game's own.
GENERIC_COMMANDS = ("help", "resign")  # and the table's (``table.TABLE_COMMANDS``)
#: Stop reading a mail after this many lines in a row that are no command
#: (a pasted text, a long letter): its later lines are not run, and the
#: answer names the first of them that looked like a move.
MAX_UNKNOWN_LINES = 5
#: A line of at most so many words that starts with a command word, but is
#: no command, looked like a move; a longer one is talk.
COMMAND_WORDS = 5
#: A mail is read up to this many command lines: no reply, and no pass,
#: grows with what one mail holds.
MAX_LINES = 100
#: The transcript quotes a line, and an answer to it, up to so many characters.
MAX_QUOTE = 200
MAX_ANSWER = 1000
#: The reply lists this many lines of the transcript, then says how many more.
MAX_LISTED = 30
#: What a move says that came after a refused line of the same mail (MI-19):
#: a mail's moves stop at the first refused one; questions are still answered.
NOT_APPLIED = "an earlier line was refused."
#: The verdicts of a move the rules refused, punished (a Spades misplay) or
#: voided (a failed tournament draw): the later moves of its mail are not applied.
STOPS = ("refused", "penalty", "failed")
#: What a line other than a move says when its sender's reply budget is spent.
OVER_BUDGET = ("Not read: you have sent more mail than the referee answers for now, so "
               "only moves are read; send it again later.")


@dataclass
class TranscriptLine:
    """One command line of a player's mail, how it was read and what came of it."""

    text: str
    read_as: str
    result: str  # applied | penalty | failed | refused | ignored | skipped
    message: str

    @property
    def answers(self) -> bool:
        """The line's answer holds what the player can write now."""
        return self.read_as in ("help", "status") and self.result == "applied"


#: The turn a move is for: "#12 play QH", "round 3: bid 5", "turn 12 play QH".
_TURN_BEFORE = re.compile(r"^(?:#\s*(\d+)|(?:round|turn|move)\s*#?\s*(\d+))\s*[:,.)-]?\s+(.+)$",
                          re.I)
#: ... or after it: "bid 5 round 3", "play QH (turn 12)", "bid 5 for round 3", "play QH #12".
_TURN_AFTER = re.compile(r"^(.+?)[\s,;(]+(?:(?:for|in)\s+)?(?:(?:round|turn|move)\s*#?\s*|#\s*)"
                         r"(\d+)\s*\)?[\s.!]*$", re.I)


#: The words of the service's own that start a command, in every game, for
#: "did you mean": a game adds its own (``Game.spelt_verbs``).
SERVICE_VERBS = ("help", "resign", *TABLE_COMMANDS)


def did_you_mean(gs: GameSession, command: str) -> str | None:
    """A command of this game one slip away from ``command``: a misspelt
    first word whose line, spelt right, the game reads ("bdi 3"), or a card
    or a number with no verb ("Q♥": a card alone is never played). Prose
    ("Hello referee") reads as no command either way."""
    first, _, rest = command.strip().partition(" ")
    if not rest:
        if not (any(c.isdigit() for c in first) or Card.parse(first) is not None):
            return None
        guesses = [f"{verb} {first}" for verb in ("play", "bid") if verb in gs.engine.verbs]
    else:
        verbs = (*gs.engine.spelt_verbs, *SERVICE_VERBS)
        guesses = [f"{verb} {rest}" for verb in
                   difflib.get_close_matches(first.lower(), verbs, n=3, cutoff=0.6)]
    for guess in guesses:
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
    moves_only: bool = False,
) -> list[TranscriptLine]:
    """Apply each line of a mail that came in ``scope`` (seen by the seats
    ``seen_by`` besides the sender); returns the transcript.

    ``answers`` are the ids of the mail it answers (In-Reply-To, else
    References, the latest first): a move without a turn of its own is tied
    to the turn that mail showed, else to the turn when the mail is read.
    ``moves_only``: the sender's reply budget is spent, so only the game's
    moves are run; ``help`` and the table's commands are not read.
    """
    answered = gs.answered(answers)
    seen = _seen_turn(gs, seat, answered)
    read = Reading(seen if seen is not None else gs.turn(),
                   answered.created_at if answered is not None else None)
    out, stopped = _run(gs, seat, lines[:MAX_LINES], scope, seen_by, inbound_id, read,
                        moves_only)
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
        mine = t.read_as in TABLE_COMMANDS or t.read_as == "help"
        t.text, t.message = _cut(t.text, MAX_QUOTE), _cut(t.message, ROOM if mine else MAX_ANSWER)
    return out


def _seen_turn(gs: GameSession, seat: int, answered: m.Outbox | None) -> int | None:
    """The turn a move answering ``answered`` is tied to: the turn that mail
    showed; but for a post to the list (a report, which asks no one for a
    move: a reply-all to it is the plain way to move), the turn of the
    latest mail of the game its sender could have seen since, sent to them
    or to the list."""
    if answered is None:
        return None
    player = gs.row.seats[seat - 1].player
    lst = gs.config.referee.public_list
    if player is None or lst is None or lst not in answered.recipients \
            or player.address in answered.recipients:
        return answered.turn
    out = m.Outbox
    rows = gs.db.scalars(select(out).where(
        out.game_id == gs.row.id, out.id > answered.id, out.sent_at.is_not(None),
        out.turn.is_not(None)).order_by(out.id.desc()))
    for row in rows:
        if player.address in row.recipients or lst in row.recipients:
            return row.turn
    return answered.turn


def closing_help(gs: GameSession, seat: int, transcript: Sequence[TranscriptLine]) -> str | None:
    """What the player can write now, to end the answer with: for a mail with
    no command, or after a line refused or not read (for a bid, the cards
    they still hold; PS-7). None when the answer holds it already (``help``,
    ``status``), or when all went well."""
    if any(t.answers for t in transcript) or gs.row.seats[seat - 1].bot:
        return None
    if transcript and not any(t.result in ("refused", "ignored") for t in transcript):
        return None
    return gs.engine.help(gs.state, seat)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


@dataclass(frozen=True)
class Reading:
    """The turn a mail's moves are tied to when a line names none (the turn
    its answered mail showed, else the turn when it was read), and when the
    mail it answers was sent, if it answers one."""

    seen: int | None
    answered_at: datetime | None


def _stale(gs: GameSession, seat: int, action: Action, command: str, read: Reading,
           named: int | None) -> str | None:
    """Why a move for turn ``named`` (written in its line) or ``read.seen``
    may not be applied now, in the players' words; None if it may. A move is
    never carried to a turn its player had not seen. Says what happened
    meanwhile (the referee moved for them at a deadline), where play stands,
    and whether the line would do now."""
    now, engine = gs.turn(), gs.engine
    meant = named if named is not None else read.seen
    if now is None or meant is None or meant == now:
        return None
    if meant > now:
        return (f"{_capital(engine.turn_name(meant, now))} has not begun (it is "
                f"{engine.turn_name(now, now)} now), so this line was not applied. Send it again "
                "once it has begun.")
    said = []
    if moved := _moved_for(gs, seat, read.answered_at if named is None else None):
        said.append(moved)
    where = waiting(gs, seat, deadlines=False)
    said.append(f"{_capital(engine.turn_name(meant, now))} is over: it is "
                f"{engine.turn_name(now, now)} now"
                + (f", {where[0][0].lower()}{where[0][1:-1]}" if where else "")
                + ". This line was not applied.")
    if _would_apply(gs, seat, action):
        said.append(f"If you still want it for {engine.turn_name(now, now)}, send it again, "
                    f"answering the latest mail or writing '{command} {engine.turn_word} {now}'."
                    if engine.shows_turn_numbers else
                    "If you still want it now, send it again in a new mail.")
    return " ".join(said)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _moved_for(gs: GameSession, seat: int, since: datetime | None) -> str | None:
    """The latest move the referee made for ``seat`` at a deadline after
    ``since`` (the mail the player answered), else after the seat's own last
    move, as the seat was told it ("The deadline passed at …: the referee
    bid 2 for you, as rule 7 says."); None if it made none."""
    log = m.ActionLog
    q = select(log.step, log.action).where(log.game_id == gs.row.id, log.seat == seat,
                                           log.source == "timeout")
    if since is not None:
        q = q.where(log.at > since)
    else:
        own = select(func.coalesce(func.max(log.step), 0)).where(
            log.game_id == gs.row.id, log.seat == seat, log.source == "player")
        q = q.where(log.step > own.scalar_subquery())
    done = gs.db.execute(q.order_by(log.step.desc()).limit(1)).first()
    if done is None:
        return None
    told = gs.db.scalar(select(m.Event).where(
        m.Event.game_id == gs.row.id, m.Event.step == done.step,
        m.Event.kind == DEADLINE_MOVE_YOURS).limit(1))
    if told is None:  # a move made before the seat was told of it in words
        return ("The deadline passed, so the referee made your move for you: "
                f"{gs.engine.read_as(Action.from_json(done.action))}.")
    due = told.data.get("due")
    when = f" at {format_when(datetime.fromisoformat(due))}" if due else ""
    return f"The deadline passed{when}: {told.data.get('done', told.text)}."


def _late(gs: GameSession, seat: int, action: Action) -> str | None:
    """Why a move the rules refuse now was not applied, when the referee
    made a move for the seat at a deadline since the seat's own last move
    (whichever mail it answers: the one that told it so, too): what was done
    for the seat, and where play stands, in place of a refusal that would
    puzzle ("It is Bob's turn to bid, not yours"); None otherwise."""
    if action.verb in gs.engine.untimed_verbs or action.verb == "resign":
        return None
    if any(p.seat == seat for p in gs.engine.pending(gs.state)):
        return None  # on move again: the rules' own refusal says what would be right
    moved = _moved_for(gs, seat, None)
    if moved is None:
        return None
    where = waiting(gs, seat, deadlines=False)
    now = (" Now " + " ".join(where)[:1].lower() + " ".join(where)[1:]) if where else ""
    return f"{moved}{now} This line was not applied."


def _would_apply(gs: GameSession, seat: int, action: Action) -> bool:
    """Whether the rules would take ``action`` of ``seat`` now as a move,
    not refuse or punish it (a Spades misplay), tried on the state, which
    ``apply`` never changes."""
    try:
        draws = SequentialDraws(random.Random(0))  # a trial: what it draws is no matter
        return not gs.engine.apply(gs.state, seat, action, draws).penalty
    except EngineError:
        return False


def _looks_like_a_command(gs: GameSession, command: str) -> str | None:
    """Why a line that is no command, but looks like one (a short line that
    starts with a command word of the game or the table), was not read;
    None for talk."""
    words = command.lower().split()
    first = words[0].strip(":,.!?") if words else ""
    if len(words) > COMMAND_WORDS:
        return None
    if first in TABLE_COMMANDS or first in GENERIC_COMMANDS:
        return f"Not read: '{first}' is written alone on its line."
    if first in gs.engine.verbs:
        return (f"Not read: this looks like a move of {gs.engine.title}, but I could not "
                "read it, so nothing was done. How to write each move is below.")
    return None


def is_game_line(engine: Game[Any], line: str) -> bool:
    """Whether ``line`` is, or looks like, a command of ``engine``'s game
    or of every game's table (a move, ``bid 3``, ``status``, ``orders``,
    ``autoplay off``, a short line starting with a move's word): what a
    mail read as the club's, not the game's, must not pass over without a
    word (``intake/gamesmaster``)."""
    command = turn_of(polite(line))[0]
    words = command.lower().rstrip(".!?").split()
    if not words:
        return False
    try:
        if engine.parse(command) is not None or engine.parse_order(command) is not None:
            return True
    except ParseError:
        return True
    first = words[0].strip(":,.!?")
    return bool(table_command(command) or " ".join(words) in GENERIC_COMMANDS
                or " ".join(words) in STANDING_READ or first == "autoplay"
                or (len(words) <= COMMAND_WORDS and first in engine.verbs))


def _unread_moves(gs: GameSession, lines: Sequence[str]) -> list[str]:
    """The lines among ``lines`` (left unread) that look like commands."""
    out = []
    for line in lines:
        command = polite(line)
        if gs.turn() is not None:
            command = turn_of(command)[0]
        try:
            parsed = gs.engine.parse(command) is not None
        except ParseError:
            parsed = True
        if (parsed or table_command(command) or command.lower().rstrip(".!?") in
                GENERIC_COMMANDS or _looks_like_a_command(gs, command)
                or did_you_mean(gs, command)):
            out.append(line)
    return out


def _run(
    gs: GameSession, seat: int, lines: Sequence[str], scope: Scope,
    seen_by: frozenset[int], inbound_id: int, read: Reading, moves_only: bool = False,
) -> tuple[list[TranscriptLine], bool]:
    """The transcript, and whether reading stopped before the last line.
    Talk (a greeting, a sign-off, a name) is passed over without a word; a
    line that looks like a move but is none is answered with why.

    The moves stop at the first refused one (MI-19, for every game): a
    later move is listed as not applied, since it may rest on the one
    refused ("down A10" refused, then "flip"); questions (``help``, the
    table's commands, a game's untimed verbs such as ``hand``) are still
    answered."""
    out: list[TranscriptLine] = []
    unknown = 0
    refused = False  # a move of this mail was refused: later moves are not applied
    for i, line in enumerate(lines):
        command, named = polite(line), None
        if gs.turn() is not None:
            command, named = turn_of(command)
        word = command.lower().rstrip(".!?")
        if verb := table_command(command):
            out.append(TranscriptLine(command, verb, *(("ignored", OVER_BUDGET) if moves_only
                                                       else run_table(gs, seat, command))))
            unknown = 0
            continue
        if (standing := standing_line(gs, seat, command, scope)) is not None:
            out.append(TranscriptLine(line, *standing))
            unknown = 0
            continue
        if word in GENERIC_COMMANDS:
            action: Action | None = Action(word)
        else:
            try:
                action = gs.engine.parse(command)
            except ParseError as e:
                out.append(TranscriptLine(line, "?", "refused", str(e)))
                unknown, refused = 0, True
                continue
        if action is None:
            if guess := did_you_mean(gs, command):
                out.append(TranscriptLine(line, "", "refused",
                                          f"Not a command: did you mean '{guess}'?"))
                unknown, refused = 0, True
            elif why := _looks_like_a_command(gs, command):
                out.append(TranscriptLine(line, "", "ignored", why))
                unknown = 0
                # A move not read is a move refused; a question written
                # with more words ("status please") is not.
                refused = refused or command.lower().split()[0].strip(":,.!?") in gs.engine.verbs
            else:
                unknown += 1
                if unknown >= MAX_UNKNOWN_LINES:
                    return out + _stopped(gs, lines[i + 1:]), True
            continue
        unknown = 0
        read_as = gs.engine.read_as(action)
        if action.verb == "help":
            out.append(TranscriptLine(line, "help", *(("ignored", OVER_BUDGET) if moves_only else
                                                      ("applied", help_text(gs, seat)))))
            continue
        if refused and action.verb not in gs.engine.untimed_verbs:
            out.append(TranscriptLine(line, read_as, "skipped", NOT_APPLIED))
            continue
        if gs.row.status == "cancelled":
            out.append(TranscriptLine(line, read_as, "refused", "The game was cancelled."))
            continue
        if gs.engine.is_over(gs.state):
            out.append(TranscriptLine(line, read_as, "refused", "The game is over."))
            continue
        if action.verb not in gs.engine.untimed_verbs and action.verb != "resign" and (
                why := _stale(gs, seat, action, command, read, named)):
            out.append(TranscriptLine(line, read_as, "refused", why))
            refused = True
            continue
        try:
            if action.verb != "resign":
                gs.engine.accepts(action, scope)
            if action.verb == "join" and gs.engine.takes_members_by_mail:
                action = dataclasses.replace(action, args=gs.join_args(seat))
            action = dataclasses.replace(action, scope=scope, seen_by=seen_by)
            verdict, text = gs.apply(seat, action, "player", inbound_id)
            out.append(TranscriptLine(line, read_as, verdict, text))
            # A misplay (SP-14) or a failed draw (TCG-8) stops the later moves too.
            refused = refused or (verdict in STOPS and action.verb not in gs.engine.untimed_verbs)
            gs.run_bots()
        except EngineError as e:
            # A late move the referee made at the deadline is answered with
            # what was done, not with whose turn it is now.
            late = _late(gs, seat, action) if isinstance(e, IllegalAction) else None
            out.append(TranscriptLine(line, read_as, "refused", late or str(e)))
            refused = refused or action.verb not in gs.engine.untimed_verbs
            if action.verb == "resign":
                return out, i + 1 < len(lines)
        if action.verb == "resign":
            # Only a command after it is worth a word: a "bye all" is not.
            if _unread_moves(gs, lines[i + 1:]):
                out.append(TranscriptLine("", "", "ignored",
                                          "You have left the game; the rest was ignored."))
            return out, i + 1 < len(lines)
    return out, False


def done_line(transcript: Sequence[TranscriptLine]) -> str | None:
    """What an answer comes to when all it says is that the mail's moves
    were done ("You: play QH (done)"), else None: a refusal, a penalty, an
    answer to a question (``status``, ``help``) is a mail's own news."""
    moves = [t for t in transcript if t.result != "ignored"]
    if not moves or any(t.result != "applied" or not t.text or t.read_as in (
            *TABLE_COMMANDS, *GENERIC_COMMANDS, *STANDING_READ) for t in moves):
        return None
    return DONE.format("; ".join(t.text for t in moves))


def _stopped(gs: GameSession, rest: Sequence[str]) -> list[TranscriptLine]:
    """Reading stopped after ``MAX_UNKNOWN_LINES`` lines of talk in a row:
    the first of the lines left that looked like a move, and how many more."""
    unread = _unread_moves(gs, rest)
    if not unread:
        return []
    more = len(unread) - 1
    return [TranscriptLine(unread[0], "", "ignored", (
        f"Not read: I stop reading a mail after {MAX_UNKNOWN_LINES} lines in a row that are "
        "no command, and this line came after them"
        + (f", with {more} more like it" if more else "")
        + ". Send it again at the top of a mail."))]
