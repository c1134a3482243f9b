"""The outbox sender against a real SMTP server on loopback (aiosmtpd).

RFC 5321 §4.2.1: a 4xx reply is transient (retry with backoff), a 5xx reply is
permanent; a partial recipient refusal does not raise and is recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session

from referee.config import config_from_dict
from referee.service import Referee
from referee.service.outgoing.outbox import OutboxSender, backoff
from referee.store import models as m
from referee.store.db import upgrade
from tests.smtpd import Refusing, free_port, smtpd

T0 = datetime(2026, 5, 1, 8, 0)


class Handler(Refusing):
    """Accepts mail, but answers 451 or 550 for the addresses named so."""

    def __init__(self) -> None:
        super().__init__()
        self.received: list[Envelope] = []

    async def handle_DATA(self, server: SMTPServer, session: Session,
                          envelope: Envelope) -> str:
        self.received.append(envelope)
        return "250 OK"


@pytest.fixture
def server() -> Iterator[tuple[Handler, int]]:
    handler = Handler()
    with smtpd(handler) as port:
        yield handler, port


def _referee(tmp_path: Path, port: int, **smtp: Any) -> Referee:
    config = config_from_dict({
        "referee": {"address": "referee@club.test", "database": f"sqlite:///{tmp_path}/r.db"},
        "smtp": {"kind": "smtp", "host": "127.0.0.1", "port": port, "security": "none",
                 "timeout": "5s", **smtp},
    }, base_dir=tmp_path)
    upgrade(config.database_url)
    return Referee(config)


def _queue(ref: Referee, *rcpts: str) -> None:
    """One mail of a game to several recipients: the game's players. (The
    opening itself goes to each player as their own copy.)"""
    ref.operator.create_game("goofspiel", list(rcpts), now=T0, seed="q")
    with ref.sessions.begin() as db:
        game = db.query(m.Game).one()
        db.query(m.Outbox).filter(m.Outbox.game_id == game.id).delete()
        ref.delivery.queue.put(db, game, [(a, "") for a in rcpts], "[goofspiel-1] To all",
                           "Hello all.\n", auto="auto-generated", now=T0)


def _rows(ref: Referee) -> list[m.Outbox]:
    with ref.sessions() as db:
        return list(db.query(m.Outbox).order_by(m.Outbox.id))


def _bounced(ref: Referee) -> dict[str, str]:
    """The players marked as not reachable, and what the server said."""
    with ref.sessions() as db:
        return {p.address: p.bounce for p in db.query(m.Player) if p.bounced_at is not None}


def test_a_sent_mail_carries_the_message_id_of_its_outbox_row(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port)
    _queue(ref, "alice@club.test", "bob@club.test")
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 1
    (env,) = handler.received
    assert sorted(env.rcpt_tos) == ["alice@club.test", "bob@club.test"]
    assert env.mail_from == "referee@club.test"
    content: Any = env.content
    assert f"Message-ID: <pbm.1.goofspiel-1.{ref.composer.mac(1)}@club.test>".encode() in content
    assert _rows(ref)[0].sent_at == T0
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 0  # sent once
    assert _bounced(ref) == {}


def test_with_verp_each_mail_has_its_own_envelope_sender(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    ref = _referee(tmp_path, port, verp=True)
    _queue(ref, "alice@club.test", "bob@club.test")
    ref.operator.create_game("goofspiel", ["carol@club.test", "dan@club.test"], now=T0, seed="r")
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 3  # carol and dan: a copy each
    assert [e.mail_from for e in handler.received] == [
        f"referee+bounce-{n}-{ref.composer.mac(n)}@club.test" for n in (1, 2, 3)]
    content: Any = handler.received[0].content
    assert b"From: PBM Referee <referee@club.test>" in content  # the From stays


def test_a_transient_refusal_is_retried_later_with_backoff(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.transient = {"alice@club.test", "bob@club.test"}
    ref = _referee(tmp_path, port)
    _queue(ref, "alice@club.test", "bob@club.test")
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 0
    (row,) = _rows(ref)
    assert row.sent_at is None and row.failed_at is None and row.attempts == 1
    assert T0 + timedelta(seconds=3) <= row.next_attempt_at <= T0 + timedelta(seconds=7)
    assert sender.send(T0 + timedelta(seconds=2)) == 0  # not due yet
    handler.transient = set()
    assert sender.send(T0 + timedelta(minutes=5)) == 1
    assert len(handler.received) == 1


def test_a_permanent_refusal_of_every_recipient_stops_the_retries(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.permanent = {"alice@club.test", "bob@club.test"}
    ref = _referee(tmp_path, port)
    _queue(ref, "alice@club.test", "bob@club.test")
    OutboxSender(ref.config, ref.sessions).send(T0)
    (row,) = _rows(ref)
    assert row.failed_at == T0 and "550" in row.last_error
    assert _bounced(ref) == {"alice@club.test": "550 5.1.1 no such user",
                             "bob@club.test": "550 5.1.1 no such user"}


def test_a_partial_refusal_sends_to_the_rest_and_records_the_refusal(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.permanent = {"bob@club.test"}
    ref = _referee(tmp_path, port)
    _queue(ref, "alice@club.test", "bob@club.test")
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 1
    assert handler.received[0].rcpt_tos == ["alice@club.test"]
    (row,) = _rows(ref)
    assert row.sent_at == T0 and "bob@club.test: 550" in row.last_error
    assert _bounced(ref) == {"bob@club.test": "550 5.1.1 no such user"}


def test_no_server_means_retry_and_a_mail_refused_for_days_is_given_up(
        tmp_path: Path) -> None:
    ref = _referee(tmp_path, free_port())  # nothing listens there
    _queue(ref, "alice@club.test", "bob@club.test")
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 0
    (row,) = _rows(ref)
    assert row.failed_at is None and "connection" in row.last_error
    sender.send(T0 + timedelta(days=5, minutes=1))
    (row,) = _rows(ref)
    assert row.failed_at is not None


def test_backoff_doubles_from_five_seconds_up_to_five_minutes() -> None:
    import random

    rng = random.Random(1)
    delays = [backoff(n, rng) for n in (1, 2, 3, 20)]
    assert timedelta(seconds=3.75) <= delays[0] <= timedelta(seconds=6.25)
    assert timedelta(seconds=7.5) <= delays[1] <= timedelta(seconds=12.5)
    assert timedelta(seconds=15) <= delays[2] <= timedelta(seconds=25)
    assert timedelta(minutes=3.75) <= delays[3] <= timedelta(minutes=6.25)


def test_recipients_refused_for_now_get_the_same_message_again_later(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    handler, port = server
    handler.transient = {"bob@club.test"}
    ref = _referee(tmp_path, port)
    _queue(ref, "alice@club.test", "bob@club.test")
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 1
    handler.transient = set()
    assert sender.send(T0 + timedelta(minutes=5)) == 1
    first, again = handler.received
    assert first.rcpt_tos == ["alice@club.test"] and again.rcpt_tos == ["bob@club.test"]
    assert first.content == again.content  # the same Message-ID


def test_a_row_that_cannot_be_sent_fails_alone_and_the_rows_behind_it_go_out(
        tmp_path: Path, server: tuple[Handler, int]) -> None:
    """A raw UTF-8 Message-ID copied into a stored mail made sending raise for
    ever, and every pass died on the same row."""
    handler, port = server
    ref = _referee(tmp_path, port)
    with ref.sessions.begin() as db:
        db.add(m.Outbox(recipients=["alice@club.test"],
                        raw="From: referee@club.test\nTo: alice@club.test\nSubject: x\n"
                            "In-Reply-To: <zo\u00eb@\u00e9vil.test>\n\nx\n",
                        created_at=T0, next_attempt_at=T0))
    _queue(ref, "alice@club.test", "bob@club.test")
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 1
    bad, opening = _rows(ref)
    assert bad.failed_at == T0 and "cannot be sent" in bad.last_error
    assert opening.sent_at == T0 and len(handler.received) == 1
    assert sender.send(T0 + timedelta(hours=1)) == 0  # and it is not tried again


def test_an_8bit_body_to_a_relay_without_8bitmime_goes_out_in_7bit_and_reads_the_same(
        tmp_path: Path) -> None:
    handler = Handler()
    with smtpd(handler, decode_data=True) as port:  # no 8BITMIME offered
        ref = _referee(tmp_path, port)
        ref.operator.create_game("goofspiel", ["alice@club.test", "bob@club.test"], now=T0,
                                 seed="q")
        with ref.sessions.begin() as db:
            game = db.query(m.Game).one()
            db.query(m.Outbox).filter(m.Outbox.game_id == game.id).delete()
            ref.delivery.queue.put(db, game, [("alice@club.test", "Zoë")],
                                   "[goofspiel-1] Zoë — ♥", "Zoë takes ♥ 6 — well bid.\n",
                                   auto="auto-generated", now=T0)
        assert "Content-Transfer-Encoding: 8bit" in _rows(ref)[0].raw  # as stored
        assert OutboxSender(ref.config, ref.sessions).send(T0) == 1
    (env,) = handler.received
    content: Any = env.content
    assert isinstance(content, str) and content.isascii()
    msg = message_from_bytes(content.encode("ascii"), policy=default)
    assert isinstance(msg, EmailMessage)
    assert str(msg["Subject"]) == "[goofspiel-1] Zoë — ♥"
    assert msg.get_content().replace("\r\n", "\n") == "Zoë takes ♥ 6 — well bid.\n"
