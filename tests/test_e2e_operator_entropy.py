"""An operator's game takes the players' entropy too (issue 38), over the
real Postfix and Dovecot: ``referee game new`` by the command line opens a
table with every seat filled and its seed committed to; Alice replies to
her "you are seated" mail (its Message-ID is her entropy), Bob writes
``entropy WORDS``, Carol stays silent until the start deadline, when the
game starts anyway and its opening lists her as having given none; after
the game ``referee verify TAG --mail`` on Alice's mailbox finds her
contribution and says verified."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.mailstack import REPO_ROOT, MailStack
from tests.test_e2e import T0, Post, body, person, referee_command
from tests.test_e2e_entropy import arrived, verify


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def test_an_operators_game_waits_for_the_players_entropy_and_verifies(post: Post) -> None:
    made = subprocess.run(referee_command(
        post, "game", "new", "goofspiel", "--player", person("alice"), "--player",
        person("bob"), "--player", person("carol"), "--option", "players=3",
        "--option", "cards=3", "--now", T0.isoformat()),
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    said = re.search(r"^(goofspiel-t\d+): 3 player\(s\) seated and mailed; the game starts "
                     r"when each has added entropy, at the latest (\S+ \S+) UTC$",
                     made.stdout, re.M)
    assert said is not None, made.stdout
    table, start_by = said.group(1), datetime.fromisoformat(said.group(2))
    assert start_by > T0
    fingerprint = re.search(r"seed-sha256 ([0-9a-f]{64})", made.stdout)
    assert fingerprint is not None
    seated = {user: arrived(post, user, f"[{table}] You are seated")
              for user in ("alice", "bob", "carol")}
    for msg in seated.values():  # committed to before anyone's entropy
        assert f"  seed-sha256: {fingerprint.group(1)}\n" in body(msg)
        assert "reply to this mail" in body(msg)

    alices_id = post.write("alice", "Count me in!\n",
                           subject=f"Re: {seated['alice']['Subject']}",
                           reply_to=seated["alice"])
    post.write("bob", "entropy  Rain on   the roof\n",
               subject=f"Re: {seated['bob']['Subject']}", reply_to=seated["bob"])
    post.poll(T0 + timedelta(minutes=5))
    hers = arrived(post, "alice", f"[{table}] Your entropy")
    assert f"  your-entropy: {alices_id}\n" in body(hers)
    assert str(hers["In-Reply-To"]) == alices_id
    assert "  your-entropy: Rain on the roof\n" in body(arrived(post, "bob",
                                                                f"[{table}] Your entropy"))
    # A second mail of Alice's about the table changes nothing.
    post.write("alice", "When do we start?\n", subject=f"Re: {seated['alice']['Subject']}")
    post.poll(T0 + timedelta(minutes=10))
    assert not [x for x in post.stack.fetch_all("alice") if "begins" in str(x["Subject"])]

    # Carol gives nothing: the sweep starts the game at the start deadline.
    started = start_by + timedelta(minutes=1)
    post.poll(started)
    opening = arrived(post, "alice", "Goofspiel begins")
    tag = str(opening["Subject"]).split("]")[0].lstrip("[")
    text = body(opening)
    assert f"  seed-sha256: {fingerprint.group(1)}\n" in text
    assert re.search(rf"entropy \d: {re.escape(alices_id)}\n", text)
    assert re.search(r"entropy \d: Rain on the roof\n", text)
    assert re.search(r"  Carol, seat \d, gave no entropy by \S+ \S+ UTC\.\n", text), text
    # The game plays to its end; the last round plays itself.
    for n in (1, 2):
        for user in ("alice", "bob", "carol"):
            post.write(user, f"bid {n}", subject=f"[{tag}] bid")
        post.poll(started + timedelta(hours=n))
    arrived(post, "alice", "GAME OVER")
    code, out = verify(post, "alice", tag)
    assert code == 0, out
    assert re.search(rf"your entropy {re.escape(alices_id)} is seat \d's in the opening's "
                     "mix", out), out
    assert out.endswith("verified\n"), out


def test_game_new_at_once_warns_and_its_opening_says_the_operator_chose_the_seed(
        post: Post) -> None:
    made = subprocess.run(referee_command(
        post, "game", "new", "--at-once", "goofspiel", "--player", person("alice"),
        "--player", person("bob"), "--option", "cards=3", "--now", T0.isoformat()),
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert (made.returncode, made.stdout) == (0, "goofspiel-1\n"), made.stderr
    assert made.stderr.startswith("referee: warning: goofspiel-1 started at once: its draws "
                                  "come from the operator's seed alone"), made.stderr
    opening = body(arrived(post, "alice", "Goofspiel begins"))
    assert " ".join(opening.split()).count(
        "The referee's operator chose this seed and started the game at once: no player's "
        "entropy is mixed in") == 1, opening
    assert "your-entropy" not in opening and "entropy 1:" not in opening
