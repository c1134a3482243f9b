"""A quiet table: how much of a game's mail each player gets.

A player chooses by mail (``mail all``, ``mail turns``, ``mail digest``),
per game; the operator may set a game's default (``--option mail=turns``),
else its engine names one (``Game.default_mail_mode``).

- ``all``: every mail of the game, each as it happens.
- ``turns``: the reports (a round, a resolution, the game's end) and every
  mail for the player alone; the mails of single moves
  (``Game.routine_notices``) are held and ride, one line each, with the next
  mail the player gets.
- ``digest``: only mail for the player alone, or when the player must act
  (a new obligation) or the game ends; everything else is held.

Held mail goes out with the player's next mail of the game, or in a digest
once the oldest of it is a day old (the deadline sweep calls
:meth:`QuietTable.send_stale`). Every mail of a player in ``turns`` or
``digest`` carries the game's one subject, so mail clients thread a game.
With a public list the list carries the public mail, and nothing is held.

Runs inside its caller's transaction (intake, the sweep, an operator's
action), like ``delivery``, which hands it each batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from referee.games import get_game
from referee.games.base import Game, Notice
from referee.service.outgoing.queue import SECRET_NOTE, MailQueue, mark_secret
from referee.store import models as m

#: The modes a player may choose, with what each means, for the reply.
MODES = {
    "all": "every mail of this game, each as it happens",
    "turns": "the reports and the mails for you alone; the single moves "
             "ride along with your next mail",
    "digest": "a mail when you must act, and everything else in one mail a day",
}
#: Held mail goes out at the latest this long after it was held.
DIGEST_EVERY = timedelta(days=1)
#: The first word of the X-Referee-Mail of a mail that carries others.
COMPOSITE = "table"
#: What heads the moves a mail carries.
SINCE = "Since your last mail:"


def mail_mode(engine: Game[object], game: m.Game, seat: m.Seat) -> str:
    """The mode of ``seat``'s player: their choice, else the game's (the
    operator's ``--option mail=``), else the engine's default."""
    return seat.mail_mode or str(game.options.get("mail") or engine.default_mail_mode)


def game_subject(tag: str, title: str) -> str:
    """The one subject of every mail of a game to a player in a quiet mode."""
    return f"[{tag}] {title}"


@dataclass(frozen=True)
class Item:
    """One mail for one player: its headline (the subject less the game's
    tag), its text, and what kind of mail it is."""

    headline: str
    body: str
    #: For this player alone, or a few players (a hand, "your turn", a
    #: private offer): never held.
    personal: bool
    #: The mail of a single move (``Game.routine_notices``): one line.
    routine: bool
    #: The template it came from (its X-Referee-Mail); "" once held.
    kind: str = ""

    @classmethod
    def of(cls, tag: str, subject: str, body: str, notice: Notice, engine: Game[object]) -> Item:
        headline = subject.removeprefix(f"[{tag}]").strip()
        personal = not notice.audience.public
        return cls(headline, strip_signature(body), personal,
                   not personal and notice.template in engine.routine_notices, notice.template)


def strip_signature(body: str) -> str:
    """A mail's text without its signature (``-- `` and what follows)."""
    head, sep, _ = body.partition("\n-- \n")
    if not sep and body.startswith("-- \n"):
        return ""
    return head.rstrip()


def compose(items: list[Item], signature: str) -> str:
    """The text of one mail that carries several: the moves as lines, each
    report or personal mail under its headline, in the order they happened."""
    parts: list[str] = []
    moves: list[str] = []
    for item in items:
        if item.routine or not item.body:
            moves.append(f"  {item.headline}")
            continue
        if moves:
            parts.append("\n".join([SINCE, *moves]))
            moves = []
        parts.append(f"{item.headline}\n{'-' * min(len(item.headline), 72)}\n{item.body}")
    if moves:
        parts.append("\n".join([SINCE, *moves]))
    return "\n\n".join(parts) + f"\n\n-- \n{signature}\n"


class QuietTable:
    """Sends or holds the mail of one game for players in a quiet mode."""

    def __init__(self, queue: MailQueue) -> None:
        self.queue = queue

    def deliver(self, db: Session, game: m.Game, seat: m.Seat, items: list[Item],
                mode: str, *, must_act: bool, over: bool, now: datetime,
                turn: int | None, last_subject: str | None) -> None:
        """Send ``seat``'s mail of one batch now, with what was held for
        them, or hold it, as the seat's ``mode`` says."""
        assert seat.player is not None
        due = (must_act or over or any(i.personal for i in items)
               or (mode == "turns" and any(not i.routine for i in items)))
        if not due:
            for item in items:
                db.add(m.HeldMail(game_id=game.id, player_id=seat.player.id,
                                  headline=item.headline,
                                  body="" if item.routine else item.body, created_at=now))
            return
        held = self.take_held(db, game.id, seat.player.id)
        subject = (last_subject if over and last_subject
                   else game_subject(game.tag, get_game(game.kind).title))
        self._send(db, game, seat.player, [*held, *items], subject, now=now, turn=turn,
                   secret=any(i.personal for i in items))

    def take_held(self, db: Session, game_id: int, player_id: int) -> list[Item]:
        """What was held for a player in a game, oldest first, now taken."""
        q = (select(m.HeldMail).where(m.HeldMail.game_id == game_id,
                                      m.HeldMail.player_id == player_id)
             .order_by(m.HeldMail.id))
        if db.get_bind().dialect.name == "postgresql":
            # Another worker's digest of the same rows skips them: sent once.
            q = q.with_for_update(skip_locked=True)
        rows = list(db.scalars(q))
        if rows:
            db.execute(delete(m.HeldMail).where(m.HeldMail.id.in_([r.id for r in rows])))
        return [Item(r.headline, r.body, personal=False, routine=not r.body) for r in rows]

    def send_held(self, db: Session, game: m.Game, player: m.Player, now: datetime) -> bool:
        """Send what was held for ``player`` in ``game`` at once (they asked
        for all mail again, or the day is up); False if nothing was."""
        held = self.take_held(db, game.id, player.id)
        if not held:
            return False
        subject = game_subject(game.tag, get_game(game.kind).title)
        self._send(db, game, player, held, subject, now=now, turn=None, secret=False)
        return True

    def send_stale(self, db: Session, now: datetime) -> int:
        """The digests due: every player's held mail of a game whose oldest
        part is a day old. One indexed query when none is."""
        due = db.execute(select(m.HeldMail.game_id, m.HeldMail.player_id)
                         .where(m.HeldMail.created_at <= now - DIGEST_EVERY)
                         .distinct()).all()
        sent = 0
        for game_id, player_id in due:
            game, player = db.get(m.Game, game_id), db.get(m.Player, player_id)
            if game is not None and player is not None:
                sent += self.send_held(db, game, player, now)
        return sent

    def _send(self, db: Session, game: m.Game, player: m.Player, items: list[Item],
              subject: str, *, now: datetime, turn: int | None, secret: bool) -> None:
        composer = self.queue.composer
        body = compose(items, f"{composer.name} <{composer.address}>")
        if secret:
            # The reminder heads the mail, whatever its parts say further down.
            subject, _ = mark_secret(subject, body)
            body = f"{SECRET_NOTE}\n\n{body}"
        # What the mail carries, for players' filters: "trick your_turn".
        kinds = " ".join([COMPOSITE, *dict.fromkeys(i.kind for i in items if i.kind)])
        self.queue.to_player(db, game, player, subject, body, auto="auto-generated",
                             now=now, kind=kinds, turn=turn, secret=secret)
