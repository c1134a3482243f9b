"""The database: SQLAlchemy 2 typed models. Times are naive UTC datetimes.

One inbound message is one transaction over these tables (DESIGN.md, "The
flow of one message"): its ``Inbound`` row, the ``Action`` rows it applied, the
game's new state, its ``Deadline`` rows and the ``Outbox`` rows to send.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from referee.games.draws import COUNTER, KEYED


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class Player(Base):
    """A person known by their registered address. Private mail goes only here."""

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    address: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    #: The secret in the player's private reply address, ``referee+TOKEN@``:
    #: mail to it from the player's address is theirs ([auth] in the config).
    token: Mapped[str | None] = mapped_column(String(32), unique=True, default=None)
    #: The last time mail to this address bounced for good, and what the
    #: server said (RFC 3464), for the operator's ``status``.
    bounced_at: Mapped[datetime | None] = mapped_column(default=None)
    bounce: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime]
    #: When the operator made the player a member of the club (``referee
    #: member add``); None: a member only by having played a game here
    #: (``referee.service.club``).
    member_since: Mapped[datetime | None] = mapped_column(default=None)
    #: The player wrote ``standings hide``: left out of the club's
    #: published standings (mail answers, pages); still rated.
    standings_hidden: Mapped[bool] = mapped_column(default=False, server_default=false())


class Game(Base):
    """One game: its engine kind, options, seed and current state (JSON)."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    tag: Mapped[str] = mapped_column(String(64), unique=True)
    #: Indexed: the kinds there are are found a seek each (``Guests.stalled``).
    kind: Mapped[str] = mapped_column(String(32), index=True)
    options: Mapped[dict[str, Any]]
    seed: Mapped[str] = mapped_column(String(64))
    #: How the game draws from its seed (``referee.games.draws``): ``keyed``
    #: for a game made now, ``counter`` for one made before keyed draws,
    #: which replays only with the generator per action it was played with.
    draws: Mapped[str] = mapped_column(String(16), default=KEYED, server_default=COUNTER)
    #: The players' own entropy the ``mixed`` scheme mixes into the seed
    #: (``referee.games.draws.mixed_seed``), by seat: a list of
    #: ``{"position", "name", "value", "how"}`` (``how``: ``message-id`` or
    #: ``words``); None for a game of another scheme.
    entropy: Mapped[list[Any] | None] = mapped_column(default=None)
    state: Mapped[dict[str, Any]]
    #: What ``status`` shows of the state (``Game.public_view``), stored with
    #: it; None in a row from before it was kept (read from the state then).
    public_view: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    step: Mapped[int] = mapped_column(default=0)  # actions applied so far
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | finished
    deadline_seconds: Mapped[int]
    reminder_seconds: Mapped[int]
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    #: The changes to what the game's web page shows (a move, a deadline
    #: moved, the game ended) that it does not show yet, counted; None while
    #: it shows them all (``referee.service.pages``). Indexed: the games
    #: that are behind are found without reading the others.
    page_due: Mapped[int | None] = mapped_column(default=1, server_default="1", index=True)
    #: The game's line of the index page as last written (None: never).
    listing: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    #: The ``Date`` of the game's latest mail: each next mail of the game is
    #: dated at least a second later, so a mail client sorting by date shows
    #: a game's mails (the list's and each player's own) in event order.
    mail_clock: Mapped[datetime | None] = mapped_column(default=None)

    seats: Mapped[list[Seat]] = relationship(
        back_populates="game", order_by="Seat.position", cascade="all, delete-orphan"
    )


