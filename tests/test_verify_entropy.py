"""``referee verify TAG --mail`` of a game started from a table by mail
(referee/verify_entropy.py): the player's own entropy found in the
opening's mix, whether an answer quoted it back (Alice's; Bob's, whose
accept started the game, in the start mail) or only their own sent mail
shows it (the start mail gone); a quote altered,
refused naming the opening and the table's mail. On the Maildir harness; the whole game
over the real servers is tests/test_e2e_entropy.py."""

from __future__ import annotations

import mailbox
from datetime import timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest

from referee.verify_mail import _parsed, verify_mailbox
from tests.service.intake.test_gamesmaster import ALICE, BOB, members
from tests.test_referee import Club


def mailbox_of(root: Path, who: str, folder: str,
               extra: tuple[bytes, ...] = (), alter: tuple[str, str] | None = None,
               without: str | None = None) -> Path:
    """The referee's outbox mail to ``who`` (and ``extra``, their sent
    mail) as a Maildir; ``alter``: a text replaced in each mail first;
    ``without``: the mails whose subject holds it left out."""
    path = root / folder
    box = mailbox.Maildir(path, create=True)
    out = mailbox.Maildir(root / "out", create=False)
    for key in out.iterkeys():
        data = out.get_bytes(key)
        msg = message_from_bytes(data, policy=default)
        assert isinstance(msg, EmailMessage)
        if who not in f"{msg['To']}" or (without and without in str(msg["Subject"])):
            continue
        if alter is not None:
            part = msg.get_body(("plain",))
            assert isinstance(part, EmailMessage)
            part.set_content(part.get_content().replace(*alter))
            data = msg.as_bytes()
        box.add(data)
    for data in extra:
        box.add(data)
    return path


@pytest.fixture
def played(tmp_path: Path) -> tuple[Club, str, bytes]:
    """A Goofspiel table opened by Alice's mail, started by Bob's accept,
    played to its end; the tag, and Bob's accept as he sent it."""
    club = members(Club(tmp_path))
    club.send(ALICE, "new goofspiel with Bob cards=3\n", message_id="<a.open@club.test>")
    invite = next(x for x in club.poll() if "invites you" in str(x["Subject"]))
    club.send(BOB, "accept\n", subject="Re: invite", message_id="<b.accept@club.test>",
              to=invite["Reply-To"].addresses[0].addr_spec)
    club.poll()
    tag = "goofspiel-3"
    now = club.now
    for n in (1, 2):
        now += timedelta(hours=1)
        club.send(ALICE, f"bid {n}", subject=f"[{tag}] bid")
        club.send(BOB, f"bid {n}", subject=f"[{tag}] bid")
        club.poll(now)
    status = club.referee.reading.status(tag)[0]
    assert status["status"] == "finished"
    sent = EmailMessage()
    sent["From"], sent["To"], sent["Subject"] = BOB, "referee@club.test", "Re: invite"
    sent["Message-ID"] = "<b.accept@club.test>"
    sent.set_content("accept\n")
    club.referee.close()
    return club, tag, sent.as_bytes()


def test_the_players_entropy_is_found_quoted_back_or_in_their_sent_mail(
        played: tuple[Club, str, bytes], tmp_path: Path) -> None:
    _, tag, bobs_accept = played
    notes: list[str] = []
    assert verify_mailbox(tag, mailbox_of(tmp_path, "alice@club.test", "alice"), notes) == []
    assert notes == ["your entropy <a.open@club.test> is seat 1's in the opening's mix "
                     "(the Message-ID of your mail)"]
    # Bob's accept filled the table: the start mail answering it quotes
    # his entropy back, in his inbox alone, and with his sent mail.
    notes = []
    assert verify_mailbox(tag, mailbox_of(tmp_path, "bob@club.test", "bob-inbox"), notes) == []
    assert notes == ["your entropy <b.accept@club.test> is seat 2's in the opening's mix "
                     "(the Message-ID of your mail)"]
    notes = []
    bob = mailbox_of(tmp_path, "bob@club.test", "bob", extra=(bobs_accept,))
    assert verify_mailbox(tag, bob, notes) == []
    assert notes == ["your entropy <b.accept@club.test> is seat 2's in the opening's mix "
                     "(the Message-ID of your mail, which is in the mailbox)"]
    # Without the start mail (a game started before it quoted the entropy
    # back, or a mail deleted), his sent mail shows it; without both, he
    # is told to compare the opening with his sent mail.
    notes = []
    bob = mailbox_of(tmp_path, "bob@club.test", "bob-sent", extra=(bobs_accept,),
                     without="Goofspiel starts")
    assert verify_mailbox(tag, bob, notes) == []
    assert notes == ['the Message-ID <b.accept@club.test> of your mail "Re: invite" is seat '
                     "2's entropy in the opening's mix"]
    notes = []
    assert verify_mailbox(tag, mailbox_of(tmp_path, "bob@club.test", "bob-none",
                                          without="Goofspiel starts"), notes) == []
    assert notes[0].startswith("no answer quoting your entropy back")


