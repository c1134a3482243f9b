"""End to end against real servers: Postfix in, Dovecot IMAP for the referee, Postfix out.

Players' mail goes in by SMTP; the referee reads its mailbox by IMAP and sends by SMTP,
on SQLite in a temporary folder; the tests read what each player received from their
own IMAP mailbox. Time is injected (``run_pass(referee, now)`` or ``poll --now``), so
no test waits for a deadline. The servers are the session's ``mailstack`` fixture.
"""

from __future__ import annotations

import contextlib
import json
import mailbox
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email import message_from_string
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from referee.config import load_config
from referee.passes import PassReport, run_pass, send_outbox
from referee.service import Referee, now_utc
from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from referee.store.db import upgrade
from tests.databases import postgres_url
from tests.mailstack import GIVE_UP, PLAYERS, REPO_ROOT, MailStack
from tests.test_referee import bounce_of
from tests.test_spades_mail import kinds, section, sections

T0 = datetime(2026, 3, 2, 12, 0)  # a Monday
REF = "referee@example.test"
NAME = "E2E Referee"
SIGNATURE = f"-- \n{NAME} <{REF}>\n"


def person(user: str) -> str:
    """How a player's client writes their From: ``Alice <alice@example.test>``."""
    return f"{user.capitalize()} <{user}@example.test>"


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(str(value))  # a JSON string is a TOML basic string


def write_config(path: Path, stack: MailStack, auth: dict[str, str] | None = None,
                 smtp: dict[str, object] | None = None, limits: dict[str, int] | None = None,
                 mailbox: dict[str, object] | None = None, club: dict[str, object] | None = None,
                 **referee: str) -> None:
    """The referee's TOML: IMAP in, SMTP out, SQLite next to the file."""
    sections: dict[str, dict[str, object]] = {
        "referee": {"address": REF, "name": NAME,
                    "database": f"sqlite:///{path.parent / 'referee.db'}", **referee},
        "mailbox": {"kind": "imap", "host": stack.host, "port": stack.imap_port,
                    "username": REF, "password": stack.password, "security": "none",
                    **(mailbox or {})},
        "smtp": {"kind": "smtp", "host": stack.host, "port": stack.smtp_port,
                 "security": "none", "timeout": "60s", **(smtp or {})},
        "auth": dict(auth or {}),
    }
    if limits:
        sections["limits"] = dict(limits)
    if club:
        sections["club"] = dict(club)
    path.write_text("".join(
        f"[{name}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in keys.items()) + "\n"
        for name, keys in sections.items()
    ), encoding="utf-8")


def body(msg: EmailMessage) -> str:
    """The plain-text body as the player reads it, with CRLF normalised."""
    part = msg.get_body(("plain",))
    assert part is not None, f"no text part in {msg['Subject']!r}"
    return str(part.get_content()).replace("\r\n", "\n")


def kind(msg: EmailMessage) -> str:
    return str(msg["X-Referee-Mail"])


def as_part(msg: EmailMessage) -> tuple[str, str]:
    """A mail of one part as it reads among the parts of a mail of several:
    (its headline, its text); the headline is the subject less the tag and
    what it asks the player to do (": your bid"), which a mail of several
    says once, in its own subject."""
    ((head, text),) = sections(msg)
    return re.sub(r": your \w+$", "", head), text


def quoted(msg: EmailMessage) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in body(msg).splitlines())


def seed_told(seed: str, tag: str) -> str:
    """What a game's last mail says of its seed, before the signature."""
    return f"""\
THE SEED
Every random draw of this game came from a secret seed, fixed before the
game began. Now that the game is over, here it is:
  seed: {seed}
To check that it is the seed whose fingerprint the first mail of the game
gave (its seed-sha256 line), run
    printf 'seed: %s\\n' '{seed}' | sha256sum
To draw every draw of the game again from the seed and check each against
the mail you received, run
    referee verify {tag} --mail YOUR-MAILBOX

"""


class Post:
    """A referee on the real mail servers and SQLite, and the players' side of the mail."""

    def __init__(self, stack: MailStack, root: Path, auth: dict[str, str] | None = None,
                 smtp: dict[str, object] | None = None, limits: dict[str, int] | None = None,
                 mailbox: dict[str, object] | None = None,
                 club: dict[str, object] | None = None, **referee: str) -> None:
        stack.clear_all()
        self.stack = stack
        self.config_path = root / "referee.toml"
        write_config(self.config_path, stack, auth, smtp, limits, mailbox, club, **referee)
        self.config = load_config(self.config_path)
        upgrade(self.config.database_url)
        self.db_path = root / "referee.db"
        self.referee = Referee(self.config)
        self.in_referee_inbox = 0  # messages that must reach the referee's INBOX
        self.read: dict[str, int] = {}

    def close(self) -> None:
        self.referee.close()

    # -- the players' side ----------------------------------------------------
    def write(
        self, user: str, text: str, *, subject: str, to: Sequence[str] = (REF,),
        headers: dict[str, str] | None = None, html: bool = False, cte: str | None = None,
        reply_to: EmailMessage | None = None,
    ) -> str:
        """Send one mail from ``user``'s client; returns its Message-ID."""
        msg = EmailMessage()
        msg["From"] = person(user)
        msg["To"] = ", ".join(to)
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(idstring=user, domain="mua.example.test")
        if reply_to is not None:
            parent = str(reply_to["Message-ID"])
            msg["In-Reply-To"] = parent
            msg["References"] = f"{reply_to['References'] or ''} {parent}".strip()
        for key, value in (headers or {}).items():
            msg[key] = value
        if html:
            msg.set_content(text, subtype="html")
        else:
            msg.set_content(text, cte=cte)
        self.stack.send(msg, user, to)
        self.in_referee_inbox += sum(
            r in (REF, self.stack.list_address) or r.startswith("referee+") for r in to)
        return str(msg["Message-ID"])

    def new_mail(self, user: str, count: int, timeout: float = GIVE_UP) -> list[EmailMessage]:
        """Wait for ``count`` more messages in ``user``'s INBOX and return them."""
        seen = self.read.get(user, 0)
        msgs = self.stack.wait_for(user, seen + count, timeout)
        self.read[user] = len(msgs)
        return msgs[seen:]

    def assert_no_more_mail(self, *users: str) -> None:
        for user in users:
            assert self.stack.count(user) == self.read.get(user, 0), f"{user} got more mail"

    # -- the referee's side ---------------------------------------------------
    def poll(self, now: datetime) -> PassReport:
        """One ``referee poll`` once every mail sent so far has reached the referee."""
        self.stack.wait_for("referee", self.in_referee_inbox)
        return run_pass(self.referee, now)

    def count(self, model: type[m.Base]) -> int:
        with self.referee.sessions() as db:
            return int(db.scalar(select(func.count()).select_from(model)) or 0)

    def state(self, tag: str) -> dict[str, Any]:
        with self.referee.sessions() as db:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            assert game is not None
            return dict(game.state)

    def actions(self, tag: str) -> list[tuple[int, str, list[Any], str]]:
        """The game's action log: (seat, verb, args, source) in step order."""
        with self.referee.sessions() as db:
            q = (select(m.ActionLog).join(m.Game).where(m.Game.tag == tag)
                 .order_by(m.ActionLog.step))
            return [(a.seat, a.action["verb"], list(a.action["args"]), a.source)
                    for a in db.scalars(q)]

    def inbound_notes(self) -> dict[str, str]:
        with self.referee.sessions() as db:
            return {str(r.message_id): r.note for r in db.scalars(select(m.Inbound))}


