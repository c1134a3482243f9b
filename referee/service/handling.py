"""What one recorded mail gets: never an answer to a bounce, an auto-reply or
another list; private addresses it showed to others replaced; the sender
verified and their budget charged; then the game, the seat, the command
lines, the reply, and the reports they caused.

Runs inside intake's transaction for the mail.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import get_game
from referee.mail.inbound import Automation, InboundMessage
from referee.service.bounces import Bounces
from referee.service.budgets import Allowance, Budgets, loop_digest
from referee.service.commands import MAX_LISTED, run_commands
from referee.service.common import Outcome
from referee.service.delivery import Delivery, new_token
from referee.service.joining import Joining, asks_to_join
from referee.service.routing import Routing
from referee.service.senders import Senders
from referee.service.session import GameSession
from referee.store import models as m

log = logging.getLogger(__name__)


class Handling:
    """Decides and does what one inbound mail gets."""

    def __init__(self, config: Config, delivery: Delivery, senders: Senders,
                 bounces: Bounces, routing: Routing) -> None:
        self.config, self.delivery, self.senders = config, delivery, senders
        self.bounces, self.routing = bounces, routing
        self.budgets = Budgets(config.limits)
        self.joining = Joining(config, routing.composer, senders)

    def _asks_to_join(self, msg: InboundMessage) -> bool:
        """Whether a line of ``msg`` is the join command of a game that takes
        members by mail (the rest need not look for a game to join)."""
        return any(asks_to_join(get_game(kind), msg.lines) for kind in self.joining.kinds)

    def _rotate_shown_addresses(self, db: Session, msg: InboundMessage, now: datetime) -> None:
        """A private reply address works like a password: one that this mail
        showed to anyone but its owner stops counting at once, and the owner
        is told the new one, secretly."""
        tokens = self.senders.tokens_on(msg)
        if not tokens:
            return
        for owner in db.scalars(select(m.Player).where(m.Player.token.in_(tokens))):
            if not self.senders.shown_to_others(msg, owner):
                continue
            old = self.delivery.private_address(owner)
            owner.token = new_token()
            log.warning("private address of %s was shown to others; rotated", owner.address)
            self.delivery.reply(db, None, owner, msg, "private_address_shown", {
                "old": old, "sender": msg.sender,
                "others": sorted({a for a in (*msg.to, *msg.cc)
                                  if not self.senders.is_referee(a) and a != owner.address}),
            }, now)

    def handle(self, db: Session, msg: InboundMessage, record: m.Inbound,
               now: datetime) -> Outcome:
        """Answer one mail already recorded in ``record`` (inside its
        transaction), or leave it unanswered, and say what came of it."""
        ref = self.config.referee
        if any(self.senders.is_bounce_address(a) for a in (*msg.to, *msg.cc)):
            # Only a bounce is ever sent to a VERP address; whatever it says,
            # it is never answered. Only one signed by us names a mail.
            record.note = "not answered: bounce to a VERP address"
            verp = next((oid for a in (*msg.to, *msg.cc)
                         if (oid := self.delivery.composer.verp_outbox_id(a)) is not None),
                        None) if self.config.smtp.verp else None
            bounce = self.bounces.of_verp(db, verp, msg) if verp is not None else None
            if bounce is not None:
                record.note += "".join(self.bounces.record(db, bounce, now))
            return Outcome("ignored")
        if msg.automation is not Automation.NONE:
            record.note = f"not answered: {msg.automation.value}"
            if msg.bounce is not None:
                record.note += "".join(self.bounces.record(db, msg.bounce, now))
            return Outcome("ignored")
        if msg.list_id and msg.list_id != self.senders.list_id():
            record.note = f"not answered: mail from another list ({msg.list_id})"
            return Outcome("ignored")
        if not msg.sender:
            # No From, or none SMTP could reach (over its length, with spaces).
            record.note = "not answered: no sender address"
            return Outcome("ignored")
        player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
        # Anyone, a stranger too, may deal themselves in where a game takes
        # members by mail (002 rule 1): seated below, joined by the commands.
        joining = (self.joining.game_to_join(db, msg, player)
                   if self._asks_to_join(msg) else None)
        if joining is not None and player is None:
            player = self.joining.newcomer(db, msg, now)
        games = self.routing.games_of(db, player, msg) if player else []
        if joining is not None and joining not in games:
            games.append(joining)
        # Judged with the private addresses as they were when it was sent.
        verdict = self.senders.verify(msg, player) if player else None
        self._rotate_shown_addresses(db, msg, now)
        if player is None or verdict is None or not games:
            return self.routing.stranger(db, msg, now)
        seated = [g for g in games if g.status == "active"]
        if not verdict.passed and self.config.auth.require == "verified":
            record.note = f"sender not verified: {verdict.detail}"
            # Answered at the registered address only, once a day: the real
            # player learns that mail in their name was refused, a forger
            # learns nothing, and forged floods do not reach the player.
            if self.budgets.once_a_day(db, player.address, now):
                sent = msg.date.astimezone(UTC).replace(tzinfo=None) if msg.date else None
                self.delivery.reply(db, None, player, msg, "not_verified", {"date": sent}, now)
            return Outcome("refused")
        allowance = self.budgets.charge(db, player.address, loop_digest(msg), now)
        if allowance is Allowance.LOOP:
            record.note = "not answered: the same mail again and again (a loop?)"
            return Outcome("ignored")
        if allowance is not Allowance.ANSWER:
            reopens = self.budgets.reopens_at(db, player.address)
            record.note = f"not read: over the reply budget until {reopens:%Y-%m-%d %H:%M} UTC"
            if allowance is Allowance.TELL:
                limits = self.config.limits
                self.delivery.reply(db, None, player, msg, "over_budget", {
                    "per_hour": limits.replies_per_hour, "per_day": limits.replies_per_day,
                    "reopens": reopens}, now)
            return Outcome("refused")
        if msg.size > ref.max_message_size:
            self.delivery.reply(db, None, player, msg, "too_large",
                                {"limit": ref.max_message_size}, now)
            return Outcome("refused")
        if msg.tnef_only:
            self.delivery.reply(db, None, player, msg, "plain_text_please", {}, now)
            return Outcome("refused")
        game = joining if joining is not None else self.routing.find_game(db, msg, seated)
        if isinstance(game, str):
            self.delivery.reply(db, None, player, msg, "which_game", {
                "problem": game, "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        # The whole row in one statement (the sender's games were listed
        # without their states). On PostgreSQL it is locked: another worker
        # refereeing a mail of this game is waited for, and read as it left it.
        q = (select(m.Game).where(m.Game.id == game.id)
             .execution_options(populate_existing=True))
        if db.get_bind().dialect.name == "postgresql":
            q = q.with_for_update()
        game = db.scalars(q).one()
        record.game_id = game.id
        gs = GameSession(self.delivery, db, game, now)
        seat = gs.seat_of(player)
        if seat is None and game is joining:
            seat = self.joining.seat(gs, player, msg)
        if seat is None:
            self.delivery.reply(db, None, player, msg, "which_game", {
                "problem": f"You have no seat in {game.tag}.", "games": [g.tag for g in seated],
            }, now)
            return Outcome("refused")
        scope, seen_by = self.senders.scope(msg, game)
        transcript = run_commands(gs, seat.position, msg.lines, scope, seen_by, record.id,
                                  msg.in_reply_to or msg.references[::-1])
        gs.settle()
        self.delivery.reply(db, gs, player, msg, "transcript", {
            "lines": [t.__dict__ for t in transcript[:MAX_LISTED]],
            "more": max(len(transcript) - MAX_LISTED, 0),
            # Asked for, or owed: after a refusal the player sees what they
            # can do now (for a bid, the cards they still hold; PS-7).
            "help": gs.engine.help(gs.state, seat.position)
            if not transcript or any(t.read_as == "help" or t.result == "refused"
                                     for t in transcript) else None,
            "over": gs.engine.is_over(gs.state) or game.status != "active",
        }, now, seat=seat.position)
        gs.send_notices()  # the answer first, then the reports it caused
        return Outcome("processed", game.tag, transcript)
