"""The Land of Agora trading-card tournament (LoAtTCG), as rule text 002
(``seeds/002_d308f02c644f3354.txt``) and rulings TCG-1 … TCG-21 of
``RULINGS.md`` describe it.

The referee is the Dealor (seat 0). Members deal themselves in at any time
and draw 5 basic cards; they discard, draw, take from the Discard Pile,
craft refined cards, pay apples for the Dealor to reveal Scoring
Instructions, and trade among themselves, publicly, privately or secretly
(definition F). Members owe nothing: the only obligations are the Dealor's
timetable, a Round Report ``report_days`` after each round begins (rule 5)
and the Freeze seven days after round N begins (rule 6), and, for a bot
member, a turn a day (``BOT_TURN``), fired by the same deadline sweep. The
Scoring Instructions are :mod:`referee.games.loatcg.instructions`.

Every answer goes to the audience of the request (``Action.came_to``,
TCG-15); what the Dealor deals or reveals goes to the member alone (rule 9,
definition C). House readings not settled by the text or the rulings are
marked ``House reading:`` beside the code that implements them.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.games.base import (
    JSON,
    Action,
    Audience,
    Event,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    ParseError,
    Pending,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
    evolve,
    polite,
)
from referee.games.loatcg.instructions import (
    BASIC,
    CARD_TYPES,
    EXAMPLE_INSTRUCTIONS,
    PLURALS,
    Instruction,
    InstructionError,
    card_type,
    commitment,
    digest,
    parse_instructions,
    score,
)

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
MAX_SEATS = 1_000_000  # the rules set no limit; members may deal themselves in at any time

#: Rule 8: the two cards each refined card is crafted from.
RECIPES: dict[str, tuple[str, str]] = {
    "steel": ("ore", "lumber"),
    "paper": ("ore", "wool"),
    "fabric": ("lumber", "wool"),
}

_NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
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
    deal_follows: bool  # three cards went to each member after it (rule 7, TCG-2)


@dataclass
class LoatcgState:
    """One tournament. Members are listed in the order they dealt themselves in."""

    instructions: str  # the canonical text (TCG-19)
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


# -- cards --------------------------------------------------------------------


def _article(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def cards_text(cards: Mapping[str, int]) -> str:
    """Cards as players read them: ``2 ore, 1 wool, 3 apples`` (or ``no cards``)."""
    parts = [
        f"{cards[t]} {t if cards[t] == 1 else PLURALS[t]}" for t in CARD_TYPES if cards.get(t, 0)
    ]
    return ", ".join(parts) or "no cards"


def _cards_list(cards: Mapping[str, int]) -> list[dict[str, JSON]]:
    return [{"type": t, "count": cards[t]} for t in CARD_TYPES if cards.get(t, 0)]


def _lacking(hand: Mapping[str, int], need: Mapping[str, int]) -> dict[str, int]:
    """What ``hand`` lacks of ``need``: type -> how many more are needed."""
    return {t: n - hand.get(t, 0) for t, n in need.items() if hand.get(t, 0) < n}


def _move(source: dict[str, int], target: dict[str, int], cards: Mapping[str, int]) -> None:
    for t, n in cards.items():
        source[t] -= n
        target[t] += n


def _parse_cards(text: str) -> dict[str, int]:
    """``2 wool, an ore and 1 apple`` -> {"wool": 2, "ore": 1, "apple": 1};
    ``nothing`` -> {}."""
    text = text.strip().lower()
    if text in ("nothing", "none", "no cards"):
        return {}
    cards: dict[str, int] = {}
    for item in re.split(r"\s*(?:,|\+|&|\band\b)\s*", text):
        words = item.split()
        if not words:
            continue
        count = 1
        if len(words) > 1:
            first = words[0]
            if first.isdecimal() and len(first) <= 3:
                count = int(first)
            elif first in _NUMBER_WORDS:
                count = _NUMBER_WORDS[first]
            elif first not in ("a", "an"):
                raise ParseError(f"I cannot read {item!r} as cards. {_CARDS_HELP}")
            words = words[1:]
        kind = card_type(" ".join(words).removesuffix(" cards").removesuffix(" card"))
        if kind is None or count < 1:
            raise ParseError(f"I cannot read {item!r} as cards. {_CARDS_HELP}")
        cards[kind] = cards.get(kind, 0) + count
    if not cards:
        raise ParseError(f"No cards are named. {_CARDS_HELP}")
    return cards


_CARDS_HELP = (
    "Write cards like '2 wool, 1 ore' or 'an apple'; the types are ore, wool, lumber, "
    "apples, diamonds, steel, paper and fabric."
)


_BUY_HELP = (
    "Write 'buy random' (3 apples: a random instruction, with its number), 'buy number "
    "report 2' (3 apples: the number of the instruction Round Report 2 published) or 'buy "
    "instruction 5' (7 apples: instruction 5), as rule 8 allows."
)



def _one_card(words: str) -> str:
    text = re.sub(r"^(?:a|an|one|1)\s+", "", words.strip().lower())
    text = re.sub(r"\s+(?:card)$", "", text)
    kind = card_type(text)
    if kind is None:
        raise ParseError(f"I cannot read {words.strip() or 'nothing'!r} as one card. {_CARDS_HELP}")
    return kind


def _number(word: str, what: str) -> int:
    word = word.strip().lstrip("#")
    if word.isdecimal() and len(word) <= 6:
        return int(word)
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    raise ParseError(f"I cannot read {word or 'nothing'!r} as {what}.")


# -- the game -----------------------------------------------------------------


class Loatcg(Game[LoatcgState]):
    """Rule text 002. Options: ``instructions`` (the Scoring Instructions in
    the language of :mod:`referee.games.loatcg.instructions`; default the rule text's
    EXAMPLE set) and ``report_days`` (4 to 7, default 7)."""

    kind = "loatcg"
    title = "Land of Agora tournament"
    state_type = LoatcgState
    demo_with_bots: ClassVar[bool] = True
    #: A member's public act (joining, a discard, a draw, crafting, an
    #: offer and its trade): lines in the next mail of a member who asked
    #: for ``mail turns``; the Round Reports come as mails of their own.
    routine_notices: ClassVar[frozenset[str]] = frozenset(
        {"joined", "discard", "draw", "craft", "offer", "withdrawn", "trade", "take"})
    takes_members_by_mail: ClassVar[bool] = True
    #: A transcript says only what the request's audience saw (TCG-15).
    secret_transcripts: ClassVar[bool] = False

    # -- setup ----------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"instructions": EXAMPLE_INSTRUCTIONS, "report_days": 7}
        for key, value in raw.items():
            if key == "instructions":
                try:
                    instructions = parse_instructions(value)
                except InstructionError as e:
                    raise OptionError(f"instructions: {e}") from None
                options["instructions"] = "".join(f"{i.canonical()}\n" for i in instructions)
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
                    "report_days"
                )
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        """Any number, none included: members deal themselves in later (rule 1)."""
        return 0, MAX_SEATS

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 5: the Dealor begins round 1 and the tournament publicly, with
        the hash and the number of instructions (rule 4, TCG-19). Seats given
        at creation deal themselves in at once."""
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
        salt = f"{rng.getrandbits(256):064x}"
        canonical = "".join(f"{i.canonical()}\n" for i in instructions)
        s = LoatcgState(
            instructions=canonical,
            salt=salt,
            digest=digest(canonical, salt),
            rounds=len(instructions),
            report_days=days,
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
            member = Member(info.position, info.name, bot=info.bot)
            s.members.append(member)
            dealt = self._deal(s, member, JOIN_CARDS, rng)
            events.append(self._deal_event(member, dealt, "join"))
            later.append(self._dealt_notice(s, member, dealt, "join"))
        if seats:
            events.append(
                Event(
                    "join",
                    f"{_names([m.name for m in s.members])} deal themselves in and draw "
                    f"{JOIN_CARDS} cards each.",
                    data={"members": [m.name for m in s.members]},
                )
            )
        notices = [Notice(Audience.everyone(), "opening", self._common(s)), *later]
        return Result(s, events, notices)

    # -- commands -------------------------------------------------------------

    def parse(self, line: str) -> Action | None:
        """Read one command of rule 8 or rule 10 (see :meth:`help`)."""
        original = polite(line.strip().rstrip(".!;"))
        text = " ".join(original.lower().split())
        if not text:
            return None
        words = text.split()
        verb, rest = words[0].rstrip(":"), " ".join(words[1:])
        if text in ("deal me in", "deal myself in", "deal in", "deal themselves in", "join"):
            return Action("join")
        if text in ("hand", "my hand", "show hand", "show my hand", "score", "my score"):
            return Action("hand")
        if re.fullmatch(
            r"(?:discard (?:an? |one |1 )?apples? )?(?:to )?draw(?: (?:2|two)(?: cards)?)?", text
        ):
            return Action("draw")
        m = re.fullmatch(
            r"(?:discard (?:2|two) apples (?:to )?)?(?:take|draw) (.+?)"
            r"(?: from the discard pile| from discard pile| from the pile)?",
            text,
        )
        if m and (verb in ("take", "discard") or m.group(1) not in ("2", "two", "2 cards")):
            return Action("take", (_one_card(m.group(1)),))
        if verb == "discard":
            if re.match(r"^(?:[2-9]|\d\d+|two|three|four|five|six|seven)\s", rest):
                raise ParseError("Discard one card at a time: write 'discard wool'.")
            return Action("discard", (_one_card(rest),))
        if verb in ("craft", "make", "create"):
            kind = _one_card(rest)
            if kind not in RECIPES:
                raise ParseError(
                    f"Only refined cards are crafted: steel (ore + lumber), paper (ore + wool) "
                    f"or fabric (lumber + wool); not {PLURALS[kind]}."
                )
            return Action("craft", (kind,))
        if verb in ("buy", "reveal"):
            if not rest:
                # A stray word must not spend 3 apples: a purchase says what it buys.
                raise ParseError(f"'{verb}' alone buys nothing, and no apples were spent. "
                                 f"{_BUY_HELP}")
            return self._parse_buy(rest)
        if verb == "offer":
            return _parse_offer(original.split(None, 1)[1] if " " in original else "")
        if verb in ("accept", "execute"):
            number = re.sub(r"^(?:offer|trade)\s+", "", rest)
            return Action("execute", (_number(number, "an offer number, like 'accept 3'"),))
        if verb == "withdraw":
            number = re.sub(r"^(?:offer|trade)\s+", "", rest)
            return Action("withdraw", (_number(number, "an offer number, like 'withdraw 3'"),))
        return None

    def _parse_buy(self, rest: str) -> Action:
        if re.fullmatch(r"(?:a )?random(?: instruction)?", rest):
            return Action("reveal")
        m = re.fullmatch(r"(?:the )?number(?: of)?(?: the instruction)?(?: in| of)?(?: round)?"
                         r" report (\S+)|number (\S+)", rest)
        if m:
            return Action("number", (_number(m.group(1) or m.group(2), "a report number"),))
        m = re.fullmatch(r"(?:instruction|number instruction) (\S+)|(\S+)", rest)
        if m:
            return Action("instruction", (_number(m.group(1) or m.group(2),
                                                  "an instruction number"),))
        raise ParseError(_BUY_HELP)

    def read_as(self, action: Action) -> str:
        """An offer as its maker would write it: ``offer 1 diamond for 1 wool
        to Bob``."""
        if action.verb == "offer" and len(action.args) == 3:
            give, want, names = action.args
            if isinstance(give, dict) and isinstance(want, dict):
                to = f" to {', '.join(str(n) for n in names)}" if names else ""
                return f"offer {cards_text(give)} for {cards_text(want)}{to}"
        return super().read_as(action)

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
        self, state: LoatcgState, seat: int, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        if seat == DEALOR:
            return self._dealor(state, action, rng)
        if state.frozen:
            # TCG-6: once frozen, no action, trade or join is accepted.
            raise IllegalAction(
                "The tournament has frozen and ended (rule 6); nothing more is accepted. The "
                "Final Report lists every hand and score."
            )
        if action.verb == "join":
            return self._join(state, seat, action, rng)
        member = _member(state, seat)
        if member is None:
            raise IllegalAction(
                "You are not a Member of this tournament; write 'deal me in' to the referee or "
                "the list to join (rule 1)."
            )
        handlers = {
            "hand": self._hand,
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
        result = handler(state, member, action, rng)
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

    def timeout_action(self, state: LoatcgState, seat: int, rng: random.Random) -> Action:
        """The Dealor's timetabled action, or a bot member's turn; human
        members owe nothing, so none is ever due for them."""
        if state.frozen:
            raise IllegalAction("Nothing is due from this seat.")
        if seat == DEALOR:
            return Action("report") if state.round < state.rounds else Action("freeze")
        member = _member(state, seat)
        if member is None or not member.bot:
            raise IllegalAction("Nothing is due from this seat.")
        return self.bot_action(state, seat, rng)

    def bot_action(self, state: LoatcgState, seat: int, rng: random.Random) -> Action:
        """A random legal action of a bot member: one of the kinds of action
        open to it now, chosen uniformly, with random arguments. Bots save
        apples to buy reveals: they discard and offer other cards while they
        hold any, draw or take only with apples to spare beyond a reveal's
        price, and one that can pay for a reveal does so half the time."""
        if seat == DEALOR:
            return self.timeout_action(state, seat, rng)
        member = _member(state, seat)
        if member is None or state.frozen:
            raise IllegalAction("Nothing is open to this seat.")
        hand = member.hand
        held = [t for t in CARD_TYPES if hand[t]]
        spare = [t for t in held if t != "apple"] or held
        apples = hand["apple"]
        options: list[Action] = [Action("hand")]
        if held:
            options.append(Action("discard", (rng.choice(spare),)))
        # Apples beyond a reveal's price may go on draws and takes.
        if apples > REVEAL_APPLES:
            options.append(Action("draw"))
        if apples >= TAKE_APPLES + REVEAL_APPLES:
            in_pile = [t for t in CARD_TYPES if state.discard_pile[t]]
            # Now and then a card the Pile lacks, as a member may ask for one.
            options.append(Action("take", (rng.choice(in_pile or list(CARD_TYPES)),)))
        craftable = [r for r, need in RECIPES.items() if all(hand[t] for t in need)]
        if craftable:
            options.append(Action("craft", (rng.choice(craftable),)))
        if apples >= REVEAL_APPLES:
            options.append(Action("reveal"))
            if state.reports:
                options.append(Action("number", (rng.randint(1, len(state.reports)),)))
        if apples >= INSTRUCTION_APPLES:
            options.append(Action("instruction", (rng.randint(1, state.rounds),)))
        purchases = [o for o in options if o.verb in ("reveal", "number", "instruction")]
        if purchases and rng.random() < 0.5:
            return rng.choice(purchases)
        open_to_me = [
            o for o in state.offers if o.maker != seat and (not o.takers or seat in o.takers)
        ]
        if open_to_me:
            options.append(Action("execute", (rng.choice(open_to_me).number,)))
        mine = [o for o in state.offers if o.maker == seat]
        if mine:
            options.append(Action("withdraw", (rng.choice(mine).number,)))
        give: dict[str, int] = {}
        for _ in range(rng.randint(1, 2) if held else 0):
            kind = rng.choice(spare)
            give[kind] = min(give.get(kind, 0) + 1, hand[kind])
        want = {rng.choice(CARD_TYPES): rng.randint(1, 2)}
        options.append(Action("offer", (give, want, [])))
        return rng.choice(options)

    def replace_with_bot(self, state: LoatcgState, seat: int) -> Result[LoatcgState]:
        """A member leaves and a bot keeps eir hand. There is no leave rule
        (TCG-5), so the bot stays a Member and can still win."""
        member = _member(state, seat)
        if member is None:
            raise IllegalAction("That seat holds no Member.")
        s = evolve(state)
        s_member = _member(s, seat)
        assert s_member is not None
        s_member.bot = True
        text = f"{member.name} has left; a bot holds eir hand and stays a Member."
        context = {**self._common(s), "name": member.name}
        return Result(
            s,
            [Event("resign", text, data={"member": member.name})],
            [Notice(Audience.everyone(), "resign", context)],
            text,
        )

    def is_over(self, state: LoatcgState) -> bool:
        return state.frozen

    # -- what people see ------------------------------------------------------

    def view(self, state: LoatcgState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no hand, no deal and no instruction a report
        has not shown (and no report's instruction number) until the Freeze.
        A member's view adds eir hand, score, the instructions revealed to em
        and the offers e saw."""
        view = self._common(state)
        view["reports"] = [_report_json(r) for r in state.reports]
        view["offers"] = [self._offer_json(state, o) for o in state.offers if not o.audience]
        if state.frozen:
            view["final"] = self._final_json(state)
        member = _member(state, seat) if seat is not None else None
        if member is not None:
            view["you"] = self._you(state, member)
            view["offers"] = [
                self._offer_json(state, o)
                for o in state.offers
                if not o.audience or member.seat in o.audience
            ]
        return view

    def help(self, state: LoatcgState, seat: int | None) -> str:
        if state.frozen:
            return (
                "The tournament has frozen and ended (rule 6): nothing more is accepted. The "
                "Final Report lists every instruction, hand and score."
            )
        member = _member(state, seat) if seat is not None else None
        if member is None:
            return (
                "Write 'deal me in' to the referee or the list to become a Member (rule 1); a "
                f"person who has never been a Member draws {JOIN_CARDS} cards (rule 3)."
            )
        hand = member.hand
        lines = [
            f"You hold {cards_text(hand)}; your Hand Score is {self._score(state, hand)}.",
            "Write one action a line, publicly, privately or secretly (rule 8, definition F):",
            "  discard wool              discard one card",
        ]
        a = hand["apple"]

        def can(n: int) -> str:
            return "" if a >= n else f"  (needs {n} apples; you hold {a})"

        lines += [
            f"  draw                      discard an apple to draw 2 cards{can(1)}",
            f"  take steel                discard 2 apples to take a steel from the Discard "
            f"Pile{can(TAKE_APPLES)}",
            "  craft steel               ore + lumber -> steel; paper: ore + wool; fabric: "
            "lumber + wool",
            f"  buy random                3 apples: a random instruction, with its number"
            f"{can(REVEAL_APPLES)}",
        ]
        if state.reports:
            lines.append(
                f"  buy number report 1       3 apples: the number of the instruction Round "
                f"Report 1 published (reports so far: {len(state.reports)}){can(NUMBER_APPLES)}"
            )
        lines += [
            f"  buy instruction 5         7 apples: instruction 5 (1 to {state.rounds})"
            f"{can(INSTRUCTION_APPLES)}",
            "  hand                      your hand and score, in a secret reply",
            "Trades (rule 10), publicly or privately:",
            "  offer 2 wool for 1 steel [to Bob]     the offer gets a number",
            "  accept 3                  execute offer 3; privately only if every party is in "
            "the mail",
            "  withdraw 3                withdraw your own offer 3",
        ]
        open_to_you = [
            o for o in state.offers
            if o.maker != member.seat and (not o.takers or member.seat in o.takers)
            and (not o.audience or member.seat in o.audience)
        ]
        if open_to_you:
            lines.append("Open offers you may accept: " + "; ".join(
                f"#{o.number} {_name(state, o.maker)} gives {cards_text(o.give)} for "
                f"{cards_text(o.want)}" for o in open_to_you
            ) + ".")
        return "\n".join(lines)

    def summary(self, state: LoatcgState) -> dict[str, JSON]:
        """Public facts only. Scores are public only as a report published
        them (TCG-20): ``scores`` are those of the latest report (the Final
        Report once frozen), and ``scores_as_of`` names it; the current
        scores are secret to each member."""
        if state.frozen:
            scores, as_of = state.final_scores, "the Final Report"
        elif state.reports:
            scores, as_of = state.reports[-1].scores, f"Round Report {len(state.reports)}"
        else:
            scores, as_of = [], None
        return {
            "round": state.round,
            "rounds": state.rounds,
            "members": [m.name for m in state.members],
            "scores": {name: points for name, points in scores},
            "scores_as_of": as_of,
            "digest": state.digest,
            "to_move": None,
            "over": state.frozen,
            "result": self._result_text(state) if state.frozen else None,
        }

    # -- the Dealor -----------------------------------------------------------

    def _dealor(
        self, state: LoatcgState, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        if action.verb == "join":
            raise IllegalAction("The Dealor cannot be a Member (rule 1).")
        if state.frozen:
            raise IllegalAction("The tournament has ended; the Dealor owes nothing more.")
        if action.verb == "report" and state.round < state.rounds:
            return self._round_report(state, rng)
        if action.verb == "freeze" and state.round == state.rounds:
            return self._freeze(state)
        due = "report" if state.round < state.rounds else "freeze"
        raise IllegalAction(f"The Dealor's next act is '{due}', not {action.verb!r}.")

    def _round_report(self, state: LoatcgState, rng: random.Random) -> Result[LoatcgState]:
        """Rule 5, TCG-20: each member's score as of now, one instruction not
        yet reported, chosen at random and shown without its number, and the
        Discard Pile; then the next round begins. Rule 7, TCG-2: after every
        report but the first, three cards to each member, secretly."""
        s = evolve(state)
        instructions = _instructions(s)
        reported = {r.instruction for r in s.reports}
        chosen = rng.choice([i.number for i in instructions if i.number not in reported])
        number = len(s.reports) + 1
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
        public = _report_json(report)
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
                dealt = self._deal(s, member, ROUND_DEAL, rng)
                events.append(self._deal_event(member, dealt, "round"))
                secret.append(self._dealt_notice(s, member, dealt, "round"))
        context = {**self._common(s), "report": public}
        return Result(s, events, [Notice(Audience.everyone(), "round_report", context), *secret])

    def _freeze(self, state: LoatcgState) -> Result[LoatcgState]:
        """Rule 6, TCG-21: the Final Report gives every instruction with its
        number, the salt and the exact text whose hash was published, every
        hand and score; the top score(s) win; open offers lapse (TCG-16)."""
        s = evolve(state)
        instructions = _instructions(s)
        s.frozen = True
        lapsed = [o.number for o in s.offers]
        s.offers = []
        s.final_scores = [(m.name, score(instructions, m.hand)) for m in s.members]
        top = max((p for _, p in s.final_scores), default=None)
        s.winners = [n for n, p in s.final_scores if p == top]
        final = self._final_json(s)
        events = [
            Event("freeze", f"Round {s.round} ends: the tournament freezes.", data={}),
            Event(
                "final_report",
                f"Final Report: {self._result_text(s)}",
                data={**final, "lapsed_offers": lapsed},
            ),
        ]
        context = {**self._common(s), "final": final, "lapsed_offers": lapsed}
        return Result(s, events, [Notice(Audience.everyone(), "final_report", context)])

    # -- members' actions -----------------------------------------------------

    def _join(
        self, state: LoatcgState, seat: int, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 1, rule 3, TCG-5: a person who has never been a member draws
        5 cards; one who has been a member before (the service says so in the
        second argument) draws nothing."""
        if _member(state, seat) is not None:
            raise IllegalAction(
                "You are a Member already; dealing yourself in again draws nothing (rule 3)."
            )
        name = str(action.args[0]) if action.args else f"Member {seat}"
        former = bool(action.args[1]) if len(action.args) > 1 else False
        s = evolve(state)
        member = Member(seat, name)
        s.members.append(member)
        count = 0 if former else JOIN_CARDS
        dealt = self._deal(s, member, count, rng)
        text = (
            f"{name} deals emself in again and draws nothing (rule 3)."
            if former
            else f"{name} deals emself in and draws {JOIN_CARDS} cards."
        )
        events = [Event("join", text, data={"member": name, "former": former})]
        notices = [
            Notice(Audience.everyone(), "joined", {**self._common(s), "name": name,
                                                   "former": former, "drawn": count}),
        ]
        if not former:
            events.append(self._deal_event(member, dealt, "join"))
            notices.append(self._dealt_notice(s, member, dealt, "join"))
        return Result(s, events, notices, text)

    def _hand(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        context = {**self._common(state), "you": self._you(state, member)}
        notice = Notice(Audience.only(member.seat), "hand", context)
        return Result(state, [], [notice], "Your hand and score follow in a secret mail.")

    def _discard(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        kind = _card_arg(action)
        _require(member, {kind: 1}, f"discard {_article(kind)}")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {kind: 1})
        text = f"{m.name} discards {_article(kind)}."
        return self._announce(s, m, action, "discard", text, {"card": kind}, [])

    def _draw(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        _require(member, {"apple": 1}, "discard an apple to draw 2 cards")
        s = evolve(state)
        m = _same(s, member)
        _move(m.hand, s.discard_pile, {"apple": 1})
        dealt = self._deal(s, m, DRAW_CARDS, rng)
        text = f"{m.name} discards an apple to draw {DRAW_CARDS} cards."
        secret = [self._dealt_notice(s, m, dealt, "draw")]
        return self._announce(s, m, action, "draw", text, {}, secret,
                              [self._deal_event(m, dealt, "draw")])

    def _take(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 8, TCG-8: two apples for one card of the named type out of
        the Discard Pile. Whether one is there is checked before the apples
        reach the Pile; if none is, nothing happens and the member is told
        secretly."""
        kind = _card_arg(action)
        _require(member, {"apple": TAKE_APPLES}, f"discard 2 apples to take {_article(kind)}")
        if state.discard_pile[kind] == 0:
            context = {**self._common(state), "you": self._you(state, member), "card": kind}
            text = (
                f"There is no {kind} in the Discard Pile, so nothing happened: you keep your "
                "apples."
            )
            event = Event("take_failed", f"{member.name}: {text}", public=False,
                          data={"member": member.name, "card": kind})
            notice = Notice(Audience.only(member.seat), "take_failed", context)
            return Result(state, [event], [notice], text)
        s = evolve(state)
        m = _same(s, member)
        s.discard_pile[kind] -= 1
        m.hand[kind] += 1
        _move(m.hand, s.discard_pile, {"apple": TAKE_APPLES})
        text = f"{m.name} discards 2 apples to take {_article(kind)} from the Discard Pile."
        return self._announce(s, m, action, "take", text, {"card": kind}, [])

    def _craft(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 8, TCG-10, TCG-11: the two inputs go to the Discard Pile and
        the refined card appears at once."""
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
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 8: apples for the Dealor to reveal, secretly (rule 9), a
        random instruction with its number (TCG-12), the number of the one a
        report published (TCG-13), or instruction k (TCG-14). A request that
        cannot be met is refused and nothing is paid."""
        instructions = _instructions(state)
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
            number = rng.randint(1, s.rounds)
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
                {**self._common(s), "you": self._you(s, m), "revealed": revealed,
                 "cost": cost},
            )
        ]
        event = Event("revealed", f"{m.name} was shown instruction {number}.", public=False,
                      data={"member": m.name, **revealed})
        return self._announce(s, m, action, "purchase", text, {"cost": cost, "what": what},
                              secret, [event])

    # -- trades (rule 10, TCG-16) -------------------------------------------

    def _offer(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """An offer to give cards for cards. House reading (TCG-16): it may
        name who can accept it; a private offer naming nobody may be accepted
        by the members who saw it, a public one by any member. A private
        offer may name only members who see it: one who never saw it could
        not know it was made."""
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
                who = _names([_name(state, t) for t in unseen])
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
        to = f" to {_names([_name(s, t) for t in takers])}" if takers else ""
        text = (
            f"Offer {offer.number}: {member.name} gives {cards_text(give)} for "
            f"{cards_text(want)}{to}."
        )
        context = {
            **self._common(s),
            **_how(s, audience_, member.seat),
            "offer": self._offer_json(s, offer),
        }
        return Result(
            s,
            [Event("offer", text, public=audience_.public, data=self._offer_json(s, offer))],
            [Notice(audience_, "offer", context)],
            text,
        )

    def _execute(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        """Rule 10, TCG-16: executed publicly, or privately if the mail
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
                f"Offer {number} is open only to {_names([_name(state, t) for t in offer.takers])}."
            )
        if action.scope is Scope.SECRET:
            raise IllegalAction(
                "A trade is executed publicly or privately (rule 10), not secretly."
            )
        audience_ = self._audience(state, member, action)
        maker = _member(state, offer.maker)
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
        offer_json = self._offer_json(state, offer)
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
            names = [_name(s, f) for f in failing]
            text = (
                f"Trade {number} failed: {_names(names)} did not meet the conditions for the "
                "trade."
            )
            for seat in failing:
                failed = m if seat == m.seat else mk
                lack = short[seat]
                notices.append(
                    Notice(
                        Audience.only(seat),
                        "trade_failed",
                        {**self._common(s), "you": self._you(s, failed), "offer": offer_json,
                         "lacking": _cards_list(lack), "lacking_text": cards_text(lack)},
                    )
                )
                events.append(Event("trade_lacking", f"{failed.name} lacked {cards_text(lack)}.",
                                    public=False, data={"member": failed.name, "lacking": lack}))
        context = {
            **self._common(s),
            **_how(s, audience_, m.seat),
            "offer": offer_json,
            "name": m.name,
            "maker": mk.name,
            "done": not failing,
            "failed": [_name(s, f) for f in failing],
        }
        events.insert(0, Event("trade", text, public=audience_.public,
                               data={"offer": number, "done": not failing,
                                     "failed": context["failed"]}))
        notices.insert(0, Notice(audience_, "trade", context))
        return Result(s, events, notices, text)

    def _withdraw(
        self, state: LoatcgState, member: Member, action: Action, rng: random.Random
    ) -> Result[LoatcgState]:
        number = _int_arg(action)
        offer = next((o for o in state.offers if o.number == number), None)
        if offer is None:
            raise IllegalAction(f"There is no open offer {number}.")
        if offer.maker != member.seat:
            raise IllegalAction(f"Only its maker, {_name(state, offer.maker)}, can withdraw offer "
                                f"{number}.")
        s = evolve(state)
        s.offers = [o for o in s.offers if o.number != number]
        text = f"{member.name} withdraws offer {number}."
        return self._announce(s, _same(s, member), action, "withdrawn", text,
                              {"offer": self._offer_json(state, offer)}, [])

    # -- helpers ----------------------------------------------------------------

    def _audience(self, state: LoatcgState, member: Member, action: Action) -> Audience:
        """The audience of ``member``'s request (TCG-15): everyone, or the
        members who saw the mail (the Dealor is never a member)."""
        audience = action.came_to(member.seat)
        if audience.public:
            return audience
        seats = {seat for seat in audience.seats if _member(state, seat) is not None}
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
                **self._common(s),
                **_how(s, audience, member.seat),
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
        self, s: LoatcgState, member: Member, count: int, rng: random.Random
    ) -> dict[str, int]:
        """Definition C, TCG-4: each card a basic type at random, 1/5 each."""
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

    def _dealt_notice(
        self, s: LoatcgState, member: Member, dealt: Mapping[str, int], reason: str
    ) -> Notice:
        """Definition C, rule 7, TCG-3: a deal is secret and carries the
        member's whole hand and score."""
        context = {
            **self._common(s),
            "you": self._you(s, member),
            "reason": reason,
            "dealt": _cards_list(dealt),
            "dealt_text": cards_text(dealt),
            "dealt_count": sum(dealt.values()),
        }
        return Notice(Audience.only(member.seat), "dealt", context)

    def _score(self, s: LoatcgState, hand: Mapping[str, int]) -> int:
        return score(_instructions(s), hand)

    def _common(self, s: LoatcgState) -> dict[str, JSON]:
        """The public facts every notice and view carries: no hand, no score
        not yet reported, no instruction not yet revealed."""
        if s.frozen:
            next_event = None
        elif s.round < s.rounds:
            next_event = f"Round Report {s.round}"
        else:
            next_event = "the Freeze and the Final Report"
        return {
            "round": s.round,
            "rounds": s.rounds,
            "report_days": s.report_days,
            "freeze_days": FREEZE_DAYS,
            "digest": s.digest,
            "members": [m.name for m in s.members],
            "reports_published": len(s.reports),
            "next_event": next_event,
            "frozen": s.frozen,
            "winners": list(s.winners),
        }

    def _you(self, s: LoatcgState, member: Member) -> dict[str, JSON]:
        """What only ``member`` may see: eir hand, score and the instructions
        the Dealor revealed to em."""
        instructions = _instructions(s)
        return {
            "name": member.name,
            "seat": member.seat,
            "hand": _cards_list(member.hand),
            "hand_text": cards_text(member.hand),
            "cards": sum(member.hand.values()),
            "score": score(instructions, member.hand),
            "apples": member.hand["apple"],
            "known": [
                {"number": n, "text": instructions[n - 1].english()} for n in sorted(member.known)
            ],
        }

    def _offer_json(self, s: LoatcgState, offer: Offer) -> dict[str, JSON]:
        return {
            "number": offer.number,
            "maker": _name(s, offer.maker),
            "give": _cards_list(offer.give),
            "give_text": cards_text(offer.give),
            "want": _cards_list(offer.want),
            "want_text": cards_text(offer.want),
            "takers": [_name(s, t) for t in offer.takers],
            "private": bool(offer.audience),
        }

    def _final_json(self, s: LoatcgState) -> dict[str, JSON]:
        instructions = _instructions(s)
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
                {"name": m.name, "hand": _cards_list(m.hand), "hand_text": cards_text(m.hand),
                 "score": score(instructions, m.hand)}
                for m in s.members
            ],
            "winners": list(s.winners),
        }

    def _result_text(self, s: LoatcgState) -> str:
        if not s.winners:
            return "the tournament ends with no members, so nobody wins."
        top = max(p for _, p in s.final_scores)
        if len(s.winners) == 1:
            return f"{s.winners[0]} wins the tournament with {top} points."
        return f"{_names(s.winners)} win the tournament, tied with {top} points."


# -- module helpers -----------------------------------------------------------


def _instructions(s: LoatcgState) -> tuple[Instruction, ...]:
    return _parsed(s.instructions)


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[Instruction, ...]:
    """The instructions of a state's text, parsed once per text."""
    return parse_instructions(text)


def _member(s: LoatcgState, seat: int | None) -> Member | None:
    return next((m for m in s.members if m.seat == seat), None)


def _same(s: LoatcgState, member: Member) -> Member:
    """The member of the evolved state ``s`` in ``member``'s seat."""
    found = _member(s, member.seat)
    assert found is not None
    return found


def _name(s: LoatcgState, seat: int) -> str:
    member = _member(s, seat)
    return member.name if member else f"seat {seat}"


def _names(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _how(s: LoatcgState, audience: Audience, seat: int) -> dict[str, JSON]:
    """How a request came, for the answer's wording: its scope (definition
    F) and the members who saw it."""
    if audience.public:
        return {"scope": "public", "audience_names": []}
    scope = "secret" if audience.seats == {seat} else "private"
    return {"scope": scope, "audience_names": [_name(s, x) for x in sorted(audience.seats)]}


def _seat_named(s: LoatcgState, name: str) -> int:
    wanted = name.strip().lower()
    found = [m.seat for m in s.members if m.name.strip().lower() == wanted]
    if len(found) != 1:
        members = ", ".join(m.name for m in s.members) or "none yet"
        raise IllegalAction(f"No single Member is named {name.strip()!r}; the Members are "
                            f"{members}.")
    return found[0]


def _require(member: Member, need: Mapping[str, int], doing: str) -> None:
    """TCG-11: the member must hold every input now, or nothing changes."""
    lack = _lacking(member.hand, need)
    if lack:
        raise IllegalAction(
            f"You cannot {doing}: you hold {cards_text(member.hand)}, and need "
            f"{cards_text(need)} (rule 8)."
        )


def _card_arg(action: Action) -> str:
    kind = card_type(str(action.args[0])) if len(action.args) == 1 else None
    if kind is None:
        raise IllegalAction(f"Name one card. {_CARDS_HELP}")
    return kind


def _int_arg(action: Action) -> int:
    if len(action.args) != 1 or not isinstance(action.args[0], int):
        raise IllegalAction("Give one number, like 'accept 3'.")
    return action.args[0]


def _cards_arg(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        raise IllegalAction(f"Name cards. {_CARDS_HELP}")
    cards: dict[str, int] = {}
    for key, count in value.items():
        kind = card_type(str(key))
        if kind is None or not isinstance(count, int) or count < 0:
            raise IllegalAction(f"Name cards. {_CARDS_HELP}")
        if count:
            cards[kind] = cards.get(kind, 0) + count
    return cards


def _parse_offer(rest: str) -> Action:
    """``2 wool, an ore for 1 steel to Bob, Cat`` -> give, want, names."""
    m = re.fullmatch(r"(.+?)\s+for\s+(.+?)(?:\s+to\s+(.+))?", rest.strip(), re.IGNORECASE)
    if m is None:
        raise ParseError(
            "Write an offer like 'offer 2 wool, 1 ore for 1 steel', optionally "
            "'to Bob, Cat' at the end."
        )
    names = [n.strip() for n in re.split(r",|\band\b", m.group(3) or "") if n.strip()]
    return Action("offer", (_parse_cards(m.group(1)), _parse_cards(m.group(2)), names))


def _report_json(report: Report) -> dict[str, JSON]:
    """A report as published: never the instruction's number (rule 5)."""
    return {
        "number": report.number,
        "round_ended": report.number,
        "round_begun": report.number + 1,
        "instruction": report.text,
        "scores": [{"name": n, "score": p} for n, p in report.scores],
        "discard_pile": _cards_list(report.discard_pile),
        "discard_pile_text": cards_text(report.discard_pile),
        "deal_follows": report.deal_follows,
    }
