"""The club's open tables: a game asked for by mail, filled seat by seat,
and started when full (issue 36). Opening one (bounded by ``[club]
tables_per_member`` an opener, and by ``open_tables``: who may), taking and
leaving a seat, inviting (only members, or addresses that have written to
the referee; at most ``invites_per_day`` a writer, and one invitation mail
a day to an address that has not answered), accepting and declining,
starting (by itself when full, or at the opener's ``start`` where the
game takes a range of seats), a rematch of a finished game, expiring the
tables past ``table_days``, and the list of open tables.

Who is a member: a player the operator added (``Player.member_since``),
or anyone who has played a seat of a game here.

Each action runs in the caller's transaction (intake's, for a mail; the
command line's own) and returns :class:`Done`: what happened and who must
be told; the mails themselves are the caller's. Nothing is written when
it refuses (:class:`Refused`, saying what would be right). The game is
made by ``play``'s operator (:meth:`Operator.create_in`) with the seats in
the order they were taken: the game's own rules draw the seating from its
seed (Spades keeps partners apart, by the seats' teams).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from email.utils import formataddr
from typing import Any

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import PackageFault
from referee.games.base import Game, IllegalAction, OptionError
from referee.games.draws import MESSAGE_ID, WORDS, seed_fingerprint
from referee.games.names import Nameable, find_seat, local_part
from referee.service.club.words import SEATS_OPTION, NewTable, Unreadable, engine_of
from referee.service.errors import RefereeError
from referee.service.outgoing.addresses import new_token
from referee.service.play import pace, player_names
from referee.service.play.operator import Operator, parse_player
from referee.store import models as m
from referee.store.db import now_utc

#: An address that has not answered an invitation gets at most one
#: invitation mail in so long.
INVITE_MAIL_EVERY = timedelta(days=1)
#: The window ``[club] invites_per_day`` counts a writer's invitations in.
DAY = timedelta(days=1)
#: The game options a rematch of a game made at the command line takes
#: from it: those its game lists (``option_help``), as written again.
_NOT_OPTIONS = frozenset({"deadline", "reminder", "aliases", "mail", "edition",
                          *pace.OPTIONS})


#: A player's own entropy for the draws (issue 38): the value and how it
#: came (``draws.MESSAGE_ID`` or ``draws.WORDS``); None: none given.
Entropy = tuple[str, str] | None


class Refused(Exception):
    """A club command that cannot be done; nothing changed. The message
    says what would be right."""


@dataclass(frozen=True)
class Invitation:
    """An invitation to mail: to whom, from whom, for which table, and the
    secret of its reply address (``referee+TOKEN@``)."""

    address: str
    name: str
    by: str
    table: str
    token: str


@dataclass(frozen=True)
class Done:
    """What a club action did (``what``: opened, joined, left, accepted,
    declined, started, expired, cancelled), to which table, the game it
    started, the addresses to tell, the invitations to mail, and whether
    the open table is to be posted to the list (it has seats for anyone)."""

    what: str
    table: str
    game: str | None = None
    tell: tuple[str, ...] = ()
    invitations: tuple[Invitation, ...] = ()
    post: bool = False
    #: The writer's own entropy as the table keeps it now (issue 38),
    #: quoted back in the answer to them.
    entropy: Entropy = None


@dataclass(frozen=True)
class TableView:
    """An open table as ``tables`` lists it."""

    tag: str
    kind: str
    title: str
    opener: str
    seated: tuple[str, ...]
    invited: tuple[str, ...]
    seats_min: int
    seats_max: int
    expires_at: datetime
    rematch_of: str | None = None
    #: The options as written (``cards=13``).
    options: tuple[tuple[str, str], ...] = ()
    opened_at: datetime | None = None
    #: The commitment to the seed of the game it becomes, published from
    #: its opening on (None: a table opened before tables kept one).
    seed_sha256: str | None = None
    #: Opened by the operator's ``game new``: every seat filled by them,
    #: starting when each has given entropy or at ``expires_at``.
    by_operator: bool = False
    #: The seated who have given their entropy (an operator's table).
    contributed: tuple[str, ...] = ()

    @property
    def seats_left(self) -> int:
        """Seats neither taken nor held for an invitation."""
        return max(0, self.seats_max - len(self.seated) - len(self.invited))

    @property
    def seats_to_start(self) -> int:
        """Where the game takes a range of seats (Miser, 3 or more): the
        seats still wanted before its opener may start it; else 0."""
        if self.seats_min >= self.seats_max:
            return 0
        return max(0, self.seats_min - len(self.seated) - len(self.invited))


@dataclass
class _Seats:
    """A table's people by state, in the order they came."""

    seated: list[m.TableSeat] = field(default_factory=list)
    invited: list[m.TableSeat] = field(default_factory=list)
    declined: list[m.TableSeat] = field(default_factory=list)


