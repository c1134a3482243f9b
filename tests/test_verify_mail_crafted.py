"""``referee verify TAG --mail``: a mailbox is input from anyone
(referee/verify_mail.py). Crafted mails, alone in a mailbox: none crashes
the check, stalls it or makes it grow with what a stranger wrote, and a
mail that is not the referee's is ignored and counted. A bad path or an
unreadable mailbox is one line with its exit code.

The bounds are asserted by sizes (the lines a pattern sees, the numbers
read), never by durations: a check that stalled would hold the suite.
"""

from __future__ import annotations

import mailbox
from pathlib import Path

import pytest

from referee.cli import main as cli_main
from referee.problems import EX_DATAERR
from referee.verify_mail import (
    EX_NOINPUT,
    MAX_LINE,
    MailboxError,
    check_mailbox,
    main,
    received,
)

TAG = "goofspiel-1"
REFEREE = "Club Referee <referee@club.test>"
#: A Message-ID in the referee's shape (``pbm.N.TAG.MAC@DOMAIN``).
OUR_ID = "<pbm.{n}.goofspiel-1.0123456789@club.test>"


def mail(body: str | bytes, *, subject: str = f"[{TAG}] Round 2", sender: str = REFEREE,
         message_id: str = OUR_ID.format(n=1), headers: str = "",
         content_type: str = 'text/plain; charset="utf-8"') -> bytes:
    head = (f"From: {sender}\nTo: Alice <alice@club.test>\nSubject: {subject}\n"
            f"Date: Mon, 02 Mar 2026 12:00:00 +0000\nMessage-ID: {message_id}\n"
            f"MIME-Version: 1.0\nContent-Type: {content_type}\n{headers}\n")
    return head.encode() + (body if isinstance(body, bytes) else body.encode())


def mbox(tmp_path: Path, *mails: bytes) -> Path:
    path = tmp_path / f"alice{len(list(tmp_path.glob('*.mbox')))}.mbox"
    box = mailbox.mbox(path, create=True)
    for raw in mails:
        box.add(raw)
    box.close()
    return path


# -- a stranger's mail with the tag: ignored and counted, never a crash ---------------


def nested(depth: int) -> bytes:
    body = "".join(f"--b{i}\nContent-Type: multipart/mixed; boundary=b{i + 1}\n\n"
                   for i in range(depth))
    body += f"--b{depth}\nContent-Type: text/plain\n\nROUND 1 OF 6: THE PRIZE IS 3\n"
    body += "".join(f"--b{i}--\n" for i in reversed(range(depth + 1)))
    return mail(body, content_type="multipart/mixed; boundary=b0")


STRANGERS: dict[str, bytes] = {
    "an unknown charset": mail(b"ROUND 1 OF 6: THE PRIZE IS 3\n",
                               sender="Mallory <mallory@evil.test>",
                               content_type="text/plain; charset=x-no-such-charset"),
    "an empty Message-ID": mail("seed: x\n", message_id="<>"),
    "a Message-ID of <a@[b>": mail("seed: x\n", message_id="<a@[b>"),
    "a From of <a@[b>": mail("seed: x\n", sender="<a@[b>"),
    "a 5,000-digit number in its Message-ID": mail(
        "seed: x\n", message_id=f"<pbm.{'9' * 5000}.goofspiel-1.0123456789@club.test>"),
    "MIME nested 1,500 deep": nested(1500),
    "another domain than its From": mail("seed: x\n", sender="Mallory <referee@evil.test>"),
    "the referee's Message-ID of another game": mail(
        "seed: x\n", message_id="<pbm.1.goofspiel-2.0123456789@club.test>"),
}


