"""Mails leave in the order their events happened, over the suite's real
servers, also when the relay was down and the mails are retried: each retry
has a backoff with a jitter of its own, yet no player gets "Your hand for
round 2" before "Round 1 scored", or "your turn … trick 13" before "Trick 12
to …"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import REF, T0, Post, person
from tests.test_e2e_spades import USER, outbox_order, parts
from tests.test_outages import mail
from tests.test_spades_mail import BIDS, DEAL, NAMES, SCRIPT, SEATING


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


def unsent(post: Post) -> dict[str, int]:
    """How many mails still wait in the outbox, per player's user."""
    with post.referee.sessions() as db:
        rows = db.scalars(select(m.Outbox).where(m.Outbox.sent_at.is_(None)))
        out = dict.fromkeys(USER.values(), 0)
        for row in rows:
            for a in row.recipients:
                out[a.split("@")[0]] += 1
        return out


def sent_to(post: Post, user: str) -> list[int]:
    with post.referee.sessions() as db:
        rows = db.scalars(select(m.Outbox).where(m.Outbox.sent_at.is_not(None))
                          .order_by(m.Outbox.id))
        return [r.id for r in rows if f"{user}@example.test" in r.recipients]


def test_a_rounds_mails_retried_after_a_relay_outage_reach_each_player_in_event_order(
        post: Post) -> None:
    # Every mail as it happens (mail all): the most mails, the most to keep in order.
    # Every card by mail, as SCRIPT writes it (no forced card plays itself, issue 37).
    tag = post.referee.operator.create_game("spades", [person(USER[n]) for n in NAMES], now=T0,
                                   seed="order", options={"mail": "all", "autoplay": "off"})
    post.poll(T0)
    for name in NAMES:
        post.new_mail(USER[name], 1)  # the opening and the hand, one mail
    t1 = T0 + timedelta(hours=1)
    with post.stack.server_down("postfix"):
        # The whole round comes in past Postfix (another MX), in turn order,
        # and every mail the referee sends about it fails for now.
        for name, text in [*BIDS, *SCRIPT]:
            assert post.stack.deliver(mail(USER[name], text, f"[{tag}] move"),
                                      USER[name], REF) == {}
            post.in_referee_inbox += 1
        post.poll(t1)
        assert post.state(tag)["round"] == 2
        waiting = unsent(post)
        assert all(waiting.values()), waiting
    # Postfix is back. Each row's retry fell due at its own jittered time
    # (3.75 to 6.25 s): a pass at 5 s finds some due and some not, and one
    # at a minute sends the rest.
    received: dict[str, list[list[EmailMessage]]] = {u: [] for u in USER.values()}
    for later in (timedelta(seconds=5), timedelta(minutes=1)):
        before = {u: len(sent_to(post, u)) for u in USER.values()}
        post.poll(t1 + later)
        for user in USER.values():
            fresh = len(sent_to(post, user)) - before[user]
            received[user].append(post.new_mail(user, fresh) if fresh else [])
    assert not any(unsent(post).values())

    with post.referee.sessions() as db:
        events = [(e.kind, dict(e.data)) for e in db.scalars(
            select(m.Event).where(m.Event.step > 0).order_by(m.Event.id))]
    tricks = [int(d["trick"]) for k, d in events if k == "trick"]
    assert tricks == list(range(1, 14))
    for name in NAMES:
        user = USER[name]
        first, second = ([outbox_order(x) for x in batch] for batch in received[user])
        # Nothing of the later pass happened before anything of the earlier one.
        assert not first or not second or max(first) < min(second), (name, first, second)
        got = [x for batch in received[user] for x in batch]
        assert sorted(outbox_order(x) for x in got) == sent_to(post, user)[1:]
        got.sort(key=outbox_order)
        # Each mail carries what one move caused, each part whole (mail all):
        # read in the order sent, the parts follow the events.
        read = [(k, h.removeprefix(f"[{tag}] ")) for x in got for k, h, _ in parts(x)]
        # The public parts follow the events: trick by trick, then the report.
        numbers = [int(mt.group(1)) for _, h in read if (mt := re.match(r"Trick (\d+)", h))]
        assert numbers == sorted(numbers) and numbers[-1] == 13, (name, numbers)
        kinds = [k for k, _ in read]
        assert kinds[-2:] == ["round_report", "hand"], (name, kinds)
        last_trick = max(i for i, k in enumerate(kinds) if k == "trick")
        assert last_trick < kinds.index("round_report")
        prompts = 0
        for i, (k, head) in enumerate(read):
            if k == "your_turn" and (mt := re.match(r"Trick (\d+): your card", head)):
                n = int(mt.group(1))
                if n > 1:  # the trick before it was announced first
                    done = [j for j, (_, h) in enumerate(read)
                            if h.startswith(f"Trick {n - 1} to ")]
                    assert done and done[0] < i, (name, n)
                    prompts += 1
        assert prompts, (name, read)
