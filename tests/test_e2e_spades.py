"""Spades (rule text 001) by email end to end, over the suite's real servers.

Four players write their bids and cards to the referee by SMTP (Postfix);
the referee reads its mailbox by IMAP (Dovecot) and answers by SMTP; each
player reads what arrived in their own IMAP mailbox. The deal and seating are
the fixed ones of ``tests/test_spades_mail.py`` (installed with the engine's
test hook), and round 1 is its SCRIPT, with a timeout (SP-15) and a misplay
(SP-14) on the way. Moves that need no answer first are written in a batch
for one pass of the referee, each delivered before the next is written, so
the referee reads them in turn order. Every mail every player receives is
checked for secrecy (rule 6, SP-17).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.cards import full_deck
from referee.games.spades import Spades
from referee.games.spades.rules import card_text
from referee.passes import PassReport
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE
from referee.store import models as m
from tests.mailstack import GIVE_UP, MailStack
from tests.test_e2e import SIGNATURE, T0, Post, body, kind, person, verified_by_mail
from tests.test_spades_mail import (
    BIDS,
    DEAL,
    HAND_LINE,
    HANDS,
    NAMES,
    OPENING_EXAMPLES,
    SCRIPT,
    SEATING,
    cards_named,
    hand_commitment,
    hand_of,
    hand_text,
    kinds,
    latest_cards,
    sections,
)

USER = {name: name.lower() for name in NAMES}  # the mail stack's users
ADDRESS = {name: f"{USER[name]}@example.test" for name in NAMES}
EVERYONE = [ADDRESS[n] for n in NAMES]
SECRET_KINDS = {"hand", "your_turn", "transcript", "reminder", "deadline_yours"}
#: Those that show a hand or say what the player may play: a mail that
#: carries one says it is secret (a reminder shows neither, nor does the
#: bid or card the referee made for a seat at its deadline: the table is
#: told it whole).
MARKED_SECRET = SECRET_KINDS - {"reminder", "deadline_yours"}
#: What each part of a mail of several is, by its headline (in mail all
#: every part comes whole, under its subject less the tag); the first that fits.
PART_KINDS = (
    ("transcript", re.compile(r"Your mail$")),
    ("deadline", re.compile(r"No \w+ from .+ by the deadline$")),
    ("deadline_yours", re.compile(r"The deadline passed: the referee moved for you$")),
    ("your_turn", re.compile(r"(Trick \d+: your card|Round \d+: your bid)$")),
    ("opening", re.compile(r"Spades begins: ")),
    ("play", re.compile(r"Trick \d+: .+ plays ")),
    ("trick", re.compile(r"Trick \d+ to ")),
    ("bid", re.compile(r".+ bids ")),
    ("hand", re.compile(r"Your hand for round \d+")),
    ("misplay", re.compile(r"Misplay by ")),
    ("round_report", re.compile(r"Round \d+ scored: ")),
    ("reminder", re.compile(r"Reminder: ")),
)


def rcpts(msg: EmailMessage) -> list[str]:
    return [a.addr_spec for a in msg["To"].addresses] + (
        [a.addr_spec for a in msg["Cc"].addresses] if msg["Cc"] else [])


def part_kind(headline: str) -> str:
    """The kind of the first of ``PART_KINDS`` whose pattern ``headline`` fits."""
    return next(k for k, pattern in PART_KINDS if pattern.match(headline))


def parts(msg: EmailMessage) -> list[tuple[str, str, str]]:
    """Each part of a mail as (kind, headline, text), in order: a mail of
    one part is its kind, its subject and its text (less the secret note
    and the signature)."""
    if not kind(msg).startswith(COMPOSITE):
        ((_, text),) = sections(msg)
        return [(kind(msg), str(msg["Subject"]), text)]
    found = [(part_kind(head), head, text) for head, text in sections(msg)]
    assert list(dict.fromkeys(k for k, _, _ in found)) == kinds(msg), found
    return found


def part(msg: EmailMessage, what: str) -> str:
    """The text of the one part of kind ``what`` of a mail."""
    (text,) = [t for k, _, t in parts(msg) if k == what]
    return text


def unsigned(text: str) -> str:
    """A mail's text as a part of a mail of several reads: no signature."""
    return text.removesuffix(SIGNATURE).rstrip("\n")


