"""The engine contract: every game is a pure, value-in value-out state machine.

An engine knows nothing of mail, SQL or the clock. The service hands it the
game's state, the seat that acts, a parsed :class:`Action` and the game's
:class:`~referee.games.draws.Draws`; the engine returns a :class:`Result` with
the new state, the events to log and the :class:`Notice` s to mail. Everything
a game decides by chance it draws from ``draws.rng(purpose, *key)``, keyed by
what the draw is for, so a game replays exactly from its seed and action log,
and a public draw can be checked from the seed and the public record alone.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import TypeAdapter

from referee.games.draws import Draws, Rng
from referee.games.mailcheck import MailCheck

JSON = Any  # a value made of dict, list, str, int, float, bool and None


class Scope(StrEnum):
    """Who saw a message, by definition F of rule text 002.

    ``secret``: the referee and one player; ``private``: the referee and some
    players, nobody else; ``public``: the list, or anyone outside the game.
    """

    SECRET = "secret"
    PRIVATE = "private"
    PUBLIC = "public"


class EngineError(Exception):
    """Base of the errors an engine raises; ``str(error)`` is for the player."""


class ParseError(EngineError):
    """The text names a command of this game but cannot be read ("bid 14")."""


class AmbiguousAction(ParseError):
    """The text could mean more than one action; the message lists them."""


class IllegalAction(EngineError):
    """The action parses but the rules do not allow it now."""


class ScopeError(EngineError):
    """The action came through a scope the rules do not allow (a public bid)."""


class OptionError(EngineError):
    """A game option is unknown or has a bad value; the message names it."""


@dataclass(frozen=True)
class Action:
    """One thing a seat does: a verb of the game and its arguments.

    ``args`` holds JSON-able values only, so an action is stored in the
    action log as it is and read back for replay.
    """

    verb: str
    args: tuple[JSON, ...] = ()
    #: How the action came, set by the service for a player's mail: its scope
    #: and, unless public, the seats that saw the mail (the sender's own
    #: included). None for bots, timeouts and the operator. A game whose
    #: answers follow the audience of the request (a private contract offer,
    #: a private trade: 002 rule 9, definition F) reads :meth:`came_to`.
    scope: Scope | None = None
    seen_by: frozenset[int] = frozenset()

    def came_to(self, seat: int) -> Audience:
        """The audience of the request ``seat`` made: everyone for a public
        action (or one with no scope), else exactly the seats that saw it."""
        if self.scope is None or self.scope is Scope.PUBLIC:
            return Audience.everyone()
        return Audience.only(seat, *self.seen_by)

    def to_json(self) -> JSON:
        data: dict[str, JSON] = {"verb": self.verb, "args": list(self.args)}
        if self.scope is not None:
            data["scope"] = self.scope.value
            data["seen_by"] = sorted(self.seen_by)
        return data

    @classmethod
    def from_json(cls, data: JSON) -> Action:
        scope = data.get("scope")
        return cls(str(data["verb"]), tuple(data.get("args", ())),
                   Scope(scope) if scope else None, frozenset(data.get("seen_by", ())))


@dataclass(frozen=True)
class Audience:
    """Who a notice goes to: everyone (``public``) or exactly these seats.

    A secret notice is an audience of one seat. A notice to some seats is
    never widened: hands and sealed bids go to the seats named, nobody else.
    """

    public: bool = False
    seats: frozenset[int] = frozenset()

    @classmethod
    def everyone(cls) -> Audience:
        return cls(public=True)

    @classmethod
    def only(cls, *seats: int) -> Audience:
        return cls(public=False, seats=frozenset(seats))


@dataclass(frozen=True)
class Notice:
    """A mail the service must send: a template of the game and its context.

    ``template`` names a file under ``templates/<kind>/`` (or ``common/``,
    or the game package's own ``templates/``) without the extension;
    ``context`` is JSON-able data for it.
    """

    audience: Audience
    template: str
    context: Mapping[str, JSON] = field(default_factory=dict)
    #: Whether the mail that carries it is marked secret ("SECRET: for you
    #: alone"); None: when it goes to one seat alone. False for a notice to
    #: one seat that tells nothing the table may not know (a public move
    #: the referee made for them): a secret part beside it still marks the
    #: mail.
    secret: bool | None = None


@dataclass(frozen=True)
class Event:
    """A fact for the game's history, with the text shown on its public page.

    ``public`` is False for facts that must stay secret (a sealed bid before
    the round resolves); those are kept for replay and audit but never shown.
    """

    kind: str
    text: str
    public: bool = True
    data: Mapping[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class Forced:
    """A move the rules leave a seat no choice about, that tells no more
    than the move itself (Spades: the last card of a hand): the referee
    plays it at once (:meth:`Game.forced_action`). ``text`` says so to
    everyone ("Bob had one card left: 7♥ played for them.")."""

    action: Action
    text: str


@dataclass(frozen=True)
class FollowedOrders:
    """What a seat's standing orders come to now (:meth:`Game.follow_orders`):
    the move to make for the seat (None: none applies yet), the orders left
    after it, and each order dropped because it can no longer be followed,
    as the words its owner is told (secret)."""

    action: Action | None
    left: list[JSON]
    dropped: list[str] = field(default_factory=list)


#: The name of seat 0 wherever a seat is named: the referee's own
#: obligations (a timetabled report), see :class:`Pending`.
REFEREE_SEAT_NAME = "the referee"


@dataclass(frozen=True)
class Pending:
    """A seat owes an action. ``key`` identifies the obligation: while the
    same key stays pending, its deadline stands; a new key starts a new one.
    Seat 0 is the referee itself (the Dealor of rule text 002): its
    obligations are timetabled actions, fired by the same deadline sweep
    through :meth:`Game.timeout_action`, never reminded. A bot's obligation
    with its own ``due_in`` is a timetabled turn too (a bot member of a
    tournament, who owes nothing, acts once a day): the sweep fires it through
    ``timeout_action`` when it falls due, not at once like a bot's turn."""

    seat: int
    key: str
    #: What is owed, in words for anyone, never "your" ("a bid for round
    #: 3", "a card to trick 4"): a seat's reminder shows it, and so do mails
    #: to everyone, beside the seat's name ("Bob: a bid for round 3").
    what: str
    #: Seconds from when the obligation arose to its deadline; None means the
    #: game's deadline option. A game on a timetable sets it (a round report
    #: seven days after the round began); the engine never reads the clock.
    due_in: int | None = None
    #: The obligation is known only to the seats that saw a private request
    #: (the answer to a contract offer made in private), so views for
    #: everyone (the game page, ``status``, a mail to the table) must not
    #: show its seat or ``what``; they show ``cover`` instead, if set.
    private: bool = False
    #: For a private obligation: the seat and the words the public is told
    #: are owed meanwhile (the offerer's turn), shown with its deadline.
    cover: tuple[int, str] | None = None

    def shown_publicly(self) -> tuple[int, str] | None:
        """The seat and words a view for everyone shows with this
        obligation's deadline: its own, else its ``cover``, else nothing."""
        return (self.seat, self.what) if not self.private else self.cover


#: What a move made for a silent seat cites where the rule text says
#: nothing of one (a house ruling: players are never given its id).
HOUSE_RULE = "by the house rule for silent players"
#: The words :class:`DeadlineMove` fills its slots with: for everyone, and
#: for the seat the move was made for.
_OTHERS = {"them": "them", "they": "they", "their": "their"}
_YOU = {"them": "you", "they": "you", "their": "your"}


@dataclass(frozen=True)
class DeadlineMove:
    """A move the referee made for a silent seat past its deadline, in the
    game's words, so that the table's record and the seat itself are told
    it was the referee's and why (:meth:`Game.deadline_move`).

    ``did`` and ``did_secret`` are clauses in the past tense with the slots
    ``{them}``, ``{they}`` and ``{their}``: "bid 2 for {them}" reads "bid 2
    for them" to the table and "bid 2 for you" to the seat.
    """

    #: What did not come, as a noun: "bid", "card", "move".
    missing: str = "move"
    #: What the referee did, as everyone who may know of it may know it.
    did: str = "moved for {them}"
    #: What the referee did as the seat alone may know it (the card of a
    #: sealed bid, a card put face down); None: ``did``.
    did_secret: str | None = None
    #: Why, citing the rule text's own rule ("as rule 7 says"), else
    #: :data:`HOUSE_RULE`; never a ruling's id.
    rule: str = HOUSE_RULE
    #: Who may know of it: everyone, or only the seats that saw a private
    #: request the silent seat left unanswered (and the seat itself).
    audience: Audience = Audience(public=True)

    def told(self, name: str) -> str:
        """The sentence for the table: "No bid came from Carol Cooper by the
        deadline: the referee bid 2 for them, as rule 7 says." """
        return (f"No {self.missing} came from {name} by the deadline: the referee "
                f"{self.did.format(**_OTHERS)}, {self.rule}.")

    def done_for_you(self) -> str:
        """What was done, for the seat alone: "the referee bid 2 for you, as
        rule 7 says"."""
        return f"the referee {(self.did_secret or self.did).format(**_YOU)}, {self.rule}"

    def told_you(self) -> str:
        """The sentence for the seat's own record: "No bid came from you by
        the deadline: the referee bid 2 for you, as rule 7 says." """
        return f"No {self.missing} came from you by the deadline: {self.done_for_you()}."


def slot_safe(text: str) -> str:
    """``text`` (a move as read, a name) to stand in a clause of
    :class:`DeadlineMove` as it is, not read as a slot."""
    return text.replace("{", "{{").replace("}", "}}")


class Owed(Protocol):
    """An obligation as a caller keeps it: the service's deadline row."""

    @property
    def seat(self) -> int: ...

    @property
    def key(self) -> str: ...

    @property
    def what(self) -> str: ...


StateT = TypeVar("StateT")
OwedT = TypeVar("OwedT", bound=Owed)


@dataclass
class Result(Generic[StateT]):
    """What :meth:`Game.apply` returns."""

    state: StateT
    events: list[Event] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    #: One line for the acting player's reply transcript ("your bid of 5 is
    #: sealed"); when None the service uses the public events' texts.
    reply: str | None = None
    #: The action was not a move but an offence the rules punish (a Spades
    #: misplay): the state changed, and the transcript says PENALTY, not DONE.
    penalty: bool = False
    #: The action was taken but came to nothing (a trade a party could not
    #: meet, a take from an empty Discard Pile): the transcript says FAILED,
    #: and the answer is news to the player, never a mere "(done)".
    failed: bool = False


@dataclass(frozen=True)
class SeatInfo:
    """A seat as the engine sees it: its position, a display name, a bot flag,
    an optional team chosen before the game, and the other names its player
    goes by (the local part of their address: an engine never sees an
    address), which the players may write to name the seat
    (``referee.games.names``)."""

    position: int
    name: str
    bot: bool = False
    team: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Course:
    """A game's scores over its rounds, for the chart on its page: each
    series a name and a value (None: none) per label."""

    title: str
    unit: str
    labels: list[str]
    series: list[tuple[str, list[int | None]]]


@dataclass(frozen=True)
class PageTable:
    """A game as its table on its public page: the data for the game's
    ``page.html`` template, its scores over the rounds, and the commitments
    and revelations beyond the seed's. Made from the view for no seat and
    the public events alone."""

    data: dict[str, JSON]
    course: Course | None = None
    fairness: dict[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class Placing:
    """Where a game's result puts some seats (:meth:`Game.placings`): one
    seat, or a team's seats together (Spades' partners), and their
    ``place``, 1 the best; seats of the same place tie."""

    seats: tuple[int, ...]
    place: int


def winners_first(seats: Iterable[int], winners: Iterable[int]) -> list[Placing]:
    """The placings of a game whose rules give winners and losers and no
    other place: each of ``winners`` first, every other seat second; all
    tied when there is no winner (Pure Skill, Goofspiel and Miser on a tie)."""
    won = set(winners)
    return [Placing((seat,), 1 if seat in won or not won else 2) for seat in seats]


#: The option a replay gives :meth:`Game.new`: the edition of the rules the
#: game began under (never a player's option).
EDITION = "edition"


class Game(Generic[StateT]):
    """A kind of game. Subclasses set ``kind`` and implement the methods.

    States are plain dataclasses; :meth:`dump` and :meth:`load` turn them into
    JSON and back. :meth:`apply` must not mutate the state it is given.
    """

    kind: ClassVar[str]
    title: ClassVar[str]
    state_type: ClassVar[type]
    #: The folder under ``templates/`` with this game's mails (default: kind).
    templates: ClassVar[str] = ""
    #: A game from a package of its own keeps its mails there: the package
    #: (importable, e.g. ``pbm_highcard``) whose ``templates/`` folder holds
    #: them, beside the referee's ``templates/common`` (docs/plugins.md).
    #: Empty: the referee's own ``templates/<folder>``.
    templates_package: ClassVar[str] = ""
    #: ``referee demo`` seats only bots and prints the reports, for games too
    #: long to print every mail of.
    demo_with_bots: ClassVar[bool] = False
    #: Anyone may join by mail, at any time (002 rule 1: a member "deals
    #: themselves in"). The service gives an address with no seat that writes
    #: the game's join command (parsed to ``Action("join")``) a seat at the
    #: next position, and applies ``Action("join", (name, former, aliases,
    #: renamed))``: ``former`` says the person held a seat of this game
    #: before, ``aliases`` are the other names they go by (SeatInfo.aliases),
    #: ``renamed`` gives their earlier seats new names (``[[seat, name]]``)
    #: when they come back under the name one of those had.
    takes_members_by_mail: ClassVar[bool] = False
    #: The line that joins such a game, as a stranger is told to write it.
    join_command: ClassVar[str] = ""
    #: The game's last mail may reveal the secret seed every draw came
    #: from, so anyone can draw them again. False where a draw's result must
    #: stay secret even after the game (Spades' hands): its seed goes to the
    #: operator's audit alone, and the engine commits to each deal instead.
    reveals_seed: ClassVar[bool] = True
    #: A reply's transcript is for its sender's eyes alone (it echoes a
    #: sealed bid, its help shows a hand), and is marked secret.
    secret_transcripts: ClassVar[bool] = True
    #: What the players call this game's turn in mails ("round", "turn").
    turn_word: ClassVar[str] = "turn"
    #: The game's mails show the turn's number ("Round 3", "Turn 7"), so a
    #: player may name it in a line ("bid 5 round 3"). False for a game whose
    #: mails never show one (Spades counts its turns in tricks): its answers
    #: name turns only by :meth:`turn_name`.
    shows_turn_numbers: ClassVar[bool] = True
    #: The words a command of this game starts with: a short line starting
    #: with one that is no command is answered as a move not read, not
    #: passed over as table talk.
    verbs: ClassVar[frozenset[str]] = frozenset()
    #: The words "did you mean" spells a misspelt first word against ("bdi
    #: 3" -> "bid 3"): those the game's commands start with. The service
    #: adds its own (``help``, ``resign``, the table's commands).
    spelt_verbs: ClassVar[tuple[str, ...]] = ()
    #: How a player checks this game's draws from the mails they received
    #: (``referee verify TAG --mail PATH``): what draws its mails show and
    #: how to read them. The default checks the seed's commitment alone.
    mail_check: ClassVar[MailCheck] = MailCheck()
    #: Verbs that are no move (asking for one's hand): never tied to a turn.
    untimed_verbs: ClassVar[frozenset[str]] = frozenset({"hand"})
    #: Public notices that tell a single move (a card played, a bid): a
    #: player who asked for less mail (``mail turns``) gets them as one line
    #: each in their next mail, not a mail each.
    routine_notices: ClassVar[frozenset[str]] = frozenset()
    #: Notices that only ask one seat for its move ("your turn"): one is
    #: not sent when the referee makes that move for the seat in the same
    #: batch (a forced move, a standing order; issue 37).
    prompt_notices: ClassVar[frozenset[str]] = frozenset()
    #: Of the routine notices, those a public list still carries as a post
    #: of their own (a newcomer to a tournament: "the list hears it").
    listed_notices: ClassVar[frozenset[str]] = frozenset()
    #: How much mail a player gets until they say otherwise: ``all``,
    #: ``turns`` or ``digest`` (``referee.service.outgoing.quiet``).
    default_mail_mode: ClassVar[str] = "all"

    #: A line for each option, as ``referee games`` lists them beside their
    #: defaults (those of :meth:`parse_options`).
    option_help: ClassVar[Mapping[str, str]] = {}
    #: Options whose value is a text an operator writes in a file, each
    #: with a line of help: ``referee game new`` takes each as a flag
    #: ``--NAME FILE`` and gives the file's text as the option.
    option_files: ClassVar[Mapping[str, str]] = {}
    #: The edition of this game's rules that a new game begins under. A
    #: change that would make a game begun before it play on or replay
    #: otherwise (a new reading of a rule, a new commitment, a fact newly
    #: recorded) raises it and keeps the old way for games of earlier
    #: editions: a game plays to its end, and replays, under the edition it
    #: began with. The state records it (an ``edition`` field), :meth:`upgrade`
    #: works it out for a state stored before it was recorded, and a replay
    #: hands it to :meth:`new` as the option ``edition``. docs/engines.md,
    #: "Editions", lists each game's.
    edition: ClassVar[int] = 1

    # -- setup --------------------------------------------------------------
    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        """Validate ``--option KEY=VALUE`` pairs; return the full option set
        with every default filled in. Raises :class:`OptionError`."""
        raise NotImplementedError

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        """The least and most seats this game takes with these options."""
        raise NotImplementedError

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], draws: Draws
    ) -> Result[StateT]:
        """Start a game. The notices are the opening mail(s). ``options`` may
        also hold ``edition``, the :attr:`edition` of the rules a replayed
        game began under (absent: this one)."""
        raise NotImplementedError

    def edition_of(self, state: StateT) -> int:
        """The edition of the rules ``state``'s game began under."""
        return int(getattr(state, "edition", self.edition))

    def edition_begun(self, options: Mapping[str, JSON]) -> int:
        """The edition a game :meth:`new` makes begins under: the one a
        replay names in ``options``, else this one."""
        edition = options.get(EDITION, self.edition)
        if not isinstance(edition, int) or not 1 <= edition <= self.edition:
            raise OptionError(f"{self.title} has no edition {edition!r}")
        return edition

    # -- play ---------------------------------------------------------------
    def parse(self, line: str) -> Action | None:
        """Read one command line. ``None`` if it is no command of this game;
        raises :class:`ParseError` if it is one but malformed."""
        raise NotImplementedError

    def read_as(self, action: Action) -> str:
        """How the transcript says it read ``action`` ("bid 5")."""
        return " ".join([action.verb, *(str(a) for a in action.args)])

    def accepts(self, action: Action, scope: Scope) -> None:
        """Raise :class:`ScopeError` if ``action`` may not come in ``scope``."""
        raise NotImplementedError

    def apply(self, state: StateT, seat: int, action: Action, draws: Draws) -> Result[StateT]:
        """Apply one action of one seat. Raises :class:`IllegalAction`."""
        raise NotImplementedError

    def pending(self, state: StateT) -> list[Pending]:
        """Who owes which action now (empty once the game is over)."""
        raise NotImplementedError

    def public_obligations(
        self, state: StateT, owed: Iterable[OwedT]
    ) -> list[tuple[OwedT, int, str]]:
        """``owed`` (the obligations of :meth:`pending` as a caller keeps
        them, with their deadlines) as a view for everyone may show them:
        each with the seat and the words to show (``Pending.shown_publicly``),
        a private one with no cover left out. One owed but no longer pending
        is shown as it is."""
        rows = list(owed)
        if not rows:
            return []
        return shown_publicly(self.public_view(state), rows)

    def public_view(self, state: StateT) -> dict[str, JSON]:
        """What ``referee status`` shows of ``state``, stored beside it so a
        status of ten thousand games reads no state: the :meth:`summary`,
        and how each pending obligation is shown to everyone ("shown": seat,
        key, then the seat and words shown, or nulls for a private one with
        no cover)."""
        shown: list[JSON] = []
        for p in self.pending(state):
            public = p.shown_publicly()
            shown.append([p.seat, p.key, *(public if public is not None else (None, None))])
        return {"summary": self.summary(state), "shown": shown}

    def turn(self, state: StateT) -> int | None:
        """The number of the turn being played: it goes up whenever the
        players are shown something new to move on (a Goofspiel round's
        prize, a Spades trick), and each seat moves at most once a turn but
        for a retry. A move is tied to the turn its player saw (written
        ``bid 5 round 3`` or ``#12 play QH``, else the turn of the mail it
        answers, else the turn when the mail was read): the service refuses
        it, never applies it, once the turn has moved on. None: moves are
        not tied to turns (a tournament's members act at any time)."""
        return None

    def turn_name(self, turn: int, now: int | None = None) -> str:
        """Turn number ``turn`` (of :meth:`turn`) as the players' mails name
        it ("round 3"); ``now``, the turn being played, lets a game leave out
        what the two share (a Spades trick of the round being played)."""
        return f"{self.turn_word} {turn}"

    def timeout_action(self, state: StateT, seat: int, draws: Draws) -> Action:
        """What the rules say the referee does for a seat past its deadline;
        a choice at random draws from ``self.move_rng(state, seat, draws,
        "timeout")``."""
        raise NotImplementedError

    def deadline_move(self, before: StateT, seat: int, action: Action,
                      result: Result[StateT]) -> DeadlineMove:
        """How the table and ``seat`` are told of ``action``, the move the
        referee made for ``seat`` past its deadline (:meth:`timeout_action`,
        applied to ``before`` with ``result``). By default: the move as the
        transcript reads it ("wrote \"bid 2\" for them"), or, where the move
        recorded a secret (an event not public: a sealed bid), to the table
        only that the referee moved for them; :data:`HOUSE_RULE` as the
        reason. A game whose rule text says what happens refines it, citing
        the rule."""
        written = f'wrote "{slot_safe(self.read_as(action))}" for {{them}}'
        if all(e.public for e in result.events):
            return DeadlineMove(did=written)
        return DeadlineMove(did_secret=written)

    def bot_action(self, state: StateT, seat: int, draws: Draws) -> Action:
        """What the bot in ``seat`` does now: :meth:`random_bot_action`
        where :meth:`bot_at_random` says so, else :meth:`sensible_bot_action`."""
        if self.bot_at_random(state, seat):
            return self.random_bot_action(state, seat, draws)
        return self.sensible_bot_action(state, seat, draws)

    def bot_at_random(self, state: StateT, seat: int) -> bool:
        """Whether the bot in ``seat`` plays at random: the game says
        ``bot=random``, or was stored before the option (a state with no
        ``bot``)."""
        return getattr(state, "bot", "random") == "random"

    def random_bot_action(self, state: StateT, seat: int, draws: Draws) -> Action:
        """What a random bot in ``seat`` does now, drawing from
        ``self.move_rng(state, seat, draws, "bot")``; by default the timeout
        move."""
        return self.timeout_action(state, seat, draws)

    def sensible_bot_action(self, state: StateT, seat: int, draws: Draws) -> Action:
        """What a bot worth sitting with does now, from its seat's own view;
        by default the random bot's move (a game with no sensible bot)."""
        return self.random_bot_action(state, seat, draws)

    def move_rng(self, state: StateT, seat: int, draws: Draws, purpose: str) -> Rng:
        """The draws of the move the referee chooses for ``seat`` (``purpose``
        ``timeout`` or ``bot``): keyed by the seat and the key of the
        obligation the move answers (:attr:`Pending.key`, which names the
        turn and the step: ``round-3``, ``attack-7:2``), ``-`` if it owes
        none. Each obligation is met once, so no two moves share a stream."""
        key = next((p.key for p in self.pending(state) if p.seat == seat), "-")
        return draws.rng(purpose, seat, key)

    # -- moves the referee makes for a player ----------------------------------
    #: What a player writes to leave a standing order in this game, one
    #: line each, for their help and the ``orders`` answer; empty: the game
    #: takes none.
    order_help: ClassVar[tuple[str, ...]] = ()

    def forced_action(self, state: StateT, seat: int) -> Forced | None:
        """The move ``seat`` owes now if the rules leave it exactly one, and
        making it at once reveals nothing the move itself would not; None
        (the default) when nothing is forced. The service plays it for a
        seat whose player did not turn ``autoplay off``."""
        return None

    def parse_order(self, line: str) -> JSON | None:
        """A standing order ``line`` writes (a JSON-able value with a
        ``text``, how the ``orders`` answer lists it), or None if the line is
        none; raises :class:`ParseError` for an order of this game written
        wrong. By default the game takes no orders."""
        return None

    def follow_orders(self, state: StateT, seat: int,
                      orders: Sequence[JSON]) -> FollowedOrders:
        """What ``seat``'s standing orders (of :meth:`parse_order`, the
        oldest first) come to in ``state``: the move to make now if one
        applies and ``seat`` owes a move, the orders left, those dropped as
        no longer possible. Pure, like every engine method."""
        return FollowedOrders(None, list(orders))

    def replace_with_bot(self, state: StateT, seat: int) -> Result[StateT]:
        """A player left and a bot takes the seat (000 rule 8)."""
        return Result(state)

    def is_over(self, state: StateT) -> bool:
        raise NotImplementedError

    def placings(self, state: StateT) -> list[Placing] | None:
        """How the result of a game over ranks its seats, as its rules say
        (every seat placed once, bots' too), for the club's standings; None
        while it is not over, or for a game whose rules rank nobody. By
        default: None, so a game is rated only once it says how."""
        return None

    # -- the game's public page ---------------------------------------------
    #: How the page folds the history into rounds: the events that open a
    #: round, or (``history_ends``) those that close one; neither: one fold.
    history_opens: ClassVar[frozenset[str]] = frozenset()
    history_ends: ClassVar[frozenset[str]] = frozenset()
    #: What the page calls a round of the history ("Round 3", "Turn 7").
    history_word: ClassVar[str] = "Round"

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable | None:
        """The game as its table for its page (``page.html`` among its
        templates), from ``view`` (:meth:`view` for no seat) and the public
        events; None: the page shows the game's summary."""
        return None

    # -- what people see ----------------------------------------------------
    def view(self, state: StateT, seat: int | None) -> dict[str, JSON]:
        """What ``seat`` (or the public, for ``None``) may see, for templates."""
        raise NotImplementedError

    def help(self, state: StateT, seat: int | None) -> str:
        """What this seat can do now, and how to write it."""
        raise NotImplementedError

    def summary(self, state: StateT) -> dict[str, JSON]:
        """Public facts for ``referee status``: round, scores, result."""
        raise NotImplementedError

    def asks(self, state: StateT, seat: int) -> str | None:
        """What ``seat`` is asked for now, in a subject's words ("your bid",
        "your card"), or None when it owes nothing: every mail that asks a
        player to act says so in its subject."""
        return "your turn" if any(p.seat == seat for p in self.pending(state)) else None

    def receipt(self, state: StateT, seat: int, moves: Sequence[Action]) -> str:
        """The answer, in a few lines, to a mail of ``seat``'s whose
        ``moves`` were all done but brought its player no other mail in
        that pass (a sealed bid, a card while others are still to play): that
        the move is in, how many are still awaited, and what comes next.
        ``state`` is the game after the moves. It goes to the player alone,
        secret where the game's answers are (:attr:`secret_transcripts`), so
        it may name their own move; never another seat's secret, and the
        seats still to move only where a view for everyone shows them. By
        default: what the seat still owes, and what the others owe, counted,
        as :meth:`Pending.shown_publicly` words it."""
        pending = self.pending(state)
        mine = [p.what for p in pending if p.seat == seat]
        shown = [p.shown_publicly() for p in pending if p.seat != seat]
        others = [s for s in shown if s is not None and s[0] != seat]
        players = len({s for s, _ in others if s})
        said = ["Your move is in."]
        if mine:
            said.append(f"You still owe {' and '.join(mine)}.")
        if players:
            whats = "; ".join(dict.fromkeys(w for s, w in others if s))
            said.append(f"Waiting for {players} other player{'s' if players != 1 else ''}: "
                        f"{whats}.")
        elif others:
            said.append(f"Next: the referee's {others[0][1]}.")
        said.append("You hear from the referee when you are to act again or the game "
                    "moves on.")
        return " ".join(said)

    def status(self, state: StateT) -> str:
        """The game as it stands, for everyone, as a player's ``status`` shows
        it: a few lines in the game's own words (where play stands, the
        scores as the game keeps them, the result once over). Public facts
        only, like ``view(state, None)``; who owes what by when, and the
        latest events, the service adds."""
        raise NotImplementedError

    # -- persistence ----------------------------------------------------------
    def dump(self, state: StateT) -> JSON:
        return _adapter(self.state_type).dump_python(state, mode="json")

    def load(self, data: JSON) -> StateT:
        loaded: StateT = _adapter(self.state_type).validate_python(self.upgrade(data))
        return loaded

    def upgrade(self, data: JSON) -> JSON:
        """A state stored by an earlier version of the engine, as this one
        reads it: a field it lacks filled in as that game had it (its
        ``edition``, worked out from what the stored state holds), so that
        the state stored after its next move is still the one its replay
        gives. ``data`` is not changed."""
        return data