def test_an_altered_quote_of_the_players_entropy_is_refused(
        played: tuple[Club, str, bytes], tmp_path: Path) -> None:
    _, tag, _ = played
    altered = mailbox_of(tmp_path, "alice@club.test", "quote",
                         alter=("your-entropy: <a.open@club.test>",
                                "your-entropy: <other@club.test>"))
    problems = verify_mailbox(tag, altered)
    assert problems[0].startswith('the mail "[goofspiel-3] Goofspiel begins') and (
        "does not list your entropy <other@club.test>, which the mail "
        '"[goofspiel-t1] Your table for Goofspiel is open"') in problems[0], problems


def test_the_start_mails_quote_altered_is_refused_and_a_strangers_is_not_read(
        played: tuple[Club, str, bytes], tmp_path: Path) -> None:
    _, tag, _ = played
    altered = mailbox_of(tmp_path, "bob@club.test", "start-quote",
                         alter=("your-entropy: <b.accept@club.test>",
                                "your-entropy: <other@club.test>"))
    problems = verify_mailbox(tag, altered)
    assert problems[0].startswith('the mail "[goofspiel-3] Goofspiel begins') and (
        "does not list your entropy <other@club.test>, which the mail "
        '"[goofspiel-3] Goofspiel starts: Alice, Bob"') in problems[0], problems
    # A stranger's start mail (not from the referee) quoting other entropy
    # is not read: Bob's own is found, and the game verifies.
    box = mailbox_of(tmp_path, "bob@club.test", "start-forged")
    start = next(message_from_bytes(mailbox.Maildir(box).get_bytes(k), policy=default)
                 for k in mailbox.Maildir(box).iterkeys()
                 if "Goofspiel starts" in str(message_from_bytes(
                     mailbox.Maildir(box).get_bytes(k), policy=default)["Subject"]))
    assert isinstance(start, EmailMessage)
    forged = EmailMessage()
    forged["From"], forged["To"] = "Mallory <referee@evil.test>", BOB
    forged["Subject"], forged["Date"] = str(start["Subject"]), str(start["Date"])
    forged["Message-ID"] = "<forged@evil.test>"
    part = start.get_body(("plain",))
    assert isinstance(part, EmailMessage)
    forged.set_content(part.get_content().replace("<b.accept@club.test>", "<other@evil.test>"))
    mailbox.Maildir(box).add(forged.as_bytes())
    notes: list[str] = []
    assert verify_mailbox(tag, box, notes) == []
    assert notes == ["your entropy <b.accept@club.test> is seat 2's in the opening's mix "
                     "(the Message-ID of your mail)"]


def crafted(subject: str, body: bytes, *, sender: str = "Club Referee <referee@club.test>",
            message_id: str = "<x1@evil.test>",
            content_type: str = 'text/plain; charset="utf-8"') -> bytes:
    head = (f"From: {sender}\nTo: Bob <bob@club.test>\nSubject: {subject}\n"
            f"Date: Mon, 02 Mar 2026 12:00:00 +0000\nMessage-ID: {message_id}\n"
            f"MIME-Version: 1.0\nContent-Type: {content_type}\n\n")
    return head.encode() + body


