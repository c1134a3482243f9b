"""What a player checks of Spades from their mails (``referee verify TAG
--mail PATH``): each hand opens the commitment published for their seat,
and each move the referee made for them when they were late is one rule 7
allows: a bid of 2, or a card of their hand they could legally play. The
seed stays with the referee (ruling SP-17): no seed is checked, so which
legal card the seed drew cannot be; nor can the other seats' hands."""

from __future__ import annotations

import re

from referee.games.mailcheck import Check, MailCheck, late_moves, sha256, words

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
        salt = HAND_SALT.search(check.mails[f.mail].text, f.match.start())
        if salt is None:
            check.mismatch(f.mail, f"round {number}'s hand mail gives no hand-salt")
            continue
        hand = HAND_SALT.sub("", f.match.group(3))
        mine = [c for c in commitments if c.mail <= f.mail and c.match.group(1).strip() == name]
        if not mine:
            check.missing(f"the mail starting round {number} (with {name}'s hand-sha256)")
            continue
        published = mine[-1].match.group(2).lower()
        if hand_commitment(hand, salt.group(1)) != published:
            check.mismatch(f.mail, f"round {number}'s hand {words(hand)} with its salt does "
                           f"not open {name}'s hand-sha256 {published}")


#: What a mail asking for the player's card shows: the trick so far (its
#: first card is the suit led), the cards they may play, and their hand.
TRICK_SO_FAR = re.compile(r"^Trick \d{1,2}: ([^\n]{1,400})\.$", re.M)
MAY_PLAY = re.compile(r"^You may play: ([^\n]{1,200})$", re.M)
YOUR_HAND = re.compile(r"^Your hand:\n((?:[♠♥♦♣] [^\n]{0,60}\n){4})", re.M)
LATE_CARD = re.compile(r"played (10|[2-9JQKA])([♠♥♦♣]) for you, chosen at random among the cards "
                       r"you could legally play")
#: Rule 7: "a bid of 2 is made" for a player whose bid is late.
LATE_BID = "bid 2 for you"
_CARD = re.compile(r"(10|[2-9JQKA])([♠♥♦♣])")


def hand_cards(hand: str) -> set[str]:
    """The cards of a hand's four lines: ``♠ K Q 9`` -> K♠ Q♠ 9♠."""
    out: set[str] = set()
    for line in hand.splitlines():
        parts = line.split()
        if parts and len(parts[0]) == 1 and parts[0] in "♠♥♦♣":
            out.update(f"{rank}{parts[0]}" for rank in parts[1:] if rank != "-")
    return out


#: A card said played, in a subject or a heading: ``Trick 4: Bob plays Q♥``.
PLAYS = re.compile(r"Trick \d{1,2}: ([^\n]{1,80}?) plays (10|[2-9JQKA])([♠♥♦♣])")


def check_said_played(check: Check, i: int, name: str | None, card: str) -> None:
    """Where the mail telling the player which card the referee played for
    them says, in its subject or a heading, that they played one, it is
    that card."""
    if name is None:
        return
    said = [("subject", m) for m in PLAYS.finditer(check.mails[i].subject)]
    said += [("text", m) for m in check.find_in(i, PLAYS)]
    for where, m in said:
        if m.group(1).strip() == name and m.group(2) + m.group(3) != card:
            check.mismatch(i, f"its {where} says {name} plays {m.group(2)}{m.group(3)}, but "
                           f"the referee played {card} for you")
            return


def check_late_moves(check: Check) -> None:
    """Each move the referee made for the player past a deadline (rule 7):
    for a bid, 2; for a card, one the mail that asked for it said they may
    play, of the hand it showed them, of the suit led if that hand held it
    (rule 3), and the card the mail's subject and headings say they played."""
    hands = check.find(HAND)
    name = hands[0].match.group(1).strip() if hands else None
    asked: dict[str, object] = {}
    for i, mail in enumerate(check.mails):
        for missing, done in late_moves(mail.text):
            card = LATE_CARD.fullmatch(done)
            found = len(check.found)
            if missing == "bid" and done != LATE_BID:
                check.mismatch(i, f"for your late bid the referee {done[:100]}, but rule 7 "
                               "makes a bid of 2")
            elif missing == "card" and card is None:
                check.mismatch(i, f"for your late card the referee {done[:100]}, which is not "
                               "a card played at random as rule 7 says")
            elif card is not None and asked:
                shown, suit = card.group(1) + card.group(2), card.group(2)
                held = asked.get("held")
                legal = asked.get("legal")
                led = asked.get("led")
                if isinstance(held, set) and shown not in held:
                    check.mismatch(i, f"the referee played {shown} for you, a card you did not "
                                   "hold")
                elif isinstance(legal, set) and shown not in legal:
                    check.mismatch(i, f"the referee played {shown} for you, not one of the cards "
                                   f"you could legally play: {' '.join(sorted(legal))}")
                elif (isinstance(led, str) and isinstance(held, set) and suit != led
                      and any(c.endswith(led) for c in held)):
                    check.mismatch(i, f"the referee played {shown} for you, but {led} was led "
                                   f"and you held {led}: rule 3 did not allow it")
            if card is not None and len(check.found) == found:
                check_said_played(check, i, name, card.group(1) + card.group(2))
            asked = {}
        # What this mail asks for, if it asks the player for a card.
        if (may := list(check.find_in(i, MAY_PLAY))):
            trick = list(check.find_in(i, TRICK_SO_FAR))
            hand = list(check.find_in(i, YOUR_HAND))
            asked = {"legal": {m.group(0) for m in _CARD.finditer(may[-1].group(1))}}
            if hand:
                asked["held"] = hand_cards(hand[-1].group(1))
            first = _CARD.search(trick[-1].group(1)) if trick else None
            if first is not None and trick[-1].group(1) != "you lead":
                asked["led"] = first.group(2)


class SpadesMailCheck(MailCheck):
    """The hands' commitments alone (:func:`check_spades`): no seed."""

    def __call__(self, check: Check) -> None:
        check_spades(check)
        check_late_moves(check)
