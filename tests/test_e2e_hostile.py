"""The hostile-mail corpus through the real Postfix and Dovecot, between
legitimate moves, on SQLite and PostgreSQL: every legitimate move is applied
and answered once, and every ``referee poll`` exits 0."""

from __future__ import annotations

import smtplib
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.store import models as m
from tests.databases import KINDS, database_url
from tests.hostile import NO_SENDER, corpus, expected
from tests.mailstack import GIVE_UP, MailStack
from tests.test_e2e import ALICE, BOB, REF, REPO_ROOT, T0, Post, body, person, referee_command
from tests.test_spades_mail import DEAL, SEATING

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
        post.stack.wait_for("referee", post.in_referee_inbox)
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


# -- a Message-ID sent first by another (issue 22) ----------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_bids_message_id_sent_first_by_another_player_drops_no_move(
        kind: str, mailstack: MailStack, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bob sends first under the Message-ID Alice's bid will carry. Alice's
    bid (public in Spades, rule 6) goes to the list with the referee on Cc;
    her server delivers the referee's copy twice, and the list relays its
    own copy (subject prefix, List-Id, footer). Her bid is applied once and
    answered once, no one moved for her, and Bob is answered too."""
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    for url in database_url(kind, tmp_path):
        post = Post(mailstack, tmp_path, database=url, public_list=mailstack.list_address)
        try:
            _reused_message_id(post)
        finally:
            post.close()


def _reused_message_id(post: Post) -> None:
    stack = post.stack
    users = ("alice", "bob", "carol", "dave")
    tag = post.referee.operator.create_game("spades", [person(u) for u in users],
                                            options={"mail": "all"}, now=T0, seed="collide")
    post.poll(T0)
    post.in_referee_inbox += 1  # the opening comes back through the list: a loop
    stack.wait_for("referee", post.in_referee_inbox)
    mid = make_msgid(idstring="alice", domain="mua.example.test")
    date = formatdate(T0.timestamp() + 1800, usegmt=True)

    def mail(user: str, text: str, to: str, cc: str | None = None) -> EmailMessage:
        msg = EmailMessage()
        msg["From"], msg["To"] = person(user), to
        if cc:
            msg["Cc"] = cc
        msg["Subject"], msg["Date"], msg["Message-ID"] = f"[{tag}] my bid", date, mid
        msg.set_content(text)
        return msg

    # Bob's first, and read first: in the referee's mailbox before Alice's.
    stack.send(mail("bob", "bid 2", REF), "bob", REF)
    post.in_referee_inbox += 1
    stack.wait_for("referee", post.in_referee_inbox)
    alice = mail("alice", "bid 4", stack.list_address, cc=REF)
    for _ in range(2):  # her server delivers the referee's copy twice
        stack.send(alice, "alice", REF)
    relayed = mail("alice", "bid 4\n\n_______________________________________________\n"
                   "Players mailing list -- players@example.test\n", stack.list_address, cc=REF)
    relayed.replace_header("Subject", f"[players] {relayed['Subject']}")
    relayed["List-Id"] = "Game list <players.example.test>"
    stack.send(relayed, "list-owner", stack.list_address)  # to every player and the referee
    post.in_referee_inbox += 3
    post.poll(T0 + timedelta(hours=1))

    seat = {u: i + 1 for i, u in enumerate(users)}
    state = post.state(tag)
    assert state["bids"][0] == 4, state["bids"]
    moves = post.actions(tag)
    assert [a for a in moves if a[0] == seat["alice"]] == [(1, "bid", [4], "player")]
    assert all(a[2] != [2] or a[0] == seat["bob"] for a in moves)  # Bob's bid is Bob's alone
    with post.referee.sessions() as db:
        outbox = list(db.scalars(select(m.Outbox)))
        inbound = list(db.scalars(select(m.Inbound).where(
            m.Inbound.message_id == mid.strip("<>")).order_by(m.Inbound.id)))
    answered = [x.recipients for x in outbox if f"In-Reply-To: {mid}" in x.raw]
    assert sorted(answered) == [[stack.address("alice")], [stack.address("bob")]]
    assert [(r.sender, r.note.startswith("duplicate of")) for r in inbound] == [
        (stack.address("bob"), False), (stack.address("alice"), False),
        (stack.address("alice"), True), (stack.address("alice"), True)]
    give_up = time.monotonic() + GIVE_UP
    while not (answers := [x for x in stack.fetch_all("alice") if x["In-Reply-To"] == mid]):
        assert time.monotonic() < give_up, "Alice got no answer"
        time.sleep(0.2)
    assert ["DONE (bid 4)" in body(x) for x in answers] == [True]
