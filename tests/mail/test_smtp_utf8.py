"""A non-ASCII address and a relay without SMTPUTF8 (RFC 6531), against a
real SMTP server on loopback (aiosmtpd): the mail to that address fails
alone, for good and saying why, and the rest of the outbox goes out.

An outbox row to such an address once raised "the relay is unavailable"
and held every row behind it, retried for days.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session

from referee.config import config_from_dict
from referee.service import Referee
from referee.service.outgoing.outbox import OutboxSender
from referee.store import models as m
from referee.store.db import upgrade
from tests.smtpd import smtpd

T0 = datetime(2026, 5, 1, 8, 0)
ZOE, ALICE, BOB = "zoe@zo\u00eb.test", "alice@club.test", "bob@club.test"


class Handler:
    """Accepts every mail; keeps each envelope."""

    def __init__(self) -> None:
        self.received: list[Envelope] = []

    async def handle_DATA(self, server: SMTPServer, session: Session,
                          envelope: Envelope) -> str:
        self.received.append(envelope)
        return "250 OK"


def _relay(smtputf8: bool) -> Iterator[tuple[Handler, int]]:
    handler = Handler()
    with smtpd(handler, enable_SMTPUTF8=smtputf8) as port:
        yield handler, port


@pytest.fixture
def plain_relay() -> Iterator[tuple[Handler, int]]:
    """A relay that does not offer SMTPUTF8."""
    yield from _relay(smtputf8=False)


@pytest.fixture
def utf8_relay() -> Iterator[tuple[Handler, int]]:
    yield from _relay(smtputf8=True)


def _referee(tmp_path: Path, port: int) -> Referee:
    config = config_from_dict({
        "referee": {"address": "referee@club.test", "database": f"sqlite:///{tmp_path}/r.db"},
        "smtp": {"kind": "smtp", "host": "127.0.0.1", "port": port, "security": "none",
                 "timeout": "5s"},
    }, base_dir=tmp_path)
    upgrade(config.database_url)
    return Referee(config)


def _queue(ref: Referee, *rcpts: str) -> None:
    """One row per recipient list, in order. The headers are ASCII, as the
    composer writes them (a non-ASCII domain as an encoded-word)."""
    with ref.sessions.begin() as db:
        for to in rcpts:
            db.add(m.Outbox(recipients=to.split(","), created_at=T0, next_attempt_at=T0,
                            raw="From: referee@club.test\nTo: undisclosed-recipients:;\n"
                                "Subject: x\n\nHello.\n"))


def _rows(ref: Referee) -> list[m.Outbox]:
    with ref.sessions() as db:
        return list(db.query(m.Outbox).order_by(m.Outbox.id))


def test_a_non_ascii_address_fails_alone_and_the_rows_behind_it_go_out(
        tmp_path: Path, plain_relay: tuple[Handler, int]) -> None:
    handler, port = plain_relay
    ref = _referee(tmp_path, port)
    _queue(ref, ZOE, ALICE, BOB)
    sender = OutboxSender(ref.config, ref.sessions)
    assert sender.send(T0) == 2
    assert sender.relay_error is None  # the relay is fine: only that mail is not
    zoe, alice, bob = _rows(ref)
    assert (zoe.failed_at, zoe.sent_at, zoe.attempts) == (T0, None, 1)
    assert zoe.last_error == (f"recipients refused: {ZOE}: 553 5.6.7 not sent: the relay "
                              "does not offer SMTPUTF8, which this non-ASCII address needs")
    assert alice.sent_at == bob.sent_at == T0
    assert [e.rcpt_tos for e in handler.received] == [[ALICE], [BOB]]
    assert sender.send(T0 + timedelta(days=1)) == 0  # failed for good: never tried again


def test_a_mail_to_several_goes_to_the_ascii_ones_and_records_the_other(
        tmp_path: Path, plain_relay: tuple[Handler, int]) -> None:
    handler, port = plain_relay
    ref = _referee(tmp_path, port)
    ref.operator.create_game("goofspiel", [ZOE, ALICE], now=T0, seed="u")
    with ref.sessions.begin() as db:
        db.query(m.Outbox).delete()
    _queue(ref, f"{ZOE},{ALICE},{BOB}")
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 1
    (row,) = _rows(ref)
    assert row.sent_at == T0 and row.failed_at is None
    assert row.last_error.startswith(f"{ZOE}: 553 5.6.7 not sent: the relay does not offer")
    (env,) = handler.received
    assert env.rcpt_tos == [ALICE, BOB]
    # ``referee status`` shows that Zoë's mail is not getting through, and why.
    with ref.sessions() as db:
        zoe = db.query(m.Player).filter(m.Player.address == ZOE).one()
    assert zoe.bounced_at == T0 and "SMTPUTF8" in zoe.bounce


def test_a_relay_with_smtputf8_takes_the_non_ascii_address(
        tmp_path: Path, utf8_relay: tuple[Handler, int]) -> None:
    handler, port = utf8_relay
    ref = _referee(tmp_path, port)
    _queue(ref, ZOE, ALICE)
    assert OutboxSender(ref.config, ref.sessions).send(T0) == 2
    assert [e.rcpt_tos for e in handler.received] == [[ZOE], [ALICE]]
    assert "SMTPUTF8" in handler.received[0].mail_options
