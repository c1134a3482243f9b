"""Spades (rule text 001) by mail through the service, on Maildir + SQLite.

Every test plays one game with a fixed deal and seating, installed with the
engine's test hook (``Spades(deals=..., seating=...)``) in place of the
registered engine. Players write to the referee; the tests read what the
referee mailed back, and to whom. ``tests/test_e2e_spades.py`` plays the same
deal over real IMAP and SMTP servers.
"""

from __future__ import annotations

import hashlib
import mailbox
import random
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import referee.games
from referee.games.cards import SUIT_SYMBOLS, Card, full_deck
from referee.games.spades import Spades
from referee.games.spades.rules import card_text, hand_commitment
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE
from referee.store import models as m
from tests.test_referee import REF, SIGNATURE, T0, Club, body

NAMES = ("Alice", "Bob", "Carol", "Dave")
ADDRESS = {n: f"{n.lower()}@club.test" for n in NAMES}
EVERYONE = [ADDRESS[n] for n in NAMES]
DEADLINE = "Thu 05 Mar 2026 12:00 UTC"  # T0 + 3 days

#: The deal of round 1, in playing order (Alice, Bob, Carol, Dave; teams
#: Alice & Carol, Bob & Dave). Played as SCRIPT, Alice takes 5 tricks, Bob 5,
#: Carol 3 and Dave none.
DEAL = [
    "AH KH QH JH 2C 7C AD 10D 2S 4S 6S 7S 9S",
    "3H 5H 8H AC KC QC JC 2D KD AS 5S 8S 10S",
    "4H 6H 9H 3C 5C 8C 10C 3D 5D 3S QS KS JS",
    "2H 7H 10H 4C 6C 9C 4D 6D 7D 8D 9D JD QD",
]
SEATING = [1, 2, 3, 4]  # seat positions in playing order: the players as listed
HANDS = {name: set(DEAL[i].split()) for i, name in enumerate(NAMES)}

#: Round 1 bids, in bidding order: Alice and Bob bid 4, Alice first, so she leads.
BIDS = [("Alice", "bid 4"), ("Bob", "bid 4"), ("Carol", "bid 3"), ("Dave", "bid nil")]

#: Round 1 card by card: (player, command) for 13 tricks, in every spelling.
SCRIPT: list[tuple[str, str]] = [
    (name, text)
    for trick in (
        [("Alice", "play AH"), ("Bob", "play 3♥"), ("Carol", "play four of hearts"),
         ("Dave", "play 2h")],
        [("Alice", "play K♥"), ("Bob", "play the five of hearts"), ("Carol", "play 6H"),
         ("Dave", "play 7h")],
        [("Alice", "play queen of hearts"), ("Bob", "play 8H"), ("Carol", "play 9♥"),
         ("Dave", "play 10H")],
        [("Alice", "play 2C"), ("Bob", "play AC"), ("Carol", "play 3C"), ("Dave", "play 4C")],
        [("Bob", "play KC"), ("Carol", "play 5C"), ("Dave", "play 6C"), ("Alice", "play 7C")],
        [("Bob", "play QC"), ("Carol", "play 8C"), ("Dave", "play 9C"), ("Alice", "play 2S")],
        [("Alice", "play AD"), ("Bob", "play 2D"), ("Carol", "play 3D"), ("Dave", "play 4D")],
        [("Alice", "play 10d"), ("Bob", "play KD"), ("Carol", "play 5D"), ("Dave", "play 6D")],
        [("Bob", "play AS"), ("Carol", "play 3S"), ("Dave", "play 7D"), ("Alice", "play 4S")],
        [("Bob", "play 5S"), ("Carol", "play QS"), ("Dave", "play 8D"), ("Alice", "play 6S")],
        [("Carol", "play KS"), ("Dave", "play 9D"), ("Alice", "play 7S"), ("Bob", "play 8S")],
        [("Carol", "play JS"), ("Dave", "play jd"), ("Alice", "play 9S"), ("Bob", "play TS")],
        [("Carol", "play 10C"), ("Dave", "play QD"), ("Alice", "play JH"), ("Bob", "play JC")],
    )
    for name, text in trick
]  # fmt: skip

#: The command examples of the opening name cards, the same in every game.
OPENING_EXAMPLES = "  bid 4          bid nil          play QH          play 10♦\n"


# -- the table ------------------------------------------------------------------------


class MailClub(Club):
    """:class:`Club`, reading only the mail sent since the last look (the
    parent parses the whole outbox every time)."""

    def __init__(self, root: Path, **referee: str) -> None:
        super().__init__(root, **referee)
        self.seen: set[str] = set()

    def new_mail(self) -> list[EmailMessage]:
        box = mailbox.Maildir(self.root / "out", create=True)
        fresh = []
        for key in box.iterkeys():
            if key not in self.seen:
                self.seen.add(key)
                msg = message_from_bytes(box.get_bytes(key), policy=default)
                assert isinstance(msg, EmailMessage)
                fresh.append(msg)
        fresh.sort(key=lambda x: int(str(x["Message-ID"]).split(".")[1]))
        return fresh


class Table:
    """A game of Spades for Alice, Bob, Carol and Dave, played by mail."""

    def __init__(self, club: MailClub, tag: str) -> None:
        self.club, self.tag = club, tag
        self.opening = club.poll()

    def move(self, name: str, text: str, now: datetime | None = None,
             **mail: Any) -> list[EmailMessage]:
        """``name`` mails ``text`` to the referee; returns what one pass sent."""
        self.club.send(ADDRESS[name], text, subject=f"[{self.tag}] move", **mail)
        return self.club.poll(now)

    def bid(self) -> list[EmailMessage]:
        mails: list[EmailMessage] = []
        for name, text in BIDS:
            mails += self.move(name, text)
        return mails

    def play(self, moves: Iterable[tuple[str, str]]) -> list[EmailMessage]:
        """Each move by mail; each must be done. Returns the mail of the last."""
        mails: list[EmailMessage] = []
        for name, text in moves:
            mails = self.move(name, text)
            answer = body(reply(mails, name))
            assert "DONE (play " in answer and "Misplay" not in answer, answer
        return mails

    def state(self) -> dict[str, Any]:
        with self.club.referee.sessions() as db:
            game = db.scalar(select(m.Game).where(m.Game.tag == self.tag))
            assert game is not None
            return dict(game.state)

    def scores(self) -> list[int]:
        return list(self.state()["scores"])

    def hand(self, name: str) -> set[str]:
        return set(self.state()["hands"][NAMES.index(name)])

    def status(self) -> dict[str, Any]:
        return self.club.referee.reading.status(self.tag)[0]


