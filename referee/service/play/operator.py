"""The operator's actions: create a game, hand a seat to a bot, cancel a
game, move its deadlines, move a player to a new address, give a player a
new private reply address, prune what ended games no longer need.

Each action is one transaction; what it tells the players is queued in it.
Each takes ``now`` (naive UTC); without it, the clock's.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.utils import getaddresses

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from referee.config import (
    MAX_DEADLINE,
    REMINDER_TOO_LATE,
    Config,
    as_written,
    checked_duration,
)
from referee.games import get_game
from referee.games.base import Action, Audience, Notice, OptionError, SeatInfo
from referee.games.draws import ENTROPY_HOW, KEYED, MIXED, draws_for, seed_fingerprint
from referee.games.names import local_part
from referee.service.errors import RefereeError
from referee.service.outgoing.addresses import new_token
from referee.service.outgoing.delivery import Delivery
from referee.service.outgoing.quiet import MODES
from referee.service.play import player_names
from referee.service.play.guests import WAITING
from referee.service.play.pace import PaceError, table_options
from referee.service.play.session import GameSession
from referee.store import models as m
from referee.store.db import now_utc

#: The longest deadline or reminder a game may have (as in the config).
MAX_OPTION_DURATION = MAX_DEADLINE
#: What a pruned mail's body says.
PRUNED = "[body pruned by referee prune]"


class Operator:
    """What the operator does from the command line."""

    def __init__(self, config: Config, sessions: sessionmaker[Session],
                 delivery: Delivery) -> None:
        self.config, self.sessions, self.delivery = config, sessions, delivery

    def create_game(
        self, kind: str, players: Sequence[str], bots: int = 0,
        options: dict[str, str] | None = None, now: datetime | None = None,
        seed: str | None = None, teams: Sequence[str | None] = (),
        operator_seed: bool = False,
    ) -> str:
        """Create a game, queue the opening, and return its tag.
        ``operator_seed``: the opening says plainly that the operator chose
        the seed and no player's entropy is mixed in (``game new
        --at-once``)."""
        with self.sessions.begin() as db:
            return self.create_in(db, kind, players, bots, options, now or now_utc(), seed,
                                  teams, operator_seed=operator_seed)

    def create_in(
        self, db: Session, kind: str, players: Sequence[str], bots: int = 0,
        options: dict[str, str] | None = None, now: datetime | None = None,
        seed: str | None = None, teams: Sequence[str | None] = (),
        entropy: Sequence[tuple[str, str] | None] | None = None,
        silent: Sequence[tuple[int, str]] = (), silent_by: datetime | None = None,
        operator_seed: bool = False,
    ) -> str:
        """:meth:`create_game` in the caller's transaction (a table of the
        club filled by mail, ``referee.service.club``): the seats in the
        order given, the game's own rules drawing the seating from them.
        ``entropy``: each player's own contribution (value, how) or None, in
        the order of ``players``: the game draws with the ``mixed`` scheme
        (issue 38); without it, from the referee's seed alone (``keyed``).
        ``silent``: the seats (position, name) of an operator's table that
        gave no entropy by its start deadline ``silent_by``, listed in the
        opening and its public record."""
        now = now or now_utc()
        try:
            engine = get_game(kind)
        except KeyError as e:
            raise RefereeError(str(e.args[0])) from None
        raw = dict(options or {})
        given = "reminder" in raw
        deadline = _duration_option(raw, "deadline", self.config.deadlines.default)
        reminder = _duration_option(raw, "reminder", self.config.deadlines.reminder)
        if reminder >= deadline:
            source = "" if given else " (the config's [deadlines] reminder)"
            raise RefereeError(
                f"Option reminder: {as_written(reminder)}{source} is not shorter than the "
                f"deadline, {as_written(deadline)}: {REMINDER_TOO_LATE}; give "
                f"--option reminder={as_written(deadline / 3)}")
        mail = raw.pop("mail", None)
        if mail is not None and mail not in MODES:
            raise RefereeError(f"Option mail: one of {', '.join(MODES)}; got {mail!r}.")
        # The referee's own options (pace.OPTIONS): autoplay=off and
        # orders=off for a whole game (a benchmark's "before", a strict
        # tournament), weekends=off, away=no, rated=no.
        try:
            pace = table_options(raw)
        except PaceError as e:
            raise RefereeError(str(e)) from None
        try:
            opts = engine.parse_options(raw)
        except OptionError as e:
            raise RefereeError(str(e)) from None
        low, high = engine.seat_count(opts)
        n = len(players) + bots
        if not low <= n <= high:
            need = str(low) if low == high else f"{low} to {high}"
            raise RefereeError(f"{engine.title} takes {need} seats; got {n}.")
        parsed = [parse_player(p) for p in players]
        if len({a for a, _ in parsed}) != len(parsed):
            raise RefereeError("The same address is given twice.")
        alike = player_names.first_alike(name for _, name in parsed)
        if alike is not None:
            raise RefereeError(
                f"The names {alike[0]!r} and {alike[1]!r} read alike: give each player a "
                "name the others can tell apart, as in 'Ann Lee <ann@example.org>'.")
        # The name each player goes by besides their display name, for the
        # players to name them by (``referee.games.names``); kept with the
        # options so a replay sees the same after a player's new address.
        aliases = [[i, [local_part(addr)]] for i, (addr, _) in enumerate(parsed, start=1)]
        number = (db.scalar(select(m.Game.id).order_by(m.Game.id.desc()).limit(1)) or 0) + 1
        game = m.Game(
            tag=f"{kind}-{number}", kind=kind,
            options={**opts, **({"mail": mail} if mail else {}), **pace,
                     "deadline": str(deadline),
                     "reminder": str(reminder), "aliases": aliases},
            seed=seed or secrets.token_hex(16), draws=KEYED if entropy is None else MIXED,
            entropy=None if entropy is None else [
                {"position": i, "name": name, "value": given[0], "how": given[1]}
                for i, ((_, name), given) in enumerate(zip(parsed, entropy, strict=False),
                                                       start=1) if given is not None],
            state={}, step=0, status="active",
            deadline_seconds=int(deadline.total_seconds()),
            reminder_seconds=int(reminder.total_seconds()), created_at=now,
        )
        db.add(game)
        infos: list[SeatInfo] = []
        for i, (addr, name) in enumerate(parsed, start=1):
            player = _player(db, addr, name, now)
            team = teams[i - 1] if i - 1 < len(teams) else None
            game.seats.append(m.Seat(position=i, player=player, name=name, team=team))
            infos.append(SeatInfo(i, name, False, team, (local_part(addr),)))
        for j in range(bots):
            pos = len(parsed) + j + 1
            game.seats.append(m.Seat(position=pos, name=f"Bot {pos}", bot=True))
            infos.append(SeatInfo(pos, f"Bot {pos}", True))
        db.flush()
        try:
            result = engine.new(opts, infos, draws_for(game.draws, game.seed, 0,
                                                       entropy=game.entropy))
        except OptionError as e:
            raise RefereeError(str(e)) from None
        game.state = engine.dump(result.state)
        # The public record of the commitment the opening publishes, for
        # the operator's audit (``referee verify``) and the game's page.
        fingerprint = seed_fingerprint(game.seed)
        mixed = "".join(f" Seat {c['position']} ({c['name']}) adds entropy {c['value']} "
                        f"({ENTROPY_HOW[c['how']]})." for c in game.entropy or ())
        if game.draws == MIXED:
            mixed = (" Every draw is keyed by the seed mixed with the players' own entropy."
                     + (mixed or " No player gave any."))
        by = f"{silent_by:%Y-%m-%d %H:%M} UTC" if silent_by else "the start"
        mixed += "".join(f" Seat {pos} ({name}) gave no entropy by {by}."
                         for pos, name in silent)
        if operator_seed:
            mixed += (" The operator chose the seed, and no player's entropy is mixed in: "
                      "the game started at once.")
        db.add(m.Event(game_id=game.id, step=0, kind=m.SEED_EVENT,
                       text=f"The secret seed of every draw is fixed; its SHA-256 "
                            f"fingerprint is {fingerprint}.{mixed}",
                       public=True, data={"seed_sha256": fingerprint,
                                          **({"entropy": game.entropy}
                                             if game.draws == MIXED else {}),
                                          **({"silent": [{"position": p, "name": n}
                                                         for p, n in silent],
                                              "silent_by": by} if silent else {}),
                                          **({"operator_seed": True}
                                             if operator_seed else {})}, at=now))
        gs = GameSession(self.config, self.delivery.composer, db, game, now)
        gs.opening_context = {
            "silent": [{"position": p, "name": n} for p, n in silent], "silent_by": by,
            "operator_seed": operator_seed}
        gs.owed_before = frozenset()  # what the opening asks for is news to all
        for ev in result.events:
            db.add(m.Event(game_id=game.id, step=0, kind=ev.kind, text=ev.text,
                           public=ev.public, data=dict(ev.data), at=now))
        gs.notices = list(result.notices)
        self.delivery.deliver(db, gs.finish())
        return game.tag

    def resign_player(self, tag: str, address: str, now: datetime | None = None) -> str:
        """Hand a player's seat to a bot, as if they had written ``resign``
        (PS-13's admin action); returns the seat's name."""
        now = now or now_utc()
        addr, _ = parse_player(address)
        with self.sessions.begin() as db:
            game = _active_game(db, tag)
            seat = next((s for s in game.seats if not s.bot and s.player is not None
                         and s.player.address == addr), None)
            if seat is None:
                raise RefereeError(f"{addr} plays no seat of {tag}.")
            gs = GameSession(self.config, self.delivery.composer, db, game, now)
            gs.apply(seat.position, Action("resign"), "operator", None)
            self.delivery.deliver(db, gs.finish())
            return seat.name

    def cancel_game(self, tag: str, reason: str = "", now: datetime | None = None) -> None:
        """End a game with no winner; everyone is told why."""
        now = now or now_utc()
        with self.sessions.begin() as db:
            game = _active_game(db, tag)
            gs = GameSession(self.config, self.delivery.composer, db, game, now)
            game.status, game.finished_at = "cancelled", now
            gs.changed()
            for d in gs.deadlines():
                db.delete(d)
            db.add(m.Event(game_id=game.id, step=game.step, kind="cancelled",
                           text=f"The game was cancelled. {reason}".strip(), public=True,
                           data={"reason": reason}, at=now))
            gs.notices.append(Notice(Audience.everyone(), "cancelled", {"reason": reason}))
            self.delivery.deliver(db, gs.decide())

    def extend_deadlines(self, tag: str, by: timedelta, reason: str = "",
                         now: datetime | None = None) -> int:
        """Move every open deadline of a game ``by`` later (a player away, a
        holiday); everyone is told. Returns how many moved."""
        now = now or now_utc()
        if by <= timedelta(0):
            raise RefereeError("extend by a positive duration, like 2d")
        with self.sessions.begin() as db:
            game = _active_game(db, tag)
            gs = GameSession(self.config, self.delivery.composer, db, game, now)
            moved = gs.extend_deadlines(by, reason)
            if not moved:
                raise RefereeError(f"{tag} has no open deadline.")
            self.delivery.deliver(db, gs.decide())
            return moved

    def readdress_player(self, old: str, new: str,
                         now: datetime | None = None) -> tuple[str, list[str]]:
        """Move a player to a new registered address (a bounce, a new
        provider); each active game they sit in is told. Returns the
        player's name and the games' tags."""
        now = now or now_utc()
        old_addr, _ = parse_player(old)
        new_addr, _ = parse_player(new)
        with self.sessions.begin() as db:
            player = db.scalar(select(m.Player).where(m.Player.address == old_addr))
            if player is None:
                raise RefereeError(f"No player has the address {old_addr}.")
            if db.scalar(select(m.Player.id).where(m.Player.address == new_addr)):
                raise RefereeError(f"{new_addr} is already a player's address.")
            player.address, player.bounced_at, player.bounce = new_addr, None, ""
            db.flush()
            games = list(db.scalars(select(m.Game).join(m.Seat).where(
                m.Seat.player_id == player.id, m.Game.status == "active").order_by(m.Game.id)))
            for game in games:
                gs = GameSession(self.config, self.delivery.composer, db, game, now)
                seat = next(s for s in game.seats if s.player_id == player.id)
                gs.notices.append(Notice(Audience.everyone(), "readdressed", {
                    "name": seat.name, "address": new_addr}))
                self.delivery.deliver(db, gs.decide())
            return player.name or new_addr, [g.tag for g in games]

    def prune(self, before: datetime) -> tuple[int, int]:
        """Drop the bodies of sent (or failed) mail and the records of
        processed inbound mail of games that ended before ``before``. What
        a game was (its state, action log and public events) stays, so
        ``replay`` and the pages still work. Returns (bodies, inbound rows)."""
        with self.sessions.begin() as db:
            ended = select(m.Game.id).where(m.Game.status != "active",
                                            m.Game.finished_at < before)
            bodies = 0
            for row in db.scalars(select(m.Outbox).where(
                    m.Outbox.game_id.in_(ended), m.Outbox.raw.not_like(f"%{PRUNED}%"),
                    (m.Outbox.sent_at.is_not(None)) | (m.Outbox.failed_at.is_not(None)))):
                head, sep, _ = row.raw.partition("\r\n\r\n")
                if not sep:
                    head, sep, _ = row.raw.partition("\n\n")
                row.raw, bodies = f"{head}{sep or chr(10) * 2}{PRUNED}\n", bodies + 1
            gone = select(m.Inbound.id).where(m.Inbound.game_id.in_(ended),
                                              m.Inbound.status.not_in(("failed", WAITING)))
            db.execute(update(m.ActionLog).where(m.ActionLog.inbound_id.in_(gone))
                       .values(inbound_id=None))
            inbound = db.scalar(select(func.count()).select_from(gone.subquery())) or 0
            db.execute(delete(m.Inbound).where(m.Inbound.id.in_(gone)))
            return bodies, inbound

    def rotate_token(self, address: str) -> None:
        """New private reply addresses for a player whose old ones got out:
        their own, and their seats' (each made anew when next mailed)."""
        with self.sessions.begin() as db:
            addr, _ = parse_player(address)  # "Name <addr>" or addr
            player = db.scalar(select(m.Player).where(m.Player.address == addr))
            if player is None:
                raise RefereeError(f"No player has the address {addr}.")
            player.token = new_token()
            db.execute(update(m.Seat).where(m.Seat.player_id == player.id).values(token=None))


def parse_player(text: str) -> tuple[str, str]:
    """``"Alice <alice@x.org>"`` or ``alice@x.org`` -> (address, name)."""
    pairs = getaddresses([text])
    if len(pairs) != 1 or "@" not in pairs[0][1]:
        raise RefereeError(f"{text!r} is not a mail address like 'Alice <alice@example.org>'")
    name, addr = pairs[0]
    addr = addr.strip().lower()
    return addr, (player_names.clean(name)
                  or player_names.clean(addr.partition("@")[0].capitalize()))


def move_deadline(options: dict[str, str], config: Config) -> timedelta:
    """The move deadline a game of ``options`` (as written) would have:
    its ``deadline=``, else the config's default."""
    return _duration_option(dict(options), "deadline", config.deadlines.default)


def _duration_option(raw: dict[str, str], key: str, default: timedelta) -> timedelta:
    if key not in raw:
        return default
    try:
        return checked_duration(raw.pop(key), MAX_OPTION_DURATION)
    except ValueError as e:
        raise RefereeError(f"Option {key}: {e}") from None


def _player(db: Session, addr: str, name: str, now: datetime) -> m.Player:
    player = db.scalar(select(m.Player).where(m.Player.address == addr))
    if player is None:
        player = m.Player(address=addr, name=name, created_at=now)
        db.add(player)
    elif name and not player.name:
        player.name = name
    return player


def _active_game(db: Session, tag: str) -> m.Game:
    game = db.scalar(select(m.Game).where(m.Game.tag == tag))
    if game is None:
        raise RefereeError(f"There is no game {tag}.")
    if game.status != "active":
        raise RefereeError(f"{tag} is {game.status}; there is nothing to do.")
    return game
