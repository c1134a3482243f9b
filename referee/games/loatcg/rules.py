"""The rules of the Land of Agora trading-card tournament (rule text 002):
the state, the Dealor's timetable, each member's actions and trades, and
the Hand Scores, in the rule text's words, with rulings TCG-1 … TCG-22
(docs/rulings.md).

Members owe nothing: the only obligations are the Dealor's timetable, a
Round Report ``report_days`` after each round begins (rule 5) and the
Freeze seven days after round N begins (rule 6), and, for a bot member, a
turn a day (``BOT_TURN``), fired by the same deadline sweep. The Scoring
Instructions are :mod:`referee.games.loatcg.instructions`.

Every answer goes to the audience of the request (``Action.came_to``,
ruling TCG-15); what the Dealor deals or reveals goes to the member alone
(rule 9, definition C). House readings not settled by the text or the
rulings are marked ``House reading:`` beside the code that implements them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from referee.games.base import (
    JSON,
    Action,
    Audience,
    Event,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    Pending,
    Placing,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
    evolve,
    winners_first,
)
from referee.games.draws import Draws, Rng
from referee.games.loatcg.instructions import (
    BASIC,
    CARD_TYPES,
    EXAMPLE_INSTRUCTIONS,
    PLURALS,
    Instruction,
    InstructionError,
    canonical_text,
    card_type,
    commitment,
    committed_text,
    digest,
    parse_instructions,
    score,
)
from referee.games.names import Nameable, find_seat

DEALOR = 0  # seat 0 is the referee itself (engine contract)
DAY = 24 * 60 * 60
JOIN_CARDS = 5  # rule 3
ROUND_DEAL = 3  # rule 7
DRAW_CARDS = 2  # rule 8: "Discard an Apple to draw 2 cards"
TAKE_APPLES = 2
REVEAL_APPLES = 3
NUMBER_APPLES = 3
INSTRUCTION_APPLES = 7
FREEZE_DAYS = 7  # rule 6: "Seven days after Round N begins"
REPORT_DAYS = (4, 7)  # rule 5: "between 4-7 days after the previous round began"
#: A bot member owes nothing, but takes a turn this long after its last action
#: (or its joining): a random legal action (``bot_action``), fired by the
#: deadline sweep, so bots trade, craft and buy reveals on the timetable.
BOT_TURN = DAY
BOT_PLAYS = ("sensible", "random")
MAX_SEATS = 1_000_000  # the rules set no limit; members may deal themselves in at any time

#: Rule 8: the two cards each refined card is crafted from.
RECIPES: dict[str, tuple[str, str]] = {
    "steel": ("ore", "lumber"),
    "paper": ("ore", "wool"),
    "fabric": ("lumber", "wool"),
}


# -- state --------------------------------------------------------------------


def _no_cards() -> dict[str, int]:
    return dict.fromkeys(CARD_TYPES, 0)


@dataclass
class Member:
    """A Member of the tournament (rule 1): eir seat, name and Hand."""

    seat: int
    name: str
    hand: dict[str, int] = field(default_factory=_no_cards)
    bot: bool = False
    #: Instruction numbers the Dealor has revealed to em, secretly (rule 8).
    known: list[int] = field(default_factory=list)
    #: How many actions e has taken as a bot; a bot's next turn is keyed by it.
    acts: int = 0
    #: How many times e has paid an apple to draw (rule 8), and 3 apples for
    #: a random reveal: the draws of eir next one are keyed by it.
    paid_draws: int = 0
    random_reveals: int = 0
    #: Other names e goes by, from the service (the local part of eir
    #: address), which members may write to name em in an offer.
    aliases: list[str] = field(default_factory=list)


@dataclass
class Offer:
    """An open offer of a trade (rule 10): the maker gives ``give`` for ``want``.

    ``takers`` are the seats that may execute it (empty: any member);
    ``audience`` the seats that saw a private offer (empty: made publicly)."""

    number: int
    maker: int
    give: dict[str, int]
    want: dict[str, int]
    takers: list[int] = field(default_factory=list)
    audience: list[int] = field(default_factory=list)


@dataclass
class Report:
    """A published Round Report (rule 5). ``instruction`` is the number of
    the instruction it showed: never published before the Final Report."""

    number: int
    instruction: int
    text: str
    scores: list[tuple[str, int]]
    discard_pile: dict[str, int]
    deal_follows: bool  # three cards went to each member after it (rule 7, ruling TCG-2)


@dataclass
class LoatcgState:
    """One tournament. Members are listed in the order they dealt themselves in."""

    instructions: str  # the canonical text (ruling TCG-19)
    salt: str  # 64 hex digits, drawn in :meth:`Loatcg.new`
    digest: str  # published at the start
    rounds: int  # N, the number of Scoring Instructions
    report_days: int = 7
    round: int = 1
    members: list[Member] = field(default_factory=list)
    discard_pile: dict[str, int] = field(default_factory=_no_cards)
    offers: list[Offer] = field(default_factory=list)  # open offers, oldest first
    next_offer: int = 1
    reports: list[Report] = field(default_factory=list)
    frozen: bool = False
    final_scores: list[tuple[str, int]] = field(default_factory=list)
    winners: list[str] = field(default_factory=list)
    #: How a bot member plays (``--option bot``): ``sensible`` (:mod:`.bot`)
    #: or ``random``; a tournament stored before the option plays random.
    bot: str = "random"
    #: The edition of the rules the tournament began under (:attr:`LoatcgRules.edition`).
    edition: int = 2


# -- cards --------------------------------------------------------------------


def _article(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def cards_text(cards: Mapping[str, int]) -> str:
    """Cards as players read them: ``2 ore, 1 wool, 3 apples`` (or ``no cards``)."""
    parts = [
        f"{cards[t]} {t if cards[t] == 1 else PLURALS[t]}" for t in CARD_TYPES if cards.get(t, 0)
    ]
    return ", ".join(parts) or "no cards"


def counted(count: int, kind: str) -> str:
    """A count of one type as players read it: ``1 apple``, ``2 apples``,
    ``no apples``."""
    if count == 0:
        return f"no {PLURALS[kind]}"
    return f"{count} {kind if count == 1 else PLURALS[kind]}"


def cards_list(cards: Mapping[str, int]) -> list[dict[str, JSON]]:
    """Cards as the mails' data: ``[{"type": "ore", "count": 2}, ...]``."""
    return [{"type": t, "count": cards[t]} for t in CARD_TYPES if cards.get(t, 0)]