def verified_by_mail(post: Post, user: str, tag: str) -> tuple[int, str]:
    """``referee verify TAG --mail`` on ``user``'s INBOX, saved as an mbox
    file as their mail client would: its exit code and what it printed."""
    path = post.config_path.parent / f"{user}.mbox"
    box = mailbox.mbox(path)
    for msg in post.stack.fetch_all(user):
        box.add(msg.as_bytes())
    box.close()
    done = subprocess.run([sys.executable, "-m", "referee.cli", "verify", tag, "--mail",
                           str(path)], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


ALICE, BOB = person("alice"), person("bob")


# -- 1. a whole game of Goofspiel ---------------------------------------------------

BOB_ROUND_1_ANSWER = """\
Bob, here is what I did with your mail for goofspiel-1.

> bid 3
  DONE (bid 3): Your bid of 3 for round 1 is sealed.

Next deadline for you: Thu 05 Mar 2026 13:00 UTC.
"""

ROUND_1_REPORT = f"""\
ROUND 1: THE PRIZE WAS 5
  Alice                bid 5
  Bob                  bid 3
  Alice wins the round and takes 3 5 5 (13 points).

SCORES
  Alice                 13 points   cards left: 1 2 3 4 6
  Bob                    0 points   cards left: 1 2 4 5 6
  Points still in hands: 50

ROUND 2 OF 6: THE PRIZE IS 1

Send your bid, one card of your pack, to referee@example.test alone
(not to the list, not to other players), for example:

  bid 3

Deadline: Thu 05 Mar 2026 13:00 UTC. If your bid has not arrived by then,
the referee bids a random card of your pack for you.

{SIGNATURE}"""

#: Bob's bid ends round 1: one mail to him, secret (it echoes his sealed
#: bid), the answer to his mail and then his copy of the report, each under
#: its headline.
BOB_ROUND_1 = f"""\
{SECRET_NOTE}

Your mail
---------
{BOB_ROUND_1_ANSWER}
Round 1: Alice takes 13 — round 2 prize 1
-----------------------------------------
{ROUND_1_REPORT}Write "help" to the referee for what you can do now.
"""

FINAL_REPORT = f"""\
ROUND 5: THE PRIZE WAS 3
  Alice                bid 3
  Bob                  bid 4
  Bob wins the round and takes 3 3 4 (10 points).

ROUND 6: THE PRIZE WAS 2
  Everyone had one card left, so the last cards were played automatically.
  Alice                bid 2
  Bob                  bid 1
  Alice wins the round and takes 1 2 2 (5 points).

FINAL RESULT
  Bob                   45 points  (took 1 1 2 3 3 4 4 4 5 6 6 6)
  Alice                 18 points  (took 1 2 2 3 5 5)

Bob wins the game.

{seed_told("e2e", "goofspiel-1")}{SIGNATURE}"""


def test_a_whole_goofspiel_game_is_played_by_email_and_the_final_report_names_the_winner(
        post: Post) -> None:
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB],
                                   options={"prize_order": "5,1,6,4,3,2"}, now=T0, seed="e2e")
    # Bob sits in a second game, so his untagged replies are found by threading alone.
    other = post.referee.operator.create_game("goofspiel", [BOB, person("carol")], now=T0)
    assert (tag, other) == ("goofspiel-1", "goofspiel-2")
    post.poll(T0)
    (opening,) = post.new_mail("alice", 1)
    # It asks Alice for a bid, and its subject says so.
    assert opening["Subject"] == "[goofspiel-1] Goofspiel begins: round 1, the prize is 5: your bid"
    assert kind(opening) == "opening" and opening["Auto-Submitted"] == "auto-generated"
    assert str(opening["To"]) == ALICE  # each player's own copy: a reply-all reaches us alone
    assert opening["Reply-To"].addresses[0].addr_spec.startswith("referee+")
    bob_openings = {str(x["Subject"]).split("]")[0]: x for x in post.new_mail("bob", 2)}
    assert set(bob_openings) == {"[goofspiel-1", "[goofspiel-2"}
    post.new_mail("carol", 1)
    last_to_bob = bob_openings["[goofspiel-1"]

    def play_round(n: int, alice: dict[str, Any],
                   bob: dict[str, Any]) -> tuple[dict[str, EmailMessage], EmailMessage]:
        """Alice bids, then Bob; each gets the answer to their bid and the
        report. Alice's bid causes only her answer, a mail of its own; Bob's
        ends the round, so his answer and his copy of the report come in one
        mail, the answer first: two mails to Alice, one to Bob. Returns the
        answers and Alice's report."""
        ids = {"alice": post.write("alice", **alice)}
        post.stack.wait_for("referee", post.in_referee_inbox)  # so Bob's bid ends the round
        ids["bob"] = post.write("bob", **bob)
        post.poll(T0 + timedelta(hours=n))
        alices = {kind(x): x for x in post.new_mail("alice", 2)}
        assert set(alices) == {"transcript", "round_report"}
        (bobs,) = post.new_mail("bob", 1)
        assert kinds(bobs) == ["transcript", "round_report"]
        replies = {"alice": alices["transcript"], "bob": bobs}
        for user, reply in replies.items():
            assert str(reply["To"]) == (ALICE if user == "alice" else BOB)
            assert reply["In-Reply-To"] == ids[user]
            assert reply["Auto-Submitted"] == "auto-replied"
            answer = section(reply, "Your mail") if user == "bob" else body(reply)
            assert "DONE (bid " in answer, body(reply)
        report = alices["round_report"]
        assert str(report["To"]) == ALICE  # her own copy: a reply-all reaches us alone
        assert sections(bobs)[1] == as_part(report)  # Bob's copy: the same report
        return replies, report

    # Round 1, prize 5: Alice tags her subject; Bob answers the opening without a tag,
    # quoting it (its quoted "bid 3" example must not count).
    replies, report = play_round(
        1, {"text": "bid 5", "subject": f"[{tag}] my bid"},
        {"text": f"bid 3\n\nOn Mon, 2 Mar 2026 at 12:00, {NAME} wrote:\n{quoted(last_to_bob)}",
         "subject": "Re: Goofspiel begins", "reply_to": last_to_bob},
    )
    # Its subject is the answer's, and says that Bob's next bid is due.
    assert replies["bob"]["Subject"] == "[goofspiel-1] Done: bid 3; your bid (secret)"
    assert body(replies["bob"]) == BOB_ROUND_1
    assert report["Subject"] == "[goofspiel-1] Round 1: Alice takes 13 — round 2 prize 1: your bid"
    assert report["References"].split()[0] == "<pbm.game.goofspiel-1@example.test>"
    assert body(report) == ROUND_1_REPORT
    # Round 2, prize 1: an HTML-only mail and a quoted-printable one.
    _, report = play_round(
        2, {"text": "<html><body><p>Hello referee,</p><p>I bid <b>1</b></p>"
                    "<blockquote type=\"cite\"><p>bid 6</p></blockquote></body></html>",
            "subject": f"[{tag}] round 2", "html": True},
        {"text": "Grüße aus Köln! This line is long enough that quoted-printable has to "
                 "fold it with a soft line break.\n\nbid 2\n",
         "subject": f"[{tag}] zwei", "cte": "quoted-printable"},
    )
    assert "Bob wins the round and takes 1 1 2 (4 points)." in body(report)
    # Round 3, prize 6: Alice sits in one game only, so no tag is needed; a tie carries.
    replies, report = play_round(3, {"text": "bid 6", "subject": "round three"},
                                 {"text": "I bid 6", "subject": f"[{tag}] 3"})
    assert "Tie for the highest bid: 6 6 6 (18 points) carries over" in body(report)
    # Round 4, prize 4: Bob replies to his mail of the round 3 report, again without a
    # tag, quoting it all (his answer's "> I bid 6" too).
    bobs = replies["bob"]
    _, report = play_round(
        4, {"text": "bid 4", "subject": f"Re: [{tag}] round 4"},
        {"text": f"bid five\n\n{quoted(bobs)}", "subject": "Re: round 3", "reply_to": bobs},
    )
    assert "Bob wins the round and takes 4 4 5 6 6 6 (31 points)." in body(report)
    # Round 5, prize 3; round 6 plays itself from the last cards (G2-10).
    _, report = play_round(5, {"text": "bid 3", "subject": f"[{tag}]"},
                        {"text": "bid 4", "subject": f"[{tag}]"})
    # Whitespace-normalised: the fold of this subject is the next test's concern.
    assert " ".join(report["Subject"].split()) == (
        "[goofspiel-1] Round 5: Bob takes 10; Round 6: Alice takes 5 — GAME OVER: Bob wins")
    assert body(report) == FINAL_REPORT
    post.assert_no_more_mail("alice", "bob", "carol")
    status = post.referee.reading.status(tag)[0]
    assert (status["status"], status["result"]) == ("finished", "Bob wins")
    assert status["scores"] == {"Alice": 18, "Bob": 45}
    assert post.referee.reading.replay(tag) == post.state(tag)
    assert post.referee.reading.status(other)[0]["round"] == 1  # Bob's replies never went there
    # Bob checks the draws from his own mailbox (issue 23).
    assert verified_by_mail(post, "bob", tag) == (0, "verified\n")