class Tables:
    """The club's tables over one referee's config and operator."""

    def __init__(self, config: Config, operator: Operator) -> None:
        self.config, self.operator = config, operator

    # -- who -------------------------------------------------------------------

    @staticmethod
    def is_member(db: Session, player: m.Player | None) -> bool:
        """A player the operator added, or who has played a seat here."""
        if player is None:
            return False
        if player.member_since is not None:
            return True
        return bool(db.scalar(select(exists().where(m.Seat.player_id == player.id,
                                                     m.Seat.bot.is_(False)))))

    @staticmethod
    def has_written(db: Session, address: str) -> bool:
        """Whether mail from ``address`` has come to the referee."""
        return bool(db.scalar(select(exists().where(m.Inbound.sender == address))))

    def may_not_open(self, db: Session, player: m.Player | None) -> str | None:
        """Why ``player`` (None: an address the referee never saw) may not
        open a table by mail, under ``[club] open_tables``; None if they may."""
        who = self.config.club.open_tables
        if who == "operator":
            return "Tables are opened by the operator here; ask them to start the game."
        if who == "members" and not self.is_member(db, player):
            return ("Tables are opened by the club's members here (anyone who has played "
                    "a game here, or whom the operator added); 'tables' lists the open "
                    "tables to join.")
        return None

    def add_member(self, db: Session, address: str, now: datetime) -> m.Player:
        """The operator's ``member add``: ``address`` ("Name <addr>" or addr)
        may open tables and be invited."""
        try:
            addr, name = parse_player(address)
        except RefereeError as e:
            raise Refused(str(e)) from None
        player = _player(db, addr, name, now)
        if player.member_since is None:
            player.member_since = now
        return player

    # -- opening ---------------------------------------------------------------

    def open(self, db: Session, writer: str, asked: NewTable, now: datetime,
             by_operator: bool = False, entropy: Entropy = None) -> Done:
        """Open a table for ``asked`` (the writer seated, with their
        ``entropy``), invite those it names, and say whom to mail. The seed
        of its game is drawn now, before anyone's entropy is known."""
        addr, name = _address(writer)
        player = db.scalar(select(m.Player).where(m.Player.address == addr))
        if not by_operator and (why := self.may_not_open(db, player)) is not None:
            raise Refused(why)
        player = player or _player(db, addr, name, now)
        self._within_tables_per_member(db, player)
        try:
            engine = engine_of(asked.kind)
            low, high = engine.seat_count(engine.parse_options(_games_own(asked.options)))
        except Unreadable as e:
            raise Refused(str(e)) from None
        except (OptionError, PackageFault) as e:  # the game's own refusal
            raise Refused(str(e)) from None
        wanted = asked.seats
        seats_min, seats_max = (low, wanted if wanted is not None else high)
        if wanted is not None and low == high:
            seats_min = wanted
        team_of = self._teams(db, player, asked, now)
        invited = self._resolve(db, player, [*asked.names, *(n for pair in asked.teams
                                                              for n in pair)], now)
        options = dict(asked.options)
        if 1 + len(invited) > seats_max:
            # "new goofspiel with Bob, Carol": a game whose own option says
            # how many seats (Goofspiel's, Pure Skill's players), left
            # unsaid, seats as many as are named, where the game takes them.
            more = _seats_for(engine, options, 1 + len(invited))
            if more is None:
                raise Refused(f"{engine.title} takes at most {seats_max} players; "
                              f"{1 + len(invited)} are named with you: name at most "
                              f"{seats_max - 1} beside you.")
            options, seats_min, seats_max = more, 1 + len(invited), 1 + len(invited)
        self._within_invites(db, player, len(invited), now)
        table = m.OpenTable(tag="", kind=asked.kind, options=options,
                            opener=player, seats_min=seats_min, seats_max=seats_max,
                            status=m.TABLE_OPEN, created_at=now,
                            expires_at=now + timedelta(days=self.config.club.table_days),
                            seed=secrets.token_hex(16))
        db.add(table)
        db.flush()
        table.tag = f"{asked.kind}-t{table.id}"
        table.seats.append(m.TableSeat(player=player, state=m.SEATED, answered_at=now,
                                       team=team_of.get(player.id)))
        _give(table.seats[-1], entropy)
        invitations = self._invite(db, table, player, invited, team_of, now)
        db.flush()
        return Done("opened", table.tag, tell=(player.address,), invitations=invitations,
                    post=seats_max > 1 + len(invited), entropy=entropy)

    def rematch(self, db: Session, writer: str, game_tag: str, now: datetime,
                entropy: Entropy = None) -> Done:
        """Open the same table again for the players of the finished game
        ``game_tag``: the writer seated, the others invited; it starts when
        all have accepted. Open to any of its players whoever may open
        tables (they were all at it)."""
        addr, _ = _address(writer)
        game = db.scalar(select(m.Game).where(m.Game.tag == game_tag))
        if game is None:
            raise Refused(f"There is no game {game_tag}.")
        if game.status == "active":
            raise Refused(f"{game_tag} is still being played; 'rematch' after its end.")
        humans = [(s, s.player) for s in game.seats if not s.bot and s.player is not None]
        player = next((p for _, p in humans if p.address == addr), None)
        if player is None:
            raise Refused(f"Only the players of {game_tag} may ask for its rematch.")
        if db.scalar(select(exists().where(m.OpenTable.rematch_of_id == game.id,
                                           m.OpenTable.status == m.TABLE_OPEN))):
            raise Refused(f"A rematch of {game_tag} is open already; 'tables' lists it.")
        self._within_tables_per_member(db, player)
        options = self._options_of(db, game)
        n = len(game.seats)  # the same table: a seat a bot took is open to anyone
        table = m.OpenTable(tag="", kind=game.kind, options=options, opener=player,
                            seats_min=n, seats_max=n, status=m.TABLE_OPEN, created_at=now,
                            expires_at=now + timedelta(days=self.config.club.table_days),
                            rematch_of_id=game.id, seed=secrets.token_hex(16))
        db.add(table)
        db.flush()
        table.tag = f"{game.kind}-t{table.id}"
        team_of = {p.id: s.team for s, p in humans if s.team}
        table.seats.append(m.TableSeat(player=player, state=m.SEATED, answered_at=now,
                                       team=team_of.get(player.id)))
        _give(table.seats[-1], entropy)
        others = [p for _, p in humans if p is not player]
        invitations = self._invite(db, table, player, others, team_of, now)
        db.flush()
        return Done("opened", table.tag, tell=(player.address,), invitations=invitations,
                    post=n > len(humans), entropy=entropy)

    def open_for_operator(self, db: Session, kind: str, players: Sequence[str], bots: int,
                          options: dict[str, str], now: datetime, start_by: datetime,
                          seed: str | None = None) -> Done:
        """The operator's ``game new`` (issue 38): a table with every seat
        filled by them, its seed drawn (or ``seed``) and committed to now;
        each player is told they are seated and may give entropy (a reply,
        or ``entropy WORDS``); the game starts when all have, or at
        ``start_by``. The game is made once in a savepoint first, so what
        it would refuse is refused now, nothing written."""
        parsed = []
        for written in players:
            try:
                parsed.append(parse_player(written))
            except RefereeError as e:
                raise Refused(str(e)) from None
        if not parsed:
            raise Refused("An operator's table needs a player to give entropy.")
        seed = seed or secrets.token_hex(16)
        trial = db.begin_nested()
        try:
            self.operator.create_in(db, kind, list(players), bots, dict(options), now,
                                    seed, entropy=[None] * len(parsed))
        except RefereeError as e:
            raise Refused(str(e)) from None
        finally:
            trial.rollback()
        seated = [_player(db, addr, name, now) for addr, name in parsed]
        for player, (_, name) in zip(seated, parsed, strict=True):
            if name and not player.name:
                player.name = name  # as the game would seat them
        n = len(seated)
        table = m.OpenTable(tag="", kind=kind, options=dict(options), opener=seated[0],
                            seats_min=n, seats_max=n, status=m.TABLE_OPEN, created_at=now,
                            expires_at=start_by, seed=seed, by_operator=True, bots=bots)
        db.add(table)
        db.flush()
        table.tag = f"{kind}-t{table.id}"
        for player in seated:
            table.seats.append(m.TableSeat(player=player, state=m.SEATED, answered_at=now))
        db.flush()
        return Done("seated", table.tag, tell=tuple(p.address for p in seated))

    def contribute(self, db: Session, writer: str, tag: str, entropy: Entropy,
                   now: datetime) -> Done | None:
        """A seated player's first mail about the operator's table ``tag``
        gives its Message-ID as their entropy; the game starts once every
        player has given theirs. None: not theirs to give (no such open
        operator's table, no seat, or given already)."""
        addr, _ = _address(writer)
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag.casefold()))
        if table is None or not table.by_operator or table.status != m.TABLE_OPEN:
            return None
        seat = _seat_of(table, db.scalar(select(m.Player).where(m.Player.address == addr)))
        if seat is None or seat.state != m.SEATED or seat.entropy or entropy is None:
            return None
        _give(seat, entropy)
        db.flush()
        started = self._all_given(db, table, now)
        if started is not None:  # the mail that started it quotes its entropy back too
            return replace(started, entropy=entropy)
        return Done("entropy", table.tag, tell=(addr,), entropy=entropy)

    def seated_at_operator_table(self, db: Session, address: str, tag: str) -> bool:
        """Whether ``address`` has a seat at the open operator's table ``tag``."""
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag.casefold()))
        if table is None or not table.by_operator or table.status != m.TABLE_OPEN:
            return False
        player = db.scalar(select(m.Player).where(m.Player.address == address))
        seat = _seat_of(table, player)
        return seat is not None and seat.state == m.SEATED

    def _all_given(self, db: Session, table: m.OpenTable, now: datetime) -> Done | None:
        """An operator's table whose every seat has given entropy starts."""
        if table.by_operator and all(s.entropy for s in _people(table).seated):
            return self._start(db, table, now)
        return None

    # -- seats -----------------------------------------------------------------

    def join(self, db: Session, writer: str, tag: str, now: datetime,
             entropy: Entropy = None) -> Done:
        """Take a seat at ``tag`` (an invitation to it is accepted so);
        the game starts if that fills the table. A start the game's rules
        refuse (teams that cannot be formed) raises :class:`Refused` after
        the seat is taken: the caller rolls its transaction back."""
        addr, name = _address(writer)
        table = self._open_table(db, tag)
        player = db.scalar(select(m.Player).where(m.Player.address == addr))
        seat = _seat_of(table, player)
        if seat is not None and seat.state == m.SEATED:
            raise Refused(f"You have a seat at {tag} already.")
        if seat is not None and seat.state == m.INVITED:
            return self._take(db, table, seat, "accepted", now, entropy)
        people = _people(table)
        if len(people.seated) + len(people.invited) >= table.seats_max:
            raise Refused(f"{tag} is full; 'tables' lists the tables with seats left, and "
                          f"'new {table.kind}' opens another.")
        if seat is None:
            seat = m.TableSeat(player=player or _player(db, addr, name, now), state=m.SEATED)
            table.seats.append(seat)
        return self._take(db, table, seat, "joined", now, entropy)

    def leave(self, db: Session, writer: str, tag: str, now: datetime) -> Done:
        """Give up a seat before the start; the opener leaving closes the
        table, and the others are told."""
        addr, _ = _address(writer)
        table = self._open_table(db, tag)
        seat = _seat_of(table, db.scalar(select(m.Player).where(m.Player.address == addr)))
        if seat is None or seat.state != m.SEATED:
            raise Refused(f"You have no seat at {tag}.")
        if table.by_operator:
            raise Refused(f"The operator seated you at {tag}; ask them to change the game.")
        if seat.player_id == table.opener_id:
            return self._close(table, m.TABLE_CANCELLED, now, "cancelled")
        table.seats.remove(seat)
        db.flush()
        return Done("left", tag, tell=_once(addr, table.opener.address))

    def accept(self, db: Session, writer: str, tag: str | None, now: datetime,
               token: str | None = None, entropy: Entropy = None) -> Done:
        """Accept an invitation: the one whose reply address ``token`` is,
        or the one to ``tag``, or the writer's only one."""
        table, seat = self._invitation(db, writer, tag, token)
        return self._take(db, table, seat, "accepted", now, entropy)

    def give_entropy(self, db: Session, writer: str, tag: str, words: str,
                     now: datetime | None = None) -> Done:
        """The writer's ``entropy TAG WORDS``: their own words for the
        draws, in place of what their seat at the open table ``tag`` gave."""
        addr, _ = _address(writer)
        table = self._open_table(db, tag)
        seat = _seat_of(table, db.scalar(select(m.Player).where(m.Player.address == addr)))
        if seat is None or seat.state != m.SEATED:
            raise Refused(f"You have no seat at {table.tag}, so no entropy to give there; "
                          f"'join {table.tag}' takes one (an 'entropy WORDS' line in that "
                          "mail gives your words).")
        if table.seed is None:
            raise Refused(f"{table.tag} was opened before players gave entropy; its game "
                          "draws from the referee's seed alone.")
        given: Entropy = (words, WORDS)
        _give(seat, given)
        db.flush()
        started = self._all_given(db, table, now or now_utc())
        if started is not None:
            return replace(started, entropy=given)
        return Done("entropy", table.tag, tell=(addr,), entropy=given)

    def decline(self, db: Session, writer: str, tag: str | None, now: datetime,
                token: str | None = None) -> Done:
        """Decline an invitation (as :meth:`accept` finds it); the opener
        is told, and the seat it held is free for anyone."""
        table, seat = self._invitation(db, writer, tag, token)
        seat.state, seat.answered_at, seat.token = m.DECLINED, now, None
        db.flush()
        return Done("declined", table.tag, tell=(table.opener.address,), post=True)

    def start(self, db: Session, writer: str, tag: str, now: datetime) -> Done:
        """The opener's ``start``: where the game takes a range of seats,
        start with those seated, enough of them."""
        addr, _ = _address(writer)
        table = self._open_table(db, tag)
        if table.by_operator:
            raise Refused(f"The operator opened {tag}; it starts when every player has given "
                          f"entropy, or on {table.expires_at:%Y-%m-%d %H:%M} UTC.")
        if table.opener.address != addr:
            raise Refused(f"Only {table.opener.name or table.opener.address}, who opened "
                          f"{tag}, may start it.")
        seated = len(_people(table).seated)
        if seated < table.seats_min:
            raise Refused(f"{tag} needs at least {table.seats_min} players to start; "
                          f"{seated} {'is' if seated == 1 else 'are'} seated.")
        return self._start(db, table, now)

    # -- the operator and the sweep ---------------------------------------------

    def cancel(self, db: Session, tag: str, now: datetime) -> Done:
        """The operator's ``table cancel``: close an open table."""
        return self._close(self._open_table(db, tag), m.TABLE_CANCELLED, now, "cancelled")

    def expire(self, db: Session, now: datetime) -> list[Done]:
        """Close the open tables past ``[club] table_days``, each with who
        to tell (those seated or invited); an operator's table past its
        start deadline starts instead, those who gave no entropy listed."""
        due = db.scalars(select(m.OpenTable).where(m.OpenTable.status == m.TABLE_OPEN,
                                                   m.OpenTable.expires_at <= now)
                         .order_by(m.OpenTable.id))
        return [self._start(db, table, now) if table.by_operator
                else self._close(table, m.TABLE_EXPIRED, now, "expired") for table in list(due)]

    def listing(self, db: Session) -> list[TableView]:
        """The open tables, oldest first."""
        return [_view(db, table) for table in db.scalars(
            select(m.OpenTable).where(m.OpenTable.status == m.TABLE_OPEN)
            .order_by(m.OpenTable.id))]

    def view(self, db: Session, tag: str) -> TableView | None:
        """The table ``tag`` as it is now, open or not (None: no such
        table): what the mails of an action done to it show."""
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag.casefold()))
        return None if table is None else _view(db, table)

    def invitation_of(self, db: Session, token: str) -> m.TableSeat | None:
        """The pending invitation whose reply address holds ``token``."""
        seat = db.scalar(select(m.TableSeat).where(m.TableSeat.token == token))
        if seat is None or seat.state != m.INVITED or seat.table.status != m.TABLE_OPEN:
            return None
        return seat

    # -- inside ----------------------------------------------------------------

    def _take(self, db: Session, table: m.OpenTable, seat: m.TableSeat, what: str,
              now: datetime, entropy: Entropy = None) -> Done:
        seated = _people(table).seated
        if seat not in seated and len(seated) + 1 >= table.seats_max:
            _startable([*seated, seat])
        seat.state, seat.answered_at, seat.token = m.SEATED, now, None
        _give(seat, entropy)
        db.flush()
        if len(_people(table).seated) >= table.seats_max:
            # The seat that fills the table starts the game: the answer to
            # its mail (the start's) quotes back the entropy taken from it.
            return replace(self._start(db, table, now), entropy=_kept(table, seat))
        return Done(what, table.tag, tell=_once(seat.player.address, table.opener.address),
                    entropy=entropy)

    def _start(self, db: Session, table: m.OpenTable, now: datetime) -> Done:
        seated = _people(table).seated
        _startable(seated)
        players = [formataddr((_name(s.player), s.player.address)) for s in seated]
        teams = [s.team for s in seated] if any(s.team for s in seated) else []
        try:
            # The table's seed, committed to when it opened, mixed with the
            # seats' entropy (issue 38); a table from before keeps neither.
            entropy = (None if table.seed is None else
                       [(s.entropy, s.entropy_how or MESSAGE_ID) if s.entropy else None
                        for s in seated])
            silent = ([(i, _name(s.player)) for i, s in enumerate(seated, start=1)
                       if not s.entropy] if table.by_operator else [])
            game = self.operator.create_in(db, table.kind, players, bots=table.bots,
                                           options=dict(table.options), now=now, teams=teams,
                                           seed=table.seed, entropy=entropy, silent=silent,
                                           silent_by=table.expires_at)
        except RefereeError as e:
            raise Refused(f"{table.tag} cannot start: {e}") from None
        table.status, table.ended_at = m.TABLE_STARTED, now
        table.game_id = db.scalar(select(m.Game.id).where(m.Game.tag == game))
        for seat in _people(table).invited:
            seat.token = None
        db.flush()
        return Done("started", table.tag, game=game,
                    tell=tuple(s.player.address for s in seated))

    def _close(self, table: m.OpenTable, status: str, now: datetime, what: str) -> Done:
        people = _people(table)
        table.status, table.ended_at = status, now
        for seat in people.invited:
            seat.token = None
        return Done(what, table.tag,
                    tell=tuple(s.player.address for s in [*people.seated, *people.invited]))

    def _open_table(self, db: Session, tag: str) -> m.OpenTable:
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.tag == tag.casefold()))
        if table is None:
            raise Refused(f"There is no table {tag}; 'tables' lists the open tables.")
        if table.status != m.TABLE_OPEN:
            became = (db.scalar(select(m.Game.tag).where(m.Game.id == table.game_id))
                      if table.game_id is not None else None)
            then = f" as {became}" if became else ""
            raise Refused(f"{tag} is {table.status}{then}; 'tables' lists the open tables.")
        return table

    @staticmethod
    def invited(db: Session, player: m.Player | None) -> bool:
        """Whether ``player`` has an invitation to an open table unanswered."""
        return player is not None and bool(db.scalar(select(exists().where(
            m.TableSeat.player_id == player.id, m.TableSeat.state == m.INVITED,
            m.OpenTable.id == m.TableSeat.table_id, m.OpenTable.status == m.TABLE_OPEN))))

    def _invitation(self, db: Session, writer: str, tag: str | None,
                    token: str | None) -> tuple[m.OpenTable, m.TableSeat]:
        addr, _ = _address(writer)
        if token is not None:
            seat = self.invitation_of(db, token)
            if seat is None or seat.player.address != addr:
                raise Refused("This invitation is no longer open; 'tables' lists the open "
                              "tables.")
            return seat.table, seat
        player = db.scalar(select(m.Player).where(m.Player.address == addr))
        pending = [] if player is None else list(db.scalars(
            select(m.TableSeat).join(m.OpenTable).where(
                m.TableSeat.player_id == player.id, m.TableSeat.state == m.INVITED,
                m.OpenTable.status == m.TABLE_OPEN).order_by(m.TableSeat.id)))
        if tag is not None:
            pending = [s for s in pending if s.table.tag == tag.casefold()]
        if not pending:
            where = f" to {tag}" if tag else ""
            raise Refused(f"You have no invitation{where} open; 'tables' lists the open "
                          "tables.")
        if len(pending) > 1:
            tags = ", ".join(s.table.tag for s in pending)
            raise Refused(f"You are invited to {tags}: write the tag too, like "
                          f"'accept {pending[0].table.tag}'.")
        return pending[0].table, pending[0]

    def _within_tables_per_member(self, db: Session, player: m.Player) -> None:
        most = self.config.club.tables_per_member
        mine = db.scalar(select(func.count()).select_from(m.OpenTable).where(
            m.OpenTable.opener_id == player.id, m.OpenTable.status == m.TABLE_OPEN)) or 0
        if mine >= most:
            raise Refused(f"You have {mine} open tables, the most one may have; 'leave' one "
                          "of them first ('tables' lists them).")

    def _within_invites(self, db: Session, player: m.Player, more: int,
                        now: datetime) -> None:
        if not more:
            return
        most = self.config.club.invites_per_day
        sent = db.scalar(select(func.count()).select_from(m.TableSeat).where(
            m.TableSeat.invited_by_id == player.id, m.TableSeat.invited_at > now - DAY)) or 0
        if sent + more > most:
            left = max(0, most - sent)
            raise Refused(f"One may invite {most} players a day; you may invite {left} more "
                          "today. Open the table without them: anyone may join it.")

    def _resolve(self, db: Session, writer: m.Player, names: Sequence[str],
                 now: datetime) -> list[m.Player]:
        """The players ``names`` invite (the writer named is left out), each
        a member or an address that has written to the referee."""
        found: list[m.Player] = []
        members: list[m.Player] | None = None
        for written in names:
            if "@" in written:
                player = self._by_address(db, written, now)
            else:
                if members is None:
                    members = self._members(db, writer)
                player = _named(written, members)
            if player is not writer and player not in found:
                found.append(player)
        return found

    def _by_address(self, db: Session, written: str, now: datetime) -> m.Player:
        try:
            addr, name = parse_player(written)
        except RefereeError as e:
            raise Refused(str(e)) from None
        player = db.scalar(select(m.Player).where(m.Player.address == addr))
        if self.is_member(db, player):
            assert player is not None
            return player
        if not self.has_written(db, addr):
            raise Refused(f"{addr} is not a member of the club and has never written to the "
                          "referee, so it is not invited; ask them to write to the referee "
                          "first, or to join the table.")
        return player or _player(db, addr, name, now)

    def _members(self, db: Session, writer: m.Player) -> list[m.Player]:
        played = select(m.Seat.player_id).where(m.Seat.bot.is_(False),
                                                m.Seat.player_id.is_not(None))
        return [writer, *(p for p in db.scalars(
            select(m.Player).where(m.Player.member_since.is_not(None)
                                   | m.Player.id.in_(played)).order_by(m.Player.id))
            if p is not writer)]

    def _teams(self, db: Session, writer: m.Player, asked: NewTable,
               now: datetime) -> dict[int, str]:
        """Player id -> team ("1" for the first pair named, "2" ...)."""
        team_of: dict[int, str] = {}
        for number, pair in enumerate(asked.teams, start=1):
            for player in self._resolve(db, writer, pair, now) + (
                    [writer] if any(_names_writer(n, writer) for n in pair) else []):
                team_of[player.id] = str(number)
        return team_of

    def _invite(self, db: Session, table: m.OpenTable, by: m.Player,
                players: Sequence[m.Player], team_of: dict[int, str],
                now: datetime) -> tuple[Invitation, ...]:
        """Invite ``players`` to ``table``; the invitations to mail now (an
        address that has not answered one gets one mail a day)."""
        out = []
        for player in players:
            recent = db.scalar(select(exists().where(
                m.TableSeat.player_id == player.id, m.TableSeat.state == m.INVITED,
                m.TableSeat.told_at > now - INVITE_MAIL_EVERY)))
            seat = m.TableSeat(player=player, state=m.INVITED, team=team_of.get(player.id),
                               invited_by_id=by.id, invited_at=now, token=new_token())
            table.seats.append(seat)
            if not recent:
                seat.told_at = now
                assert seat.token is not None
                out.append(Invitation(player.address, _name(player), _name(by), table.tag,
                                      seat.token))
        return tuple(out)

    def _options_of(self, db: Session, game: m.Game) -> dict[str, Any]:
        """A rematch's options: those of the table the game came from, else
        the game's own options its rules list, written again."""
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.game_id == game.id))
        if table is not None:
            return dict(table.options)
        try:
            engine = engine_of(game.kind)
        except Unreadable as e:
            raise Refused(str(e)) from None
        options: dict[str, Any] = {}
        for key, value in game.options.items():
            if key in _NOT_OPTIONS or key not in engine.option_help or value is None:
                continue
            options[key] = (",".join(str(v) for v in value) if isinstance(value, list)
                            else str(value).lower() if isinstance(value, bool) else str(value))
        try:
            engine.parse_options(options)
        except Exception:  # written otherwise than read: the defaults
            options = {}
        # The referee's own options (pace.OPTIONS: autoplay=off, weekends=off,
        # away=no, ...) too.
        return {**options, **{k: str(v) for k, v in game.options.items() if k in pace.OPTIONS}}


