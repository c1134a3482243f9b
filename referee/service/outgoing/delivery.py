"""Delivery: what a batch of play decided (a :class:`Decision`), mailed,
each part addressed to exactly its audience: a public notice to the list,
or to each player as their own copy; a notice to some seats to those
seats' players alone; the answer to a player's mail at the head of their
mail of it; a player in a quiet mail mode gets the batch through ``quiet``.

Delivery reads only the decision, never the game being refereed: play
decides, then its caller hands the decision here ("decide, then do").

Runs inside the caller's transaction (intake, the sweep, an operator's
action): a mail is queued in the same commit as the change it reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Notice
from referee.mail.compose import Composer, echo_subject
from referee.mail.inbound import InboundMessage
from referee.service.outgoing.addresses import Addresses
from referee.service.outgoing.queue import MailQueue
from referee.service.outgoing.quiet import (
    COMPOSITE,
    Item,
    QuietTable,
    Reply,
    compose,
    mail_mode,
    strip_signature,
)
from referee.store import models as m


@dataclass(frozen=True)
class Answer:
    """The answer a batch owes the sender of a mail, as play decided it:
    delivery renders it (the game's ``transcript``, with ``context`` over
    the sender's seat's) to head the sender's mail of the batch."""

    player: m.Player
    msg: InboundMessage
    #: The sender's seat, whose context the answer shows.
    seat: int
    context: Mapping[str, Any]
    #: The line it comes to when it only says that the mail's moves were
    #: done: in a quiet mode that line rides with the player's next mail
    #: instead of a mail of its own, if ``wait`` says one comes soon, else
    #: goes now as a line.
    done: str | None = None
    wait: bool = True
    #: For a mail whose moves were all done (``done``): the data of the
    #: receipt that answers it at once when it brings its sender no other
    #: mail in this pass (the game's words, ``receipt``; ``next_due``).
    receipt: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Decision:
    """What one batch (one mail's moves, one sweep of a game, an operator's
    action) decided, as one value: all that delivery reads of the game.
    ``GameSession.decide`` makes it; its caller hands it to delivery."""

    row: m.Game
    now: datetime
    #: The game's template folder (``Game.templates``, else its kind).
    folder: str
    #: The game's mails of single moves (``Game.routine_notices``).
    routine: frozenset[str]
    #: The game's mail mode when neither player nor operator chose one.
    default_mode: str
    #: The answer to a player's mail is for them alone (``Game.secret_transcripts``).
    secret_transcripts: bool
    #: The engine's notices, in the order of the events.
    notices: tuple[Notice, ...]
    #: For each notice, the name of the seat the referee moved for when
    #: that move caused it (its mails say the move was the referee's).
    timeout_for: tuple[str | None, ...]
    #: What every mail of the game can show (``GameSession.context``): the
    #: public's (None) if a notice is public, and each seat's that a
    #: notice or the answer is addressed to; no other seat's.
    contexts: Mapping[int | None, Mapping[str, Any]]
    #: The game's turn now (None once it is over).
    turn: int | None
    #: The seats that owe something now that they did not owe before.
    owing: frozenset[int]
    #: What each of ``owing``, and the sender of the mail answered if they
    #: owe a move, is asked for now ("your bid"), for the subject.
    asks: Mapping[int, str | None]
    #: The game is over (finished or cancelled).
    over: bool
    answer: Answer | None = None
    #: Of ``routine``, what a public list still carries (``Game.listed_notices``).
    listed: frozenset[str] = frozenset()

    @property
    def tag(self) -> str:
        return self.row.tag


#: The table's mail of a move the referee made for a silent seat, which
#: that seat gets in words of its own (``GameSession.timeout``).
DEADLINE_MOVE = "deadline"


def told_apart(notice: Notice, position: int) -> bool:
    """The seat at ``position`` is told ``notice`` in a mail of its own:
    the table's word of the move the referee made for that seat."""
    return notice.template == DEADLINE_MOVE and notice.context.get("for_seat") == position


