"""Delivery: a game's notices and the answers to players' mails, each
addressed to exactly its audience: a public notice to the list, or to each
player as their own copy; a notice to some seats to those seats' players
alone; a player in a quiet mail mode gets the batch through ``quiet``.

Runs inside the caller's transaction (intake, the sweep, an operator's
action): a mail is queued in the same commit as the change it reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.base import Game, Notice
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


class Table(Protocol):
    """A game as its mail tells it: what delivery reads of the game being
    refereed (the play wing's ``GameSession`` is one)."""

    row: m.Game
    engine: Game[Any]
    state: Any
    now: datetime
    #: The seat name the referee moved for, by ``id()`` of each notice that
    #: move caused, so its mails can say the move was the referee's.
    timeout_for: dict[int, str]

    @property
    def tag(self) -> str: ...

    def context(self, seat: int | None) -> dict[str, Any]:
        """What every mail of this game can show, for ``seat`` or the public."""
        ...

    def turn(self) -> int | None: ...

    def new_obligations(self) -> set[int]:
        """The seats that owe something now that they did not owe before."""
        ...


class Delivery:
    """Queues the referee's mail: notices of games, replies to senders."""

    def __init__(self, config: Config, composer: Composer) -> None:
        self.config = config
        self.composer = composer
        self.addresses = Addresses(config)
        self.queue = MailQueue(composer, self.addresses)
        self.quiet = QuietTable(self.queue)

    def reply(
        self, db: Session, gs: Table | None, player: m.Player, msg: InboundMessage,
        template: str, context: dict[str, Any], now: datetime, *,
        about: m.Game | None = None,
    ) -> None:
        """A secret answer to the sender, at their registered address only,
        as a mail of its own (a mail that reached no game's table). With no
        ``gs``, ``about`` is the game the mail was about, if any: a reply to
        the answer goes to the player's private address for that game (in
        verified mode the answer is then marked secret: that address is)."""
        folder = (gs.engine.templates or gs.engine.kind) if gs else "common"
        ctx = {"subject": echo_subject(msg.subject),
               **(gs.context(None) if gs else {"tag": None}), **context}
        subject, body = self.composer.render(folder, template, ctx)
        self.queue.to_player(db, gs.row if gs else None, player, subject, body,
                             auto="auto-replied", in_reply_to=msg.message_id,
                             references=msg.references, now=now, kind=template,
                             turn=gs.turn() if gs else None, about=about, alone=True)

    def answer(self, gs: Table, msg: InboundMessage, seat: int, context: dict[str, Any],
               *, done: str | None, wait: bool = True) -> Reply:
        """The answer to a player's mail (the transcript), to head the mail
        of what it caused for them. ``done`` is the line it comes to when
        it only says that the mail's moves were done: in a quiet mode that
        line rides with the player's next mail instead of a mail of its own,
        if ``wait`` says one comes soon, else goes now as a line."""
        folder = gs.engine.templates or gs.engine.kind
        ctx = {"subject": echo_subject(msg.subject), **gs.context(seat), **context}
        subject, body = self.composer.render(folder, "transcript", ctx)
        # A game's transcript echoes the player's moves (a sealed bid) and
        # the help shows their hand: for them alone.
        item = Item("Your mail", strip_signature(body), personal=True, routine=False,
                    kind="transcript", secret=gs.engine.secret_transcripts,
                    subject=subject, text=body)
        # The line is as secret as the answer it stands for: a tournament's
        # answers are not (ruling TCG-15), so its line marks no mail secret.
        line = (None if done is None else
                Item(done, "", personal=False, routine=True, kind="transcript",
                     secret=item.secret))
        return Reply(item, msg.message_id, tuple(msg.references), line, wait)

    def deliver(self, db: Session, gs: Table, notice: Notice) -> None:
        """Mail one engine notice to its audience, never wider."""
        self.deliver_all(db, gs, [notice])

    def deliver_all(self, db: Session, gs: Table, notices: Sequence[Notice],
                    reply: tuple[m.Player, Reply] | None = None) -> None:
        """Mail what one batch (one mail's moves, one sweep of a game, an
        operator's action) caused, each notice to its audience, never wider,
        and each recipient one mail, its parts in the order of the events.

        With a public list, the list gets the reports (every public notice
        but the single moves, ``Game.routine_notices``, which its readers
        need not see one by one) in one post. Each player gets the rest of
        what is theirs (the single moves, their hand, their prompt; without
        a list, the reports too) in one mail, or later, as their mail mode
        says; ``reply`` (the sender and the answer to their mail) heads the
        sender's mail."""
        folder = gs.engine.templates or gs.engine.kind
        lst = self.config.referee.public_list
        routine = gs.engine.routine_notices
        rendered: dict[tuple[int, int | None], tuple[str, str]] = {}

        def render(i: int, position: int | None) -> tuple[str, str]:
            if (i, position) not in rendered:
                notice = notices[i]
                extra = {"timeout_for": gs.timeout_for.get(id(notice))}
                rendered[i, position] = self.composer.render(
                    folder, notice.template, {**gs.context(position), **notice.context, **extra})
            return rendered[i, position]

        def listed(notice: Notice) -> bool:
            return bool(lst) and notice.audience.public and notice.template not in routine

        over = gs.engine.is_over(gs.state) or gs.row.status != "active"
        posted = False
        if lst:
            posts = [(*render(i, None), n.template) for i, n in enumerate(notices) if listed(n)]
            self._post(db, gs, lst, posts)
            posted = bool(posts)
            if posted and reply is not None:
                # The sender reads what their mail did in the list's post:
                # the line saying it was done can wait for their next mail.
                reply = (reply[0], replace(reply[1], wait=True))
        owing = gs.new_obligations()
        answered = reply is None
        for seat in gs.row.seats:
            if seat.bot:
                continue
            theirs = [(i, n) for i, n in enumerate(notices)
                      if (n.audience.public and not listed(n))
                      or (not n.audience.public and seat.position in n.audience.seats)]
            # A seat made by this mail (a newcomer's) has its player, not yet its id.
            mine = reply is not None and (seat.player_id == reply[0].id
                                          if seat.player_id is not None
                                          else seat.player is reply[0])
            if not theirs and not mine:
                continue  # not even their player row is read
            if seat.player is None:
                continue
            answered = answered or mine
            mode = mail_mode(gs.engine, gs.row, seat, lst)
            if (posted and not theirs and mode != "all" and reply is not None
                    and reply[1].done is not None):
                # All the sender would get is the line saying their moves
                # were done, which the list's post shows; the post asks them,
                # as everyone, for what comes next.
                continue
            items = [Item.of(gs.tag, *render(i, None if n.audience.public else seat.position),
                             n, gs.engine) for i, n in theirs]
            must_act = seat.position in owing
            self.quiet.deliver(
                db, gs.row, seat.player, items, mode,
                must_act=must_act, over=over, now=gs.now, turn=gs.turn(),
                asks=gs.engine.asks(gs.state, seat.position) if must_act else None,
                reply=reply[1] if reply is not None and mine else None)
        if not answered and reply is not None:
            # The sender holds no seat now (they resigned): the answer alone.
            self.quiet.deliver(db, gs.row, reply[0], [], "all", must_act=False, over=over,
                               now=gs.now, turn=gs.turn(), reply=reply[1])
        if over and lst:
            self.quiet.drop_held(db, gs.row.id)
        elif posted:
            self.quiet.drop_done(db, gs.row.id)

    def _post(self, db: Session, gs: Table, lst: str,
              posts: list[tuple[str, str, str]]) -> None:
        """One post to the public list: a report as it is, or several of one
        batch in one mail under the last one's subject (what it came to)."""
        if not posts:
            return
        subject, body, kind = posts[-1]
        if len(posts) > 1:
            parts = [Item(s.removeprefix(f"[{gs.tag}]").strip(), strip_signature(b),
                          personal=False, routine=False) for s, b, _ in posts]
            body = compose(parts, f"{self.composer.name} <{self.composer.address}>")
            kind = " ".join([COMPOSITE, *dict.fromkeys(k for _, _, k in posts)])
        self.queue.put(db, gs.row, [(lst, "")], subject, body, auto="auto-generated",
                       now=gs.now, kind=kind, turn=gs.turn(), to_list=lst)
