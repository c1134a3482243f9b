"""The Land of Agora tournament (rule text 002) by email end to end, over
the suite's real servers: the players write by SMTP (Postfix) to the
referee or to the list ``players@example.test`` (every player and the
referee); the referee reads its mailbox by IMAP (Dovecot) and answers by
SMTP; each player reads their own IMAP mailbox.

The operator starts a tournament of three instructions with
``referee game new loatcg --instructions FILE`` and no members. Alice deals
herself in on the list, Bob in a mail to the referee alone. Alice offers Bob
a trade privately (Bob on Cc) and Bob executes it privately (Alice on Cc);
Bob offers a trade on the list and Alice's public execution fails, so the
list hears that she did not meet its conditions and she alone hears why.
Alice pays three apples, secretly, for a random instruction. Then
``referee poll --now`` at days 7, 14 and 21 publishes Round Report 1, Round
Report 2 (with a secret deal of three cards to each member) and the Final
Report. Every mail anyone received is scanned: none but the holder's shows a
hand, a deal or an instruction before a report published it.

The referee trusts the players' mail server (``[auth] authserv_id``), which
vouches for every player, so a stranger's join seats them at once; a join
nothing vouches for waits for a confirmation (``tests/test_e2e_joining.py``).
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

import pytest
from sqlalchemy import select

from referee.games.loatcg.instructions import parse_instructions
from referee.service.outgoing.queue import SECRET_NOTE
from referee.service.outgoing.quiet import COMPOSITE
from referee.store import models as m
from tests.mailstack import GIVE_UP, PLAYERS, REPO_ROOT, MailStack
from tests.test_e2e import (
    REF,
    SIGNATURE,
    T0,
    Post,
    as_part,
    body,
    kind,
    referee_command,
    seed_told,
    verified_by_mail,
)
from tests.test_e2e_entropy import verify
from tests.test_e2e_entropy_games import refused
from tests.test_e2e_turns import moves
from tests.test_spades_mail import kinds as mail_kinds
from tests.test_spades_mail import section, sections

#: Alice is dealt an ore, 3 apples and a diamond; Bob 2 ore, 2 wool, a diamond;
#: Alice's random reveal shows instruction 1, the reports 2 and then 3.
SEED = "agora-308116"
#: The fingerprint the opening publishes: SHA-256 of "seed: SEED\n".
SEED_SHA256 = hashlib.sha256(f"seed: {SEED}\n".encode()).hexdigest()
INSTRUCTIONS = "1. points ore wool lumber 2\n2. pairs diamond 5 odd -15\n3. points apple 1\n"
ENGLISH = [i.english() for i in parse_instructions(INSTRUCTIONS)]
ADDRESS = {user: f"{user}@example.test" for user in PLAYERS}
SECRET_KINDS = {"dealt", "hand", "reveal", "take_failed", "trade_failed", "transcript"}
#: The players' mail server, whose Authentication-Results the referee trusts.
MX = "mail.example.test"


def flat(text: str) -> str:
    return " ".join(text.split())


def outbox_order(msg: EmailMessage) -> int:
    return int(str(msg["Message-ID"]).split(".")[1])


class Tournament:
    """The players' mailboxes, read after each pass, and what was sent."""

    def __init__(self, post: Post) -> None:
        self.post = post
        self.list = post.stack.list_address
        self.last_outbox = 0

    def write(self, user: str, text: str, subject: str, to: Sequence[str],
              name: str = "") -> None:
        msg = EmailMessage()
        msg["From"] = f"{name or user.capitalize()} <{ADDRESS[user]}>"
        msg["To"] = ", ".join(to)
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(idstring=user, domain="mua.example.test")
        # What the players' server adds (the suite's Postfix has no milter).
        msg["Authentication-Results"] = f"{MX}; dmarc=pass header.from=example.test"
        msg.set_content(f"{text}\n\n-- \n{user.capitalize()}\n")
        self.post.stack.send(msg, user, list(to))
        self.post.in_referee_inbox += 1
        readers = PLAYERS if self.list in to else [u for u in PLAYERS if ADDRESS[u] in to]
        for reader in readers:  # everyone's copy, the list's included
            (copy,) = self.post.new_mail(reader, 1)
            assert copy["Message-ID"] == msg["Message-ID"]
        give_up = time.monotonic() + GIVE_UP
        with self.post.stack.imap("referee") as client:
            while int(client.folder_status("INBOX", [b"MESSAGES"])[b"MESSAGES"]
                      ) < self.post.in_referee_inbox:
                assert time.monotonic() < give_up, f"{text!r} did not reach the referee"
                time.sleep(0.01)

    def poll(self, now: datetime, *, cli: bool = False) -> dict[str, list[EmailMessage]]:
        """One pass (in process, or ``referee poll --now``); what each player got."""
        if cli:
            self.post.stack.wait_for("referee", self.post.in_referee_inbox)
            done = subprocess.run(referee_command(self.post, "poll", "--now", now.isoformat()),
                                  cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        else:
            self.post.poll(now)
        return self.received()

    def received(self) -> dict[str, list[EmailMessage]]:
        with self.post.referee.sessions() as db:
            rows = list(db.scalars(select(m.Outbox).where(m.Outbox.id > self.last_outbox)
                                   .order_by(m.Outbox.id)))
        self.last_outbox = max([self.last_outbox, *(row.id for row in rows)])
        assert all(row.sent_at is not None for row in rows)
        public = sum(row.recipients == [self.list] for row in rows)
        self.post.in_referee_inbox += public  # the list brings them back to the referee
        mail = {}
        for user in PLAYERS:
            count = sum(row.recipients in ([self.list], [ADDRESS[user]]) for row in rows)
            mail[user] = sorted(self.post.new_mail(user, count), key=outbox_order) if count else []
        return mail


def kinds(mails: list[EmailMessage]) -> list[list[str]]:
    """What each mail carries: its one kind, or each kind of a mail of several."""
    return [mail_kinds(x) for x in mails]


def unsigned(text: str) -> str:
    """A mail's text as a part of a mail of several reads: no signature."""
    return text.removesuffix(SIGNATURE).rstrip("\n")


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path, auth={"authserv_id": MX}, public_list=mailstack.list_address)
    yield p
    p.close()