def test_a_long_report_subject_reads_with_single_spaces_in_the_players_mailbox(
        post: Post) -> None:
    """A subject long enough to be folded, with an em dash after the fold point."""
    tag = post.referee.operator.create_game(
        "goofspiel", ["Maximiliane von Hohenberg <alice@example.test>", BOB],
        options={"prize_order": "5,1,6,4,3,2"}, now=T0)
    post.poll(T0)
    post.new_mail("alice", 1)
    post.write("alice", "bid 6", subject=f"[{tag}]")
    post.write("bob", "bid 1", subject=f"[{tag}]")
    post.poll(T0 + timedelta(hours=1))
    (report,) = [x for x in post.new_mail("alice", 2) if kind(x) == "round_report"]
    assert report["Subject"] == (
        "[goofspiel-1] Round 1: Maximiliane von Hohenberg takes 12 — round 2 prize 1: your bid")


# -- 2. a whole game of Pure Skill, with a bot seat and a missed deadline ------------

PURE_SKILL_FINAL = f"""\
FINAL RESULT
  Bot 3 (bot)           35 points  (took A 3 6 Q K)
  Alice                 33 points  (took 2 5 7 9 10)
  Bob                   15 points  (took 4 J)

Alice wins the game.
Alice receives 8 points, and the referee A$8 (clause 5).

{seed_told("a1", "pure-skill-1")}{SIGNATURE}"""


