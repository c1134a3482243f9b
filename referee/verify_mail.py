"""``referee verify TAG --mail PATH``: a player checks the referee's draws
from the mails they received, with no database and no config.

The mailbox (an mbox file or a Maildir folder) is read as the player has it:
the game's mails are those with ``[TAG]`` in the subject. Every commitment
they publish must open, and every draw they show must be the one the game's
seed gives (docs/engines.md, "Randomness and replay"), drawn again here with
the engines' own draws (:class:`~referee.games.draws.KeyedDraws`).
"""

from __future__ import annotations

import hashlib
import mailbox
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from email.utils import parsedate_to_datetime
from pathlib import Path

from referee.games.bidding.rules import RANK_NAMES
from referee.games.cards import full_deck
from referee.games.draws import KeyedDraws, Stream, seed_fingerprint
from referee.games.loatcg.instructions import (
    BASIC,
    CARD_TYPES,
    InstructionError,
    parse_instructions,
)
from referee.games.loatcg.rules import cards_text
from referee.games.miser.rules import DECK_SIZE, card_text, draw_for_first, hand_text, sort_hand
from referee.mail.headers import find_tag


@dataclass(frozen=True)
class Mail:
    """One of the game's mails, as the player received it."""

    subject: str
    date: datetime | None
    text: str  # the plain-text body, lines ending in "\n"

    def __str__(self) -> str:
        when = f", {self.date:%a %d %b %Y %H:%M}" if self.date else ""
        return f'the mail "{self.subject}"{when}'


class MailboxError(Exception):
    """The mailbox cannot be read: the sentence the player reads."""


# -- reading the mailbox --------------------------------------------------------


def read_mailbox(path: Path) -> Iterator[EmailMessage]:
    """Every message of the Maildir folder or mbox file at ``path``."""
    if path.is_dir():
        if not (path / "cur").is_dir() and not (path / "new").is_dir():
            raise MailboxError(f"{path}: a folder, but not a Maildir (it has no cur or new)")
        box: mailbox.Mailbox[mailbox.Message] = mailbox.Maildir(path, factory=None, create=False)
    elif path.is_file():
        box = mailbox.mbox(path, create=False)
    else:
        raise MailboxError(f"{path}: no such mbox file or Maildir folder")
    for key in box.iterkeys():
        msg = message_from_bytes(box.get_bytes(key), policy=default)
        assert isinstance(msg, EmailMessage)
        yield msg


def game_mails(tag: str, messages: Iterator[EmailMessage]) -> list[Mail]:
    """The mails of game ``tag``, in the order they were sent: by Date, then
    by the referee's Message-ID (``<pbm.ID.TAG@...>``, ID counting up)."""
    keyed: list[tuple[tuple[float, int], Mail]] = []
    for msg in messages:
        subject = " ".join(str(msg["Subject"] or "").split())
        if find_tag(subject) != tag.lower():
            continue
        part = msg.get_body(("plain",))
        if not isinstance(part, EmailMessage):
            continue
        text = str(part.get_content()).replace("\r\n", "\n")
        date = _date(str(msg["Date"] or ""))
        parts = str(msg["Message-ID"] or "").split(".")
        number = int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0
        keyed.append(((date.timestamp() if date else 0.0, number), Mail(subject, date, text)))
    keyed.sort(key=lambda km: km[0])
    return [mail for _, mail in keyed]


