"""The chain: the checks one recorded mail goes through, in order, each a
small named object with one method, like Mailman's built-in chain. A check
reads the mail's facts (``letter``), may add what it found, and either
lets the mail go on (None) or ends its way with an :class:`Outcome`:

=====================  =========================================================
``verp``               a mail to a VERP address is a bounce: pinned, never answered
``automation``         bounces, auto-replies: noted, never answered (RFC 3834)
``other list``         mail from another mailing list: never answered
``no sender``          no From that SMTP could reach: never answered
``sender``             the sender's player row and games; a "deal me in" seats a newcomer
                       whose domain is vouched for, or asks them to confirm; a reply to
                       that request seats them
``verdict``            the game it is about; is the sender who the From says, in that game?
``shown addresses``    a private reply address shown to others is replaced
``strangers``          an address in no game: answered once a day
``verification``       verified mode: refused unless the sender is verified
``budget``             replies per hour and day, and the loop breaker: over them
                       only moves are read (answered within a budget of their own)
``size``               over ``max_message_size``: refused
``plain text``         a mail with no text part: refused
``routing``            which game, and the sender's seat in it
``play``               the command lines, the transcript and the reports; talk in
                       reply to our mail answered once a day
=====================  =========================================================

Runs inside intake's transaction for the mail.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Scope
from referee.mail.inbound import Automation
from referee.service.intake.budgets import Allowance, Budgets, budget_key, loop_digest
from referee.service.intake.joining import Alike, Joining
from referee.service.intake.letter import Letter, Outcome, Over
from referee.service.intake.routing import Routing
from referee.service.intake.senders import Senders
from referee.service.outgoing.addresses import new_token
from referee.service.outgoing.bounces import Bounces
from referee.service.outgoing.delivery import Answer, Delivery
from referee.service.play.commands import (
    MAX_LISTED,
    TranscriptLine,
    closing_help,
    done_line,
    run_commands,
)
from referee.service.play.session import GameSession
from referee.store import models as m

log = logging.getLogger(__name__)


class Check(Protocol):
    """One link of the chain."""

    #: What the link is called, in the chain's table above.
    name: str

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        """End the mail's way with an outcome, or None to let it go on."""
        ...


class ToVerp:
    """Only a bounce is ever sent to a VERP address; whatever it says, it is
    never answered. Only one signed by us names a mail of ours."""

    name = "verp"

    def __init__(self, bounces: Bounces) -> None:
        self.bounces = bounces

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if not letter.to_verp:
            return None
        letter.record.note = "not answered: bounce to a VERP address"
        bounce = (self.bounces.of_verp(db, letter.verp_id, letter.msg)
                  if letter.verp_id is not None else None)
        if bounce is not None:
            letter.record.note += "".join(self.bounces.record(db, bounce, letter.now))
        return Outcome("ignored")


class Automated:
    """A bounce or an auto-reply is noted (a bounce on the mail it is
    about) and never answered."""

    name = "automation"

    def __init__(self, bounces: Bounces) -> None:
        self.bounces = bounces

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        msg = letter.msg
        if msg.automation is Automation.NONE:
            return None
        letter.record.note = f"not answered: {msg.automation.value}"
        if msg.bounce is not None:
            letter.record.note += "".join(self.bounces.record(db, msg.bounce, letter.now))
        return Outcome("ignored")


class OtherList:
    """Mail that came through another mailing list is never answered."""

    name = "other list"

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if not letter.msg.list_id or letter.from_our_list:
            return None
        letter.record.note = f"not answered: mail from another list ({letter.msg.list_id})"
        return Outcome("ignored")


class NoSender:
    """No From, or none SMTP could reach (over its length, with spaces)."""

    name = "no sender"

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if letter.msg.sender:
            return None
        letter.record.note = "not answered: no sender address"
        return Outcome("ignored")


class Sender:
    """The sender's player row and games. Anyone, a stranger too, may deal
    themselves in where a game takes members by mail (rule text 002, rule
    1): a newcomer gets a player row here, and a seat in ``play``. A
    stranger nothing vouches for is asked to confirm first, and the reply
    to a confirmation address deals them in."""

    name = "sender"

    def __init__(self, joining: Joining, routing: Routing) -> None:
        self.joining, self.routing = joining, routing

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        msg = letter.msg
        player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
        claim = self.joining.confirmations.claim((*msg.to, *msg.cc))
        joining: m.Game | None
        if claim is not None:
            confirmed = self.joining.confirmed(db, letter, claim)
            if isinstance(confirmed, Outcome):
                return confirmed
            joining = confirmed
        else:
            joining = (self.joining.game_to_join(db, letter, player)
                       if self.joining.asks_to_join(letter) else None)
            if joining is not None and player is None:
                unsure = self.joining.stranger_joins(db, letter, joining)
                if unsure is not None:
                    return unsure
        if joining is not None and player is None:
            player = self.joining.newcomer(db, letter)
        games = self.routing.games_of(db, player, letter.tag) if player else []
        if joining is not None and joining not in games:
            games.append(joining)
        letter.player, letter.joining, letter.games = player, joining, games
        return None


