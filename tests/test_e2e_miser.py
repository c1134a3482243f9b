"""Miser (rule text 004) by email end to end, over the suite's real servers.

Three players write to the referee by SMTP (Postfix); the referee reads its
mailbox by IMAP (Dovecot) and answers by SMTP; each player reads what arrived
in their own IMAP mailbox. The deal and the draw are fixed (the engine's test
hook). Pennies are 8 each, so four turns play a whole game:

1. Alice offers Bob a contract against Carol in a mail to Bob with the
   referee on Cc (private); Carol asks for her hand meanwhile and learns
   nothing of it. Bob accepts, replying to both. Alice first sends her card
   with Bob on Cc: refused in private, not played; then to the referee
   alone, and so does Bob. The flip and the resolution go to all.
2. Bob attacks Carol: two cards each side face down, Bob adds a third;
   Carol flips; Bob's mail of a card not read and "flip" flips nothing
   (MI-19); both flip; equal totals, the pennies stay in the centre.
3. Carol bids for the centre, Alice joins, Carol raises (her raise is her
   "done"), Alice writes done; Bob stays silent and his deadline passes:
   the referee's "done" for him.
4. Alice stays silent; ``referee poll --now`` past her deadline passes for
   her, which leaves her with no pennies: the game is over.

Every mail every player receives from the referee is checked against the
stored state at the time it was sent: no mail to anyone but the holder names
a card in a hand or face down.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import referee.games
from referee.games.miser import Miser
from referee.games.miser.rules import hand_text
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE
from referee.store import models as m
from tests.mailstack import GIVE_UP, REPO_ROOT, MailStack
from tests.test_e2e import (
    REF,
    SIGNATURE,
    T0,
    Post,
    body,
    kind,
    person,
    referee_command,
    seed_told,
    verified_by_mail,
)
from tests.test_spades_mail import kinds as split_kinds
from tests.test_spades_mail import sections

NAMES = ("Alice", "Bob", "Carol")
USER = {name: name.lower() for name in NAMES}
ADDRESS = {name: f"{USER[name]}@example.test" for name in NAMES}
EVERYONE = sorted(ADDRESS.values())
HANDS = {name: hand.split() for name, hand in {
    "Alice": "KD KS QH 10C 10H 10S 9C 9H 8C 8S 7C 7H 6C 6H 4C 4D 4S",
    "Bob": "AD KC KH JS 10D 8D 7D 7S 6S 5D 5H 5S 4H 3C 3H 3S 2D",
    "Carol": "AC AH AS QC QD QS JC JH 9D 9S 8H 6D 5C 3D 2C 2H 2S",
}.items()}
DRAW = ("KS", "9C", "5H")  # Alice draws highest and goes first
SECRET_KINDS = {"hand", "your_move", "transcript", "reminder", "deadline_yours"}
#: Those that show a hand or what the player may do: a mail that carries
#: one says it is secret (a reminder shows neither, nor a move the referee
#: made at a deadline that the table is told whole: a pass, "done").
MARKED_SECRET = SECRET_KINDS - {"reminder", "deadline_yours"}
#: A deadline move told its seat alone: a card put face down, an offer lapsed.
SECRET_DEADLINE = re.compile(r"face down|offer")
#: What each part of a mail of several is, by its headline (in mail all
#: every part comes whole, under its subject less the tag); the first that fits.
PART_KINDS = (
    ("transcript", re.compile(r"Your mail$")),
    ("deadline", re.compile(r"No \w+ from .+ by the deadline$")),
    ("deadline_yours", re.compile(r"The deadline passed: the referee moved for you$")),
    ("opening", re.compile(r"Miser begins: ")),
    ("hand", re.compile(r"Your hand")),
    ("your_move", re.compile(r"(Your turn|The contract: your card|Your attack: your card"
                             r"|The attack: your card or flip|A contract offer: your answer"
                             r"|The bidding for the centre: your bid)$")),
    ("declined", re.compile(r"Contract offer (declined|lapsed): ")),
    ("offer", re.compile(r".+ offers .+ a contract on ")),
    ("contract", re.compile(r"Contract on .+, a card each$")),
    ("attack", re.compile(r".+ attacks .+ for \d+; ")),
    ("auction", re.compile(r"Bids: ")),
    ("down", re.compile(r".+('s card is down| puts \d+ cards? down)")),
    ("flip", re.compile(r".+ will flip; ")),
    ("round_report", re.compile(r".+ passes(; | — )|(Contract against|Attack on|Bids for the "
                                r"centre)[ ,]")),
    ("reminder", re.compile(r"Reminder: ")),
)

_CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9AKQJT])([SHDC♠♥♦♣])(?![0-9A-Za-z])")
_SUIT = dict(zip("♠♥♦♣", "SHDC", strict=True))


def cards_named(text: str) -> set[str]:
    """Every card written in ``text`` as ``QH``, ``Q♥`` or ``TH``."""
    return {("10" if r == "T" else r) + _SUIT.get(s, s) for r, s in _CARD.findall(text)}


#: Fixed example lines of the public how-to (the same in every game), the
#: draw for first player, made before the deck was reshuffled (MI-2), and how
#: a card is written, said to a line not read as one.
EXAMPLES = ('"down QS"', "bid 7H 3", "the 7H face up", '"down 9C"', '"down 4D"', '"bid 5C 2"',
            '"down 7H"', "Alice K♠, Bob 9♣, Carol 5♥", "Write a card as QS, Q♠, 10D, TD")


def outbox_order(msg: EmailMessage) -> int:
    return int(str(msg["Message-ID"]).split(".")[1])


def part_kind(headline: str) -> str:
    """The kind of the first of ``PART_KINDS`` whose pattern ``headline`` fits."""
    found = [k for k, pattern in PART_KINDS if pattern.match(headline)]
    assert found, headline
    return found[0]


def parts(msg: EmailMessage) -> list[tuple[str, str, str]]:
    """Each part of a mail as (kind, headline, text), in order; the
    headline is the subject less the tag, "(secret)" and what it asks, the
    text has neither the secret note nor the signature."""
    found = sections(msg)
    if not kind(msg).startswith(COMPOSITE):
        ((_, text),) = found
        head = str(msg["Subject"]).removeprefix("[miser-1] ").removesuffix(" (secret)")
        # What it asks of its reader (Game.asks) is the mail's, not the part's.
        return [(kind(msg), re.sub(r": your (turn|answer|card or flip|card|bid)$", "", head),
                 text)]
    heads = [head.removesuffix(" (secret)") for head, _ in found]
    out = [(part_kind(h), h, t) for h, (_, t) in zip(heads, found, strict=True)]
    assert list(dict.fromkeys(k for k, _, _ in out)) == split_kinds(msg), out
    return out


def as_part(expected: str) -> tuple[str, str]:
    """A mail as expected whole (``text_of``) as it reads among the parts
    of a mail: (headline, text), with no secret note and no signature."""
    head, text = "", expected
    if expected.startswith("Subject: "):
        head, _, text = expected.partition("\n\n")
        head = head.removeprefix("Subject: [miser-1] ").removesuffix(" (secret)")
    text = text.removeprefix(SECRET_NOTE).lstrip("\n").partition("\n-- \n")[0]
    return head, text.rstrip("\n")


class Table:
    """The three players' mailboxes, read over IMAP after each pass of the
    referee, every mail from the referee checked against the stored state."""

    def __init__(self, post: Post, tag: str) -> None:
        self.post, self.tag = post, tag
        self.last_outbox = 0
        self.mails: list[tuple[str, EmailMessage]] = []  # (reader, mail) in the order sent
        self.parts: list[tuple[str, str, str, str]] = []  # (reader, kind, headline, text)

    def write(self, name: str, text: str, *, to: Sequence[str] = ("referee",),
              cc: Sequence[str] = (), reply_to: EmailMessage | None = None) -> str:
        """``name`` mails ``text``; ``to`` and ``cc`` hold player names or
        "referee". The mail is in the referee's INBOX, and each other
        player's copy in theirs, before the next is written."""
        addr = {**ADDRESS, "referee": REF}
        msg = EmailMessage()
        msg["From"] = person(USER[name])
        msg["To"] = ", ".join(addr[x] for x in to)
        if cc:
            msg["Cc"] = ", ".join(addr[x] for x in cc)
        msg["Subject"] = f"Re: {reply_to['Subject']}" if reply_to else f"[{self.tag}] my move"
        msg["Message-ID"] = make_msgid(idstring=USER[name], domain="mua.example.test")
        if reply_to is not None:
            msg["In-Reply-To"] = str(reply_to["Message-ID"])
            msg["References"] = str(reply_to["Message-ID"])
        msg.set_content(f"{text}\n\n-- \n{name}\n")
        rcpts = [addr[x] for x in (*to, *cc)]
        self.post.stack.send(msg, USER[name], rcpts)
        self.post.in_referee_inbox += 1
        for other in (*to, *cc):
            if other != "referee":
                (copy,) = self.post.new_mail(USER[other], 1)
                assert copy["Message-ID"] == msg["Message-ID"]
        give_up = time.monotonic() + GIVE_UP
        with self.post.stack.imap("referee") as client:  # STATUS only: no fetch
            while int(client.folder_status("INBOX", [b"MESSAGES"])[b"MESSAGES"]
                      ) < self.post.in_referee_inbox:
                assert time.monotonic() < give_up, f"{text!r} did not reach the referee"
                time.sleep(0.01)
        return str(msg["Message-ID"])

    def poll(self, now: datetime, *, cli: bool = False) -> dict[str, list[EmailMessage]]:
        """One pass of the referee (in process, or ``referee poll --now``);
        returns what each player received from it, each mail checked."""
        if cli:
            self.post.stack.wait_for("referee", self.post.in_referee_inbox)
            done = subprocess.run(referee_command(self.post, "poll", "--now", now.isoformat()),
                                  cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        else:
            self.post.poll(now)
        with self.post.referee.sessions() as db:
            rows = list(db.scalars(select(m.Outbox).where(m.Outbox.id > self.last_outbox)
                                   .order_by(m.Outbox.id)))
        self.last_outbox = max([self.last_outbox, *(row.id for row in rows)])
        assert all(row.sent_at is not None for row in rows)
        count = {n: sum(ADDRESS[n] in row.recipients for row in rows) for n in NAMES}
        assert all(set(row.recipients) <= set(EVERYONE) for row in rows)
        mail = {n: sorted(self.post.new_mail(USER[n], count[n]), key=outbox_order)
                if count[n] else [] for n in NAMES}
        state = self.post.state(self.tag)
        for name in NAMES:
            for msg in mail[name]:
                self.check(name, msg, state)
                self.mails.append((name, msg))
        return mail

    def check(self, name: str, msg: EmailMessage, state: dict[str, Any]) -> None:
        """A mail from the referee names no card that another player holds or
        has face down, nor a card removed before the deal (MI-1, MI-14); a
        public part of it names none of its reader's either. A mail with a
        secret part says it is secret."""
        to = sorted(a.addr_spec for a in msg["To"].addresses)
        assert msg["Cc"] is None
        # Every mail goes to one player: their own copy of what is public,
        # with what is theirs alone (a reply-all reaches the referee alone).
        assert to == [ADDRESS[name]], (kind(msg), to)
        mine = parts(msg)
        secret = any(k in MARKED_SECRET or (k == "deadline_yours"
                                            and SECRET_DEADLINE.search(" ".join(t.split())))
                     for k, _, t in mine)
        assert (str(msg["Subject"]).endswith(" (secret)"), body(msg).startswith(SECRET_NOTE)
                ) == (secret, secret), (msg["Subject"], [k for k, _, _ in mine])
        for what, headline, text in mine:
            self.parts.append((name, what, headline, text))
            public = what not in SECRET_KINDS and what not in ("offer", "declined")
            text = f"{headline}\n{text}"
            for example in EXAMPLES:
                text = text.replace(example, "")
            hidden = set(state["removed"])
            for p, other in enumerate(NAMES):
                if not public and other == name:
                    continue  # a part for its holder alone
                hidden |= set(state["hands"][p])
                side = 0 if p == state["turn"] else 1  # the turn player's side, or the other's
                contract, attack = state["contract"], state["attack"]
                if contract is not None and p in (state["turn"], contract["partner"]):
                    hidden |= {c for c in contract["cards"][side:side + 1] if c}
                if attack is not None and p in (state["turn"], attack["victim"]):
                    hidden |= set(attack["cards"][side])
            assert not cards_named(text) & hidden, (name, cards_named(text) & hidden, text)

    def hand(self, name: str) -> list[str]:
        return list(self.post.state(self.tag)["hands"][NAMES.index(name)])


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    """The referee on the real servers, with the fixed deal and draw."""
    fixed = Miser(deal=[HANDS[n] for n in NAMES], draw=DRAW)
    monkeypatch.setitem(referee.games.GAMES, "miser", fixed)
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def the(mail: dict[str, list[EmailMessage]], name: str, what: str) -> tuple[str, str]:
    """The one part of kind ``what`` that ``name`` received in a pass:
    (headline, text)."""
    (found,) = [(h, t) for x in mail[name] for k, h, t in parts(x) if k == what]
    return found


def to_all(mail: dict[str, list[EmailMessage]], what: str) -> tuple[str, str]:
    """The public part of kind ``what`` of a pass: all three got it, alike."""
    found = [the(mail, n, what) for n in NAMES]
    assert len(set(found)) == 1, found
    return found[0]


def kinds(mail: dict[str, list[EmailMessage]]) -> dict[str, list[list[str]]]:
    """What each player got in a pass: the kinds of the parts of each mail."""
    return {n: [[k for k, _, _ in parts(x)] for x in mail[n]] for n in NAMES}


def answer(mail: dict[str, list[EmailMessage]], name: str, mid: str) -> str:
    """The text of the answer to ``name``'s mail ``mid``: the first part of
    the one mail that answers it."""
    (found,) = [x for x in mail[name] if x["In-Reply-To"] == mid]
    (what, _, text), *_ = parts(found)
    assert what == "transcript"
    return text


# -- what the players read, whole (house style: every kind of mail at least once) --------

#: The fingerprint the opening publishes for the seed "e2e".
E2E_SEED_SHA256 = hashlib.sha256(b"seed: e2e\n").hexdigest()

OPENING = f"""\
Subject: [miser-1] Miser begins: Alice goes first

A game of Miser begins: 3 players, 8 pennies each.
The object is to have the most pennies when play stops. The game
is over as soon as a player loses all her pennies, and then the
player with the most pennies wins (a tie for most is a tie).

Seating (play moves in this order):
  1. Alice
  2. Bob
  3. Carol

The draw for first player (ace high):
Alice K♠, Bob 9♣, Carol 5♥
Alice drew highest and goes first.

The deck was then reshuffled and dealt: 17 cards each.
1 card was first removed face down, unseen by anyone,
so that all hands are equal.
Each player has her hand in a secret mail. Keep it to yourself;
you may claim or promise anything about it.

Card values are as in Blackjack: 2 to 10 as marked, J, Q and K
count 10, an ace 11. Cards played go to the slush pile.

On your turn, write one of these lines:
  pass
      put 3 pennies in the centre
  contract with Bob against Carol 2 1
      a contract with Bob on Carol: you wager 2,
      Bob 1 (each 1 to 3); Bob answers "accept" or
      "decline"; then each of you puts one card face down
  attack Carol 2
      wager 2 (1 to 3); Carol matches it; you put cards face down
  bid 7H 3
      bid 3 pennies for the pennies in the centre, with the 7H face up
      (once a pass has put some there: the centre is empty now)
A face-down card ("down QS") goes in a mail to the referee alone.
In an attack, each side adds cards ("down 4D") or writes "flip";
both must write "flip" after the last card. In a bidding, anyone
with cards may join ("bid 5C 2"); bidders write "raise 2" or "done".
A player with no cards can only pass. Write "hand" for your cards,
"help" for what you can do now.

Every random draw of this game (the draw for first player, the deal, a
move the referee makes for a late player) comes from a secret seed,
fixed now. Its SHA-256 fingerprint:
  seed-sha256: {E2E_SEED_SHA256}
The game's last mail will tell the seed, so that anyone can check it
against this fingerprint and draw every draw of the game again.

PENNIES AND CARDS
  Alice              8 pennies  17 cards
  Bob                8 pennies  17 cards
  Carol              8 pennies  17 cards
  Centre             0 pennies

Waiting for (first deadline Thu 05 Mar 2026 12:00 UTC):
  Alice: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

BOB_DEAL = f"""\
Subject: [miser-1] Your hand for Miser (secret)

{SECRET_NOTE}

Bob, here are the 17 cards dealt to you.
Keep them to yourself.

  A♦ K♣ K♥ J♠ 10♦ 8♦ 7♦ 7♠ 6♠ 5♦ 5♥ 5♠ 4♥ 3♣ 3♥ 3♠ 2♦

You have 8 pennies.

It is Alice's turn. Waiting for: Alice.
'hand' shows your cards and pennies in a secret reply.

PENNIES AND CARDS
  Alice              8 pennies  17 cards
  Bob                8 pennies  17 cards
  Carol              8 pennies  17 cards
  Centre             0 pennies

Waiting for:
  Alice: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

ALICE_OFFER_ANSWER = f"""\
{SECRET_NOTE}

Alice, here is what I did with your mail for miser-1.

> contract with bob against carol 3 1
  DONE (contract bob carol 3 1): Your offer is made; Bob answers 'accept' or 'decline'.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

OFFER = f"""\
Subject: [miser-1] Alice offers Bob a contract on Carol (private)

Alice offers Bob a contract against Carol:
  Alice wagers 3, Bob wagers 1, and Carol
  matches the 4 (or puts in all she has, if less).

This offer is private: only Alice and Bob get this mail, and
the answer goes to them alone.

Bob, write "accept" or "decline", by Thu 05 Mar 2026 13:00 UTC.
If you accept, the pennies go into the centre and each of you puts
one card face down, in a mail to the referee alone. The cards are
turned up together: equal values split the centre (an odd penny
stays), otherwise the higher card takes it all. Nobody has to play
the card agreed on. With no answer in time the offer lapses.

{SIGNATURE}"""

CAROL_HAND_ANSWER = f"""\
{SECRET_NOTE}

Carol, here is what I did with your mail for miser-1.

> hand
  DONE (hand): Your hand is below, for you alone.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

CAROL_HAND = f"""\
Subject: [miser-1] Your hand (secret)

{SECRET_NOTE}

Carol, here are the 17 cards you hold.
Keep them to yourself.

  A♣ A♥ A♠ Q♣ Q♦ Q♠ J♣ J♥ 9♦ 9♠ 8♥ 6♦ 5♣ 3♦ 2♣ 2♥ 2♠

You have 8 pennies.

It is Alice's turn. Waiting for: Alice.
'hand' shows your cards and pennies in a secret reply.

PENNIES AND CARDS
  Alice              8 pennies  17 cards
  Bob                8 pennies  17 cards
  Carol              8 pennies  17 cards
  Centre             0 pennies

Waiting for:
  Alice: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

BOB_HELP = f"""\
{SECRET_NOTE}

Bob, here is what I did with your mail for miser-1.

> help
  DONE (help): Alice offers you a contract against Carol (a private offer):
  Alice wagers 3, you 1, and Carol matches the 4.
  Write 'accept' or 'decline'. If you accept, each of you puts one
  card face down, in a mail to the referee alone.
  'hand' shows your cards and pennies in a secret reply.

  At any time you may also write:
    status      the game as it stands: scores, whose move, by when
    history     the latest public moves and reports
    resend      the last report and your hand again, in a secret mail
    games       the games you play in, and whose move in each
    away 3d     more time: every open deadline moves 3 days later
    back        home early: what is left of 'away' goes back to your bank
    mail turns  less mail (or mail all, mail digest)
    resign      leave the game: a bot plays your seat

  Moves sent ahead, kept secret until they apply (to the referee alone):
    pass next 3   pass at each of your next 3 turns (1 to 20), as each comes
    orders      your standing orders; 'cancel orders' drops them all

Next deadline for you: Thu 05 Mar 2026 13:00 UTC.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

BOB_ACCEPT_ANSWER = f"""\
{SECRET_NOTE}

Bob, here is what I did with your mail for miser-1.

> accept
  DONE (accept): Bob accepts: Alice (3) and Bob (1) take out a contract against Carol, who puts \
in 4. The centre holds 8 pennies.

Next deadline for you: Thu 05 Mar 2026 13:02 UTC.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

CONTRACT = f"""\
Subject: [miser-1] Contract on Carol: Alice and Bob, a card each

Bob accepts Alice's offer. Into the centre:
  Alice 3, Bob 1, and Carol 4.
The centre now holds 8 pennies.

Alice and Bob: each put ONE card face down, by
a mail to the referee alone, like "down 7H". When both cards are
down they are turned up together. Equal values (10 = J = Q = K,
ace 11) split the whole centre, an odd penny staying; otherwise
the higher card takes it all.

PENNIES AND CARDS
  Alice              5 pennies  17 cards
  Bob                7 pennies  17 cards
  Carol              4 pennies  17 cards
  Centre             8 pennies

Waiting for (first deadline Thu 05 Mar 2026 13:02 UTC):
  Alice: a card face down for the contract
  Bob: a card face down for the contract

{SIGNATURE}"""

ALICE_CARD = f"""\
Subject: [miser-1] The contract: your card (secret)

{SECRET_NOTE}

Alice, you have a move to make, by Thu 05 Mar 2026 13:02 UTC.
Your contract with Bob against Carol is on.
Whatever card was agreed, you may put down any card you hold.

Put a card face down for the contract, in a mail to the
referee alone: 'down 4S'.
Your cards: K♦ K♠ Q♥ 10♣ 10♥ 10♠ 9♣ 9♥ 8♣ 8♠ 7♣ 7♥ 6♣ 6♥ 4♣ 4♦ 4♠
'hand' shows your cards and pennies in a secret reply.

Your pennies: 5

PENNIES AND CARDS
  Alice              5 pennies  17 cards
  Bob                7 pennies  17 cards
  Carol              4 pennies  17 cards
  Centre             8 pennies

Waiting for (first deadline Thu 05 Mar 2026 13:02 UTC):
  Alice: a card face down for the contract
  Bob: a card face down for the contract

{SIGNATURE}"""

REFUSED = f"""\
{SECRET_NOTE}

Alice, here is what I did with your mail for miser-1.

> down 4C
  REFUSED (down 4C): A card put face down must stay hidden until the flip, and this mail also \
went to other players or the list, so it would show the card. It was not played: send it again \
in a mail to the referee alone.

What you can write now:
Put a card face down for the contract, in a mail to the
referee alone: 'down 4S'.
Your cards: K♦ K♠ Q♥ 10♣ 10♥ 10♠ 9♣ 9♥ 8♣ 8♠ 7♣ 7♥ 6♣ 6♥ 4♣ 4♦ 4♠
'hand' shows your cards and pennies in a secret reply.

Next deadline for you: Thu 05 Mar 2026 13:02 UTC.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

ALICE_DOWN_ANSWER = f"""\
{SECRET_NOTE}

Alice, here is what I did with your mail for miser-1.

> down 4C
  DONE (down 4C): Face down: 4♣.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

CONTRACT_DOWN = f"""\
Subject: [miser-1] Alice's card is down; waiting for Bob

Alice puts a card face down for the contract.

Contract against Carol: Alice has a card down.
The two cards are turned up together when both are down.

PENNIES AND CARDS
  Alice              5 pennies  16 cards, 1 face down
  Bob                7 pennies  17 cards
  Carol              4 pennies  17 cards
  Centre             8 pennies

Waiting for (first deadline Thu 05 Mar 2026 13:02 UTC):
  Bob: a card face down for the contract

{SIGNATURE}"""

TURN_1 = f"""\
Subject: [miser-1] Contract against Carol, Bob takes 8; Bob's turn

CONTRACT: Alice (wager 3) and Bob (wager 1)
against Carol (stake 4).
The cards are turned up:
  Alice            4♣  (value 4)
  Bob              K♥  (value 10)
The higher card wins: Bob takes all 8 pennies in the centre.
The centre now holds 0 pennies.

Next: Bob's turn: pass, a contract, an attack
or a bid, by Thu 05 Mar 2026 13:04 UTC.

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               15 pennies  16 cards
  Carol              4 pennies  17 cards
  Centre             0 pennies

Waiting for (first deadline Thu 05 Mar 2026 13:04 UTC):
  Bob: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

BOB_ATTACK_ANSWER = f"""\
{SECRET_NOTE}

Bob, here is what I did with your mail for miser-1.

> attack carol 1
  DONE (attack carol 1): Bob attacks Carol, wagering 1; Carol puts in 1. The centre holds 2 \
pennies. Now put one or more cards face down, in a mail to the referee alone, like 'down 2D'.

> down 5S 7S
  DONE (down 5S 7S): Face down: 5♠ 7♠.

Next deadline for you: Thu 05 Mar 2026 14:00 UTC.

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

ATTACK = f"""\
Subject: [miser-1] Bob attacks Carol for 1; waiting for Bob

Bob attacks Carol, wagering 1; Carol puts in 1.
The centre now holds 2 pennies.

Bob first puts one or more cards face down (a mail to
the referee alone: "down 9C"). Then either side may add cards, or
write "flip". When both have written "flip" since the last card,
the cards are turned up: the higher total takes the whole centre;
equal totals lose their cards and the pennies stay. A side that
puts down no card has a total of 0.

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  16 cards
  Carol              3 pennies  17 cards
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 14:00 UTC):
  Bob: a first card face down for the attack

