"""What a player checks of Miser from their mails (``referee verify TAG
--mail PATH``): the draw for first player and their own hand."""

from __future__ import annotations

import re

from referee.games.cards import full_deck
from referee.games.draws import KeyedDraws
from referee.games.mailcheck import Check, MailCheck, words
from referee.games.miser.rules import DECK_SIZE, card_text, draw_for_first, hand_text, sort_hand

SEATING = re.compile(r"^Seating \(play moves in this order\):\n((?:[ \t]+\d+\. .+\n)+)", re.M)
FIRST_DRAW = re.compile(r"^The draw for first player[^\n]*:\n(.*?)\n([^\n]+?) drew highest and "
                        r"goes first\.$", re.M | re.S)
DEALT = re.compile(r"^(.+?), here are the (\d+) cards dealt to you\.\n.*?\n\n[ \t]*(\S.*)$", re.M)


def check_miser(check: Check, seed: str) -> None:
    """The draw for first player (``first``, ruling MI-2) and the player's
    own hand (``deal``, ruling MI-1) are the seed's."""
    seatings = check.find(SEATING)
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
    for f in check.find(FIRST_DRAW):
        shown = [words(line) for line in f.match.group(1).splitlines() if line.strip()]
        if shown != lines:
            check.mismatch(f.mail, f"the draw for first player shows {'; '.join(shown)}, but "
                           f"the seed draws {'; '.join(lines)}")
        elif f.match.group(2).strip() != names[first]:
            check.mismatch(f.mail, f"{f.match.group(2).strip()} goes first, but the seed's "
                           f"draw makes it {names[first]}")
    deck = [str(c) for c in full_deck()]
    draws.rng("deal").shuffle(deck)
    rest = deck[DECK_SIZE % n:]
    for f in check.find(DEALT):
        name = f.match.group(1).strip()
        if name not in names:
            check.mismatch(f.mail, f"a hand dealt to {name}, who is not in the seating")
            continue
        dealt = hand_text(sort_hand(rest[names.index(name)::n]))
        if words(f.match.group(3)) != dealt:
            check.mismatch(f.mail, f"the hand dealt to {name} is {words(f.match.group(3))}, "
                           f"but the seed deals {dealt}")


class MiserMailCheck(MailCheck):
    """The seed, then the draw for first player and the hand (:func:`check_miser`)."""

    def draws(self, check: Check, seed: str) -> None:
        check_miser(check, seed)