def test_a_pure_skill_game_with_a_bot_and_a_missed_deadline_is_won_by_a_human(
        post: Post) -> None:
    # Seed "a1" draws prizes and bot bids by which the bot takes the most (PS-11):
    # a bot that bids at random (``bot=random``), whose bids are the seed's.
    tag = post.referee.operator.create_game("pure-skill", [ALICE, BOB], bots=1, now=T0, seed="a1",
                                            options={"bot": "random"})
    post.poll(T0)
    for user in ("alice", "bob"):
        (opening,) = post.new_mail(user, 1)
        assert "  Seat 3: Bot 3 (a bot that bids at random)\n" in body(opening)
    silent_round, started, report = 3, T0, None
    while not (state := post.state(tag))["over"]:
        r = state["round"]
        packs = [sorted(p) for p in state["packs"]]
        # Alice bids her second-lowest card, Bob his lowest: the bot takes most prizes.
        post.write("alice", f"bid {packs[0][min(1, len(packs[0]) - 1)]}", subject=f"[{tag}]")
        # Alice's bid is in the referee's mailbox before Bob writes: Postfix
        # delivers in parallel, so two mails sent at once may come either way.
        post.stack.wait_for("referee", post.in_referee_inbox)
        if r != silent_round:
            post.write("bob", f"bid {packs[1][0]}", subject=f"[{tag}] round {r}")
            started += timedelta(hours=1)
            post.poll(started)
            # Alice's bid is answered alone; Bob's ends the round: the report to
            # Alice, and to Bob in one mail with the answer to his bid.
            mails = post.new_mail("alice", 2)
            assert sorted(map(kind, mails)) == ["round_report", "transcript"]
            report = next(x for x in mails if kind(x) == "round_report")
            (bobs,) = post.new_mail("bob", 1)
            assert kinds(bobs) == ["transcript", "round_report"]
            assert "DONE (bid " in section(bobs, "Your mail")
            assert sections(bobs)[1] == as_part(report)  # the same report
            continue
        # Bob stays silent: a reminder one day before the deadline, a random card at it.
        post.poll(started + timedelta(hours=1))
        assert kind(post.new_mail("alice", 1)[0]) == "transcript"
        assert post.poll(started + timedelta(days=2) - timedelta(minutes=1)).sent == 0
        assert post.poll(started + timedelta(days=2, minutes=1)).sent == 1
        (reminder,) = post.new_mail("bob", 1)
        assert reminder["Subject"] == f"[{tag}] Reminder: a bid for round {r}"
        due = (started + timedelta(days=3)).strftime("%a %d %b %Y %H:%M UTC")
        assert f"Bob, the referee is still waiting for a bid for round {r}" in body(reminder)
        assert f"It is due by {due}." in body(reminder)
        started += timedelta(days=3, minutes=1)
        assert post.poll(started).timeouts == 1
        (report,) = post.new_mail("alice", 1)
        (bobs,) = post.new_mail("bob", 1)
        # Alice is told the bid was the referee's, as rule 4e says, not which
        # card (a bid is sealed until the report); Bob which card, for him
        # alone; then the same report.
        (told, reported), (yours, theirs) = sections(report), sections(bobs)
        assert reported == theirs
        assert (told[0], " ".join(told[1].split())) == (
            "No bid from Bob by the deadline", "No bid came from Bob by the deadline: the "
            "referee drew a card at random from their pack as their bid, as rule 4e says.")
        assert yours[0] == "The deadline passed: the referee moved for you"
        # It names the card drawn for Bob's sealed bid: marked secret (a
        # Spades bid made at a deadline, told to the table whole, is not).
        assert str(bobs["Subject"]).endswith(" (secret)") and body(bobs).startswith(SECRET_NOTE)
        assert "a card drawn at random from your pack, as rule 4e says." in " ".join(
            yours[1].split())
        line = next(x for x in reported[1].splitlines() if x.startswith("  Bob "))
        assert line.endswith("   (no bid arrived: the referee chose a random card)")
        assert int(line.split()[2]) in packs[1]
    assert report is not None
    post.assert_no_more_mail("alice", "bob")
    text = body(report)
    assert text[text.index("FINAL RESULT"):] == PURE_SKILL_FINAL
    status = post.referee.reading.status(tag)[0]
    assert status["scores"] == {"Alice": 33, "Bob": 15, "Bot 3": 35}
    assert (status["status"], status["result"], status["deadlines"]) == (
        "finished", "Alice wins", [])
    assert post.referee.reading.replay(tag) == post.state(tag)
    sources = [source for *_, source in post.actions(tag)]
    assert (sources.count("timeout"), sources.count("bot")) == (1, 12)
    assert verified_by_mail(post, "alice", tag) == (0, "verified\n")


# -- 3. SIGKILL mid-pass: nothing lost, nothing twice, every reply delivered --------

CRASH_GAMES = (("alice", "bob"), ("carol", "dave"), ("erin", "frank"),
               ("alice", "carol"), ("bob", "erin"), ("dave", "frank"))
CRASH_ROUNDS = 3


def referee_command(post: Post, *args: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "--config", str(post.config_path), *args]


def progress(db_path: Path) -> tuple[int, int]:
    """(inbound rows, outbox rows sent), read beside the running referee."""
    con = sqlite3.connect(db_path, timeout=10)
    try:
        inbound = con.execute("SELECT count(*) FROM inbound").fetchone()[0]
        sent = con.execute("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL").fetchone()[0]
        return int(inbound), int(sent)
    finally:
        con.close()


@dataclass
class Crashes:
    kills: int = 0
    mid_pass: int = 0  # kills that struck after the pass had committed something
    #: How long the longest pass that ran to its end took, from its start (0:
    #: none yet; a pass run again after a kill has less to do): the clock
    #: strikes within it, so kills land inside passes idle or loaded.
    span: float = 0.0
    #: Seconds the clock's strike waits on top: grown each time a kill struck
    #: before the pass had committed anything (a loaded machine starts late).
    later: float = 0.0


