"""Bounces of our own mail: pin a delivery report (or any mail to a VERP
address) on the outbox row it is about, and note on each player whose mail
failed for good, so ``status`` shows it.

Runs inside intake's transaction for the bounce message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.mail.automation import Bounce
from referee.mail.compose import Composer
from referee.mail.inbound import InboundMessage
from referee.store import models as m


class Bounces:
    """Reads bounces against the outbox; never answers them (RFC 3834)."""

    def __init__(self, composer: Composer) -> None:
        self.composer = composer

    def of_verp(self, db: Session, oid: int, msg: InboundMessage) -> Bounce | None:
        """The bounce of outbox row ``oid``: its delivery report if it has one,
        else, for a mail to one recipient, that recipient."""
        row = db.get(m.Outbox, oid)
        if row is None:
            return None
        game = db.get(m.Game, row.game_id) if row.game_id else None
        ours = self.composer.message_id(oid, game.tag if game else None)
        if msg.bounce is not None:
            return dataclasses.replace(msg.bounce,
                                       message_ids=(*msg.bounce.message_ids, ours.strip("<>")))
        if len(row.recipients) != 1:
            return None  # a report in prose about one of several: no one to mark
        return Bounce(failed=((row.recipients[0], f"bounced: {msg.subject}"[:300]),),
                      message_ids=(ours.strip("<>"),))

    def record(self, db: Session, bounce: Bounce, now: datetime) -> Iterator[str]:
        """Note on each player whose mail failed for good, and on the outbox
        row. Only a report on one of our own mails that went to that address
        counts; a report on anything else marks nobody. Yields notes."""
        rows = [row for mid in bounce.message_ids
                if (oid := self.composer.outbox_id(mid)) is not None
                and (row := db.get(m.Outbox, oid)) is not None]
        for address, said in bounce.failed:
            for row in rows:
                if address not in row.recipients:
                    continue
                row.last_error = f"bounced: {address}: {said}"
                mark_bounced(db, {address: said or "failed"}, now)
                yield f"; {address} bounced mail {row.id} ({said or 'failed'})"
                break


def mark_bounced(db: Session, refused: dict[str, str], now: datetime) -> None:
    """A recipient whose mail failed for good (a bounce report, or our relay's
    5xx) is a player whose mail is not getting through: note it on the
    player, so ``referee status`` shows it."""
    for address, said in refused.items():
        player = db.scalar(select(m.Player).where(m.Player.address == address.lower()))
        if player is not None:
            player.bounced_at, player.bounce = now, said
