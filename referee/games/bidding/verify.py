"""What a player checks of Pure Skill and Goofspiel from their mails
(``referee verify TAG --mail PATH``): each round's prize wherever a mail
states it (the subject, a report's heading, the state, the round's
report), drawn or in the fixed order the opening announces, and each bid
the referee chose for a late seat or a bot.

A claim is read by what it means, not by one phrasing: a line that speaks
of a round's prize in a way none of the patterns reads is refused as one
that cannot be read, never passed over. Every pattern here is linear in
the line it reads, and every number it reads is bounded."""

from __future__ import annotations

import re

from referee.games.bidding.rules import RANK_NAMES
from referee.games.draws import KeyedDraws
from referee.games.mailcheck import Check, Found, MailCheck, number, words

#: The most cards a pack holds (the option ``cards``: 2 to 13).
MAX_CARDS = 13

PRIZE_IS = re.compile(r"^[ \t]*ROUND (\d{1,9}) OF (\d{1,9}): THE PRIZE IS ([^\n]+?)\.?$",
                      re.M | re.I)
PRIZE_WAS = re.compile(r"^ROUND (\d{1,9}): THE PRIZE WAS ([^,\n]+)(?:, WITH [^\n]*)?$", re.M)
#: The prize in a subject and in a report's heading: "round 1, the prize
#: is 3" (the opening), "— round 3 prize 5" (a round report).
PRIZE_SAID = re.compile(r"\bround (\d{1,9})[,:]? (?:the )?prize (?:is |was )?"
                        r"([^\s;:,]+(?: \(\d{1,9} points?\))?)", re.I)
#: Any mention of a round's prize with a number: each must be one the
#: patterns above read, or it is refused as unreadable.
PRIZE_MENTION = re.compile(r"\bround\b[^\n]{0,60}?\bprize\b[^\n]{0,40}?[0-9]", re.I)
#: How the opening says the prizes come: drawn, or in an order fixed.
RANDOM_PRIZES = re.compile(r"draws\s+a\s+prize\s+at\s+random")
ORDERED_PRIZES = re.compile(r"prizes\s+of\s+its\s+own\s+pack\s+in\s+(ascending|descending)\s+"
                            r"order")
FIXED_PRIZES = re.compile(r"prizes\s+of\s+its\s+own\s+pack\s+in\s+an\s+order\s+fixed")

_RANK_VALUES = {name: value for value, name in RANK_NAMES.items()}


def _prize_value(text: str) -> int | None:
    """``"4"`` (Goofspiel) or ``"3♠ (3 points)"`` / ``"K♠"`` (Pure Skill) ->
    4, 3 or 13; None when the text is no prize, or its card and its points
    do not agree."""
    text = text.strip().rstrip(".")
    card, _, points = text.partition(" (")
    value: int | None = None
    rank = card.rstrip("♠♥♦♣")
    if rank != card or rank in _RANK_VALUES:
        value = _RANK_VALUES.get(rank) or number(rank, MAX_CARDS)
    else:
        value = number(card, MAX_CARDS)
    if points:
        m = re.fullmatch(r"(\d{1,9}) points?\)", points)
        stated = number(m.group(1), MAX_CARDS) if m else None
        if stated is None or (value is not None and value != stated):
            return None
        value = stated
    return value


def _claims(check: Check) -> list[tuple[int, int, str, int | None, str]]:
    """Every statement of a round's prize: (mail, round, the text, its
    value, where: "subject" or "body"), in the order of the mails. A
    mention of a round's prize no pattern reads is refused here."""
    out: list[tuple[int, int, str, int | None, str]] = []
    for pattern, group in ((PRIZE_IS, 3), (PRIZE_WAS, 2), (PRIZE_SAID, 2)):
        for f in check.find(pattern):
            round_number = number(f.match.group(1), 10**6) or 0
            text = f.match.group(group).strip()
            out.append((f.mail, round_number, text, _prize_value(text), "body"))
    for f in check.in_subjects(PRIZE_SAID):
        round_number = number(f.match.group(1), 10**6) or 0
        text = f.match.group(2).strip()
        out.append((f.mail, round_number, text, _prize_value(text), "subject"))
    for i, mail in enumerate(check.mails):
        for where, text in (("subject", mail.subject), ("body", mail.text)):
            read = [m.span() for p in ((PRIZE_SAID,) if where == "subject"
                                       else (PRIZE_IS, PRIZE_WAS, PRIZE_SAID))
                    for m in p.finditer(text)]
            for m in PRIZE_MENTION.finditer(text):
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.start())
                end = len(text) if end < 0 else end
                if text.startswith(">", start):
                    continue  # the player's own words, quoted back
                if not any(s < end and e > start for s, e in read):
                    check.mismatch(i, f"its {where} states a prize in a way that cannot be "
                                   f"read: \"{words(text[start:end])[:200]}\"")
    return sorted(out, key=lambda c: c[0])