#: Alice's mail when she deals herself in: her answer only says it was
#: done, so it rides as a line with the join (a single move, which the list
#: does not hear) above her five cards, in one mail for her alone.
DEALT_ALICE = f"""\
Alice,
you have dealt yourself in: the Dealor deals you 5 cards (rule 3).

Dealt to you: 1 ore, 3 apples, 1 diamond
(The seed's draw "join/1" chose them: once the Final Report tells
the seed, "referee verify" checks them.)

Your hand (5 cards): 1 ore, 3 apples, 1 diamond

This mail is SECRET: it went to you alone. The Dealor never reveals
secret information privately or publicly (rule 9).

Round 1 of 3 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.

{SIGNATURE}"""


def test_a_tournament_by_email_joins_trades_a_secret_reveal_and_the_reports(
        post: Post, tmp_path: Path) -> None:
    t = Tournament(post)
    instructions = tmp_path / "instructions.txt"
    instructions.write_text(INSTRUCTIONS, encoding="utf-8")
    # The operator starts it with no members; the opening goes to the list.
    done = subprocess.run(referee_command(
        post, "game", "new", "--at-once", "loatcg", "--instructions", str(instructions),
        "--option", "report_days=7", "--seed", SEED, "--now", T0.isoformat()),
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "loatcg-1\n", "")
    tag = "loatcg-1"
    got = t.received()
    assert all(kinds(got[u]) == [["opening"]] for u in PLAYERS)
    opening = body(got["carol"][0])
    assert "There are 3 numbered Scoring Instructions" in flat(opening)
    assert opening.startswith(f"""\
The Dealor begins the Land of Agora tournament (LoAtTCG) and round 1
(rule text 002, rule 5).

There are 3 numbered Scoring Instructions (rule 4), known only to
the Dealor. The SHA-256 hash of their text, with a secret 256-bit salt, is

{post.state(tag)["digest"]}

The Final Report will give the salt and the exact text, so anyone can
check this hash.

Timetable: 7 days after each round begins, a Round Report
gives every Member's Hand Score, one instruction not reported before
(without its number) and the Discard Pile (rule 5). From the second report
on, every Member is then dealt 3 cards, secretly (rule 7). Seven days after
round 3 begins the tournament freezes, and the Final Report names
the winner(s) (rule 6).

Members: none yet.

Every random draw of this game (the salt of the hash above, every deal,
the instruction each Round Report gives, a random reveal) comes from a
secret seed, fixed now. Its SHA-256 fingerprint:
  seed-sha256: {SEED_SHA256}
The game's last mail will tell the seed, so that anyone can check it
against this fingerprint and draw every draw of the game again.

Write one action a line, to the list (publicly), to the referee and some
members (privately) or to the referee alone (secretly) - definition F:

  deal me in             become a Member (to the list or the referee, rule 1)
""")
    assert opening.endswith(f"""\
  withdraw 3             withdraw your own offer 3

Round 1 of 3 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.

{SIGNATURE}""")

    # Alice deals herself in on the list; Bob in a mail to the referee alone.
    # The list hears each join (the README: "the list hears it"); the
    # joiner's answer, that only says the mail's moves were done, is a line
    # of their mail with their cards.
    t.write("alice", "deal me in", f"Re: [{tag}] The tournament begins", [t.list])
    got = t.poll(T0 + timedelta(hours=1))
    assert kinds(got["alice"]) == [["joined"], ["transcript", "dealt"]]
    assert all(kinds(got[u]) == [["joined"]] for u in PLAYERS if u != "alice")  # the post
    joined, mine = got["alice"]
    assert str(joined["To"]) == t.list and joined["Subject"] == f"[{tag}] Alice deals emself in"
    assert str(mine["To"]) == "Alice <alice@example.test>"
    assert mine["Subject"] == f"[{tag}] Land of Agora tournament (secret)"
    assert body(mine) == f"""\
{SECRET_NOTE}

Since your last mail:
  You: deal me in (done)

Cards dealt to you (secret)
---------------------------
{DEALT_ALICE}"""
    t.write("bob", "count me in, please:\n\ndeal me in", "The card game", [REF])
    got = t.poll(T0 + timedelta(hours=2))
    assert kinds(got["bob"]) == [["joined"], ["transcript", "dealt"]]
    assert moves(got["bob"][1]) == ["  You: deal me in (done)"]
    assert "Dealt to you: 2 ore, 2 wool, 1 diamond" in section(got["bob"][1], "Cards dealt")
    # Everyone on the list reads the join, Carol, no member, too.
    assert kinds(got["alice"]) == kinds(got["carol"]) == [["joined"]]

    # A private trade: offered with Bob on Cc, executed with Alice on Cc.
    t.write("alice", "offer 1 diamond for 1 wool", f"[{tag}] a trade, Bob?",
            [REF, ADDRESS["bob"]])
    got = t.poll(T0 + timedelta(hours=3))
    assert kinds(got["alice"]) == [["transcript", "offer"]] and kinds(got["bob"]) == [["offer"]]
    offer = got["bob"][0]
    assert str(offer["To"]) == "Bob <bob@example.test>"
    assert offer["Subject"] == f"[{tag}] Offer 1: Alice gives 1 diamond for 1 wool (private)"
    assert body(offer) == f"""\
Alice offers a trade (rule 10):

  offer 1: Alice gives 1 diamond
           and wants 1 wool in return.

It may be accepted by Bob.
To execute it write "accept 1", publicly, or privately with
Alice copied. The cards are checked when it is executed. The
offer stands until it is executed or withdrawn ("withdraw 1"
by Alice), and lapses at the Freeze.
(Private: this answer goes to Alice, Bob, who saw the request.)

Round 1 of 3 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.

{SIGNATURE}"""
    # Alice's mail: her answer, as a line (Bob's join was the list's); then
    # her copy of the offer, the same as Bob's.
    (mine,) = got["alice"]
    assert str(mine["To"]) == "Alice <alice@example.test>"
    assert mine["Subject"] == f"[{tag}] Land of Agora tournament"
    assert moves(mine) == ["  You: offer 1 diamond for 1 wool (done)"]
    assert sections(mine)[1:] == [as_part(offer)]
    assert not got["carol"]
    t.write("bob", "accept 1", f"[{tag}] deal", [REF, ADDRESS["alice"]])
    got = t.poll(T0 + timedelta(hours=4))
    assert kinds(got["bob"]) == [["transcript", "trade"]] and kinds(got["alice"]) == [["trade"]]
    assert not got["carol"]
    trade = got["alice"][0]
    assert trade["Subject"] == f"[{tag}] Trade 1 done (private)"
    assert moves(got["bob"][0]) == ["  You: accept 1 (done)"]
    assert sections(got["bob"][0])[1:] == [as_part(trade)]  # Bob's copy, the same
    assert body(trade) == f"""\
Bob executes offer 1 of Alice: 1 diamond
for 1 wool (rule 10).

The trade succeeded: Alice gives 1 diamond to Bob,
and Bob gives 1 wool to Alice.
(Private: this answer goes to Alice, Bob, who saw the request.)

Round 1 of 3 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.

{SIGNATURE}"""

    # A public trade that fails: the list hears who, Alice alone why.
    t.write("bob", "offer 1 ore for 2 lumber", f"[{tag}] lumber wanted", [t.list])
    got = t.poll(T0 + timedelta(hours=5))
    # The list's post, to all; Bob's answer only says his offer was made: it
    # is held for his next mail.
    assert kinds(got["bob"]) == kinds(got["carol"]) == [["offer"]]
    assert str(got["bob"][0]["To"]) == t.list
    t.write("alice", "accept 2", f"[{tag}] yes", [t.list])
    got = t.poll(T0 + timedelta(hours=6))
    assert kinds(got["alice"]) == [["trade"], ["transcript", "trade_failed"]]
    assert kinds(got["bob"]) == kinds(got["carol"]) == [["trade"]]
    failed = got["carol"][0]
    assert str(failed["To"]) == t.list
    assert body(failed) == f"""\
Alice executes offer 2 of Bob: 1 ore
for 2 lumber (rule 10).

The trade failed: Alice did not meet the conditions
for the trade. No cards moved, and offer 2 stays open.

Round 1 of 3 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.

{SIGNATURE}"""
    why = got["alice"][1]
    assert str(why["To"]) == "Alice <alice@example.test>"
    # The answer says FAILED, not "(done)": it is news, and comes whole.
    # Its subject says what the answer is, not what Alice wrote.
    assert why["Subject"] == (f"[{tag}] Failed (execute 2): Trade 2 failed: Alice did not "
                              "meet the conditions for the trade (secret)")
    assert body(why) == f"""\
{SECRET_NOTE}

Your mail
---------
Alice, here is what I did with your mail for loatcg-1.

> accept 2
  FAILED (execute 2): Trade 2 failed: Alice did not meet the conditions for the trade.

Why trade 2 failed (secret)
---------------------------
Alice, trade 2 (Bob gives 1 ore
for 2 lumber) failed because you did not meet its conditions.
You were short of: 2 lumber.

Your hand (5 cards): 1 ore, 1 wool, 3 apples

This mail is SECRET: it went to you alone. The Dealor never reveals
secret information privately or publicly (rule 9).

{SIGNATURE}Write "help" to the referee for what you can do now.
"""

    # A paid reveal, secretly: Alice alone hears it; nothing goes to the list.
    t.write("alice", "buy random", f"[{tag}] a secret", [REF])
    got = t.poll(T0 + timedelta(hours=7))
    assert kinds(got["alice"]) == [["transcript", "reveal"]]
    assert not any(got[u] for u in PLAYERS if u != "alice")
    (reveal,) = got["alice"]
    assert post.state(tag)["members"][0]["known"] == [1]
    assert reveal["Subject"] == f"[{tag}] Land of Agora tournament (secret)"
    assert moves(reveal) == ["  You: buy random (done)"]
    assert sections(reveal)[1][0] == "Scoring Instruction 1 (secret)"
    assert section(reveal, "Scoring Instruction 1") == unsigned(f"""\
Alice, you discarded 3 apples for the Dealor to reveal
a randomly-chosen Scoring Instruction, with its number (rule 8). It is:

  1. Each ore, wool or lumber is worth 2 points.

Your hand (2 cards): 1 ore, 1 wool
Instructions the Dealor has revealed to you:
  1. Each ore, wool or lumber is worth 2 points.

This mail is SECRET: it went to you alone. The Dealor never reveals
secret information privately or publicly (rule 9).
You may tell others what you learned, truly or not: the Dealor will not.

{SIGNATURE}""")

    # The Dealor's timetable, by `referee poll --now`: two reports, the Final Report.
    # Bob's public offer was answered by the list's post of it: no line
    # saying it was done comes to him a day on.
    got = t.poll(T0 + timedelta(days=7) - timedelta(minutes=1), cli=True)
    assert not any(got[u] for u in PLAYERS)
    got = t.poll(T0 + timedelta(days=7), cli=True)
    assert all(kinds(got[u]) == [["round_report"]] for u in PLAYERS)
    report_1 = got["carol"][0]
    got = t.poll(T0 + timedelta(days=14), cli=True)
    assert kinds(got["alice"]) == kinds(got["bob"]) == [["round_report"], ["dealt"]]
    assert kinds(got["carol"]) == [["round_report"]]
    # The last Round Report says the Freeze comes next, and when.
    assert ("This was the last Round Report. Instead of another, the tournament\n"
            "freezes on Mon 23 Mar 2026 12:00 UTC, with the Final Report (rule 6).\n"
            ) in body(got["carol"][0])
    assert "round 3 begins: the Dealor deals each Member 3 cards (rule 7)" in flat(
        body(got["bob"][1]))
    got = t.poll(T0 + timedelta(days=21), cli=True)
    assert all(kinds(got[u]) == [["final_report"]] for u in PLAYERS)
    final = body(got["carol"][0])
    state = post.state(tag)
    # What was hashed holds each instruction's words (here the rule's
    # English, as no words were given) above its rule.
    committed = f"salt: {state['salt']}\n" + "".join(
        f"{n}. {words}\n   = {rule}\n" for n, (words, rule) in enumerate(
            zip(ENGLISH, [line.split(". ", 1)[1] for line in INSTRUCTIONS.splitlines()],
                strict=True), start=1))
    assert state["frozen"] and committed in final
    assert state["digest"] in opening and state["digest"] in final
    assert hashlib.sha256(committed.encode()).hexdigest() == state["digest"]
    assert report_1["Subject"] == f"[{tag}] Round Report 1: round 2 begins"
    assert body(report_1) == f"""\
ROUND REPORT 1 (rule 5)

Hand Scores at the end of round 1:
  Alice: 4
  Bob: 11

A Scoring Instruction, chosen at random among those not reported before
(its number is not given):

  {ENGLISH[1]}

The Discard Pile: 3 apples.

Round 2 begins. (No cards are dealt after the first
Round Report, rule 7.)

The next Round Report (Round Report 2) is due Mon 16 Mar 2026 12:00 UTC.

{SIGNATURE}"""
    assert final == f"""\
The tournament has frozen: round 3 is over (rule 6). This is the
Final Report.

THE SCORING INSTRUCTIONS
  1. {ENGLISH[0]}
  2. {ENGLISH[1]} (Round Report 1)
  3. {ENGLISH[2]} (Round Report 2)

HANDS AND SCORES AT THE FREEZE
  Alice: 11 points; 1 ore, 1 wool, 1 lumber, 2 diamonds
  Bob: 17 points; 2 ore, 4 wool, 2 diamonds

Bob wins the tournament with the highest Hand Score (rule 6).
Open offer 2 lapses at the Freeze.

THE HASH
The hash published at the start was {state["digest"]}.
It is the SHA-256 of the text between the lines below, the salt
{state["salt"]} included, every line ending in a newline:
-----
{committed}-----
To check it, save that text (not the lines of dashes) in a file, say
hash.txt, and run: sha256sum hash.txt

{seed_told(SEED, tag)}The tournament has ended: nothing more is accepted.

{SIGNATURE}"""

    scan_every_mailbox(post, t.list, state)
    # Carol checks the draws from her own mailbox (issue 23). The members'
    # own posts to the list carry the tag too: not the referee's, so they
    # are not read, and counted (issue 38).
    assert verified_by_mail(post, "carol", tag) == (0, (
        "verified\n3 mails with the tag not from the referee referee@example.test (by From "
        "and Message-ID) were ignored\n"))
    refused_when_altered(post, tag)


