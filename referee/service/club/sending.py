"""The club's letters (:mod:`referee.service.club.letters`) rendered and
queued in the caller's transaction: a letter to the list as a post of no
game, an invitation with its own reply address (``referee+TOKEN@``, the
way its ``accept`` is known), a request to confirm with its confirmation
address, any other to its one address, threaded
under the mail it answers when there is one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from referee.service.club.letters import Letter
from referee.service.outgoing.delivery import Delivery


def invitation_address(delivery: Delivery, token: str) -> str:
    """The reply address of an invitation: the referee's, ``+TOKEN``."""
    addresses = delivery.addresses
    return f"{addresses.local}+{token}@{addresses.domain}"


def send(db: Session, delivery: Delivery, letters: Sequence[Letter], now: datetime, *,
         in_reply_to: str | None = None, references: Iterable[str] = ()) -> int:
    """Queue each of ``letters``, the posts to the list first: a reader of
    the list never gets the table's post after the mails it caused
    (dated alike, and sent in queue order); how many were queued.
    ``in_reply_to``: the mail they answer (the writer's own letter threads
    under it)."""
    refs = list(references)
    for letter in sorted(letters, key=lambda x: not x.public):
        subject, body = delivery.composer.render("common", letter.template, letter.context)
        if letter.public:
            delivery.queue.put(db, None, [(letter.to, "")], subject, body,
                               auto="auto-generated", now=now, kind=letter.template,
                               to_list=letter.to)
            continue
        reply_to = (invitation_address(delivery, letter.token)
                    if letter.token is not None else letter.reply_to)
        delivery.queue.put(db, None, [(letter.to, "")], subject, body,
                           auto="auto-replied" if in_reply_to else "auto-generated",
                           now=now, kind=letter.template, reply_to=reply_to,
                           in_reply_to=in_reply_to, references=refs if in_reply_to else ())
    return len(letters)
