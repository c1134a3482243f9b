"""Two referee processes on one PostgreSQL and one mailbox ([referee]
workers = "many"), over the real Postfix and Dovecot: they share one backlog,
and nothing is applied or sent twice."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from referee.passes import run_pass
from tests.databases import postgres_url
from tests.mailstack import PLAYERS, REPO_ROOT, MailStack
from tests.test_e2e import CRASH_GAMES, T0, Post, person, referee_command
from tests.test_spades_mail import kinds


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    for url in postgres_url():
        p = Post(mailstack, tmp_path, database=url, workers="many")
        yield p
        p.close()


def test_two_workers_on_postgresql_drain_one_backlog_once_and_share_it(post: Post) -> None:
    tags = [post.referee.operator.create_game(
        "goofspiel", [person(a), person(b)], options={"prize_order": "ascending"}, now=T0,
        seed=f"workers-{i}") for i, (a, b) in enumerate(CRASH_GAMES)]
    run_pass(post.referee, T0)  # the openings
    for user in PLAYERS:
        post.new_mail(user, 2)
    sent: dict[str, str] = {}
    for tag, (a, b) in zip(tags, CRASH_GAMES, strict=True):
        sent[post.write(a, "bid 1", subject=f"[{tag}] round 1")] = a
        sent[post.write(b, "bid 6", subject=f"[{tag}] round 1")] = b
        for user in (a, b):
            for n in range(3):
                sent[post.write(user, "help", subject=f"[{tag}] help {n}")] = user
    post.stack.wait_for("referee", post.in_referee_inbox)

    now = (T0 + timedelta(hours=1)).isoformat()
    workers = [subprocess.Popen(referee_command(post, "-v", "poll", "--now", now), cwd=REPO_ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for _ in range(2)]
    outputs = [w.communicate(timeout=120)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    processed = [int(re.search(r"processed (\d+)", out).group(1))  # type: ignore[union-attr]
                 for out in outputs]
    assert sum(processed) == len(sent) and min(processed) > 0, outputs

    # Every move applied once.
    for tag in tags:
        assert sorted(a[:3] for a in post.actions(tag)) == [
            (1, "bid", [1]), (2, "bid", [6])], tag
    # The bid that ended each game's round: its answer carries the report,
    # one mail (the other player gets the report alone).
    ended = dict.fromkeys(PLAYERS, 0)
    for tag, pair in zip(tags, CRASH_GAMES, strict=True):
        ended[pair[post.actions(tag)[1][0] - 1]] += 1
    # Every mail answered once, every report sent once: no Message-ID twice.
    for user in PLAYERS:
        mine = [mid for mid, sender in sent.items() if sender == user]
        games = sum(user in g for g in CRASH_GAMES)
        msgs = post.new_mail(user, len(mine) + games - ended[user])
        ids = Counter(str(x["Message-ID"]) for x in msgs)
        assert max(ids.values()) == 1, (user, ids)
        answered = Counter(str(x["In-Reply-To"]) for x in msgs
                           if str(x["In-Reply-To"]) in mine)
        assert sorted(answered) == sorted(mine) and set(answered.values()) == {1}, user
        assert sum("round_report" in kinds(x) for x in msgs) == games, user
        assert sum("round_report" in kinds(x) for x in msgs
                   if str(x["In-Reply-To"]) in mine) == ended[user], user
    post.assert_no_more_mail(*PLAYERS)
