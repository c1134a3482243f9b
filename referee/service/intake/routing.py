"""Routing: which game a player's mail is about (the subject's tag, the
thread of one of our mails, the game of the private address it came to, or
their only game), which games an address
plays in, and whether to answer an address in no game (once a day).

Runs inside intake's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, joinedload, load_only

from referee.config import Config
from referee.service.intake.budgets import Budgets
from referee.service.intake.letter import Judgement, Letter, Reply
from referee.service.intake.senders import Senders
from referee.store import models as m

#: An address in no game is answered at most this often.
STRANGER_INTERVAL = timedelta(days=1)
_SEATED = m.Game.id.in_(select(m.Seat.game_id).where(m.Seat.player_id == bindparam("player")))
#: Every game a player (``player``) has sat in, oldest first, neither state
#: nor options loaded. Built once.
GAMES_OF = (select(m.Game).where(_SEATED).order_by(m.Game.id)
            .options(load_only(m.Game.id, m.Game.tag, m.Game.kind, m.Game.status)))
#: Of them the one a mail names (``tag``), whole: it is the game the mail
#: is played in, loaded in this one statement, its seats (and their
#: players) with it, which its play reads at once.
GAME_NAMED = (select(m.Game).where(_SEATED, m.Game.tag == bindparam("tag")).order_by(m.Game.id)
              .options(joinedload(m.Game.seats)))


class Routing:
    """Finds the game of a mail, and answers those who have none."""

    def __init__(self, config: Config, senders: Senders, budgets: Budgets) -> None:
        self.config, self.senders, self.budgets = config, senders, budgets

    def find_game(self, db: Session, letter: Letter) -> m.Game | str:
        """The game the mail is about, or a sentence saying why none is: the
        one its tag (subject or thread) names, else the one whose private
        address it came to, else the sender's only game."""
        seated, tag = letter.seated, letter.tag
        if tag:
            game = next((g for g in seated if g.tag == tag), None) or db.scalar(
                select(m.Game).where(m.Game.tag == tag))
            if game is None:
                return f"There is no game {tag}."
            return game
        bound = [g for g in seated if g.id in letter.bound]
        if len(bound) == 1:
            return bound[0]
        if len(seated) == 1:
            return seated[0]
        if not seated:
            return "You have no game in progress."
        return "You play in more than one game; put the game's tag in the subject, like [tag]."

    def games_of(self, db: Session, player: m.Player, tag: str | None = None) -> list[m.Game]:
        """Every game ``player`` has sat in, oldest first: one query through
        the index on ``seats.player_id``, loading neither states nor options
        (the game chosen loads its state when it is refereed). For a mail
        that names a game of theirs (its subject's tag, or the thread of one
        of our mails: ``tag``), that game alone: a player in fifty games
        costs no more per move than one in one."""
        if tag:
            named = list(db.scalars(GAME_NAMED, {"player": player.id, "tag": tag}).unique())
            if named:
                return named
        return list(db.scalars(GAMES_OF, {"player": player.id}))

    def stranger(self, db: Session, letter: Letter,
                 open_games: Callable[[], list[dict[str, str]]] = list) -> Judgement:
        """Mail from an address in no game changes nothing; answered (the
        judgement's reply) once a day, with how to join the games anyone
        may join (``open_games``), within the day's replies to strangers
        nothing vouches for."""
        msg, now = letter.msg, letter.now
        if letter.from_referee or not msg.sender:
            return Judgement("ignored")
        if msg.sender == self.config.referee.public_list:
            # A list that rewrote From: never answer the list itself.
            return Judgement("ignored")
        vouched = self.senders.verify_domain(letter).passed
        if self.config.auth.authserv_id and not vouched:
            # Where the server's checks can be read, only a sender they vouch
            # for is answered: no backscatter to forged From addresses.
            return Judgement("ignored")
        row = db.get(m.StrangerReply, msg.sender)
        if row is not None and now - row.replied_at < STRANGER_INTERVAL:
            return Judgement("ignored")
        if not vouched and not self.budgets.stranger_reply(db, msg.sender, now):
            return Judgement("ignored", "not answered: over [limits] stranger_replies_per_day "
                                        "or stranger_replies_per_domain")
        if row is None:
            db.add(m.StrangerReply(address=msg.sender, replied_at=now))
        else:
            row.replied_at = now
        return Judgement("stranger", replies=(Reply("stranger", {
            "open": open_games(), "list": self.config.referee.public_list},
            name=msg.sender_name),))
