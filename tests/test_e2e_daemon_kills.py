"""Issue 34: ``referee run`` (the daemon) killed with SIGKILL at random
points while it referees and answers mail over the real Postfix and
Dovecot, its intake committing in batches (a savepoint a mail): no move is
lost or applied twice, every mail gets one answer, and a kill resends at
most the mails in flight, each under the Message-ID it went out with.

The kill comes after a random number of mails recorded, of mails marked
sent, or a random time after the daemon starts: inside a batch, between a
batch's commit and the mailbox's flags, between a relay's 250 and the row
marked sent, and anywhere between. (The daemon sends by its outbox job,
after each pass that read mail; it never streams as a poll may.)"""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from referee.service import now_utc
from referee.store import models as m
from tests.databases import KINDS, postgres_url
from tests.mailstack import GIVE_UP, PLAYERS, REPO_ROOT, MailStack
from tests.test_e2e import (
    CRASH_GAMES,
    CRASH_ROUNDS,
    Post,
    RelayLog,
    Resends,
    kinds,
    person,
    referee_command,
)


@pytest.fixture(params=KINDS)
def post(mailstack: MailStack, tmp_path: Path, request: pytest.FixtureRequest
         ) -> Iterator[Post]:
    with contextlib.ExitStack() as stack:
        url = (stack.enter_context(contextlib.contextmanager(postgres_url)())
               if request.param == "postgresql" else None)
        p = Post(mailstack, tmp_path, **({"database": url} if url else {}))
        stack.callback(p.close)
        yield p


def progress(post: Post) -> tuple[int, int]:
    """(inbound rows, outbox rows sent), read beside the running daemon."""
    with post.referee.sessions() as db:
        inbound = db.scalar(select(func.count()).select_from(m.Inbound))
        sent = db.scalar(select(func.count()).select_from(m.Outbox)
                         .where(m.Outbox.sent_at.is_not(None)))
        return int(inbound or 0), int(sent or 0)


#: What the daemon says once it runs.
RUNNING = "referee running for"
#: Kills a round (the last start of a round is left to finish it).
KILLS = 6


def settled(post: Post, mails: int) -> bool:
    """Whether every one of ``mails`` is recorded and refereed, and every
    mail queued has gone to the relay."""
    with post.referee.sessions() as db:
        done = db.scalar(select(func.count()).select_from(m.Inbound)
                         .where(m.Inbound.status == "processed"))
        unsent = db.scalar(select(func.count()).select_from(m.Outbox)
                           .where(m.Outbox.sent_at.is_(None), m.Outbox.failed_at.is_(None)))
    return done == mails and unsent == 0


def start(post: Post, log: Path) -> subprocess.Popen[bytes]:
    with log.open("a") as out:
        return subprocess.Popen(referee_command(post, "run"), cwd=REPO_ROOT, stdout=out,
                                stderr=subprocess.STDOUT)


def kill_at_random(post: Post, log: Path, rng: random.Random, startup: float) -> bool:
    """Start the daemon and SIGKILL it at a random point; whether it had
    changed anything by then."""
    before = progress(post)
    proc = start(post, log)
    trigger = rng.choice(("intake", "outbox", "clock"))
    target = (before[0] + rng.randint(1, 10), before[1] + rng.randint(1, 12))
    # The daemon connects and looks at its mailbox before its first pass:
    # the clock strikes within a few seconds of its start.
    kill_at = time.monotonic() + startup + rng.uniform(0.05, 4.0) * (
        1 if trigger == "clock" else 3)
    give_up = time.monotonic() + GIVE_UP
    try:
        while proc.poll() is None:
            now = progress(post)
            # A batch shows its mails at its commit only, and a round may
            # be done before a target is seen: the clock strikes then.
            if ((trigger == "intake" and now[0] >= target[0])
                    or (trigger == "outbox" and now[1] >= target[1])
                    or time.monotonic() >= kill_at):
                break
            assert time.monotonic() < give_up, "the daemon neither ended nor was killed"
            time.sleep(0.005)
        assert proc.poll() is None, f"the daemon stopped by itself:\n{log.read_text()}"
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
    assert code == -signal.SIGKILL, log.read_text()
    return progress(post) != before