def outbox_order(msg: EmailMessage) -> int:
    """The referee's outbox row of a mail, from its Message-ID <pbm.ID.tag@domain>."""
    return int(str(msg["Message-ID"]).split(".")[1])


class Players:
    """The four players' mailboxes, read over IMAP after each pass of the referee,
    with the secrecy checks on every mail they receive (rule 6, SP-17)."""

    def __init__(self, post: Post, tag: str) -> None:
        self.post, self.tag = post, tag
        self.last_outbox = 0
        self.last_event = 0
        self.played: list[str] = []  # the cards played in round 1, in order (event log)
        self.last_trick: set[str] = set()
        self.announced = dict.fromkeys(NAMES, 0)  # card announcements each has read
        self.received: dict[str, tuple[str, list[str]]] = {}  # Message-ID: reader, parts
        self.public = {name: Counter[str]() for name in NAMES}  # public parts each has read
        self.report = PassReport()

    def write(self, name: str, text: str) -> str:
        """``name`` mails ``text`` to the referee; it is in the referee's INBOX
        before the next mail is written, so the referee reads them in this order."""
        mid = self.post.write(USER[name], text, subject=f"[{self.tag}] move")
        give_up = time.monotonic() + GIVE_UP
        with self.post.stack.imap("referee") as client:  # a search only: nothing fetched
            client.select_folder("INBOX", readonly=True)
            # This very mail, not a count a stray mail could make up.
            while not client.search(["HEADER", "Message-ID", mid]):
                assert time.monotonic() < give_up, f"{mid} did not reach the referee"
                time.sleep(0.01)
                client.noop()
        return mid

    def poll(self, now: datetime) -> dict[str, list[EmailMessage]]:
        """One pass of the referee; returns what each player received from it over
        IMAP (all that the referee sent them, in the order sent), each mail checked."""
        self.report = self.post.poll(now)
        with self.post.referee.sessions() as db:
            rows = list(db.scalars(select(m.Outbox).where(m.Outbox.id > self.last_outbox)
                                   .order_by(m.Outbox.id)))
            events = list(db.scalars(select(m.Event).where(m.Event.id > self.last_event)
                                     .order_by(m.Event.id)))
            self.last_outbox = max([self.last_outbox, *(row.id for row in rows)])
            self.last_event = max([self.last_event, *(event.id for event in events)])
            assert all(row.sent_at is not None for row in rows)
            sent = Counter(addr for row in rows for addr in row.recipients)
            for event in events:
                if event.kind == "play":
                    self.played.append(str(event.data["card"]))
                elif event.kind == "trick" and event.data["trick"] == 13:
                    self.last_trick = {str(c) for c in event.data["cards"]}
        assert set(sent) <= set(EVERYONE), sent
        mail = {name: sorted(self.post.new_mail(USER[name], sent[ADDRESS[name]]),
                             key=outbox_order) if sent[ADDRESS[name]] else []
                for name in NAMES}
        hands = [list(h) for h in self.post.state(self.tag)["hands"]]
        for name, msgs in mail.items():
            for msg in msgs:
                self.check(name, msg, hands)
        return mail

    def check(self, name: str, msg: EmailMessage, hands: list[list[str]]) -> None:
        """Every mail goes to ``name`` alone: their own copy of what is
        public, with what is theirs alone. A mail with a secret part (a
        hand, a prompt, an answer) says it is secret; no mail lists a hand
        but theirs, no part for them alone (those, or a reminder) names a
        card of another player not yet played, and each public part lists
        no hand and names only cards played by then in the round."""
        mid = str(msg["Message-ID"])
        assert mid not in self.received, f"{name} got {mid} twice"
        mine = parts(msg)
        self.received[mid] = (name, [k for k, _, _ in mine])
        assert rcpts(msg) == [ADDRESS[name]], msg["To"]
        secret = any(k in MARKED_SECRET for k, _, _ in mine)
        assert (str(msg["Subject"]).endswith(" (secret)"), body(msg).startswith(SECRET_NOTE)
                ) == (secret, secret), (msg["Subject"], mine)
        own = HANDS[name] | set(hands[NAMES.index(name)])  # round 1 and the hand now
        assert set(hand_of(body(msg))) <= own, body(msg)
        for what, headline, text in mine:
            text = f"{headline}\n{text}"
            if what in SECRET_KINDS:
                assert cards_named(text) <= own | set(self.played), text
                continue
            self.public[name][what] += 1
            text = text.replace(OPENING_EXAMPLES, "")  # "play QH", the same in every game
            assert not HAND_LINE.search(text), text
            for cards in (*HANDS.values(), *hands):
                assert not cards or hand_text(cards) not in text, text
            named = cards_named(text)
            if what in ("play", "trick", "round_report"):
                # The k-th card announced in the round: it names the k-th card
                # played, and no card played after it.
                self.announced[name] += 1
                k = self.announced[name]
                assert self.played[k - 1] in named, (self.played[k - 1], text)
            # The move the referee made at a deadline is said just before
            # the part that announces it.
            allowed = set(self.played[:self.announced[name] + (what == "deadline")])
            if what == "round_report":
                assert named == self.last_trick, text  # the report shows the last trick only
            assert named <= allowed, (named - allowed, text)

    def send(self, moves: Sequence[tuple[str, str]], now: datetime,
             penalised: tuple[str, str] | None = None) -> dict[str, list[EmailMessage]]:
        """Each move by mail, in order, then one pass; each mail gets one
        answer, to its writer alone, saying the move was done (or, for the
        one move ``penalised``, that it cost a penalty), at the head of the
        one mail of what that move caused for its writer."""
        ids = [(name, text, self.write(name, text)) for name, text in moves]
        mail = self.poll(now)
        for name, text, mid in ids:
            (answer,) = [x for x in mail[name] if x["In-Reply-To"] == mid]
            assert parts(answer)[0][0] == "transcript"
            verdict = "PENALTY" if (name, text) == penalised else "DONE"
            assert f"> {text}\n  {verdict} (" in part(answer, "transcript"), body(answer)
        return mail

    def hand(self, name: str) -> set[str]:
        return set(self.post.state(self.tag)["hands"][NAMES.index(name)])


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    """The referee on the real servers, with the fixed deal and seating of
    ``tests/test_spades_mail.py`` in place of the registered Spades engine."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def to_all(mail: dict[str, list[EmailMessage]], what: str) -> list[tuple[str, str]]:
    """The parts of kind ``what`` of one pass, which each player received
    alike, each in their own mail: (headline, text) of each, in order."""
    found = {n: [(h.removeprefix("[spades-1] "), t) for x in mail[n]
                 for k, h, t in parts(x) if k == what] for n in NAMES}
    assert len({tuple(xs) for xs in found.values()}) == 1, found
    return found[NAMES[0]]


def timeout_told(card: str) -> str:
    """What the others are told of the card the referee played for Bob."""
    return f"""\
