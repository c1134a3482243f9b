"""The table by mail: ``status``, ``history``, ``resend``, ``away 3d``,
``back``, ``games`` and ``mail turns``, in every game, answered in the
sender's transcript.

Only public facts go in an answer (the engine's ``summary``, public
events, mails that went to the whole table); a hand or a pack goes only to
its holder, in a secret mail. ``away`` moves the game's open deadlines
within the operator's limit (``[deadlines] away_max``), and the table is
told; the days come from the player's bank (``absence.py``), and a game
made with ``away=no`` refuses. ``back`` ends that absence early. Runs
inside intake's transaction, on the ``GameSession`` of the mail.
"""

from __future__ import annotations

from datetime import timedelta
from email import message_from_bytes
from email.parser import HeaderParser
from email.policy import default
from typing import Any

from sqlalchemy import func, select

from referee.config import format_duration, parse_duration
from referee.games.base import Action, Audience, EngineError, Game, Notice, ParseError
from referee.mail.compose import format_when
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE, MODES, mail_mode, release
from referee.service.play import absence, guests, pace, standing
from referee.service.play.session import GameSession
from referee.store import models as m

#: The commands of the table, in every game.
TABLE_COMMANDS = ("status", "history", "resend", "away", "back", "games", "mail")
#: The table commands that take a word after them ("away 3d", "mail turns").
_WITH_ARGUMENT = ("away", "mail")
#: The most an answer of the table holds.
ROOM = 3000


def table_command(line: str) -> str | None:
    """The table command ``line`` is ("away 3d": "away"), if it is one."""
    first, _, rest = line.strip().lower().rstrip(".!?").partition(" ")
    if first in TABLE_COMMANDS and (first in _WITH_ARGUMENT or not rest.strip()):
        return first
    return None


#: What came of a table command, and the answer: ("applied" or "refused", text).
Answer = tuple[str, str]


def run_table(gs: GameSession, seat: int, line: str) -> Answer:
    """Answer one table command of ``seat``'s mail."""
    verb = table_command(line) or ""
    arg = line.strip().rstrip(".!?").partition(" ")[2].strip()
    if verb == "away":
        return _away(gs, seat, arg)
    if verb == "mail":
        return _mail(gs, seat, arg.lower())
    if verb == "back":
        return _back(gs, seat)
    answer = {"status": _status, "history": _history, "resend": _resend,
              "games": _games}[verb](gs, seat)
    return "applied", answer


def _status(gs: GameSession, seat: int) -> str:
    """The game as a page of it: the engine's ``status`` in the game's
    words, who owes what by when, the latest public events, and what the
    sender can write now."""
    lines = []
    if gs.row.status == "cancelled":
        lines.append("The game was cancelled by the person who runs this referee, with no "
                     "winner. It stood so:")
    lines += gs.engine.status(gs.state).splitlines()
    lines += waiting(gs, seat)
    if not _ended(gs):
        lines += [f"{'You are' if s == seat else gs.seat_name(s) + ' is'} away until "
                  f"{format_when(until)}."
                  for s, until in absence.in_game(gs.db, gs.row, gs.now).items()]
    # The seed's fingerprint is the opening's: the history shows it.
    texts, _ = latest_events(gs, STATUS_EVENTS, skip=m.SEED_EVENT)
    if texts:
        lines.append("Lately:")
        lines += [f"  {t}" for t in texts]
    if not _ended(gs):
        lines += ["", "What you can write now:",
                  *(f"  {x}" if x else "" for x in gs.engine.help(gs.state, seat).splitlines())]
    return _fit([f"{gs.tag}, {gs.engine.title}", *(f"  {x}" if x else "" for x in lines)])


#: ``status`` shows the latest so many public events; ``history`` more.
STATUS_EVENTS = 4
HISTORY_EVENTS = 30


def _ended(gs: GameSession) -> bool:
    return gs.engine.is_over(gs.state) or gs.row.status != "active"


def latest_events(gs: GameSession, most: int, skip: str = "") -> tuple[list[str], int]:
    """The game's latest ``most`` public events (but those of kind ``skip``),
    the newest last, and how many came before them."""
    where = (m.Event.game_id == gs.row.id, m.Event.public, m.Event.kind != skip)
    texts = list(gs.db.scalars(select(m.Event.text).where(*where)
                               .order_by(m.Event.id.desc()).limit(most)))[::-1]
    total = gs.db.scalar(select(func.count()).select_from(m.Event).where(*where)) or 0
    return texts, total - len(texts)