class WhoWrote:
    """The game the mail is about, and whether the mail is from the player
    its From names in that game, judged with the private addresses as they
    were when it was sent: the address of the player's seat in another game
    vouches for nothing here (a mail replayed into another game)."""

    name = "verdict"

    def __init__(self, senders: Senders, routing: Routing) -> None:
        self.senders, self.routing = senders, routing

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        player = letter.player
        if player is None:
            return None
        if letter.tokens:
            letter.bound = frozenset(db.scalars(select(m.Seat.game_id).where(
                m.Seat.player_id == player.id, m.Seat.token.in_(letter.tokens))))
        letter.routed = (letter.joining if letter.joining is not None
                         else self.routing.find_game(db, letter))
        if letter.verdict is None:  # a confirmed join has its verdict already
            letter.verdict = self.senders.verify(letter, player, letter.about)
        return None


class ShownAddresses:
    """A private reply address works like a password: one that this mail
    showed to anyone but its owner stops counting at once, and the owner
    is told the new one, secretly (a seat's, in a mail about its game)."""

    name = "shown addresses"

    def __init__(self, delivery: Delivery, senders: Senders) -> None:
        self.delivery, self.senders = delivery, senders

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if not letter.tokens:
            return None
        msg = letter.msg
        forged = letter.verdict is not None and letter.verdict.failed
        holders: list[tuple[m.Player, m.Player | m.Seat, m.Game | None]] = [
            (p, p, None) for p in db.scalars(
                select(m.Player).where(m.Player.token.in_(letter.tokens)))]
        holders += [(s.player, s, s.game) for s in db.scalars(
            select(m.Seat).where(m.Seat.token.in_(letter.tokens))) if s.player is not None]
        for owner, holder, game in holders:
            # A mail in the owner's name that their own domain disowns came
            # from someone who knows the address: it stops counting too.
            disowned = forged and owner is letter.player
            if not disowned and not self.senders.shown_to_others(letter, owner):
                continue
            old = self.delivery.addresses.address_of(holder)
            holder.token = new_token()
            log.warning("private address of %s%s was %s; rotated", owner.address,
                        f" in {game.tag}" if game else "",
                        "used by a forged mail" if disowned else "shown to others")
            # Told with the new address of the game as the Reply-To.
            self.delivery.reply(db, owner, msg, "private_address_shown", {
                "old": old, "sender": msg.sender, "owner": owner.address,
                "game": game.tag if game else None,
                "others": sorted(letter.others - {owner.address}),
                "forged": letter.verdict.detail if disowned and letter.verdict else None,
            }, letter.now, about=game)
        return None


class Strangers:
    """Mail from an address in no game (or none it may be vouched for in)
    changes nothing, and is answered at most once a day."""

    name = "strangers"

    def __init__(self, routing: Routing, joining: Joining) -> None:
        self.routing, self.joining = routing, joining

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if letter.player is None or letter.verdict is None or not letter.games:
            return self.routing.stranger(db, letter, lambda: self.joining.open_games(db, letter))
        return None


class Verification:
    """In verified mode (``[auth] require = "verified"``) a mail whose
    sender is not verified is refused. It is answered at the registered
    address only, once a day: the real player learns that mail in their
    name was refused, a forger learns nothing, and forged floods do not
    reach the player."""

    name = "verification"

    def __init__(self, config: Config, delivery: Delivery, budgets: Budgets) -> None:
        self.config, self.delivery, self.budgets = config, delivery, budgets

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        assert letter.verdict is not None and letter.player is not None
        if letter.verdict.passed or self.config.auth.require != "verified":
            return None
        letter.record.note = f"sender not verified: {letter.verdict.detail}"
        msg, player = letter.msg, letter.player
        if self.budgets.once_a_day(db, player.address, letter.now):
            sent = msg.date.astimezone(UTC).replace(tzinfo=None) if msg.date else None
            self.delivery.reply(db, player, msg, "not_verified", {"date": sent},
                                letter.now, about=letter.about)
        return Outcome("refused")


class Budget:
    """What one address may cost: replies per hour and day, and the loop
    breaker for the same mail again and again (RFC 3834 §2). Budgets limit
    replies, never moves: over one, the mail goes on with only its moves
    to be read (``Play``), so a flood forged in a player's name cannot
    keep their own move from being applied."""

    name = "budget"

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        assert letter.player is not None
        key = budget_key(letter)
        allowance = self.budgets.charge(db, key, loop_digest(letter), letter.now)
        if allowance is Allowance.LOOP:
            letter.over = Over("not answered: the same mail again and again (a loop?)", False)
        elif allowance is Allowance.OVER:
            reopens = self.budgets.reopens_at(db, key)
            letter.over = Over(
                f"not read: over the reply budget until {reopens:%Y-%m-%d %H:%M} UTC", True)
        return None