No card came from Bob by the deadline: the referee played {card_text(card)} for them,
chosen at random among the cards they could legally play, as rule 7
says.

{SIGNATURE}"""


def timeout_play(card: str) -> str:
    """The announcement of the card the referee played for Bob in trick 1."""
    return f"""\
Trick 1 so far: Alice A♥, Bob {card_text(card)}.

Team 1 (Alice & Carol): 0 points, 0 bags; this round bid 7, took 0
Team 2 (Bob & Dave): 0 points, 0 bags; this round bid 4, took 0

Next: Carol, a card to trick 1 (due Sun 08 Mar 2026 13:00 UTC).

{SIGNATURE}"""


def trick_1(card: str) -> str:
    return f"""\
Trick 1: Alice A♥, Bob {card_text(card)}, Carol 4♥, Dave 2♥.
Alice wins it with A♥.

Team 1 (Alice & Carol): 0 points, 0 bags; this round bid 7, took 1
Team 2 (Bob & Dave): 0 points, 0 bags; this round bid 4, took 0

Next: Alice, a card to trick 2 (due Sun 08 Mar 2026 14:00 UTC).

{SIGNATURE}"""


MISPLAY_NOTICE = f"""\
Bob misplayed. The card is void and team 2 scores -100.
Team 2 misplays: 1 this hand, 1 this game.
Bob plays again.

