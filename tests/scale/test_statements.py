"""What one move and one sweep cost in SQL statements: a fixed number,
whatever the number of games (counted with SQLAlchemy's event hooks; the
timings are in ``bench/``, not here)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert, select, update

from referee.service.reading import STATUS_BATCH
from referee.store import models as m
from referee.web import publish
from tests.test_referee import ALICE, REF, Club

#: The most statements one move may cost, from its mailbox cursor to its reply
#: (one of them moves the game's mail clock, so its mails are dated in order).
MOVE_STATEMENTS = 19
#: The most statements a sweep with nothing due may cost.
SWEEP_STATEMENTS = 4
#: The most statements writing the pages that are behind may cost when none is:
#: the games behind (indexed by ``page_due``), and the club's open tables the
#: index lists (indexed by status; none or a few, whatever the games).
PAGES_STATEMENTS = 2


@contextmanager
def statements(club: Club) -> Iterator[list[str]]:
    """The SQL statements the referee's engine runs inside the block."""
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    engine = club.referee.db_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def bid(tag: str, n: int, text: str = "") -> bytes:
    msg = EmailMessage()
    msg["From"] = f"Alice <{ALICE}>"
    msg["To"] = REF
    msg["Subject"] = f"[{tag}] my bid"
    msg["Message-ID"] = make_msgid(domain="club.test")
    msg.set_content(text or f"bid {n}\n")
    return msg.as_bytes()


def games_with_alice(club: Club, count: int) -> list[str]:
    return [club.referee.operator.create_game(
        "goofspiel", [f"Alice <{ALICE}>", f"p{i}@club.test"],
        options={"prize_order": "ascending"}, now=club.now, seed=f"s{i}")
        for i in range(count)]


def move_cost(club: Club, tag: str, key: str) -> int:
    with statements(club) as seen:
        outcome = club.referee.process(bid(tag, 1), key, now=club.now + timedelta(hours=1),
                                       cursor=("imap:referee/INBOX", 1, int(key)))
    assert outcome.status == "processed", outcome
    if os.environ.get("SHOW_STATEMENTS"):
        print("\n".join(" ".join(s.split())[:150] for s in seen))
    return len(seen)


def test_a_move_of_a_player_in_fifty_games_costs_as_many_statements_as_in_one(
        club: Club) -> None:
    (first,) = games_with_alice(club, 1)
    # Not a move: it makes the mailbox's cursor and Alice's reply budget.
    club.referee.process(bid(first, 0, "help"), "0", now=club.now)
    one = move_cost(club, first, "1")
    more = games_with_alice(club, 49)
    fifty = move_cost(club, more[-1], "2")
    assert fifty == one, (one, fifty)
    assert fifty <= MOVE_STATEMENTS, fifty


def clone_games(club: Club, count: int) -> None:
    """``count`` more games like the newest one, deadlines and all, inserted
    in bulk (the referee's own ``create_game`` would take minutes)."""
    with club.referee.db_engine.begin() as conn:
        game = conn.execute(select(m.Game.__table__).order_by(m.Game.id.desc())
                            .limit(1)).mappings().one()
        seats = conn.execute(select(m.Seat.__table__).where(
            m.Seat.game_id == game["id"])).mappings().all()
        lines = conn.execute(select(m.Deadline.__table__).where(
            m.Deadline.game_id == game["id"])).mappings().all()
        assert lines and all(d["remind_at"] for d in lines if d["seat"])
        first = game["id"] + 1
        ids = range(first, first + count)
        conn.execute(insert(m.Game.__table__), [
            {**game, "id": i, "tag": f"clone-{i}", "seed": f"clone-{i}",
             "listing": game["listing"] and {**game["listing"], "tag": f"clone-{i}"}}
            for i in ids])
        conn.execute(insert(m.Seat.__table__), [  # a seat's private address is its own
            {**{k: v for k, v in s.items() if k != "id"}, "game_id": i, "token": None}
            for i in ids for s in seats])
        conn.execute(insert(m.Deadline.__table__), [
            {**{k: v for k, v in d.items() if k != "id"}, "game_id": i}
            for i in ids for d in lines])


def test_a_sweep_with_nothing_due_costs_the_same_few_statements_at_ten_thousand_games(
        club: Club) -> None:
    games_with_alice(club, 1)
    later = club.now + timedelta(hours=1)  # the deadlines are days away
    with statements(club) as seen:
        assert club.referee.sweep.fire(later) == 0
    one = len(seen)
    clone_games(club, 9_999)
    with statements(club) as seen:
        assert club.referee.sweep.fire(later) == 0
    assert len(seen) == one <= SWEEP_STATEMENTS, seen
    assert not [s for s in seen if not s.lstrip().upper().startswith("SELECT")], seen
    # When a reminder falls due in one game, only that game is loaded.
    due = later + timedelta(hours=2)
    with club.referee.db_engine.begin() as conn:
        conn.execute(update(m.Deadline.__table__).where(m.Deadline.game_id == 5000)
                     .values(due_at=due, remind_at=due - timedelta(days=1)))
    club.referee.send_outbox(later)
    club.new_mail()
    assert club.referee.sweep.fire(later) == 0
    club.referee.send_outbox(later)
    reminders = club.new_mail()
    assert [x["X-Referee-Mail"] for x in reminders] == ["reminder", "reminder"]  # both seats
    with statements(club) as seen:
        club.referee.sweep.fire(later)
    assert len(seen) == one, "a reminder sent is not due again"


def test_status_reads_games_in_batches_of_three_statements_whatever_their_number(
        club: Club) -> None:
    games_with_alice(club, 1)
    with statements(club) as seen:
        assert len(club.referee.reading.status()) == 1
    one = len(seen)  # a batch of games, their seats and their deadlines
    clone_games(club, 3 * STATUS_BATCH - 1)
    with statements(club) as seen:
        games = club.referee.reading.status()
    assert len(games) == 3 * STATUS_BATCH
    assert all(g["deadlines"] and len(g["players"]) == 2 for g in games)
    # Three full batches, and one more read of games that finds none.
    assert len(seen) == one + 2 * 3 + 1, seen
    assert not [s for s in seen if not s.lstrip().upper().startswith(("SELECT", "BEGIN"))], seen
    assert club.referee.reading.status(games[-1]["tag"])[0] == games[-1]


def test_the_pages_of_a_pass_cost_what_changed_not_the_number_of_games(
        club: Club, tmp_path: Path) -> None:
    games_with_alice(club, 1)
    www = tmp_path / "www"
    assert publish(club.referee, www) == 1  # the first time: every page
    with statements(club) as seen:
        assert publish(club.referee, www) == 0
    one = len(seen)
    clone_games(club, 9_999)  # each copied as the first was written: none behind
    with statements(club) as seen:
        assert publish(club.referee, www) == 0
    assert len(seen) == one <= PAGES_STATEMENTS, seen
    assert not list(www.glob("clone-*.html"))
    # A move in one game of ten thousand: its page alone is written, and the
    # index is not, since the game's line of it did not change.
    index = (www / "index.html").read_text()
    (www / "index.html").write_text("as it was")
    outcome = club.referee.process(bid("clone-5000", 1), "1", now=club.now + timedelta(hours=1))
    assert outcome.status == "processed", outcome
    with statements(club) as seen:
        assert publish(club.referee, www) == 1
    assert [p.name for p in www.glob("clone-*.html")] == ["clone-5000.html"]
    assert (www / "index.html").read_text() == "as it was"
    # Which games are behind; the game, its seats, its deadlines; its
    # history; booked written.
    assert len(seen) <= one + 5 + 1, seen
    (www / "index.html").write_text(index)