@pytest.fixture
def club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MailClub]:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    c = MailClub(tmp_path)
    yield c
    c.referee.close()


def new_table(club: MailClub, **options: str) -> Table:
    """A table whose players get every mail as it happens (``mail all``), so
    each kind of mail is read in full; ``test_spades_quiet.py`` plays the
    default, ``mail turns``."""
    # Every card by mail, as the scripts write it: a forced card would play
    # itself (issue 37; tests/test_e2e_standing.py has that).
    options = {"mail": "all", "autoplay": "off", **options}
    tag = club.referee.operator.create_game(
        "spades", [f"{n} <{ADDRESS[n]}>" for n in NAMES], options=options, now=T0, seed="sp")
    return Table(club, tag)


@pytest.fixture
def table(club: MailClub) -> Table:
    return new_table(club)


# -- reading mail -----------------------------------------------------------------------


def kind(msg: EmailMessage) -> str:
    return str(msg["X-Referee-Mail"])


def kinds(msg: EmailMessage) -> list[str]:
    """What a mail carries: its one kind, or each kind of a mail of several."""
    return [k for k in kind(msg).split() if k != COMPOSITE]


_HEADLINE = re.compile(r"^(?P<head>[^\n]+)\n(?P<rule>-+)\n", re.M)


def sections(msg: EmailMessage) -> list[tuple[str, str]]:
    """The parts of a mail as (headline, text), in order: a mail of one
    part is its subject (less the tag and "(secret)") and its text; a mail
    of several, each part under its underlined headline, the moves it
    carries as lines under "Since your last mail:" ("", their lines)."""
    # The mail's own signature is its last: a resent report keeps its own.
    head, sep, _ = body(msg).rpartition("\n-- \n")
    text = (head if sep else body(msg)).removeprefix(SECRET_NOTE).strip("\n")
    if not kind(msg).startswith(COMPOSITE):
        head = re.sub(r"^\[[^]]+\] |^Re: | \(secret\)$", "", str(msg["Subject"]))
        return [(head, text)]
    found = [h for h in _HEADLINE.finditer(text)
             if len(h["rule"]) == min(len(h["head"]), 72)]
    out: list[tuple[str, str]] = []
    start = 0
    for i, h in enumerate(found):
        if h.start() > start and text[start:h.start()].strip():
            out.append(("", text[start:h.start()].strip("\n")))
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append((h["head"], text[h.end():end].strip("\n")))
        start = end
    if text[start:].strip():
        out.append(("", text[start:].strip("\n")))
    return out


def section(msg: EmailMessage, headline: str) -> str:
    """The text of the part of ``msg`` whose headline starts ``headline``."""
    (found,) = [t for h, t in sections(msg) if h.startswith(headline)]
    return found


def rcpts(msg: EmailMessage) -> list[str]:
    return [a.addr_spec for a in msg["To"].addresses]


def is_public(msg: EmailMessage) -> bool:
    """Sent to the list, to more than one player, or a player's own copy of
    a mail to all (not marked secret, not an answer to their mail)."""
    return (len(rcpts(msg)) > 1 or rcpts(msg)[0] not in EVERYONE
            or ("(secret)" not in str(msg["Subject"]) and kind(msg) != "transcript"))


def reply(mails: list[EmailMessage], name: str) -> EmailMessage:
    """The one mail in ``mails`` that answers a mail, which must go to
    ``name`` alone (with what else their mail caused for them)."""
    (answer,) = [x for x in mails if "transcript" in kinds(x)]
    assert rcpts(answer) == [ADDRESS[name]]
    return answer


def only(mails: list[EmailMessage], what: str) -> EmailMessage:
    (found,) = [x for x in mails if what in kinds(x)]
    return found


def announcement(mails: list[EmailMessage], what: str, headline: str = "") -> str:
    """The text of the notice of kind ``what`` to all four players: without
    a list, each gets it in their own mail (To: them alone, so a reply-all
    reaches the referee alone), all the same text, the part headed
    ``headline`` of a mail that carries more. ``headline`` (the notice's
    subject less the tag) is matched whole, in a mail of one part too; it
    may be left out only where each copy is a mail of its own."""
    copies = [x for x in mails if what in kinds(x)]
    assert [rcpts(x) for x in copies] == [[a] for a in EVERYONE], [x["To"] for x in copies]
    texts = set()
    for x in copies:
        (text,) = [t for h, t in sections(x) if h == headline or not headline]
        texts.add(text)
    assert len(texts) == 1, texts
    return texts.pop()


#: The headlines of the parts of a mail for one player alone: the answer to
#: their mail, their hand, their prompt to bid or play.
_PRIVATE = re.compile(r"Your mail|Your hand for round \d+ \(secret\)|Round \d+: your bid"
                      r"|Trick \d+: your card")


def public_parts(msg: EmailMessage) -> list[tuple[str, str]]:
    """The parts of ``msg`` that tell what every player may know, as
    (headline, text): a mail of one part as :func:`is_public` says; of a
    mail of several, every part but those for its recipient alone."""
    if not kind(msg).startswith(COMPOSITE):
        return sections(msg) if is_public(msg) else []
    return [(h, t) for h, t in sections(msg) if not _PRIVATE.fullmatch(h)]


def private_parts(msg: EmailMessage) -> list[str]:
    """The text of each part of ``msg`` for its recipient alone."""
    return [t for h, t in sections(msg) if (h, t) not in public_parts(msg)]


def underlined(headline: str) -> str:
    """A part's headline as a mail of several parts shows it."""
    return f"{headline}\n{'-' * min(len(headline), 72)}\n"