Team 1 (Alice & Carol): 0 points, 0 bags; this round bid 7, took 3
Team 2 (Bob & Dave): -100 points, 0 bags; this round bid 4, took 0

Next: Bob, a card to trick 4 (due Sun 08 Mar 2026 14:00 UTC).

{SIGNATURE}"""

#: Bob's misplay: the answer to his mail, the table's notice of it, his
#: turn again, in one mail for him alone.
BOB_MISPLAYED = f"""\
{SECRET_NOTE}

Your mail
---------
Bob, here is what I did with your mail for spades-1.

> play AS
  PENALTY (play AS): Misplay: Clubs were led and you hold clubs: you must follow suit. \
The card is void and your team scores -100 (misplays this hand: 1, this game: 1). \
Please play again.

Next deadline for you: Sun 08 Mar 2026 14:00 UTC.

Misplay by Bob: team 2 scores -100
----------------------------------
{unsigned(MISPLAY_NOTICE)}

Trick 4: your card
------------------
Clubs were led and you hold clubs: you must follow suit.

Bob, it is your turn, by Sun 08 Mar 2026 14:00 UTC.

Trick 4: Alice 2♣.
You may play: A♣ K♣ Q♣ J♣

Your hand:
♠ A 10 8 5
♥ -
♣ A K Q J
♦ K 2

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

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
  misplays:    -100 (scored at the time of the misplay)
  round:       +41    Spadescore: 0 -> 41

Round 2 is dealt: each player has their cards in a secret mail.
Bob bids first, by Sun 08 Mar 2026 15:00 UTC.