def poll_through_crashes(post: Post, now: datetime, rng: random.Random, crashes: Crashes,
                         startup: float, log: Path, streaming: bool = False) -> None:
    """Run ``referee poll`` and SIGKILL it at a random point, until a pass exits 0.

    The kill comes after a random number of processed messages, of sent mails, or
    at a random point of a pass's expected length, so it strikes inside intake,
    inside the outbox and anywhere between (between an SMTP 250 and the row
    marked sent, for one).
    """
    command = referee_command(post, "poll", "--now", now.isoformat())
    if streaming:
        command[1:3] = ["-c", STREAMING_POLL]
    for attempt in range(15):
        before = progress(post.db_path)
        with log.open("a") as out:
            proc = subprocess.Popen(command, cwd=REPO_ROOT, stdout=out, stderr=out)
        started = time.monotonic()
        # A round's first pass dies just after its intake commits and the next
        # one after a few mails are sent, by count alone, whatever the machine's
        # load: two kills mid-pass a round. Then anywhere, by count or by clock.
        counted = attempt < 2
        trigger = (("intake", "outbox")[attempt] if counted
                   else rng.choice(("intake", "outbox", "clock")) if attempt < 10 else "none")
        target = (before[0] + rng.randint(1, 8), before[1] + rng.randint(1, 10))
        # Before any pass has run to its end, its length is a guess: the start-up
        # and a second (a streaming pass starts its sending child before it reads).
        expected = crashes.span or startup + (4 if streaming else 1)
        kill_at = started + crashes.later + expected * rng.uniform(0.3, 0.9)
        give_up = started + GIVE_UP
        while proc.poll() is None:
            now_progress = progress(post.db_path) if trigger != "clock" else before
            # Intake commits in batches (a savepoint a mail): its progress
            # shows a batch at a time, so a pass may end before a target
            # is seen; the clock strikes then, at a random time as well.
            if ((trigger == "intake" and now_progress[0] >= target[0])
                    or (trigger == "outbox" and now_progress[1] >= target[1])
                    or (trigger != "none" and not counted and time.monotonic() >= kill_at)):
                proc.send_signal(signal.SIGKILL)
                break
            assert time.monotonic() < give_up, f"referee poll still runs after {GIVE_UP} s"
            time.sleep(0.005)
        code = proc.wait()
        if code == 0:
            crashes.span = max(crashes.span, time.monotonic() - started)
            crashes.later = 0.0
            return
        assert code == -signal.SIGKILL, f"referee poll failed:\n{log.read_text()}"
        crashes.kills += 1
        if progress(post.db_path) != before:
            crashes.mid_pass += 1
        else:
            crashes.later += expected / 4
    raise AssertionError("no pass completed")


def mail_with_distinct_ids(stack: MailStack, user: str, count: int) -> list[EmailMessage]:
    """``user``'s mail once it holds ``count`` distinct Message-IDs (resends may repeat)."""
    give_up = time.monotonic() + GIVE_UP
    while True:
        msgs = stack.fetch_all(user)
        if len({str(x["Message-ID"]) for x in msgs}) >= count or time.monotonic() > give_up:
            return msgs
        time.sleep(0.1)


@pytest.mark.parametrize("way", ["near", "streaming"])
def test_a_referee_killed_mid_pass_loses_no_move_applies_none_twice_and_answers_every_mail(
        post: Post, tmp_path: Path, way: str) -> None:
    """``way``: the relay on this machine (the outbox sends after the
    intake), or taken for one far away (the pass sends while it reads)."""
    tags = [post.referee.operator.create_game(
        "goofspiel", [person(a), person(b)], options={"prize_order": "ascending"}, now=T0,
        seed=f"crash-{i}")
        for i, (a, b) in enumerate(CRASH_GAMES)]
    post.poll(T0)
    started = time.monotonic()
    status = subprocess.run(referee_command(post, "status", "--json"), cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True)
    startup = time.monotonic() - started
    assert [g["tag"] for g in json.loads(status.stdout)] == tags
    rng, crashes, log = random.Random(20260302), Crashes(), tmp_path / "poll.log"
    sent: dict[str, str] = {}  # Message-ID -> sender
    for r in range(1, CRASH_ROUNDS + 1):
        # Seat 1 bids r, seat 2 bids 7 - r; each player also asks for help once.
        for tag, (a, b) in zip(tags, CRASH_GAMES, strict=True):
            sent[post.write(a, f"bid {r}", subject=f"[{tag}] round {r}")] = a
            sent[post.write(b, f"I bid {7 - r}", subject=f"Re: [{tag}]")] = b
        for user in PLAYERS:
            tag = tags[next(i for i, g in enumerate(CRASH_GAMES) if user in g)]
            sent[post.write(user, "help", subject=f"[{tag}] what now?")] = user
        post.stack.wait_for("referee", post.in_referee_inbox)
        poll_through_crashes(post, T0 + timedelta(hours=r), rng, crashes, startup, log,
                             streaming=way == "streaming")
    assert crashes.kills >= 5 and crashes.mid_pass >= 3, crashes

    # No move lost or applied twice: one bid per seat per round, as sent.
    for tag in tags:
        actions = post.actions(tag)
        assert len(actions) == 2 * CRASH_ROUNDS, (tag, actions)
        for r in range(1, CRASH_ROUNDS + 1):
            assert sorted(actions[2 * r - 2:2 * r]) == [
                (1, "bid", [r], "player"), (2, "bid", [7 - r], "player")]
        state = post.state(tag)
        assert state["round"] == CRASH_ROUNDS + 1
        assert post.referee.reading.replay(tag) == state
    with post.referee.sessions() as db:
        rows = list(db.scalars(select(m.Inbound)))
        assert sorted(str(x.message_id) for x in rows) == sorted(
            mid.strip("<>") for mid in sent)
        assert {x.status for x in rows} == {"processed"}
        unsent = db.scalar(select(func.count()).select_from(m.Outbox)
                           .where(m.Outbox.sent_at.is_(None)))
        assert unsent == 0

    # Whose bid ended each round: the answer to it carries the round's report,
    # one mail (the other player gets the report alone).
    ended = dict.fromkeys(PLAYERS, 0)
    for tag, pair in zip(tags, CRASH_GAMES, strict=True):
        actions = post.actions(tag)
        for r in range(CRASH_ROUNDS):
            ended[pair[actions[2 * r + 1][0] - 1]] += 1
    assert sum(ended.values()) == len(CRASH_GAMES) * CRASH_ROUNDS

    # Every mail got exactly one reply: a resend may repeat it, with the same Message-ID.
    per_player = {u: sum(u in g for g in CRASH_GAMES) for u in PLAYERS}
    doubled = 0
    for user, games in per_player.items():
        mine = [mid for mid, sender in sent.items() if sender == user]
        # Openings, replies, and the reports but those that rode in a reply.
        expected = games + len(mine) + games * CRASH_ROUNDS - ended[user]
        msgs = mail_with_distinct_ids(post.stack, user, expected)
        assert len({str(x["Message-ID"]) for x in msgs}) == expected, user
        doubled += len(msgs) - expected
        for mid in mine:
            replies = {(tuple(kinds(x)), str(x["Message-ID"]))
                       for x in msgs if x["In-Reply-To"] == mid}
            assert len(replies) == 1 and next(iter(replies))[0][0] == "transcript", (
                user, replies)
        reports = {(x["Subject"].split("]")[0], str(x["Message-ID"]))
                   for x in msgs if "round_report" in kinds(x)}
        assert len(reports) == games * CRASH_ROUNDS
        carried = {str(x["Message-ID"]) for x in msgs
                   if x["In-Reply-To"] in sent and "round_report" in kinds(x)}
        assert len(carried) == ended[user], user
    print(f"crash figures (poll mid-pass, {way}): {crashes}, lost 0, doubled moves 0, "
          f"mails delivered twice {doubled}")