def waiting(gs: GameSession, seat: int, deadlines: bool = True) -> list[str]:
    """Who owes what and by when (unless not ``deadlines``), as everyone may
    know it, the sender called "you": one line a kind of move and deadline
    ("Waiting for Bob's bid for round 2, by …"). The referee's own timetable
    says what comes next; a bot's move is nobody's wait."""
    if _ended(gs):
        return []
    rows = {(d.seat, d.key): d for d in gs.deadlines()}
    groups: dict[tuple[str, str], list[int]] = {}
    for p in gs.engine.pending(gs.state):
        # The sender's own obligation is theirs to know, private or not.
        shown = (p.seat, p.what) if p.seat == seat else p.shown_publicly()
        if shown is None or (shown[0] and gs.row.seats[shown[0] - 1].bot):
            continue
        # An obligation that arose in this very mail has its deadline made
        # when the mail is settled: it runs from now.
        d = rows.get((p.seat, p.key))
        due = d.due_at if d is not None else gs.now + timedelta(
            seconds=gs.row.deadline_seconds if p.due_in is None else p.due_in)
        groups.setdefault((shown[1], format_when(due)), []).append(shown[0])
    lines = []
    for (what, by), seats in groups.items():
        when = f", by {by}" if deadlines else ""
        if seats == [0]:
            lines.append(f"Next: {what}{when}.")
            continue
        names = ["you" if s == seat else gs.seat_name(s)
                 for s in sorted(set(seats), key=lambda s: (s != seat, s))]
        article, _, rest = what.partition(" ")
        if article not in ("a", "an"):
            lines.append(f"Waiting for {names_text(names)}: {what}{when}.")
        elif len(names) == 1:
            whose = "your" if names == ["you"] else f"{names[0]}'s"
            lines.append(f"Waiting for {whose} {rest}{when}.")
        else:
            lines.append(f"Waiting for {names_text(names)}: {what} each{when}.")
    return lines


