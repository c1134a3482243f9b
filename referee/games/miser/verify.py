"""What a player checks of Miser from their mails (``referee verify TAG
--mail PATH``): the draw for first player, their own hand, the cards
removed face down at the deal (how many, and that none of them is ever
seen in play), and each move the referee made for them when they were
late (ruling MI-15: a pass, a lapsed offer, "flip", "done", or a card of
their hand put face down at random)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from referee.games.cards import full_deck
from referee.games.draws import KeyedDraws
from referee.games.mailcheck import Check, MailCheck, late_moves, words
from referee.games.miser.rules import (
    DECK_SIZE,
    MAX_PLAYERS,
    card_text,
    draw_for_first,
    hand_text,
    sort_hand,
)

SEATING = re.compile(r"^Seating \(play moves in this order\):\n((?:[ \t]+\d+\. .+\n)+)", re.M)
#: The draw for first player: its heading, then its rows (a row a round of
#: drawing, ruling MI-2), then who goes first; read line by line.
FIRST_DRAW = re.compile(r"^The draw for first player[^\n]*:$", re.M)
WENT_FIRST = re.compile(r"^([^\n]+?) drew highest and goes first\.$")
DEALT = re.compile(r"^([^\n]+?), here are the (\d{1,2}) cards dealt to you\.\n[^\n]*\n\n[ \t]*"
                   r"(\S[^\n]*)$", re.M)
REMOVED = re.compile(r"^(\d{1,2}) cards? (?:was|were) first removed face down", re.M)
#: A card as the mails show it: ``A♠``, ``10♥``.
CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9JQKA])([♠♥♦♣])")
#: What the referee does for each step missed (ruling MI-15), but a card.
LATE_DONE = ("passed for you", "let the offer lapse", 'wrote "flip" for you',
             'wrote "done" for you')
LATE_CARD = re.compile(r"put (10|[2-9JQKA])([♠♥♦♣]) face down for you, drawn at random from "
                       r"your hand(?: \(the draw timeout/([0-9]{1,3})/((?:contract-[0-9]{1,6}"
                       r"(?:\.[0-9]{1,3})?:card:[0-9]{1,3})|(?:attack-[0-9]{1,6}:[0-9]{1,3}))\))?")
#: A card the player put down or bid, as their transcript says it.
OWN_CARD = re.compile(r"^  DONE \([^\n]{0,80}\): [^\n]{0,200}$", re.M)


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
    if n > MAX_PLAYERS:
        check.mismatch(seatings[0].mail, f"a seating of {n} players cannot be read: 52 cards "
                       f"deal {MAX_PLAYERS} players at most")
        return
    draws = KeyedDraws(seed)
    first, rows = draw_for_first(n, draws.rng("first"))
    lines = [", ".join(f"{names[p]} {card_text(c)}" for p, c in enumerate(row) if c)
             for row in rows]
    draw_spans: dict[int, list[tuple[int, int]]] = {}
    for f in check.find(FIRST_DRAW):
        text = check.mails[f.mail].text
        shown: list[str] = []
        at, went = f.match.end() + 1, None
        for _ in range(n + 2):  # a row a round of drawing: ties draw again
            end = text.find("\n", at)
            line = text[at:end if end >= 0 else len(text)]
            at = (end if end >= 0 else len(text)) + 1
            if (went := WENT_FIRST.match(line)) is not None or not line.strip():
                break
            shown.append(words(line))
        draw_spans.setdefault(f.mail, []).append((f.match.start(), at))
        if went is None:
            check.mismatch(f.mail, "the draw for first player cannot be read: no line says "
                           "who drew highest")
        elif shown != lines:
            check.mismatch(f.mail, f"the draw for first player shows {'; '.join(shown)[:300]}, "
                           f"but the seed draws {'; '.join(lines)}")
        elif went.group(1).strip() != names[first]:
            check.mismatch(f.mail, f"{went.group(1).strip()[:100]} goes first, but the seed's "
                           f"draw makes it {names[first]}")
    check_first_in_subjects(check, names[first])
    deck = [str(c) for c in full_deck()]
    draws.rng("deal").shuffle(deck)
    removed, rest = deck[:DECK_SIZE % n], deck[DECK_SIZE % n:]
    check_removed(check, removed, draw_spans)
    hands: dict[str, list[str]] = {}
    for f in check.find(DEALT):
        name = f.match.group(1).strip()
        if name not in names:
            check.mismatch(f.mail, f"a hand dealt to {name}, who is not in the seating")
            continue
        hands[name] = rest[names.index(name)::n]
        dealt = hand_text(sort_hand(hands[name]))
        if words(f.match.group(3)) != dealt:
            check.mismatch(f.mail, f"the hand dealt to {name} is {words(f.match.group(3))[:300]}, "
                           f"but the seed deals {dealt}")
    check_late_moves(check, [card_text(c) for hand in hands.values() for c in hand],
                     draws, list(hands.values()))


#: The opening's subject (and its heading, where mails are bundled), alone
#: or with what the mail bundles after it ("...: your turn (secret)").
OPENING_FIRST = re.compile(r"^(?:\[[^\]\n]{1,80}\] )?Miser begins: ([^\n]{1,200}?) goes first"
                           r"(?=$|[:;,] | \()", re.M)


def check_first_in_subjects(check: Check, first: str) -> None:
    """The opening's subject, and its heading in a mail that bundles it,
    name who goes first: the seed's draw."""
    for where, found in (("subject", check.in_subjects(OPENING_FIRST)),
                         ("heading", check.find(OPENING_FIRST))):
        for f in found:
            if f.match.group(1).strip() != first:
                check.mismatch(f.mail, f"its {where} says {f.match.group(1).strip()} goes "
                               f"first, but the seed's draw makes it {first}")


