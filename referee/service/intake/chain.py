"""The chain: the checks one recorded mail goes through, in order, each a
small named object with one method, like Mailman's built-in chain. A check
only judges: it reads the mail's facts (``letter``), may add what it found,
and returns a :class:`Judgement`: the mail goes on, or its way ends with a
status and a note; either way with the replies to send (a template and its
data). The chain, and only the chain, sends them.

=====================  =========================================================
``verp``               a mail to a VERP address is a bounce: pinned, never answered
``automation``         bounces, auto-replies: noted, never answered (RFC 3834)
``other list``         mail from another mailing list: never answered
``no sender``          no From that SMTP could reach: never answered
``club``               the club's command lines (``new``, ``join TAG``, ``accept`` ...) in a
                       mail that names no game in progress: done and answered by the
                       club's letters (``intake/gamesmaster.py``)
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
``away``               ``away 10d``, ``away until DAY``, ``away`` or ``back`` in a mail that
                       names no game: an absence from all the sender's games, taken or
                       ended, and answered (``intake/absence.py``)
``routing``            which game, and the sender's seat in it
=====================  =========================================================

The order is held by what each part takes: the checks up to ``shown
addresses`` take the letter alone; ``strangers`` lets on only a sender the
chain knows (:class:`Known`: their player row, the verdict on them, the
game the mail is about), which the checks after it take; ``routing`` ends
with the game to play (:class:`ToPlay`). Such a mail is then played
(:meth:`Chain.play`): the sender's seat (a newcomer's is made here), the
play step (``play/step.py``), and whether it is answered (budgets, talk
in reply to our mail answered once a day).

Runs inside intake's transaction for the mail.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC
from typing import Protocol

from sqlalchemy import bindparam, inspect, select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Scope
from referee.mail.auth import Verdict
from referee.mail.automation import Automation
from referee.service.club.tables import Tables
from referee.service.intake.absence import Away
from referee.service.intake.budgets import Allowance, Budgets, budget_key, loop_digest
from referee.service.intake.gamesmaster import GamesMaster
from referee.service.intake.joining import Alike, Joining
from referee.service.intake.letter import GO_ON, Judgement, Letter, Outcome, Over, Reply
from referee.service.intake.routing import Routing
from referee.service.intake.senders import Senders
from referee.service.outgoing.addresses import Addresses, new_token
from referee.service.outgoing.bounces import Bounces
from referee.service.outgoing.delivery import Delivery
from referee.service.play.commands import TranscriptLine
from referee.service.play.step import Played, Step
from referee.store import models as m

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Known:
    """A sender the chain knows, as ``strangers`` lets them on: their player
    row, whether the mail is really theirs, and the game it is about (or a
    sentence saying why none is)."""

    player: m.Player
    verdict: Verdict
    routed: m.Game | str


@dataclass(frozen=True)
class ToPlay:
    """A mail the chain let through: to be played in ``game`` by ``player``."""

    player: m.Player
    game: m.Game


class Check(Protocol):
    """One link of the chain before the sender is known."""

    #: What the link is called, in the chain's table above.
    name: str

    def judge(self, db: Session, letter: Letter) -> Judgement:
        """Whether the mail goes on (:data:`GO_ON`), or how its way ends."""
        ...


class KnownCheck(Protocol):
    """One link of the chain once the sender is known."""

    #: What the link is called, in the chain's table above.
    name: str

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement:
        """Whether the mail goes on (:data:`GO_ON`), or how its way ends."""
        ...


class ToVerp:
    """Only a bounce is ever sent to a VERP address; whatever it says, it is
    never answered. Only one signed by us names a mail of ours."""

    name = "verp"

    def __init__(self, bounces: Bounces) -> None:
        self.bounces = bounces

    def judge(self, db: Session, letter: Letter) -> Judgement:
        if not letter.to_verp:
            return GO_ON
        note = "not answered: bounce to a VERP address"
        bounce = (self.bounces.of_verp(db, letter.verp_id, letter.msg)
                  if letter.verp_id is not None else None)
        if bounce is not None:
            note += "".join(self.bounces.record(db, bounce, letter.now))
        return Judgement("ignored", note)


class Automated:
    """A bounce or an auto-reply is noted (a bounce on the mail it is
    about) and never answered."""

    name = "automation"

    def __init__(self, bounces: Bounces) -> None:
        self.bounces = bounces

    def judge(self, db: Session, letter: Letter) -> Judgement:
        msg = letter.msg
        if msg.automation is Automation.NONE:
            return GO_ON
        note = f"not answered: {msg.automation.value}"
        if msg.bounce is not None:
            note += "".join(self.bounces.record(db, msg.bounce, letter.now))
        return Judgement("ignored", note)


class OtherList:
    """Mail that came through another mailing list is never answered."""

    name = "other list"

    def judge(self, db: Session, letter: Letter) -> Judgement:
        if not letter.msg.list_id or letter.from_our_list:
            return GO_ON
        return Judgement("ignored", f"not answered: mail from another list "
                                    f"({letter.msg.list_id})")


class NoSender:
    """No From, or none SMTP could reach (over its length, with spaces)."""

    name = "no sender"

    def judge(self, db: Session, letter: Letter) -> Judgement:
        if letter.msg.sender:
            return GO_ON
        return Judgement("ignored", "not answered: no sender address")


#: The player row of an address (``address``), built once.
PLAYER_BY_ADDRESS = select(m.Player).where(m.Player.address == bindparam("address"))

class Sender:
    """The sender's player row and games. Anyone, a stranger too, may deal
    themselves in where a game takes members by mail (rule text 002, rule
    1): a newcomer gets a player row here, and a seat when played. A
    stranger nothing vouches for is asked to confirm first, and the reply
    to a confirmation address deals them in."""

    name = "sender"

    def __init__(self, joining: Joining, routing: Routing) -> None:
        self.joining, self.routing = joining, routing

    def judge(self, db: Session, letter: Letter) -> Judgement:
        msg = letter.msg
        player = db.scalar(PLAYER_BY_ADDRESS, {"address": msg.sender})
        claim = self.joining.confirmations.claim((*msg.to, *msg.cc))
        joining: m.Game | None
        if claim is not None:
            confirmed = self.joining.confirmed(db, letter, claim)
            if isinstance(confirmed, Judgement):
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
        return GO_ON


class WhoWrote:
    """The game the mail is about, and whether the mail is from the player
    its From names in that game, judged with the private addresses as they
    were when it was sent: the address of the player's seat in another game
    vouches for nothing here (a mail replayed into another game)."""

    name = "verdict"

    def __init__(self, senders: Senders, routing: Routing) -> None:
        self.senders, self.routing = senders, routing

    def judge(self, db: Session, letter: Letter) -> Judgement:
        player = letter.player
        if player is None:
            return GO_ON
        if letter.tokens:
            letter.bound = frozenset(db.scalars(select(m.Seat.game_id).where(
                m.Seat.player_id == player.id, m.Seat.token.in_(letter.tokens))))
        letter.routed = (letter.joining if letter.joining is not None
                         else self.routing.find_game(db, letter))
        if letter.verdict is None:  # a confirmed join has its verdict already
            letter.verdict = self.senders.verify(letter, player, letter.about)
        return GO_ON


class ShownAddresses:
    """A private reply address works like a password: one that this mail
    showed to anyone but its owner stops counting at once, and the owner
    is told the new one, secretly (a seat's, in a mail about its game)."""

    name = "shown addresses"

    def __init__(self, addresses: Addresses, senders: Senders) -> None:
        self.addresses, self.senders = addresses, senders

    def judge(self, db: Session, letter: Letter) -> Judgement:
        if not letter.tokens:
            return GO_ON
        msg = letter.msg
        forged = letter.verdict is not None and letter.verdict.failed
        holders: list[tuple[m.Player, m.Player | m.Seat, m.Game | None]] = [
            (p, p, None) for p in db.scalars(
                select(m.Player).where(m.Player.token.in_(letter.tokens)))]
        holders += [(s.player, s, s.game) for s in db.scalars(
            select(m.Seat).where(m.Seat.token.in_(letter.tokens))) if s.player is not None]
        told: list[Reply] = []
        for owner, holder, game in holders:
            # A mail in the owner's name that their own domain disowns came
            # from someone who knows the address: it stops counting too.
            disowned = forged and owner is letter.player
            if not disowned and not self.senders.shown_to_others(letter, owner):
                continue
            old = self.addresses.address_of(holder)
            holder.token = new_token()
            log.warning("private address of %s%s was %s; rotated", owner.address,
                        f" in {game.tag}" if game else "",
                        "used by a forged mail" if disowned else "shown to others")
            # Told with the new address of the game as the Reply-To.
            told.append(Reply("private_address_shown", {
                "old": old, "sender": msg.sender, "owner": owner.address,
                "game": game.tag if game else None,
                "others": sorted(letter.others - {owner.address}),
                "forged": letter.verdict.detail if disowned and letter.verdict else None,
            }, to=owner, about=game))
        return Judgement(replies=tuple(told))


class Strangers:
    """Mail from an address in no game (or none it may be vouched for in)
    changes nothing, and is answered at most once a day. Any other sender
    is known from here on."""

    name = "strangers"

    def __init__(self, routing: Routing, joining: Joining) -> None:
        self.routing, self.joining = routing, joining

    def judge(self, db: Session, letter: Letter) -> Judgement | Known:
        player, verdict, routed = letter.player, letter.verdict, letter.routed
        if player is None or verdict is None or routed is None or not letter.games:
            return self.routing.stranger(db, letter, lambda: self.joining.open_games(db, letter))
        return Known(player, verdict, routed)


class Verification:
    """In verified mode (``[auth] require = "verified"``) a mail whose
    sender is not verified is refused. It is answered at the registered
    address only, once a day: the real player learns that mail in their
    name was refused, a forger learns nothing, and forged floods do not
    reach the player."""

    name = "verification"

    def __init__(self, config: Config, budgets: Budgets) -> None:
        self.config, self.budgets = config, budgets

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement:
        if known.verdict.passed or self.config.auth.require != "verified":
            return GO_ON
        msg, player = letter.msg, known.player
        told: tuple[Reply, ...] = ()
        if self.budgets.once_a_day(db, player.address, letter.now):
            sent = msg.date.astimezone(UTC).replace(tzinfo=None) if msg.date else None
            told = (Reply("not_verified", {"date": sent}, to=player, about=letter.about),)
        return Judgement("refused", f"sender not verified: {known.verdict.detail}", told)


class Budget:
    """What one address may cost: replies per hour and day, and the loop
    breaker for the same mail again and again (RFC 3834 §2). Budgets limit
    replies, never moves: over one, the mail goes on with only its moves
    to be read (:meth:`Chain.play`), so a flood forged in a player's name
    cannot keep their own move from being applied."""

    name = "budget"

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement:
        key = budget_key(letter)
        allowance = self.budgets.charge(db, key, loop_digest(letter), letter.now)
        if allowance is Allowance.LOOP:
            letter.over = Over("not answered: the same mail again and again (a loop?)", False)
        elif allowance is Allowance.OVER:
            reopens = self.budgets.reopens_at(db, key)
            letter.over = Over(
                f"not read: over the reply budget until {reopens:%Y-%m-%d %H:%M} UTC", True)
        return GO_ON


class Size:
    """A mail over ``[referee] max_message_size`` is refused, saying the limit."""

    name = "size"

    def __init__(self, config: Config) -> None:
        self.config = config

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement:
        limit = self.config.referee.max_message_size
        if letter.msg.size <= limit:
            return GO_ON
        return letter.over_unanswered() or Judgement("refused", replies=(
            Reply("too_large", {"limit": limit}, to=known.player, about=letter.about),))


class PlainText:
    """A mail with nothing but a TNEF attachment has no text to read."""

    name = "plain text"

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement:
        if not letter.msg.tnef_only:
            return GO_ON
        return letter.over_unanswered() or Judgement("refused", replies=(
            Reply("plain_text_please", {}, to=known.player, about=letter.about),))


class Route:
    """The game the mail is about (found with the verdict: the one it deals
    its sender into, the subject's tag, the thread of one of our mails, the
    game of the private address it came to, or the sender's only game),
    loaded to be changed: the last link, whose game the mail is played in."""

    name = "routing"

    def judge(self, db: Session, letter: Letter, known: Known) -> Judgement | ToPlay:
        game = known.routed
        if isinstance(game, str):
            return letter.over_unanswered() or Judgement("refused", replies=(
                Reply("which_game", {"problem": game,
                                     "games": [g.tag for g in letter.seated]},
                      to=known.player),))
        # The whole row in one statement (the sender's games were listed
        # without their states). On PostgreSQL it is locked: another worker
        # refereeing a mail of this game is waited for, and read as it left it.
        # On SQLite the pass holds the write lock from its batch's start: a
        # game the mail named, read whole in this mail, is as it is.
        if db.get_bind().dialect.name == "postgresql":
            loaded = db.scalars(GAME_LOCKED, {"game": game.id}).one()
        elif not inspect(game).unloaded.isdisjoint(GAME_COLUMNS):
            loaded = db.scalars(GAME_WHOLE, {"game": game.id}).one()
        else:
            loaded = game
        letter.record.game_id = loaded.id
        return ToPlay(known.player, loaded)


#: A game's whole row, read afresh (``game``); locked on PostgreSQL. Built once.
GAME_WHOLE = (select(m.Game).where(m.Game.id == bindparam("game"))
              .execution_options(populate_existing=True))
GAME_LOCKED = GAME_WHOLE.with_for_update()
#: The attributes of a game's own row (not its seats).
GAME_COLUMNS = frozenset(a.key for a in inspect(m.Game).column_attrs)


class Chain:
    """The checks in order; the first judgement that ends a mail's way ends
    it, and each judgement's replies are sent as it is made."""

    def __init__(self, config: Config, delivery: Delivery, bounces: Bounces,
                 tables: Tables | None = None) -> None:
        """``tables``: the club's, for its command lines by mail (none: the
        ``club`` link is left out)."""
        self.config, self.delivery = config, delivery
        senders = Senders(config, delivery.addresses)
        budgets = self.budgets = Budgets(config.limits)
        #: Which game a mail is about.
        self.routing = routing = Routing(config, senders, budgets)
        self.joining = joining = Joining(config, senders, budgets, delivery.composer.key)
        club: tuple[Check, ...] = () if tables is None else (GamesMaster(
            config, delivery, tables, senders, budgets, joining.confirmations),)
        #: Up to ``strangers``: the sender is not known yet.
        self.vetting: tuple[Check, ...] = (
            ToVerp(bounces), Automated(bounces), OtherList(), NoSender(), *club,
            Sender(joining, routing), WhoWrote(senders, routing),
            ShownAddresses(delivery.addresses, senders))
        self.strangers = Strangers(routing, joining)
        #: After ``strangers``: the sender is known.
        self.checks: tuple[KnownCheck, ...] = (
            Verification(config, budgets), Budget(budgets), Size(config), PlainText(),
            Away(config, delivery))
        self.route = Route()
        self.step = Step(delivery)

    def run(self, db: Session, letter: Letter) -> Outcome | ToPlay:
        """Take ``letter`` through the checks: what came of it, or, if
        they let it through, the game it is to be played in (:meth:`play`)."""
        for link in self.vetting:
            if (ended := self._ends(db, letter, link.name, link.judge(db, letter))):
                return ended
        known = self.strangers.judge(db, letter)
        if isinstance(known, Judgement):
            return self._ended(db, letter, self.strangers.name, known)
        for check in self.checks:
            if (ended := self._ends(db, letter, check.name, check.judge(db, letter, known))):
                return ended
        routed = self.route.judge(db, letter, known)
        if isinstance(routed, Judgement):
            return self._ended(db, letter, self.route.name, routed)
        return routed

    def _ends(self, db: Session, letter: Letter, name: str,
              judged: Judgement) -> Outcome | None:
        """Act on one link's judgement: its replies sent; what came of the
        mail if it ends the mail's way, else None."""
        if not judged.status:
            self._act(db, letter, judged)
            return None
        return self._ended(db, letter, name, judged)

    def _ended(self, db: Session, letter: Letter, name: str, judged: Judgement) -> Outcome:
        """Act on the judgement of the link ``name``, which ends the mail's way."""
        log.debug("the %s link ends mail %s: %s", name, letter.record.id, judged.status)
        self._act(db, letter, judged)
        return Outcome(judged.status, judged.tag)

    def _act(self, db: Session, letter: Letter, judged: Judgement) -> None:
        """The record's note, and the replies sent, in order."""
        if judged.note is not None:
            letter.record.note = judged.note
        msg = letter.msg
        for reply in judged.replies:
            if reply.to is not None:
                self.delivery.reply(db, reply.to, msg, reply.template, reply.data,
                                    letter.now, about=reply.about)
                continue
            subject, body = self.delivery.composer.render("common", reply.template, reply.data)
            self.delivery.queue.put(
                db, None, [(msg.sender, reply.name)], subject, body, auto="auto-replied",
                in_reply_to=msg.message_id, references=msg.references,
                reply_to=reply.reply_to, now=letter.now, kind=reply.template)

    def play(self, db: Session, letter: Letter, to: ToPlay) -> Outcome:
        """Play a mail the chain let through: the sender's seat (a
        newcomer's made here), the play step, then whether it is answered."""
        msg, player, game = letter.msg, to.player, to.game
        gs = self.step.load(db, game, letter.now)
        seat, note = gs.seat_of(player), None
        if seat is None and game is letter.joining:
            seated = self.joining.seat(gs, player, msg.sender_name)
            if isinstance(seated, Alike):
                # A join whose name reads as a seated player's: no seat, and
                # the sender told why and what to write instead.
                return self._ended(db, letter, "play", Judgement(
                    "refused", f"join refused: the name reads as {seated.seat!r}, "
                               f"a seat of {game.tag}",
                    (Reply("name_refused", {"tag": game.tag, "seated": seated.seat,
                                            "join": gs.engine.join_command}, to=player),),
                    tag=game.tag))
            seat, note = seated
        if seat is None:
            return self._ended(db, letter, "play", letter.over_unanswered() or Judgement(
                "refused", replies=(Reply("which_game", {
                    "problem": f"You have no seat in {game.tag}.",
                    "games": [g.tag for g in letter.seated]}, to=player),)))
        scope, seen_by = letter.scope(game, self.config.referee.public_list)
        played = self.step.play(gs, seat.position, note, letter.lines, scope, seen_by,
                                letter.record.id, letter.answers,
                                moves_only=letter.over is not None)
        judged = self._answered(db, letter, player, played, scope)
        # What the mail caused first (a post to the list before the mails
        # to each player), then what is said of the mail itself.
        self.step.tell(played, None if judged.status else player, msg)
        self._act(db, letter, judged)
        if judged.status:  # not answered
            return Outcome(judged.status, judged.tag,
                           played.transcript if judged.status == "processed" else [])
        return Outcome("processed", game.tag, played.transcript)

    def _answered(self, db: Session, letter: Letter, player: m.Player, played: Played,
                  scope: Scope) -> Judgement:
        """Whether the mail ``player`` played is answered (no status) or not
        (its status), and what its record says."""
        note = None
        if letter.over is not None:
            over = self._over_budget(db, letter, letter.over, player, played)
            if over.status:
                return over
            note = over.note
        tag = played.gs.row.tag
        # Table talk among players (a mail to the list or to others too, with
        # no command in it) is theirs: the referee does not answer it.
        if not played.transcript and scope is not Scope.SECRET:
            return Judgement("processed", note, tag=tag)
        if not played.transcript and self._talk_answered_today(db, letter):
            return Judgement("processed", "not answered: no command, in reply to a mail of "
                                          "the referee's, and such a mail was answered today",
                             tag=tag)
        return Judgement(note=note)

    def _over_budget(self, db: Session, letter: Letter, over: Over, player: m.Player,
                     played: Played) -> Judgement:
        """A mail of ``player``'s over their budget (``over``), its moves
        run: answered all the same (no status) when a game accepted a move
        of it, and the budget of answers to moves has room; else what came
        of it, and its sender told once a window that the budget is spent."""
        key, now = budget_key(letter), letter.now
        transcript: list[TranscriptLine] = played.transcript
        moved = any(t.result in ("applied", "penalty") and t.read_as for t in transcript)
        if moved and self.budgets.answer_move(db, key, now):
            return Judgement(note=f"{over.note}: its moves were read and answered")
        note = f"{over.note}: its moves were read, not answered" if moved else over.note
        told: tuple[Reply, ...] = ()
        if over.budget and self.budgets.tell(db, key, now):
            limits = self.config.limits
            told = (Reply("over_budget", {
                "per_hour": limits.replies_per_hour, "per_day": limits.replies_per_day,
                "reopens": self.budgets.reopens_at(db, key)}, to=player,
                about=letter.about),)
        if moved:
            return Judgement("processed", note, told, tag=played.gs.row.tag)
        return Judgement("refused" if over.budget else "ignored", note, told)

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
