"""The command grammar of Miser: a line of a player's mail read as an
action (:meth:`MiserWords.parse`), and the help each seat gets, for rule
text 004 (Miser) and its rulings (docs/rulings.md).

Parsing is stateless, so a partner or a victim is kept as written (a name, a
part of one, the part of an address before the @, or a seat number) and
resolved against the seats by :func:`resolve_name` (``referee.games.names``,
which every game shares) when the action is applied. A contract or an attack
with a word that is skipped unless a player bears it as a name ("will",
"penny"), or with two names in a row that may be one ("ann lee"), is kept as
its text and read when it is applied, once the players' names are known
(:func:`read_contract`, :func:`read_attack`): a name wins over a word to skip.
Every action's text form (its verb and arguments joined by spaces) reads back
as the same action.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import ClassVar

from referee.games.base import (
    JSON,
    Action,
    AmbiguousAction,
    DeadlineMove,
    ParseError,
    Result,
    slot_safe,
)
from referee.games.cards import Card
from referee.games.miser.rules import (
    PASS_COST,
    MiserRules,
    MiserState,
    card_text,
    hand_text,
    is_bidder,
    may_add,
    now_text,
    offer_audience,
    owed_step,
    passes_text,
    pennies_text,
    result_text,
    sort_hand,
)
from referee.games.names import Nameable, find_seat, name_words
from referee.games.names import words as words_of

CARD_HELP = "Write a card as QS, Q♠, 10D, TD or queen of spades."
CONTRACT_HELP = (
    "Write, for example, 'contract with bob against carol 2 1': Bob is your partner, "
    "Carol the victim, you wager 2 and Bob 1."
)
ATTACK_HELP = "Write, for example, 'attack carol 2' to attack Carol with a wager of 2."
BID_HELP = (
    "A bid names one card of your hand, put face up, and the pennies you bid: "
    "for example 'bid 7H 3'. To add to a bid you have made, write 'raise 2'."
)

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip

#: Words that carry no meaning of their own in a contract or an attack.
_FILLER_WORDS = (
    "a an the and of for to at in is are be will would i'll we wager wagers wagering "
    "bet bets betting stake stakes put puts pay pays penny pennies p each both player "
    "seat number no. # please pls contract offer propose attack bid make let's lets us "
    "="
)
_FILLER = frozenset(_FILLER_WORDS.split())
#: The words to skip that could be someone's name: a line with one of them
#: is read once the players are known.
_NAMEABLE = frozenset(w for w in _FILLER if w.isalpha())
#: Words after which a number is a seat ("seat 3", "player 3").
_SEAT_WORDS = frozenset(("seat", "#", "no.", "number", "player"))
_PARTNER_MARKERS = frozenset(("with", "partner", "partnering", "alongside"))
_VICTIM_MARKERS = frozenset(("against", "vs", "vs.", "versus", "victim", "target", "on", "onto"))
_MINE_MARKERS = frozenset(("i", "me", "my", "mine", "myself"))
_YOURS_MARKERS = frozenset(("you", "your", "yours", "you'll", "partner's", "he", "she", "they"))
_ROLE_MARKERS = _PARTNER_MARKERS | _VICTIM_MARKERS | _MINE_MARKERS | _YOURS_MARKERS

_ACCEPT = frozenset(
    ("accept", "accepted", "i accept", "accept contract", "accept the contract",
     "accept offer", "accept the offer", "agree", "agreed", "i agree")
)  # fmt: skip
_DECLINE = frozenset(
    ("decline", "declined", "i decline", "decline contract", "decline the contract",
     "decline offer", "decline the offer", "refuse", "i refuse", "reject")
)  # fmt: skip
_PASS = frozenset(("pass", "i pass", "pass turn", "pass my turn"))
_FLIP = frozenset(("flip", "i flip", "flip up", "flip them", "flip them up", "turn up", "reveal"))
_DONE = frozenset(
    ("done", "i'm done", "im done", "i am done", "done bidding", "finished", "i'm finished",
     "finished bidding", "no more", "stand", "stop")
)  # fmt: skip
_HAND = frozenset(("hand", "my hand", "show hand", "show my hand", "cards", "my cards"))
_DOWN_VERBS = frozenset(("down", "play", "lay", "put", "place", "card", "add"))
#: Words of a card play that name no card ("put the QS face down, please").
_DOWN_SKIP = frozenset(("down", "face", "the", "and", "card", "cards", "my", "please", "pls"))
#: Words that name a card or a part of one: a rank, a suit, "of", a joker.
_CARD_WORDS = frozenset(
    ("ace", "king", "queen", "jack", "knave", "ten", "nine", "eight", "seven", "six", "five",
     "four", "three", "two", "deuce", "a", "k", "q", "j", "t", "of", "joker", "jokers",
     "spade", "spades", "heart", "hearts", "diamond", "diamonds", "club", "clubs",
     "s", "h", "d", "c")
)  # fmt: skip
#: A rank and a suit, even one that is no card ("11h", "1♠").
_CARD_SHAPE = re.compile(r"(?:\d{1,2}|[akqjt])?[shdc♠♤♥♡♦♢♣♧]|\d{1,2}")
_NUMBER = re.compile(r"\d{1,3}")
_PAIR = re.compile(r"(\d{1,3})[/-](\d{1,3})")


def parse_line(line: str) -> Action | None:
    """One command line -> an :class:`Action`, or None for a line that is no
    Miser command. Raises :class:`ParseError` for a command that cannot be read.

    :raises ParseError: the line starts with a Miser verb but cannot be read.
    """
    text = " ".join(line.replace("\ufe0f", "").strip().lower().split()).rstrip(".!;")
    if not text:
        return None
    verb = text.split()[0].rstrip(":,")
    rest = text[len(text.split()[0]) :].strip()
    if text in _PASS:
        return Action("pass")
    if text in _HAND:
        return Action("hand")
    if text in _ACCEPT:
        return Action("accept")
    if text in _DECLINE:
        return Action("decline")
    if text in _FLIP:
        return Action("flip")
    if text in _DONE:
        return Action("done")
    if verb in ("contract", "offer", "propose"):
        return _read_now_or_keep("contract", rest, read_contract)
    if verb == "attack":
        return _read_now_or_keep("attack", rest, read_attack)
    if verb == "bid":
        return _bid(rest)
    if verb in ("raise", "increase"):
        return _raise(rest)
    if verb == "down" or (verb in _DOWN_VERBS and _names_cards(rest)):
        return _down(rest)
    return None


def _names_cards(text: str) -> bool:
    """Whether ``text`` names cards and nothing else ("QS", "the queen of
    spades", even "11h" or "the joker"), so that "play QS" is a card play
    while "play nice" or "put it on my tab" is talk, no command."""
    words = [w for w in _words(text) if w not in _DOWN_SKIP]
    return bool(words) and all(
        w in _CARD_WORDS or _CARD_SHAPE.fullmatch(w) or Card.parse(w) for w in words
    )


def _words(text: str) -> list[str]:
    """Words with their punctuation trimmed; "2/1" and "2-1" become two numbers."""
    out: list[str] = []
    for raw in text.replace(",", " ").replace(";", " ").split():
        word = raw.strip(":.!?()\"'")
        if not word:
            continue
        pair = _PAIR.fullmatch(word)
        out.extend(pair.groups() if pair else [word])
    return out


def _number(word: str) -> int | None:
    if _NUMBER.fullmatch(word):
        return int(word)
    return _NUMBER_WORDS.get(word)


def _read_now_or_keep(verb: str, text: str, read: Callable[[str], tuple[JSON, ...]]) -> Action:
    """A contract or an attack, read now, or kept as its words when one of
    them might be a player's name, or when it reads only if two names in a
    row are one ("ann lee"): read once the names are known, by
    :func:`read_contract` or :func:`read_attack`."""
    words = _words(text)
    if _NAMEABLE.intersection(words):
        return Action(verb, (" ".join(words),))
    try:
        return Action(verb, read(text))
    except ParseError:
        if any(_plain(a) and _plain(b) for a, b in pairwise(words)):
            return Action(verb, (" ".join(words),))
        raise


def _plain(word: str) -> bool:
    """Whether ``word`` can only be (a part of) a name: no number, and no
    word a contract or an attack gives a meaning or skips."""
    return not (word in _FILLER or word in _ROLE_MARKERS or word in _SEAT_WORDS
                or _number(word) is not None)


def _glued(words: Sequence[str], people: Sequence[Nameable]) -> list[str]:
    """``words`` with each run of two or more that is part of one player's
    name made one word ("ann lee"), the longest run first."""
    names = [words_of(p.name) for p in people]
    out: list[str] = []
    i = 0
    while i < len(words):
        for n in range(len(words) - i, 1, -1):
            run = [w.casefold() for w in words[i:i + n]]
            if all(_plain(w) for w in run) and any(
                    name[j:j + n] == run for name in names for j in range(len(name) - n + 1)):
                out.append(" ".join(words[i:i + n]))
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


def read_contract(text: str, people: Sequence[Nameable] = ()) -> tuple[str, str, int, int]:
    """``contract with bob against carol 2 1``, ``offer bob: victim carol, I
    wager 2, you wager 1``, ``contract bob carol 2/1`` (one number: both wager
    it): the partner and the victim as written, the offerer's wager and the
    partner's.

    A word after "with" names the partner, one after "against", "on" or
    "victim" the victim; otherwise the first name is the partner. A number
    right after one of those words, or after "seat", is a seat. A number
    after "I" is the offerer's wager, after "you" the partner's; otherwise
    the first number is the offerer's. A word that is usually skipped
    ("will", "penny") is a name if one of ``people`` bears it, and words in
    a row that are one player's name are that name ("ann lee").

    :raises ParseError: the text cannot be read, or a name that is also a
        word to skip leaves it unclear; the message says how to write it.
    """
    words = _glued(_words(text), people)
    named = name_words(people)
    doubtful = [w for w in words if w in _NAMEABLE and w in named]
    try:
        return _read_contract(words, named)
    except ParseError:
        if doubtful:
            raise _doubt(doubtful[0], people, "contract with seat 2 against seat 3 1 2",
                         "and only the two wagers as numbers") from None
        raise


def _read_contract(words: Sequence[str], named: frozenset[str]) -> tuple[str, str, int, int]:
    partner: str | None = None
    victim: str | None = None
    loose_names: list[str] = []
    mine: int | None = None
    yours: int | None = None
    loose_numbers: list[int] = []
    name_role: str | None = None
    number_role: str | None = None
    for i, word in enumerate(words):
        if word in _PARTNER_MARKERS:
            name_role = "partner"
            continue
        if word in _VICTIM_MARKERS:
            name_role = "victim"
            continue
        if word in _MINE_MARKERS:
            number_role = "mine"
            continue
        if word in _YOURS_MARKERS:
            number_role = "yours"
            continue
        if word in _FILLER and word not in named:
            continue
        value = _number(word)
        # A number right after "seat", "with" or "against" is a seat; after
        # any other word ("against penny 1") it is a wager.
        before = words[i - 1] if i > 0 else ""
        seat = before in _SEAT_WORDS or (
            name_role is not None and before in _PARTNER_MARKERS | _VICTIM_MARKERS
        )
        if value is not None and not seat:
            if number_role == "mine" and mine is None:
                mine = value
            elif number_role == "yours" and yours is None:
                yours = value
            else:
                loose_numbers.append(value)
            number_role = None
            continue
        if name_role == "partner" and partner is None:
            partner = word
        elif name_role == "victim" and victim is None:
            victim = word
        else:
            loose_names.append(word)
        name_role = None
    # Seat numbers written without a marker: leading numbers beyond two wagers.
    while len([n for n in (partner, victim) if n is None]) > len(loose_names) and (
        len(loose_numbers) + (mine is not None) + (yours is not None) > 2
    ):
        loose_names.append(str(loose_numbers.pop(0)))
    for name in loose_names:
        if partner is None:
            partner = name
        elif victim is None:
            victim = name
        else:
            raise ParseError(f"I cannot tell who {name!r} is in this contract. {CONTRACT_HELP}")
    if partner is None or victim is None:
        raise ParseError(f"A contract names a partner and a victim. {CONTRACT_HELP}")
    for value in loose_numbers:
        if mine is None:
            mine = value
        elif yours is None:
            yours = value
        else:
            raise ParseError(
                f"A contract has two wagers, yours and your partner's. {CONTRACT_HELP}"
            )
    if mine is None:
        if yours is None:
            raise ParseError(f"A contract needs the wagers. {CONTRACT_HELP}")
        mine = yours
    if yours is None:
        yours = mine
    return partner, victim, mine, yours


def read_attack(text: str, people: Sequence[Nameable] = ()) -> tuple[str, int]:
    """``attack carol 2``, ``attack carol for 2``, ``attack seat 3 with 2
    pennies``: the victim as written and the wager. A word that is usually
    skipped ("will", "penny") is a name if one of ``people`` bears it, and
    words in a row that are one player's name are that name.

    :raises ParseError: the text cannot be read, or a name that is also a
        word to skip leaves it unclear; the message says how to write it.
    """
    named = name_words(people)
    all_words = _glued(_words(text), people)
    doubtful = [w for w in all_words if w in _NAMEABLE and w in named]
    words = [w for w in all_words if w not in _FILLER or w == "seat" or w in named]
    victims: list[str] = []
    numbers: list[int] = []
    for i, word in enumerate(words):
        if word in ("seat", "with", "wager", "against", "victim", "on") and word not in named:
            continue
        value = _number(word)
        if value is not None and not (i > 0 and words[i - 1] == "seat"):
            numbers.append(value)
        else:
            victims.append(word)
    if not victims and len(numbers) == 2:
        victims.append(str(numbers.pop(0)))
    if len(victims) != 1 or len(numbers) != 1:
        if doubtful:
            raise _doubt(doubtful[0], people, "attack seat 3 2",
                         "and only the wager as a number")
        if len(victims) != 1:
            raise ParseError(f"An attack names one victim. {ATTACK_HELP}")
        raise ParseError(f"An attack names one wager, 1 to 3 pennies. {ATTACK_HELP}")
    return victims[0], numbers[0]


def _doubt(word: str, people: Sequence[Nameable], example: str, numbers: str) -> ParseError:
    """The error for a line that a name which is also a word to skip leaves unclear."""
    players = ", ".join(f"{p.name} (seat {p.seat})" for p in people)
    return AmbiguousAction(
        f"I cannot be sure how to read this: '{word}' is a player's name and also a word "
        f"I skip. Write each player by seat number, {numbers}, for example "
        f"'{example}'. The players are {players}."
    )


def _cards_in(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """The cards named in ``words`` ("7h", "7♥", "seven of hearts", "7 h")
    and the words left over."""
    cards: list[str] = []
    left: list[str] = []
    i = 0
    while i < len(words):
        for span in (3, 2, 1):
            if i + span <= len(words):
                card = Card.parse(" ".join(words[i : i + span]))
                if card is not None and (span != 2 or len(words[i + 1]) == 1):
                    cards.append(str(card))
                    i += span
                    break
        else:
            left.append(words[i])
            i += 1
    return cards, left


def _bid(text: str) -> Action:
    """``bid 7H 3``, ``bid 3 with 7H``, ``bid seven of hearts for 3 pennies``."""
    cards, left = _cards_in(_words(text))
    left = [w for w in left if w not in _FILLER and w not in ("with", "card")]
    numbers = [n for w in left if (n := _number(w)) is not None]
    others = [w for w in left if _number(w) is None]
    if len(cards) != 1 or others:
        raise ParseError(f"I cannot read that bid. {BID_HELP} {CARD_HELP}")
    if len(numbers) != 1:
        raise ParseError(f"A bid needs one number of pennies. {BID_HELP}")
    return Action("bid", (cards[0], numbers[0]))


def _raise(text: str) -> Action:
    """``raise 2`` adds 2 to your bid; ``raise to 5`` brings it to 5."""
    words = [w for w in _words(text) if w not in ("by", "my", "bid", "pennies", "penny", "it")]
    to = bool(words) and words[0] == "to"
    numbers = [_number(w) for w in (words[1:] if to else words)]
    if len(numbers) != 1 or numbers[0] is None:
        raise ParseError(
            "Write 'raise 2' to add 2 pennies to your bid, or 'raise to 5' to bring it to 5."
        )
    return Action("raise", ("to", numbers[0]) if to else (numbers[0],))


def _down(text: str) -> Action:
    """``down QS``, ``play QS``, ``put QS down``, ``down QS 3H`` (an attack may
    take several cards at once)."""
    words = [w for w in _words(text) if w not in _DOWN_SKIP]
    cards, left = _cards_in(words)
    if not cards or left:
        shown = " ".join(left or words) or "nothing"
        raise ParseError(f"I cannot read {shown!r} as a card. {CARD_HELP}")
    return Action("down", tuple(cards))


def resolve_name(written: str, people: Sequence[Nameable]) -> int:
    """The player (an index into ``people``, in seat order) that ``written``
    means: a seat number, or a name as people name each other
    (``referee.games.names``: the whole name, a word of it, the part of the
    address before the @, the start of a name).

    :raises IllegalAction: no player or more than one is meant; the message
        lists them.
    """
    seat = find_seat(written, people, numbered=True)
    return next(i for i, p in enumerate(people) if p.seat == seat)


def people_of(s: MiserState) -> list[Nameable]:
    """The players as they may be named, in seat order."""
    return [Nameable(pos, name, tuple(s.aliases[i]) if i < len(s.aliases) else ())
            for i, (pos, name) in enumerate(zip(s.seats, s.names, strict=True))]


# -- the words of the game -----------------------------------------------------------


#: "pass next 3", "pass the next 3 turns", "pass next turn".
_PASS_NEXT = re.compile(r"^pass\s+(?:for\s+)?(?:the\s+|my\s+)?next(?:\s+(\d{1,3}))?"
                        r"(?:\s+turns?)?$")
#: The most turns one standing order passes.
MAX_PASSES = 20


class MiserWords(MiserRules):
    """How a Miser player writes each move, and the help she gets."""

    #: "play" is left out: "play nice" is talk (see :func:`_names_cards`).
    verbs: ClassVar[frozenset[str]] = frozenset(
        {"pass", "contract", "offer", "propose", "attack", "bid", "raise", "accept", "decline",
         "down", "flip", "done", "hand"})
    spelt_verbs: ClassVar[tuple[str, ...]] = (
        "bid", "play", "pass", "hand", "contract", "attack", "raise", "accept", "decline",
        "down", "flip", "done", "offer", "reveal")

    order_help: ClassVar[tuple[str, ...]] = (
        "pass next 3   pass at each of your next 3 turns (1 to 20), as each comes",
    )

    def parse(self, line: str) -> Action | None:
        """See :func:`parse_line` for every spelling read."""
        return parse_line(line)

    def parse_order(self, line: str) -> JSON | None:
        """A standing order (issue 37): ``pass next N`` (also ``pass the
        next N turns``, ``pass next turn``), passes for the seat's next N
        turns, each as it comes."""
        m = _PASS_NEXT.match(line.strip().lower().rstrip(".!"))
        if not m:
            return None
        count = 1 if m.group(1) is None else int(m.group(1))
        if not 1 <= count <= MAX_PASSES:
            raise ParseError(f"Pass your next 1 to {MAX_PASSES} turns, as in 'pass next 3'.")
        return {"kind": "pass", "count": count, "text": passes_text(count)}

    def help(self, state: MiserState, seat: int | None) -> str:
        return _help_text(state, seat)

    def deadline_move(self, before: MiserState, seat: int, action: Action,
                      result: Result[MiserState]) -> DeadlineMove:
        """Ruling MI-15 (rule text 004 has no deadlines, so the house rule):
        a silent turn player passes, an unanswered offer lapses (told to
        those who saw it), a silent partner or attacker has a random card
        of her hand put face down (the table is not told which), silence in
        an attack is "flip" and in the bidding "done"."""
        player = self._player(before, seat)
        owes = owed_step(before, player)
        if owes == "answer" and before.contract is not None:
            # ``missing`` is said as it is (no slots): the name needs no escape.
            by = before.names[before.turn]
            return DeadlineMove(f"answer to {by}'s contract offer", "let the offer lapse",
                                audience=offer_audience(before))
        if action.verb == "down":
            # The draw's stream (Game.move_rng), so the player can draw it
            # again from the seed (referee/games/miser/verify.py).
            key = next((p.key for p in self.pending(before) if p.seat == seat), "-")
            return DeadlineMove(
                "card", "put a card drawn at random from {their} hand face down for {them}",
                did_secret=f"put {card_text(str(action.args[0]))} face down for {{them}}, "
                           f"drawn at random from {{their}} hand (the draw "
                           f"timeout/{seat}/{slot_safe(key)})")
        if owes == "turn":
            return DeadlineMove(did="passed for {them}")
        if owes == "auction_join":
            return DeadlineMove(did='wrote "done" for {them}: {they} stay out of the bidding')
        return DeadlineMove(did=f'wrote "{slot_safe(self.read_as(action))}" for {{them}}')

    def _read_contract(self, s: MiserState, text: str) -> tuple[str, str, int, int]:
        return read_contract(text, people_of(s))

    def _read_attack(self, s: MiserState, text: str) -> tuple[str, int]:
        return read_attack(text, people_of(s))

    def _resolve_name(self, s: MiserState, written: str) -> int:
        return resolve_name(written, people_of(s))


# -- help -------------------------------------------------------------------------------


def _help_text(s: MiserState, seat: int | None) -> str:
    """What this seat can do now, and how to write it."""
    player = s.seats.index(seat) if seat is not None and seat in s.seats else None
    if s.over:
        return f"The game is over: {result_text(s)}"
    lines: list[str] = []
    owes = owed_step(s, player) if player is not None else None
    hand = sort_hand(s.hands[player]) if player is not None else []
    low = hand[-1] if hand else "7H"
    names = s.names
    if player is not None:
        others = [p for p in range(len(names)) if p != player]
        victim = names[others[-1]]
    if owes == "turn" and player is not None:
        cap = min(s.wager_cap, s.pennies[player])
        lines.append("It is your turn. Write one of:")
        lines.append("  pass")
        lines.append(f"      put {pennies_text(min(PASS_COST, s.pennies[player]))} in the centre")
        if hand:
            partners = [p for p in others if s.hands[p]]
            if partners:
                partner = names[partners[0]]
                target = names[next(p for p in others if p != partners[0])]
                lines.append(f"  contract with {partner} against {target} {cap} 1")
                lines.append(
                    f"      you wager {cap} and {partner} 1 (each 1 to {s.wager_cap});\n"
                    f"      {partner} answers accept or decline"
                )
            lines.append(f"  attack {victim} {cap}")
            lines.append(f"      a wager of 1 to {s.wager_cap}; {victim} matches it")
            # A bid wins the pennies in the centre (004, Making a Bid): with
            # none there, it could only cost the bidder, so it is not offered.
            if s.centre:
                bid = min(2, s.pennies[player])
                lines.append(f"  bid {low} {bid}")
                lines.append(
                    f"      bid {pennies_text(bid)} for the centre ({pennies_text(s.centre)} "
                    f"now),\n      with {card_text(low)} face up"
                )
        else:
            lines.append("You have no cards left, so passing is all you can do.")
    elif owes == "answer":
        assert s.contract is not None
        c = s.contract
        seen = "" if c.audience is None else " (a private offer)"
        lines.append(
            f"{names[s.turn]} offers you a contract against {names[c.victim]}{seen}:\n"
            f"{names[s.turn]} wagers {c.wagers[0]}, you {c.wagers[1]}, and {names[c.victim]} "
            f"matches the {sum(c.wagers)}.\n"
            "Write 'accept' or 'decline'. If you accept, each of you puts one\n"
            "card face down, in a mail to the referee alone."
        )
    elif owes in ("contract_card", "attack_first", "attack"):
        what = {"contract_card": "a card face down for the contract",
                "attack_first": "one or more cards face down for the attack",
                "attack": "a card face down for the attack"}[owes]  # fmt: skip
        lines.append(f"Put {what}, in a mail to the\nreferee alone: 'down {low}'.")
        if owes == "attack":
            lines.append(
                f"You may put down more cards ('down {' '.join(hand[-2:])}'), or write\n"
                "'flip' when you are done."
            )
        lines.append(f"Your cards: {hand_text(hand)}")
    elif owes == "auction_bid":
        lines.append(
            ("Someone else has bid or raised since your last bid. Write\n" if s.edition >= 2
             else "A bid or a raise came since you last said done. Write\n")
            + f"'raise 1' to add a penny, 'raise to N' (up to {s.pennies[player or 0]}), or "
            "'done'\n(you are asked again if anyone else bids or raises)."
        )
    elif owes == "auction_join" or (
        player is not None and s.auction is not None and hand and not is_bidder(s, player)
    ):
        lines.append(
            "You may join the bidding for the centre with one card\n"
            f"face up and 1 or more pennies: 'bid {low} {min(2, s.pennies[player or 0])}'."
            + (" Or write\n'done' to stay out." if owes == "auction_join" else "")
        )
    elif player is not None and s.auction is not None and is_bidder(s, player) and not may_add(
            s, player):
        lines.append(
            "Your bid stands: you have bid every penny you hold, so you\n"
            "cannot add to it; you are finished bidding."
        )
    elif player is not None and s.auction is not None and is_bidder(s, player):
        lines.append(
            "Your bid stands: you owe nothing until someone else bids or\n"
            "raises. You may still raise it ('raise 1') until the bidding ends."
        )
    else:
        waiting = (
            ", ".join(
                names[p] for p in range(len(names)) if owed_step(s, p) not in (None, "answer")
            )
            or names[s.turn]
        )
        lines.append(f"{now_text(s)} Waiting for: {waiting}.")
    if player is not None:
        lines.append("'hand' shows your cards and pennies in a secret reply.")
    return "\n".join(lines)