def names_text(names: list[str]) -> str:
    """``Ann``, ``Ann and Ben``, ``Ann, Ben and Cat``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _history(gs: GameSession, seat: int) -> str:
    """The latest public events of the game, the newest last, and how many
    came before them."""
    texts, earlier = latest_events(gs, HISTORY_EVENTS)
    shown: list[str] = []
    size = 0
    for text in reversed(texts):
        size += len(text) + 3
        if size > ROOM - 120:
            break
        shown.insert(0, text)
    earlier += len(texts) - len(shown)
    if not shown:
        return "Nothing public has happened yet."
    head = (f"The latest {len(shown)} public moves and reports, the newest last "
            f"({earlier} earlier one{'s' if earlier != 1 else ''} not shown):" if earlier
            else "The public moves and reports so far, the newest last:")
    return "\n".join([head, *(f"  {t}" for t in shown)])


def help_text(gs: GameSession, seat: int) -> str:
    """The answer to ``help``: what this seat can write now (the engine's
    help), whose move it is when it is not theirs, and the table's commands,
    which work at any time."""
    lines = gs.engine.help(gs.state, seat).splitlines()
    if _ended(gs):
        if gs.row.status == "cancelled":
            lines = ["The game was cancelled; nothing more can be played."]
        return "\n".join([*lines, "You may still write: status, history, games."])
    owed = [p for p in gs.engine.pending(gs.state) if p.seat == seat]
    if not owed:
        lines += waiting(gs, seat)
    lines += ["", "At any time you may also write:", *TABLE_HELP]
    return "\n".join([*lines, *_moves_made_for_you(gs, seat)])


def _moves_made_for_you(gs: GameSession, seat: int) -> list[str]:
    """The lines of ``help`` on the moves the referee makes for a player
    (issue 37), where this game has them: forced moves played at once (the
    switch to write, as the seat has it now), and standing orders."""
    lines: list[str] = []
    if (type(gs.engine).forced_action is not Game.forced_action
            and str(gs.row.options.get("autoplay", "on")) != "off"):
        lines += ["  autoplay off  make each move yourself, even one the rules leave you "
                  "alone" if standing.autoplay_on(gs.row, gs.row.seats[seat - 1]) else
                  "  autoplay on  the referee makes at once a move the rules leave you alone"]
    if gs.engine.order_help and standing.orders_on(gs.row):
        lines += ["", "Moves sent ahead, kept secret until they apply (to the referee alone):",
                  *(f"  {h}" for h in gs.engine.order_help),
                  "  orders      your standing orders; 'cancel orders' drops them all"]
    return lines


#: The table's commands, as ``help`` lists them.
TABLE_HELP = (
    "  status      the game as it stands: scores, whose move, by when",
    "  history     the latest public moves and reports",
    "  resend      the last report and your hand again, in a secret mail",
    "  games       the games you play in, and whose move in each",
    "  away 3d     more time: every open deadline moves 3 days later",
    "  back        home early: what is left of 'away' goes back to your bank",
    "  mail turns  less mail (or mail all, mail digest)",
    "  resign      leave the game: a bot plays your seat",
)


def _last_report(gs: GameSession, seat: int) -> m.Outbox | None:
    """The latest report of this game that reached ``seat``'s player with
    the rest of the table: a mail to the list, or their copy of one to all,
    or, for a player in ``mail turns`` or ``digest``, the last mail that
    carried the table's news (never a reminder or an answer)."""
    player = gs.row.seats[seat - 1].player
    mine = {a for a in (gs.config.referee.public_list,
                        player.address if player else None) if a}
    rows = gs.db.scalars(select(m.Outbox).where(
        m.Outbox.game_id == gs.row.id).order_by(m.Outbox.id.desc()))
    for row in rows:
        if not set(row.recipients) & mine:
            continue
        head = HeaderParser().parsestr(row.raw, headersonly=True)
        kinds = str(head["X-Referee-Mail"] or "").split()
        if row.secret and kinds[:1] != [COMPOSITE]:
            continue  # a hand or a sealed bid, not the table's news
        if set(kinds) & set(_NO_REPORT):
            continue
        # The table's news, alone or riding in the answer to a mail of theirs.
        if set(kinds) - {COMPOSITE, "transcript"}:
            return row
    return None


#: Mails of a game that are no report of it.
_NO_REPORT = ("reminder", "resent", "secret_shown", "private_address_shown")


def _resend(gs: GameSession, seat: int) -> str:
    """The last public report and the seat's own hand or pack, in a mail
    for its holder alone; the engine's own secret hand mail too, if it has one."""
    report = _last_report(gs, seat)
    context: dict[str, Any] = {"report_subject": "", "report_body": "",
                               "yours": gs.engine.help(gs.state, seat)}
    if report is not None:
        # Its UTF-8 bytes, as sent: a body in 8bit reads back only so.
        msg = message_from_bytes(report.raw.encode("utf-8"), policy=default)
        context["report_subject"] = str(msg["Subject"] or "")
        part = msg.get_body(("plain",))
        text = part.get_content() if part is not None else ""
        # The resent mail is marked secret itself; the report's note would be
        # twice. (A body in 7bit or 8bit reads back with CRLF line ends.)
        note = f"{SECRET_NOTE}\n\n"
        context["report_body"] = text.removeprefix(note).removeprefix(
            note.replace("\n", "\r\n"))
    gs.notices.append(Notice(Audience.only(seat), "resent", context))
    said = "The last report and what you hold are below."
    try:
        hand = gs.engine.parse("hand")
    except ParseError:
        hand = None
    if hand is not None and hand.verb == "hand" and not gs.engine.is_over(gs.state):
        try:
            gs.apply(seat, Action("hand"), "player", None)
            said += " Your hand too."
        except EngineError:
            pass
    return said


