"""One inbound mail as the intake's checks read it: the parsed message, its
facts worked out once right after parsing (the game it names, the mail it
answers, which of its addresses are ours, whether it came by our list), and
what the checks found on the way (the sender's player row, their games, the
verdict on who wrote it, the game it is about, its scope). Every
check reads the facts here instead of asking ``mail/`` again.

What a check decides is a :class:`Judgement`: whether the mail goes on,
or its status and note, and the replies it asks for (each a
:class:`Reply`, a template and its data); the chain sends them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from referee.config import Config
from referee.games.base import Scope
from referee.mail.auth import Verdict
from referee.mail.compose import Composer
from referee.mail.headers import find_tag
from referee.mail.inbound import InboundMessage
from referee.service.outgoing.addresses import Addresses
from referee.service.play.commands import TranscriptLine
from referee.store import models as m


@dataclass
class Outcome:
    """What processing one message did, for logs and tests."""

    status: str
    tag: str | None = None
    transcript: list[TranscriptLine] = field(default_factory=list)


@dataclass(frozen=True)
class Reply:
    """A mail a check asks the chain to send in answer to the mail: its
    template (of ``common``) and data. To a player (``to``), secretly, at
    their registered address, ``about`` the game the mail was about if
    any; else (no player row: a stranger, a joiner) to the address in From,
    under ``name``, with ``reply_to`` as its Reply-To if given."""

    template: str
    data: dict[str, Any]
    to: m.Player | None = None
    about: m.Game | None = None
    name: str = ""
    reply_to: str | None = None


@dataclass(frozen=True)
class Judgement:
    """What one check of the chain decided. No ``status`` (""): the mail
    goes on down the chain; else its way ends with that status (and
    ``tag``, the game it was about). Either way its record says ``note``
    if given (a record with none says its status), and the chain sends
    ``replies``, in order."""

    status: str = ""
    note: str | None = None
    replies: tuple[Reply, ...] = ()
    tag: str | None = None


#: The judgement of a check that lets the mail go on, answering nothing.
GO_ON = Judgement()


@dataclass(frozen=True)
class Over:
    """Why only a mail's moves are read: what its record says if it is not
    answered, and whether its sender's reply budget is spent (they are
    told so, once) or it is the same mail again (a loop: no one is told)."""

    note: str
    budget: bool


@dataclass
class Letter:
    """A recorded inbound mail, its facts, and what the checks found."""

    msg: InboundMessage
    #: The mail's record (``inbound``), already added in its transaction.
    record: m.Inbound
    now: datetime
    # -- facts, worked out once (:meth:`read`) ------------------------------
    #: The game the subject's tag names.
    subject_tag: str | None
    #: The game the mail names: its subject's tag, else the thread of one of our mails.
    tag: str | None
    #: The ids of the mail it answers: its In-Reply-To, else its References,
    #: the latest first.
    answers: tuple[str, ...]
    #: Its recipients (To and Cc) that are not the referee's addresses.
    others: frozenset[str]
    #: The private-address tokens among its recipients.
    tokens: frozenset[str]
    #: Sent to one of the referee's VERP forms: only a bounce goes there.
    to_verp: bool
    #: The outbox row a signed VERP recipient names (only with ``[smtp] verp``).
    verp_id: int | None
    #: It came through our own public list (its List-Id).
    from_our_list: bool
    #: The sender is one of the referee's own addresses.
    from_referee: bool
    # -- found by the checks --------------------------------------------------
    player: m.Player | None = None
    #: The sender's games (for a mail naming one of theirs, that one alone).
    games: list[m.Game] = field(default_factory=list)
    #: The game the mail deals its sender into, if it asks to join one.
    joining: m.Game | None = None
    #: The one command line a reply to a confirmation address is read as
    #: (the game's join command, whatever its text said): ``lines``.
    joins_as: str | None = None
    #: The games whose private reply addresses of ``player``'s seats the
    #: mail came to (each vouches for the player in its own game alone).
    bound: frozenset[int] = frozenset()
    #: The game the mail is about, or a sentence saying why none is (None:
    #: no player).
    routed: m.Game | str | None = None
    #: Whether the mail is really from ``player`` (None: no player).
    verdict: Verdict | None = None
    #: Why only the mail's moves are read (its sender's reply budget is
    #: spent, or it is the same mail again). None: all of it is read.
    over: Over | None = None

    def over_unanswered(self) -> Judgement | None:
        """A mail over its budget (``over``) that a check would answer with
        a refusal: it ends unanswered, its record saying why. None when the
        mail is not over a budget, so the check answers it."""
        if self.over is None:
            return None
        return Judgement("refused", self.over.note)

    @property
    def lines(self) -> tuple[str, ...]:
        """The command lines the mail is read as: its own, or for a reply
        to a confirmation address, the join command alone (``joins_as``)."""
        return (self.joins_as,) if self.joins_as is not None else self.msg.lines

    @classmethod
    def read(cls, msg: InboundMessage, record: m.Inbound, now: datetime, config: Config,
             addresses: Addresses, composer: Composer) -> Letter:
        """Work out the facts of ``msg``, once."""
        recipients = (*msg.to, *msg.cc)
        subject_tag = find_tag(msg.subject)
        to_verp = any(addresses.is_bounce_address(a) for a in recipients)
        verp_id = None
        if to_verp and config.smtp.verp:
            verp_id = next((oid for a in recipients
                            if (oid := composer.verp_outbox_id(a)) is not None), None)
        return cls(
            msg=msg, record=record, now=now, subject_tag=subject_tag,
            tag=subject_tag or composer.tag_from_ids([*msg.references, *msg.in_reply_to]),
            answers=tuple(msg.in_reply_to or msg.references[::-1]),
            others=frozenset(a for a in recipients if not addresses.is_referee(a)),
            tokens=frozenset(t for a in recipients if (t := addresses.token_of(a))),
            to_verp=to_verp,
            verp_id=verp_id,
            from_our_list=bool(msg.list_id) and msg.list_id == addresses.list_id(),
            from_referee=addresses.is_referee(msg.sender),
        )

    @property
    def about(self) -> m.Game | None:
        """The game the mail is about, if one is."""
        return self.routed if isinstance(self.routed, m.Game) else None

    @property
    def seated(self) -> list[m.Game]:
        """The sender's active games."""
        return [g for g in self.games if g.status == "active"]

    def scope(self, game: m.Game, public_list: str | None) -> tuple[Scope, frozenset[int]]:
        """Who saw the mail, by definition F of rule text 002: secret to the
        referee alone; private among players of ``game``; public otherwise.
        With it, unless public, the seats whose players were on the mail
        besides the sender."""
        if (public_list and public_list in self.others) or self.from_our_list:
            return Scope.PUBLIC, frozenset()
        others = set(self.others) - {self.msg.sender}
        if not others:
            return Scope.SECRET, frozenset()
        seats = {s.player.address: s.position for s in game.seats if s.player is not None}
        if not others <= seats.keys():
            return Scope.PUBLIC, frozenset()
        return Scope.PRIVATE, frozenset(seats[a] for a in others)