{SIGNATURE}"""

CAROL_ANSWERS = f"""\
Subject: [miser-1] The attack: your card or flip (secret)

{SECRET_NOTE}

Carol, you have a move to make, by Thu 05 Mar 2026 14:00 UTC.
Bob has 2 cards face down against you. You may answer
with cards face down, or none at all.

Put a card face down for the attack, in a mail to the
referee alone: 'down 2S'.
You may put down more cards ('down 2H 2S'), or write
'flip' when you are done.
Your cards: A♣ A♥ A♠ Q♣ Q♦ Q♠ J♣ J♥ 9♦ 9♠ 8♥ 6♦ 5♣ 3♦ 2♣ 2♥ 2♠
'hand' shows your cards and pennies in a secret reply.

Your pennies: 3

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  14 cards, 2 face down
  Carol              3 pennies  17 cards
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 14:00 UTC):
  Bob: a card face down, or flip
  Carol: a card face down, or flip

{SIGNATURE}"""

ATTACK_DOWN = f"""\
Subject: [miser-1] Bob puts 1 card down; waiting for Bob and Carol

Bob puts 1 card face down.

Attack on Carol: Bob has 3 cards down, Carol 2.
Each side may add cards ("down 4D", to the referee alone) or write
"flip"; the cards are turned up when both have written "flip"
since the last card.

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  13 cards, 3 face down
  Carol              3 pennies  15 cards, 2 face down
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 14:01 UTC):
  Bob: a card face down, or flip
  Carol: a card face down, or flip

