"""The service: one message, one transaction; replies, reports, deadlines.

These tests run the real pipeline on the embedded default (Maildir in and
out, SQLite); the end-to-end tests in ``tests/test_e2e.py`` run it against
real IMAP and SMTP servers.
"""

from __future__ import annotations

import hashlib
import mailbox
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from referee.config import Config, config_from_dict
from referee.games import GAMES
from referee.games.base import Action
from referee.passes import run_pass
from referee.service import Referee, RefereeError
from referee.store import models as m
from referee.store.db import upgrade
from referee.testing.club import Club as KitClub
from tests.databases import KINDS, database_url

T0 = datetime(2026, 3, 2, 12, 0)
REF = "referee@club.test"
ALICE, BOB, CAROL = "alice@club.test", "bob@club.test", "carol@club.test"
SIGNATURE = "-- \nClub Referee <referee@club.test>\n"


class Club(KitClub):
    """A referee on Maildir + SQLite, and the players' side of the mail
    (``poll`` and ``new_mail`` are the test kit's), with the config's
    sections to set and mail of any shape to send."""

    def __init__(self, root: Path, auth: dict[str, str] | None = None,
                 web: dict[str, str] | None = None, limits: dict[str, int] | None = None,
                 verp: bool = False, vouch: bool = False,
                 club: dict[str, Any] | None = None, **referee: str) -> None:
        """``vouch``: the club's mail server (``[auth] authserv_id``) vouches
        for every sender, as for honest mail: each mail it delivers carries
        its Authentication-Results with a DMARC pass for the From domain."""
        self.root = root
        self.vouch = vouch
        self.config: Config = config_from_dict({
            "referee": {"address": REF, "name": "Club Referee",
                        "database": f"sqlite:///{root / 'ref.db'}", **referee},
            "mailbox": {"kind": "maildir", "path": str(root / "in")},
            "smtp": {"kind": "maildir", "path": str(root / "out"), "verp": verp},
            "auth": auth or {},
            "web": web or {},
            "limits": limits or {},
            "club": club or {},
        }, base_dir=root)
        upgrade(self.config.database_url)
        self.referee = Referee(self.config)
        self.read = 0
        self.now = T0

    def send(self, sender: str, body: str, subject: str = "move", to: str = REF,
             cc: str | None = None,
             headers: dict[str, str] | list[tuple[str, str]] | None = None,
             message_id: str | None = None) -> str:
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = to
        if cc:
            msg["Cc"] = cc
        msg["Subject"] = subject
        msg["Message-ID"] = message_id or make_msgid(domain="club.test")
        if self.vouch:
            domain = msg["From"].addresses[0].domain
            msg["Authentication-Results"] = (f"{self.config.auth.authserv_id}; dmarc=pass "
                                             f"header.from={domain}")
        for k, v in (headers.items() if isinstance(headers, dict) else headers or []):
            msg[k] = v
        msg.set_content(body)
        mailbox.Maildir(self.root / "in", create=True).add(msg.as_bytes())
        return str(msg["Message-ID"])

    def count(self, model: type[m.Base]) -> int:
        with self.referee.sessions() as db:
            return int(db.scalar(select(func.count()).select_from(model)) or 0)