class Seat(Base):
    """A place at a game: a player, or a bot once nobody (or a resigner) holds it."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    position: Mapped[int]  # 1-based
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    bot: Mapped[bool] = mapped_column(default=False)
    team: Mapped[str | None] = mapped_column(String(32))
    #: How much mail the seat's player gets (``all``, ``turns``, ``digest``);
    #: None: the game's default (``Game.default_mail_mode``).
    mail_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    #: The secret in the private reply address of the seat's player for this
    #: game, ``referee+TOKEN@``: mail to it from the player's address is
    #: their move in this game, and in no other ([auth] in the config).
    token: Mapped[str | None] = mapped_column(String(32), unique=True, default=None)
    #: The player's ``autoplay on``/``off`` for this game: whether the
    #: referee makes their forced moves at once (``Game.forced_action``);
    #: None: as the game's option ``autoplay`` says (on unless ``off``).
    autoplay: Mapped[bool | None] = mapped_column(default=None)
    #: The player's standing orders for this game (``Game.parse_order``),
    #: the oldest first; secret, never in a view, page or log. None: none.
    orders: Mapped[list[Any] | None] = mapped_column(default=None)

    game: Mapped[Game] = relationship(back_populates="seats")
    player: Mapped[Player | None] = relationship(lazy="joined")


class ActionLog(Base):
    """The append-only action log: with the game's seed it replays the game."""

    __tablename__ = "actions"
    __table_args__ = (UniqueConstraint("game_id", "step"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    step: Mapped[int]  # 1-based; step 0 is the game's start
    seat: Mapped[int]
    action: Mapped[dict[str, Any]]
    source: Mapped[str] = mapped_column(String(16))  # player | timeout | bot | admin
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"))
    at: Mapped[datetime]


#: The kind of the event that records the seed's commitment, published by
#: a game's opening (``data``: ``seed_sha256``), for the operator's audit.
SEED_EVENT = "seed"


class Event(Base):
    """What happened, in words; ``public`` False for facts that stay secret."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    step: Mapped[int]
    kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    public: Mapped[bool]
    data: Mapped[dict[str, Any]]
    at: Mapped[datetime]


class Inbound(Base):
    """A message read from the mailbox; its source key makes intake exactly-once."""

    __tablename__ = "inbound"

    id: Mapped[int] = mapped_column(primary_key=True)
    source_key: Mapped[str] = mapped_column(String(400), unique=True)
    message_id: Mapped[str | None] = mapped_column(String(400), index=True)
    #: What makes the mail this mail whatever its Message-ID or mailbox
    #: position: the same mail read again (a new UIDVALIDITY) or replayed
    #: under a new Message-ID is recognised by it.
    digest: Mapped[str | None] = mapped_column(String(64), index=True)
    #: What the mail says (a SHA-256 of its command lines, which leave out
    #: what a list adds: its headers, a subject prefix, a footer). A mail
    #: under a Message-ID seen before is a copy of that mail only when it
    #: has the same sender and says the same; NULL in records made before.
    body_digest: Mapped[str | None] = mapped_column(String(64))
    sender: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(Text, default="")
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"))
    status: Mapped[str] = mapped_column(String(16))  # processed | ignored | failed
    note: Mapped[str] = mapped_column(Text, default="")
    received_at: Mapped[datetime]


class Outbox(Base):
    """A mail to send. Its Message-ID derives from its id, so a resend after a
    crash is the same message."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_unsent", "sent_at", "next_attempt_at"),
                      Index("ix_outbox_failed", "failed_at",
                            sqlite_where=text("failed_at IS NOT NULL")))

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"))
    recipients: Mapped[list[Any]]  # envelope recipients
    raw: Mapped[str] = mapped_column(Text)  # the whole message but its Message-ID
    created_at: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]
    #: A permanent failure: no more attempts. ``ix_outbox_failed`` holds the
    #: failed alone: ``status`` and each pass count them by a seek, not by
    #: a read of every mail sent.
    failed_at: Mapped[datetime | None]
    last_error: Mapped[str] = mapped_column(Text, default="")
    #: The game's turn (``Game.turn``) when the mail was queued: a move
    #: answering this mail is tied to that turn.
    turn: Mapped[int | None] = mapped_column(default=None)
    #: For one player's eyes: it shows a hand or a sealed bid.
    secret: Mapped[bool] = mapped_column(default=False)