def _date(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None


# -- what is checked ------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A line of a mail: where it was and what it says."""

    mail: int  # the mail's place in the game's mails
    match: re.Match[str]


def _find(mails: Sequence[Mail], pattern: re.Pattern[str]) -> list[Found]:
    return [Found(i, m) for i, mail in enumerate(mails) for m in pattern.finditer(mail.text)]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _words(text: str) -> str:
    return " ".join(text.split())


#: The opening's commitment to the seed: SHA-256 of ``seed: SEED\n``.
SEED_SHA = re.compile(r"^[ \t]*seed-sha256:[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)
#: The seed, revealed by the game's last public mail.
SEED = re.compile(r"^[ \t]*seed:[ \t]*(\S+)[ \t]*$", re.M)


class Check:
    """The mismatches found, each with the place of the mail it names."""

    def __init__(self, tag: str, mails: Sequence[Mail]) -> None:
        self.tag = tag
        self.mails = mails
        self.found: list[tuple[int, str]] = []

    def missing(self, what: str) -> None:
        self.found.append((-1, f"{what} of {self.tag} is not in the mailbox"))

    def mismatch(self, mail: int, text: str) -> None:
        self.found.append((mail, f"{self.mails[mail]}: {text}"))

    def committed_and_opened(self, commitment: re.Pattern[str], where: str,
                             opening: re.Pattern[str], then: str
                             ) -> tuple[list[Found], list[Found]] | None:
        """The mails with a commitment and those that open it; None, saying
        which mail is missing (``where``, ``then``), unless both are here."""
        committed, opened = _find(self.mails, commitment), _find(self.mails, opening)
        if not committed:
            self.missing(where)
        if not opened:
            self.missing(then)
        return (committed, opened) if committed and opened else None

    def result(self) -> list[str]:
        """The mismatches, a missing mail first, then in the order of the mails."""
        return [text for _, text in sorted(self.found, key=lambda f: f[0])]


def check_seed(check: Check) -> str | None:
    """The revealed seed, once its SHA-256 is the opening's; else None."""
    both = check.committed_and_opened(
        SEED_SHA, "the opening mail (with the seed's SHA-256)",
        SEED, "the game's last mail (revealing the seed)")
    if both is None:
        return None
    committed, revealed = both
    opening = committed[0].match.group(1).lower()
    for f in committed[1:]:
        if f.match.group(1).lower() != opening:
            check.mismatch(f.mail, f"the seed's SHA-256 is {f.match.group(1)}, but the "
                           f"opening gave {opening}")
    seed = revealed[-1].match.group(1)
    if seed_fingerprint(seed) != opening:
        check.mismatch(revealed[-1].mail, f"the seed {seed} does not open the commitment: "
                       f"SHA-256 of 'seed: {seed}' and a newline is {seed_fingerprint(seed)}, "
                       f"but the opening gave {opening}")
        return None
    for f in revealed[:-1]:
        if f.match.group(1) != seed:
            check.mismatch(f.mail, f"the seed is given as {f.match.group(1)}, but the "
                           f"last mail gives {seed}")
    return seed


# -- Goofspiel and Pure Skill -----------------------------------------------------

PRIZE_IS = re.compile(r"^ROUND (\d+) OF (\d+): THE PRIZE IS (.+)$", re.M)
PRIZE_WAS = re.compile(r"^ROUND (\d+): THE PRIZE WAS (.+?)(?:, WITH .* CARRIED OVER .*)?$", re.M)
RANDOM_PRIZES = re.compile(r"draws\s+a\s+prize\s+at\s+random")


def _prize_value(text: str) -> int | None:
    """``"4"`` (Goofspiel) or ``"3♠ (3 points)"`` (Pure Skill) -> 4 or 3."""
    m = re.search(r"\((\d+) points?\)", text) or re.fullmatch(r"\s*(\d+)\s*", text)
    return int(m.group(1)) if m else None


def check_bidding(check: Check, seed: str) -> None:
    """Each round's prize, as the state and the reports show it, is the draw
    ``prize`` keyed by the round: a choice of the pot's cards left, ascending."""
    shown = _find(check.mails, PRIZE_IS)
    if not shown:
        check.missing("a mail showing a round's prize")
        return
    cards = int(shown[0].match.group(2))
    if not any(RANDOM_PRIZES.search(mail.text) for mail in check.mails):
        # The prizes come in an order the operator fixed: none is drawn.
        check_chosen_bids(check, seed, cards)
        return
    draws = KeyedDraws(seed)
    pot = list(range(1, cards + 1))
    drawn: dict[int, int] = {}
    for number in range(1, cards + 1):
        drawn[number] = draws.rng("prize", number).choice(sorted(pot))
        pot.remove(drawn[number])
    for f in sorted([*shown, *_find(check.mails, PRIZE_WAS)], key=lambda f: f.mail):
        number = int(f.match.group(1))
        text = (f.match.group(3) if f.match.re is PRIZE_IS else f.match.group(2)).strip()
        value = _prize_value(text)
        if number not in drawn:
            check.mismatch(f.mail, f"round {number}'s prize, but the game has {cards} rounds")
        elif value != drawn[number]:
            check.mismatch(f.mail, f"round {number}'s prize is {text}, but the seed draws "
                           f"{drawn[number]}")
    check_chosen_bids(check, seed, cards)


SEAT_LINE = re.compile(r"^  Seat (\d+): (.+?)(?: \(a bot that (?:bids at random|weighs each "
                       r"prize)\))?$", re.M)
ROUND_BIDS = re.compile(r"^ROUND (\d+): THE PRIZE WAS .*\n\n?((?:  .*\n)+)", re.M)
BID_LINE = re.compile(r"^  (.+?)\s+bid (\S+)(?:\s+\((no bid arrived: the referee chose a "
                      r"random card|bot|bot, weighing the prize)\))?$")
_RANK_VALUES = {name: value for value, name in RANK_NAMES.items()}


def check_chosen_bids(check: Check, seed: str, cards: int) -> None:
    """Each bid the referee chose, for a seat whose bid did not arrive by the
    deadline (``timeout``) or for a bot (``bot``), is the draw keyed by the
    seat and the round (``round-R``): a choice of the cards the seat had
    left, ascending. What each seat has left comes from the bids the round
    reports show, so the rounds are checked in order until one is missing."""
    seats = {f.match.group(2).strip(): int(f.match.group(1))
             for f in _find(check.mails, SEAT_LINE)}
    rounds: dict[int, Found] = {}
    for f in _find(check.mails, ROUND_BIDS):
        rounds.setdefault(int(f.match.group(1)), f)
    if not seats or not rounds:
        return
    draws = KeyedDraws(seed)
    # Pure Skill names its ace and court cards (A J Q K); Goofspiel numbers all.
    ranks = any("Game of Pure Skill" in mail.text for mail in check.mails)
    names = RANK_NAMES if ranks else {}
    packs = {seat: set(range(1, cards + 1)) for seat in seats.values()}
    for number in range(1, cards + 1):
        if number not in rounds:
            return  # what each seat holds after a round no mail shows is unknown
        f = rounds[number]
        for line in f.match.group(2).splitlines():
            bid = BID_LINE.match(line)
            if bid is None or bid.group(1).strip() not in seats:
                continue
            seat = seats[bid.group(1).strip()]
            card = bid.group(2)
            value = (_RANK_VALUES.get(card) if ranks else None) or (
                int(card) if card.isdecimal() else None)
            if value is None or value not in packs[seat]:
                check.mismatch(f.mail, f"round {number}: {bid.group(1).strip()} bids {card}, "
                               "a card they no longer hold")
                return
            # A sensible bot's bid weighs the game as it stands: no draw to check.
            if bid.group(3) and bid.group(3) != "bot, weighing the prize":
                purpose = "bot" if bid.group(3) == "bot" else "timeout"
                chosen = draws.rng(purpose, seat, f"round-{number}").choice(sorted(packs[seat]))
                if chosen != value:
                    check.mismatch(f.mail, f"round {number}: the referee bid {card} for "
                                   f"{bid.group(1).strip()}, but the seed draws "
                                   f"{names.get(chosen, str(chosen))}")
            packs[seat].discard(value)


# -- Miser --------------------------------------------------------------------------

SEATING = re.compile(r"^Seating \(play moves in this order\):\n((?:[ \t]+\d+\. .+\n)+)", re.M)
FIRST_DRAW = re.compile(r"^The draw for first player[^\n]*:\n(.*?)\n([^\n]+?) drew highest and "
                        r"goes first\.$", re.M | re.S)
DEALT = re.compile(r"^(.+?), here are the (\d+) cards dealt to you\.\n.*?\n\n[ \t]*(\S.*)$", re.M)


def check_miser(check: Check, seed: str) -> None:
    """The draw for first player (``first``, ruling MI-2) and the player's
    own hand (``deal``, ruling MI-1) are the seed's."""
    seatings = _find(check.mails, SEATING)
    if not seatings:
        check.missing("the opening mail (with the seating)")
        return
    names = [line.split(".", 1)[1].strip()
             for line in seatings[0].match.group(1).splitlines()]
    n = len(names)
    draws = KeyedDraws(seed)
    first, rows = draw_for_first(n, draws.rng("first"))
    lines = [", ".join(f"{names[p]} {card_text(c)}" for p, c in enumerate(row) if c)
             for row in rows]
    for f in _find(check.mails, FIRST_DRAW):
        shown = [_words(line) for line in f.match.group(1).splitlines() if line.strip()]
        if shown != lines:
            check.mismatch(f.mail, f"the draw for first player shows {'; '.join(shown)}, but "
                           f"the seed draws {'; '.join(lines)}")
        elif f.match.group(2).strip() != names[first]:
            check.mismatch(f.mail, f"{f.match.group(2).strip()} goes first, but the seed's "
                           f"draw makes it {names[first]}")
    deck = [str(c) for c in full_deck()]
    draws.rng("deal").shuffle(deck)
    rest = deck[DECK_SIZE % n:]
    for f in _find(check.mails, DEALT):
        name = f.match.group(1).strip()
        if name not in names:
            check.mismatch(f.mail, f"a hand dealt to {name}, who is not in the seating")
            continue
        dealt = hand_text(sort_hand(rest[names.index(name)::n]))
        if _words(f.match.group(3)) != dealt:
            check.mismatch(f.mail, f"the hand dealt to {name} is {_words(f.match.group(3))}, "
                           f"but the seed deals {dealt}")


# -- the Land of Agora tournament -----------------------------------------------------

DIGEST = re.compile(r"SHA-256 hash of their text[^\n]*\n\s*([0-9a-f]{64})[ \t]*$", re.M)
COMMITTED = re.compile(r"^-----\n(.*?\n)-----$", re.M | re.S)
REPORT = re.compile(r"^ROUND REPORT (\d+) .*?\(its number is not given\):\n\n(.*?)\n\n",
                    re.M | re.S)
REPORTED = re.compile(r"^[ \t]+(\d+)\. .*\(Round Report (\d+)\)$", re.M)


def check_loatcg(check: Check, seed: str) -> None:
    """The opening's hash opens with the Final Report's text and salt
    (ruling TCG-19), and each Round Report's instruction is the draw
    ``report`` keyed by the report: a choice of the numbers not yet reported."""
    both = check.committed_and_opened(
        DIGEST, "the opening mail (with the Scoring Instructions' SHA-256)",
        COMMITTED, "the Final Report (with the Scoring Instructions' text and salt)")
    if both is None:
        return
    opened, final = both
    digest = opened[0].match.group(1)
    committed = final[-1].match.group(1)
    if _sha256(committed) != digest:
        check.mismatch(final[-1].mail, f"the SHA-256 of the Scoring Instructions' text is "
                       f"{_sha256(committed)}, but the opening gave {digest}")
        return
    body = committed.split("\n", 1)[1] if committed.startswith("salt:") else committed
    try:
        instructions = parse_instructions(body)
    except InstructionError as e:
        check.mismatch(final[-1].mail, f"the Scoring Instructions' text cannot be read: {e}")
        return
    numbers = {_words(i.english()): i.number for i in instructions}
    draws = KeyedDraws(seed)
    unreported = [i.number for i in instructions]
    drawn: dict[int, int] = {}
    for report in range(1, len(instructions)):
        drawn[report] = draws.rng("report", report).choice(unreported)
        unreported.remove(drawn[report])
    for f in _find(check.mails, REPORT):
        report, quoted = int(f.match.group(1)), _words(f.match.group(2))
        number = numbers.get(quoted)
        if report not in drawn:
            check.mismatch(f.mail, f"Round Report {report}, but the tournament has "
                           f"{len(drawn)} reports")
        elif number is None:
            check.mismatch(f.mail, f"Round Report {report} gives the instruction \"{quoted}\", "
                           "which the Scoring Instructions do not hold")
        elif number != drawn[report]:
            check.mismatch(f.mail, f"Round Report {report} gives instruction {number}, but the "
                           f"seed draws instruction {drawn[report]}")
    for f in _find(check.mails, REPORTED):
        number, report = int(f.match.group(1)), int(f.match.group(2))
        if drawn.get(report) != number:
            check.mismatch(f.mail, f"instruction {number} is said to be Round Report {report}'s, "
                           f"but the seed draws instruction {drawn.get(report)} for it")
    for f in _find(check.mails, DEALT_CARDS):
        shown, draw = _words(f.match.group(1)), f.match.group(2)
        count = sum(int(n) for n in re.findall(r"\d+", shown))
        stream = Stream(f"{seed}/{draw}")
        cards = dict.fromkeys(CARD_TYPES, 0)
        for _ in range(count):
            cards[stream.choice(BASIC)] += 1  # definition C: each a basic type, 1/5 each
        if cards_text(cards) != shown:
            check.mismatch(f.mail, f"the cards dealt to you by the draw {draw} are {shown}, "
                           f"but the seed deals {cards_text(cards)}")


#: A tournament's deal to the member: the cards, and the seed's draw that chose them.
DEALT_CARDS = re.compile(r"^Dealt to you: (.+)\n\(The seed's draw \"([a-z]+(?:/\d+)+)\" "
                         r"chose them", re.M)


# -- Spades ------------------------------------------------------------------------

HAND_SHA = re.compile(r"^[ \t]*hand-sha256 (.+?):[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)
HAND = re.compile(r"^([^\n]+?), here are your 13 cards for round (\d+)\..*?\n\n(.*?)(?:\n\n|\Z)",
                  re.M | re.S)
HAND_SALT = re.compile(r"^[ \t]*hand-salt:[ \t]*([0-9a-fA-F]{32})[ \t]*$", re.M)


def hand_commitment(hand: str, salt: str) -> str:
    """SHA-256 of ``hand: CARDS`` and ``salt: SALT``, each line ending in a
    newline; the cards as the hand mail writes them, single spaces."""
    return _sha256(f"hand: {_words(hand)}\nsalt: {salt}\n")


def check_spades(check: Check) -> None:
    """Each round's hand mail, with its salt, opens the hand's commitment the
    public mail starting the round gave for the player's seat (ruling SP-17:
    the seed stays with the referee)."""
    hands = _find(check.mails, HAND)
    if not hands:
        check.missing("a mail with your hand for a round")
        return
    commitments = _find(check.mails, HAND_SHA)
    for f in hands:
        name, number = f.match.group(1).strip(), int(f.match.group(2))
        salts = list(HAND_SALT.finditer(check.mails[f.mail].text, f.match.start()))
        if not salts:
            check.mismatch(f.mail, f"round {number}'s hand mail gives no hand-salt")
            continue
        hand = HAND_SALT.sub("", f.match.group(3))
        mine = [c for c in commitments if c.mail <= f.mail and c.match.group(1).strip() == name]
        if not mine:
            check.missing(f"the mail starting round {number} (with {name}'s hand-sha256)")
            continue
        published = mine[-1].match.group(2).lower()
        if hand_commitment(hand, salts[0].group(1)) != published:
            check.mismatch(f.mail, f"round {number}'s hand {_words(hand)} with its salt does "
                           f"not open {name}'s hand-sha256 {published}")


# -- the whole check ------------------------------------------------------------------

_SEEDED: dict[str, Callable[[Check, str], None]] = {
    "goofspiel": check_bidding,
    "pure-skill": check_bidding,
    "miser": check_miser,
    "loatcg": check_loatcg,
}


def verify_mailbox(tag: str, path: Path) -> list[str]:
    """What does not match in game ``tag``'s mails in the mailbox at
    ``path``, the first mismatch first; an empty list: verified.

    :raises MailboxError: when ``path`` is no mbox file or Maildir folder.
    """
    tag = tag.lower()
    kind = tag.rpartition("-")[0]
    if kind != "spades" and kind not in _SEEDED:
        known = ", ".join(sorted([*_SEEDED, "spades"]))
        return [f"{tag}: not a game tag a referee gives (games: {known})"]
    mails = game_mails(tag, read_mailbox(path))
    if not mails:
        return [f"no mail of {tag} is in the mailbox {path}"]
    check = Check(tag, mails)
    if kind == "spades":
        check_spades(check)
    elif (seed := check_seed(check)) is not None:
        _SEEDED[kind](check, seed)
    return check.result()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m referee.verify_mail TAG PATH``: prints ``verified`` (exit 0)
    or each mismatch, the first first (exit 1)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[1] == "--mail":
        args = [args[0], args[2]]
    if len(args) != 2:
        print("usage: python -m referee.verify_mail TAG --mail MBOX-OR-MAILDIR", file=sys.stderr)
        return 2
    try:
        problems = verify_mailbox(args[0], Path(args[1]))
    except MailboxError as e:
        print(e, file=sys.stderr)
        return 1
    if not problems:
        print("verified")
        return 0
    for problem in problems:
        print(problem)
    return 1


if __name__ == "__main__":
    sys.exit(main())
