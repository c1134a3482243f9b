"""Delivery: turn notices and replies into rows of the outbox, each addressed
to exactly its audience, with the private reply address of a player on mail
to them alone.

Runs inside the caller's transaction (intake, the sweep, an operator's
action): a mail is queued in the same commit as the change it reports, and
the outbox sender mails it later (``referee.service.outbox``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Notice
from referee.mail.compose import Composer, echo_subject
from referee.mail.inbound import InboundMessage
from referee.service.quiet import Item, QuietTable, mail_mode
from referee.store import models as m

if TYPE_CHECKING:
    from referee.service.session import GameSession


def new_token() -> str:
    """The secret of a private reply address: 64 random bits, in hex."""
    return secrets.token_hex(8)


#: Outbox ids counted on from one ``max(id)`` on SQLite.
OUTBOX_IDS_PER_BLOCK = 64

#: The first line of every mail for one player's eyes.
SECRET_NOTE = ("SECRET: for you alone. Do not forward it or quote it to the list or\n"
               "to other players; a reply goes to the referee alone.")


def mark_secret(subject: str, body: str) -> tuple[str, str]:
    """A mail that shows a hand or a sealed bid says so: "(secret)" in its
    subject, and a reminder not to quote it as its first line (unless the
    game's own template says SECRET already)."""
    if "(secret)" not in subject.lower():
        subject += " (secret)"
    if "SECRET" not in body:
        body = f"{SECRET_NOTE}\n\n{body}"
    return subject, body


class Delivery:
    """Queues the referee's mail: notices of games, replies to senders."""

    def __init__(self, config: Config, composer: Composer) -> None:
        self.config = config
        self.composer = composer
        self.quiet = QuietTable(self)

    def private_address(self, player: m.Player) -> str:
        """The player's private reply address, ``referee+TOKEN@domain``: mail
        to it from the player's own address is theirs (see ``senders``).
        Only ever sent to the player, in Reply-To of mail to them alone."""
        if player.token is None:
            player.token = new_token()
        local, _, domain = self.config.referee.address.partition("@")
        return f"{local}+{player.token}@{domain}"

    def reply(
        self, db: Session, gs: GameSession | None, player: m.Player, msg: InboundMessage,
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
        self.queue_to_player(db, gs.row if gs else None, player, subject, body,
                             auto="auto-replied", in_reply_to=msg.message_id,
                             references=msg.references, now=now, kind=template,
                             turn=gs.turn() if gs else None, secret=secret)

    def deliver(self, db: Session, gs: GameSession, notice: Notice) -> None:
        """Mail one engine notice to its audience, never wider."""
        self.deliver_all(db, gs, [notice])

    def deliver_all(self, db: Session, gs: GameSession, notices: Sequence[Notice]) -> None:
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
                self.queue(db, gs.row, [(lst, "")], subject, body, auto="auto-generated",
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

    def _one(self, db: Session, gs: GameSession, seat: m.Seat, notice: Notice,
             subject: str, body: str) -> None:
        """One notice to one seat's player, as it is."""
        assert seat.player is not None
        secret = len(notice.audience.seats) == 1 and not notice.audience.public
        if secret:
            subject, body = mark_secret(subject, body)
        self.queue_to_player(db, gs.row, seat.player, subject, body,
                             auto="auto-generated", now=gs.now, kind=notice.template,
                             turn=gs.turn(), secret=secret)

    def queue_to_player(self, db: Session, game: m.Game | None, player: m.Player,
                        subject: str, body: str, **kw: Any) -> None:
        """Queue a mail to one player alone; their replies go to their private address."""
        self.queue(db, game, [(player.address, player.name)], subject, body,
                   reply_to=self.private_address(player), **kw)

    def queue(
        self, db: Session, game: m.Game | None, to: list[tuple[str, str]], subject: str,
        body: str, *, auto: str, now: datetime, in_reply_to: str | None = None,
        references: Iterable[str] = (), kind: str | None = None, reply_to: str | None = None,
        turn: int | None = None, secret: bool = False,
    ) -> None:
        """Queue one mail; its row id is in its Message-ID. ``turn`` is the
        game's turn it shows: a move answering it is tied to that turn."""
        outbox_id = next_outbox_id(db)
        refs = [f"<{r.strip('<>')}>" for r in references]
        raw = self.composer.text(
            outbox_id=outbox_id, to=to, subject=subject, body=body,
            tag=game.tag if game else None, auto=auto,
            in_reply_to=f"<{in_reply_to.strip('<>')}>" if in_reply_to else None,
            references=refs, now=now, kind=kind, reply_to=reply_to,
        )
        # A row of its own, inserted at once: no object for the session to
        # track and flush (the rows are read back by id, never changed here).
        db.connection().execute(insert(m.table_of(m.Outbox)), [{
            "id": outbox_id, "game_id": game.id if game else None,
            "recipients": [a for a, _ in to], "raw": raw, "created_at": now,
            "next_attempt_at": now, "attempts": 0, "turn": turn, "secret": secret}])


def next_outbox_id(db: Session) -> int:
    """The id of the next outbox row, known before it is inserted, so its
    mail (the id is in the Message-ID) is composed first and the row is one
    INSERT, not an INSERT and an UPDATE of its whole text.

    On PostgreSQL the ``outbox`` sequence's next value; on SQLite ``max(id)``
    once per transaction, then counted on (the transaction holds the write
    lock from its first insert, so the next ids are its own; the rows queued
    in one transaction all come through here)."""
    # Asked of the connection: nothing the session holds bears on it, so
    # nothing need be flushed first.
    conn = db.connection()  # begins the transaction if nothing has yet
    if conn.dialect.name == "postgresql":
        return int(conn.execute(text(
            "select nextval(pg_get_serial_sequence('outbox', 'id'))")).scalar_one())
    tx = db.get_transaction()
    held = db.info.get("outbox_ids")
    if held is None or held[0] is not tx or not held[1]:
        first = conn.execute(select(func.coalesce(func.max(m.Outbox.id), 0))).scalar_one() + 1
        held = (tx, list(range(first, first + OUTBOX_IDS_PER_BLOCK)))
        db.info["outbox_ids"] = held
    taken: int = held[1].pop(0)
    return taken
