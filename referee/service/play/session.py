"""A game loaded inside the caller's transaction: apply actions, let bots
move, act for absent seats, store the state, keep its deadlines (made when
an obligation arises, moved when the game is extended, each with the time
of its reminder), and say what a batch decided as one value (``decide``:
a ``Decision``), which its caller hands to delivery. It holds no delivery
and delivery never calls back into it: decide, then do.

``GameSession`` opens no transaction of its own: intake, the deadline sweep
and the operator's actions each load a game in theirs and finish it there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from sqlalchemy import bindparam, insert, inspect, select
from sqlalchemy.orm import Session

from referee.config import Config, format_duration
from referee.games.base import (
    REFEREE_SEAT_NAME,
    Action,
    Audience,
    EngineError,
    Event,
    Game,
    Notice,
    Result,
)
from referee.games.draws import (
    ENTROPY_HOW,
    KEYED,
    MIXED,
    contributions,
    draws_for,
    mixed_seed,
    seed_fingerprint,
)
from referee.games.names import local_part
from referee.mail.compose import Composer, format_when
from referee.service.outgoing.delivery import DEADLINE_MOVE, Answer, Decision
from referee.service.play import results, standing, weekends
from referee.service.play.guests import engine_of
from referee.service.play.standing import AUTO
from referee.store import deadlines as stored
from referee.store import models as m

#: The event and the mail of a move the referee made for a silent seat past
#: its deadline, for the seat (``templates/common/deadline_yours.txt``; its
#: event is not public); the table's are ``DEADLINE_MOVE`` (``deadline.txt``).
DEADLINE_MOVE_YOURS = "deadline_yours"
#: The longest seat name: the length of the seats' name column
#: (``store/models.py``); a longer one is shortened to fit.
MAX_SEAT_NAME = 200


def unique_name(name: str, taken: set[str], mark: str = "") -> str:
    """``name`` and ``mark``, or ``name mark 2``, ``name mark 3``... the
    first that no seat of ``taken`` (names in lower case) has, at most
    :data:`MAX_SEAT_NAME` characters: ``name`` is cut short to leave room
    for the mark and the number."""
    n = 1
    while True:
        suffix = f"{mark} {n}" if n > 1 else mark
        found = f"{name[:MAX_SEAT_NAME - len(suffix)].rstrip()}{suffix}"
        if found.casefold() not in taken:
            return found
        n += 1


#: The absences from all their games of some players (``players``) at ``now``.
AWAY_NOW = select(m.Absence.player_id, m.Absence.end_at, m.Absence.games).where(
    m.Absence.player_id.in_(bindparam("players", expanding=True)),
    m.Absence.game_id.is_(None), m.Absence.ended_at.is_(None),
    m.Absence.start_at <= bindparam("now"), m.Absence.end_at > bindparam("now"))

#: A step's action and its events, rows only ever added to (built once).
INSERT_ACTION = insert(m.table_of(m.ActionLog))
INSERT_EVENT = insert(m.table_of(m.Event))


class GameSession:
    """A game loaded inside a transaction, with what its batch decided."""

    def __init__(self, config: Config, composer: Composer, db: Session, game: m.Game,
                 now: datetime) -> None:
        self.config, self.composer = config, composer
        self.db, self.row, self.now = db, game, now
        # A game whose package cannot serve it now raises Unserved here,
        # before anything is changed: its caller makes it wait.
        self.engine: Game[Any] = engine_of(db, game)
        self.state: Any = self.engine.load(game.state)
        self.notices: list[Notice] = []
        #: The seat name the referee moved for, by ``id()`` of each notice
        #: that move caused, so its mails can say the move was the referee's.
        self.timeout_for: dict[int, str] = {}
        #: The game's deadline rows as ``reconcile_deadlines`` left them, so
        #: each mail it then queues does not read them again (None: unread).
        self._deadline_rows: list[m.Deadline] | None = None
        #: What was owed when the game was loaded (or last mailed): an
        #: obligation not among these is news its seat must act on.
        self.owed_before = self._owed()
        #: The step the game was loaded at: a settle after an action counts
        #: a change to its page.
        self.loaded_step = game.step
        #: The moves players' mails made in this session, by seat, in order:
        #: what a receipt answers (``Game.receipt``).
        self.moves: list[tuple[int, Action]] = []
        #: How the game's result moved its players in the standings, once
        #: it ended in this session (:meth:`rate`).
        self.standings_moved: dict[str, Any] | None = None
        #: What the opening alone says of the seed (issue 38): the seats of
        #: an operator's table that gave no entropy by its start deadline
        #: (``silent``, ``silent_by``), or that the operator chose the seed
        #: with no player's entropy (``operator_seed``).
        self.opening_context: dict[str, Any] = {}

    def changed(self) -> None:
        """Count a change to what the game's page shows (``referee.service.pages``)."""
        self.row.page_due = (self.row.page_due or 0) + 1

    def _owed(self) -> frozenset[tuple[int, str]]:
        if self.row.status != "active" or self.engine.is_over(self.state):
            return frozenset()
        return frozenset((p.seat, p.key) for p in self.engine.pending(self.state))

    def others_owe(self, seat: int) -> bool:
        """Whether a player other than ``seat``'s owes a move now: then news
        of the game comes to ``seat`` soon, and a line of theirs can wait
        for it (a bot moves at once; the referee's timetable may be days)."""
        return any(s != seat and not self.row.seats[s - 1].bot
                   for s, _ in self._owed() if s)

    @property
    def tag(self) -> str:
        return self.row.tag

    def turn(self) -> int | None:
        """The game's turn now (``Game.turn``); None once it is over."""
        if self.engine.is_over(self.state) or self.row.status != "active":
            return None
        return self.engine.turn(self.state)

    def answered(self, ids: Sequence[str]) -> m.Outbox | None:
        """The mail of ours, of this game, that a player's mail answers:
        ``ids`` are its In-Reply-To (else its References), the latest first."""
        for mid in ids:
            oid = self.composer.outbox_id(mid)
            if oid is None:
                continue
            row = self.db.get(m.Outbox, oid)
            if row is not None and row.game_id == self.row.id:
                return row
        return None

    def seat_name(self, position: int) -> str:
        return self.row.seats[position - 1].name if position else REFEREE_SEAT_NAME

    def seat_of(self, player: m.Player) -> m.Seat | None:
        for seat in self.row.seats:
            if seat.player_id == player.id and not seat.bot:
                return seat
        return None

    def join_args(self, seat: int) -> tuple[str, bool, list[str], list[list[Any]]]:
        """The arguments of a join by mail (``Game.takes_members_by_mail``):
        the seat's name; whether its player held another seat of this game
        before (002 rule 3: a former member draws nothing); the names they
        go by besides (the local part of their address); and, for a person
        who comes back under the name of an earlier seat (now a bot's), that
        seat's new name, so two seats never share one: ``[[seat, name]]``."""
        row = self.row.seats[seat - 1]
        earlier = [s for s in self.row.seats if row.player_id is not None
                   and s.player_id == row.player_id and s.position != seat]
        taken = {s.name.casefold() for s in self.row.seats}
        renamed: list[list[Any]] = []
        for old in earlier:
            if old.name.casefold() == row.name.casefold():
                name = unique_name(row.name, taken, mark=" (bot)")
                taken.add(name.casefold())
                renamed.append([old.position, name])
        aliases = [local_part(row.player.address)] if row.player is not None else []
        return row.name, bool(earlier), aliases, renamed

    def apply(
        self, seat: int, action: Action, source: str, inbound_id: int | None,
        said: str | None = None,
    ) -> tuple[str, str]:
        """Apply one action and log it; returns the transcript's verdict
        ("applied", "penalty" or "failed") and line. ``said``: the referee
        made the move for the seat (a forced move), and says so, in the
        history before the move's own events and in each of its mails
        (``autoplayed`` in their data)."""
        return self._log(seat, action, self._result(seat, action), source, inbound_id,
                         autoplayed=said)

    def _result(self, seat: int, action: Action) -> Result[Any]:
        """What the rules make of ``action`` of ``seat`` now, as the next step."""
        if action.verb == "resign":
            self.row.seats[seat - 1].bot = True
            return self.engine.replace_with_bot(self.state, seat)
        result = self.engine.apply(self.state, seat, action,
                                   draws_for(self.row.draws, self.row.seed, self.row.step + 1,
                                             entropy=self.row.entropy))
        if action.verb == "join" and len(action.args) > 3:
            for position, name in action.args[3]:  # see ``join_args``
                self.row.seats[int(position) - 1].name = str(name)
        return result

    def _log(self, seat: int, action: Action, result: Result[Any], source: str,
             inbound_id: int | None, said: Sequence[Event] = (),
             autoplayed: str | None = None) -> tuple[str, str]:
        """Take ``result`` of ``action`` as the game's next step: its state,
        the action logged, its events (after ``said``, the service's own
        facts of the step) and its notices; the transcript's verdict and line."""
        step = self.row.step + 1
        self.state = result.state
        self.row.step = step
        # Logged at once, as rows of their own: they are only ever added to,
        # and an object per row was a third of the cost of a move's flush.
        self.db.connection().execute(INSERT_ACTION, [{
            "game_id": self.row.id, "step": step, "seat": seat, "action": action.to_json(),
            "source": source, "inbound_id": inbound_id, "at": self.now}])
        events, notices = [*said, *result.events], result.notices
        if source in (standing.AUTO, standing.ORDER):
            # The seat's prompt of this batch asks for the move just made for it.
            self.notices = [n for n in self.notices
                            if not (n.template in self.engine.prompt_notices
                                    and not n.audience.public and n.audience.seats == {seat})]
        if autoplayed is not None:
            events = [Event(AUTO, autoplayed, data={"seat": seat}), *events]
            notices = [replace(n, context={**n.context, "autoplayed": autoplayed})
                       for n in notices]
        if events:
            self.db.connection().execute(INSERT_EVENT, [{
                "game_id": self.row.id, "step": step, "kind": ev.kind, "text": ev.text,
                "public": ev.public, "data": dict(ev.data), "at": self.now}
                for ev in events])
        self.notices += notices
        verdict = "penalty" if result.penalty else "failed" if result.failed else "applied"
        if source == "player":
            self.moves.append((seat, action))
        if result.reply:
            return verdict, result.reply
        return verdict, " ".join(e.text for e in result.events if e.public) or "Done."

    def run_bots(self) -> None:
        """Bots move at once when it is their turn; a bot's turn on a
        timetable of its own (``due_in``) waits for the deadline sweep.
        So do the moves the referee makes for a player (issue 37): a
        standing order that applies, then a forced move (``standing``)."""
        while not self.engine.is_over(self.state):
            pending = [p for p in self.engine.pending(self.state)
                       if p.seat and p.due_in is None]
            bots = [p for p in pending if self.row.seats[p.seat - 1].bot]
            if bots:
                seat = bots[0].seat
                draws = draws_for(self.row.draws, self.row.seed, self.row.step + 1, "bot",
                                  entropy=self.row.entropy)
                self.apply(seat, self.engine.bot_action(self.state, seat, draws), "bot", None)
                continue
            owing = {p.seat for p in pending}
            if not (self.follow_orders(owing) or self.play_forced(owing)):
                return

    def follow_orders(self, owing: set[int]) -> bool:
        """Follow the standing orders of the seats that have some: drop
        those that can no longer be followed (their owner told, in secret),
        and make the first move one gives a seat in ``owing``. Whether a
        move was made."""
        if not standing.orders_on(self.row):
            return False
        for seat in self.row.seats:
            if not seat.orders or seat.bot:
                continue
            orders = standing.orders_of(seat)
            followed = self.engine.follow_orders(self.state, seat.position, orders)
            action = followed.action if seat.position in owing else None
            dropped = list(followed.dropped)
            if followed.left != orders or action is not None:
                seat.orders = list(followed.left) or None
            if action is not None:
                try:
                    self.apply(seat.position, action, standing.ORDER, None)
                except EngineError as e:  # the rules refuse it: nothing changed
                    dropped.append(f"{self.engine.read_as(action)}: {e}")
                    action = None
            if dropped:
                self.notices.append(Notice(Audience.only(seat.position), "orders_dropped", {
                    "dropped": dropped, "left": [
                        str(o.get("text", o)) if isinstance(o, dict) else str(o)
                        for o in followed.left]}))
            if action is not None:
                return True
        return False

    def play_forced(self, owing: set[int]) -> bool:
        """Make the forced move (``Game.forced_action``) of the first seat
        in ``owing`` that has one, unless its player turned autoplay off;
        whether one was made."""
        for position in sorted(owing):
            seat = self.row.seats[position - 1]
            if not standing.autoplay_on(self.row, seat):
                continue
            forced = self.engine.forced_action(self.state, position)
            if forced is not None:
                self.apply(position, forced.action, standing.AUTO, None, said=forced.text)
                return True
        return False

    def timeout(self, seat: int, due: datetime | None = None) -> None:
        """Act for ``seat`` past its deadline (``due``), as the rules say
        (seat 0: the referee's own timetabled action; a bot: its timetabled
        turn). A player's seat is told, and so is the table (everyone, or
        those who saw the request left unanswered), that the move was the
        referee's, in the game's words (``Game.deadline_move``): in the
        game's history and in a mail before those the move caused."""
        draws = draws_for(self.row.draws, self.row.seed, self.row.step + 1, "timeout",
                          entropy=self.row.entropy)
        bot = bool(seat) and self.row.seats[seat - 1].bot
        action = self.engine.timeout_action(self.state, seat, draws)
        if not seat or bot:
            self.apply(seat, action, "bot" if bot else "timeout", None)
            return
        before, first = self.state, len(self.notices)
        result = self._result(seat, action)
        move = self.engine.deadline_move(before, seat, action, result)
        name, passed = self.seat_name(seat), due or self.now
        facts = {"seat": seat, "due": passed.isoformat()}
        self._log(seat, action, result, "timeout", None, said=(
            Event(DEADLINE_MOVE, move.told(name), public=move.audience.public, data=facts),
            # For the seat's late mail (``commands``): what was done for it.
            Event(DEADLINE_MOVE_YOURS, move.told_you(), public=False,
                  data={**facts, "done": move.done_for_you()})))
        told = {"for_seat": seat, "missing": move.missing, "due": format_when(passed)}
        self.notices[first:first] = [
            Notice(move.audience, DEADLINE_MOVE, {**told, "name": name,
                                                   "said": move.told(name)}),
            # Secret where the move was (a sealed bid's card); a move the
            # table is told of whole (a Spades bid or card) is no secret.
            Notice(Audience.only(seat), DEADLINE_MOVE_YOURS,
                   {**told, "done": move.done_for_you()},
                   secret=move.did_secret is not None or not move.audience.public)]
        for notice in self.notices[first:]:
            self.timeout_for[id(notice)] = name

    def finish(self) -> Decision:
        """Store the state and reconcile deadlines: what the batch decided."""
        self.settle()
        return self.decide()

    def settle(self) -> None:
        """Let bots move, store the state and reconcile deadlines."""
        self.run_bots()
        self.row.state = self.engine.dump(self.state)
        self.row.public_view = self.engine.public_view(self.state)
        if self.engine.is_over(self.state) and self.row.status == "active":
            self.row.status = "finished"
            self.row.finished_at = self.now
            self.rate()
        if self.row.step != self.loaded_step:
            self.changed()
            self.loaded_step = self.row.step
        self.reconcile_deadlines()

    def rate(self) -> None:
        """The game just ended: its result taken into the club's standings,
        and how it moved its players kept for its last mail (issue 40)."""
        label, moves = results.game_ended(self.db, self.config, self.row)
        self.standings_moved = ({"label": label, "title": self.engine.title,
                                 "moves": [asdict(move) for move in moves]}
                                if moves else None)

    def decide(self, answer: Answer | None = None) -> Decision:
        """What this batch decided, as one value for delivery: its notices,
        each with the seat the referee moved for; the context of the public
        (if a notice is public) and of each seat a notice or ``answer`` (the
        answer to the sender's mail) is addressed to, no other seat's; the
        turn; who newly owes and what each is asked; whether the game is
        over. The batch is then done: the next starts with no notice, and
        what is owed now is no longer news."""
        notices = tuple(self.notices)
        seats = self.row.seats
        addressed: set[int | None] = {None} if any(n.audience.public for n in notices) else set()
        addressed.update(p for n in notices if not n.audience.public
                         for p in n.audience.seats if p and not seats[p - 1].bot)
        if answer is not None:
            addressed.add(answer.seat)
        owed = self._owed()
        owing = frozenset(seat for seat, _ in owed - self.owed_before)
        # The sender of the mail answered, if still on move: the answer's
        # subject says so, as a mail asking them would.
        answered = frozenset(s for s, _ in owed if answer is not None and s == answer.seat)
        decision = Decision(
            row=self.row, now=self.now,
            folder=self.engine.templates or self.engine.kind,
            routine=self.engine.routine_notices,
            default_mode=self.engine.default_mail_mode,
            secret_transcripts=self.engine.secret_transcripts,
            notices=notices,
            timeout_for=tuple(self.timeout_for.get(id(n)) for n in notices),
            contexts=MappingProxyType({k: MappingProxyType(v)
                                       for k, v in self.contexts(addressed).items()}),
            turn=self.turn(), owing=owing,
            asks=MappingProxyType({p: self.engine.asks(self.state, p) for p in owing | answered
                                   if p and not seats[p - 1].bot}),
            over=self.engine.is_over(self.state) or self.row.status != "active",
            answer=answer, listed=self.engine.listed_notices)
        self.notices = []
        self.timeout_for = {}
        self.owed_before = owed
        return decision

    def reconcile_deadlines(self) -> None:
        """One deadline per pending obligation: a new key starts its clock,
        a key that stays keeps its deadline, a key gone takes its row.

        The rows gone and the rows new are written at once (Core, statements
        built once): the new ones with their ids known before (``store.ids``),
        taken into the session as rows read, so nothing here is left for a
        flush, and the game's row is written once, with its mail's date."""
        rows = {(d.seat, d.key): d for d in self._deadlines_read()}
        # A game that ended (finished, or cancelled by the operator) owes nothing,
        # whatever its state still lists: a late mail must not restart a clock.
        wanted = ({(p.seat, p.key): p for p in self.engine.pending(self.state)}
                  if self.row.status == "active" else {})
        kept, gone = [], []
        for k, row in rows.items():
            if k not in wanted:
                gone.append(row)
            else:
                kept.append(row)
        if gone:
            stored.forget(self.db, gone)
        new = [p for k, p in wanted.items() if k not in rows]
        back = self._back_from_absences({p.seat for p in new})
        made = []
        for p in new:
            delay = self.row.deadline_seconds if p.due_in is None else p.due_in
            row = m.Deadline(
                id=stored.next_id(self.db),
                game_id=self.row.id, seat=p.seat, key=p.key, what=p.what,
                since=self.now, due_at=self.due(p.seat, timedelta(seconds=delay), back),
                reminded_at=None,
            )
            self.schedule_reminder(row)
            made.append(row)
        if made:
            stored.insert_rows(self.db, made)
        self._deadline_rows = kept + made

    def _deadlines_read(self) -> list[m.Deadline]:
        """The game's deadline rows as the session holds them: read once."""
        if self._deadline_rows is None:
            self._deadline_rows = stored.of_game(self.db, self.row.id)
        return self.deadlines()

    def _back_from_absences(self, seats: set[int]) -> dict[int, datetime]:
        """When the player of each of ``seats`` is back from an absence from
        all their games (``away`` said to no game) that covers this game,
        for those away now: one statement for them all."""
        players = {self.row.seats[s - 1].player_id: s for s in seats if s}
        players.pop(None, None)
        if not players:
            return {}
        back: dict[int, datetime] = {}
        # An absence this mail made is flushed first; nothing else need be
        # (the game's row is written once, after its mails are dated).
        if any(isinstance(o, m.Absence) for o in (*self.db.new, *self.db.dirty)):
            self.db.flush()
        for player, end, games in self.db.connection().execute(AWAY_NOW, {
                "players": list(players), "now": self.now}):
            if self.row.id in games:
                seat = players[player]
                back[seat] = max(back.get(seat, end), end)
        return back

    def due(self, seat: int, time: timedelta, back: dict[int, datetime]) -> datetime:
        """When a deadline made now for ``seat`` (0: the referee's
        timetable) falls, ``time`` from its start: its clock starts when
        the seat's player is ``back`` from an absence from all their games
        (:meth:`_back_from_absences`), and stands still at weekends in a
        game that pauses them (``weekends=off``)."""
        start = max(self.now, back.get(seat, self.now))
        if weekends.paused(self.row.options):
            return weekends.run_clock(start, time)
        return start + time

    def schedule_reminder(self, d: m.Deadline) -> None:
        """Set when ``d``'s player is reminded (``Deadline.remind_at``, which
        the sweep finds through its index): the game's ``reminder`` before
        the deadline, once; never for the referee's own timetable, nor once
        reminded. Called wherever a deadline is made, moved or reminded."""
        d.remind_at = (d.due_at - timedelta(seconds=self.row.reminder_seconds)
                       if d.seat and d.reminded_at is None else None)

    def extend_deadlines(self, by: timedelta, reason: str, asked_by: str | None = None) -> int:
        """Move every open deadline ``by`` later, for the operator (``game
        extend``) or a player away (``asked_by``, by mail); the table is
        told, in the mail of this batch (``decide``). Returns how many
        moved (0: none was open, nobody is told)."""
        moved = self.move_deadlines(by)
        if moved:
            self.notices.append(Notice(Audience.everyone(), "extended", {
                "by": format_duration(by), "reason": reason,
                "deadlines": self.listed_deadlines(), "asked_by": asked_by}))
        return moved

    def move_deadlines(self, by: timedelta) -> int:
        """Move every open deadline ``by`` later (out of a weekend, in a game
        that pauses them), telling nobody; returns how many moved."""
        deadlines = self.deadlines()
        for d in deadlines:
            d.due_at += by
            if weekends.paused(self.row.options):
                d.due_at = weekends.out_of_weekend(d.due_at)
            if d.due_at - timedelta(seconds=self.row.reminder_seconds) > self.now:
                d.reminded_at = None  # remind again before the new deadline
            self.schedule_reminder(d)
        if deadlines:
            self.changed()
        return len(deadlines)

    def listed_deadlines(self) -> list[dict[str, str]]:
        """The open deadlines as a notice to everyone lists them: whose, what,
        when due; a bot's turn is nobody's deadline in the players' mail."""
        return [{"name": self.seat_name(owes), "what": what, "due": format_when(d.due_at)}
                for d, owes, what in self.engine.public_obligations(self.state, self.deadlines())
                if not owes or not self.row.seats[owes - 1].bot]

    def deadlines(self) -> list[m.Deadline]:
        """The game's deadlines, the soonest first (rows deleted since the
        last reconcile left out; rows are only added there)."""
        if self._deadline_rows is None:
            self._deadline_rows = stored.of_game(self.db, self.row.id)
        self._deadline_rows = [d for d in self._deadline_rows
                               if not (inspect(d).deleted or inspect(d).was_deleted
                                       or d in self.db.deleted)]
        return sorted(self._deadline_rows, key=lambda d: (d.due_at, d.id or 0))

    def context(self, seat: int | None) -> dict[str, Any]:
        """What every mail of this game can show, for ``seat`` or the public;
        the referee's timetable and bots' turns are nobody's deadline, but
        the timetable's next act and when it is due are in ``timetable``."""
        return self.contexts([seat])[seat]

    def contexts(self, seats: Iterable[int | None]) -> dict[int | None, dict[str, Any]]:
        """:meth:`context` for each of ``seats``, what they share worked out once."""
        every = self.deadlines()
        deadlines = [d for d in every if d.seat and not self.row.seats[d.seat - 1].bot]
        # A mail for everyone shows only what everyone may know is owed.
        public = [(d, owes) for d, owes, _ in self.engine.public_obligations(self.state, deadlines)]
        # Each seat's soonest deadline, the public's soonest that it may know of.
        soonest: dict[int | None, m.Deadline] = {}
        for d in deadlines:
            soonest.setdefault(d.seat, d)
        if public:
            soonest[None] = public[0][0]
        # What the referee's own timetable owes next (seat 0: a tournament's
        # Round Report or Freeze), for every mail: public by the rules.
        timetable = next((d for d in every if not d.seat), None)
        waiting_for = sorted({self.seat_name(owes) for _, owes in public})
        shown = ({"what": timetable.what, "due": format_when(timetable.due_at)}
                 if timetable else None)
        fingerprint = seed_fingerprint(self.row.seed)
        seed = self.row.seed if self.reveals_seed() else None
        entropy = ([{**c, "said": ENTROPY_HOW.get(c["how"], c["how"])}
                    for c in self.row.entropy or ()] if self.row.draws == MIXED else None)
        draw_seed = (mixed_seed(self.row.seed, contributions(self.row.entropy))
                     if seed and entropy is not None else None)
        out: dict[int | None, dict[str, Any]] = {}
        for seat in seats:
            due = soonest.get(seat)
            out[seat] = {
                "tag": self.tag,
                "game_title": self.engine.title,
                "seat": seat,
                "seat_name": self.seat_name(seat) if seat else None,
                "deadline": format_when(due.due_at) if due else None,
                "waiting_for": waiting_for,
                "timetable": shown,
                "public_list": self.config.referee.public_list,
                # Set in mails caused by the referee's move for an absent seat.
                "timeout_for": None,
                # Set in mails caused by a forced move the referee made (issue 37).
                "autoplayed": None,
                # The commitment to the seed, published by the opening; the
                # seed itself only once the game is over, for the game's last
                # mail, where the rules let it be known (never in a game from
                # before keyed draws, whose opening committed to nothing).
                "seed_sha256": fingerprint,
                "seed": seed,
                # The players' own entropy a ``mixed`` game's draws take
                # (issue 38), each with how it came; None: the seed alone.
                "entropy": entropy,
                "draw_seed": draw_seed,
                "reveals_seed": self.engine.reveals_seed,
                # How the result moved the players in the club's standings,
                # for the game's last mail; None: no standings, or not over.
                "standings_moved": self.standings_moved,
                **self.opening_context,
            }
        return out

    def reveals_seed(self) -> bool:
        """The game is over and its last mail may tell the seed."""
        return (self.engine.reveals_seed and self.row.draws in (KEYED, MIXED)
                and self.engine.is_over(self.state))
