"""A game package is a guest: whatever a faulty one does (raise or
``sys.exit`` at import, raise in ``parse``, ``apply``, its views, its page or
its bot) stops its own games and no other. Over the real Postfix and Dovecot, beside
a live Goofspiel game that plays on.

The guest is a package built here, on the path of each ``referee`` run: a
``.dist-info`` declaring kind ``guest`` under ``pbm_referee.games`` and a
module ``pbm_guest`` (Goofspiel under another name) whose ``FAULT`` says
where it breaks. Both games are made while it works; then it breaks, and
each player bids in both. The Goofspiel bid is applied and answered and its
page written; the guest's mail waits in ``inbound`` (or its page, or its
deadline), ``poll`` and ``check`` name the package and what it raised. The
package mended, the next pass reads the mail that waited and answers it once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.service import now_utc
from tests.mailstack import MailStack
from tests.test_check import write
from tests.test_e2e import REF

ROOT = Path(__file__).resolve().parents[1]
#: The guest's module; ``{fault}`` is where it breaks ("" for nowhere).
MODULE = '''\
"""Goofspiel as a game package of its own, broken where FAULT says."""
import sys

from referee.games.goofspiel import Goofspiel

FAULT = {fault!r}
if FAULT == "import":
    raise RuntimeError("the guest cannot start")
if FAULT == "exit":
    sys.exit(3)


class Guest(Goofspiel):
    kind = "guest"
    title = "Guest Goofspiel"
    # Asked of every mail whether it joins: a parse that raises sees them all.
    takes_members_by_mail = True
    join_command = "deal me in"

    def parse(self, line):
        if FAULT == "parse":
            raise ValueError("the guest cannot read")
        return super().parse(line)

    def apply(self, state, seat, action, draws):
        if FAULT == "apply":
            raise ValueError("the guest cannot play")
        return super().apply(state, seat, action, draws)

    def view(self, state, seat):
        if FAULT == "view":
            raise ValueError("the guest cannot be seen")
        return super().view(state, seat)

    def page_table(self, view, events):
        if FAULT == "page":
            raise ValueError("the guest cannot show itself")
        return super().page_table(view, events)

    def timeout_action(self, state, seat, draws):
        if FAULT == "bot":
            sys.exit("the guest's bot gave up")
        return super().timeout_action(state, seat, draws)
'''
#: How each fault reads in the package's line, after the package's name.
SAID = {
    "import": "failed to load kind 'guest' (pbm_guest:Guest): "
              "RuntimeError: the guest cannot start",
    "exit": "failed to load kind 'guest' (pbm_guest:Guest): SystemExit: 3",
    "parse": "raised in parse (kind 'guest', pbm_guest:Guest): "
             "ValueError: the guest cannot read",
    "apply": "raised in apply (kind 'guest', pbm_guest:Guest): "
             "ValueError: the guest cannot play",
    "view": "raised in view (kind 'guest', pbm_guest:Guest): "
            "ValueError: the guest cannot be seen",
    "page": "raised in page_table (kind 'guest', pbm_guest:Guest): "
            "ValueError: the guest cannot show itself",
    "bot": "raised in timeout_action (kind 'guest', pbm_guest:Guest): "
           "SystemExit: the guest's bot gave up",
}
#: The faults met while a mail is read: that mail waits.
IN_MAIL = ("import", "exit", "parse", "apply")


@dataclass
class Club:
    """A referee's folder, with the guest package on its path."""

    work: Path
    site: Path
    stack: MailStack

    def guest(self, fault: str) -> None:
        """The guest package as installed now: broken where ``fault`` says."""
        (self.site / "pbm_guest.py").write_text(MODULE.format(fault=fault), encoding="utf-8")

    def referee(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``referee ARGS``, whatever its exit code."""
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        env["PYTHONPATH"] = os.pathsep.join([str(self.site), str(ROOT)])
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mended module is read anew
        return subprocess.run([sys.executable, "-m", "referee.cli", "-c", "referee.toml",
                               *args], cwd=self.work, env=env, capture_output=True,
                              text=True, timeout=120, check=False)


@pytest.fixture
def club(tmp_path: Path, mailstack: MailStack) -> Club:
    mailstack.clear_all()  # the stack is the session's: mail of earlier tests would be read
    work, site = tmp_path / "club", tmp_path / "site"
    work.mkdir()
    info = site / "pbm_guest-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pbm-guest\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[pbm_referee.games]\nguest = pbm_guest:Guest\n",
                                           encoding="utf-8")
    config = write(work / "referee.toml", mailstack)
    config.write_text(config.read_text(encoding="utf-8") + '[web]\npath = "web"\n',
                      encoding="utf-8")
    club = Club(work, site, mailstack)
    club.guest("")
    return club


def _mail(stack: MailStack, sender: str, subject: str, text: str, mid: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = stack.address(sender), REF, subject
    msg["Message-ID"] = mid
    msg.set_content(text)
    stack.send(msg, stack.address(sender), REF)


def _text(msg: EmailMessage) -> str:
    body = msg.get_body(("plain",))
    assert body is not None
    return str(body.get_content())


def _answers(stack: MailStack, user: str, mid: str) -> list[str]:
    return [_text(m) for m in stack.fetch_all(user) if m["In-Reply-To"] == mid]


@pytest.mark.parametrize("fault", list(SAID))
def test_a_faulty_game_package_stops_only_its_own_game(club: Club, fault: str) -> None:
    stack, web = club.stack, club.work / "web"
    alice, bob, carol = (stack.address(u) for u in ("alice", "bob", "carol"))
    start = now_utc()

    def at(hours: float) -> str:
        return (start + timedelta(hours=hours)).isoformat()

    assert club.referee("init").returncode == 0
    made = [club.referee("game", "new", "--at-once", kind, "--player", alice, "--player", other,
                         "--now", at(0)) for kind, other in (("guest", bob), ("goofspiel", carol))]
    assert [r.stdout for r in made] == ["guest-1\n", "goofspiel-2\n"]
    # Only --at-once's warning: the operator's seed alone.
    assert [r.stderr.startswith(f"referee: warning: {tag} started at once")
            and r.stderr.count("\n") == 1
            for r, tag in zip(made, ("guest-1", "goofspiel-2"), strict=True)] == [True, True]
    stack.wait_for("alice", 2)
    first = club.referee("poll", "--now", at(0))  # both pages written while all is well
    assert (first.returncode, first.stderr) == (0, "")
    before = (web / "guest-1.html").read_text(encoding="utf-8")

    club.guest(fault)
    # Goofspiel's first: every mail is asked whether it joins the guest.
    _mail(stack, "alice", "Re: [goofspiel-2] your bid", "bid 6\n", "<goof@x.test>")
    _mail(stack, "alice", "Re: [guest-1] your bid", "bid 5\n", "<guest@x.test>")
    stack.wait_for("referee", 2)
    # A bot's fault shows at a deadline: past both games' (three days).
    broken = club.referee("-v", "--log-level", "error", "poll",
                          "--now", at(24 * 4 if fault == "bot" else 1))
    line = f"the game package pbm-guest {SAID[fault]}"
    waits = ", with 1 mail(s)" if fault in IN_MAIL else ""
    assert broken.returncode == 78, broken.stderr
    assert broken.stderr.endswith(
        f"referee: 1 active game(s) of kind guest wait{waits}: its game package cannot "
        f"serve it (kind guest): {line}\n"), broken.stderr
    assert "Traceback" not in broken.stderr

    # Goofspiel plays on: the bid applied and answered, its page and the index written.
    (answer,) = _answers(stack, "alice", "<goof@x.test>")
    assert "DONE (bid 6)" in answer
    assert "Alice" in (web / "goofspiel-2.html").read_text(encoding="utf-8")
    index = (web / "index.html").read_text(encoding="utf-8")
    assert "goofspiel-2.html" in index
    if fault == "bot":
        assert "timeouts 1," in broken.stdout, broken.stdout  # Goofspiel's, not the guest's
    assert (web / "guest-1.html").read_text(encoding="utf-8") == before  # left as it was

    guest_answers = _answers(stack, "alice", "<guest@x.test>")
    if fault in IN_MAIL:
        assert guest_answers == []  # it waits, unanswered
        inbound = club.referee("inbound")
        assert f"waiting: guest-1: its game package cannot serve it (kind guest): {line}" \
            in inbound.stdout, inbound.stdout
    else:
        (answer,) = guest_answers  # the mail was read before the page or the deadline
        assert "DONE (bid 5)" in answer
    check = club.referee("check")  # a process of its own: it names the package too
    assert check.returncode == 78, check.stdout
    assert (f"games    FAIL 1 active game(s) of kind guest wait{waits}: its game "
            f"package cannot serve it (kind guest): {line}\n") in check.stdout, check.stdout

    # Mended: the mail that waited is read and answered once, the page written.
    club.guest("")
    mended = club.referee("-v", "poll", "--now", at(24 * 4 + 1))
    assert (mended.returncode, re.findall("^referee:.*", mended.stderr, re.M)) == (0, [])
    if fault in IN_MAIL:
        assert "read again 1," in mended.stdout, mended.stdout
    if fault == "bot":
        assert "timeouts 1," in mended.stdout, mended.stdout  # the guest's deadline now
    (answer,) = _answers(stack, "alice", "<guest@x.test>")
    assert "DONE (bid 5)" in answer
    assert (web / "guest-1.html").read_text(encoding="utf-8") != before
    again = club.referee("poll", "--now", at(24 * 4 + 2))
    assert (again.returncode, again.stderr) == (0, "")
    assert len(_answers(stack, "alice", "<guest@x.test>")) == 1
    check = club.referee("check")
    assert "games    FAIL" not in check.stdout, check.stdout