@functools.cache
def _adapter(state_type: type) -> TypeAdapter[Any]:
    """One pydantic adapter per state class: building one costs milliseconds."""
    return TypeAdapter(state_type)


#: A polite word around a command: "bid 6 please", "please play QH, thanks".
_POLITE = re.compile(r"^(?:please|pls)[,:]?\s+|[\s,;.!-]+(?:please|pls|thanks|thank you|thx|"
                     r"cheers|ta)[\s.!]*$", re.IGNORECASE)


def polite(line: str) -> str:
    """``line`` without a polite word before or after the command: every
    game's grammar reads "deal me in please" as "deal me in"."""
    line = line.strip()
    while (shorter := _POLITE.sub("", line).strip()) != line:
        line = shorter
    return line


def evolve(state: StateT) -> StateT:
    """A deep copy to change, so :meth:`Game.apply` never mutates its input."""
    return copy.deepcopy(state)


def shown_publicly(view: Mapping[str, Any],
                   owed: Iterable[OwedT]) -> list[tuple[OwedT, int, str]]:
    """``owed`` as :meth:`Game.public_obligations` shows it, from a stored
    :meth:`Game.public_view`."""
    shown: dict[tuple[int, str], tuple[int, str] | None] = {
        (seat, key): (public_seat, what) if what is not None else None
        for seat, key, public_seat, what in view["shown"]}
    out = []
    for row in owed:
        public = shown.get((row.seat, row.key), (row.seat, row.what))
        if public is not None:
            out.append((row, *public))
    return out
