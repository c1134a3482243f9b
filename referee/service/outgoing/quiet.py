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
:meth:`QuietTable.send_stale`): one a player, with a section for each of
their games. Whatever the mode, a mail whose moves were all done and that
brings its player nothing due now is answered at once by a receipt
(:meth:`QuietTable._receipt`, issue 37). Every mail of a player in ``turns`` or
``digest`` carries the game's one subject, so mail clients thread a game.
With a public list the list carries the public mail, and nothing is held.

Runs inside its caller's transaction (intake, the sweep, an operator's
action), like ``delivery``, which hands it each batch.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from referee.games import title_of
from referee.games.base import Notice
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
#: The line an answer comes to when all it says is that the mail's moves
#: were done ("You: play QH (done)"): held, it rides with the next mail.
DONE = "You: {} (done)"
#: The key in a transaction's ``Session.info`` of the (game, player) pairs
#: whose held mail goes out with their next mail of the batch.
_RELEASED = "quiet_released"


def mail_mode(default: str, game: m.Game, seat: m.Seat,
              public_list: str | None = None) -> str:
    """The mode of ``seat``'s player: their choice, else the game's (the
    operator's ``--option mail=``), else ``turns`` where a public list
    carries the reports, else ``default``, the engine's
    (``Game.default_mail_mode``)."""
    return seat.mail_mode or str(game.options.get("mail")
                                 or ("turns" if public_list else default))


def game_subject(tag: str, title: str) -> str:
    """The one subject of every mail of a game to a player in a quiet mode."""
    return f"[{tag}] {title}"


@dataclass(frozen=True)
class Item:
    """One part of a mail for one player: its headline (the subject less
    the game's tag), its text, and what kind of mail it is; as a mail of
    its own, ``subject`` and ``text``."""

    headline: str
    body: str
    #: For this player alone, or a few players (a hand, "your turn", a
    #: private offer, the answer to their mail): never held.
    personal: bool
    #: The mail of a single move (``Game.routine_notices``): one line.
    routine: bool
    #: The template it came from (its X-Referee-Mail); "" once held.
    kind: str = ""
    #: For the player's eyes alone (a hand, a sealed bid): the mail that
    #: carries it is marked secret.
    secret: bool = False
    subject: str = ""
    text: str = ""

    @classmethod
    def of(cls, tag: str, subject: str, body: str, notice: Notice,
           routine: Collection[str]) -> Item:
        """The part a rendered ``notice`` makes; ``routine``: the game's
        mails of single moves (``Game.routine_notices``)."""
        headline = subject.removeprefix(f"[{tag}]").strip()
        personal = not notice.audience.public
        return cls(headline, strip_signature(body), personal,
                   not personal and notice.template in routine, notice.template,
                   secret=personal and (len(notice.audience.seats) == 1
                                        if notice.secret is None else notice.secret),
                   subject=subject, text=body)


@dataclass(frozen=True)
class Reply:
    """The answer to a player's mail, the first part of the mail that
    batch of theirs goes in: threaded under their mail."""

    item: Item
    in_reply_to: str | None
    references: tuple[str, ...]
    #: When all the answer says is that the mail's moves were done: that as
    #: one line, which rides with the player's next mail in a quiet mode.
    done: Item | None = None
    #: Whether that line may wait for the player's next mail: only while
    #: news of the game comes soon (another player owes a move). Else it
    #: goes now, still as a line.
    wait: bool = True
    #: The receipt that answers the mail at once when its moves bring the
    #: player no other mail now (issue 37), whatever their mode: the line
    #: above then comes in it, not held.
    receipt: Item | None = None


def strip_signature(body: str) -> str:
    """A mail's text without its signature (``-- `` and what follows)."""
    head, sep, _ = body.partition("\n-- \n")
    if not sep and body.startswith("-- \n"):
        return ""
    return head.rstrip()