@pytest.mark.parametrize("what", list(STRANGERS))
def test_a_strangers_mail_with_the_tag_is_ignored_and_counted(
        what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = mbox(tmp_path, STRANGERS[what])
    verdict = check_mailbox(TAG, path)
    assert verdict.ignored == 1
    assert verdict.problems == [f"no mail of {TAG} is in the mailbox {path}"]
    assert main([TAG, "--mail", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1 mail with the tag not from the referee (by From and Message-ID) was ignored" in out


def test_the_referees_mail_in_an_unknown_charset_is_read_as_utf_8() -> None:
    got = received(TAG, mail("ROUND 1 OF 6: THE PRIZE IS 3♠\n".encode(),
                             content_type="text/plain; charset=x-no-such-charset"))
    assert got is not None and got.referee == "referee@club.test"
    assert got.mail.text == "ROUND 1 OF 6: THE PRIZE IS 3♠\n"


def test_a_mail_without_the_tag_is_not_counted(tmp_path: Path) -> None:
    path = mbox(tmp_path, mail("hello", subject="[spades-3] Hi"), mail("hi", subject="Lunch?"))
    assert check_mailbox(TAG, path).ignored == 0


# -- the referee's shape, forged: read within bounds --------------------------------


def seeded(body: str) -> list[bytes]:
    """An opening committing to the seed ``x`` with ``body``, and a last
    mail telling it: a forged game whose seed opens."""
    from referee.games.draws import seed_fingerprint

    return [mail(f"  seed-sha256: {seed_fingerprint('x')}\n\n{body}",
                 subject=f"[{TAG}] Goofspiel begins"),
            mail("  seed: x\n", message_id=OUR_ID.format(n=2), subject=f"[{TAG}] Over")]


@pytest.mark.parametrize("body", [
    f"ROUND 1 OF {'9' * 5000}: THE PRIZE IS 3\n",
    f"ROUND 1 OF 6: THE PRIZE IS {'9' * 5000}\n",
    f"ROUND 1 OF 6: THE PRIZE IS 3\nROUND {'9' * 5000}: THE PRIZE WAS 3\n",
    f"ROUND 1 OF 6: THE PRIZE IS 3\nROUND 1: THE PRIZE WAS 3\n  Alice bid {'9' * 5000}\n",
])
def test_a_5000_digit_number_in_a_claim_is_refused_not_raised(body: str, tmp_path: Path) -> None:
    problems = check_mailbox(TAG, mbox(tmp_path, *seeded(
        body + "every round the referee draws a prize at random\n  Seat 1: Alice\n"))).problems
    assert problems
    assert not any("cannot be read: ValueError" in p for p in problems)


def test_round_1_of_20000000_is_refused_as_unreadable(tmp_path: Path) -> None:
    problems = check_mailbox(TAG, mbox(tmp_path, *seeded(
        "ROUND 1 OF 20000000: THE PRIZE IS 3\n"
        "every round the referee draws a prize at random\n"))).problems
    assert problems == [f'the mail "[{TAG}] Goofspiel begins", Mon 02 Mar 2026 12:00: a game '
                        "of 20000000 rounds cannot be read: a pack holds 2 to 13 cards"]


@pytest.mark.parametrize("line", [
    "  " + " " * 410_000 + "x",  # the bid line's name and its padding
    "  Seat 1: " + "a" * 410_000,
    "ROUND 1: THE PRIZE WAS " + ", WITH " * 60_000,
    "Round 1 prize " + "round prize 1 " * 30_000,
])
def test_a_410_kb_line_is_cut_before_any_pattern_sees_it(line: str, tmp_path: Path) -> None:
    got = received(TAG, mail(f"ROUND 1: THE PRIZE WAS 3\n{line}\n"))
    assert got is not None and got.referee == "referee@club.test"
    assert max(len(x) for x in got.mail.text.split("\n")) <= MAX_LINE
    check_mailbox(TAG, mbox(tmp_path, mail(f"ROUND 1: THE PRIZE WAS 3\n{line}\n")))


@pytest.mark.parametrize("header", ["Subject", "Content-Type"])
def test_a_410_kb_header_is_read_within_bounds(header: str, tmp_path: Path) -> None:
    # The game's mails are parsed as compat32 reads them (linear in a
    # header's length); the subject a pattern sees is cut like a line.
    raw = (mail("ROUND 1: THE PRIZE WAS 3\n", subject=f"[{TAG}] " + "x " * 205_000)
           if header == "Subject" else
           mail("ROUND 1: THE PRIZE WAS 3\n",
                content_type='text/plain; charset=utf-8; x="' + "a " * 205_000 + '"'))
    got = received(TAG, raw)
    assert got is not None and got.referee == "referee@club.test"
    assert len(got.mail.subject) <= MAX_LINE
    assert check_mailbox(TAG, mbox(tmp_path, raw)).problems


def test_a_mail_larger_than_any_the_referee_sends_is_not_read() -> None:
    got = received(TAG, mail("x" * (3 * 1024 * 1024)))
    assert got is not None and got.referee is None


# -- a bad path or an unreadable mailbox: one line with its code ---------------------


def test_a_path_that_is_not_there_is_one_line_with_its_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(MailboxError) as e:
        check_mailbox(TAG, missing)
    assert e.value.exit_code == EX_NOINPUT
    assert cli_main(["verify", TAG, "--mail", str(missing)]) == EX_NOINPUT
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"referee: {missing}: no such mbox file or Maildir folder\n"


def test_a_folder_that_is_no_maildir_is_one_line_with_its_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["verify", TAG, "--mail", str(tmp_path)]) == EX_DATAERR
    assert capsys.readouterr().err == (
        f"referee: {tmp_path}: a folder, but not a Maildir (it has no cur or new)\n")
    assert main([TAG, "--mail", str(tmp_path)]) == EX_DATAERR


def test_a_damaged_maildir_is_one_line_with_its_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cur").mkdir()  # no new, no tmp: the mailbox module cannot list it
    code = cli_main(["verify", TAG, "--mail", str(tmp_path)])
    err = capsys.readouterr().err
    assert code in (EX_NOINPUT, EX_DATAERR), err
    assert err.startswith(f"referee: {tmp_path}: ") and err.count("\n") == 1