def run_until_settled(post: Post, log: Path, mails: int) -> None:
    """Start the daemon, let it referee and send all, stop it with SIGTERM
    (once it says it runs: its handler is set by then)."""
    running = log.read_text().count(RUNNING) if log.exists() else 0
    proc = start(post, log)
    try:
        give_up = time.monotonic() + GIVE_UP
        while not settled(post, mails) or log.read_text().count(RUNNING) == running:
            assert proc.poll() is None, f"the daemon stopped:\n{log.read_text()}"
            assert time.monotonic() < give_up, "the daemon did not settle"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=GIVE_UP) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_daemon_killed_at_random_loses_no_move_applies_none_twice_and_resends_none(
        post: Post, tmp_path: Path) -> None:
    now = now_utc()
    tags = [post.referee.operator.create_game(
        "goofspiel", [person(a), person(b)], options={"prize_order": "ascending"}, now=now,
        seed=f"daemon-crash-{i}")
        for i, (a, b) in enumerate(CRASH_GAMES)]
    post.poll(now)  # the openings
    started = time.monotonic()
    subprocess.run(referee_command(post, "status", "--json"), cwd=REPO_ROOT,
                   capture_output=True, check=True)
    startup = time.monotonic() - started
    log, rng, figures = tmp_path / "run.log", random.Random(20261129), Resends()
    relay = RelayLog(post.stack)
    sent: dict[str, str] = {}  # Message-ID -> sender
    mid_pass = 0
    try:
        for r in range(1, CRASH_ROUNDS + 1):
            for tag, (a, b) in zip(tags, CRASH_GAMES, strict=True):
                sent[post.write(a, f"bid {r}", subject=f"[{tag}] round {r}")] = a
                sent[post.write(b, f"I bid {7 - r}", subject=f"Re: [{tag}]")] = b
            for user in PLAYERS:
                tag = tags[next(i for i, g in enumerate(CRASH_GAMES) if user in g)]
                sent[post.write(user, "help", subject=f"[{tag}] what now?")] = user
            post.stack.wait_for("referee", post.in_referee_inbox)
            for _ in range(KILLS):
                figures.kills += 1
                mid_pass += kill_at_random(post, log, rng, startup)
            run_until_settled(post, log, len(sent))
        relay.read()
    finally:
        relay.close()
    assert mid_pass >= 3, (figures, mid_pass)

    # No move lost or applied twice: one bid per seat per round, as sent.
    for tag in tags:
        actions = post.actions(tag)
        assert len(actions) == 2 * CRASH_ROUNDS, (tag, actions)
        for r in range(1, CRASH_ROUNDS + 1):
            assert sorted(actions[2 * r - 2:2 * r]) == [
                (1, "bid", [r], "player"), (2, "bid", [7 - r], "player")]
        assert post.referee.reading.replay(tag) == post.state(tag)
    with post.referee.sessions() as db:
        rows = list(db.scalars(select(m.Inbound)))
        assert sorted(str(x.message_id) for x in rows) == sorted(
            mid.strip("<>") for mid in sent)
        assert {x.status for x in rows} == {"processed"}

    # Every mail got one answer; the mails each player got, by Message-ID.
    ended = dict.fromkeys(PLAYERS, 0)
    for tag, pair in zip(tags, CRASH_GAMES, strict=True):
        actions = post.actions(tag)
        for r in range(CRASH_ROUNDS):
            ended[pair[actions[2 * r + 1][0] - 1]] += 1
    copies: Counter[tuple[str, str]] = Counter()
    for user in PLAYERS:
        games = sum(user in g for g in CRASH_GAMES)
        mine = [mid for mid, sender in sent.items() if sender == user]
        expected = games + len(mine) + games * CRASH_ROUNDS - ended[user]
        give_up, msgs = time.monotonic() + GIVE_UP, post.stack.fetch_all(user)
        while len({str(x["Message-ID"]) for x in msgs}) < expected:
            if time.monotonic() > give_up:
                break
            time.sleep(0.2)
            msgs = post.stack.fetch_all(user)
        figures.lost += max(0, expected - len({str(x["Message-ID"]) for x in msgs}))
        assert len({str(x["Message-ID"]) for x in msgs}) == expected, user
        for mid in mine:
            replies = {(tuple(kinds(x)), str(x["Message-ID"]))
                       for x in msgs if x["In-Reply-To"] == mid}
            assert len(replies) == 1 and next(iter(replies))[0][0] == "transcript", (
                user, replies)
        copies.update((user, str(x["Message-ID"])) for x in msgs)
    ours = {mid for _, mid in copies}
    took = Counter(i for i in relay.ids if i in ours)
    figures.resent = sum(n - 1 for n in took.values())
    figures.doubled = sum(n - 1 for n in copies.values())
    kind = post.config.database_url.split(":")[0]
    print(f"crash figures (daemon, {kind}): {figures}, {mid_pass} of them mid-pass")
    # A kill resends at most what was in flight: one mail a connection,
    # each time under the same Message-ID (no mail the relay took twice
    # under two ids: the count of distinct ids is exact above).
    assert figures.doubled <= figures.kills * post.config.smtp.connections, figures
    assert figures.doubled == figures.resent, figures
    assert figures.lost == 0, figures