def _view(db: Session, table: m.OpenTable) -> TableView:
    people = _people(table)
    try:
        title = engine_of(table.kind).title
    except Unreadable:
        title = table.kind
    rematch = (db.scalar(select(m.Game.tag).where(m.Game.id == table.rematch_of_id))
               if table.rematch_of_id is not None else None)
    return TableView(
        table.tag, table.kind, title, _name(table.opener),
        tuple(_name(s.player) for s in people.seated),
        tuple(_name(s.player) for s in people.invited),
        table.seats_min, table.seats_max, table.expires_at, rematch,
        tuple((str(k), str(v)) for k, v in table.options.items()), table.created_at,
        None if table.seed is None else seed_fingerprint(table.seed), table.by_operator,
        tuple(_name(s.player) for s in people.seated if s.entropy))


def _kept(table: m.OpenTable, seat: m.TableSeat) -> Entropy:
    """The entropy ``seat`` gives the game of ``table`` (none: a table
    from before players gave entropy, or a mail that gave none)."""
    if table.seed is None or not seat.entropy:
        return None
    return (seat.entropy, seat.entropy_how or MESSAGE_ID)


def _give(seat: m.TableSeat, entropy: Entropy) -> None:
    """Keep a seat's entropy (none given: what it had stays)."""
    if entropy is not None:
        seat.entropy, seat.entropy_how = entropy