{SIGNATURE}"""

FLIP = f"""\
Subject: [miser-1] Carol will flip; waiting for Bob

Carol is ready to flip. Attack on Carol: Bob has 3 cards
down, Carol 2. The cards are turned up when the other side
writes "flip" too; a new card means both must write it again.

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  13 cards, 3 face down
  Carol              3 pennies  15 cards, 2 face down
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 14:01 UTC):
  Bob: a card face down, or flip

{SIGNATURE}"""

TURN_2 = f"""\
Subject: [miser-1] Attack on Carol, a tie; Carol's turn

ATTACK: Bob (wager 1) against Carol (stake 1).
The cards are turned up:
  Bob              5♠ 7♠ 3♣ = 15
  Carol            9♦ 6♦ = 15
Equal totals: both lose their cards and the 2 pennies stay in the centre.
The centre now holds 2 pennies.

Next: Carol's turn: pass, a contract, an attack
or a bid, by Thu 05 Mar 2026 14:02 UTC.

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  13 cards
  Carol              3 pennies  15 cards
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 14:02 UTC):
  Carol: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

BOB_MAY_JOIN = f"""\
Subject: [miser-1] The bidding for the centre: your bid (secret)

{SECRET_NOTE}

Bob, you have a move to make, by Thu 05 Mar 2026 15:00 UTC.
Carol bids for the 2 pennies in the centre.

You may join the bidding for the centre with one card
face up and 1 or more pennies: 'bid 2D 2'. Or write
'done' to stay out.
'hand' shows your cards and pennies in a secret reply.

Your pennies: 14

PENNIES AND CARDS
  Alice              5 pennies  16 cards
  Bob               14 pennies  13 cards
  Carol              3 pennies  14 cards, bidding 1
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 15:00 UTC):
  Alice: a bid to join, or done
  Bob: a bid to join, or done

{SIGNATURE}"""