def nested(subject: str, depth: int) -> bytes:
    body = "".join(f"--b{i}\nContent-Type: multipart/mixed; boundary=b{i + 1}\n\n"
                   for i in range(depth))
    body += f"--b{depth}\nContent-Type: text/plain\n\n  your-entropy: <x@evil.test>\n"
    body += "".join(f"--b{i}--\n" for i in reversed(range(depth + 1)))
    return crafted(subject, body.encode(), content_type="multipart/mixed; boundary=b0")


#: Crafted mails with the table's tag or the game's (the entropy check reads
#: every mail of the table, the start mail, and the player's sent mail),
#: each from the referee's own From, as a forger would write it.
TABLE, GAME = "[goofspiel-t1] Your entropy", "[goofspiel-3] Goofspiel starts: Alice, Bob"
CRAFTED: dict[str, bytes] = {
    "an unknown charset, the table's tag": crafted(
        TABLE, b"  your-entropy: <x@evil.test>\n", content_type="text/plain; charset=x-nope"),
    "an unknown charset, the start's": crafted(
        GAME, b"The table goofspiel-t1 is full, and its game of Goofspiel starts as\n"
              b"[goofspiel-3].\n\n  your-entropy: <x@evil.test>\n",
        content_type="text/plain; charset=x-nope"),
    "Message-ID: <>": crafted(TABLE, b"hello\n", message_id="<>"),
    "Message-ID: <a@[b>": crafted(TABLE, b"hello\n", message_id="<a@[b>"),
    "From: <a@[b>": crafted(TABLE, b"hello\n", sender="<a@[b>"),
    "a 5,000-digit number": crafted(
        TABLE, b"  seed-sha256: " + b"9" * 5000 + b"\n", message_id=f"<{'9' * 5000}@x>"),
    "MIME nested 1,500 deep, the table's tag": nested(TABLE, 1500),
    "MIME nested 1,500 deep, the start's": nested(GAME, 1500),
    "a 410 KB line": crafted(TABLE, b"  your-entropy: " + b" " * 410_000 + b"x\n"),
    "a 410 KB subject": crafted("[goofspiel-t1] " + "x " * 205_000, b"hello\n"),
    "a 410 KB Content-Type": crafted(
        TABLE, b"hello\n", content_type='text/plain; charset=utf-8; x="' + "a " * 205_000 + '"'),
    "80,000 Content-Type parameters": crafted(
        TABLE, b"hello\n", content_type="text/plain; " + "a=b; " * 80_000),
}


@pytest.mark.parametrize("what", ["a 410 KB subject", "a 410 KB Content-Type",
                                  "80,000 Content-Type parameters"])
def test_a_mail_with_a_header_longer_than_the_referees_is_not_parsed_for_entropy(
        what: str) -> None:
    # The stdlib's structured header parser takes time growing faster than
    # a header's length: such a mail is left out before it reads one.
    assert _parsed([CRAFTED[what]]) == []
    assert len(_parsed([crafted(TABLE, b"hello\n")])) == 1


@pytest.mark.parametrize("what", list(CRAFTED))
def test_a_crafted_mail_beside_an_honest_game_does_not_fail_it(
        what: str, played: tuple[Club, str, bytes], tmp_path: Path) -> None:
    _, tag, bobs_accept = played
    box = mailbox_of(tmp_path, "bob@club.test", "crafted")
    mailbox.Maildir(box).add(CRAFTED[what])
    notes: list[str] = []
    assert verify_mailbox(tag, box, notes) == []
    assert notes == ["your entropy <b.accept@club.test> is seat 2's in the opening's mix "
                     "(the Message-ID of your mail)"]
    # With no quote (the start mail gone), his sent mail is looked for
    # among every mail: the crafted one too.
    box = mailbox_of(tmp_path, "bob@club.test", "crafted-sent", extra=(bobs_accept,),
                     without="Goofspiel starts")
    mailbox.Maildir(box).add(CRAFTED[what])
    notes = []
    assert verify_mailbox(tag, box, notes) == []
    assert notes == ['the Message-ID <b.accept@club.test> of your mail "Re: invite" is seat '
                     "2's entropy in the opening's mix"]