def compose(items: list[Item], signature: str, *, lines: bool = True, asks: str = "") -> str:
    """The text of one mail that carries several: the moves as lines (held
    ones always; all of them with ``lines``), each report or personal mail
    under its headline, in the order they happened. ``asks``: what the
    player must do now, said last when no part of the mail says it (a mail
    of lines whose subject asks for a move says so in its text too)."""
    parts: list[str] = []
    moves: list[str] = []
    for item in items:
        if not item.body or (lines and item.routine):
            moves.append(f"  {item.headline}")
            continue
        if moves:
            parts.append("\n".join([SINCE, *moves]))
            moves = []
        parts.append(f"{item.headline}\n{'-' * min(len(item.headline), 72)}\n{item.body}")
    if moves:
        parts.append("\n".join([SINCE, *moves]))
    if asks and all(not i.body or (lines and i.routine) for i in items):
        parts.append(f"Now it is up to you: {asks}.")
    return "\n\n".join(parts) + f"\n\n-- \n{signature}\n"


def release(db: Session, game_id: int, player_id: int) -> bool:
    """Whether anything is held for a player in a game, who now asked for
    all mail: if so, their mail of this batch (this transaction) takes it
    (:meth:`QuietTable.deliver`), though mail all holds nothing and looks
    for nothing."""
    if db.scalar(select(m.HeldMail.id).where(
            m.HeldMail.game_id == game_id, m.HeldMail.player_id == player_id).limit(1)) is None:
        return False
    db.info.setdefault(_RELEASED, set()).add((game_id, player_id))
    return True


