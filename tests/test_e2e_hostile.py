"""The hostile-mail corpus through the real Postfix and Dovecot, between
legitimate moves, on SQLite and PostgreSQL: every legitimate move is applied
and answered once, and every ``referee poll`` exits 0."""

from __future__ import annotations

import smtplib
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.databases import KINDS, database_url
from tests.hostile import NO_SENDER, corpus, expected
from tests.mailstack import MailStack
from tests.test_e2e import ALICE, BOB, REF, REPO_ROOT, T0, Post, body, referee_command

#: Budgets no corpus test reaches: what a mail comes to is its own doing.
ROOMY = "[limits]\nreplies_per_hour = 1000\nreplies_per_day = 1000\nsame_mail = 1000\n"


@pytest.fixture(params=KINDS)
def post(request: pytest.FixtureRequest, mailstack: MailStack,
         tmp_path: Path) -> Iterator[Post]:
    for url in database_url(request.param, tmp_path):
        p = Post(mailstack, tmp_path, database=url)
        with p.config_path.open("a", encoding="utf-8") as f:
            f.write(ROOMY)  # for ``referee poll``, which reads the file
        yield p
        p.close()


def feed(post: Post, raw: bytes) -> str:
    """Submit one hostile mail through Postfix, or, where Postfix refuses it,
    straight to Dovecot as another MX would; returns how it went in."""
    try:
        post.stack.send(raw, "alice", REF)
        how = "smtp"
    except (smtplib.SMTPException, ValueError):
        try:
            post.stack.deliver(raw, "alice", REF)
            how = "lmtp"
        except (smtplib.SMTPException, ValueError):
            return "refused by the servers"
    post.in_referee_inbox += 1
    return how


def test_hostile_mail_between_moves_costs_one_mail_each(
        post: Post, capsys: pytest.CaptureFixture[str]) -> None:
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0, seed="hostile",
                                   options={"prize_order": "ascending"})
    post.poll(T0)
    post.new_mail("alice", 1)
    post.new_mail("bob", 1)
    hostile = corpus(ALICE, REF)
    fed = {}
    moves = set()
    for rnd, card in enumerate((6, 5, 4), start=1):
        for name, raw in hostile[(rnd - 1) * 8:rnd * 8]:
            fed[name] = feed(post, raw)
        alice = post.write("alice", f"bid {card}", subject=f"[{tag}] round {rnd}")
        bob = post.write("bob", f"bid {card - 3}", subject=f"[{tag}] round {rnd}")
        moves |= {alice.strip("<>"), bob.strip("<>")}
        post.stack.wait_for("referee", post.in_referee_inbox, timeout=30)
        now = T0 + timedelta(hours=rnd)
        cli = subprocess.run(referee_command(post, "poll", "--now", now.isoformat()),
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
        assert cli.returncode == 0, cli.stderr
        for user, mid, bid in (("alice", alice, card), ("bob", bob, card - 3)):
            mails = post.stack.fetch_all(user)
            answers = [x for x in mails if x["In-Reply-To"] == mid]
            assert len(answers) == 1 and f"DONE (bid {bid})" in body(answers[0]), user
    # Each round's two bids, in whichever order Postfix delivered them.
    actions = [(a[0], a[2]) for a in post.actions(tag)]
    assert [sorted(actions[i:i + 2]) for i in (0, 2, 4)] == [
        [(1, [6]), (2, [3])], [(1, [5]), (2, [2])], [(1, [4]), (2, [1])]]
    with post.referee.sessions() as db:
        inbound = list(db.scalars(select(m.Inbound)))
        outbox = list(db.scalars(select(m.Outbox)))
    went_in = sum(how != "refused by the servers" for how in fed.values())
    assert len(inbound) == went_in + 6, fed  # each one recorded, none lost
    # Each hostile mail was read and answered, or not answered for want of a
    # sender (Postfix adds a From to mail with none): none was taken for a
    # copy of another, or for a loop. An answer to each, to Alice alone.
    records = [r for r in inbound if r.message_id not in moves]
    assert len(records) == went_in
    assert {(r.status, r.note) for r in records} <= {expected(name) for name in fed}, [
        (r.status, r.note) for r in records]
    ignored = [r for r in records if r.status == "ignored"]
    assert len(ignored) <= len(NO_SENDER & fed.keys())
    for r in records:
        if r.status == "processed" and r.message_id:
            replies = [x for x in outbox if f"In-Reply-To: <{r.message_id}>" in x.raw]
            assert [x.recipients for x in replies] == [[post.stack.address("alice")]], r.message_id
    assert all(r.sent_at is not None for r in outbox)
    assert max(len(r.raw) for r in outbox) < 64_000  # no reply grows with its input
    with capsys.disabled():
        print(f"\n[{post.referee.db_engine.dialect.name}] {len(hostile)} hostile mails: "
              f"{went_in} reached the referee "
              f"({sum(h == 'lmtp' for h in fed.values())} past Postfix); "
              f"{sum(r.status == 'processed' for r in records)} read and answered, "
              f"{len(ignored)} ignored (no sender), "
              f"{sum(r.status == 'failed' for r in records)} failed, none taken for a copy "
              f"or a loop; 6 moves applied once")
