"""The outbox over several SMTP connections at once (``[smtp] connections``):
against a real SMTP server on loopback (aiosmtpd, as ``tests/mail/test_smtp.py``),
and against a stand-in relay for a lost or refused connection."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session

from referee.config import SmtpSection, config_from_dict
from referee.mail.smtp import RelayUnavailable
from referee.service import Referee
from referee.service.outgoing import outbox
from referee.service.outgoing.outbox import OutboxSender
from referee.store import models as m
from referee.store.db import upgrade
from tests.smtpd import Refusing, free_port, smtpd

T0 = datetime(2026, 5, 1, 8, 0)


class Handler(Refusing):
    """Accepts mail, noting the connection each came over; answers 451 for
    the addresses in ``transient``."""

    def __init__(self) -> None:
        super().__init__()
        self.received: list[tuple[Any, list[str], int]] = []  # (peer, recipients, row)
        self.peers: list[Any] = []  # the connections, in the order of their first mail

    async def handle_DATA(self, server: SMTPServer, session: Session,
                          envelope: Envelope) -> str:
        # A relay takes its time, and more on some connections than others:
        # mail over two connections would not keep its order.
        if session.peer not in self.peers:
            self.peers.append(session.peer)
        await asyncio.sleep(0.002 * (1, 4, 2)[self.peers.index(session.peer) % 3])
        content: Any = envelope.content
        row = int(message_from_bytes(content)["X-Row"])
        self.received.append((session.peer, list(envelope.rcpt_tos), row))
        return "250 OK"

    def rows_to(self, address: str) -> list[int]:
        """The rows that reached ``address``, in the order they arrived."""
        return [row for _, to, row in self.received if address in to]


@pytest.fixture
def server() -> Iterator[tuple[Handler, int]]:
    handler = Handler()
    with smtpd(handler) as port:
        yield handler, port


def _referee(tmp_path: Path, port: int, connections: int) -> Referee:
    config = config_from_dict({
        "referee": {"address": "referee@club.test", "database": f"sqlite:///{tmp_path}/r.db"},
        "smtp": {"kind": "smtp", "host": "127.0.0.1", "port": port, "security": "none",
                 "timeout": "5s", "connections": connections},
    }, base_dir=tmp_path)
    upgrade(config.database_url)
    return Referee(config)


def _queue(ref: Referee, recipients: list[list[str]], first: int = 0) -> list[int]:
    """A row per list of recipients, in this order, each saying its place
    (from ``first``) in an X-Row header, as one transaction; returns their ids."""
    with ref.sessions.begin() as db:
        rows = [m.Outbox(recipients=[f"{a}@club.test" for a in to], created_at=T0,
                         next_attempt_at=T0,
                         raw=f"From: referee@club.test\nTo: {', '.join(to)}\nX-Row: {n}\n"
                             f"Subject: row {n}\n\nRow {n}.\n")
                for n, to in enumerate(recipients, first)]
        db.add_all(rows)
        db.flush()
        return [r.id for r in rows]


def _rows(ref: Referee) -> list[m.Outbox]:
    with ref.sessions() as db:
        rows = list(db.query(m.Outbox).order_by(m.Outbox.id))
        db.expunge_all()
        return rows


def _mix(n: int) -> list[list[str]]:
    """Rows to players with many mails (some to two of them at once) among
    rows to players with one."""
    pattern: list[list[str]] = [["alice"], ["bob"], ["alice", "carol"], ["dave"], ["carol"],
                                ["erin", "bob"], ["frank"]]
    return [pattern[n % 7] if n % 4 else [f"p{n}"] for n in range(n)]


def test_rows_go_over_several_connections_once_each_and_a_players_in_order(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port, connections=3)
    queued = _mix(90)
    _queue(ref, queued)
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 90
    assert sorted(row for _, _, row in handler.received) == list(range(90))  # each once
    for player in ("alice", "bob", "carol", "dave", "erin", "frank"):
        address = f"{player}@club.test"
        assert handler.rows_to(address) == [n for n, to in enumerate(queued) if player in to]
    assert 1 < len({peer for peer, _, _ in handler.received}) <= 3
    assert all(r.sent_at == T0 and r.attempts == 1 for r in _rows(ref))


def test_one_connection_when_so_configured(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port, connections=1)
    _queue(ref, _mix(40))
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 40
    assert [row for _, _, row in handler.received] == list(range(40))
    assert len({peer for peer, _, _ in handler.received}) == 1


def test_a_recipient_refused_for_now_holds_their_later_rows_while_the_others_go_out(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.transient = {"dave@club.test"}
    ref = _referee(tmp_path, port, connections=3)
    queued = [[f"p{n}"] for n in range(40)]
    queued[3], queued[5], queued[10] = ["dave"], ["erin"], ["dave"]
    queued[12], queued[20], queued[25] = ["dave", "erin"], ["dave"], ["erin"]
    ids = _queue(ref, queued)
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 35
    rows = {r.id: r for r in _rows(ref)}
    refused = rows[ids[3]]
    assert refused.sent_at is None and refused.failed_at is None and refused.attempts == 1
    assert "451" in refused.last_error and refused.next_attempt_at > T0
    # dave's later rows wait, and so does erin's row behind the one to dave and erin.
    for n in (10, 12, 20, 25):
        assert rows[ids[n]].sent_at is None and rows[ids[n]].attempts == 0, n
    assert handler.rows_to("erin@club.test") == [5]
    assert sorted(row for _, _, row in handler.received) == [
        n for n in range(40) if n not in (3, 10, 12, 20, 25)]
    assert len({peer for peer, _, _ in handler.received}) > 1
    # Once dave's server takes mail again, his rows go out in their order.
    handler.transient = set()
    assert sender.send(T0 + timedelta(minutes=5)) == 5
    assert handler.rows_to("dave@club.test") == [3, 10, 12, 20]
    assert handler.rows_to("erin@club.test") == [5, 12, 25]


class Relays:
    """Stand-in relays: each made is kept; ``extra_fails`` refuses every
    connection after the first; the row to ``lose`` loses its connection,
    and every other row is accepted only once that happened."""

    def __init__(self, extra_fails: bool = False, lose: str | None = None) -> None:
        self.made: list[FakeRelay] = []
        self.extra_fails = extra_fails
        self.lose = lose
        self.lost = asyncio.Event()

    def __call__(self, settings: SmtpSection) -> FakeRelay:
        relay = FakeRelay(self)
        self.made.append(relay)
        return relay


class FakeRelay:
    def __init__(self, relays: Relays) -> None:
        self.relays = relays
        self.sent: list[list[str]] = []
        self.connected = self.closed = False

    async def connect(self) -> None:
        if self.relays.extra_fails and self.relays.made[0] is not self:
            raise RelayUnavailable("connection refused")
        self.connected = True

    async def send(self, raw: str, sender: str,
                   recipients: list[str]) -> dict[str, tuple[int, str]]:
        await asyncio.sleep(0)
        if recipients == [self.relays.lose]:
            self.relays.lost.set()
            raise RelayUnavailable("connection lost")
        if self.relays.lose:
            await asyncio.wait_for(self.relays.lost.wait(), 5)
        self.sent.append(recipients)
        return {}

    async def quit(self) -> None:
        self.closed = True


def test_an_extra_connection_that_fails_leaves_the_rows_to_those_there_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        ) -> None:
    relays = Relays(extra_fails=True)
    monkeypatch.setattr(outbox, "SmtpRelay", relays)
    ref = _referee(tmp_path, free_port(), connections=3)
    _queue(ref, [[f"p{n}"] for n in range(24)])
    sender = OutboxSender(ref.config, ref.sessions)
    with caplog.at_level(logging.WARNING, logger="referee.service.outgoing.outbox"):
        assert sender.send(T0) == 24
    first, *extra = relays.made
    assert len(first.sent) == 24 and extra and not any(r.sent for r in extra)
    assert sender.relay_error is None
    assert "another SMTP connection failed, sending over 1: connection refused" in caplog.text
    assert all(r.closed for r in relays.made)


def test_a_connection_lost_fails_its_row_for_now_and_no_lane_starts_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    relays = Relays(lose="p0@club.test")
    monkeypatch.setattr(outbox, "SmtpRelay", relays)
    ref = _referee(tmp_path, free_port(), connections=3)
    ids = _queue(ref, [[f"p{n}"] for n in range(24)])
    # The lost row is the first of its connection; the other two finish theirs.
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 2
    assert len(relays.made) == 3 and all(r.closed for r in relays.made)
    assert sorted(len(r.sent) for r in relays.made) == [0, 1, 1]
    rows = {r.id: r for r in _rows(ref)}
    lost = rows[ids[0]]
    assert lost.attempts == 1 and lost.failed_at is None and lost.sent_at is None
    assert lost.last_error == "connection lost" and lost.next_attempt_at > T0
    sent = [r for r in rows.values() if r.sent_at is not None]
    assert len(sent) == 2 and all(r.attempts == 1 for r in sent)
    untouched = [r for r in rows.values() if r.sent_at is None and r.id != ids[0]]
    assert len(untouched) == 21 and all(r.attempts == 0 for r in untouched)