{SIGNATURE}"""


def test_a_round_of_spades_by_email_with_a_misplay_and_a_timeout_over_imap_and_smtp(
        post: Post) -> None:
    """Rules 1-7, SP-14, SP-15 and SP-17, by mail through Postfix and Dovecot."""
    # Every mail as it happens (mail all), so each one is checked; the default,
    # mail turns, is tests/service/outgoing/test_quiet.py's. Every card by mail
    # as the script writes it: forced cards playing themselves (issue 37) are
    # tests/test_e2e_standing.py's.
    tag = post.referee.operator.create_game("spades", [person(USER[n]) for n in NAMES], now=T0,
                                   seed="e2e", options={"mail": "all", "autoplay": "off"})
    players = Players(post, tag)
    mail = players.poll(T0)
    for name in NAMES:  # the opening and their hand: one mail
        assert [kinds(x) for x in mail[name]] == [["opening", "hand"]]
        assert hand_text(HANDS[name]) in part(mail[name][0], "hand")

    # The four bids, and Alice leads A♥ to trick 1: one pass reads the five mails in order.
    t1 = T0 + timedelta(hours=1)
    mail = players.send([*BIDS, SCRIPT[0]], t1)
    assert post.state(tag)["bids"] == [4, 4, 3, 0]
    turn = mail["Bob"][-1]  # Alice's card, and Bob's turn: one mail
    assert (kinds(turn), turn["Subject"]) == (
        ["play", "your_turn"], "[spades-1] Trick 1: your card (secret)")
    legal = latest_cards({"Bob": body(turn)}, "Bob", "You may play:")
    assert sorted(legal) == ["3H", "5H", "8H"]

    # Bob stays silent: a reminder, to him alone, before the deadline; nothing is played.
    mail = players.poll(t1 + timedelta(days=3, seconds=-1))
    assert players.report.timeouts == 0
    assert {n: [kind(x) for x in mail[n]] for n in NAMES} == {
        "Alice": [], "Bob": ["reminder"], "Carol": [], "Dave": []}
    assert mail["Bob"][0]["Subject"] == "[spades-1] Reminder: a card to trick 1"
    # Past the 3 days the referee plays a random legal card for him and says so (SP-15).
    t2 = t1 + timedelta(days=3, seconds=1)
    mail = players.poll(t2)
    assert players.report.timeouts == 1
    (card,) = HANDS["Bob"] - players.hand("Bob")
    assert card in legal
    assert [a for a in post.actions(tag) if a[3] == "timeout"] == [
        (2, "play", [card], "timeout")]
    (news,) = to_all(mail, "play")
    assert news == (f"Trick 1: Bob plays {card_text(card)}", unsigned(timeout_play(card)))
    # The others are told the card was the referee's before it, Bob in words
    # of his own, for him alone; Carol's mail carries her turn too.
    for name in ("Alice", "Carol", "Dave"):
        (told,) = [(h, t) for x in mail[name] for k, h, t in parts(x) if k == "deadline"]
        assert told == ("No card from Bob by the deadline", unsigned(timeout_told(card)))
    assert [kinds(x) for x in mail["Bob"]] == [["deadline_yours", "play"]]
    assert " ".join(part(mail["Bob"][0], "deadline_yours").split()) == (
        "No card came from you by the deadline, Thu 05 Mar 2026 13:00 UTC: the referee played "
        f"{card_text(card)} for you, chosen at random among the cards you could legally play, "
        "as rule 7 says.")
    assert [kinds(x) for x in mail["Carol"]] == [["deadline", "play", "your_turn"]]
    assert post.state(tag)["scores"] == [0, 0]

    # The script goes on, with Bob's hearts swapped if the referee played another than
    # his scripted 3♥: they are all below Alice's A♥ K♥ Q♥, so she still takes tricks 1-3.
    scripted = SCRIPT[1][1].split()[1]
    rest = [(n, f"play {scripted}" if n == "Bob" and cards_named(t) == {card} else t)
            for n, t in SCRIPT[2:]]
    # Carol and Dave end trick 1; tricks 2 and 3; Alice leads 2♣ and Bob, who holds
    # clubs, plays A♠: a misplay. The team scores -100 at once and Bob plays again (SP-14).
    mail = players.send([*rest[:11], ("Bob", "play AS")], t2 + timedelta(hours=1),
                        penalised=("Bob", "play AS"))
    trick = to_all(mail, "trick")[0]
    assert trick == ("Trick 1 to Alice", unsigned(trick_1(card)))
    # Bob's misplay brings him one mail: the answer, the table's notice, his turn again.
    misplayed = mail["Bob"][-1]
    assert kinds(misplayed) == ["transcript", "misplay", "your_turn"]
    assert body(misplayed) == BOB_MISPLAYED
    (notice,) = to_all(mail, "misplay")
    # It names neither the card nor the reason.
    assert notice == ("Misplay by Bob: team 2 scores -100", unsigned(MISPLAY_NOTICE))
    state = post.state(tag)
    assert (state["scores"], state["trick"], state["game_misplays"]) == ([0, -100], ["2C"], [0, 1])
    assert "AS" in players.hand("Bob")

    # Bob plays again, and the round is played out: 39 mails, one pass.
    mail = players.send(rest[11:], t2 + timedelta(hours=2))
    answer = [x for x in mail["Bob"] if "transcript" in kinds(x)][-1]
    assert ("Round 1: team 1 bid 7, took 8 (made), scores +71, now 71; team 2 bid 4, took 5 "
            "(made), scores +141, misplays -100, now 41.") in part(answer, "transcript")
    for name in NAMES:
        # The last card's mail ends with the report and the new hand.
        assert [k for k, _, _ in parts(mail[name][-1])][-2:] == ["round_report", "hand"]
    (report,) = to_all(mail, "round_report")
    state = post.state(tag)
    # The new deal is committed hand by hand, each with the salt its player
    # alone is sent.
    assert report == ("Round 1 scored: team 1 71, team 2 41", unsigned(ROUND_1_REPORT) + (
        "\n\nThe SHA-256 fingerprint of each hand of round 2, as dealt\n"
        "(your secret hand mail tells you how to check yours):\n"
        + "\n".join(f"  hand-sha256 {n}: {hand_commitment(h, salt)}"
                    for n, h, salt in zip(state["names"], state["hands"], state["hand_salts"],
                                          strict=True))))
    assert (state["round"], state["scores"], state["bags"]) == (2, [71, 41], [1, 1])
    for name, cards in zip(NAMES, state["hands"], strict=True):
        deal = mail[name][-1]
        (head,) = [h for k, h, _ in parts(deal) if k == "hand"]
        assert head == "Your hand for round 2 (secret)"
        assert hand_text(cards) in part(deal, "hand")
    assert "It is your turn to bid" in part(mail["Bob"][-1], "hand")  # SP-3: Bob bids first

    # Over the whole round: 52 cards, each announced to all four in the order played;
    # every secret part reached one mailbox, every public one all four, and nobody else.
    assert sorted(players.played) == sorted(str(c) for c in full_deck())
    assert players.announced == dict.fromkeys(NAMES, 52)
    # The opening, the bids, the cards (as plays, tricks and the report), the
    # misplay: each player read each once, in their own mails.
    for name in NAMES:
        public = players.public[name]
        assert (public["opening"], public["bid"], public["misplay"]) == (1, 4, 1), public
        assert public["play"] + public["trick"] + public["round_report"] == 52, public
    post.assert_no_more_mail(*USER.values(), "erin", "frank")
    # Each player checks each hand they were dealt against its fingerprint.
    for user in USER.values():
        assert verified_by_mail(post, user, tag) == (0, "verified\n"), user
    assert post.referee.reading.replay(tag) == state


def test_a_deadline_bid_and_card_are_said_on_the_list_and_to_the_seat_and_a_late_move_answered(
        mailstack: MailStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 7 with a public list and the default mail mode: Bob stays silent
    at his bid and at his card. Each time the list tells the table the move
    was the referee's, citing rule 7, and Bob is told in words of his own;
    his late bid is answered with what was done for him, not with whose turn
    it is; the game's page shows it in its history."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    lst = mailstack.list_address
    post = Post(mailstack, tmp_path, public_list=lst)
    read = 0

    def poll(now: datetime) -> dict[str, list[EmailMessage]]:
        """One pass; what it sent each player (the list's posts among it)."""
        nonlocal read
        post.poll(now)
        with post.referee.sessions() as db:
            rows = list(db.scalars(select(m.Outbox).where(m.Outbox.id > read)))
        read = max([read, *(row.id for row in rows)])
        sent = Counter(addr for row in rows for addr in row.recipients)
        post.in_referee_inbox += sent[lst]  # each post comes back to the referee
        return {n: post.new_mail(USER[n], sent[ADDRESS[n]] + sent[lst]) for n in NAMES}

    def posted(mail: dict[str, list[EmailMessage]]) -> list[EmailMessage]:
        """The list's posts of a pass, as each player received them alike."""
        copies = {n: [(x["Subject"], body(x)) for x in got if lst in str(x["To"])]
                  for n, got in mail.items()}
        assert len({tuple(c) for c in copies.values()}) == 1, copies
        return [x for x in mail["Alice"] if lst in str(x["To"])]

    def alone(mail: dict[str, list[EmailMessage]], name: str) -> EmailMessage:
        (mine,) = [x for x in mail[name] if rcpts(x) == [ADDRESS[name]]]
        return mine

    try:
        tag = post.referee.operator.create_game(
            "spades", [person(USER[n]) for n in NAMES], now=T0, seed="said")
        poll(T0)
        t1 = T0 + timedelta(hours=1)
        post.write("alice", "bid 4", subject=f"[{tag}] move")
        poll(t1)

        # Bob stays silent: past his deadline the referee bids 2 for him.
        t2 = t1 + timedelta(days=3, seconds=1)
        mail = poll(t2)
        (post_,) = posted(mail)
        assert post_["Subject"] == f"[{tag}] No bid from Bob by the deadline"
        assert unsigned(body(post_)) == ("No bid came from Bob by the deadline: the referee bid 2 "
                                         "for them, as\nrule 7 says.")
        bobs = alone(mail, "Bob")
        assert "deadline_yours" in kinds(bobs)
        # It tells Bob nothing the table was not told: not marked secret.
        assert not str(bobs["Subject"]).endswith("(secret)"), bobs["Subject"]
        assert not body(bobs).startswith(SECRET_NOTE)
        assert ("No bid came from you by the deadline, Thu 05 Mar 2026 13:00 UTC: the\n"
                "referee bid 2 for you, as rule 7 says.") in body(bobs)
        assert post.state(tag)["bids"] == [4, 2, None, None]

        # His bid comes late: it is answered with what was done for him.
        late = post.write("bob", "bid 4", subject=f"Re: {bobs['Subject']}", reply_to=bobs)
        mail = poll(t2 + timedelta(hours=1))
        (answer,) = [x for x in mail["Bob"] if x["In-Reply-To"] == late]
        assert ("> bid 4\n  REFUSED (bid 4): The deadline passed at Thu 05 Mar 2026 13:00 UTC: "
                "the referee bid 2 for you, as rule 7 says. Now waiting for Carol's bid for "
                "round 1. This line was not applied.\n") in body(answer)
        assert "turn to bid, not yours" not in body(answer)
        assert post.state(tag)["bids"] == [4, 2, None, None]

        # Carol and Dave bid, Alice leads A♥; Bob is silent again: a random
        # legal card is played for him, said on the list and to him.
        t3 = t2 + timedelta(hours=2)
        for name, text in [BIDS[2], BIDS[3], SCRIPT[0]]:
            post.write(USER[name], text, subject=f"[{tag}] move")
            poll(t3)
        mail = poll(t3 + timedelta(days=3, seconds=1))
        (card,) = HANDS["Bob"] - set(post.state(tag)["hands"][NAMES.index("Bob")])
        assert card in {"3H", "5H", "8H"}
        (post_,) = posted(mail)
        assert post_["Subject"] == f"[{tag}] No card from Bob by the deadline"
        assert " ".join(unsigned(body(post_)).split()) == (
            f"No card came from Bob by the deadline: the referee played {card_text(card)} for "
            "them, chosen at random among the cards they could legally play, as rule 7 says.")
        assert ("the referee played "
                f"{card_text(card)} for you, chosen at random among the cards you could "
                "legally play, as rule 7 says.") in " ".join(body(alone(mail, "Bob")).split())

        # The game's page shows both in its history; Bob's own words are his alone.
        (history,) = post.referee.reading.public_histories([tag]).values()
        said = [e["text"] for e in history if e["kind"] == "deadline"]
        assert said == [
            "No bid came from Bob by the deadline: the referee bid 2 for them, as rule 7 says.",
            f"No card came from Bob by the deadline: the referee played {card_text(card)} for "
            "them, chosen at random among the cards they could legally play, as rule 7 says."]
        assert not [e for e in history if e["kind"] == "deadline_yours"]
    finally:
        post.close()