def lf(text: str, old: str, new: str) -> str:
    """``text`` (as a mail's part gives it, lines ending in CRLF) with
    ``old`` replaced by ``new``, in LF lines; as it was where ``old`` is not."""
    lines = text.replace("\r\n", "\n")
    return lines.replace(old, new) if old in lines else text


def refused_when_altered(post: Post, tag: str) -> None:
    """Bob's mailbox (a member dealt cards twice), as received, verifies;
    with one draw altered (a Round Report's instruction, the cards dealt
    to him), a report's subject altered, or the Dealor's committed words
    altered, it is refused with one line naming the mail (issue 38)."""
    # The members' posts to the list, and Alice's private offer to him (Bob
    # on Cc), carry the tag: not the referee's, ignored and counted.
    assert verify(post, "bob", tag) == (0, (
        "verified\n4 mails with the tag not from the referee referee@example.test (by From "
        "and Message-ID) were ignored\n"))
    report_1 = next(x for x in post.stack.fetch_all("bob")
                    if str(x["Subject"]) == f"[{tag}] Round Report 1: round 2 begins")

    # (a) Round Report 1 gives another instruction than the seed draws.
    def instruction_altered(subject: str, text: str) -> tuple[str, str]:
        if not text.startswith("ROUND REPORT 1 "):
            return subject, text
        return subject, lf(text, f"\n\n  {ENGLISH[1]}\n", f"\n\n  {ENGLISH[0]}\n")

    said = verify(post, "bob", tag, instruction_altered)
    print(said[1])
    refused(said, str(report_1["Subject"]),
            "Round Report 1 gives instruction 1, but the seed draws instruction 2")

    # (b) The cards dealt to him when he dealt himself in.
    def deal_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, lf(text, "Dealt to you: 2 ore, 2 wool, 1 diamond",
                           "Dealt to you: 1 ore, 2 wool, 2 diamonds")

    said = verify(post, "bob", tag, deal_altered)
    print(said[1])
    refused(said, f"[{tag}] Land of Agora tournament (secret)",
            "the cards dealt to you by the draw join/2 are 1 ore, 2 wool, 2 diamonds",
            "but the seed deals 2 ore, 2 wool, 1 diamond")

    # (c) A report's subject names another report than its body (which
    # report, so which draw, the instruction it gives is).
    def subject_altered(subject: str, text: str) -> tuple[str, str]:
        return subject.replace("Round Report 1: round 2 begins",
                               "Round Report 2: round 2 begins"), text

    said = verify(post, "bob", tag, subject_altered)
    print(said[1])
    refused(said, f"[{tag}] Round Report 2: round 2 begins",
            "its subject says Round Report 2, but its body is Round Report 1")

    # (d) The Dealor's words (the Scoring Instructions the opening's hash
    # commits to) altered in the Final Report.
    def words_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, lf(text, f"3. {ENGLISH[2]}\n   = ", f"3. {ENGLISH[0]}\n   = ")

    said = verify(post, "bob", tag, words_altered)
    print(said[1])
    refused(said, f"[{tag}] ", "the SHA-256 of the Scoring Instructions' text is ",
            "but the opening gave")


