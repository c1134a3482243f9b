"""A mail into the outbox: composed with its Message-ID and inserted as one
row, in the caller's transaction, so a mail is queued in the same commit as
the change it tells; the outbox sender (``outbox``) mails it later.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from referee.mail.compose import Composer
from referee.service.outgoing.addresses import Addresses, seat_of
from referee.store import models as m
from referee.store.ids import next_id

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

#: An outbox row, its id known (built once).
INSERT_OUTBOX = insert(m.table_of(m.Outbox))


class MailQueue:
    """Puts the referee's mails into the outbox."""

    def __init__(self, composer: Composer, addresses: Addresses) -> None:
        self.composer = composer
        self.addresses = addresses

    def to_player(self, db: Session, game: m.Game | None, player: m.Player,
                  subject: str, body: str, *, private: bool = True, alone: bool = False,
                  about: m.Game | None = None, secret: bool = False, **kw: Any) -> None:
        """Queue a mail to one player alone. A ``private`` mail (for them
        alone: an answer, their hand, a prompt) takes their replies to their
        private address for its game (``game``, or for a mail of no game
        ``about``, the game of the mail it answers); their copy of a public
        report, which they may forward, never shows it (replies go to the
        referee's own address).

        In verified mode a seat's address vouches for its player's moves,
        so only ``secret`` mail carries it (marked so: "do not forward").
        A mail the referee writes to the player ``alone`` (an answer to
        mail in their name, a reminder) is made secret for it; any other,
        their copy of a report that asks them to act too, shows no private
        address: a reply to it counts only if their domain vouches for it."""
        target = game or about
        reply_to = None
        if private:
            seat = seat_of(target, player) if target is not None else None
            vouches = seat is not None and self.addresses.verified
            if vouches and alone and not secret:
                subject, body = mark_secret(subject, body)
                secret = True
            if not vouches or secret:
                reply_to = self.addresses.private_address(player, target)
        self.put(db, game, [(player.address, player.name)], subject, body,
                 reply_to=reply_to, secret=secret, **kw)

    def put(
        self, db: Session, game: m.Game | None, to: list[tuple[str, str]], subject: str,
        body: str, *, auto: str, now: datetime, in_reply_to: str | None = None,
        references: Iterable[str] = (), kind: str | None = None, reply_to: str | None = None,
        turn: int | None = None, secret: bool = False, to_list: str | None = None,
    ) -> None:
        """Queue one mail; its row id is in its Message-ID. ``turn`` is the
        game's turn it shows: a move answering it is tied to that turn."""
        outbox_id = next_outbox_id(db)
        date = dated(game, now)
        refs = [f"<{r.strip('<>')}>" for r in references]
        raw = self.composer.text(
            outbox_id=outbox_id, to=to, subject=subject, body=body,
            tag=game.tag if game else None, auto=auto,
            in_reply_to=f"<{in_reply_to.strip('<>')}>" if in_reply_to else None,
            references=refs, now=date, kind=kind, reply_to=reply_to, to_list=to_list,
            list_id=self.addresses.list_id() if to_list else None,
        )
        # A row of its own, inserted at once: no object for the session to
        # track and flush (the rows are read back by id, never changed here).
        db.connection().execute(INSERT_OUTBOX, [{
            "id": outbox_id, "game_id": game.id if game else None,
            "recipients": [a for a, _ in to], "raw": raw, "created_at": now,
            "next_attempt_at": now, "attempts": 0, "turn": turn, "secret": secret}])


def dated(game: m.Game | None, now: datetime) -> datetime:
    """The ``Date`` of a game's next mail: ``now``, or a second after the
    game's last mail if that is later. A pass that mails one player (or the
    list, which the players read too) several times in one second still
    dates each mail later than the one before, so a client sorting by date
    shows them in the order of their events."""
    if game is None:
        return now
    date = now if game.mail_clock is None else max(now, game.mail_clock + timedelta(seconds=1))
    game.mail_clock = date
    return date


def next_outbox_id(db: Session) -> int:
    """The id of the next outbox row, known before it is inserted, so its
    mail (the id is in the Message-ID) is composed first and the row is one
    INSERT, not an INSERT and an UPDATE of its whole text (``store.ids``)."""
    return next_id(db, m.table_of(m.Outbox))