_RANK = r"(10|[2-9JQKA])"
_CARD_PATTERNS = (
    re.compile(_RANK + r"([♠♥♦♣])"),
    re.compile(r"(?<![\w])" + _RANK + r"([SHDC])(?!\w)"),
    re.compile(r"(?i)\b(ace|king|queen|jack|ten|nine|eight|seven|six|five|four|three|two|"
               r"10|[2-9])\s+of\s+(spades|hearts|diamonds|clubs)\b"),
)
#: A line of a hand listing, as the secret mails show hands: "♥ A K 10 2" or "♣ -".
HAND_LINE = re.compile(r"^\s*[♠♥♦♣]\s+(-|(10|[2-9JQKA])( (10|[2-9JQKA]))*)\s*$", re.M)


def cards_named(text: str) -> set[str]:
    """Every card ``text`` names, in any spelling the referee or a player uses."""
    found: set[str] = set()
    for pattern, joint in zip(_CARD_PATTERNS, ("", "", " of "), strict=True):
        for match in pattern.finditer(text):
            card = Card.parse(joint.join(match.groups()))
            assert card is not None, match.group(0)
            found.add(str(card))
    return found


def hand_text(cards: Iterable[str]) -> str:
    """A hand as the secret mails list it (♠ ♥ ♣ ♦, high to low)."""
    order = ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")
    held = set(cards)
    lines = []
    for suit in "SHCD":
        ranks = [r for r in order if f"{r}{suit}" in held]
        lines.append(f"{SUIT_SYMBOLS[suit]} {' '.join(ranks) or '-'}")
    return "\n".join(lines)


# -- the opening and the deal -----------------------------------------------------------

OPENING = f"""\
A game of Spades (rule text 001) begins, to 500 points.

Playing order (partners sit opposite):
  1. Alice (team 1)
  2. Bob (team 2)
  3. Carol (team 1)
  4. Dave (team 2)

Teams were assigned at random. Each player has been sent their 13 cards in a secret mail.
Bids go round from Alice: Alice, Bob, Carol, Dave.
Valid bids: nil (0), 2 to 13 (there is no bid of 1). The highest
bidder leads the first trick; spades may be led at any time.

Moves are public: write them to the referee, one per line:
{OPENING_EXAMPLES}\
  hand           (your cards, in a secret reply)
  concede        (the game ends when both partners concede)

A misplay (a card you do not hold, or off suit while you hold the suit
led) costs your team 100 points; a second in one hand or a third in the
game forfeits it. If you do not act by your deadline, the referee bids 2
or plays a random legal card for you.

Every random draw of this game (the seating, each deal, a card the
referee plays for a late player) comes from a secret seed, fixed now.
Its SHA-256 fingerprint:
  seed-sha256: 52d4f9e16d47dee6c90b5f6297a42ff67102293b3823e292b21513e14968b5d1
Nobody may know what cards a player holds, even after the game, so the
seed stays with the referee's operator, who can audit every deal with it.
Instead, each deal is committed hand by hand: the mail that starts a round
gives the SHA-256 fingerprint of each player's hand, and your secret hand
mail gives you the salt to check your own.

The SHA-256 fingerprint of each hand of round 1, as dealt
(your secret hand mail tells you how to check yours):
  hand-sha256 Alice: 633469c6c3070be6faa48f9299a3d51d9deb97602801356abe0adf64e7e0afc6
  hand-sha256 Bob: c32a63349d3dc833fedd5b1526c6b8ce0b47918d3781aa044b70dc80f19b3b68
  hand-sha256 Carol: 06e9da0b8e367a0b83d040a7ea14f76100b29eec49f98ed1854a460eeac9b456
  hand-sha256 Dave: 14bcd681ab65bea8964d4079927a580854441c2723e13075efa3613873bec3d9

Team 1 (Alice & Carol): 0 points, 0 bags
Team 2 (Bob & Dave): 0 points, 0 bags

Next: Alice, a bid (due {DEADLINE})."""

#: Alice's hand, the part of her opening mail after the opening.
ALICE_DEAL = f"""\
Alice, here are your 13 cards for round 1. Keep them to yourself:
nobody may reveal what cards a player holds.

♠ 9 7 6 4 2
♥ A K Q J
♣ 7 2
♦ A 10

The mail that starts the round gave a SHA-256 fingerprint of your hand
(hand-sha256 Alice). Its salt, known to you alone:
  hand-salt: 4875bc572789f00f4c259d44b4c23e40
To check the fingerprint, run
    printf 'hand: %s\\nsalt: %s\\n' '♠ 9 7 6 4 2 ♥ A K Q J ♣ 7 2 ♦ A 10' \\
      4875bc572789f00f4c259d44b4c23e40 | sha256sum

It is your turn to bid, by {DEADLINE}: write "bid 4", "bid nil", ...
Valid bids: nil, 2 to 13."""


def test_the_opening_goes_to_all_four_with_seating_teams_and_the_first_bidder(
        table: Table) -> None:
    assert announcement(table.opening, "opening", "Spades begins: Alice bids first") == OPENING
    # Each gets it with their hand, in one mail; Alice's asks for her bid.
    assert [x["Subject"] for x in table.opening] == [
        "[spades-1] Spades begins: Alice bids first: your bid (secret)",
        *["[spades-1] Spades begins: Alice bids first (secret)"] * 3]


def test_each_player_gets_their_13_cards_in_a_secret_mail_to_them_alone(table: Table) -> None:
    # One mail each, nothing else: the opening, then their hand (a mail of
    # its own before, eight in all).
    hands = table.opening
    assert [rcpts(x) for x in hands] == [[a] for a in EVERYONE]
    for name, mail in zip(NAMES, hands, strict=True):
        assert [h for h, _ in sections(mail)] == [
            "Spades begins: Alice bids first", "Your hand for round 1 (secret)"]
        assert mail["Subject"].endswith(" (secret)") and body(mail).startswith(SECRET_NOTE)
        hand = section(mail, "Your hand for round 1")
        assert hand_text(HANDS[name]) in hand
        assert cards_named(hand) == set()  # listed by suit, never card by card
        for other in set(NAMES) - {name}:
            assert hand_text(HANDS[other]) not in body(mail)
    assert section(hands[0], "Your hand") == ALICE_DEAL
    assert "Now: Alice, a bid." in section(hands[1], "Your hand")
    # The whole text Alice gets.
    assert body(hands[0]) == (
        f"{SECRET_NOTE}\n\n{underlined('Spades begins: Alice bids first')}{OPENING}\n\n"
        f"{underlined('Your hand for round 1 (secret)')}{ALICE_DEAL}\n\n{SIGNATURE}")


