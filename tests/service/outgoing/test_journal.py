"""The sent journal (``service/outgoing/journal``): the 250s a sender wrote
down are booked by the next send once it is gone, never while it lives,
and never on another database's rows."""

from __future__ import annotations

from pathlib import Path

from referee.service.outgoing.journal import Journal
from referee.service.outgoing.outbox import OutboxSender
from tests.service.outgoing.test_outbox import T0, _queue, _referee, _rows


def test_a_gone_senders_journal_is_booked_once_and_a_live_ones_is_left(tmp_path: Path) -> None:
    ref = _referee(tmp_path, 25, connections=1)
    first, second, third = _queue(ref, [["alice"], ["bob"], ["carol"]])
    raw = {r.id: r.raw for r in _rows(ref)}
    sender = OutboxSender(ref.config, ref.sessions)
    journal = Journal(ref.config)
    journal.sent(first, raw[first], {})
    journal.sent(second, raw[second], {"bob@club.test": (450, "4.2.0 busy")})
    journal.sent(third, "another database's mail", {})
    assert journal.path is not None and journal.path.parent == tmp_path
    assert sender.book_journal(T0) == 0  # its sender lives (holds it)
    assert all(r.sent_at is None for r in _rows(ref))
    journal.close(booked=False)  # as a kill leaves it
    assert sender.book_journal(T0) == 2
    rows = {r.id: r for r in _rows(ref)}
    assert rows[first].sent_at == rows[second].sent_at == T0
    assert rows[third].sent_at is None  # the checksum is not its text's
    # Bob's copy refused for now is queued again, the same text.
    (retry,) = [r for r in rows.values() if r.id not in (first, second, third)]
    assert retry.recipients == ["bob@club.test"] and retry.raw == raw[second]
    assert not journal.path.exists()
    assert sender.book_journal(T0) == 0


def test_a_line_cut_short_by_a_kill_is_left_out(tmp_path: Path) -> None:
    ref = _referee(tmp_path, 25, connections=1)
    (first, second) = _queue(ref, [["alice"], ["bob"]])
    raw = {r.id: r.raw for r in _rows(ref)}
    journal = Journal(ref.config)
    journal.sent(first, raw[first], {})
    journal.close(booked=False)
    assert journal.path is not None
    with journal.path.open("a") as f:
        f.write(f"{second} 12")  # no end: the write was never whole
    assert OutboxSender(ref.config, ref.sessions).book_journal(T0) == 1
    assert [r.sent_at for r in _rows(ref)] == [T0, None]