def _lacking(hand: Mapping[str, int], need: Mapping[str, int]) -> dict[str, int]:
    """What ``hand`` lacks of ``need``: type -> how many more are needed."""
    return {t: n - hand.get(t, 0) for t, n in need.items() if hand.get(t, 0) < n}


def _move(source: dict[str, int], target: dict[str, int], cards: Mapping[str, int]) -> None:
    for t, n in cards.items():
        source[t] -= n
        target[t] += n


#: Ruling TCG-22: where a member learns a Hand Score, in the rules' words.
SCORE_TOLD = (
    "The Dealor tells Hand Scores only in the Round Reports (rule 5), with the 3 cards "
    "dealt each round (rule 7) and in the Final Report (rule 6); 'hand' shows your cards."
)

CARDS_HELP = (
    "Write cards like '2 wool, 1 ore' or 'an apple'; the types are ore, wool, lumber, "
    "apples, diamonds, steel, paper and fabric."
)


# -- the rules ----------------------------------------------------------------


class LoatcgMail(Protocol):
    """What the rules ask of the game's views (its Observer,
    :class:`referee.games.loatcg.views.LoatcgViews`, which the game class
    gives them) for the data of the notices a move sends: the rules state
    the move's facts, the views what each audience may see."""

    def common(self, s: LoatcgState) -> dict[str, JSON]:
        """The public facts every notice carries."""
        ...

    def you(self, s: LoatcgState, member: Member) -> dict[str, JSON]:
        """What only ``member`` may see, for eir secret mails."""
        ...

    def how(self, s: LoatcgState, audience: Audience, seat: int) -> dict[str, JSON]:
        """How a request came, for the wording of its answer."""
        ...

    def dealt_notice(
        self, s: LoatcgState, member: Member, dealt: Mapping[str, int], reason: str,
        draw: tuple[str | int, ...],
    ) -> Notice:
        """The secret mail of a deal, with the member's whole hand and the
        draw that chose the cards (its purpose and key)."""
        ...


