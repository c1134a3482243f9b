"""Delivery: a game's notices and the answers to players' mails, each
addressed to exactly its audience: a public notice to the list, or to each
player as their own copy; a notice to some seats to those seats' players
alone; a player in a quiet mail mode gets the batch through ``quiet``.

Runs inside the caller's transaction (intake, the sweep, an operator's
action): a mail is queued in the same commit as the change it reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Game, Notice
from referee.mail.compose import Composer, echo_subject
from referee.mail.inbound import InboundMessage
from referee.service.outgoing.addresses import Addresses
from referee.service.outgoing.queue import MailQueue, mark_secret
from referee.service.outgoing.quiet import Item, QuietTable, mail_mode
from referee.store import models as m


class Table(Protocol):
    """A game as its mail tells it: what delivery reads of the game being
    refereed (the play wing's ``GameSession`` is one)."""

    row: m.Game
    engine: Game[Any]
    state: Any
    now: datetime
    #: The seat name the referee moved for, by ``id()`` of each notice that
    #: move caused, so its mails can say the move was the referee's.
    timeout_for: dict[int, str]

    @property
    def tag(self) -> str: ...

    def context(self, seat: int | None) -> dict[str, Any]:
        """What every mail of this game can show, for ``seat`` or the public."""
        ...

    def turn(self) -> int | None: ...

    def new_obligations(self) -> set[int]:
        """The seats that owe something now that they did not owe before."""
        ...


class Delivery:
    """Queues the referee's mail: notices of games, replies to senders."""

    def __init__(self, config: Config, composer: Composer) -> None:
        self.config = config
        self.composer = composer
        self.addresses = Addresses(config)
        self.queue = MailQueue(composer, self.addresses)
        self.quiet = QuietTable(self.queue)

    def reply(
        self, db: Session, gs: Table | None, player: m.Player, msg: InboundMessage,
        template: str, context: dict[str, Any], now: datetime, seat: int | None = None,
    ) -> None:
        """A secret answer to the sender, at their registered address only."""
        folder = (gs.engine.templates or gs.engine.kind) if gs else "common"
        ctx = {"subject": echo_subject(msg.subject),
               **(gs.context(seat) if gs else {"tag": None}), **context}
        subject, body = self.composer.render(folder, template, ctx)
        # A game's transcript echoes the player's moves (a sealed bid) and
        # the help shows their hand: for them alone.
        secret = gs is not None and template == "transcript" and gs.engine.secret_transcripts
        if secret:
            subject, body = mark_secret(subject, body)
        self.queue.to_player(db, gs.row if gs else None, player, subject, body,
                             auto="auto-replied", in_reply_to=msg.message_id,
                             references=msg.references, now=now, kind=template,
                             turn=gs.turn() if gs else None, secret=secret)

    def deliver(self, db: Session, gs: Table, notice: Notice) -> None:
        """Mail one engine notice to its audience, never wider."""
        self.deliver_all(db, gs, [notice])

    def deliver_all(self, db: Session, gs: Table, notices: Sequence[Notice]) -> None:
        """Mail the notices of one batch (one mail's moves, one sweep of a
        game) to their audiences, never wider. A public notice goes to the
        list; without one, each player gets their own copy, To: them alone
        with their private Reply-To, so a reply-all reaches the referee
        alone. A player who asked for less mail (``quiet``) gets the batch
        in one mail, or later."""
        if not notices:
            return
        folder = gs.engine.templates or gs.engine.kind
        lst = self.config.referee.public_list
        rendered: dict[tuple[int, int | None], tuple[str, str]] = {}

        def render(i: int, position: int | None) -> tuple[str, str]:
            if (i, position) not in rendered:
                notice = notices[i]
                extra = {"timeout_for": gs.timeout_for.get(id(notice))}
                rendered[i, position] = self.composer.render(
                    folder, notice.template, {**gs.context(position), **notice.context, **extra})
            return rendered[i, position]

        over = gs.engine.is_over(gs.state) or gs.row.status != "active"
        owing = gs.new_obligations()
        seats = [s for s in gs.row.seats if not s.bot and s.player is not None]
        loud = [s for s in seats if lst or mail_mode(gs.engine, gs.row, s) == "all"]
        # Every mail in the order of the events, for the list and each player
        # who gets every mail...
        for i, notice in enumerate(notices):
            if notice.audience.public and lst:
                # The list's own Reply-To (the referee) stays.
                subject, body = render(i, None)
                self.queue.put(db, gs.row, [(lst, "")], subject, body, auto="auto-generated",
                               now=gs.now, kind=notice.template, turn=gs.turn())
                continue
            for seat in loud:
                if notice.audience.public:
                    self._one(db, gs, seat, notice, *render(i, None))
                elif seat.position in notice.audience.seats:
                    self._one(db, gs, seat, notice, *render(i, seat.position))
        # ... then one mail (or none yet) for each player who asked for less.
        for seat in seats:
            if seat in loud:
                continue
            mine = [i for i, n in enumerate(notices)
                    if n.audience.public or seat.position in n.audience.seats]
            if not mine:
                continue
            views = [(i, None if notices[i].audience.public else seat.position) for i in mine]
            items = [Item.of(gs.tag, *render(i, v), notices[i], gs.engine) for i, v in views]
            reports = [render(i, None)[0] for i in mine if notices[i].audience.public]
            self.quiet.deliver(db, gs.row, seat, items, mail_mode(gs.engine, gs.row, seat),
                               must_act=seat.position in owing, over=over, now=gs.now,
                               turn=gs.turn(), last_subject=reports[-1] if reports else None)

    def _one(self, db: Session, gs: Table, seat: m.Seat, notice: Notice,
             subject: str, body: str) -> None:
        """One notice to one seat's player, as it is."""
        assert seat.player is not None
        secret = len(notice.audience.seats) == 1 and not notice.audience.public
        if secret:
            subject, body = mark_secret(subject, body)
        self.queue.to_player(db, gs.row, seat.player, subject, body,
                             auto="auto-generated", now=gs.now, kind=notice.template,
                             turn=gs.turn(), secret=secret)