class Deadline(Base):
    """An action a seat owes, with when the referee acts for it."""

    __tablename__ = "deadlines"
    __table_args__ = (UniqueConstraint("game_id", "seat", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    seat: Mapped[int]
    key: Mapped[str] = mapped_column(String(128))
    what: Mapped[str] = mapped_column(Text)
    since: Mapped[datetime]
    due_at: Mapped[datetime] = mapped_column(index=True)
    reminded_at: Mapped[datetime | None]
    #: When the seat's reminder is due: ``due_at`` less the game's reminder
    #: time; None once reminded, for seat 0 and for seats never reminded.
    #: Kept by ``referee.service.play.deadlines`` at flush, so the sweep finds
    #: what is due through an index.
    remind_at: Mapped[datetime | None] = mapped_column(default=None, index=True)


class Cursor(Base):
    """How far the referee has read a mailbox: IMAP UIDVALIDITY and last UID."""

    __tablename__ = "cursors"

    mailbox: Mapped[str] = mapped_column(String(400), primary_key=True)
    uidvalidity: Mapped[int]
    last_uid: Mapped[int]


class StrangerReply(Base):
    """When an address in no game was last answered (at most once a day)."""

    __tablename__ = "stranger_replies"

    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    replied_at: Mapped[datetime]


class Correspondent(Base):
    """How much the referee answered one address lately: the reply budget,
    the loop breaker (RFC 3834 §2: the same content again and again), and
    the once-a-day notices."""

    __tablename__ = "correspondents"

    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    hour_start: Mapped[datetime]
    hour_count: Mapped[int] = mapped_column(default=0)
    day_start: Mapped[datetime]
    day_count: Mapped[int] = mapped_column(default=0)
    last_digest: Mapped[str] = mapped_column(String(64), default="")
    repeats: Mapped[int] = mapped_column(default=0)
    #: When the address was last told its mail is no longer answered.
    told_at: Mapped[datetime | None]
    #: When the player was last told a mail in their name was not verified.
    not_verified_at: Mapped[datetime | None]


class Lease(Base):
    """A job only one referee process may run at a time (the pass), held until
    ``expires_at`` and renewed while it runs: the database's own guard beside
    the lock file, which a tmp cleaner can delete."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime]


class Secret(Base):
    """Keys the referee makes for itself at ``init``, such as the one that
    signs its Message-IDs and VERP addresses."""

    __tablename__ = "secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))


class HeldMail(Base):
    """A mail of a game held for one player, who asked for less mail
    (``mail turns`` or ``mail digest``): it rides with their next mail of
    the game, or goes in a digest once it is a day old."""

    __tablename__ = "held_mail"
    __table_args__ = (Index("ix_held_mail_game_player", "game_id", "player_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    #: The mail's own subject, less the game tag: one line of what happened.
    headline: Mapped[str] = mapped_column(Text)
    #: The mail's text; empty for a single move, whose headline says it all.
    body: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(index=True)
    #: For the player alone (the answer to their own mail): the mail it
    #: rides in is marked secret.
    personal: Mapped[bool] = mapped_column(default=False, server_default=false())


#: What an open table is (``OpenTable.status``): waiting for its players;
#: become a game; past ``[club] table_days`` unfilled; closed by the operator.
TABLE_OPEN, TABLE_STARTED, TABLE_EXPIRED, TABLE_CANCELLED = (
    "open", "started", "expired", "cancelled")
#: Where a person stands at a table (``TableSeat.state``): sitting; asked
#: by the opener and not yet answered; asked and said no.
SEATED, INVITED, DECLINED = "seated", "invited", "declined"


class OpenTable(Base):
    """A game the club has asked for by mail and not started yet: its kind
    and options, who opened it, how many seats it wants, and, once
    started, the game it became (``referee.service.club``)."""

    __tablename__ = "club_tables"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: ``KIND-N``: the number shared with the games' tags, and the tag of
    #: the game the table becomes.
    tag: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(32))
    #: The options as written (``cards=13``), checked by the game's
    #: ``parse_options`` when the table was opened; teams are the seats'.
    options: Mapped[dict[str, Any]]
    opener_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    #: The seats wanted: the game starts by itself at ``seats_max`` seated,
    #: or at the opener's ``start`` with at least ``seats_min`` (a range,
    #: as Miser's 3 or more).
    seats_min: Mapped[int]
    seats_max: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), default=TABLE_OPEN, index=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)
    #: When it started, expired or was cancelled.
    ended_at: Mapped[datetime | None] = mapped_column(default=None)
    #: The game it became.
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), default=None)
    #: The finished game it plays again (``rematch``).
    rematch_of_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), default=None)
    #: The secret seed of the game it becomes, drawn when it opened (its
    #: fingerprint is in every mail about the table, before any seat's
    #: entropy); None for a table opened before, which draws it at the start.
    seed: Mapped[str | None] = mapped_column(String(64), default=None)
    #: Opened by the operator's ``game new`` (issue 38): every seat filled
    #: by them; it starts when each player has given entropy, or at
    #: ``expires_at`` (its start deadline) with those who gave none listed.
    by_operator: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: The bot seats of its game (an operator's table only), after the players'.
    bots: Mapped[int] = mapped_column(default=0, server_default="0")

    opener: Mapped[Player] = relationship()
    seats: Mapped[list[TableSeat]] = relationship(
        back_populates="table", order_by="TableSeat.id", cascade="all, delete-orphan")


class TableSeat(Base):
    """A person at an open table: seated, invited or having declined; the
    seats are taken in the order of their rows."""

    __tablename__ = "club_seats"
    __table_args__ = (UniqueConstraint("table_id", "player_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("club_tables.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    state: Mapped[str] = mapped_column(String(16))
    #: The team the opener put them in (``teams alice+carol bob+dave``),
    #: where the kind has teams: the game keeps partners together.
    team: Mapped[str | None] = mapped_column(String(32), default=None)
    #: Who invited them, and when (the opener's ``invites_per_day``).
    invited_by_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), default=None)
    invited_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    #: When the invitation was mailed to them: an address that has not
    #: answered gets at most one a day.
    told_at: Mapped[datetime | None] = mapped_column(default=None)
    #: The secret of the invitation's reply address, ``referee+TOKEN@``: a
    #: reply to it from the invitee's address accepts or declines.
    token: Mapped[str | None] = mapped_column(String(32), unique=True, default=None)
    #: When they took the seat, or declined.
    answered_at: Mapped[datetime | None] = mapped_column(default=None)
    #: The player's own entropy for the draws (issue 38), and how it came:
    #: ``message-id`` (of the mail that took the seat, as written) or
    #: ``words`` (their ``entropy WORDS``); None: none given.
    entropy: Mapped[str | None] = mapped_column(Text, default=None)
    entropy_how: Mapped[str | None] = mapped_column(String(16), default=None)

    table: Mapped[OpenTable] = relationship(back_populates="seats")
    player: Mapped[Player] = relationship(foreign_keys=[player_id])


class Absence(Base):
    """A player away (``away``, issue 37): from ``start_at`` to ``end_at``
    (or ``ended_at``, an early ``back``), the whole days drawn from their
    bank for the calendar year of ``start_at``, and the games whose
    deadlines it moved. ``game_id`` names the one game of an ``away`` said
    in a game's mail; None: every game of the player (``whole``)."""

    __tablename__ = "absences"

    id: Mapped[int] = mapped_column(primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), default=None)
    start_at: Mapped[datetime]
    end_at: Mapped[datetime]
    #: When ``back`` ended it early (None: it runs to ``end_at``).
    ended_at: Mapped[datetime | None] = mapped_column(default=None)
    #: The whole days drawn from the bank (a day begun counts); an early
    #: ``back`` gives the unused ones back.
    days: Mapped[int]
    #: The ids of the games whose deadlines it moved.
    games: Mapped[list[Any]] = mapped_column(default=list)

    @property
    def whole(self) -> bool:
        """Whether it covers every game of the player (said to no game)."""
        return self.game_id is None


def table_of(model: type[Base]) -> Table:
    """A model's table, for the rows inserted at once, past the session's
    unit of work (logs and outbox rows, only ever added to)."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


class Standing(Base):
    """A player's rating in the club's standings of one kind of game, for
    one season ("" for all time): the ``openskill`` mu and sigma, the games
    rated and won, and the last game rated (``referee.service.club.standings``).
    Worked out from the finished games alone, so rebuilt at will."""

    __tablename__ = "standings"
    __table_args__ = (UniqueConstraint("kind", "season", "player_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    season: Mapped[str] = mapped_column(String(16))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    mu: Mapped[float]
    sigma: Mapped[float]
    games: Mapped[int] = mapped_column(default=0)
    wins: Mapped[int] = mapped_column(default=0)
    #: The last game rated into this row, and when it ended: a game that
    #: ends before it (a clock set back) has the standings rebuilt.
    last_game_id: Mapped[int] = mapped_column(ForeignKey("games.id"))
    last_at: Mapped[datetime]

    player: Mapped[Player] = relationship()


class Setting(Base):
    """What the referee's derived records were worked out under, to tell
    when the config has changed since: ``standings``, the club settings and
    the game kinds left out that its tables were computed with (JSON)."""

    __tablename__ = "settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(2000))