class QuietTable:
    """Sends a player their mail of one batch (one mail read, one deadline,
    one operator's action) as one mail, or holds it, as their mode says."""

    def __init__(self, queue: MailQueue) -> None:
        self.queue = queue

    def deliver(self, db: Session, game: m.Game, player: m.Player, items: list[Item],
                mode: str, *, must_act: bool, over: bool, now: datetime,
                turn: int | None, asks: str | None = None,
                reply: Reply | None = None) -> None:
        """Send ``player``'s mail of one batch now, in one mail with what
        was held for them, or hold it, as ``mode`` says. ``asks`` is what
        they must do now ("your bid"), for the subject; ``reply`` the answer
        to their mail, which heads the mail (or, when it only says their
        moves were done, rides along like a move)."""
        if reply and reply.done and mode != "all":
            parts = [reply.done, *items]  # only "done": a line among the moves
        else:
            parts = [reply.item, *items] if reply else items
        due = (mode == "all" or must_act or over or any(i.personal for i in parts)
               or (mode == "turns" and any(not i.routine for i in parts))
               or (reply is not None and reply.done is not None and not reply.wait))
        if not due and reply is not None and reply.done and reply.receipt is not None:
            self._receipt(db, game, player, items, reply, mode=mode, now=now, turn=turn)
            return
        if not due:
            self._hold(db, game, player, parts, now)
            return
        # In mail all nothing is held, but what was held before the player
        # chose it (``release``), which comes in this batch's mail.
        released: set[tuple[int, int]] = db.info.get(_RELEASED, set())
        take = mode != "all" or (game.id, player.id) in released
        released.discard((game.id, player.id))
        held = self.take_held(db, game.id, player.id) if take else []
        answers = reply is not None
        if reply and reply.done and mode != "all":
            held, reply = [*held, reply.done], None
        self._send(db, game, player, held, items, mode=mode, over=over, now=now, turn=turn,
                   asks=asks if must_act or answers else None, reply=reply)

    def _receipt(self, db: Session, game: m.Game, player: m.Player, items: list[Item],
                 reply: Reply, *, mode: str, now: datetime, turn: int | None) -> None:
        """Answer a mail whose moves were all done, and brought its player
        nothing due now, with a receipt at once: the line of what was done,
        then the receipt. In ``turns`` what was held and this batch's single
        moves ride in it, as in any mail of theirs; a ``digest`` player's
        stay held for the day's digest."""
        assert reply.done is not None and reply.receipt is not None
        if mode == "digest":
            self._hold(db, game, player, items, now)
            parts = [reply.done, reply.receipt]
        else:
            parts = [*self.take_held(db, game.id, player.id), reply.done, *items,
                     reply.receipt]
        self._send(db, game, player, parts[:-1], [parts[-1]], mode=mode, over=False,
                   now=now, turn=turn, reply=Reply(reply.receipt, reply.in_reply_to,
                                                   reply.references), answered=False)

    @staticmethod
    def _hold(db: Session, game: m.Game, player: m.Player, items: list[Item],
              now: datetime) -> None:
        """Keep ``items`` for the player's next mail of the game, or the digest."""
        for item in items:
            db.add(m.HeldMail(game_id=game.id, player_id=player.id,
                              headline=item.headline, personal=item.secret,
                              body="" if item.routine else item.body, created_at=now))

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
        return [Item(r.headline, r.body, personal=False, routine=not r.body, secret=r.personal)
                for r in rows]

    def drop_held(self, db: Session, game_id: int) -> None:
        """Forget what is held for the players of a game the list told the
        end of: a digest of its moves after the Final Report is noise."""
        db.execute(delete(m.HeldMail).where(m.HeldMail.game_id == game_id))

    def drop_lines(self, db: Session, game_id: int) -> None:
        """Forget the lines of others' moves held for the players of a game
        (not a report held whole, nor the line saying a player's own move
        was done, their answer): a report just posted to the list shows
        where those moves led."""
        prefix, _, suffix = DONE.partition("{}")
        db.execute(delete(m.HeldMail).where(
            m.HeldMail.game_id == game_id, m.HeldMail.body == "",
            ~(m.HeldMail.headline.startswith(prefix, autoescape=True)
              & m.HeldMail.headline.endswith(suffix, autoescape=True))))

    def drop_done(self, db: Session, game_id: int) -> None:
        """Forget the held lines of a game that only say a player's moves
        were done: the list's post, which every player reads, shows where
        those moves led, so a digest of them a day later is noise."""
        prefix, _, suffix = DONE.partition("{}")
        db.execute(delete(m.HeldMail).where(
            m.HeldMail.game_id == game_id, m.HeldMail.body == "",
            m.HeldMail.headline.startswith(prefix, autoescape=True),
            m.HeldMail.headline.endswith(suffix, autoescape=True)))

    def send_held(self, db: Session, game: m.Game, player: m.Player, now: datetime) -> bool:
        """Send what was held for ``player`` in ``game`` at once (they asked
        for all mail again, or the day is up); False if nothing was."""
        held = self.take_held(db, game.id, player.id)
        if not held:
            return False
        self._send(db, game, player, held, [], mode="digest", over=False, now=now, turn=None)
        return True

    def send_stale(self, db: Session, now: datetime) -> int:
        """The digests due: one a player whose oldest held mail is a day
        old, holding what is held for them in every game (issue 37: one
        mail a day across games, not one a game). One indexed query when
        none is."""
        due = db.scalars(select(m.HeldMail.player_id)
                         .where(m.HeldMail.created_at <= now - DIGEST_EVERY)
                         .distinct().order_by(m.HeldMail.player_id)).all()
        sent = 0
        for player_id in due:
            player = db.get(m.Player, player_id)
            if player is None:
                continue
            ids = db.scalars(select(m.HeldMail.game_id)
                             .where(m.HeldMail.player_id == player_id)
                             .distinct().order_by(m.HeldMail.game_id)).all()
            games = [g for g in (db.get(m.Game, i) for i in ids) if g is not None]
            if len(games) == 1:
                sent += self.send_held(db, games[0], player, now)
            elif games:
                sent += self.send_digest(db, games, player, now)
        return sent

    def send_digest(self, db: Session, games: list[m.Game], player: m.Player,
                    now: datetime) -> bool:
        """One mail of what is held for ``player`` in each of ``games``: a
        section a game, headed by its tag and title and the player's own
        private reply address for it (a reply there is about that game),
        under a subject naming the games without brackets (a reply to the
        digest itself names no game, and is asked which). Only the player's
        own held rows, each game's apart: nothing of one game or player
        reaches another's. Marked secret, as the addresses it shows are:
        each vouches for the player's moves in its game (verified mode)."""
        sections: list[str] = []
        named: list[str] = []
        for game in games:
            held = self.take_held(db, game.id, player.id)
            if not held:
                continue
            head = game_subject(game.tag, title_of(game.kind))
            address = self.queue.addresses.private_address(player, game)
            text = strip_signature(compose(held, ""))
            sections.append(f"{head}\n{'=' * min(len(head), 72)}\n"
                            f"To answer about this game, write to {address}\n\n{text}")
            named.append(f"{game.tag} {title_of(game.kind)}")
        if not sections:
            return False
        composer = self.queue.composer
        subject = f"Your digest of {len(named)} games: {', '.join(named)}"
        body = "\n\n".join(sections) + f"\n\n-- \n{composer.name} <{composer.address}>\n"
        subject, body = mark_secret(subject, body)
        self.queue.to_player(db, None, player, subject, body, private=True, secret=True,
                             auto="auto-generated", now=now, kind=f"{COMPOSITE} digest",
                             turn=None)
        return True

    def _send(self, db: Session, game: m.Game, player: m.Player, held: list[Item],
              items: list[Item], *, mode: str, over: bool, now: datetime, turn: int | None,
              asks: str | None = None, reply: Reply | None = None,
              answered: bool = True) -> None:
        """One mail of what was held and the batch's parts, in event order
        (the answer to the player's mail first; with ``answered`` False the
        answer, a receipt, is among ``items`` already: ``reply`` then only
        threads the mail and gives its subject)."""
        parts = [*held, *([reply.item] if reply and answered else []), *items]
        secret = any(i.secret for i in parts)
        if len(parts) == 1 and parts[0].subject:
            subject, body = parts[0].subject, parts[0].text
        else:
            composer = self.queue.composer
            signature = f"{composer.name} <{composer.address}>"
            if reply is not None and "\n-- \n" in reply.item.text:
                # The answer's own signature, with its hint to write "help".
                signature = reply.item.text.partition("\n-- \n")[2].rstrip("\n")
            # In mail all every part comes whole, a move too.
            body = compose(parts, signature, lines=mode != "all", asks=asks or "")
            subject = self._subject(game, parts, mode=mode, over=over, reply=reply)
            if secret:
                body = f"{SECRET_NOTE}\n\n{body}"  # heads the mail, whatever its parts say
        if asks and asks.lower() not in subject.lower():
            # "Your hand for round 2: your bid (secret)": the mark stays last;
            # an answer's "Done: bid 3; your card".
            base = subject.removesuffix(" (secret)")
            sep = "; " if reply is not None else ": "
            subject = f"{base}{sep}{asks}{subject.removeprefix(base)}"
        if secret:
            subject, body = mark_secret(subject, body)
        # What the mail carries, for players' filters: "table trick your_turn".
        kinds = [*dict.fromkeys(i.kind for i in parts if i.kind)]
        kind = kinds[0] if len(parts) == 1 and kinds else " ".join([COMPOSITE, *kinds])
        self.queue.to_player(db, game, player, subject, body,
                             private=reply is not None or asks is not None
                             or any(i.personal or i.secret for i in parts),
                             auto="auto-replied" if reply else "auto-generated",
                             in_reply_to=reply.in_reply_to if reply else None,
                             references=reply.references if reply else (),
                             now=now, kind=kind, turn=turn, secret=secret)

    @staticmethod
    def _subject(game: m.Game, parts: list[Item], *, mode: str, over: bool,
                 reply: Reply | None) -> str:
        """The subject of a mail of several parts: the answer's, when it
        answers the player's mail; else in ``mail all`` the last report's
        (a mail of moves only says the last); else the game's one subject,
        so mail clients thread the game, or its last report once it is over."""
        if reply is not None:
            return reply.item.subject
        reports = [i.subject for i in parts if i.subject and not i.routine and not i.personal]
        if over and reports:
            return reports[-1]
        if mode == "all":
            named = reports or [i.subject for i in parts if i.subject]
            if named:
                return named[-1]
        return game_subject(game.tag, title_of(game.kind))