def _address(writer: str) -> tuple[str, str]:
    try:
        return parse_player(writer)
    except RefereeError as e:
        raise Refused(str(e)) from None


def _player(db: Session, addr: str, name: str, now: datetime) -> m.Player:
    player = db.scalar(select(m.Player).where(m.Player.address == addr))
    if player is None:
        player = m.Player(address=addr, name=name, created_at=now)
        db.add(player)
        db.flush()
    return player


def _once(*addresses: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(addresses))


def _startable(seats: Sequence[m.TableSeat]) -> None:
    """Refuse, before anything is written, a start ``create_game`` would
    refuse for the names: two players whose names read alike."""
    alike = player_names.first_alike(_name(s.player) for s in seats)
    if alike is not None:
        raise Refused(f"The names {alike[0]!r} and {alike[1]!r} read alike, so the game "
                      "cannot start: one of them may 'leave' and join under another name.")


def _name(player: m.Player) -> str:
    return player.name or player.address.partition("@")[0].capitalize()


def _names_writer(written: str, writer: m.Player) -> bool:
    try:
        find_seat(written, [Nameable(writer.id, _name(writer), (local_part(writer.address),))])
    except IllegalAction:
        return False
    return True


def _named(written: str, members: Sequence[m.Player]) -> m.Player:
    people = [Nameable(p.id, _name(p), (local_part(p.address),)) for p in members]
    try:
        found = find_seat(written, people, who="member")
    except IllegalAction as e:
        raise Refused(str(e)) from None
    return next(p for p in members if p.id == found)


