"""Joining by mail: anyone, a stranger included, who writes a game's join
command ("deal me in", 002 rule 1) to the referee or the list becomes a
member of a game that takes members by mail
(``Game.takes_members_by_mail``). They get a player row if they have none,
and a seat at the next position; the join itself then runs through
``play.commands.run_commands`` like any other line, as
``Action("join", (name, former))`` (``GameSession.join_args``).

Which game: the one the subject's tag (or the thread) names, else the only
active game that takes members by mail. Games that take no members by mail
are untouched: a stranger writing to them still gets the stranger answer.

Who: a stranger (an address with no player row) is seated at once only
when the trusted Authentication-Results show an aligned pass for their
From domain. Else they are asked to confirm: a mail to the address in
From, whose Reply-To is a confirmation address (``confirming``), and only
a reply from that address to that one seats them. A forged From so seats
no one, and every such request counts against the day's replies to
strangers of its domain and in all (``[limits]
stranger_replies_per_domain``, ``stranger_replies_per_day``).

Runs inside intake's transaction.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games import GAMES, GameUnavailable, PackageFault, get_game
from referee.games.base import Game, ParseError
from referee.mail.auth import Verdict
from referee.mail.compose import echo_subject
from referee.service.intake.budgets import Budgets
from referee.service.intake.confirming import Claim, Confirmations, expiry
from referee.service.intake.letter import Judgement, Letter, Reply
from referee.service.intake.senders import Senders
from referee.service.play import player_names
from referee.service.play.commands import MAX_LINES
from referee.service.play.session import MAX_SEAT_NAME, GameSession, unique_name
from referee.store import models as m

#: A stranger is told of at most so many games to join.
OPEN_GAMES_TOLD = 5
#: A name that holds an address ("victim@example.org", from a From's
#: quoted name or comment) is no name of a player (:func:`own_name`).
_ADDRESS = re.compile(r"[^\s@]@[^\s@]")


@dataclasses.dataclass(frozen=True)
class Alike:
    """A join given no seat: the joiner's name reads as the name of
    another seat of the game, ``seat``."""

    seat: str


class Joining:
    """Finds the game a mail deals its sender into, and seats them."""

    def __init__(self, config: Config, senders: Senders, budgets: Budgets, key: bytes) -> None:
        """``key``: the Message-ID key, which signs the confirmation addresses."""
        self.config, self.senders, self.budgets = config, senders, budgets
        self.confirmations = Confirmations(config.referee.address, key)

    @cached_property
    def _kinds(self) -> list[str]:
        found = []
        for kind, game in GAMES.items():
            try:
                if game.takes_members_by_mail:
                    found.append(kind)
            except PackageFault:
                continue  # its package is at fault: its line is logged
        return sorted(found)

    @property
    def kinds(self) -> list[str]:
        """The kinds that take members by mail: known at the first mail, so
        a pass with none imports no engine for it; less any whose package
        raised since (a guest's fault is its own games' alone)."""
        return [kind for kind in self._kinds if GAMES.broken(kind) is None]

    def asks_to_join(self, letter: Letter) -> bool:
        """Whether a line of the mail is the join command of a game that takes
        members by mail (the rest need not look for a game to join). A
        package whose ``parse`` raises is left out: a mail about another
        game is no business of its (its line is logged)."""
        for kind in self.kinds:
            try:
                if asks_to_join(get_game(kind), letter.msg.lines):
                    return True
            except (GameUnavailable, PackageFault):
                continue
        return False

    def game_to_join(self, db: Session, letter: Letter,
                     player: m.Player | None) -> m.Game | None:
        """The active game the mail deals its sender into, or None: the mail
        writes no join command of that game, names another game, or its
        sender plays a seat of it already (the engine answers them)."""
        msg = letter.msg
        if not self.kinds or not msg.sender or letter.from_referee:
            return None
        if msg.sender == self.config.referee.public_list:
            return None  # a list that rewrote From
        tag = letter.tag
        if tag:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            if game is None or game.kind not in self.kinds:
                return None
        else:
            open_ = list(db.scalars(select(m.Game).where(
                m.Game.status == "active", m.Game.kind.in_(self.kinds)).limit(2)))
            if len(open_) != 1:
                return None
            game = open_[0]
        if game.status != "active":
            return None
        if player is not None and any(s.player_id == player.id and not s.bot
                                      for s in game.seats):
            return None
        return game if asks_to_join(get_game(game.kind), msg.lines) else None

    def open_games(self, db: Session, letter: Letter) -> list[dict[str, str]]:
        """What a stranger may join by mail, to be told how: the game the
        mail names if it takes members by mail (none if it names another),
        else every active one (a few, oldest first); each its tag, title and
        the line that joins it."""
        if not self.kinds:
            return []
        q = select(m.Game).where(m.Game.status == "active", m.Game.kind.in_(self.kinds))
        if letter.tag:
            q = q.where(m.Game.tag == letter.tag)
        games = db.scalars(q.order_by(m.Game.id).limit(OPEN_GAMES_TOLD))
        return [{"tag": g.tag, "title": get_game(g.kind).title,
                 "join": get_game(g.kind).join_command} for g in games]

    def stranger_joins(self, db: Session, letter: Letter, game: m.Game) -> Judgement | None:
        """A stranger's join of ``game``: None when the trusted
        Authentication-Results vouch for their From domain (they are seated
        at once), else what came of it: they are asked to confirm, or, if
        their domain disowns the mail or they were asked already today, not
        answered."""
        vouched = self.senders.verify_domain(letter)
        if vouched.passed:
            return None
        return self.ask_to_confirm(db, letter, game, vouched)

    def ask_to_confirm(self, db: Session, letter: Letter, game: m.Game, vouched: Verdict,
                       expired: Claim | None = None) -> Judgement:
        """Ask the address in From to reply to a confirmation address, which
        seats them in ``game`` (once a day for each address and game, within
        the day's replies to strangers); ``expired``: the confirmation they
        answered too late."""
        msg, now = letter.msg, letter.now
        if vouched.failed:
            return Judgement("ignored", f"not answered: a join its sender's domain disowns "
                                        f"({vouched.detail})", tag=game.tag)
        if not self.budgets.tell_stranger(db, f"join {game.tag}", msg.sender, now):
            return Judgement("ignored", (
                f"not answered: a join of {game.tag} to confirm, asked of this address "
                "today already or over [limits] stranger_replies_per_day or "
                "stranger_replies_per_domain"), tag=game.tag)
        day = now.date()
        engine = get_game(game.kind)
        return Judgement("to confirm", f"join of {game.tag} to confirm: {vouched.detail}", (
            Reply("confirm_join", {
                "tag": game.tag, "title": engine.title, "join": engine.join_command,
                "until": expiry(day), "expired": expired is not None},
                name=own_name(msg.sender_name),
                reply_to=self.confirmations.address(msg.sender, game.tag, day)),
        ), tag=game.tag)

    def confirmed(self, db: Session, letter: Letter, claim: Claim) -> m.Game | Judgement:
        """A mail to the confirmation address ``claim``: the game it deals
        its sender into, when the referee made that address for this sender
        and the game is still open; its one command line is then that
        game's join command, whatever its text (a reply quoting our
        request: ``Letter.joins_as``), and it counts as sent by its sender.
        Else what came of it: refused, saying why, or (too late) asked to
        confirm again."""
        msg = letter.msg
        vouched = self.senders.verify_domain(letter)
        if vouched.failed:
            return Judgement("ignored", f"not answered: a join confirmation its sender's "
                                        f"domain disowns ({vouched.detail})")
        if not self.confirmations.made_for(claim, msg.sender):
            return self._not_joined(db, letter, vouched, "made for another", (
                f"It answers no request to confirm that the referee sent to {msg.sender}. "
                "Such a request works only from the address it went to: to join from "
                "this one, ask to join from it."))
        game = db.scalar(select(m.Game).where(m.Game.tag == claim.tag))
        if game is None or game.status != "active" or game.kind not in self.kinds:
            return self._not_joined(db, letter, vouched, "closed", (
                f"The game {claim.tag} is over, so no one can join it any more."))
        if letter.now >= claim.expires:
            return self.ask_to_confirm(db, letter, game, vouched, expired=claim)
        letter.joins_as = get_game(game.kind).join_command
        letter.verdict = Verdict("confirmation", "a reply to the confirmation asked of the sender")
        return game

    def _not_joined(self, db: Session, letter: Letter, vouched: Verdict, why: str,
                    problem: str) -> Judgement:
        """A mail to a confirmation address that seats no one: refused, and
        its sender told why (once a day, within the day's replies to
        strangers unless their domain vouches for them)."""
        msg, now = letter.msg, letter.now
        told = vouched.passed or self.budgets.tell_stranger(db, "not joined", msg.sender, now)
        return Judgement("refused", f"join not confirmed: {why}", (
            Reply("join_not_confirmed", {"subject": echo_subject(msg.subject),
                                         "problem": problem},
                  name=own_name(msg.sender_name)),) if told else ())

    def newcomer(self, db: Session, letter: Letter) -> m.Player:
        """A player row for a stranger dealing themselves in, whom the
        trusted Authentication-Results vouch for or who confirmed."""
        msg = letter.msg
        player = m.Player(address=msg.sender, name=own_name(msg.sender_name),
                          created_at=letter.now)
        db.add(player)
        db.flush()
        return player

    @staticmethod
    def seat(gs: GameSession, player: m.Player, sender_name: str
             ) -> tuple[m.Seat, str | None] | Alike:
        """A seat for ``player`` at the next position, under their name
        (their name, else the mail's From name, else their address's local
        part; never a name that holds an address, which the others would
        read as the player's), as :func:`player_names.clean` leaves it.
        Another person's seat of the same name adds a number to it ("Ann
        2"); the person's own earlier seat does not: someone who comes back
        keeps their name, and the earlier seat, a bot's now, gets another
        (``GameSession.join_args``). A name that reads as another seat's
        but is not the same as written ("Аlice" with a Cyrillic А, or
        "Alice" with a zero-width space, beside "Alice") gets no seat: the
        player's name is forgotten, so that the From name of their next
        mail is the one asked for. The player keeps the name they are
        seated under, cleaned.

        Returns the seat and, when the name had to be shortened to fit
        (:data:`MAX_SEAT_NAME`, with its number), a note that tells the
        player so, else None; or, for a name refused, what it reads as."""
        game = gs.row
        local = player.address.partition("@")[0].strip()
        written = own_name(player.name) or own_name(sender_name) or local
        others = [s.name for s in game.seats if s.player_id != player.id]
        alike = player_names.reads_as(written, others)
        if alike is not None:
            if player.name and own_name(player.name) == written:
                player.name = ""
            return Alike(alike)
        base = player_names.clean(written) or player_names.clean(local) or "Member"
        taken = {name.strip().casefold() for name in others}
        name = unique_name(base, taken)
        seat = m.Seat(position=len(game.seats) + 1, player=player, name=name)
        game.seats.append(seat)
        # The player's name as stored and shown: cleaned, or the one they
        # now write from if theirs was forgotten.
        player.name = player_names.clean(own_name(player.name) or own_name(sender_name))
        gs.db.flush()
        if name.startswith(base):
            return seat, None
        return seat, (f"Your name is too long for a seat here (at most {MAX_SEAT_NAME} "
                      f"characters), so you play as: {name}")


def own_name(name: str) -> str:
    """``name`` stripped, or "" if it holds an address: a From's quoted name
    or comment ("victim@example.org") is no name to seat or greet anyone by."""
    name = name.strip()
    return "" if _ADDRESS.search(name) else name


def asks_to_join(engine: Game[Any], lines: Sequence[str]) -> bool:
    """Whether one of the command lines of a mail is ``engine``'s join command."""
    for line in lines[:MAX_LINES]:
        try:
            action = engine.parse(line)
        except ParseError:
            continue
        if action is not None and action.verb == "join":
            return True
    return False