def check_bidding(check: Check, seed: str) -> None:
    """Each round's prize, wherever a mail states it, is the draw ``prize``
    keyed by the round (a choice of the pot's cards left, ascending), or
    the one the announced order gives."""
    shown = check.find(PRIZE_IS)
    if not shown:
        check.missing("a mail showing a round's prize")
        return
    cards = number(shown[0].match.group(2), MAX_CARDS)
    if cards is None or cards < 2:
        check.mismatch(shown[0].mail, f"a game of {shown[0].match.group(2)[:20]} rounds cannot "
                       f"be read: a pack holds 2 to {MAX_CARDS} cards")
        return
    claims = _claims(check)
    drawn: dict[int, int] = {}
    text = "\n".join(mail.text for mail in check.mails)
    order = ORDERED_PRIZES.search(text)
    if RANDOM_PRIZES.search(text):
        draws = KeyedDraws(seed)
        pot = list(range(1, cards + 1))
        for round_number in range(1, cards + 1):
            drawn[round_number] = draws.rng("prize", round_number).choice(sorted(pot))
            pot.remove(drawn[round_number])
        source = "the seed draws"
    elif order is not None:
        ascending = order.group(1) == "ascending"
        drawn = {r: r if ascending else cards + 1 - r for r in range(1, cards + 1)}
        source = f"the {order.group(1)} order gives"
    elif FIXED_PRIZES.search(text):
        source = "the order fixed before the game gives"
    else:
        check.mismatch(0, "how the prizes are chosen (drawn, or in an order fixed) cannot be "
                       "read: no mail says it")
        return
    fixed = not drawn  # an order the operator fixed and did not publish: each prize once
    for mail, round_number, said, value, where in claims:
        if not 1 <= round_number <= cards:
            check.mismatch(mail, f"its {where} gives round {round_number}'s prize, but the "
                           f"game has {cards} rounds")
        elif value is None:
            check.mismatch(mail, f"its {where} gives round {round_number}'s prize as {said}, "
                           "which cannot be read as a card")
        elif fixed:
            drawn.setdefault(round_number, value)
            earlier = [r for r, v in drawn.items() if v == value and r != round_number]
            if drawn[round_number] != value:
                check.mismatch(mail, f"its {where} gives round {round_number}'s prize as "
                               f"{said}, but an earlier mail gave {drawn[round_number]}")
            elif earlier:
                check.mismatch(mail, f"its {where} gives round {round_number}'s prize as "
                               f"{said}, but that card was round {earlier[0]}'s prize")
        elif value != drawn[round_number]:
            check.mismatch(mail, f"its {where} gives round {round_number}'s prize as {said}, "
                           f"but {source} {drawn[round_number]}")
    check_chosen_bids(check, seed, cards)


SEAT_LINE = re.compile(r"^  Seat (\d{1,3}): ([^\n]+?)(?: \(a bot that (?:bids at random|weighs "
                       r"each prize)\))?$", re.M)
ROUND_BIDS = re.compile(r"^ROUND (\d{1,9}): THE PRIZE WAS [^\n]*\n\n?((?:  [^\n]*\n)+)", re.M)
#: What follows a bid the referee chose, and whose draw it is.
_BID_NOTES = {"(no bid arrived: the referee chose a random card)": "timeout", "(bot)": "bot",
              "(bot, weighing the prize)": ""}


def bid_line(line: str) -> tuple[str, str, str | None] | None:
    """``"  Alice    bid 3   (bot)"`` -> ("Alice", "3", "bot"): the name, the
    card and whose draw chose it ("timeout", "bot", "" for a bot that
    weighs, None for a bid the player wrote); None for another line. Read
    with string methods: linear in the line."""
    if not line.startswith("  "):
        return None
    body, note = line[2:].rstrip(), None
    for text, purpose in _BID_NOTES.items():
        if body.endswith(text):
            body, note = body[:-len(text)].rstrip(), purpose
            break
    name, sep, card = body.rpartition(" bid ")
    if not sep or not card or " " in card or not name.strip():
        return None
    return name.strip(), card, note


def check_chosen_bids(check: Check, seed: str, cards: int) -> None:
    """Each bid the referee chose, for a seat whose bid did not arrive by the
    deadline (``timeout``) or for a bot (``bot``), is the draw keyed by the
    seat and the round (``round-R``): a choice of the cards the seat had
    left, ascending. What each seat has left comes from the bids the round
    reports show, so the rounds are checked in order until one is missing."""
    seats = {f.match.group(2).strip(): int(f.match.group(1))
             for f in check.find(SEAT_LINE)}
    rounds: dict[int, Found] = {}
    for f in check.find(ROUND_BIDS):
        round_number = number(f.match.group(1), MAX_CARDS)
        if round_number is not None:
            rounds.setdefault(round_number, f)
    if not seats or not rounds:
        return
    draws = KeyedDraws(seed)
    # Pure Skill names its ace and court cards (A J Q K); Goofspiel numbers all.
    ranks = any("Game of Pure Skill" in mail.text for mail in check.mails)
    names = RANK_NAMES if ranks else {}
    packs = {seat: set(range(1, cards + 1)) for seat in seats.values()}
    for round_number in range(1, cards + 1):
        if round_number not in rounds:
            return  # what each seat holds after a round no mail shows is unknown
        f = rounds[round_number]
        for line in f.match.group(2).splitlines():
            bid = bid_line(line)
            if bid is None or bid[0] not in seats:
                continue
            name, card, note = bid
            seat = seats[name]
            value = (_RANK_VALUES.get(card) if ranks else None) or number(card, MAX_CARDS)
            if value is None or value not in packs[seat]:
                check.mismatch(f.mail, f"round {round_number}: {name} bids {card[:20]}, "
                               "a card they no longer hold")
                return
            # A sensible bot's bid weighs the game as it stands: no draw to check.
            if note:
                chosen = draws.rng(note, seat, f"round-{round_number}").choice(
                    sorted(packs[seat]))
                if chosen != value:
                    check.mismatch(f.mail, f"round {round_number}: the referee bid {card} for "
                                   f"{name}, but the seed draws {names.get(chosen, str(chosen))}")
            packs[seat].discard(value)


class BiddingMailCheck(MailCheck):
    """The seed, then the prizes and the referee's bids (:func:`check_bidding`)."""

    def draws(self, check: Check, seed: str) -> None:
        check_bidding(check, seed)