class Delivery:
    """Queues the referee's mail: notices of games, replies to senders."""

    def __init__(self, config: Config, composer: Composer) -> None:
        self.config = config
        self.composer = composer
        self.addresses = Addresses(config)
        self.queue = MailQueue(composer, self.addresses)
        self.quiet = QuietTable(self.queue)

    def reply(
        self, db: Session, player: m.Player, msg: InboundMessage, template: str,
        context: dict[str, Any], now: datetime, *, about: m.Game | None = None,
    ) -> None:
        """A secret answer to the sender, at their registered address only,
        as a mail of its own (a mail that reached no game's table).
        ``about`` is the game the mail was about, if any: a reply to the
        answer goes to the player's private address for that game (in
        verified mode the answer is then marked secret: that address is)."""
        ctx = {"subject": echo_subject(msg.subject), "tag": None, **context}
        subject, body = self.composer.render("common", template, ctx)
        self.queue.to_player(db, None, player, subject, body,
                             auto="auto-replied", in_reply_to=msg.message_id,
                             references=msg.references, now=now, kind=template,
                             turn=None, about=about, alone=True)

    def answer(self, decision: Decision, answer: Answer) -> Reply:
        """The answer to a player's mail (the transcript), to head the mail
        of what it caused for them; its line saying the moves were done
        (``Answer.done``), to ride with their next mail in a quiet mode."""
        ctx = {"subject": echo_subject(answer.msg.subject), **decision.contexts[answer.seat],
               **answer.context}
        subject, body = self.composer.render(decision.folder, "transcript", ctx)
        # A game's transcript echoes the player's moves (a sealed bid) and
        # the help shows their hand: for them alone.
        item = Item("Your mail", strip_signature(body), personal=True, routine=False,
                    kind="transcript", secret=decision.secret_transcripts,
                    subject=subject, text=body)
        # The line is as secret as the answer it stands for: a tournament's
        # answers are not (ruling TCG-15), so its line marks no mail secret.
        line = (None if answer.done is None else
                Item(answer.done, "", personal=False, routine=True, kind="transcript",
                     secret=item.secret))
        receipt = None
        if answer.receipt is not None:
            subject, body = self.composer.render(decision.folder, "receipt", {
                **decision.contexts[answer.seat], **answer.receipt})
            receipt = Item(subject.removeprefix(f"[{decision.tag}]").strip(),
                           strip_signature(body), personal=True, routine=False,
                           kind="receipt", secret=item.secret, subject=subject, text=body)
        return Reply(item, answer.msg.message_id, tuple(answer.msg.references), line,
                     answer.wait, receipt)

    def deliver(self, db: Session, decision: Decision) -> None:
        """Mail what one batch decided, each notice to its audience, never
        wider, and each recipient one mail, its parts in the order of the
        events.

        With a public list, the list gets the reports (every public notice
        but the single moves, ``Game.routine_notices``, which its readers
        need not see one by one) in one post. Each player gets the rest of
        what is theirs (the single moves, their hand, their prompt; without
        a list, the reports too) in one mail, or later, as their mail mode
        says; the answer to the sender's mail (``Decision.answer``) heads
        the sender's mail."""
        d, notices = decision, decision.notices
        reply = None if d.answer is None else (d.answer.player, self.answer(d, d.answer))
        lst = self.config.referee.public_list
        rendered: dict[tuple[int, int | None], tuple[str, str]] = {}

        def render(i: int, position: int | None) -> tuple[str, str]:
            if (i, position) not in rendered:
                notice = notices[i]
                extra = {"timeout_for": d.timeout_for[i]}
                rendered[i, position] = self.composer.render(
                    d.folder, notice.template, {**d.contexts[position], **notice.context, **extra})
            return rendered[i, position]

        def listed(notice: Notice) -> bool:
            return bool(lst) and notice.audience.public and (
                notice.template not in d.routine or notice.template in d.listed)

        posted = False
        if lst:
            posts = [(*render(i, None), n.template) for i, n in enumerate(notices) if listed(n)]
            self._post(db, d, lst, posts)
            posted = bool(posts)
            if any(listed(n) and n.template not in d.routine for n in notices):
                # A report on the list, which every player reads, tells
                # where the moves held as lines before it led: a mail of
                # theirs after it need not repeat those steps.
                self.quiet.drop_lines(db, d.row.id)
            if posted and reply is not None:
                # The sender reads what their mail did in the list's post:
                # the line saying it was done can wait for their next mail.
                # No receipt either: the post is what the mail caused.
                reply = (reply[0], replace(reply[1], wait=True, receipt=None))
        answered = reply is None
        for seat in d.row.seats:
            if seat.bot:
                continue
            theirs = [(i, n) for i, n in enumerate(notices)
                      if ((n.audience.public and not listed(n))
                          or (not n.audience.public and seat.position in n.audience.seats))
                      and not told_apart(n, seat.position)]
            # A seat made by this mail (a newcomer's) has its player, not yet its id.
            mine = reply is not None and (seat.player_id == reply[0].id
                                          if seat.player_id is not None
                                          else seat.player is reply[0])
            if not theirs and not mine:
                continue  # not even their player row is read
            if seat.player is None:
                continue
            answered = answered or mine
            mode = mail_mode(d.default_mode, d.row, seat, lst)
            if (posted and not theirs and mode != "all" and reply is not None
                    and reply[1].done is not None):
                # All the sender would get is the line saying their moves
                # were done, which the list's post shows; the post asks them,
                # as everyone, for what comes next.
                continue
            items = [Item.of(d.tag, *render(i, None if n.audience.public else seat.position),
                             n, d.routine) for i, n in theirs]
            must_act = seat.position in d.owing
            self.quiet.deliver(
                db, d.row, seat.player, items, mode,
                must_act=must_act, over=d.over, now=d.now, turn=d.turn,
                asks=d.asks.get(seat.position) if must_act or mine else None,
                reply=reply[1] if reply is not None and mine else None)
        if not answered and reply is not None:
            # The sender holds no seat now (they resigned): the answer alone.
            self.quiet.deliver(db, d.row, reply[0], [], "all", must_act=False, over=d.over,
                               now=d.now, turn=d.turn, reply=reply[1])
        if d.over and lst:
            self.quiet.drop_held(db, d.row.id)
        elif posted:
            self.quiet.drop_done(db, d.row.id)

    def _post(self, db: Session, decision: Decision, lst: str,
              posts: list[tuple[str, str, str]]) -> None:
        """One post to the public list: a report as it is, or several of one
        batch in one mail under the last one's subject (what it came to)."""
        if not posts:
            return
        subject, body, kind = posts[-1]
        if len(posts) > 1:
            parts = [Item(s.removeprefix(f"[{decision.tag}]").strip(), strip_signature(b),
                          personal=False, routine=False) for s, b, _ in posts]
            body = compose(parts, f"{self.composer.name} <{self.composer.address}>")
            kind = " ".join([COMPOSITE, *dict.fromkeys(k for _, _, k in posts)])
        self.queue.put(db, decision.row, [(lst, "")], subject, body, auto="auto-generated",
                       now=decision.now, kind=kind, turn=decision.turn, to_list=lst)
