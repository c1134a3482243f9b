"""What a player checks of Pure Skill and Goofspiel from their mails
(``referee verify TAG --mail PATH``): each round's prize, when the prizes
are drawn, and each bid the referee chose for a late seat or a bot."""

from __future__ import annotations

import re

from referee.games.bidding.rules import RANK_NAMES
from referee.games.draws import KeyedDraws
from referee.games.mailcheck import Check, Found, MailCheck

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
    shown = check.find(PRIZE_IS)
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
    for f in sorted([*shown, *check.find(PRIZE_WAS)], key=lambda f: f.mail):
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
             for f in check.find(SEAT_LINE)}
    rounds: dict[int, Found] = {}
    for f in check.find(ROUND_BIDS):
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


class BiddingMailCheck(MailCheck):
    """The seed, then the prizes and the referee's bids (:func:`check_bidding`)."""

    def draws(self, check: Check, seed: str) -> None:
        check_bidding(check, seed)