# -- bidding ------------------------------------------------------------------------------


def test_a_bid_of_1_is_refused_with_the_valid_bids_and_each_bid_is_announced_to_all(
        table: Table) -> None:
    mails = table.move("Alice", "bid 1")
    assert body(reply(mails, "Alice")).startswith(
        f"{SECRET_NOTE}\n\nAlice, here is what I did with your mail for spades-1.\n\n"
        "> bid 1\n  REFUSED (bid 1): "
        "1 is not a valid bid. The valid bids are 0 (nil), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, "
        "12 or 13.\n")
    assert len(mails) == 1 and table.state()["bids"] == [None] * 4
    mails = table.move("Bob", "bid 3")
    assert "REFUSED (bid 3): It is Alice's turn to bid, not yours." in body(reply(mails, "Bob"))
    assert len(mails) == 1

    mails = table.move("Alice", "bid 4")
    assert len(mails) == 4  # one each: Alice's answer and Bob's prompt carry the bid
    assert "DONE (bid 4): Alice bids 4." in section(reply(mails, "Alice"), "Your mail")
    news = announcement(mails, "bid", "Alice bids 4")
    assert news.startswith("Alice bids 4.\nBids so far: Alice 4.\n\n")
    assert f"Next: Bob, a bid (due {DEADLINE})." in news
    turn = only(mails, "your_turn")
    assert rcpts(turn) == [ADDRESS["Bob"]]
    assert turn["Subject"] == "[spades-1] Round 1: your bid (secret)"
    assert "Bids so far: Alice 4." in section(turn, "Round 1: your bid")

    table.move("Bob", "bid 4")
    table.move("Carol", "bid 3")
    mails = table.move("Dave", "bid nil")
    assert "DONE (bid 0): Dave bids nil. The bidding is over; Alice leads to trick 1." in body(
        reply(mails, "Dave"))
    news = announcement(mails, "bid", "Dave bids nil")
    assert news == (
        "Dave bids nil.\nBidding is over: Alice 4, Bob 4, Carol 3, Dave nil.\n"
        "Alice made the highest bid and leads the first trick.\n\n"
        "Team 1 (Alice & Carol): 0 points, 0 bags; this round bid 7, took 0\n"
        "Team 2 (Bob & Dave): 0 points, 0 bags; this round bid 4, took 0\n\n"
        f"Next: Alice, a card to trick 1 (due {DEADLINE}).")
    turn = only(mails, "your_turn")
    assert rcpts(turn) == [ADDRESS["Alice"]]
    assert turn["Subject"] == "[spades-1] Trick 1: your card (secret)"
    assert "Trick 1: you lead.\nYou may play: 9♠ 7♠ 6♠ 4♠ 2♠ A♥ K♥ Q♥ J♥ 7♣ 2♣ A♦ 10♦\n" in section(
        turn, "Trick 1: your card")
    assert table.state()["bids"] == [4, 4, 3, 0]


# -- playing cards ----------------------------------------------------------------------


LIST = "table@club.test"
LIST_ID = {"List-Id": "Spades table <table.club.test>"}


