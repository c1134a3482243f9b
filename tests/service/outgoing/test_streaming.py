"""Sending while reading (``service/streaming``): rows committed during a
pass go out from a child process as they come, each once, a player's in
order; what must wait (a row refused for now, a retry not yet due, a row
to several players) is left to the outbox's own send, which keeps the order."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session
from sqlalchemy import update

from referee import passes
from referee.config import config_from_dict
from referee.passes import run_pass, send_while_reading
from referee.service import Referee
from referee.service.outgoing.outbox import OutboxSender
from referee.store import models as m
from referee.store.db import upgrade
from tests.service.outgoing.test_outbox import T0, Handler, _mix, _queue, _referee, _rows
from tests.service.outgoing.test_outbox import server as server  # the fixture
from tests.smtpd import smtpd


def test_rows_committed_during_a_pass_go_out_once_each_and_a_players_in_order(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port, connections=3)
    stream = ref.outbox_stream(T0)
    queued = _mix(70)
    for first in range(0, 70, 7):  # seven rows a message, the stream looking after each
        _queue(ref, queued[first:first + 7], first)
        stream.feed(force=True)
    streamed = stream.close()
    # Rows to two players, and those behind them, waited for the outbox's send.
    single = [n for n, to in enumerate(queued) if len(to) == 1]
    assert 0 < streamed < len(single)
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 70 - streamed
    assert sorted(row for _, _, row in handler.received) == list(range(70))  # each once
    for player in ("alice", "bob", "carol", "dave", "erin", "frank"):
        assert handler.rows_to(f"{player}@club.test") == [
            n for n, to in enumerate(queued) if player in to]
    assert all(r.sent_at == T0 and r.attempts == 1 for r in _rows(ref))


def test_a_player_refused_for_now_gets_nothing_more_until_the_retry_in_order(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.transient.add("dave@club.test")
    ref = _referee(tmp_path, port, connections=2)
    stream = ref.outbox_stream(T0)
    queued = [["dave"], ["p1"], ["dave"], ["p2"], ["dave"], ["p3"]]
    for first in range(0, 6, 2):
        _queue(ref, queued[first:first + 2], first)
        stream.feed(force=True)
    assert stream.close() == 3
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 0  # dave's wait for the retry
    assert handler.rows_to("dave@club.test") == []
    rows = _rows(ref)
    assert rows[0].attempts == 1 and rows[0].next_attempt_at > T0 and rows[0].sent_at is None
    assert [r.sent_at for r in rows[2::2]] == [None, None]
    handler.transient.clear()
    assert OutboxSender(ref.config, ref.sessions).send(T0 + timedelta(hours=1)) == 3
    assert handler.rows_to("dave@club.test") == [0, 2, 4]


def test_a_row_waiting_from_before_holds_its_players_new_rows(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port, connections=2)
    (old,) = _queue(ref, [["bob"]])
    with ref.sessions.begin() as db:  # refused an hour ago, retried later
        db.execute(update(m.Outbox).where(m.Outbox.id == old)
                   .values(next_attempt_at=T0 + timedelta(minutes=5), attempts=1))
    stream = ref.outbox_stream(T0)
    _queue(ref, [["bob"], ["carol"]], 1)
    stream.feed(force=True)
    assert stream.close() == 1
    assert handler.rows_to("bob@club.test") == [] and handler.rows_to("carol@club.test") == [2]
    assert OutboxSender(ref.config, ref.sessions).send(T0 + timedelta(minutes=6)) == 2
    assert handler.rows_to("bob@club.test") == [0, 1]  # the old row, then the new


class Recorder:
    """Accepts every mail; notes its recipient and Message-ID."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str]] = []

    async def handle_DATA(self, server: SMTPServer, session: Session,
                          envelope: Envelope) -> str:
        await asyncio.sleep(0.001)
        content: Any = envelope.content
        self.received.append((envelope.rcpt_tos[0], message_from_bytes(content)["Message-ID"]))
        return "250 OK"


@pytest.fixture
def recorder() -> Iterator[tuple[Recorder, int]]:
    handler = Recorder()
    with smtpd(handler) as port:
        yield handler, port


def test_a_relay_on_this_machine_gets_the_mail_after_the_reading(tmp_path: Path) -> None:
    ref = _referee(tmp_path, 25, connections=2)
    assert not send_while_reading(ref)  # 127.0.0.1
    ref.config.smtp.host = "smtp.club.test"
    assert send_while_reading(ref)
    ref.config.referee.workers = "many"  # on SQLite: still one worker
    assert send_while_reading(ref)
    ref.config.smtp.kind = "maildir"
    assert not send_while_reading(ref)


def test_a_poll_over_a_backlog_sends_its_answers_while_it_reads(
        tmp_path: Path, recorder: tuple[Recorder, int], monkeypatch: pytest.MonkeyPatch) -> None:
    handler, port = recorder
    # aiosmtpd on the loopback stands for a relay far away.
    monkeypatch.setattr(passes, "_on_this_machine", lambda host: False)
    inbox = tmp_path / "in"
    for sub in ("new", "cur", "tmp"):
        (inbox / sub).mkdir(parents=True)
    config = config_from_dict({
        "referee": {"address": "referee@club.test", "database": f"sqlite:///{tmp_path}/r.db"},
        "mailbox": {"kind": "maildir", "path": str(inbox)},
        "smtp": {"kind": "smtp", "host": "127.0.0.1", "port": port, "security": "none",
                 "timeout": "5s"},
    }, base_dir=tmp_path)
    upgrade(config.database_url)
    ref = Referee(config)
    try:
        tags = [ref.operator.create_game("goofspiel", [f"a{i}@club.test", f"b{i}@club.test"],
                                options={"prize_order": "ascending"}, now=T0, seed=f"s{i}")
                for i in range(12)]
        assert run_pass(ref, T0).sent == 24  # the openings
        handler.received.clear()
        for n, tag in enumerate(tags):
            for who, bid in (("a", 1), ("b", 6)):
                msg = EmailMessage()
                msg["From"], msg["To"] = f"{who}{n}@club.test", "referee@club.test"
                msg["Subject"], msg["Message-ID"] = f"[{tag}] round 1", make_msgid()
                msg.set_content(f"bid {bid}\n")
                (inbox / "new" / f"{n}{who}.eml").write_bytes(msg.as_bytes())
        report = run_pass(ref, T0 + timedelta(hours=1))
        # Each bid answered, each round reported to both players: three mails
        # a game, as the second bidder's answer and the report are one mail
        # (four before, 48 in all).
        assert (report.processed, report.sent) == (24, 36)
        assert report.streamed > 0
        ids = [mid for _, mid in handler.received]
        assert len(ids) == len(set(ids)) == 36
        # The first bidder: the answer, then the report; the second: one mail.
        assert sorted(Counter(to for to, _ in handler.received).items()) == sorted(
            [(f"a{n}@club.test", 2) for n in range(12)]
            + [(f"b{n}@club.test", 1) for n in range(12)])
        order = {a: [ref.composer.outbox_id(mid) for to, mid in handler.received if to == a]
                 for a, _ in handler.received}
        assert all(got == sorted(got) for got in order.values()), order
        assert all(r.sent_at is not None for r in _rows(ref))
    finally:
        ref.close()
