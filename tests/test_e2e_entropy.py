"""The players' own entropy over the real Postfix and Dovecot (issue 38):
a Goofspiel table opened, accepted and started by mail; the table commits
to its seed when it opens, each answer quotes back the player's entropy
(Alice's: her mail's Message-ID; Bob's: his own words), the opening lists
both, the game plays to its end, and ``referee verify TAG --mail`` on
Alice's mailbox finds her entropy in the mix and checks every draw from
the mixed seed; the same mailbox with a contribution altered, or with a
seed chosen after the contributions, is refused naming the mail."""

from __future__ import annotations

import hashlib
import mailbox
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.games.draws import seed_fingerprint
from tests.mailstack import REPO_ROOT, MailStack
from tests.test_e2e import T0, Post, body
from tests.test_e2e_club import club_of


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = club_of(Post(mailstack, tmp_path), "alice", "bob")
    yield p
    p.close()


def arrived(post: Post, user: str, subject: str, timeout: float = 60) -> EmailMessage:
    """The last mail whose subject holds ``subject`` in ``user``'s INBOX, once come."""
    deadline = time.monotonic() + timeout
    while True:
        found = [x for x in post.stack.fetch_all(user) if subject in str(x["Subject"])]
        if found:
            return found[-1]
        assert time.monotonic() < deadline, f"{user} got no {subject!r}"
        time.sleep(0.2)


#: Rewrites a mail's subject and plain text (a tampering).
Alter = Callable[[str, str], tuple[str, str]]


def verify(post: Post, user: str, tag: str, alter: Alter | None = None) -> tuple[int, str]:
    """``referee verify TAG --mail`` on ``user``'s INBOX saved as an mbox,
    ``alter`` rewriting each mail's subject and plain text first."""
    path = post.config_path.parent / f"{user}-{'altered' if alter else 'as-got'}.mbox"
    path.unlink(missing_ok=True)
    box = mailbox.mbox(path)
    for msg in post.stack.fetch_all(user):
        if alter is not None:
            part = msg.get_body(("plain",))
            assert isinstance(part, EmailMessage)
            text = part.get_content()
            subject, changed = alter(str(msg["Subject"]), text)
            if changed != text:
                part.set_content(changed)
            if subject != str(msg["Subject"]):
                msg.replace_header("Subject", subject)
        box.add(msg.as_bytes())
    box.close()
    done = subprocess.run([sys.executable, "-m", "referee.cli", "verify", tag, "--mail",
                           str(path)], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120)
    return done.returncode, done.stdout + done.stderr


def seed_changed_to(kind: str, fingerprint: str, seed: str | None, new_seed: str) -> Alter:
    """An alteration for :func:`verify`: the game's mails (not its table's)
    as if ``new_seed`` were chosen after the contributions, its fingerprint
    and, where the last mail reveals ``seed``, the seed itself."""
    def alter(subject: str, text: str) -> tuple[str, str]:
        if not re.search(rf"\[{kind}-\d+\]", subject):
            return subject, text  # the table's mails, as they came
        text = text.replace(fingerprint, seed_fingerprint(new_seed))
        return subject, text if seed is None else text.replace(f"seed: {seed}",
                                                               f"seed: {new_seed}")
    return alter


def test_a_goofspiel_table_by_mail_mixes_each_players_entropy_and_verifies(
        post: Post) -> None:
    alices_id = post.write("alice", "new goofspiel with Bob cards=3\n", subject="a game?")
    post.poll(T0)
    opened = arrived(post, "alice", "Your table for Goofspiel is open")
    invited = arrived(post, "bob", "invites you to play Goofspiel")
    # The table commits to its seed when it opens, before any entropy.
    committed = re.search(r"^  seed-sha256: ([0-9a-f]{64})$", body(opened), re.M)
    assert committed is not None
    fingerprint = committed.group(1)
    assert f"  seed-sha256: {fingerprint}\n" in body(invited)
    assert ("Your entropy for the draws, the Message-ID of this mail of yours:\n\n"
            f"  your-entropy: {alices_id}\n") in body(opened)
    address = invited["Reply-To"].addresses[0].addr_spec
    post.write("bob", "accept\nentropy  Rain on   the roof\n",
               subject=f"Re: {invited['Subject']}", to=[address], reply_to=invited)
    post.poll(T0 + timedelta(minutes=5))
    opening = arrived(post, "alice", "Goofspiel begins")
    tag = str(opening["Subject"]).split("]")[0].lstrip("[")
    text = body(opening)
    assert f"  seed-sha256: {fingerprint}\n" in text
    assert ("  Alice, seat 1, the Message-ID of the mail that took the seat:\n"
            f"  entropy 1: {alices_id}\n"
            "  Bob, seat 2, words of their own:\n"
            "  entropy 2: Rain on the roof\n") in text
    # Two rounds of bids; the third plays itself from the last cards.
    for n in (1, 2):
        post.write("alice", f"bid {n}", subject=f"[{tag}] bid")
        post.write("bob", f"bid {4 - n if n == 1 else 1}", subject=f"[{tag}] bid")
        post.poll(T0 + timedelta(hours=n))
    final = arrived(post, "alice", "GAME OVER")
    seed = re.search(r"^  seed: (\S+)$", body(final), re.M)
    assert seed is not None and seed_fingerprint(seed.group(1)) == fingerprint
    mixed = hashlib.sha256(f"seed: {seed.group(1)}\nentropy 1: {alices_id}\n"
                           "entropy 2: Rain on the roof\n".encode()).hexdigest()
    assert f"  draws' seed: {mixed}\n" in body(final)
    # The operator's audit: the mix, and the table's fingerprint is the game's.
    audit = post.referee.reading.examine(tag)
    assert audit.problems == []
    assert any("goofspiel-t1 published the same fingerprint" in h for h in audit.held)
    # Alice checks from her own mailbox: her entropy is in the mix, every draw holds.
    assert verify(post, "alice", tag) == (
        0, f"your entropy {alices_id} is seat 1's in the opening's mix (the Message-ID of "
           "your mail)\nverified\n")

    # Her contribution altered in the opening: refused, naming the opening.
    def hers_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"entropy 1: {alices_id}",
                                     "entropy 1: <forged@mua.example.test>")

    code, said = verify(post, "alice", tag, hers_altered)
    assert code == 1
    assert said.startswith(f'the mail "{opening["Subject"]}"') and (
        f"does not list your entropy {alices_id}" in said), said

    # Bob's contribution altered: another mix, so the draws do not hold.
    def bobs_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace("entropy 2: Rain on the roof", "entropy 2: Rain on the road")

    code, said = verify(post, "alice", tag, bobs_altered)
    assert code == 1 and said.startswith('the mail "') and "[goofspiel" in said, said

    # A seed chosen after the contributions: the opening and the last mail
    # agree with each other, but not with what the table committed to.
    other = "0" * 32

    code, said = verify(post, "alice", tag,
                        seed_changed_to("goofspiel", fingerprint, seed.group(1), other))
    assert code == 1
    assert said.startswith('the mail "[goofspiel-t1]') and (
        f"but the game's opening gives {seed_fingerprint(other)}" in said), said