# -- 3b. SIGKILL while sending many mails: nothing lost, at most the mails in flight twice

SEND_GAMES = 90  # two openings each: 180 mails, each to a recipient of its own
SEND_KILLS = 10
#: A poll whose relay seems far away sends while it reads (``streaming``):
#: the same CLI, with the relay on the loopback taken for one far away.
STREAMING_POLL = ("import sys; from referee import passes; "
                  "passes._on_this_machine = lambda host: False; "
                  "from referee.cli import main; sys.exit(main())")


@dataclass
class Resends:
    kills: int = 0
    lost: int = 0
    doubled: int = 0  # mails delivered twice
    resent: int = 0  # mails Postfix took twice (its log's message-id lines)


class RelayLog:
    """The Message-IDs Postfix takes, in the order its log shows them (its
    ``cleanup`` logs each message's as it reads the header), from now on."""

    LINE = re.compile(r"cleanup\[\d+\]: \w+: message-id=(<[^>\s]*>)")

    def __init__(self, stack: MailStack) -> None:
        self.file = (stack.dir / "postfix" / "postfix.log").open("rb")
        self.file.seek(0, 2)
        self.rest = b""
        self.ids: list[str] = []

    def read(self) -> int:
        """How many the relay has taken so far."""
        self.rest += self.file.read()
        *lines, self.rest = self.rest.split(b"\n")
        for line in lines:
            if found := self.LINE.search(line.decode(errors="replace")):
                self.ids.append(found.group(1))
        return len(self.ids)

    def close(self) -> None:
        self.file.close()


def delivered(stack: MailStack, expected: int) -> Counter[tuple[str, str]]:
    """(mailbox, Message-ID) -> copies delivered, once every expected mail
    is in and Postfix has delivered what it took (two equal counts in a row)."""
    give_up, last = time.monotonic() + GIVE_UP, -1
    while True:
        copies = Counter((user, str(x["Message-ID"]))
                         for user in PLAYERS for x in stack.fetch_all(user))
        total = sum(copies.values())
        if (len(copies) >= expected and total == last) or time.monotonic() > give_up:
            return copies
        last = total
        time.sleep(0.5)


def sent_rows(post: Post) -> int:
    with post.referee.sessions() as db:
        return int(db.scalar(select(func.count()).select_from(m.Outbox)
                             .where(m.Outbox.sent_at.is_not(None))) or 0)


@pytest.mark.parametrize("way", ["outbox", "one-connection", "streaming", "postgresql"])
def test_a_poll_killed_while_it_sends_resends_at_most_the_mails_in_flight(
        mailstack: MailStack, tmp_path: Path, way: str) -> None:
    """``referee poll`` is killed at random points while it sends 180 mails
    over the real Postfix (by the outbox, or while it reads; on SQLite, or
    on PostgreSQL): none is lost, and at most the mails in flight at a kill
    (one a connection) arrive twice, each time with one Message-ID."""
    with contextlib.ExitStack() as stack:
        url = (stack.enter_context(contextlib.contextmanager(postgres_url)())
               if way == "postgresql" else None)
        post = Post(mailstack, tmp_path, smtp={"connections": 1} if way == "one-connection"
                    else None, **({"database": url} if url else {}))
        stack.callback(post.close)
        sends_and_gets_killed(post, tmp_path, streaming=way == "streaming", seed=way)