def _games(gs: GameSession, seat: int) -> str:
    """The games the sender sits in: tag, game, state and whose move."""
    player = gs.row.seats[seat - 1].player
    if player is None:
        return "You sit in no game."
    seated = select(m.Seat.game_id).where(m.Seat.player_id == player.id, m.Seat.bot.is_(False))
    games = gs.db.scalars(select(m.Game).where(m.Game.id.in_(seated)).order_by(m.Game.id))
    lines = ["Your games:"]
    for game in games:
        title = gs.engine.title if game.id == gs.row.id else game.kind
        try:
            engine = guests.engine(game.kind)
        except guests.Unserved:  # it waits for its package, and says so
            lines.append(f"  [{game.tag}] {title}: waiting for its game package")
            continue
        rows = gs.db.scalars(select(m.Deadline).where(m.Deadline.game_id == game.id))
        waiting = sorted({game.seats[owes - 1].name for _, owes, _ in
                          engine.public_obligations(engine.load(game.state), rows)
                          if owes and not game.seats[owes - 1].bot})
        state = (f"waiting for {', '.join(waiting)}" if waiting and game.status == "active"
                 else game.status)
        lines.append(f"  [{game.tag}] {title}: {state}")
    return _fit(lines)


def _away(gs: GameSession, seat: int, arg: str) -> Answer:
    """Extend the game's open deadlines for a player away, within the
    operator's limit for all their asks in this game together."""
    limit = gs.config.deadlines.away_max
    try:
        by = parse_duration(arg) if arg and not arg.isdigit() else timedelta(0)
    except ValueError:
        by = timedelta(0)
    player = gs.row.seats[seat - 1].player
    if by <= timedelta(0):
        said = "Say for how long, like 'away 3d' or 'away 12h'."
        if player is not None:
            said += "\n" + absence.summary(gs.db, gs.config, player, gs.now)
        return "refused", said
    if gs.engine.is_over(gs.state) or gs.row.status != "active":
        return "refused", "The game is over."
    if pace.refuses_absence(gs.row.options):
        return "refused", absence.no_absence(gs.row.tag) + " Nothing was extended."
    asked = timedelta(seconds=sum(
        int(e.data.get("seconds", 0)) for e in gs.db.scalars(select(m.Event).where(
            m.Event.game_id == gs.row.id, m.Event.kind == "away"))
        if e.data.get("seat") == seat))
    if asked + by > limit:
        left = limit - asked
        return "refused", (
            f"The referee allows at most {format_duration(limit)} away in a game"
            + (f"; you have {format_duration(left)} left." if asked else ".")
            + " Nothing was extended.")
    name = gs.seat_name(seat)
    if not gs.deadlines():
        return "refused", "No deadline is open now; nothing was extended."
    if player is not None:
        try:
            absence.draw(gs.db, gs.config, player, gs.row, by, gs.now)
        except absence.Refused as e:
            return "refused", str(e)
    gs.extend_deadlines(by, "", asked_by=name)
    gs.db.add(m.Event(game_id=gs.row.id, step=gs.row.step, kind="away", public=True,
                      text=f"{name} is away: the deadlines are extended by "
                           f"{format_duration(by)}.",
                      data={"seat": seat, "seconds": int(by.total_seconds())}, at=gs.now))
    return "applied", (f"The open deadlines are extended by {format_duration(by)}; "
                       "the table is told.")


def _back(gs: GameSession, seat: int) -> Answer:
    """End the seat's player's absence from this game (``away 3d`` said
    in it): the unused days back to the bank, the deadlines moved back."""
    player = gs.row.seats[seat - 1].player
    if player is None:
        return "refused", "You are not away from this game; nothing was changed."
    try:
        return "applied", absence.end_in(gs, player)
    except absence.Refused as e:
        return "refused", str(e)


def _mail(gs: GameSession, seat: int, mode: str) -> Answer:
    """How much mail of this game the seat's player gets from now on; back
    to ``all``, what was held for them comes at once, in the answer's mail."""
    row = gs.row.seats[seat - 1]
    current = mail_mode(gs.engine.default_mail_mode, gs.row, row,
                        gs.config.referee.public_list)
    if mode not in MODES:
        choices = "; ".join(f"'mail {k}': {v}" for k, v in MODES.items())
        return "refused", f"You get '{current}' now. Choose one: {choices}."
    row.mail_mode = mode
    said = f"From now on you get {MODES[mode]}."
    if mode == "all" and row.player is not None and release(gs.db, gs.row.id, row.player.id):
        said += " What was held for you heads this mail."
    return "applied", said


def _fit(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text if len(text) <= ROOM else text[:ROOM].rsplit("\n", 1)[0] + "\n…"
