"""The ``away`` link (issue 37): a player's mail to the referee that names
no game (no tag in the subject, no thread of a game's mail, not to a
seat's private address) and whose first command line is ``away 10d``,
``away until 2026-12-27``, ``away`` alone or ``back`` is about every game
of theirs at once: done through ``play/absence.py`` and answered with
what was done (``away_answer``); the lines after the first are not read.

A link of the chain once the sender is known and vetted (after ``plain
text``), before ``routing``: a player in one game writing ``away 3d``
with no tag is away from all their games (that one), and their bank pays.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from referee.config import Config, format_duration, parse_duration
from referee.mail.compose import format_when
from referee.service.intake.letter import GO_ON, Judgement, Letter, Reply
from referee.service.outgoing.delivery import Delivery
from referee.service.play import absence
from referee.service.play.commands import MAX_QUOTE
from referee.store import models as m

#: The words of the link: away (for a time, until a day, or alone) and back.
AWAY, BACK = "away", "back"


@dataclass(frozen=True)
class Asked:
    """What a line asks: ``away`` until ``until`` (None: the bank shown),
    ``back``, or why it cannot be read (``problem``)."""

    verb: str
    until: datetime | None = None
    problem: str = ""


def read_line(line: str, now: datetime) -> Asked | None:
    """What ``line`` asks of the absence, if it is an absence line:
    ``away 10d``, ``away until 2026-12-27`` (back by that day's 00:00
    UTC), ``away`` alone, ``back``."""
    words = line.strip().rstrip(".!").lower().split()
    if not words or words[0] not in (AWAY, BACK):
        return None
    if words[0] == BACK:
        return Asked(BACK) if len(words) == 1 else None
    rest = words[1:]
    if not rest:
        return Asked(AWAY)
    if rest[0] == "until" and len(rest) == 2:
        try:
            day = datetime.strptime(rest[1], "%Y-%m-%d")
        except ValueError:
            return Asked(AWAY, problem=f"'{rest[1][:MAX_QUOTE]}' is no day; write it as "
                                       "2026-12-27.")
        return Asked(AWAY, until=day)
    try:
        by = parse_duration("".join(rest))
    except ValueError:
        by = timedelta(0)
    if by <= timedelta(0):
        return Asked(AWAY, problem="Say for how long, like 'away 10d', or until when, like "
                                   "'away until 2026-12-27'.")
    return Asked(AWAY, until=now + by)


class Away:
    """The ``away`` link: an absence from all games, taken or ended."""

    name = "away"

    def __init__(self, config: Config, delivery: Delivery) -> None:
        self.config, self.delivery = config, delivery

    def judge(self, db: Session, letter: Letter, known: object) -> Judgement:
        player = letter.player
        if player is None or letter.tag is not None or letter.bound or not letter.lines:
            return GO_ON
        first = letter.lines[0]
        asked = read_line(first, letter.now)
        if asked is None:
            return GO_ON
        result, text = self._do(db, player, asked, letter.now)
        status = "processed" if result == "DONE" else "refused"
        note = f"away: {text.splitlines()[0]}"
        if letter.over is not None:
            return Judgement(status, f"{note} ({letter.over.note})")
        return Judgement(status, note, (Reply("away_answer", {
            "line": first[:MAX_QUOTE], "result": result, "text": text}, to=player),))

    def _do(self, db: Session, player: m.Player, asked: Asked,
            now: datetime) -> tuple[str, str]:
        """Do what the line asks: ("DONE" or "REFUSED", what to say)."""
        if asked.problem:
            return "REFUSED", asked.problem
        try:
            if asked.verb == BACK:
                return "DONE", absence.end(db, self.config, self.delivery, player, now)
            if asked.until is None:
                return "DONE", absence.summary(db, self.config, player, now)
            taken = absence.take(db, self.config, self.delivery, player, asked.until, now)
        except absence.Refused as e:
            return "REFUSED", str(e)
        lines = [f"You are away from all your games until {format_when(taken.until)} "
                 f"({format_duration(taken.until - now)}): {taken.days} "
                 f"day{'s' if taken.days != 1 else ''} drawn from your bank, "
                 f"{taken.left} left in {now.year}."]
        if taken.games:
            lines.append(f"The deadlines are moved in {', '.join(taken.games)}; each "
                         "table is told.")
        for tag in taken.skipped:
            lines.append(absence.no_absence(tag))
        lines.append("Write 'back' when you return early: the days not begun go back "
                     "to your bank.")
        return "DONE", "\n".join(lines)