def sends_and_gets_killed(post: Post, tmp_path: Path, streaming: bool, seed: str) -> None:
    pairs = [(a, b) for i, a in enumerate(PLAYERS) for b in PLAYERS[i + 1:]]
    for i in range(SEND_GAMES):
        a, b = pairs[i % len(pairs)]
        # Addresses of their own (a mailbox each player): many lanes at once.
        post.referee.operator.create_game(
            "goofspiel", [post.stack.address(a, f"g{i}"), post.stack.address(b, f"g{i}")],
            now=T0, seed=f"send-{i}")
    with post.referee.sessions() as db:
        expected = {(r.recipients[0].split("+")[0].split("@")[0],
                     str(message_from_string(r.raw)["Message-ID"]))
                    for r in db.scalars(select(m.Outbox))}
    assert len(expected) == 2 * SEND_GAMES
    command = referee_command(post, "poll", "--now", T0.isoformat())
    if streaming:
        command[1:3] = ["-c", STREAMING_POLL]
    rng, log, figures = random.Random(f"kills-{seed}"), tmp_path / "poll.log", Resends()
    relay = RelayLog(post.stack)
    try:
        for attempt in range(SEND_KILLS + 5):
            with log.open("a") as out:
                proc = subprocess.Popen(command, cwd=REPO_ROOT, stdout=out, stderr=out)
            # Killed once this pass has sent a random number of mails, or a
            # random time after its first. Its progress is the relay's log or
            # the rows marked sent, whichever shows more: under load Postfix
            # logs late, and a pass could end before its log showed a mail.
            taken, sent, first_at = relay.read(), sent_rows(post), None
            target, wait = rng.randint(1, 12), rng.choice((None, rng.uniform(0, 0.08)))
            give_up = time.monotonic() + GIVE_UP
            while proc.poll() is None and attempt < SEND_KILLS:
                progress = max(relay.read() - taken, sent_rows(post) - sent)
                if progress > 0 and first_at is None:
                    first_at = time.monotonic()
                if ((wait is None and progress >= target)
                        or (wait is not None and first_at is not None
                            and time.monotonic() >= first_at + wait)):
                    proc.send_signal(signal.SIGKILL)
                    break
                assert time.monotonic() < give_up, f"referee poll still runs after {GIVE_UP} s"
                time.sleep(0.002)
            code = proc.wait()
            if code == 0:
                break
            assert code == -signal.SIGKILL, f"referee poll failed:\n{log.read_text()}"
            figures.kills += 1
        else:
            raise AssertionError(f"no pass completed:\n{log.read_text()}")
        assert sent_rows(post) == 2 * SEND_GAMES  # every row marked sent

        copies = delivered(post.stack, len(expected))
        relay.read()
    finally:
        relay.close()
    took = Counter(i for i in relay.ids if i in {mid for _, mid in expected})
    figures.resent = sum(n - 1 for n in took.values())
    figures.lost = len(expected - set(copies))
    figures.doubled = sum(n - 1 for n in copies.values())
    print(f"crash figures ({seed}): {figures}")
    assert set(copies) == expected, figures  # nothing lost, nothing unknown
    assert figures.kills >= 5, figures
    # A kill resends at most what was in flight: one mail a connection.
    assert figures.doubled <= figures.kills * post.config.smtp.connections, figures
    assert figures.doubled == figures.resent, figures  # each resend the same Message-ID
    if streaming:
        # The stream's child writes each 250 down before all else, and
        # finishes its mails in flight when the pass is gone: none again.
        assert figures.doubled == 0, figures


# -- 4. automated mail gets no answer ------------------------------------------------

def test_an_auto_reply_and_a_bounce_get_no_answer_and_change_nothing(post: Post) -> None:
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="auto")
    post.poll(T0)
    (opening,) = post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    state = post.state(tag)
    vacation = post.write(
        "alice", f"I am away until Monday and will read your mail then.\n\nbid 3\n\n"
                 f"On Mon, 2 Mar 2026 at 12:00, {NAME} wrote:\n{quoted(opening)}",
        subject=f"Out of Office: {opening['Subject']}", reply_to=opening,
        headers={"Auto-Submitted": "auto-replied"})
    post.stack.send(bounce_of(opening, "alice@example.test", REF), "", REF)  # sender <>
    post.in_referee_inbox += 1
    help_id = post.write("bob", "help", subject=f"[{tag}]")  # a person, to know the pass ran
    post.poll(T0 + timedelta(hours=1))
    (reply,) = post.new_mail("bob", 1)
    assert reply["In-Reply-To"] == help_id
    post.assert_no_more_mail("alice")
    assert post.count(m.Outbox) == 3  # the opening (a copy each) and Bob's answer
    assert post.count(m.ActionLog) == 0
    assert post.state(tag) == state
    notes = post.inbound_notes()
    assert notes[vacation.strip("<>")] == "not answered: auto-reply"
    assert notes["20260302120500.ABC123@mx.example.test"] == (
        "not answered: bounce; alice@example.test bounced mail 1 (5.2.2 552 5.2.2 mailbox full)")
    bounced = {p["name"]: p["bounced"] for p in post.referee.reading.status(tag)[0]["players"]}
    assert bounced["Alice"] is not None and bounced["Bob"] is None
    # The bounce reached the referee with the null sender, as the server stamped it.
    assert "<>" in [str(x["Return-Path"]) for x in post.stack.fetch_all("referee")]


def test_with_verp_a_real_bounce_names_its_player_and_gets_no_answer(
    mailstack: MailStack, tmp_path: Path
) -> None:
    post = Post(mailstack, tmp_path, smtp={"verp": True})
    try:
        tag = post.referee.operator.create_game("goofspiel", [ALICE, "Ghost <ghost@example.test>"],
                                       now=T0, seed="verp")
        post.poll(T0)  # sends the opening; the server accepts it for the ghost, then fails
        (opening,) = post.new_mail("alice", 1)
        assert opening["Return-Path"] == f"<{post.referee.composer.verp_address(1)}>"
        post.in_referee_inbox += 1  # Postfix's delivery report, to the envelope sender
        post.poll(T0 + timedelta(minutes=1))
        (note,) = [n for n in post.inbound_notes().values() if "VERP" in n]
        assert note.startswith("not answered: bounce to a VERP address; "
                               "ghost@example.test bounced mail 2 (")  # its own copy
        bounced = {p["name"]: p["bounced"] for p in post.referee.reading.status(tag)[0]["players"]}
        assert bounced["Alice"] is None and bounced["Ghost"]["said"].startswith("5.7.1")
        assert post.count(m.Outbox) == 2  # nothing answered the bounce
        post.assert_no_more_mail("alice")
    finally:
        post.close()


def test_with_verified_senders_a_reply_to_the_referee_counts_and_a_forgery_does_not(
        mailstack: MailStack, tmp_path: Path) -> None:
    """[auth] require = "verified": the private reply address in Reply-To goes
    through Postfix's plus addressing into the referee's INBOX."""
    post = Post(mailstack, tmp_path, auth={"require": "verified"})
    try:
        tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="auth")
        post.poll(T0)
        post.new_mail("alice", 1)
        post.new_mail("bob", 1)
        post.write("alice", "bid 6", subject=f"[{tag}]")  # to the plain address
        post.poll(T0 + timedelta(minutes=1))
        (refusal,) = post.new_mail("alice", 1)
        assert refusal["Subject"] == f"Re: [{tag}] (not applied) (secret)"
        private = refusal["Reply-To"].addresses[0].addr_spec
        assert private.startswith("referee+")
        post.write("alice", "bid 6", subject=f"Re: {refusal['Subject']}", to=[private],
                   reply_to=refusal)
        post.poll(T0 + timedelta(minutes=2))
        (answer,) = post.new_mail("alice", 1)
        assert "DONE (bid 6)" in body(answer)
        assert [a[1:3] for a in post.actions(tag)] == [("bid", [6])]
        post.assert_no_more_mail("bob")
    finally:
        post.close()