def public_texts(msg: EmailMessage) -> list[str]:
    """The text of each part of a mail that is not for its reader alone: a
    mail of one kind, unless that kind is secret; of a mail of several, each
    part but the answer and those marked "(secret)", and each move line but
    the reader's own ("You: ...")."""
    if not kind(msg).startswith(COMPOSITE):
        return [] if kind(msg) in SECRET_KINDS else [f"{msg['Subject']}\n{body(msg)}"]
    texts = []
    for head, text in sections(msg):
        if not head:
            texts += [line for line in text.splitlines()[1:] if not line.startswith("  You: ")]
        elif head != "Your mail" and not head.endswith("(secret)"):
            texts.append(f"{head}\n{text}")
    return texts


def scan_every_mailbox(post: Post, list_address: str, state: dict[str, object]) -> None:
    """No mail to anyone but its holder shows a hand, a deal or an
    instruction before a Round Report (or the Final Report) published it,
    nor a part of a mail that is not for its reader alone; the salt appears
    only in the Final Report."""
    hands: set[str] = set()  # every hand and deal a secret mail showed, of two types or more
    mails: list[tuple[str, EmailMessage]] = []
    for user in PLAYERS:
        for msg in post.stack.fetch_all(user):
            if msg["From"] is not None and REF in str(msg["From"]):
                mails.append((user, msg))
    mails.sort(key=lambda um: outbox_order(um[1]))
    for user, msg in mails:
        if set(mail_kinds(msg)) & SECRET_KINDS:
            assert str(msg["To"]) == f"{user.capitalize()} <{ADDRESS[user]}>"
            for line in body(msg).splitlines():
                found = re.match(r"(?:Your hand \(\d+ cards?\)|Dealt to you): (.+)$", line)
                if found and "," in found.group(1):
                    hands.add(found.group(1))
    published: set[str] = set()
    once = {str(msg["Message-ID"]): msg for _user, msg in reversed(mails)}  # the list's copies
    for msg in sorted(once.values(), key=outbox_order):
        what = mail_kinds(msg)
        if "final_report" in what:
            break
        for text in map(flat, public_texts(msg)):
            assert "Your hand" not in text and "Dealt to you" not in text, msg["Subject"]
            assert str(state["salt"]) not in text
            for hand in hands:
                assert hand not in text, (hand, msg["Subject"])
        text = flat("\n".join(public_texts(msg)))
        if "round_report" in what:  # publishes one instruction not reported before
            (new,) = {i for i in ENGLISH if i not in published and flat(i) in text}
            published.add(new)
        for instruction in ENGLISH:
            if instruction not in published:
                assert flat(instruction) not in text, (instruction, msg["Subject"])
    assert len(published) == 2