def body(msg: EmailMessage) -> str:
    part = msg.get_body(("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def to(msg: EmailMessage) -> str:
    return str(msg["To"])


def clubs(kind: str, tmp_path: Path, **referee: Any) -> Iterator[Club]:
    """One club on a database of ``kind``, closed afterwards (for fixtures)."""
    for url in database_url(kind, tmp_path):
        c = Club(tmp_path, database=url, **referee)
        yield c
        c.referee.close()


@pytest.fixture(params=KINDS)
def club(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Club]:
    """A club on SQLite, and the same on PostgreSQL where one answers."""
    yield from clubs(request.param, tmp_path)


#: The fingerprint a game of seed "s" publishes: SHA-256 of "seed: s\n".
SEED_S_SHA256 = hashlib.sha256(b"seed: s\n").hexdigest()


def new_goofspiel(club: Club, order: str = "5,1,6,4,3,2", **opts: str) -> str:
    tag = club.referee.operator.create_game(
        "goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
        options={"prize_order": order, **opts}, now=club.now, seed="s")
    return tag


def test_the_opening_mail_says_what_the_game_is_how_to_bid_and_by_when(club: Club) -> None:
    tag = new_goofspiel(club)
    assert tag == "goofspiel-1"
    # Without a list, each player gets their own copy: a reply-all reaches
    # the referee alone.
    opening, bobs = club.poll()
    assert (to(opening), to(bobs)) == ("Alice <alice@club.test>", "Bob <bob@club.test>")
    assert body(opening) == body(bobs) and opening["Reply-To"] != bobs["Reply-To"]
    assert str(opening["Reply-To"]).startswith("Club Referee <referee+")
    # It asks each player for a bid, and its subject says so.
    assert opening["Subject"] == "[goofspiel-1] Goofspiel begins: round 1, the prize is 5: your bid"
    assert opening["Auto-Submitted"] == "auto-generated"
    assert opening["Message-ID"] == f"<pbm.1.goofspiel-1.{club.referee.composer.mac(1)}@club.test>"
    assert body(opening) == f"""\
A game of Goofspiel (rule text 003) begins.

Players:
  Seat 1: Alice
  Seat 2: Bob

How it works: the referee shows the prizes of its own pack in an order fixed
before the game, one a round, to everyone. Each player bids one card of their
own pack
(1 to 6), secretly, by mail to the referee. When all bids are in,
the single highest bid takes the prize and all the bid cards.
On a tie the prize and the bid cards stay in the pot and go to the winner
of the next round; a tie in the last round discards the pot.
A bid is final once sent. Each card can be played once. The highest total of
cards won wins; a tie at the top means no winner.

Every random draw of this game (a card the referee bids for a late
player) comes from a secret seed, fixed now. Its SHA-256 fingerprint:
  seed-sha256: {SEED_S_SHA256}
The game's last mail will tell the seed, so that anyone can check it
against this fingerprint and draw every draw of the game again.

SCORES
  Alice                  0 points   cards left: 1 2 3 4 5 6
  Bob                    0 points   cards left: 1 2 3 4 5 6
  Points still in hands: 63

ROUND 1 OF 6: THE PRIZE IS 5

Send your bid, one card of your pack, to referee@club.test alone
(not to the list, not to other players), for example:

  bid 3

Deadline: Thu 05 Mar 2026 12:00 UTC. If your bid has not arrived by then,
the referee bids a random card of your pack for you.

Write "help" to the referee at any time. Reply to this mail, or put
[goofspiel-1] in the subject.

--\x20
Club Referee <referee@club.test>
"""


def test_a_secret_bid_gets_a_transcript_and_the_last_bid_a_round_report(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "Hi!\n\nbid 5\n\n-- \nAlice", subject="Re: [goofspiel-1] round 1")
    (reply,) = club.poll()
    assert to(reply) == "Alice <alice@club.test>"
    assert reply["Auto-Submitted"] == "auto-replied"
    assert reply["Subject"] == "[goofspiel-1] Done: bid 5 (secret)"
    assert body(reply) == """\
SECRET: for you alone. Do not forward it or quote it to the list or
to other players; a reply goes to the referee alone.

Alice, here is what I did with your mail for goofspiel-1.

> bid 5
  DONE (bid 5): Your bid of 5 for round 1 is sealed.

--\x20
Club Referee <referee@club.test>
Write "help" to the referee for what you can do now.
"""
    club.send(BOB, "bid 3", subject="[goofspiel-1]")
    # Bob's mail ends the round: one mail to him, the answer to his bid and
    # then the report; Alice gets the report alone.
    report, bobs = club.poll()
    assert (to(report), to(bobs)) == ("Alice <alice@club.test>", "Bob <bob@club.test>")
    assert report["Subject"] == "[goofspiel-1] Round 1: Alice takes 13 — round 2 prize 1: your bid"
    assert bobs["Subject"] == "[goofspiel-1] Done: bid 3; your bid (secret)"
    assert bobs["In-Reply-To"] is not None and bobs["Auto-Submitted"] == "auto-replied"
    answer, _, rest = body(bobs).partition("Round 1: Alice takes 13 — round 2 prize 1\n")
    assert "> bid 3\n  DONE (bid 3): Your bid of 3 for round 1 is sealed." in answer
    assert rest.startswith("-" * 41 + "\nROUND 1: THE PRIZE WAS 5\n")
    assert body(report).partition("\n-- \n")[0] in body(bobs)
    text = body(report)
    assert "  Alice                bid 5\n  Bob                  bid 3\n" in text
    assert "Alice wins the round and takes 3 5 5 (13 points)." in text
    assert "  Alice                 13 points   cards left: 1 2 3 4 6" in text
    assert "ROUND 2 OF 6: THE PRIZE IS 1" in text


def test_a_card_not_held_is_refused_with_the_cards_still_held(club: Club) -> None:
    new_goofspiel(club)
    club.send(ALICE, "bid 5")
    club.send(BOB, "bid 3")
    club.poll()
    club.send(ALICE, "bid 5")
    (reply,) = club.poll()
    assert "> bid 5\n  REFUSED (bid 5): You hold no 5; your pack: 1 2 3 4 6." in body(reply)
    assert club.referee.reading.status("goofspiel-1")[0]["round"] == 2


def test_an_unreadable_bid_is_answered_with_the_pack_and_what_to_do_ps_7(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid banana")
    (reply,) = club.poll()
    text = body(reply)
    assert "> bid banana\n  REFUSED: I could not read 'banana' as a card" in text
    assert "Your pack: 1 2 3 4 5 6." in text
    assert club.referee.reading.status("goofspiel-1")[0]["deadlines"][0]["name"] == "Alice"


def test_a_bid_copied_to_another_player_is_not_applied_and_the_sender_is_told(
        club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 6", cc=BOB)
    (reply,) = club.poll()
    assert to(reply) == "Alice <alice@club.test>"
    assert "REFUSED (bid 6): A bid must be secret" in body(reply)
    status = club.referee.reading.status("goofspiel-1")[0]
    assert {d["name"] for d in status["deadlines"]} == {"Alice", "Bob"}


def test_a_message_seen_twice_is_applied_once(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    mid = club.send(ALICE, "bid 5")
    club.send(ALICE, "bid 5", message_id=mid)  # the same mail delivered twice
    replies = club.poll()
    assert len(replies) == 1
    inbox = mailbox.Maildir(club.root / "in")
    raw = inbox.get_bytes(next(iter(inbox.keys())))
    assert club.referee.process(raw, "maildir:again", now=T0).status == "duplicate"
    assert club.count(m.ActionLog) == 1


@pytest.mark.parametrize("headers", [
    {"Auto-Submitted": "auto-replied"},
    {"Return-Path": "<>"},
    {"X-Autoreply": "yes"},
    {"Precedence": "bulk"},
])
def test_automated_mail_gets_no_answer_and_changes_nothing(club: Club,
                                                            headers: dict[str, str]) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5", headers=headers)
    assert club.poll() == []
    assert club.count(m.ActionLog) == 0


def test_a_bounce_from_mailer_daemon_gets_no_answer(club: Club) -> None:
    club.send("MAILER-DAEMON@club.test", "bid 5")
    assert club.poll() == []


def test_our_own_mail_coming_back_is_dropped(club: Club) -> None:
    new_goofspiel(club)
    opening, _ = club.poll()
    mailbox.Maildir(club.root / "in").add(opening.as_bytes())
    assert club.poll() == []


def test_a_stranger_is_answered_at_most_once_a_day(club: Club) -> None:
    club.send("eve@else.test", "bid 5")
    club.send("eve@else.test", "bid 6")
    (reply,) = club.poll()
    assert to(reply) == "eve@else.test"
    assert "Your address sits in no game here" in body(reply)
    club.send("eve@else.test", "bid 4")
    assert club.poll(T0 + timedelta(days=1, minutes=1))[0]["To"] == "eve@else.test"


def test_replying_to_a_referee_mail_finds_the_game_without_a_tag(club: Club) -> None:
    new_goofspiel(club)
    club.referee.operator.create_game("goofspiel", [ALICE, CAROL], now=T0, seed="t")
    club.poll()
    club.send(ALICE, "bid 2", subject="no tag here")
    (reply,) = club.poll()
    assert "You play in more than one game" in body(reply)
    club.send(ALICE, "bid 2", subject="Re: whatever",
              headers={"In-Reply-To": "<pbm.1.goofspiel-1@club.test>",
                       "References": "<pbm.game.goofspiel-1@club.test>"})
    (reply,) = club.poll()
    assert "DONE (bid 2)" in body(reply)
    assert reply["In-Reply-To"] is not None
    assert "<pbm.game.goofspiel-1@club.test>" in str(reply["References"])


def test_help_answers_with_what_the_player_can_do_now(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "help")
    (reply,) = club.poll()
    assert "> help\n  DONE (help): Round 1 of 6: the prize is 5.\n  Your pack: 1 2 3 4 5 6." in (
        body(reply))
    assert "bid 6" in body(reply)
    assert "\n    status      the game as it stands" in body(reply)


def test_a_reminder_comes_before_the_deadline_and_a_random_card_at_it(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5")
    club.poll()
    (reminder,) = club.poll(T0 + timedelta(days=2, hours=1))
    assert to(reminder) == "Bob <bob@club.test>"
    assert reminder["Subject"] == "[goofspiel-1] Reminder: a bid for round 1"
    assert "It is due by Thu 05 Mar 2026 12:00 UTC." in body(reminder)
    assert club.poll(T0 + timedelta(days=2, hours=2)) == []  # reminded once
    report, _ = club.poll(T0 + timedelta(days=3, seconds=1))
    assert "(no bid arrived: the referee chose a random card)" in body(report)
    assert club.referee.reading.status("goofspiel-1")[0]["round"] == 2


def test_resign_hands_the_seat_to_a_bot_that_moves_at_once(club: Club) -> None:
    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5")
    club.send(BOB, "resign")
    mails = club.poll()
    assert any("a bot that weighs each prize takes the seat" in body(x) for x in mails)
    status = club.referee.reading.status("goofspiel-1")[0]
    assert status["round"] == 2 and status["players"][1]["bot"]
    assert [d["name"] for d in status["deadlines"]] == ["Alice"]


def test_a_whole_game_with_a_bot_ends_with_the_final_report(club: Club) -> None:
    club.referee.operator.create_game("pure-skill", [ALICE, BOB], bots=1, now=T0, seed="x")
    club.poll()
    for _ in range(13):
        status = club.referee.reading.status("pure-skill-1")[0]
        if status["status"] != "active":
            break
        for seat in (1, 2):
            state = _pack(club, seat)
            club.send([ALICE, BOB][seat - 1], f"bid {state[-1]}")
        club.poll()
    status = club.referee.reading.status("pure-skill-1")[0]
    assert status["status"] == "finished"
    assert club.referee.reading.replay("pure-skill-1") == _state(club)


def _state(club: Club) -> dict[str, object]:
    with club.referee.sessions() as db:
        game = db.scalar(select(m.Game))
        assert game is not None
        return dict(game.state)


def _pack(club: Club, seat: int) -> list[int]:
    packs = _state(club)["packs"]
    assert isinstance(packs, list)
    return list(packs[seat - 1])


def test_public_mail_goes_to_the_list_when_one_is_configured(tmp_path: Path) -> None:
    club = Club(tmp_path, public_list="players@club.test")
    new_goofspiel(club)
    (opening,) = club.poll()
    assert to(opening) == "players@club.test"
    club.send(ALICE, "bid 5", to="players@club.test",
              headers={"List-Id": "<players.club.test>"})
    (reply,) = club.poll()
    assert to(reply) == "Alice <alice@club.test>"
    assert "A bid must be secret" in body(reply)
    club.referee.close()


def test_creating_a_game_checks_kind_seats_and_options(club: Club) -> None:
    with pytest.raises(RefereeError, match="unknown game kind 'chess'"):
        club.referee.operator.create_game("chess", [ALICE, BOB])
    with pytest.raises(RefereeError, match="takes 2 seats; got 3"):
        club.referee.operator.create_game("goofspiel", [ALICE, BOB, CAROL])
    with pytest.raises(RefereeError, match="tie must be discard or carry"):
        club.referee.operator.create_game("goofspiel", [ALICE, BOB], options={"tie": "x"})
    with pytest.raises(RefereeError, match="deadline"):
        club.referee.operator.create_game("goofspiel", [ALICE, BOB], options={"deadline": "soon"})
    assert club.count(m.Game) == 0


def bounce_of(original: EmailMessage, recipient: str, referee: str = REF,
              message_id: str = "20260302120500.ABC123@mx.example.test") -> bytes:
    """A Postfix-style delivery status notification (RFC 3464): ``original``
    could not be delivered to ``recipient``, mailbox full."""
    quoted_original = original.as_bytes().replace(b"\r\n", b"\n").decode("utf-8")
    return f"""\
From: Mail Delivery System <MAILER-DAEMON@example.test>
To: {referee}
Subject: Undelivered Mail Returned to Sender
Date: Mon, 02 Mar 2026 12:05:00 +0000
Message-ID: <{message_id}>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
 boundary="BOUNDARY"

--BOUNDARY
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.test.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

bid 3

--BOUNDARY
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.test
Arrival-Date: Mon,  2 Mar 2026 12:04:59 +0000

Final-Recipient: rfc822; {recipient}
Action: failed
Status: 5.2.2
Diagnostic-Code: smtp; 552 5.2.2 mailbox full

--BOUNDARY
Content-Description: Undelivered Message
Content-Type: message/rfc822

{quoted_original}
--BOUNDARY--
""".replace("\n", "\r\n").encode("utf-8")



def test_a_bounce_of_our_mail_to_a_player_shows_in_status_and_gets_no_answer(
        club: Club) -> None:
    new_goofspiel(club)
    opening, _ = club.poll()
    mailbox.Maildir(club.root / "in").add(bounce_of(opening, ALICE))
    assert club.poll() == []
    seats = club.referee.reading.status("goofspiel-1")[0]["players"]
    players = {p["name"]: p["bounced"] for p in seats}
    assert players == {
        "Alice": {"at": "2026-03-02T12:00:00Z", "said": "5.2.2 552 5.2.2 mailbox full"},
        "Bob": None,
    }
    with club.referee.sessions() as db:
        (note,) = db.scalars(select(m.Inbound.note))
        row, _ = db.scalars(select(m.Outbox).order_by(m.Outbox.id))
    assert note == ("not answered: bounce; "
                    "alice@club.test bounced mail 1 (5.2.2 552 5.2.2 mailbox full)")
    assert row.last_error == "bounced: alice@club.test: 5.2.2 552 5.2.2 mailbox full"


def test_a_bounce_about_mail_we_never_sent_to_that_address_marks_nobody(club: Club) -> None:
    new_goofspiel(club)
    opening, _ = club.poll()
    # Carol was never sent the opening; Bob was, but this report is on another mail.
    mailbox.Maildir(club.root / "in").add(bounce_of(opening, CAROL, message_id="1@mx.test"))
    del opening["Message-ID"]
    opening["Message-ID"] = "<unrelated@elsewhere.test>"
    mailbox.Maildir(club.root / "in").add(bounce_of(opening, BOB, message_id="2@mx.test"))
    assert club.poll() == []
    with club.referee.sessions() as db:
        notes = list(db.scalars(select(m.Inbound.note)))
    assert notes == ["not answered: bounce"] * 2
    seats = club.referee.reading.status("goofspiel-1")[0]["players"]
    assert all(p["bounced"] is None for p in seats)


# -- who wrote it: [auth] require = "verified" ------------------------------------

MX = "mx.club.test"  # the authserv-id of the club's own mail server


@pytest.fixture
def strict(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, auth={"require": "verified", "authserv_id": MX})
    yield c
    c.referee.close()


def test_an_unverified_mail_changes_nothing_and_the_registered_player_is_told(
        strict: Club) -> None:
    new_goofspiel(strict)
    strict.poll()
    strict.send(ALICE, "bid 6", subject="[goofspiel-1] bid",
                headers={"Date": "Mon, 02 Mar 2026 13:00:00 +0100"})
    (reply,) = strict.poll()
    assert to(reply) == "Alice <alice@club.test>"
    # It carries Alice's private address for the game: a secret mail.
    assert reply["Subject"] == "Re: [goofspiel-1] bid (not applied) (secret)"
    assert reply["Reply-To"].addresses[0].addr_spec.startswith("referee+")
    assert body(reply) == f"""\
SECRET: for you alone. Do not forward it or quote it to the list or
to other players; a reply goes to the referee alone.

A mail in your name of Mon 02 Mar 2026 12:00 UTC reached the referee,
but it could not be verified as coming from you, so nothing in it was done.

If you sent it, send it again as a reply to this mail: replies to the
referee's secret mails to you (this one, the answers to your moves, your
reminders) go to your private referee address, which vouches for you.
Keep that address to yourself. A reply to a report the other players get
too goes to the referee's own address, and counts only where your mail
server vouches for your mail.

If you did not send it, someone wrote in your name; nothing changed in
your games.

{SIGNATURE}"""
    assert strict.count(m.ActionLog) == 0
    with strict.referee.sessions() as db:
        (note,) = db.scalars(select(m.Inbound.note))
    assert note == "sender not verified: no Authentication-Results from mx.club.test"


def test_a_reply_to_the_private_address_is_verified_and_applied(strict: Club) -> None:
    """The opening is each player's copy of a public report, which they may
    forward: in verified mode it shows no private address, and a reply to it
    counts only where the player's domain vouches for it. Else the refusal,
    a secret mail, gives the address: the natural reply to it counts, and
    the answer, secret too, gives it again."""
    new_goofspiel(strict)
    opening, bobs = strict.poll()
    assert {x["Reply-To"].addresses[0].addr_spec for x in (opening, bobs)} == {REF}
    strict.send(ALICE, "bid 6", subject=f"Re: {opening['Subject']}")
    (refusal,) = strict.poll()
    assert "(not applied) (secret)" in refusal["Subject"]
    private = refusal["Reply-To"].addresses[0].addr_spec
    assert private.startswith("referee+") and private.endswith("@club.test")
    strict.send(ALICE, "bid 6", to=private, subject=f"Re: {refusal['Subject']}")
    (reply,) = strict.poll()
    assert "DONE (bid 6)" in body(reply) and "(secret)" in reply["Subject"]
    assert reply["Reply-To"].addresses[0].addr_spec == private
    assert strict.count(m.ActionLog) == 1


def test_a_private_address_counts_only_for_its_own_player(strict: Club) -> None:
    new_goofspiel(strict)
    strict.poll()
    strict.send(ALICE, "help")
    (answer,) = strict.poll()
    alices = answer["Reply-To"].addresses[0].addr_spec
    strict.send(BOB, "bid 6", to=alices)
    notice, reply = strict.poll()  # Alice's address, shown to Bob, is replaced at once
    assert to(notice) == "Alice <alice@club.test>" and "(secret)" in notice["Subject"]
    assert to(reply) == "Bob <bob@club.test>" and "(not applied)" in reply["Subject"]
    assert strict.count(m.ActionLog) == 0


def test_an_aligned_pass_in_our_own_servers_header_is_verified(strict: Club) -> None:
    new_goofspiel(strict)
    strict.poll()
    strict.send(ALICE, "bid 6", headers={
        "Authentication-Results": f"{MX}; dkim=pass header.d=club.test; spf=none",
    })
    (reply,) = strict.poll()
    assert "DONE (bid 6)" in body(reply)
    assert strict.count(m.ActionLog) == 1


def test_a_pass_in_a_header_the_sender_forged_below_ours_does_not_count(strict: Club) -> None:
    new_goofspiel(strict)
    strict.poll()
    # Our server prepends its header; the forged one below it claims a pass.
    strict.send(ALICE, "bid 6", headers=[
        ("Authentication-Results", f"{MX}; dkim=fail header.d=club.test"),
        ("Authentication-Results", f"{MX}; dmarc=pass header.from=club.test"),
    ])
    (reply,) = strict.poll()
    assert "(not applied)" in reply["Subject"]
    assert strict.count(m.ActionLog) == 0


def test_public_mail_never_carries_a_private_address(strict: Club) -> None:
    new_goofspiel(strict)
    mails = strict.poll()
    for sender in (ALICE, BOB):
        strict.send(sender, "help")
    mails += strict.poll()
    tokens = set()
    with strict.referee.sessions() as db:
        tokens = {s.token for s in db.scalars(select(m.Seat)) if s.token}
    assert len(tokens) == 2  # each seat's address for its game
    for mail in mails:
        raw = mail.as_string()
        leaked = {t for t in tokens if t in raw}
        if "," in to(mail):  # to both players: public
            assert not leaked
        else:
            assert len(leaked) <= 1


def test_a_rotated_private_address_no_longer_verifies(strict: Club) -> None:
    new_goofspiel(strict)
    strict.poll()
    strict.send(ALICE, "help")
    old = strict.poll()[0]["Reply-To"].addresses[0].addr_spec
    strict.referee.operator.rotate_token(ALICE)
    strict.send(ALICE, "bid 6", to=old)
    # "Not verified" notices go out once a day, so this one comes a day on.
    (reply,) = strict.poll(strict.now + timedelta(days=1))
    assert "(not applied)" in reply["Subject"]
    new = reply["Reply-To"].addresses[0].addr_spec
    assert new != old
    strict.send(ALICE, "bid 6", to=new)
    assert "DONE (bid 6)" in body(strict.poll()[0])
    with pytest.raises(RefereeError, match="No player has the address"):
        strict.referee.operator.rotate_token("nobody@club.test")


def test_a_fault_in_one_message_changes_nothing_tells_the_player_and_blocks_no_other(
    club: Club, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = GAMES["goofspiel"]
    apply = type(engine).apply

    def faulty(self: Any, state: Any, seat: int, action: Action, rng: Any) -> Any:
        if seat == 1:
            raise RuntimeError("boom")
        return apply(self, state, seat, action, rng)

    new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5", subject="[goofspiel-1] my bid")
    club.send(BOB, "bid 3")
    monkeypatch.setattr(type(engine), "apply", faulty)
    report = run_pass(club.referee, club.now)
    assert (report.read, report.processed, report.failed) == (2, 2, 1)
    assert "1 failed: see the log" in str(report)
    alice, bob = sorted(club.new_mail(), key=to)
    assert to(alice) == "Alice <alice@club.test>"
    assert alice["Subject"] == "Re: [goofspiel-1] my bid"
    assert "nothing in it was applied and no game changed" in body(alice)
    assert "DONE (bid 3)" in body(bob)  # the mail behind the fault was refereed
    with club.referee.sessions() as db:
        failed = db.scalar(select(m.Inbound).where(m.Inbound.sender == ALICE))
        assert failed is not None and failed.status == "failed"
        assert failed.note == "internal error: RuntimeError: boom"
    status = club.referee.reading.status("goofspiel-1")[0]
    assert (status["round"], [d["name"] for d in status["deadlines"]]) == (1, ["Alice"])
    monkeypatch.undo()
    club.send(ALICE, "bid 5")
    alices, _ = club.poll()  # her answer and the report in one mail; Bob's report
    assert "DONE (bid 5)" in body(alices)
    assert "Alice wins the round" in body(alices)


def test_a_fault_in_one_games_deadline_holds_back_no_other_game(
    club: Club, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_goofspiel(club)
    other = club.referee.operator.create_game("pure-skill", [ALICE, BOB, CAROL], now=club.now,
                                              seed="p")
    club.poll()

    def faulty(state: Any, seat: int, rng: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(GAMES["goofspiel"], "timeout_action", faulty)
    late = T0 + timedelta(days=3, seconds=1)
    assert run_pass(club.referee, late).timeouts == 3
    assert club.referee.reading.status(other)[0]["round"] == 2
    assert club.referee.reading.status("goofspiel-1")[0]["round"] == 1
    monkeypatch.undo()
    assert run_pass(club.referee, late).timeouts == 2
    assert club.referee.reading.status("goofspiel-1")[0]["round"] == 2


def test_the_operator_hands_a_silent_players_seat_to_a_bot_ps_13(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5")
    club.poll()
    assert club.referee.operator.resign_player(tag, f"Bob <{BOB}>", now=club.now) == "Bob"
    (notice,) = club.poll()  # the table is told; the bot bid at once: one mail
    assert notice["Subject"] == ("[goofspiel-1] Round 1: Alice takes 13 — round 2 prize 1: "
                                 "your bid")  # what it came to, and what Alice must do
    assert to(notice) == "Alice <alice@club.test>"  # Bob's seat is a bot's now
    left, _, report = body(notice).partition("\nRound 1: Alice takes")
    assert left.startswith("Bob has left: a bot bids for the seat\n")
    assert "  Bob                  bid 3   (bot, weighing the prize)\n" in report
    status = club.referee.reading.status(tag)[0]
    assert status["round"] == 2 and status["players"][1]["bot"]
    assert club.referee.reading.replay(tag) == _state(club)
    with pytest.raises(RefereeError, match=r"carol@club\.test plays no seat of goofspiel-1"):
        club.referee.operator.resign_player(tag, CAROL)
    with pytest.raises(RefereeError, match=r"bob@club\.test plays no seat"):
        club.referee.operator.resign_player(tag, BOB)  # a bot has the seat already


def test_a_cancelled_game_tells_everyone_and_takes_no_more_moves(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    club.referee.operator.cancel_game(tag, "Bob has moved house.", now=club.now)
    notice, bobs = club.poll()
    assert (to(notice), to(bobs)) == ("Alice <alice@club.test>", "Bob <bob@club.test>")
    assert notice["Subject"] == "[goofspiel-1] Goofspiel is cancelled"
    assert "cancelled by the person who runs this\nreferee:\n  Bob has moved house." in body(
        notice)
    status = club.referee.reading.status(tag)[0]
    assert (status["status"], status["deadlines"]) == ("cancelled", [])
    club.send(ALICE, "bid 5", subject=f"[{tag}]")
    (reply,) = club.poll()
    assert "REFUSED (bid 5): The game was cancelled." in body(reply)
    assert club.poll(T0 + timedelta(days=4)) == []  # no deadline fires
    with pytest.raises(RefereeError, match="goofspiel-1 is cancelled"):
        club.referee.operator.cancel_game(tag)
    with pytest.raises(RefereeError, match="There is no game chess-1"):
        club.referee.operator.cancel_game("chess-1")


def test_the_operator_extends_the_open_deadlines_and_everyone_is_told(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    club.send(ALICE, "bid 5")
    club.poll()
    (reminder,) = club.poll(T0 + timedelta(days=2, hours=1))
    assert to(reminder) == "Bob <bob@club.test>"
    assert club.referee.operator.extend_deadlines(tag, timedelta(days=2), "Bob is travelling.",
                                         now=club.now) == 1
    notice, bobs = club.poll()
    assert (to(notice), to(bobs)) == ("Alice <alice@club.test>", "Bob <bob@club.test>")
    assert notice["Subject"] == "[goofspiel-1] Deadlines extended by 2 days"
    assert "  Bob                  a bid for round 1, now due Sat 07 Mar 2026 12:00 UTC" in (
        body(notice))
    assert club.poll(T0 + timedelta(days=3, seconds=1)) == []  # the old deadline is gone
    (again,) = club.poll(T0 + timedelta(days=4, hours=1))  # a reminder before the new one
    assert again["Subject"] == "[goofspiel-1] Reminder: a bid for round 1"
    report, _ = club.poll(T0 + timedelta(days=5, seconds=1))
    assert "(no bid arrived: the referee chose a random card)" in body(report)
    with pytest.raises(RefereeError, match="a positive duration"):
        club.referee.operator.extend_deadlines(tag, timedelta(0))


def _prose_bounce(to: str) -> str:
    """A bounce as some old mail servers write it: prose, no delivery report,
    from an address that looks like a person's."""
    return f"""\
From: Mail System <mailer@old.example>
To: {to}
Subject: Your message could not be delivered
Message-ID: <{make_msgid(domain="old.example").strip("<>")}>

Your message to alice@club.test could not be delivered: no such mailbox.

bid 3
"""


@pytest.fixture(params=KINDS)
def verp_club(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Club]:
    """A club whose mails go out with VERP envelope senders."""
    yield from clubs(request.param, tmp_path, verp=True)


def test_any_bounce_to_a_verp_address_is_pinned_on_the_mail_and_never_answered(
    verp_club: Club,
) -> None:
    club = verp_club
    tag = new_goofspiel(club)
    club.poll()  # outbox 1 and 2: the opening, a copy to each player
    club.send(ALICE, "bid 5")
    club.poll()  # outbox 3: Alice's transcript, to her alone
    with club.referee.sessions.begin() as db:  # outbox 4: one mail to both
        game = db.scalars(select(m.Game)).one()
        club.referee.delivery.queue.put(db, game, [(ALICE, ""), (BOB, "")], "[goofspiel-1] To all",
                                    "Hello.\n", auto="auto-generated", now=club.now)
    club.poll()
    box = mailbox.Maildir(club.root / "in", create=True)
    box.add(_prose_bounce(club.referee.composer.verp_address(4)).encode())
    assert club.poll() == []
    players = {p["name"]: p["bounced"] for p in club.referee.reading.status(tag)[0]["players"]}
    assert players == {"Alice": None, "Bob": None}  # one of two: no one to mark
    box.add(_prose_bounce(club.referee.composer.verp_address(3)).encode())
    assert club.poll() == []
    alice = club.referee.reading.status(tag)[0]["players"][0]["bounced"]
    assert alice["said"] == "bounced: Your message could not be delivered"
    assert club.referee.reading.status(tag)[0]["deadlines"][0]["name"] == "Bob"  # no bid 3 applied
    with club.referee.sessions() as db:
        notes = [r.note for r in db.scalars(select(m.Inbound).where(
            m.Inbound.sender == "mailer@old.example").order_by(m.Inbound.id))]
    assert notes == ["not answered: bounce to a VERP address",
                     "not answered: bounce to a VERP address; alice@club.test bounced mail 3 "
                     "(bounced: Your message could not be delivered)"]


def test_a_delivery_report_to_a_verp_address_marks_only_its_failed_recipient(
    verp_club: Club,
) -> None:
    club = verp_club
    tag = new_goofspiel(club)
    _, bobs = club.poll()
    mailbox.Maildir(club.root / "in", create=True).add(
        bounce_of(bobs, BOB, referee=club.referee.composer.verp_address(2)))
    assert club.poll() == []
    bounced = {p["name"]: p["bounced"] for p in club.referee.reading.status(tag)[0]["players"]}
    assert bounced["Alice"] is None and "mailbox full" in bounced["Bob"]["said"]


def test_a_forged_bounce_marks_nobody(verp_club: Club) -> None:
    """Our Message-IDs and VERP addresses are signed: a bounce that names an
    outbox row without the signature, or with the wrong one, names no mail."""
    club = verp_club
    tag = new_goofspiel(club)
    opening, _ = club.poll()
    box = mailbox.Maildir(club.root / "in", create=True)
    box.add(_prose_bounce("referee+bounce-1@club.test").encode())
    box.add(_prose_bounce("referee+bounce-1-0123456789@club.test").encode())
    del opening["Message-ID"]
    opening["Message-ID"] = "<pbm.1.goofspiel-1@club.test>"  # guessed, unsigned
    box.add(bounce_of(opening, BOB, message_id="forged@mx.test"))
    assert club.poll() == []
    assert all(p["bounced"] is None for p in club.referee.reading.status(tag)[0]["players"])


def test_without_verp_a_bounce_address_is_no_special_address(club: Club) -> None:
    tag = new_goofspiel(club)
    club.poll()
    box = mailbox.Maildir(club.root / "in", create=True)
    box.add(_prose_bounce(club.referee.composer.verp_address(1)).encode())
    assert club.poll() == []  # a bounce all the same: never answered
    assert all(p["bounced"] is None for p in club.referee.reading.status(tag)[0]["players"])
