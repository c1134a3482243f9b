"""What a player checks of Spades from their mails (``referee verify TAG
--mail PATH``): each hand opens the commitment published for their seat,
and each move the referee made for them when they were late is one rule 7
allows: a bid of 2, or a card of their hand they could legally play. The
seed stays with the referee (ruling SP-17): no seed is checked, so which
legal card the seed drew cannot be; nor can the other seats' hands."""

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


#: A card played, as the reports show it: "  Trick 3: Alice plays 4♠".
PLAY = re.compile(r"^[ \t]*Trick (\d{1,2}): ([^\n]{1,200}?) plays (10|[2-9JQKA])([♠♥♦♣])\.?$",
                  re.M)
#: What the referee did for the player when they were late (the mail
#: ``deadline_yours``, a paragraph's words joined).
LATE = re.compile(r"No (.{1,200}?) came from you by the deadline, .{1,80}?: the referee "
                  r"(.{1,300}?), (?:as|by) [^.]{1,200}\.")
LATE_CARD = re.compile(r"played (10|[2-9JQKA])([♠♥♦♣]) for you, chosen at random among the cards "
                       r"you could legally play")
#: Rule 7: "a bid of 2 is made" for a player whose bid is late.
LATE_BID = "bid 2 for you"


def hand_cards(hand: str) -> set[str]:
    """The cards of a hand mail's four lines: ``♠ K Q 9`` -> K♠ Q♠ 9♠."""
    out: set[str] = set()
    for line in hand.splitlines():
        parts = line.split()
        if parts and parts[0] in "♠♥♦♣" and len(parts[0]) == 1:
            out.update(f"{rank}{parts[0]}" for rank in parts[1:] if rank != "-")
    return out


def check_late_moves(check: Check) -> None:
    """Each move the referee made for the player past a deadline (rule 7):
    for a bid, 2; for a card, one of the hand of the round they still held
    (by the hand mail and the plays the reports show), of the suit led if
    they held that suit."""
    hands = {f.mail: f for f in check.find(HAND)}
    plays: dict[int, list[re.Match[str]]] = {}
    for f in check.find(PLAY):
        plays.setdefault(f.mail, []).append(f.match)
    me, held = "", set[str]()
    tricks: dict[int, list[tuple[str, str]]] = {}
    for i, mail in enumerate(check.mails):
        if i in hands:
            me = hands[i].match.group(1).strip()
            held = hand_cards(HAND_SALT.sub("", hands[i].match.group(3)))
            tricks = {}
        late = next((m for p in mail.text.split("\n\n", 12)[:12]
                     if (m := LATE.fullmatch(words(p[:2000]))) is not None), None)
        if late is not None:
            missing, done = late.group(1), late.group(2)
            card = LATE_CARD.fullmatch(done)
            if missing == "bid" and done != LATE_BID:
                check.mismatch(i, f"for your late bid the referee {done[:100]}, but rule 7 "
                               "makes a bid of 2")
            elif missing == "card" and card is None:
                check.mismatch(i, f"for your late card the referee {done[:100]}, which is not "
                               "a card played at random as rule 7 says")
            elif card is not None and held:
                shown, suit = card.group(1) + card.group(2), card.group(2)
                open_tricks = [t for t, played in tricks.items() if len(played) < 4]
                led = tricks[max(open_tricks)][0][1][-1] if open_tricks else None
                if shown not in held:
                    check.mismatch(i, f"the referee played {shown} for you, a card you did not "
                                   "hold")
                elif led and suit != led and any(c.endswith(led) for c in held):
                    check.mismatch(i, f"the referee played {shown} for you, but {led} was led "
                                   f"and you held {led}: rule 3 did not allow it")
        for m in plays.get(i, []):
            number, who = int(m.group(1)), m.group(2).strip()
            put = m.group(3) + m.group(4)
            played = tricks.setdefault(number, [])
            if any(w == who for w, _ in played) or len(played) >= 4:
                continue  # the same play shown again
            played.append((who, put))
            if who == me:
                held.discard(put)


class SpadesMailCheck(MailCheck):
    """The hands' commitments alone (:func:`check_spades`): no seed."""

    def __call__(self, check: Check) -> None:
        check_spades(check)
        check_late_moves(check)