def test_strangers_deal_in_anywhere_in_a_mail_and_members_are_named_as_people_do(
        post: Post) -> None:
    """Over the real servers: a stranger's "Is it too late? deal me in,
    please" joins; a stranger who writes something else is told how to
    join; an offer "to Bob" reaches Bob Baker, "to carol" (her address's
    local part) Carol Cole and "to Al" Alice Archer; a name nobody bears is
    refused with who may be named."""
    t = Tournament(post)
    tag = post.referee.operator.create_game(
        "loatcg", ["Alice Archer <alice@example.test>", "Bob Baker <bob@example.test>"],
        options={"instructions": INSTRUCTIONS}, now=T0, seed=SEED)
    t.poll(T0)  # the opening, and each member's five cards

    t.write("carol", "Hi all,\n\nIs it too late? deal me in, please", "The card game", [REF],
            name="Carol Cole")
    got = t.poll(T0 + timedelta(hours=1))
    # The join to the list; then one mail: her answer (only that her line
    # was done, so a line) and her cards.
    assert kinds(got["carol"]) == [["joined"], ["transcript", "dealt"]]
    assert moves(got["carol"][1]) == ["  You: Is it too late? deal me in, please (done)"]
    assert section(got["carol"][1], "Cards dealt").startswith(
        "Carol Cole,\nyou have dealt yourself in: the Dealor deals you 5 cards (rule 3).")
    assert kinds(got["alice"]) == kinds(got["bob"]) == [["joined"]]

    t.write("dave", "What is this list about?", "hello", [REF])
    got = t.poll(T0 + timedelta(hours=2))
    (answer,) = got["dave"]
    assert kind(answer) == "stranger" and answer["Subject"] == f"How to join [{tag}]"
    assert f"Anyone may join the Land of Agora tournament [{tag}].\nTo join, write\n\n" \
           "  deal me in\n\nin a mail to" in body(answer)
    assert [m["name"] for m in post.state(tag)["members"]] == [
        "Alice Archer", "Bob Baker", "Carol Cole"]

    alice = post.state(tag)["members"][0]["hand"]
    give = next(card for card, count in alice.items() if count)
    t.write("alice", f"offer 1 {give} for 1 wool to Bob\noffer 1 {give} for 1 ore to carol",
            f"[{tag}] trades", [t.list], name="Alice Archer")
    got = t.poll(T0 + timedelta(hours=3))
    # Both offers in one post to the list; Alice's answer only says they
    # were made, so it waits for her next mail.
    (posted,) = got["alice"]
    assert (str(posted["To"]), kinds(got["alice"])) == (t.list, [["offer"]])
    offers = [(h, flat(x)) for h, x in sections(posted)]
    assert [h for h, _ in offers] == [f"Offer 1: Alice Archer gives 1 {give} for 1 wool",
                                      f"Offer 2: Alice Archer gives 1 {give} for 1 ore"]
    assert "It may be accepted by Bob Baker." in offers[0][1]
    assert "It may be accepted by Carol Cole." in offers[1][1]
    assert [o["takers"] for o in post.state(tag)["offers"]] == [[2], [3]]

    t.write("bob", "offer 1 wool for 1 ore to Al\noffer 1 wool for 1 ore to Zed",
            f"[{tag}] more", [t.list], name="Bob Baker")
    got = t.poll(T0 + timedelta(hours=4))
    # A refusal is news: Bob's answer comes at once (Carol's join was the
    # list's, so nothing is held for him above it).
    (mine,) = [x for x in got["bob"] if "transcript" in mail_kinds(x)]
    assert "Since your last mail:" not in body(mine)  # the answer alone
    reply = flat(body(mine))
    assert "Offer 3: Bob Baker gives 1 wool for 1 ore to Alice Archer." in reply
    assert ("REFUSED (offer 1 wool for 1 ore to Zed): There is no Member 'Zed'. You may "
            "name Alice Archer, Bob Baker or Carol Cole.") in reply