RAISE = f"""\
Subject: [miser-1] Bids: Carol raises to 3; waiting for Alice and Bob

Carol raises to 3.

Bids: Carol 3 (2♣), Alice 2 (9♥).

Anyone else with cards may join, with one card face up and 1 or
more pennies ("bid 5C 2"), or write "done" to stay out. Bidders may
add ("raise 2") but never withdraw: after someone else's bid or
raise, each bidder writes "raise" or "done" (her own bid or raise
counts as her "done"). The bidding ends when nobody owes a step.
The highest bidder takes the centre as it stands now; then she and
the second-highest pay their bids into it, and the others keep
theirs. If the highest bids tie, nobody takes the centre and the
tied and second-highest bidders pay in.

PENNIES AND CARDS
  Alice              5 pennies  15 cards, bidding 2
  Bob               14 pennies  13 cards
  Carol              3 pennies  14 cards, bidding 3
  Centre             2 pennies

Waiting for (first deadline Thu 05 Mar 2026 15:00 UTC):
  Alice: a raise, or done
  Bob: a bid to join, or done

{SIGNATURE}"""

TURN_3 = f"""\
Subject: [miser-1] Bids for the centre, Carol takes 2; Alice's turn

BIDS FOR THE CENTRE (2 pennies):
  Carol              3 with 2♣   pays the bid into the centre
  Alice              2 with 9♥   pays the bid into the centre
Carol bid the most and takes the 2 pennies in the centre.
Then Carol and Alice pay their bids into it.
The bid cards go to the slush pile.
The centre now holds 5 pennies.

Next: Alice's turn: pass, a contract, an attack
or a bid, by Sun 08 Mar 2026 15:00 UTC.

PENNIES AND CARDS
  Alice              3 pennies  15 cards
  Bob               14 pennies  13 cards
  Carol              2 pennies  14 cards
  Centre             5 pennies

Waiting for (first deadline Sun 08 Mar 2026 15:00 UTC):
  Alice: a turn (pass, contract, attack or bid)

{SIGNATURE}"""