def _seat_of(table: m.OpenTable, player: m.Player | None) -> m.TableSeat | None:
    if player is None:
        return None
    return next((s for s in table.seats if s.player_id == player.id), None)


def _people(table: m.OpenTable) -> _Seats:
    out = _Seats()
    for seat in table.seats:
        {m.SEATED: out.seated, m.INVITED: out.invited, m.DECLINED: out.declined}[
            seat.state].append(seat)
    return out


def _seats_for(engine: Game[Any], options: dict[str, str], count: int) -> dict[str, str] | None:
    """``options`` with the game's own ``players`` option set to ``count``,
    where the game has that option, the writer did not give it, and the
    game takes ``count``; else None."""
    if SEATS_OPTION in options:
        return None
    try:
        if SEATS_OPTION not in engine.parse_options(_games_own(options)):
            return None
        more = {**options, SEATS_OPTION: str(count)}
        low, high = engine.seat_count(engine.parse_options(_games_own(more)))
    except (OptionError, PackageFault):
        return None
    return more if low <= count <= high else None


def _games_own(options: dict[str, str]) -> dict[str, str]:
    """``options`` less the referee's own (``pace.OPTIONS``: autoplay=off,
    weekends=off, away=no ...), which the game does not read."""
    return {key: value for key, value in options.items() if key not in pace.OPTIONS}