def check_removed(check: Check, removed: list[str],
                  draw_spans: dict[int, list[tuple[int, int]]]) -> None:
    """Ruling MI-1: the shuffled deck's first 52 mod n cards are removed
    face down, unseen by anyone. The opening says how many; none of the
    seed's removed cards may ever be seen in play (in a hand, put down,
    bid, turned up), only in the draw for first player, which is made
    before the deck is shuffled again (ruling MI-2)."""
    for f in check.find(REMOVED):
        if int(f.match.group(1)) != len(removed):
            check.mismatch(f.mail, f"{f.match.group(1)} cards are said to be removed face down, "
                           f"but 52 cards dealt equally among these players leave "
                           f"{len(removed)}")
    gone = {card_text(c) for c in removed}
    for i, mail in enumerate(check.mails):
        spans = draw_spans.get(i, [])
        at = 0
        for line in mail.text.split("\n"):
            start, at = at, at + len(line) + 1
            if line.startswith(">") or any(s <= start < e for s, e in spans):
                continue  # the player's own words quoted back; the draw for first player
            card = next((m.group(0) for m in CARD.finditer(line) if m.group(0) in gone), None)
            if card is not None:
                check.mismatch(i, f"it shows {card} in play, but the seed removed {card} face "
                               "down at the deal, unseen by anyone")
                break


@dataclass
class Hands:
    """What the player's mails show of their cards: the hands dealt (as
    codes, ``KD``), the cards they put down or bid so far (as the mails
    show them, ``K♦``), and the draws' keys already used."""

    draws: KeyedDraws | None
    dealt: list[list[str]]
    played: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)


def check_late_moves(check: Check, held: list[str], draws: KeyedDraws | None = None,
                     dealt: list[list[str]] | None = None) -> None:
    """Each move the referee made for the player when they were late
    (ruling MI-15): a pass for a turn, a lapsed offer for an answer,
    "flip" in an attack, "done" in the bidding; for a card owed, one of
    the cards dealt to them that they had not put down or bid before,
    and, where the mail names the draw (``(the draw timeout/SEAT/KEY)``),
    the card that draw takes from the hand they held then, sorted as the
    engine sorts it (:meth:`Miser.timeout_action`)."""
    hands = Hands(draws, dealt or [])
    for i, mail in enumerate(check.mails):
        for f in OWN_CARD.finditer(mail.text):
            hands.played.update(m.group(0) for m in CARD.finditer(f.group(0)))
        for missing, done in late_moves(mail.text):
            check_late_move(check, i, missing, done, held, hands)


def check_late_move(check: Check, i: int, missing: str, done: str, held: list[str],
                    hands: Hands) -> None:
    """One move the referee made for the late player (:func:`check_late_moves`)."""
    played = hands.played
    card = LATE_CARD.fullmatch(done)
    if card is not None:
        shown = card.group(1) + card.group(2)
        if missing != "card":
            check.mismatch(i, f"the referee put a card down for you, but what was late is "
                           f"{missing[:100]}, not a card")
        elif shown not in held or shown in played:
            check.mismatch(i, f"the referee put {shown} face down for you, a card you did "
                           "not hold")
        elif card.group(3) is not None:
            check_late_draw(check, i, shown, f"{int(card.group(3))}/{card.group(4)}", hands)
        played.add(shown)
        return
    allowed = ("let the offer lapse",) if missing.startswith("answer to") else LATE_DONE
    if not done.startswith(allowed):
        check.mismatch(i, f"for your late {missing[:100]} the referee {done[:100]}, which "
                       "is not a move the house rule for silent players makes (it makes: "
                       f"{'; '.join(allowed)})")


def check_late_draw(check: Check, i: int, shown: str, key: str, hands: Hands) -> None:
    """The card put down for the late player is the one the draw
    ``timeout/SEAT/KEY`` takes from the hand they held then: the hand dealt
    to them less the cards their mails show put down or bid before."""
    if key in hands.keys:
        check.mismatch(i, f"the draw timeout/{key} is named twice: each step the referee "
                       "takes for a late player has its own draw")
        return
    hands.keys.add(key)
    if hands.draws is None:
        return
    hand = next((h for h in hands.dealt if shown in {card_text(c) for c in h}), None)
    if hand is None:
        return
    left = sorted(c for c in hand if card_text(c) not in hands.played)
    drawn = card_text(hands.draws.rng("timeout", *key.split("/", 1)).choice(left))
    if drawn != shown:
        check.mismatch(i, f"the referee put {shown} face down for you, but the draw "
                       f"timeout/{key} takes {drawn} from the {len(left)} cards you held "
                       f"({hand_text(sort_hand(left))})")


class MiserMailCheck(MailCheck):
    """The seed, then the draw for first player and the hand (:func:`check_miser`)."""

    def draws(self, check: Check, seed: str) -> None:
        check_miser(check, seed)