def test_with_a_list_moves_through_it_or_to_the_referee_count_once_and_reach_each_player(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 6: bids and plays are public. With a list, a move may come through
    it or straight to the referee; the list carries the reports (here the
    opening), each single move is announced to every player in their own
    mail, and answers and hands still go to each player alone."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    club = MailClub(tmp_path, public_list=LIST)
    table = new_table(club)
    post = only(table.opening, "opening")
    assert rcpts(post) == [LIST]
    # A post of the list (RFC 2369, 2919): a reply to all stays public.
    assert post["Reply-To"] is None and post["List-Post"] == f"<mailto:{LIST}>"
    assert post["List-Id"] == "<table.club.test>"
    for name in NAMES:
        (deal,) = [x for x in table.opening if kind(x) == "hand" and rcpts(x) == [ADDRESS[name]]]
        assert hand_text(HANDS[name]) in body(deal)
    assert len(table.opening) == 5  # the post, and each player's hand

    def announced(mails: list[EmailMessage], headline: str) -> None:
        """A single move: never a post of the list; each player has it."""
        assert all(LIST not in rcpts(x) for x in mails)
        assert announcement(mails, "bid", headline).startswith(f"{headline}.")

    # Through the list, as the list relays it.
    mails = table.move("Alice", "bid 4", to=LIST, headers=LIST_ID)
    assert "DONE (bid 4)" in body(reply(mails, "Alice"))
    announced(mails, "Alice bids 4")
    # Straight to the referee: public all the same.
    mails = table.move("Bob", "bid 4")
    assert "DONE (bid 4)" in body(reply(mails, "Bob"))
    announced(mails, "Bob bids 4")
    # To the list with the referee on Cc: the list's copy and the direct copy are
    # one message, applied once and answered once.
    mid = club.send(ADDRESS["Carol"], "bid 3", subject="[spades-1] bid", to=LIST, cc=REF)
    club.send(ADDRESS["Carol"], "bid 3", subject="[spades-1] bid", to=LIST, cc=REF,
              headers=LIST_ID, message_id=mid)
    mails = club.poll()
    assert "DONE (bid 3)" in body(reply(mails, "Carol"))
    announced(mails, "Carol bids 3")
    assert table.state()["bids"] == [4, 4, 3, None]
    # The referee's own post comes back through the list: dropped, unanswered.
    echo = message_from_bytes(post.as_bytes(), policy=default)
    echo["List-Id"] = LIST_ID["List-Id"]
    mailbox.Maildir(club.root / "in").add(echo.as_bytes())
    assert club.poll() == []
    assert table.state()["bids"] == [4, 4, 3, None]
    club.referee.close()


def test_a_card_in_a_reply_to_all_to_the_latest_list_post_is_played_not_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list carries only reports (here the opening): a player who plays
    by answering its latest post to all has seen the game since in their
    own mail, so the move is judged by the turn those mails showed, not
    by the post's, and a card for the trick they were asked for is played."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    club = MailClub(tmp_path, public_list=LIST)
    table = new_table(club)
    post = only(table.opening, "opening")
    table.bid()
    table.play(SCRIPT[:16])  # four tricks: Bob leads the fifth
    mails = table.move("Bob", "play KC", to=LIST, headers={
        **LIST_ID, "In-Reply-To": str(post["Message-ID"])})
    answer = body(reply(mails, "Bob"))
    assert "DONE (play KC): Bob plays K♣ to trick 5." in answer, answer
    assert "KC" not in table.hand("Bob")
    club.referee.close()


def test_a_card_is_read_as_qh_q_symbol_queen_of_hearts_or_10d_but_never_alone(
        table: Table) -> None:
    table.bid()
    mails = table.move("Alice", "Q♥")  # a card alone on a line is no play
    assert "> Q♥\n  REFUSED: Not a command: did you mean 'play Q♥'?" in body(reply(mails, "Alice"))
    assert table.hand("Alice") == HANDS["Alice"]
    read_as = {}
    for name, text in SCRIPT[:29]:
        mails = table.move(name, text)
        answer = body(reply(mails, name))
        found = re.search(r"DONE \((play \w+)\)", answer)
        assert found, answer
        read_as[text] = found.group(1)
    assert read_as["play AH"] == "play AH"
    assert read_as["play K♥"] == "play KH"
    assert read_as["play queen of hearts"] == "play QH"
    assert read_as["play 10d"] == "play 10D"
    assert read_as["play the five of hearts"] == "play 5H"
    assert read_as["play 2h"] == "play 2H"
    assert "10D" not in table.hand("Alice")


def test_following_suit_is_enforced_a_card_off_suit_is_a_misplay_costing_100(
        table: Table) -> None:
    table.bid()
    table.play(SCRIPT[:13])  # Alice leads 2♣ to trick 4; Bob holds clubs
    mails = table.move("Bob", "play AS")
    assert ("PENALTY (play AS): Misplay: Clubs were led and you hold clubs: you must follow "
            "suit. The card is void and your team scores -100 (misplays this hand: 1, this "
            "game: 1). Please play again.") in body(reply(mails, "Bob"))
    notice = announcement(mails, "misplay", "Misplay by Bob: team 2 scores -100")
    assert notice.startswith("Bob misplayed. The card is void and team 2 scores -100.\n")
    turn = only(mails, "your_turn")
    assert rcpts(turn) == [ADDRESS["Bob"]]
    assert "Trick 4: Alice 2♣.\nYou may play: A♣ K♣ Q♣ J♣\n" in section(turn, "Trick 4: your card")
    assert table.scores() == [0, -100]
    assert "AS" in table.hand("Bob") and table.state()["trick"] == ["2C"]
    table.play([("Bob", "play AC")])  # the same player plays again


MISPLAY_NOTICE = f"""\
Alice misplayed. The card is void and team 1 scores -100.
Team 1 misplays: 1 this hand, 1 this game.
Alice plays again.

Team 1 (Alice & Carol): -100 points, 0 bags; this round bid 7, took 0
Team 2 (Bob & Dave): 0 points, 0 bags; this round bid 4, took 0

Next: Alice, a card to trick 1 (due {DEADLINE})."""


def test_a_card_not_held_costs_100_and_the_public_notice_does_not_name_it(
        table: Table) -> None:
    table.bid()
    mails = table.move("Alice", "play 2D")  # Bob holds the 2♦
    assert ("PENALTY (play 2D): Misplay: You do not hold 2♦. The card is void and your team "
            "scores -100") in body(reply(mails, "Alice"))
    assert announcement(mails, "misplay", "Misplay by Alice: team 1 scores -100") == MISPLAY_NOTICE
    for mail in mails:
        for headline, text in public_parts(mail):
            assert cards_named(f"{headline}\n{text}") == set()
    turn = only(mails, "your_turn")
    assert rcpts(turn) == [ADDRESS["Alice"]]
    assert turn["Subject"].endswith(" (secret)")  # it shows the hand
    assert body(turn).startswith(f"{SECRET_NOTE}\n\n")
    assert section(turn, "Trick 1: your card").startswith(
        "You do not hold 2♦.\n\nAlice, it is your turn")
    assert table.scores() == [-100, 0]
    assert table.hand("Alice") == HANDS["Alice"] and table.state()["trick"] == []


def test_a_play_out_of_turn_is_refused_with_no_penalty_and_no_announcement(
        table: Table) -> None:
    table.bid()
    mails = table.move("Bob", "play 3H")
    assert [kind(x) for x in mails] == ["transcript"]
    assert "REFUSED (play 3H): It is Alice's turn to play, not yours." in body(
        reply(mails, "Bob"))
    mails = table.move("Carol", "play 2D")  # a card not held, out of turn: no misplay either
    assert "REFUSED (play 2D): It is Alice's turn to play, not yours." in body(
        reply(mails, "Carol"))
    assert table.scores() == [0, 0]
    assert table.state()["game_misplays"] == [0, 0]
    assert table.hand("Bob") == HANDS["Bob"]


TRICK_1 = f"""\
Trick 1: Alice A♥, Bob 3♥, Carol 4♥, Dave 2♥.
Alice wins it with A♥.

Team 1 (Alice & Carol): 0 points, 0 bags; this round bid 7, took 1
Team 2 (Bob & Dave): 0 points, 0 bags; this round bid 4, took 0

Next: Alice, a card to trick 2 (due {DEADLINE})."""


def test_a_completed_trick_is_announced_to_all_with_its_cards_winner_and_next_leader(
        table: Table) -> None:
    table.bid()
    mails = table.play(SCRIPT[:3])
    news = announcement(mails, "play", "Trick 1: Carol plays 4♥")
    assert news.startswith("Trick 1 so far: Alice A♥, Bob 3♥, Carol 4♥.\n")
    assert "You may play: 10♥ 7♥ 2♥\n" in section(only(mails, "your_turn"), "Trick 1: your card")
    mails = table.play(SCRIPT[3:4])
    assert ("DONE (play 2H): Dave plays 2♥ to trick 1. Alice wins trick 1 with A♥."
            in body(reply(mails, "Dave")))
    assert announcement(mails, "trick", "Trick 1 to Alice") == TRICK_1
    turn = only(mails, "your_turn")
    assert rcpts(turn) == [ADDRESS["Alice"]]
    assert "Trick 2: you lead." in section(turn, "Trick 2: your card")


def test_hand_is_answered_in_a_secret_mail_with_the_cards_still_held(table: Table) -> None:
    table.bid()
    table.play(SCRIPT[:20])  # five tricks
    mails = table.move("Dave", "hand")
    assert "> hand\n  DONE (hand): Your hand is below, for you alone." in section(
        reply(mails, "Dave"), "Your mail")
    secret = only(mails, "hand")
    assert rcpts(secret) == [ADDRESS["Dave"]]
    assert secret["Subject"].endswith(" (secret)") and body(secret).startswith(SECRET_NOTE)
    state = table.state()
    salt = state["hand_salts"][state["names"].index("Dave")]
    dealt = "♠ - ♥ 10 7 2 ♣ 9 6 4 ♦ Q J 9 8 7 6 4"  # the 8 held and the 5 played
    assert section(secret, "Your hand for round 1 (secret)") == f"""\
Dave, here are the 8 cards you hold now. Keep them to yourself:
nobody may reveal what cards a player holds.

♠ -
♥ -
♣ 9
♦ Q J 9 8 7 6 4

The mail that starts the round gave a SHA-256 fingerprint of your hand
as dealt, the cards you hold and those you played:
  {dealt}
(hand-sha256 Dave). Its salt, known to you alone:
  hand-salt: {salt}
To check the fingerprint, run
    printf 'hand: %s\\nsalt: %s\\n' '{dealt}' \\
      {salt} | sha256sum

Now: Bob, a card to trick 6."""
    # The printf line opens the fingerprint the round's first mail gave.
    printed = hashlib.sha256(f"hand: {dealt}\nsalt: {salt}\n".encode()).hexdigest()
    assert printed == state["hand_sha256"][state["names"].index("Dave")]
    assert len(mails) == 1  # the answer and the hand in one mail (two mails before)


# -- deadlines, resigning, conceding ----------------------------------------------------


def test_past_the_3_day_deadline_the_referee_plays_a_random_legal_card_and_says_so(
        table: Table) -> None:
    table.bid()
    table.play(SCRIPT[:1])  # Alice leads A♥; Bob owes a heart
    (reminder,) = table.club.poll(T0 + timedelta(days=2, hours=1))
    assert rcpts(reminder) == [ADDRESS["Bob"]]
    assert reminder["Subject"] == "[spades-1] Reminder: a card to trick 1"
    assert table.club.poll(T0 + timedelta(days=3) - timedelta(seconds=1)) == []
    mails = table.club.poll(T0 + timedelta(days=3, seconds=1))
    (card,) = HANDS["Bob"] - table.hand("Bob")
    assert card in {"3H", "5H", "8H"}  # a legal card: Bob must follow hearts
    news = announcement(mails, "play", f"Trick 1: Bob plays {card_text(card)}")
    assert "Next: Carol, a card to trick 1 (due Sun 08 Mar 2026 12:00 UTC)." in news
    # The others are told the card was the referee's, citing rule 7, before
    # the card; Bob, in words of his own, when his deadline was.
    for name in ("Alice", "Carol", "Dave"):
        (mail,) = [x for x in mails if rcpts(x) == [ADDRESS[name]]]
        assert " ".join(section(mail, "No card from Bob by the deadline").split()) == (
            f"No card came from Bob by the deadline: the referee played {card_text(card)} for "
            "them, chosen at random among the cards they could legally play, as rule 7 says.")
    (bobs,) = [x for x in mails if rcpts(x) == [ADDRESS["Bob"]]]
    assert " ".join(section(bobs, "The deadline passed: the referee moved for you").split()) == (
        "No card came from you by the deadline, Thu 05 Mar 2026 12:00 UTC: the referee played "
        f"{card_text(card)} for you, chosen at random among the cards you could legally play, "
        "as rule 7 says.")
    # One mail each (five before): Carol's carries her turn after the card.
    assert [kinds(x) for x in mails] == [["deadline", "play"], ["deadline_yours", "play"],
                                         ["deadline", "play", "your_turn"], ["deadline", "play"]]
    assert rcpts(only(mails, "your_turn")) == [ADDRESS["Carol"]]
    assert table.scores() == [0, 0]


def test_past_the_deadline_a_missing_bid_becomes_a_bid_of_2_and_the_referee_says_so(
        table: Table) -> None:
    table.move("Alice", "bid 4")
    mails = table.club.poll(T0 + timedelta(days=3, seconds=1))
    news = announcement(mails, "bid", "Bob bids 2")
    assert news.startswith("Bob bids 2.\nBids so far: Alice 4, Bob 2.\n")
    # The others are told the bid was the referee's, citing rule 7; Bob in
    # words of his own (his mail has not the others' part).
    for name in ("Alice", "Carol", "Dave"):
        (mail,) = [x for x in mails if rcpts(x) == [ADDRESS[name]]]
        assert section(mail, "No bid from Bob by the deadline") == (
            "No bid came from Bob by the deadline: the referee bid 2 for them, as\nrule 7 says.")
    (bobs,) = [x for x in mails if rcpts(x) == [ADDRESS["Bob"]]]
    assert kinds(bobs) == ["deadline_yours", "bid"]
    assert section(bobs, "The deadline passed: the referee moved for you") == (
        "No bid came from you by the deadline, Thu 05 Mar 2026 12:00 UTC: the\n"
        "referee bid 2 for you, as rule 7 says.")
    assert table.state()["bids"] == [4, 2, None, None]


def test_resign_hands_the_seat_to_a_bot_that_moves_at_once_and_everyone_is_told(
        table: Table) -> None:
    table.move("Alice", "bid 4")
    table.move("Bob", "bid 4")
    mails = table.move("Carol", "resign")
    assert ("> resign\n  DONE (resign): Carol has left the game; a bot that plays for its "
            "partner takes the seat.") in body(reply(mails, "Carol"))
    others = [ADDRESS[n] for n in ("Alice", "Bob", "Dave")]
    # One mail to each of the others, telling that Carol left and then the
    # bot's bid (six mails before), and Carol's answer: nothing else.
    assert len(mails) == 4
    left = [x for x in mails if "resign" in kinds(x)]
    assert [rcpts(x) for x in left] == [[a] for a in others]  # a copy each
    bot_bid = [x for x in mails if "bid" in kinds(x)]
    assert [rcpts(x) for x in bot_bid] == [[a] for a in others]
    for mail in left:
        (gone, bid) = public_parts(mail)
        assert gone == (
            "Carol has left: a bot plays for team 1",
            section(left[0], "Carol has left: a bot plays for team 1"))
        assert bid[0].startswith("Carol bids ")
    assert left[0]["Subject"] == "[spades-1] Carol has left: a bot plays for team 1"
    assert rcpts(only(mails, "your_turn")) == [ADDRESS["Dave"]]
    status = table.status()
    assert status["players"][2]["bot"] and status["to_move"] == "Dave"
    assert [d["name"] for d in status["deadlines"]] == ["Dave"]
    mails = table.move("Carol", "bid 5")  # Carol sits in no seat of the game any more
    assert "You have no seat in spades-1." in body(only(mails, "which_game"))


def test_the_game_ends_when_both_partners_concede_not_when_one_does(table: Table) -> None:
    table.bid()
    mails = table.move("Alice", "concede")
    news = announcement(mails, "concession", "Alice concedes")
    assert news.startswith(
        "Alice (team 1) concedes.\nThe game goes on unless Carol concedes too.\n")
    assert table.status()["status"] == "active"
    mails = table.move("Carol", "concede")
    assert ("DONE (concede): Carol concedes for team 1. Team 2 (Bob & Dave) wins by the other "
            "team's concession.") in body(reply(mails, "Carol"))
    news = announcement(mails, "concession", "Carol concedes — GAME OVER: Bob and Dave win")
    assert news == """\
Carol (team 1) concedes.
Alice has conceded too, so team 1 concedes the game.

Team 1 (Alice & Carol): 0 points, 0 bags
Team 2 (Bob & Dave): 0 points, 0 bags

GAME OVER: Bob & Dave win (the other team conceded).

Nobody may know what cards a player held, even now, so the seed the deals
came from stays with the referee's operator, whose audit ("referee verify
spades-1") draws every deal again from it and checks each hand's
fingerprint. You can check your own hand of each round against its
fingerprint with the salt of your hand mail."""
    status = table.status()
    assert (status["status"], status["result"]) == (
        "finished", "Team 2 (Bob & Dave) wins by the other team's concession.")
    assert status["deadlines"] == []
    mails = table.move("Alice", "play AH")
    assert "REFUSED (play AH): The game is over." in body(reply(mails, "Alice"))


# -- a whole round ----------------------------------------------------------------------

ROUND_1_REPORT = f"""\
Trick 13: Carol 10♣, Dave Q♦, Alice J♥, Bob J♣.
Bob wins it with J♣.

ROUND 1 SCORES

Team 1 (Alice & Carol)
  bids:        Alice 4, Carol 3 (team bid 7)
  tricks:      Alice 5, Carol 3 (team 8)
  contract:    made, 7 x 10 = +70
  overtricks:  1 x 1 = +1
  sandbags:    1 this round, 1 in all
  round:       +71    Spadescore: 0 -> 71

Team 2 (Bob & Dave)
  bids:        Bob 4, Dave nil (team bid 4)
  tricks:      Bob 5, Dave 0 (team 5)
  contract:    made, 4 x 10 = +40
  overtricks:  1 x 1 = +1
  nil:         Dave took 0 tricks: made, +100
  sandbags:    1 this round, 1 in all
  round:       +141    Spadescore: 0 -> 141

Round 2 is dealt: each player has their cards in a secret mail.
Bob bids first, by {DEADLINE}."""


def test_a_round_of_13_tricks_by_mail_ends_with_the_round_report_and_a_new_secret_deal(
        table: Table) -> None:
    table.bid()
    mails = table.play(SCRIPT)
    # One mail each (nine before): the report and the new hand, Bob's after
    # the answer to his card.
    assert [kinds(x) for x in mails] == [
        ["round_report", "hand"], ["transcript", "round_report", "hand"],
        ["round_report", "hand"], ["round_report", "hand"]]
    assert ("Bob wins trick 13 with J♣. Round 1: team 1 bid 7, took 8 (made), scores +71, "
            "now 71; team 2 bid 4, took 5 (made), scores +141, now 141. Round 2: 13 cards "
            "dealt to each player; Bob bids first.") in body(reply(mails, "Bob"))
    report = announcement(mails, "round_report", "Round 1 scored: team 1 71, team 2 141")
    state = table.state()
    # The new deal is committed hand by hand (ruling SP-17), each with the
    # salt its player alone is sent.
    assert report == ROUND_1_REPORT + (
        "\n\nThe SHA-256 fingerprint of each hand of round 2, as dealt\n"
        "(your secret hand mail tells you how to check yours):\n"
        + "\n".join(f"  hand-sha256 {n}: {hand_commitment(h, salt)}"
                    for n, h, salt in zip(state["names"], state["hands"], state["hand_salts"],
                                          strict=True)))
    for mail in mails:
        name = next(n for n in NAMES if ADDRESS[n] in rcpts(mail))
        salt = state["hand_salts"][state["names"].index(name)]
        assert f"\n  hand-salt: {salt}\n" in section(mail, "Your hand for round 2")
        assert sum(salt in body(x) for x in mails) == 1
    deal = [x for x in mails if "hand" in kinds(x)]
    assert [rcpts(x) for x in deal] == [[a] for a in EVERYONE]
    for name, mail, cards in zip(NAMES, deal, state["hands"], strict=True):
        assert mail["Subject"].endswith(" (secret)") and body(mail).startswith(SECRET_NOTE)
        assert hand_text(cards) in section(mail, "Your hand for round 2 (secret)"), name
        for other in state["hands"]:
            assert other == cards or hand_text(other) not in body(mail), name
    # Bob bids first in round 2 (SP-3), and his mail says so in its subject.
    assert "It is your turn to bid" in section(deal[1], "Your hand for round 2")
    assert deal[1]["Subject"] == "[spades-1] Done: play JC; your bid (secret)"
    assert (state["round"], state["scores"], state["bags"]) == (2, [71, 141], [1, 1])


def test_a_misplay_earlier_in_the_round_shows_in_the_report_and_the_round_total(
        table: Table) -> None:
    table.bid()
    table.play(SCRIPT[:13])
    table.move("Bob", "play AS")  # off suit while holding clubs: -100 for team 2
    mails = table.play(SCRIPT[13:])
    report = announcement(mails, "round_report", "Round 1 scored: team 1 71, team 2 41")
    assert ("  nil:         Dave took 0 tricks: made, +100\n"
            "  sandbags:    1 this round, 1 in all\n"
            "  misplays:    -100 (scored at the time of the misplay)\n"
            "  round:       +41    Spadescore: 0 -> 41\n") in report
    assert "scores +141, misplays -100, now 41" in body(reply(mails, "Bob"))


# -- secrecy over a whole game ------------------------------------------------------------


class Log:
    """The game's event log, read as it grows: the cards played so far in
    each round, and the cards of each round's last trick."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.last_id = 0
        self.round = 0
        self.played: dict[int, set[str]] = {}
        self.last_trick: dict[int, set[str]] = {}

    def update(self) -> None:
        with self.table.club.referee.sessions() as db:
            q = (select(m.Event).join(m.Game)
                 .where(m.Game.tag == self.table.tag, m.Event.id > self.last_id)
                 .order_by(m.Event.id))
            for event in db.scalars(q):
                self.last_id, data = event.id, dict(event.data)
                if event.kind == "deal":
                    self.round = int(data["round"])
                    self.played[self.round] = set()
                elif event.kind == "play":
                    self.played[self.round].add(str(data["card"]))
                elif event.kind == "trick" and data["trick"] == 13:
                    self.last_trick[self.round] = {str(c) for c in data["cards"]}


def latest_cards(texts: dict[str, str], name: str, line: str) -> list[str]:
    """The cards after ``line`` in the newest secret part ``name`` got."""
    found = re.search(f"{re.escape(line)} (.*)$", texts[name], re.M)
    assert found, texts[name]
    return [str(Card.parse(c)) for c in found.group(1).split()]


def test_no_public_mail_of_a_whole_game_shows_a_hand_or_a_card_not_yet_played(
        club: MailClub) -> None:
    """Rule 6 and SP-17. A game to 100, by mail: the scripted first round,
    then random legal cards read from each player's secret mails, with a
    misplay, a timeout, a hand request and a play out of turn on the way.
    Each pass of the referee is checked: a public mail names only cards
    played by then in its round, a round report only the last trick, and no
    public mail lists a hand."""
    table = new_table(club, target="100")
    log = Log(table)
    rng = random.Random(3)
    secret: dict[str, str] = {}  # each player's newest turn or hand, as its text
    public = 0
    deck = {str(c) for c in full_deck()}

    def check(mails: list[EmailMessage], start_round: int) -> None:
        nonlocal public
        log.update()
        round_ = start_round
        copies: set[str] = set()
        for mail in mails:
            if {"your_turn", "hand"} & set(kinds(mail)):
                (hand,) = [t for t in private_parts(mail) if HAND_LINE.search(t)]
                secret[NAMES[EVERYONE.index(rcpts(mail)[0])]] = hand
            # Each part of each mail that every player may see (a mail of
            # several carries the public news with a player's own).
            for headline, part in public_parts(mail):
                public += 1
                text = f"{headline}\n{part}".replace(OPENING_EXAMPLES, "")
                assert not HAND_LINE.search(text), text
                named = cards_named(text)
                if re.match(r"Round \d+ scored: ", headline):
                    if text in copies:  # each player's copy of the same report
                        continue
                    copies.add(text)
                    assert named == log.last_trick[round_], text
                    round_ += 1
                else:
                    assert named <= log.played.get(round_, set()), (named, text)
        held = table.state()["hands"]
        for mail in mails:
            for _, part in public_parts(mail):
                for cards in held:
                    assert not cards or hand_text(cards) not in part

    check(table.opening, 1)
    for name, text in BIDS:
        check(table.move(name, text), 1)
    for step, (name, text) in enumerate(SCRIPT):
        if step == 13:
            check(table.move("Bob", "play AS"), 1)  # a misplay: team 2 scores -100
        check(table.move(name, text), 1)
    step = 0
    while table.status()["status"] == "active":
        step += 1
        assert step < 600, "the game does not end"
        state = table.state()
        name = NAMES[state["turn"]]
        before = state["round"]
        if step == 30:  # nobody writes: the referee moves for the absent player
            check(club.poll(club.now + timedelta(days=3, seconds=1)), before)
        elif step == 20:
            check(table.move(NAMES[(state["turn"] + 1) % 4], "play 2C"), before)
        elif step == 40:
            check(table.move(name, "hand"), before)
        elif step == 50 and state["phase"] == "playing":  # a card not held
            mine = set(hand_of(secret[name]))
            check(table.move(name, f"play {sorted(deck - mine)[0]}"), before)
        elif state["phase"] == "bidding":
            check(table.move(name, rng.choice(("bid 2", "bid 3"))), before)
        else:
            card = rng.choice(latest_cards(secret, name, "You may play:"))
            check(table.move(name, f"play {card}"), before)
    state, scores = table.state(), table.state()["scores"]
    # SP-13: the game ends after a round's scoring, with a team at the target and ahead.
    assert (state["phase"], state["end_reason"]) == ("over", "score")
    assert max(scores) >= 100 and scores[0] != scores[1], scores
    assert state["winner"] == scores.index(max(scores)) + 1
    assert len(state["reports"]) == state["round"] >= 2
    # Rule 6: every card is played by announcing it publicly, 52 a round.
    assert public >= 52 * state["round"]


def hand_of(text: str) -> list[str]:
    """The cards listed by suit in a secret part, as "QH"."""
    cards = []
    for line in HAND_LINE.finditer(text):
        symbol, ranks = line.group(0).strip().split(" ", 1)
        suit = next(s for s, sym in SUIT_SYMBOLS.items() if sym == symbol)
        cards += [f"{r}{suit}" for r in ranks.split() if r != "-"]
    return cards
