"""What a player checks of Spades from their mails (``referee verify TAG
--mail PATH``): each hand opens the commitment published for their seat.
The seed stays with the referee (ruling SP-17): no seed is checked."""

from __future__ import annotations

import re

from referee.games.mailcheck import Check, MailCheck, sha256, words

HAND_SHA = re.compile(r"^[ \t]*hand-sha256 (.+?):[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)
#: A hand mail: the name, the round, and the hand's four lines after the
#: blank line that ends the sentence (bounded: linear in the mail).
HAND = re.compile(r"^([^\n]+?), here are your 13 cards for round (\d{1,6})\.[^\n]*\n"
                  r"(?:[^\n]+\n){0,4}\n((?:[^\n]+\n?){1,6})", re.M)
HAND_SALT = re.compile(r"^[ \t]*hand-salt:[ \t]*([0-9a-fA-F]{32})[ \t]*$", re.M)


def hand_commitment(hand: str, salt: str) -> str:
    """SHA-256 of ``hand: CARDS`` and ``salt: SALT``, each line ending in a
    newline; the cards as the hand mail writes them, single spaces."""
    return sha256(f"hand: {words(hand)}\nsalt: {salt}\n")


def check_spades(check: Check) -> None:
    """Each round's hand mail, with its salt, opens the hand's commitment the
    public mail starting the round gave for the player's seat (ruling SP-17:
    the seed stays with the referee)."""
    hands = check.find(HAND)
    if not hands:
        check.missing("a mail with your hand for a round")
        return
    commitments = check.find(HAND_SHA)
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
            check.mismatch(f.mail, f"round {number}'s hand {words(hand)} with its salt does "
                           f"not open {name}'s hand-sha256 {published}")


class SpadesMailCheck(MailCheck):
    """The hands' commitments alone (:func:`check_spades`): no seed."""

    def __call__(self, check: Check) -> None:
        check_spades(check)