TURN_4 = f"""\
Subject: [miser-1] Alice passes — GAME OVER: Bob wins

Alice passes and puts 3 pennies in the centre.
The centre now holds 8 pennies.

Alice has no pennies left, so the game is over.
Bob has the most pennies and wins the game.

PENNIES AND CARDS
  Alice              0 pennies  15 cards   OUT
  Bob               14 pennies  13 cards
  Carol              2 pennies  14 cards
  Centre             8 pennies

GAME OVER. Alice is out of pennies; Bob wins with 14 (Alice 0, Bob 14, Carol 2).

{seed_told("e2e", "miser-1")}{SIGNATURE}"""


def text_of(msg: EmailMessage) -> str:
    """A mail as its reader sees it: subject and body."""
    return f"Subject: {msg['Subject']}\n\n{body(msg)}"


def test_a_game_of_miser_by_email_with_a_private_contract_an_attack_an_auction_and_timeouts(
        post: Post) -> None:
    """Rule text 004 and MI-1 … MI-19 by mail through Postfix and Dovecot."""
    tag = post.referee.operator.create_game("miser", [person(USER[n]) for n in NAMES], now=T0,
                                   seed="e2e", options={"pennies": "8"})
    table = Table(post, tag)
    mail = table.poll(T0)
    assert kinds(mail) == {n: [["opening", "hand"]] for n in NAMES}  # one mail each
    # Alice's says she is to move.
    alices = mail["Alice"][0]
    assert alices["Subject"] == "[miser-1] Miser begins: Alice goes first: your turn (secret)"
    assert to_all(mail, "opening") == as_part(OPENING)
    for name in NAMES:
        assert hand_text(HANDS[name]) in the(mail, name, "hand")[1]
    assert the(mail, "Bob", "hand") == as_part(BOB_DEAL)

    # Turn 1. Alice mails her offer to Bob, with the referee on Cc: private.
    t = T0 + timedelta(hours=1)
    offer = table.write("Alice", "contract with bob against carol 3 1", to=["Bob"],
                        cc=["referee"])
    mail = table.poll(t)
    assert kinds(mail) == {"Alice": [["transcript", "offer"]], "Bob": [["offer"]], "Carol": []}
    assert answer(mail, "Alice", offer) == as_part(ALICE_OFFER_ANSWER)[1]
    assert the(mail, "Bob", "offer") == as_part(OFFER)
    assert mail["Bob"][0]["Subject"] == (  # he is asked to answer it
        "[miser-1] Alice offers Bob a contract on Carol (private): your answer")
    # Alice's copy of the offer rides in the answer to her mail, to her alone.
    (alices,) = mail["Alice"]
    assert [a.addr_spec for a in alices["To"].addresses] == [ADDRESS["Alice"]]
    assert the(mail, "Alice", "offer")[0] == as_part(OFFER)[0]
    # Carol asks for her hand, and Bob for help: neither answer goes to anyone else,
    # and Carol's shows nothing of the offer.
    hand = table.write("Carol", "hand")
    help_ = table.write("Bob", "help")
    mail = table.poll(t + timedelta(minutes=1))
    assert kinds(mail) == {"Alice": [], "Bob": [["transcript"]],
                           "Carol": [["transcript", "hand"]]}  # her answer and her hand
    assert answer(mail, "Carol", hand) == as_part(CAROL_HAND_ANSWER)[1]
    assert the(mail, "Carol", "hand") == as_part(CAROL_HAND)
    assert answer(mail, "Bob", help_) == as_part(BOB_HELP)[1]
    status = post.referee.reading.status(tag)[0]
    assert (status["phase"], status["to_move"]) == ("turn", ["Alice"])
    # Bob accepts, replying to Alice and the referee: public, since pennies move.
    accept = table.write("Bob", "accept", to=["referee"], cc=["Alice"])
    mail = table.poll(t + timedelta(minutes=2))
    assert kinds(mail) == {"Alice": [["contract", "your_move"]],
                           "Bob": [["transcript", "contract", "your_move"]],
                           "Carol": [["contract"]]}
    assert answer(mail, "Bob", accept) == as_part(BOB_ACCEPT_ANSWER)[1]
    assert to_all(mail, "contract") == as_part(CONTRACT)
    assert the(mail, "Alice", "your_move") == as_part(ALICE_CARD)
    # Alice's card with Bob on Cc is refused in private and not played.
    shown = table.write("Alice", "down 4C", to=["referee"], cc=["Bob"])
    mail = table.poll(t + timedelta(minutes=3))
    assert kinds(mail) == {"Alice": [["transcript"]], "Bob": [], "Carol": []}
    assert answer(mail, "Alice", shown) == as_part(REFUSED)[1]
    assert "4C" in table.hand("Alice")
    down = table.write("Alice", "down 4C")
    table.write("Bob", "down KH")
    mail = table.poll(t + timedelta(minutes=4))
    # Two mails read, so two mails each: what Alice's card caused, then Bob's.
    assert kinds(mail) == {"Alice": [["transcript", "down"], ["round_report"]],
                           "Bob": [["down"], ["transcript", "round_report", "your_move"]],
                           "Carol": [["down"], ["round_report"]]}
    assert answer(mail, "Alice", down) == as_part(ALICE_DOWN_ANSWER)[1]
    assert to_all(mail, "down") == as_part(CONTRACT_DOWN)
    assert to_all(mail, "round_report") == as_part(TURN_1)

    # Turn 2. Bob attacks Carol and puts two cards down in the same mail; Carol
    # answers with two; Bob adds a third; both write flip. Equal totals: a tie.
    t += timedelta(hours=1)
    attack = table.write("Bob", "attack carol 1\ndown 5S 7S")
    mail = table.poll(t)
    assert kinds(mail) == {"Alice": [["attack", "down"]],
                           "Bob": [["transcript", "attack", "down"]],
                           "Carol": [["attack", "down", "your_move"]]}
    assert answer(mail, "Bob", attack) == as_part(BOB_ATTACK_ANSWER)[1]
    assert to_all(mail, "attack") == as_part(ATTACK)
    assert the(mail, "Carol", "your_move") == as_part(CAROL_ANSWERS)
    table.write("Carol", "down 9D 6D")
    table.write("Bob", "down 3C")
    table.write("Carol", "flip")
    mail = table.poll(t + timedelta(minutes=1))
    assert kinds(mail) == {"Alice": [["down"], ["down"], ["flip"]],
                           "Bob": [["down"], ["transcript", "down"], ["flip"]],
                           "Carol": [["transcript", "down"], ["down"], ["transcript", "flip"]]}
    assert text_of([x for x in mail["Alice"] if kind(x) == "down"][1]) == ATTACK_DOWN
    assert to_all(mail, "flip") == as_part(FLIP)
    # Bob writes a card the referee cannot read, then flip: the card is
    # refused, and the flip after it is not applied (MI-19), so nothing is
    # turned up and nobody else hears of it.
    wrong = table.write("Bob", "down a 10\nflip")
    mail = table.poll(t + timedelta(minutes=1, seconds=30))
    assert kinds(mail) == {"Alice": [], "Bob": [["transcript"]], "Carol": []}
    said = answer(mail, "Bob", wrong)
    assert "> down a 10\n  REFUSED: I cannot read 'a 10' as a card." in said
    assert "> flip\n  NOT APPLIED (flip): an earlier line was refused.\n" in said
    assert post.state(tag)["attack"]["flipped"] == [False, True]
    table.write("Bob", "flip")
    mail = table.poll(t + timedelta(minutes=2))
    assert kinds(mail) == {"Alice": [["round_report"]], "Bob": [["transcript", "round_report"]],
                           "Carol": [["round_report", "your_move"]]}
    assert to_all(mail, "round_report") == as_part(TURN_2)

    # Turn 3. Carol bids for the centre, Alice joins, Carol raises (her "done"),
    # Alice is done;
    # Bob says nothing, and past his deadline the referee writes "done" for him.
    t += timedelta(hours=1)
    table.write("Carol", "bid 2C 1")
    mail = table.poll(t)
    assert kinds(mail) == {"Alice": [["auction", "your_move"]],
                           "Bob": [["auction", "your_move"]],
                           "Carol": [["transcript", "auction"]]}
    assert the(mail, "Bob", "your_move") == as_part(BOB_MAY_JOIN)
    table.write("Alice", "bid 9H 2")
    table.write("Carol", "raise to 3")
    table.write("Alice", "done")
    mail = table.poll(t + timedelta(minutes=1))
    assert kinds(mail)["Bob"] == [["auction"]] * 3
    assert text_of(mail["Bob"][1]) == RAISE
    mail = table.poll(t + timedelta(days=3) - timedelta(seconds=1))
    assert kinds(mail) == {"Alice": [], "Bob": [["reminder"]], "Carol": []}
    mail = table.poll(t + timedelta(days=3, seconds=1))
    # The others are told the "done" was the referee's, by the house rule
    # (rule text 004 has no deadlines), and Bob in words of his own.
    assert kinds(mail) == {"Alice": [["deadline", "round_report", "your_move"]],
                           "Bob": [["deadline_yours", "round_report"]],
                           "Carol": [["deadline", "round_report"]]}
    assert to_all(mail, "round_report") == as_part(TURN_3)
    for name in ("Alice", "Carol"):
        assert the(mail, name, "deadline") == ("No move from Bob by the deadline", (
            'No move came from Bob by the deadline: the referee wrote "done" for\n'
            "them: they stay out of the bidding, by the house rule for silent\nplayers."))
    assert " ".join(the(mail, "Bob", "deadline_yours")[1].split()) == (
        "No move came from you by the deadline, Thu 05 Mar 2026 15:00 UTC: the referee wrote "
        '"done" for you: you stay out of the bidding, by the house rule for silent players.')
    assert [a[1:] for a in post.actions(tag) if a[3] == "timeout"] == [("done", [], "timeout")]

    # Turn 4. Alice stays silent; `referee poll --now` past her deadline passes for
    # her, which leaves her with no pennies: Bob wins (MI-10).
    mail = table.poll(t + timedelta(days=6, seconds=2), cli=True)
    assert kinds(mail) == {"Alice": [["deadline_yours", "round_report"]],
                           "Bob": [["deadline", "round_report"]],
                           "Carol": [["deadline", "round_report"]]}
    assert to_all(mail, "round_report") == as_part(TURN_4)
    assert the(mail, "Bob", "deadline")[1] == (
        "No move came from Alice by the deadline: the referee passed for them, by\n"
        "the house rule for silent players.")
    state = post.state(tag)
    assert (state["over"], state["pennies"], state["centre"]) == (True, [0, 14, 2], 8)
    assert post.referee.reading.status(tag)[0]["status"] == "finished"
    assert post.referee.reading.replay(tag) == state
    post.assert_no_more_mail(*USER.values())
    # This referee's engine dealt and drew what the test fixed, not what its
    # seed draws: Bob, checking from his own mailbox, catches it.
    code, said = verified_by_mail(post, "bob", tag)
    assert code == 1 and ("the draw for first player shows Alice K♠, Bob 9♣, Carol 5♥, but "
                          "the seed draws") in said, said
    # The scan above saw every mail from the referee, and every part of each:
    # some named cards, none hidden. What one mail (or one deadline) caused
    # for a player is one mail (issue 21): 86 parts (79, the mails the players
    # got before, the answer to Bob's refused card, and the six parts that say
    # the two deadline moves were the referee's, riding in them) come in 52 mails.
    assert (len(table.mails), len(table.parts)) == (52, 86)
    assert sum(bool(cards_named(f"{h}\n{t}")) for _, _, h, t in table.parts) > 30