# -- the list, and the daemon --------------------------------------------------------

def test_a_bid_sent_to_the_list_is_refused_in_private_and_the_list_gets_nothing(
        mailstack: MailStack, tmp_path: Path) -> None:
    post = Post(mailstack, tmp_path, public_list=mailstack.list_address)
    try:
        tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="list")
        post.poll(T0)
        post.in_referee_inbox += 1  # the opening comes back to the referee through the list
        members = PLAYERS
        for user in members:
            (opening,) = post.new_mail(user, 1)
            assert str(opening["To"]) == mailstack.list_address
        bid = post.write("alice", "bid 6", subject=f"[{tag}] my bid", to=[mailstack.list_address],
                         headers={"List-Id": "Game list <players.example.test>"})
        for user in members:
            post.new_mail(user, 1)  # the list's copy of Alice's mail, Alice's own too
        post.poll(T0 + timedelta(hours=1))
        (reply,) = post.new_mail("alice", 1)
        assert str(reply["To"]) == ALICE and reply["Cc"] is None
        assert reply["In-Reply-To"] == bid
        assert "> bid 6\n  REFUSED (bid 6): A bid must be secret" in body(reply)
        post.assert_no_more_mail(*members)
        with post.referee.sessions() as db:
            outbox = [row.recipients for row in db.scalars(select(m.Outbox).order_by(m.Outbox.id))]
        assert outbox == [[mailstack.list_address], ["alice@example.test"]]
        assert post.count(m.ActionLog) == 0
        assert sorted(post.inbound_notes().values()) == ["not answered: loop", "processed"]
    finally:
        post.close()


@contextlib.contextmanager
def daemon(post: Post, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``referee run`` in the background; on leaving, SIGTERM must stop it with status 0."""
    with log.open("w") as out:
        proc = subprocess.Popen(referee_command(post, "run"), cwd=REPO_ROOT, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        yield proc
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=GIVE_UP) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def opened_game(post: Post) -> str:
    """A goofspiel game whose openings both players have read."""
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], seed="daemon")
    send_outbox(post.referee, now_utc())
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    return tag


def test_the_daemon_answers_through_imap_idle_not_a_poll_and_stops_cleanly_on_sigterm(
        mailstack: MailStack, tmp_path: Path) -> None:
    # Polls an hour apart, and Dovecot's keepalive every half hour: an answer
    # before the hang guard (GIVE_UP) can only have come through IDLE's news.
    post = Post(mailstack, tmp_path, mailbox={"poll_interval": "1h", "idle_timeout": "25m"})
    try:
        tag = opened_game(post)
        with daemon(post, tmp_path / "run.log"):
            # Bob's mail is read by the daemon's first pass; once answered, it sits in IDLE.
            post.write("bob", "help", subject=f"[{tag}]")
            post.new_mail("bob", 1)
            bid = post.write("alice", "bid 4", subject=f"[{tag}]")
            (reply,) = post.new_mail("alice", 1)  # no IDLE: no answer for an hour
            assert reply["In-Reply-To"] == bid and "DONE (bid 4)" in body(reply)
    finally:
        post.close()


def test_the_daemon_reconnects_when_the_imap_server_drops_it(
        post: Post, tmp_path: Path) -> None:
    tag = opened_game(post)
    log = tmp_path / "run.log"
    with daemon(post, log):
        post.write("bob", "help", subject=f"[{tag}]")
        post.new_mail("bob", 1)  # answered: the daemon is connected, in IDLE
        post.stack.kick(REF)  # the login of the referee's config
        bid = post.write("alice", "bid 4", subject=f"[{tag}]")
        (reply,) = post.new_mail("alice", 1)
        assert reply["In-Reply-To"] == bid and "DONE (bid 4)" in body(reply)
    assert "mailbox connection lost" in log.read_text()
    assert [a[1:3] for a in post.actions(tag)] == [("bid", [4])]


def reply_all(msg: EmailMessage, me: str) -> list[str]:
    """Whom a mail client's "reply all" writes to: Reply-To (else From), and
    To and Cc, less the player's own address."""
    heads = [msg["Reply-To"] or msg["From"], msg["To"], msg["Cc"]]
    found = [a.addr_spec for h in heads if h is not None for a in h.addresses]
    return [a for a in dict.fromkeys(found) if a != me]


def test_a_reply_all_to_a_public_mail_reaches_the_referee_alone_and_counts_when_verified(
        mailstack: MailStack, tmp_path: Path) -> None:
    """Without a list each player gets their own copy of a public mail, To:
    them alone: a reply-all with a sealed bid in it shows the bid to nobody.
    In verified mode that copy, which a player may forward, shows no private
    address: the reply goes to the referee's own address, and is applied
    when the MX vouches for the sender's domain (an aligned pass)."""
    post = Post(mailstack, tmp_path, auth={"require": "verified",
                                           "authserv_id": "mail.example.test"})
    try:
        tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="all")
        post.poll(T0)
        (opening,) = post.new_mail("alice", 1)
        (bobs,) = post.new_mail("bob", 1)
        assert str(opening["To"]) == ALICE and str(bobs["To"]) == BOB
        rcpts = reply_all(opening, "alice@example.test")
        assert rcpts == [REF] and "referee+" not in opening.as_string()
        post.write("alice", "bid 6", subject=f"Re: {opening['Subject']}", to=rcpts,
                   reply_to=opening, headers={
                       "Authentication-Results": "mail.example.test; dkim=pass "
                                                 "header.d=example.test"})
        post.poll(T0 + timedelta(minutes=1))
        (answer,) = post.new_mail("alice", 1)
        assert "DONE (bid 6): Your bid of 6 for round 1 is sealed." in body(answer)
        post.assert_no_more_mail("bob")  # nobody else saw the bid, nor a word of it
        assert [a[1:3] for a in post.actions(tag)] == [("bid", [6])]
    finally:
        post.close()
