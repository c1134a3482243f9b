"""Delivery: turn notices and replies into rows of the outbox, each addressed
to exactly its audience, with the private reply address of a player on mail
to them alone.

Runs inside the caller's transaction (intake, the sweep, an operator's
action): a mail is queued in the same commit as the change it reports, and
the outbox sender mails it later (``referee.service.outbox``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from referee.config import Config
from referee.engine.base import Notice
from referee.mail.compose import Composer, echo_subject
from referee.mail.inbound import InboundMessage
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
        folder = gs.engine.templates or gs.engine.kind
        extra = {"timeout_for": gs.timeout_for.get(id(notice))}
        if notice.audience.public:
            subject, body = self.composer.render(
                folder, notice.template, {**gs.context(None), **notice.context, **extra}
            )
            lst = self.config.referee.public_list
            if lst:
                # The list's own Reply-To (the referee) stays.
                self.queue(db, gs.row, [(lst, "")], subject, body, auto="auto-generated",
                           now=gs.now, kind=notice.template, turn=gs.turn())
                return
            to = [(s.player.address, s.player.name) for s in gs.row.seats
                  if s.player is not None and not s.bot]
            if to:
                self.queue(db, gs.row, to, subject, body, auto="auto-generated",
                           now=gs.now, kind=notice.template, turn=gs.turn())
            return
        secret = len(notice.audience.seats) == 1
        for position in sorted(notice.audience.seats):
            seat = gs.row.seats[position - 1]
            if seat.bot or seat.player is None:
                continue
            subject, body = self.composer.render(
                folder, notice.template, {**gs.context(position), **notice.context, **extra}
            )
            if secret:
                subject, body = mark_secret(subject, body)
            self.queue_to_player(db, gs.row, seat.player, subject, body,
                                 auto="auto-generated", now=gs.now, kind=notice.template,
                                 turn=gs.turn(), secret=secret)

    def queue_to_player(self, db: Session, game: m.Game | None, player: m.Player,
                        subject: str, body: str, **kw: Any) -> m.Outbox:
        """Queue a mail to one player alone; their replies go to their private address."""
        return self.queue(db, game, [(player.address, player.name)], subject, body,
                          reply_to=self.private_address(player), **kw)

    def queue(
        self, db: Session, game: m.Game | None, to: list[tuple[str, str]], subject: str,
        body: str, *, auto: str, now: datetime, in_reply_to: str | None = None,
        references: Iterable[str] = (), kind: str | None = None, reply_to: str | None = None,
        turn: int | None = None, secret: bool = False,
    ) -> m.Outbox:
        """Queue one mail; its row id is in its Message-ID. ``turn`` is the
        game's turn it shows: a move answering it is tied to that turn."""
        outbox_id = next_outbox_id(db)
        refs = [f"<{r.strip('<>')}>" for r in references]
        email = self.composer.message(
            outbox_id=outbox_id, to=to, subject=subject, body=body,
            tag=game.tag if game else None, auto=auto,
            in_reply_to=f"<{in_reply_to.strip('<>')}>" if in_reply_to else None,
            references=refs, now=now, kind=kind, reply_to=reply_to,
        )
        row = m.Outbox(id=outbox_id, game_id=game.id if game else None,
                       recipients=[a for a, _ in to], raw=email.as_string(),
                       created_at=now, next_attempt_at=now, turn=turn, secret=secret)
        db.add(row)
        return row


def next_outbox_id(db: Session) -> int:
    """The id of the next outbox row, known before it is inserted, so its
    mail (the id is in the Message-ID) is composed first and the row is one
    INSERT, not an INSERT and an UPDATE of its whole text.

    On PostgreSQL the ``outbox`` sequence's next value; on SQLite ``max(id)``
    once per transaction, then counted on (the transaction holds the write
    lock from its first insert, so the next ids are its own; the rows queued
    in one transaction all come through here)."""
    if db.get_bind().dialect.name == "postgresql":
        return int(db.execute(text(
            "select nextval(pg_get_serial_sequence('outbox', 'id'))")).scalar_one())
    db.connection()  # begins the transaction if nothing has yet
    tx = db.get_transaction()
    held = db.info.get("outbox_ids")
    if held is None or held[0] is not tx or not held[1]:
        first = db.execute(select(func.coalesce(func.max(m.Outbox.id), 0))).scalar_one() + 1
        held = (tx, list(range(first, first + OUTBOX_IDS_PER_BLOCK)))
        db.info["outbox_ids"] = held
    taken: int = held[1].pop(0)
    return taken