class LoatcgRules(Game[LoatcgState]):
    """The rules as a game: setup, each action, the Dealor's timetable and
    the random bots' turns. What a notice shows beside the action's facts
    comes from :attr:`views`, which the game class
    (:class:`referee.games.loatcg.Loatcg`) gives, with its sensible bot."""

    #: The views that make each notice's data (:class:`LoatcgMail`).
    views: LoatcgMail

    option_help: ClassVar[Mapping[str, str]] = {
        "instructions": "the Scoring Instructions, one a line (--instructions FILE); the "
                        "rule text's EXAMPLE set without it",
        "report_days": "days from the start of a round to its Round Report, 4 to 7",
        "bot": "how a bot seat plays: sensible, or random",
    }
    #: 2 (2026-11-27, keyed draws): a member's paid draws and random
    #: reveals are counted, each keying the draw of the next. A tournament
    #: of edition 1 draws in the counter scheme, which needs no key, and
    #: counts neither.
    edition: ClassVar[int] = 2

    # -- setup ----------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"instructions": EXAMPLE_INSTRUCTIONS, "report_days": 7,
                                    "bot": "sensible"}
        for key, value in raw.items():
            if key == "bot":
                if value.strip() not in BOT_PLAYS:
                    raise OptionError(f"bot: {value!r} must be sensible or random")
                options["bot"] = value.strip()
            elif key == "instructions":
                try:
                    instructions = parse_instructions(value)
                except InstructionError as e:
                    raise OptionError(f"instructions: {e}") from None
                options["instructions"] = committed_text(instructions)
            elif key == "report_days":
                low, high = REPORT_DAYS
                text = value.strip()
                if not (text.isdecimal() and len(text) <= 2 and low <= int(text) <= high):
                    raise OptionError(
                        f"report_days: {value!r} must be a whole number of days from {low} to "
                        f"{high} (rule 5)"
                    )
                options["report_days"] = int(text)
            else:
                raise OptionError(
                    f"{self.title} has no option {key!r}; its options are instructions, "
                    "report_days, bot"
                )
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        """Any number, none included: members deal themselves in later (rule 1)."""
        return 0, MAX_SEATS

    def upgrade(self, data: JSON) -> JSON:
        """A state stored before editions were: of edition 1 if a member
        lacks the count of eir paid draws (stored before 2026-11-27), else
        of edition 2 (one with no member yet counts from the first)."""
        if not isinstance(data, dict) or "edition" in data:
            return data
        members = data.get("members") or []
        old = any(isinstance(m, dict) and "paid_draws" not in m for m in members)
        return {**data, "edition": 1 if old else 2}

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 5: the Dealor begins round 1 and the tournament publicly, with
        the hash and the number of instructions (rule 4, ruling TCG-19).
        Seats given at creation deal themselves in at once."""
        text = str(options.get("instructions") or EXAMPLE_INSTRUCTIONS)
        try:
            instructions = parse_instructions(text)
        except InstructionError as e:
            raise OptionError(f"instructions: {e}") from None
        days = int(options.get("report_days") or 7)
        if not REPORT_DAYS[0] <= days <= REPORT_DAYS[1]:
            raise OptionError("report_days must be from 4 to 7 (rule 5)")
        if any(s.position == DEALOR for s in seats):
            raise OptionError("seat 0 is the Dealor, who cannot be a member (rule 1)")
        if len({s.position for s in seats}) != len(seats):
            raise OptionError("each seat position may be given once")
        salt = f"{draws.rng('salt').getrandbits(256):064x}"
        # What is hashed is the instructions as the options hold them: with
        # their words since parse_options gives them words (TCG-19); a game
        # stored before that holds its rules alone, and replays to its hash.
        canonical = canonical_text(instructions)
        s = LoatcgState(
            instructions=canonical,
            salt=salt,
            digest=digest(canonical, salt),
            rounds=len(instructions),
            report_days=days,
            bot=str(options.get("bot") or "random"),
            edition=self.edition_begun(options),
        )
        opening = Event(
            "opening",
            f"The tournament and round 1 begin. There are {s.rounds} Scoring Instructions; "
            f"the SHA-256 of their text is {s.digest}.",
            data={"rounds": s.rounds, "digest": s.digest},
        )
        events = [opening]
        later: list[Notice] = []
        for info in seats:
            member = Member(info.position, info.name, bot=info.bot, aliases=list(info.aliases))
            s.members.append(member)
            draw = ("join", member.seat)
            dealt = self._deal(s, member, JOIN_CARDS, draws.rng(*draw))
            events.append(self._deal_event(member, dealt, "join"))
            later.append(self.views.dealt_notice(s, member, dealt, "join", draw))
        if seats:
            events.append(
                Event(
                    "join",
                    f"{names_text([m.name for m in s.members])} deal themselves in and draw "
                    f"{JOIN_CARDS} cards each.",
                    data={"members": [m.name for m in s.members]},
                )
            )
        notices = [Notice(Audience.everyone(), "opening", self.views.common(s)), *later]
        return Result(s, events, notices)

    # -- play -----------------------------------------------------------------

    def accepts(self, action: Action, scope: Scope) -> None:
        """Rule 8: a member's own actions come in any scope. Rule 1: dealing
        oneself in is "by announcement"; house reading: a mail to the list or
        to the referee alone (or with others) will do, since the Dealor
        announces every newcomer publicly (the ``joined`` notice). Rule 10: an
        offer is made publicly or privately, and a trade is executed publicly
        or privately; a secret one would reach nobody but the Dealor."""
        if action.verb in ("offer", "execute") and scope is Scope.SECRET:
            what = "an offer of a trade" if action.verb == "offer" else "executing a trade"
            raise ScopeError(
                f"The rules allow {what} publicly or privately (rule 10), not secretly: send it "
                "to the list, or copy every member it concerns."
            )

    def apply(
        self, state: LoatcgState, seat: int, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        if seat == DEALOR:
            return self._dealor(state, action, draws)
        if state.frozen:
            # Ruling TCG-6: once frozen, no action, trade or join is accepted.
            raise IllegalAction(
                "The tournament has frozen and ended (rule 6); nothing more is accepted. The "
                "Final Report lists every hand and score."
            )
        if action.verb == "join":
            return self._join(state, seat, action, draws)
        member = member_at(state, seat)
        if member is None:
            raise IllegalAction(
                "You are not a Member of this tournament; write 'deal me in' to the referee or "
                "the list to join (rule 1)."
            )
        handlers = {
            "hand": self._hand,
            "score": self._score_asked,
            "discard": self._discard,
            "draw": self._draw,
            "take": self._take,
            "craft": self._craft,
            "reveal": self._buy,
            "number": self._buy,
            "instruction": self._buy,
            "offer": self._offer,
            "execute": self._execute,
            "withdraw": self._withdraw,
        }
        handler = handlers.get(action.verb)
        if handler is None:
            raise IllegalAction(f"The tournament has no command {action.verb!r}.")
        result = handler(state, member, action, draws)
        if member.bot:
            # A bot's action, even one that changed nothing, uses its turn:
            # the next is a new obligation.
            s = result.state if result.state is not state else evolve(state)
            _same(s, member).acts += 1
            result.state = s
        return result

    def pending(self, state: LoatcgState) -> list[Pending]:
        """The Dealor owes the Round Report ``report_days`` after the round
        began (rule 5), or the Freeze seven days after round N began (rule
        6). Members owe nothing; a bot member's turn comes ``BOT_TURN`` after
        its last action, keyed by how many it has taken, so each turn is a
        new obligation with its own clock."""
        if state.frozen:
            return []
        if state.round < state.rounds:
            dealor = Pending(
                DEALOR,
                f"report-{state.round}",
                f"Round Report {state.round}",
                due_in=state.report_days * DAY,
            )
        else:
            what = "the Freeze and the Final Report"
            dealor = Pending(DEALOR, "freeze", what, due_in=FREEZE_DAYS * DAY)
        bots = [
            Pending(m.seat, f"bot-turn-{m.acts}", "a bot member's turn", due_in=BOT_TURN)
            for m in state.members
            if m.bot
        ]
        return [dealor, *bots]

    def timeout_action(self, state: LoatcgState, seat: int, draws: Draws) -> Action:
        """The Dealor's timetabled action, or a bot member's turn; human
        members owe nothing, so none is ever due for them."""
        if state.frozen:
            raise IllegalAction("Nothing is due from this seat.")
        if seat == DEALOR:
            return Action("report") if state.round < state.rounds else Action("freeze")
        member = member_at(state, seat)
        if member is None or not member.bot:
            raise IllegalAction("Nothing is due from this seat.")
        return self.bot_action(state, seat, draws)

    def bot_action(self, state: LoatcgState, seat: int, draws: Draws) -> Action:
        """A bot member's turn: the sensible bot (:mod:`referee.games.loatcg.bot`),
        or the random one for a tournament that says ``bot=random`` (or was
        stored before the option)."""
        if seat == DEALOR:
            return self.timeout_action(state, seat, draws)
        return super().bot_action(state, seat, draws)

    def random_bot_action(self, state: LoatcgState, seat: int, draws: Draws) -> Action:
        """A random bot member's turn (a member who resigned, or one seated
        as a bot). It owes nothing, so it acts quietly: in secret, on its own
        hand, so nobody is mailed. It crafts when it holds the inputs, saves
        apples for reveals (buying one half the time it can), draws or takes
        a card the Discard Pile holds only with apples beyond a reveal's
        price, or does nothing (``hand``). It trades only what it can meet:
        it accepts an offer open to it only when it holds what the offer
        asks and no type is on both sides, privately with the offer's maker
        (rule 10); it offers one card it holds for one of another
        type, privately, to the other bot members alone, and withdraws such
        offers. Every choice is drawn from ``move_rng`` (keyed by its turn)."""
        if seat == DEALOR:
            return self.timeout_action(state, seat, draws)
        member = member_at(state, seat)
        if member is None or state.frozen:
            raise IllegalAction("Nothing is open to this seat.")
        rng = self.move_rng(state, seat, draws, "bot")
        hand = member.hand
        apples = hand["apple"]

        def quietly(verb: str, *args: JSON) -> Action:
            return Action(verb, args, Scope.SECRET, frozenset({seat}))

        craftable = [r for r, need in RECIPES.items() if all(hand[t] for t in need)]
        if craftable and rng.random() < 0.5:
            return quietly("craft", rng.choice(craftable))
        purchases: list[Action] = []
        if apples >= REVEAL_APPLES:
            purchases.append(quietly("reveal"))
            if state.reports:
                purchases.append(quietly("number", rng.randint(1, len(state.reports))))
        if apples >= INSTRUCTION_APPLES:
            purchases.append(quietly("instruction", rng.randint(1, state.rounds)))
        if purchases and rng.random() < 0.5:
            return rng.choice(purchases)
        options: list[Action] = [quietly("hand"), *purchases]
        options += [quietly("craft", kind) for kind in craftable]
        # Apples beyond a reveal's price may go on draws and takes.
        if apples > REVEAL_APPLES:
            options.append(quietly("draw"))
        in_pile = [t for t in CARD_TYPES if state.discard_pile[t]]
        if apples >= TAKE_APPLES + REVEAL_APPLES and in_pile:
            options.append(quietly("take", rng.choice(in_pile)))
        options += [
            Action("execute", (o.number,), Scope.PRIVATE, frozenset({o.maker}))
            for o in state.offers
            if o.maker != seat and (not o.takers or seat in o.takers)
            and (not o.audience or seat in o.audience)
            and not set(o.give) & set(o.want) and not _lacking(hand, o.want)
            and member_at(state, o.maker) is not None
        ]
        bots = frozenset(m.seat for m in state.members if m.bot and m.seat != seat)
        mine = [o for o in state.offers if o.maker == seat and o.audience
                and set(o.audience) - {seat} <= bots]
        options += [Action("withdraw", (o.number,), Scope.PRIVATE,
                           frozenset(o.audience) - {seat}) for o in mine]
        held = [t for t in CARD_TYPES if hand[t] and t != "apple"]
        if bots and held:
            give = rng.choice(held)
            want = rng.choice([t for t in CARD_TYPES if t != give])
            options.append(Action("offer", ({give: 1}, {want: 1}, []), Scope.PRIVATE, bots))
        return rng.choice(options)

    def replace_with_bot(self, state: LoatcgState, seat: int) -> Result[LoatcgState]:
        """A member leaves and a bot keeps eir hand. There is no leave rule
        (ruling TCG-5), so the bot stays a Member and can still win."""
        member = member_at(state, seat)
        if member is None:
            raise IllegalAction("That seat holds no Member.")
        s = evolve(state)
        s_member = member_at(s, seat)
        assert s_member is not None
        s_member.bot = True
        text = f"{member.name} has left; a bot holds eir hand and stays a Member."
        context = {**self.views.common(s), "name": member.name}
        return Result(
            s,
            [Event("resign", text, data={"member": member.name})],
            [Notice(Audience.everyone(), "resign", context)],
            text,
        )

    def is_over(self, state: LoatcgState) -> bool:
        return state.frozen

    def placings(self, state: LoatcgState) -> list[Placing] | None:
        """Rule 6: the Members with the highest Hand Score win, the rest lose."""
        if not state.frozen:
            return None
        return winners_first([m.seat for m in state.members],
                             [m.seat for m in state.members if m.name in state.winners])

    # -- the Dealor -----------------------------------------------------------

    def _dealor(
        self, state: LoatcgState, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        if action.verb == "join":
            raise IllegalAction("The Dealor cannot be a Member (rule 1).")
        if state.frozen:
            raise IllegalAction("The tournament has ended; the Dealor owes nothing more.")
        if action.verb == "report" and state.round < state.rounds:
            return self._round_report(state, draws)
        if action.verb == "freeze" and state.round == state.rounds:
            return self._freeze(state)
        due = "report" if state.round < state.rounds else "freeze"
        raise IllegalAction(f"The Dealor's next act is '{due}', not {action.verb!r}.")

    def _round_report(self, state: LoatcgState, draws: Draws) -> Result[LoatcgState]:
        """Rule 5, ruling TCG-20: each member's score as of now, one
        instruction not yet reported, chosen at random and shown without its
        number, and the Discard Pile; then the next round begins. Rule 7,
        ruling TCG-2: after every report but the first, three cards to each
        member, secretly. Report R draws its instruction (``report`` keyed
        by R) from the numbers not yet reported, in ascending order, and each
        member's deal after it (``deal`` keyed by R and eir seat)."""
        s = evolve(state)
        instructions = instructions_of(s)
        reported = {r.instruction for r in s.reports}
        number = len(s.reports) + 1
        unreported = [i.number for i in instructions if i.number not in reported]
        chosen = draws.rng("report", number).choice(unreported)
        deal = number >= 2
        report = Report(
            number=number,
            instruction=chosen,
            text=instructions[chosen - 1].english(),
            scores=[(m.name, score(instructions, m.hand)) for m in s.members],
            discard_pile=dict(s.discard_pile),
            deal_follows=deal,
        )
        s.reports.append(report)
        s.round += 1
        public = report_json(report)
        scores_text = ", ".join(f"{n} {p}" for n, p in report.scores) or "no members"
        events = [
            Event(
                "round_report",
                f"Round Report {number}: scores {scores_text}. An instruction: {report.text} "
                f"Discard Pile: {cards_text(report.discard_pile)}. Round {s.round} begins.",
                data=public,
            ),
            Event(
                "reported_instruction",
                f"Round Report {number} showed instruction {chosen}.",
                public=False,
                data={"report": number, "instruction": chosen},
            ),
        ]
        secret: list[Notice] = []
        if deal:
            for member in s.members:
                draw = ("deal", number, member.seat)
                dealt = self._deal(s, member, ROUND_DEAL, draws.rng(*draw))
                events.append(self._deal_event(member, dealt, "round"))
                secret.append(self.views.dealt_notice(s, member, dealt, "round", draw))
        context = {**self.views.common(s), "report": public}
        return Result(s, events, [Notice(Audience.everyone(), "round_report", context), *secret])

    def _freeze(self, state: LoatcgState) -> Result[LoatcgState]:
        """Rule 6, ruling TCG-21: the Final Report gives every instruction
        with its number, the salt and the exact text whose hash was published,
        every hand and score; the top score(s) win; open offers lapse (ruling
        TCG-16)."""
        s = evolve(state)
        instructions = instructions_of(s)
        s.frozen = True
        lapsed = [o.number for o in s.offers]
        s.offers = []
        s.final_scores = [(m.name, score(instructions, m.hand)) for m in s.members]
        top = max((p for _, p in s.final_scores), default=None)
        s.winners = [n for n, p in s.final_scores if p == top]
        final = final_json(s)
        events = [
            Event("freeze", f"Round {s.round} ends: the tournament freezes.", data={}),
            Event(
                "final_report",
                f"Final Report: {result_text(s)}",
                data={**final, "lapsed_offers": lapsed},
            ),
        ]
        context = {**self.views.common(s), "final": final, "lapsed_offers": lapsed}
        return Result(s, events, [Notice(Audience.everyone(), "final_report", context)])

    # -- members' actions -----------------------------------------------------

    def _join(
        self, state: LoatcgState, seat: int, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 1, rule 3, ruling TCG-5: a person who has never been a member
        draws 5 cards; one who has been a member before (the service says so
        in the second argument) draws nothing. The service gives, too, the
        names the newcomer goes by and, for a person who comes back, the
        names eir earlier memberships (held by bots) go by from now on, so
        that e keeps eir own name."""
        if member_at(state, seat) is not None:
            raise IllegalAction(
                "You are a Member already; dealing yourself in again draws nothing (rule 3)."
            )
        args = list(action.args) + [None] * (4 - len(action.args))
        name = str(args[0]) if args[0] else f"Member {seat}"
        former = bool(args[1])
        s = evolve(state)
        for earlier, renamed in args[3] or []:
            held = member_at(s, int(earlier))
            if held is not None:
                held.name = str(renamed)
        member = Member(seat, name, aliases=[str(a) for a in args[2] or []])
        s.members.append(member)
        count = 0 if former else JOIN_CARDS
        draw = ("join", seat)
        dealt = self._deal(s, member, count, draws.rng(*draw))
        text = (
            f"{name} deals emself in again and draws nothing (rule 3)."
            if former
            else f"{name} deals emself in and draws {JOIN_CARDS} cards."
        )
        events = [Event("join", text, data={"member": name, "former": former})]
        notices = [
            Notice(Audience.everyone(), "joined", {**self.views.common(s), "name": name,
                                                   "former": former, "drawn": count}),
        ]
        if not former:
            events.append(self._deal_event(member, dealt, "join"))
            notices.append(self.views.dealt_notice(s, member, dealt, "join", draw))
        return Result(s, events, notices, text)

    def _hand(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """The member's cards, secretly; not eir Hand Score (ruling TCG-22)."""
        context = {**self.views.common(state), "you": self.views.you(state, member)}
        notice = Notice(Audience.only(member.seat), "hand", context)
        return Result(state, [], [notice], "Your hand is below, for you alone.")

    def _score_asked(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Ruling TCG-22: a score on request would let a member probe the
        hidden instructions by discarding or trading and asking again, the
        clarification rule 11 forbids."""
        raise IllegalAction(SCORE_TOLD)

    def _discard(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        kind = _card_arg(action)
        _require(member, {kind: 1}, f"discard {_article(kind)}")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {kind: 1})
        text = f"{m.name} discards {_article(kind)}."
        return self._announce(s, m, action, "discard", text, {"card": kind}, [])

    def _draw(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        _require(member, {"apple": 1}, "discard an apple to draw 2 cards")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {"apple": 1})
        draw = ("draw", m.seat, m.paid_draws)
        dealt = self._deal(s, m, DRAW_CARDS, draws.rng(*draw))
        if s.edition >= 2:
            m.paid_draws += 1
        text = f"{m.name} discards an apple to draw {DRAW_CARDS} cards."
        secret = [self.views.dealt_notice(s, m, dealt, "draw", draw)]
        return self._announce(s, m, action, "draw", text, {}, secret,
                              [self._deal_event(m, dealt, "draw")])

    def _take(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 8, ruling TCG-8: two apples for one card of the named type out
        of the Discard Pile. Whether one is there is checked before the apples
        reach the Pile; if none is, nothing happens and the member is told
        secretly."""
        kind = _card_arg(action)
        _require(member, {"apple": TAKE_APPLES}, f"discard 2 apples to take {_article(kind)}")
        if state.discard_pile[kind] == 0:
            context = {**self.views.common(state), "you": self.views.you(state, member),
                       "card": kind}
            text = (
                f"There is no {kind} in the Discard Pile, so nothing happened: you keep your "
                "apples."
            )
            event = Event("take_failed", f"{member.name}: {text}", public=False,
                          data={"member": member.name, "card": kind})
            notice = Notice(Audience.only(member.seat), "take_failed", context)
            return Result(state, [event], [notice], text, failed=True)
        s = evolve(state)
        m = _same(s, member)
        s.discard_pile[kind] -= 1
        m.hand[kind] += 1
        _move(m.hand, s.discard_pile, {"apple": TAKE_APPLES})
        text = f"{m.name} discards 2 apples to take {_article(kind)} from the Discard Pile."
        return self._announce(s, m, action, "take", text, {"card": kind}, [])

    def _craft(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 8, rulings TCG-10 and TCG-11: the two inputs go to the Discard
        Pile and the refined card appears at once."""
        kind = _card_arg(action)
        if kind not in RECIPES:
            raise IllegalAction("Only steel, paper and fabric are crafted (rule 8).")
        a, b = RECIPES[kind]
        _require(member, {a: 1, b: 1}, f"craft {_article(kind)}")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {a: 1, b: 1})
        m.hand[kind] += 1
        text = f"{m.name} discards {_article(a)} and {_article(b)} to create {_article(kind)}."
        return self._announce(s, m, action, "craft", text, {"card": kind, "inputs": [a, b]}, [])

    def _buy(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 8: apples for the Dealor to reveal, secretly (rule 9), a
        random instruction with its number (ruling TCG-12), the number of the
        one a report published (ruling TCG-13), or instruction k (ruling
        TCG-14). A request that cannot be met is refused and nothing is
        paid."""
        instructions = instructions_of(state)
        how = action.verb
        arg = _int_arg(action) if how != "reveal" else 0
        if how == "number":
            if not state.reports:
                raise IllegalAction("No Round Report has published an instruction yet (rule 8).")
            if not 1 <= arg <= len(state.reports):
                raise IllegalAction(
                    f"There is no Round Report {arg}; the reports so far are 1 to "
                    f"{len(state.reports)}."
                )
        if how == "instruction" and not 1 <= arg <= state.rounds:
            raise IllegalAction(
                f"There is no instruction {arg}: the instructions are numbered 1 to "
                f"{state.rounds} (rule 8)."
            )
        cost = INSTRUCTION_APPLES if how == "instruction" else REVEAL_APPLES
        what = {
            "reveal": "a randomly-chosen Scoring Instruction",
            "number": f"the number of the instruction Round Report {arg} published",
            "instruction": f"Scoring Instruction {arg}",
        }[how]
        _require(member, {"apple": cost}, f"pay {cost} apples for {what}")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {"apple": cost})
        if how == "reveal":
            number = draws.rng("reveal", m.seat, m.random_reveals).randint(1, s.rounds)
            if s.edition >= 2:
                m.random_reveals += 1
        elif how == "number":
            number = s.reports[arg - 1].instruction
        else:
            number = arg
        if number not in m.known:
            m.known.append(number)
        revealed = {
            "how": how,
            "report": arg if how == "number" else None,
            "number": number,
            "text": instructions[number - 1].english(),
        }
        text = f"{m.name} discards {cost} apples for the Dealor to reveal {what} to em secretly."
        secret = [
            Notice(
                Audience.only(m.seat),
                "reveal",
                {**self.views.common(s), "you": self.views.you(s, m), "revealed": revealed,
                 "cost": cost},
            )
        ]
        event = Event("revealed", f"{m.name} was shown instruction {number}.", public=False,
                      data={"member": m.name, **revealed})
        return self._announce(s, m, action, "purchase", text, {"cost": cost, "what": what},
                              secret, [event])

    # -- trades (rule 10, ruling TCG-16) ------------------------------------

    def _offer(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """An offer to give cards for cards. House reading (ruling TCG-16): it
        may name who can accept it; a private offer naming nobody may be
        accepted by the members who saw it, a public one by any member. A
        private offer may name only members who see it: one who never saw it
        could not know it was made."""
        if action.scope is Scope.SECRET:
            raise IllegalAction("An offer is made publicly or privately (rule 10), not secretly.")
        if len(action.args) != 3:
            raise IllegalAction("Write an offer like 'offer 2 wool for 1 steel'.")
        give, want = _cards_arg(action.args[0]), _cards_arg(action.args[1])
        if not give and not want:
            raise IllegalAction("An offer must give or ask for at least one card.")
        names = action.args[2] or []
        takers = sorted({_seat_named(state, str(n)) for n in names})
        if member.seat in takers:
            raise IllegalAction("You cannot accept your own offer; name other members.")
        audience_ = self._audience(state, member, action)
        seen = sorted(audience_.seats - {member.seat}) if not audience_.public else []
        if not audience_.public:
            unseen = [t for t in takers if t not in audience_.seats]
            if unseen:
                who = names_text([seat_name(state, t) for t in unseen])
                raise IllegalAction(
                    f"{who} would not see this private offer, so could not accept it (rule "
                    f"10): copy {who} on the mail, or make the offer publicly."
                )
            if not takers:
                takers = seen
            if not takers:
                raise IllegalAction(
                    "Nobody but you saw this offer, so nobody could accept it: make it publicly "
                    "or copy the members you offer it to."
                )
        s = evolve(state)
        offer = Offer(
            number=s.next_offer,
            maker=member.seat,
            give=give,
            want=want,
            takers=takers,
            audience=sorted(audience_.seats) if not audience_.public else [],
        )
        s.next_offer += 1
        s.offers.append(offer)
        to = f" to {names_text([seat_name(s, t) for t in takers])}" if takers else ""
        text = (
            f"Offer {offer.number}: {member.name} gives {cards_text(give)} for "
            f"{cards_text(want)}{to}."
        )
        context = {
            **self.views.common(s),
            **self.views.how(s, audience_, member.seat),
            "offer": offer_json(s, offer),
        }
        return Result(
            s,
            [Event("offer", text, public=audience_.public, data=offer_json(s, offer))],
            [Notice(audience_, "offer", context)],
            text,
        )

    def _execute(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        """Rule 10, ruling TCG-16: executed publicly, or privately if the mail
        includes every party; both sides are checked now. The outcome goes to
        exactly the execution's audience; a failure names only the failing
        party or parties, each told secretly what e lacked. House reading: a
        failed execution leaves the offer open; only a trade that happens
        uses it up."""
        number = _int_arg(action)
        offer = next((o for o in state.offers if o.number == number), None)
        if offer is None:
            raise IllegalAction(f"There is no open offer {number}.")
        if offer.audience and member.seat not in offer.audience:
            # A private offer is for the members who saw it: to the others it
            # does not exist, and its parties stay private (definition F).
            raise IllegalAction(f"There is no open offer {number} that you saw.")
        if offer.maker == member.seat:
            raise IllegalAction(f"Offer {number} is your own; 'withdraw {number}' withdraws it.")
        if offer.takers and member.seat not in offer.takers:
            raise IllegalAction(
                f"Offer {number} is open only to "
                f"{names_text([seat_name(state, t) for t in offer.takers])}."
            )
        if action.scope is Scope.SECRET:
            raise IllegalAction(
                "A trade is executed publicly or privately (rule 10), not secretly."
            )
        audience_ = self._audience(state, member, action)
        maker = member_at(state, offer.maker)
        assert maker is not None
        if not audience_.public and maker.seat not in audience_.seats:
            raise IllegalAction(
                f"A private execution must include every party (rule 10): copy {maker.name}, or "
                "execute it publicly."
            )
        short = {
            maker.seat: _lacking(maker.hand, offer.give),
            member.seat: _lacking(member.hand, offer.want),
        }
        failing = [seat for seat, lack in short.items() if lack]
        s = evolve(state)
        m, mk = _same(s, member), _same(s, maker)
        offered = offer_json(state, offer)
        events: list[Event] = []
        notices: list[Notice] = []
        if not failing:
            s.offers = [o for o in s.offers if o.number != number]
            _move(mk.hand, m.hand, offer.give)
            _move(m.hand, mk.hand, offer.want)
            text = (
                f"Trade {number} done: {mk.name} gives {cards_text(offer.give)} to {m.name} for "
                f"{cards_text(offer.want)}."
            )
        else:
            names = [seat_name(s, f) for f in failing]
            text = (
                f"Trade {number} failed: {names_text(names)} did not meet the conditions for the "
                "trade."
            )
            for seat in failing:
                failed = m if seat == m.seat else mk
                lack = short[seat]
                notices.append(
                    Notice(
                        Audience.only(seat),
                        "trade_failed",
                        {**self.views.common(s), "you": self.views.you(s, failed),
                         "offer": offered, "lacking": cards_list(lack),
                         "lacking_text": cards_text(lack)},
                    )
                )
                events.append(Event("trade_lacking", f"{failed.name} lacked {cards_text(lack)}.",
                                    public=False, data={"member": failed.name, "lacking": lack}))
        context = {
            **self.views.common(s),
            **self.views.how(s, audience_, m.seat),
            "offer": offered,
            "name": m.name,
            "maker": mk.name,
            "done": not failing,
            "failed": [seat_name(s, f) for f in failing],
        }
        events.insert(0, Event("trade", text, public=audience_.public,
                               data={"offer": number, "done": not failing,
                                     "failed": context["failed"]}))
        notices.insert(0, Notice(audience_, "trade", context))
        return Result(s, events, notices, text, failed=bool(failing))

    def _withdraw(
        self, state: LoatcgState, member: Member, action: Action, draws: Draws
    ) -> Result[LoatcgState]:
        number = _int_arg(action)
        offer = next((o for o in state.offers if o.number == number), None)
        if offer is None:
            raise IllegalAction(f"There is no open offer {number}.")
        if offer.maker != member.seat:
            raise IllegalAction(f"Only its maker, {seat_name(state, offer.maker)}, can withdraw "
                                f"offer {number}.")
        s = evolve(state)
        s.offers = [o for o in s.offers if o.number != number]
        text = f"{member.name} withdraws offer {number}."
        return self._announce(s, _same(s, member), action, "withdrawn", text,
                              {"offer": offer_json(state, offer)}, [])


    # -- helpers ----------------------------------------------------------------

    def _audience(self, state: LoatcgState, member: Member, action: Action) -> Audience:
        """The audience of ``member``'s request (ruling TCG-15): everyone, or
        the members who saw the mail (the Dealor is never a member)."""
        audience = action.came_to(member.seat)
        if audience.public:
            return audience
        seats = {seat for seat in audience.seats if member_at(state, seat) is not None}
        return Audience.only(member.seat, *seats)

    def _announce(
        self,
        s: LoatcgState,
        member: Member,
        action: Action,
        template: str,
        text: str,
        extra: Mapping[str, JSON],
        secret: list[Notice],
        more_events: Sequence[Event] = (),
    ) -> Result[LoatcgState]:
        """The answer to a member's action, to the audience of the request,
        and then what is secret to em. A request made secretly, when a secret
        notice follows, needs no separate answer: that notice says what was
        done."""
        audience = self._audience(s, member, action)
        notices: list[Notice] = []
        if audience.public or audience.seats != {member.seat} or not secret:
            context = {
                **self.views.common(s),
                **self.views.how(s, audience, member.seat),
                "name": member.name,
                "text": text,
                **extra,
            }
            notices.append(Notice(audience, template, context))
        events = [
            Event(template, text, public=audience.public, data={"member": member.name, **extra}),
            *more_events,
        ]
        return Result(s, events, [*notices, *secret], text)

    def _deal(
        self, s: LoatcgState, member: Member, count: int, rng: Rng
    ) -> dict[str, int]:
        """Definition C, ruling TCG-4: each card a basic type at random, 1/5
        each (a choice from :data:`BASIC` in its order)."""
        dealt = dict.fromkeys(CARD_TYPES, 0)
        for _ in range(count):
            dealt[rng.choice(BASIC)] += 1
        for t, n in dealt.items():
            member.hand[t] += n
        return dealt

    def _deal_event(self, member: Member, dealt: Mapping[str, int], reason: str) -> Event:
        return Event(
            "deal",
            f"{member.name} is dealt {cards_text(dealt)} ({reason}).",
            public=False,
            data={"member": member.name, "seat": member.seat, "cards": dict(dealt),
                  "reason": reason},
        )

    def _score(self, s: LoatcgState, hand: Mapping[str, int]) -> int:
        return score(instructions_of(s), hand)


# -- module helpers -----------------------------------------------------------


def offer_json(s: LoatcgState, offer: Offer) -> dict[str, JSON]:
    """An offer of a trade as its events and mails show it."""
    return {
        "number": offer.number,
        "maker": seat_name(s, offer.maker),
        "give": cards_list(offer.give),
        "give_text": cards_text(offer.give),
        "want": cards_list(offer.want),
        "want_text": cards_text(offer.want),
        "takers": [seat_name(s, t) for t in offer.takers],
        "private": bool(offer.audience),
    }

def report_json(report: Report) -> dict[str, JSON]:
    """A report as published: never the instruction's number (rule 5)."""
    return {
        "number": report.number,
        "round_ended": report.number,
        "round_begun": report.number + 1,
        "instruction": report.text,
        "scores": [{"name": n, "score": p} for n, p in report.scores],
        "discard_pile": cards_list(report.discard_pile),
        "discard_pile_text": cards_text(report.discard_pile),
        "deal_follows": report.deal_follows,
    }

def final_json(s: LoatcgState) -> dict[str, JSON]:
    """What the Final Report gives (rule 6): every instruction with its number,
    the salt and the text hashed, every hand and score, the winners."""
    instructions = instructions_of(s)
    shown = {r.instruction: r.number for r in s.reports}
    return {
        "instructions": [
            {"number": i.number, "text": i.english(), "line": i.canonical(),
             "report": shown.get(i.number)}
            for i in instructions
        ],
        "salt": s.salt,
        "committed_text": commitment(s.instructions, s.salt),
        "digest": s.digest,
        "hands": [
            {"name": m.name, "hand": cards_list(m.hand), "hand_text": cards_text(m.hand),
             "score": score(instructions, m.hand)}
            for m in s.members
        ],
        "winners": list(s.winners),
    }

def result_text(s: LoatcgState) -> str:
    """Who won the frozen tournament, in words."""
    if not s.winners:
        return "the tournament ends with no members, so nobody wins."
    top = max(p for _, p in s.final_scores)
    points = f"{top} point{'' if abs(top) == 1 else 's'}"
    if len(s.winners) == 1:
        return f"{s.winners[0]} wins the tournament with {points}."
    return f"{names_text(s.winners)} win the tournament, tied with {points}."


def instructions_of(s: LoatcgState) -> tuple[Instruction, ...]:
    """The Scoring Instructions of the tournament ``s``."""
    return _parsed(s.instructions)


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[Instruction, ...]:
    """The instructions of a state's text, parsed once per text."""
    return parse_instructions(text)


def member_at(s: LoatcgState, seat: int | None) -> Member | None:
    """The Member in ``seat``, or None."""
    return next((m for m in s.members if m.seat == seat), None)


def _same(s: LoatcgState, member: Member) -> Member:
    """The member of the evolved state ``s`` in ``member``'s seat."""
    found = member_at(s, member.seat)
    assert found is not None
    return found


def seat_name(s: LoatcgState, seat: int) -> str:
    """The name of the Member in ``seat`` (``seat 4`` if none)."""
    member = member_at(s, seat)
    return member.name if member else f"seat {seat}"


def names_text(names: Sequence[str]) -> str:
    """Names as a sentence reads them: ``Ann, Ben and Cat``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _seat_named(s: LoatcgState, name: str) -> int:
    """The seat of the Member ``name`` names, as people name each other
    (``referee.games.names``)."""
    return find_seat(name, [Nameable(m.seat, m.name, tuple(m.aliases)) for m in s.members],
                     who="Member")


def _require(member: Member, need: Mapping[str, int], doing: str) -> None:
    """Ruling TCG-11: the member must hold every input now, or nothing changes."""
    lack = _lacking(member.hand, need)
    if lack:
        raise IllegalAction(
            f"You cannot {doing}: you hold {cards_text(member.hand)}, and need "
            f"{cards_text(need)} (rule 8)."
        )


def _card_arg(action: Action) -> str:
    kind = card_type(str(action.args[0])) if len(action.args) == 1 else None
    if kind is None:
        raise IllegalAction(f"Name one card. {CARDS_HELP}")
    return kind


def _int_arg(action: Action) -> int:
    if len(action.args) != 1 or not isinstance(action.args[0], int):
        raise IllegalAction("Give one number, like 'accept 3'.")
    return action.args[0]


def _cards_arg(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        raise IllegalAction(f"Name cards. {CARDS_HELP}")
    cards: dict[str, int] = {}
    for key, count in value.items():
        kind = card_type(str(key))
        if kind is None or not isinstance(count, int) or count < 0:
            raise IllegalAction(f"Name cards. {CARDS_HELP}")
        if count:
            cards[kind] = cards.get(kind, 0) + count
    return cards