class Size:
    """A mail over ``[referee] max_message_size`` is refused, saying the limit."""

    name = "size"

    def __init__(self, config: Config, delivery: Delivery) -> None:
        self.config, self.delivery = config, delivery

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        limit = self.config.referee.max_message_size
        if letter.msg.size <= limit:
            return None
        assert letter.player is not None
        if (unanswered := letter.over_unanswered()) is not None:
            return unanswered
        self.delivery.reply(db, letter.player, letter.msg, "too_large",
                            {"limit": limit}, letter.now, about=letter.about)
        return Outcome("refused")


class PlainText:
    """A mail with nothing but a TNEF attachment has no text to read."""

    name = "plain text"

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        if not letter.msg.tnef_only:
            return None
        assert letter.player is not None
        if (unanswered := letter.over_unanswered()) is not None:
            return unanswered
        self.delivery.reply(db, letter.player, letter.msg, "plain_text_please", {},
                            letter.now, about=letter.about)
        return Outcome("refused")


class Route:
    """The game the mail is about (found with the verdict: the one it deals
    its sender into, the subject's tag, the thread of one of our mails, the
    game of the private address it came to, or the sender's only game),
    loaded to be changed."""

    name = "routing"

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        assert letter.player is not None and letter.routed is not None
        game = letter.routed
        if isinstance(game, str):
            if (unanswered := letter.over_unanswered()) is not None:
                return unanswered
            self.delivery.reply(db, letter.player, letter.msg, "which_game", {
                "problem": game, "games": [g.tag for g in letter.seated],
            }, letter.now)
            return Outcome("refused")
        # The whole row in one statement (the sender's games were listed
        # without their states). On PostgreSQL it is locked: another worker
        # refereeing a mail of this game is waited for, and read as it left it.
        q = (select(m.Game).where(m.Game.id == game.id)
             .execution_options(populate_existing=True))
        if db.get_bind().dialect.name == "postgresql":
            q = q.with_for_update()
        letter.game = db.scalars(q).one()
        letter.record.game_id = letter.game.id
        return None


class Play:
    """The last link: the sender's seat (a newcomer's is made here), the
    command lines run against it, the answer, then the reports they caused."""

    name = "play"

    def __init__(self, config: Config, delivery: Delivery, joining: Joining,
                 budgets: Budgets) -> None:
        self.config, self.delivery, self.joining = config, delivery, joining
        self.budgets = budgets

    def check(self, db: Session, letter: Letter) -> Outcome | None:
        assert letter.player is not None and letter.game is not None
        msg, player, game, now = letter.msg, letter.player, letter.game, letter.now
        gs = GameSession(self.config, self.delivery.composer, db, game, now)
        seat, note = gs.seat_of(player), None
        if seat is None and game is letter.joining:
            seated = self.joining.seat(gs, player, msg.sender_name)
            if isinstance(seated, Alike):
                return self._alike(db, letter, gs, seated)
            seat, note = seated
        if seat is None:
            if (unanswered := letter.over_unanswered()) is not None:
                return unanswered
            self.delivery.reply(db, player, msg, "which_game", {
                "problem": f"You have no seat in {game.tag}.",
                "games": [g.tag for g in letter.seated],
            }, now)
            return Outcome("refused")
        scope, seen_by = letter.scope(game, self.config.referee.public_list)
        transcript = run_commands(gs, seat.position, msg.lines, scope, seen_by,
                                  letter.record.id, letter.answers,
                                  moves_only=letter.over is not None)
        if note is not None:  # the joiner's name was shortened: said in the join's line
            transcript = _noted(transcript, note)
        gs.settle()
        if letter.over is not None:
            unanswered = self._over_budget(db, letter, transcript)
            if unanswered is not None:
                self.delivery.deliver(db, gs.decide())
                return unanswered
        # Table talk among players (a mail to the list or to others too, with
        # no command in it) is theirs: the referee does not answer it.
        if not transcript and scope is not Scope.SECRET:
            self.delivery.deliver(db, gs.decide())
            return Outcome("processed", game.tag, transcript)
        if not transcript and self._talk_answered_today(db, letter):
            letter.record.note = ("not answered: no command, in reply to a mail of the "
                                  "referee's, and such a mail was answered today")
            self.delivery.deliver(db, gs.decide())
            return Outcome("processed", game.tag, transcript)
        # What the player can write now, after a refusal or a line not read
        # (for a bid, the cards they still hold; PS-7), unless it was asked.
        helped = closing_help(gs, seat.position, transcript)
        # An answer that only says "done" rides with the player's next mail,
        # if one comes soon: while another player owes a move. Else (a
        # tournament, where members owe nothing) it comes at once.
        answer = Answer(player, msg, seat.position, {
            "lines": [t.__dict__ for t in transcript[:MAX_LISTED]],
            "more": max(len(transcript) - MAX_LISTED, 0),
            "help": helped,
            "over": gs.engine.is_over(gs.state) or game.status != "active",
        }, done=done_line(transcript) if helped is None and note is None else None,
            wait=gs.others_owe(seat.position))
        # The answer first, then what it caused.
        self.delivery.deliver(db, gs.decide(answer))
        return Outcome("processed", game.tag, transcript)

    def _alike(self, db: Session, letter: Letter, gs: GameSession, alike: Alike) -> Outcome:
        """A join whose name reads as a seated player's: no seat, and the
        sender told why and what to write instead."""
        assert letter.player is not None
        game = gs.row
        letter.record.note = f"join refused: the name reads as {alike.seat!r}, a seat of {game.tag}"
        self.delivery.reply(db, letter.player, letter.msg, "name_refused", {
            "tag": game.tag, "seated": alike.seat,
            "join": gs.engine.join_command}, letter.now)
        return Outcome("refused", game.tag)

    def _over_budget(self, db: Session, letter: Letter,
                     transcript: list[TranscriptLine]) -> Outcome | None:
        """A mail over its sender's budget (``letter.over``), its moves run:
        None when it is answered all the same (a game accepted a move of it,
        and the budget of answers to moves has room), else what came of it,
        and its sender told once a window that the budget is spent."""
        assert letter.player is not None and letter.game is not None
        assert letter.over is not None
        key, now, over = budget_key(letter), letter.now, letter.over
        moved = any(t.result in ("applied", "penalty") and t.read_as for t in transcript)
        if moved and self.budgets.answer_move(db, key, now):
            letter.record.note = f"{over.note}: its moves were read and answered"
            return None
        if moved:
            letter.record.note = f"{over.note}: its moves were read, not answered"
        else:
            letter.record.note = over.note
        if over.budget and self.budgets.tell(db, key, now):
            limits = self.config.limits
            self.delivery.reply(db, letter.player, letter.msg, "over_budget", {
                "per_hour": limits.replies_per_hour, "per_day": limits.replies_per_day,
                "reopens": self.budgets.reopens_at(db, key)}, now, about=letter.about)
        if moved:
            return Outcome("processed", letter.game.tag, transcript)
        return Outcome("refused" if over.budget else "ignored")

    def _talk_answered_today(self, db: Session, letter: Letter) -> bool:
        """Whether the mail, which holds no command, answers a mail of the
        referee's and such a mail of its sender's was answered today
        already: what an autoresponder nothing marks writes, its text new
        each time, gets one answer a day."""
        composer = self.delivery.composer
        if not any(composer.outbox_id(mid) is not None for mid in letter.answers):
            return False
        key = budget_key(letter)
        if self.budgets.talk_answered(db, key, letter.now):
            return False
        self.budgets.refund(db, key)
        return True


def _noted(transcript: list[TranscriptLine], note: str) -> list[TranscriptLine]:
    """``transcript`` with ``note`` said after what its join came to, or
    as a line of its own before it if no line joined."""
    for i, line in enumerate(transcript):
        if line.read_as.split()[:1] == ["join"]:
            noted = dataclasses.replace(line, message=f"{line.message}\n{note}")
            return [*transcript[:i], noted, *transcript[i + 1:]]
    return [TranscriptLine("", "", "applied", note), *transcript]


class Chain:
    """The checks in order; the first outcome ends a mail's way."""

    def __init__(self, config: Config, delivery: Delivery, bounces: Bounces) -> None:
        senders = Senders(config, delivery.addresses)
        #: Which game a mail is about.
        budgets = Budgets(config.limits)
        self.routing = routing = Routing(config, delivery, senders, budgets)
        joining = Joining(config, senders, delivery, budgets)
        self.checks: list[Check] = [
            ToVerp(bounces), Automated(bounces), OtherList(), NoSender(),
            Sender(joining, routing), WhoWrote(senders, routing),
            ShownAddresses(delivery, senders),
            Strangers(routing, joining), Verification(config, delivery, budgets),
            Budget(budgets), Size(config, delivery), PlainText(delivery),
            Route(delivery), Play(config, delivery, joining, budgets),
        ]

    def run(self, db: Session, letter: Letter) -> Outcome:
        """Take ``letter`` through the checks; say what came of it."""
        for link in self.checks:
            outcome = link.check(db, letter)
            if outcome is not None:
                return outcome
        raise AssertionError("the last link, play, always ends a mail's way")
