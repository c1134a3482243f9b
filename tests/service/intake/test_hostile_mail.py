"""No mail can stop the referee: every hostile mail costs one mail.

The hostile corpus (``tests/hostile.py``) is fed between legitimate bids on
the embedded default (Maildir, SQLite) and on PostgreSQL; the end-to-end
twin over the real Postfix and Dovecot is ``tests/test_e2e_hostile.py``.
"""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from referee.store import models as m
from tests.databases import KINDS
from tests.hostile import NO_SENDER, UNREADABLE, corpus, expected
from tests.test_referee import ALICE, BOB, REF, Club, body, clubs, new_goofspiel

#: Budgets no corpus test reaches: what a mail comes to is its own doing.
ROOMY = {"replies_per_hour": 1000, "replies_per_day": 1000, "same_mail": 1000}


@pytest.fixture(params=KINDS)
def club(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Club]:
    """A club on SQLite, and on PostgreSQL where one answers, with roomy budgets."""
    yield from clubs(request.param, tmp_path, limits=ROOMY)


def _drop(club: Club, raw: bytes, name: str = "") -> None:
    """Deliver ``raw`` to the referee's Maildir; named, its source key is
    ``maildir:hostile-<name>``."""
    box = mailbox.Maildir(club.root / "in", create=True)
    if not name:
        box.add(raw)
        return
    (club.root / "in" / "new" / f"hostile-{name}").write_bytes(raw)


def outcomes(club: Club) -> dict[str, tuple[str, str]]:
    """(status, note) of each corpus mail's record, by the mail's name."""
    with club.referee.sessions() as db:
        return {r.source_key.removeprefix("maildir:hostile-"): (r.status, r.note)
                for r in db.scalars(select(m.Inbound)
                                    .where(m.Inbound.source_key.like("maildir:hostile-%")))}


def test_every_legitimate_bid_between_hostile_mails_is_applied_and_answered_once(
        club: Club, capsys: pytest.CaptureFixture[str]) -> None:
    tag = new_goofspiel(club, order="1,2,3,4,5,6")
    club.poll()
    hostile = corpus(f"Alice <{ALICE}>", REF)
    for rnd, card in enumerate((6, 5, 4), start=1):
        for name, raw in hostile[(rnd - 1) * 8:rnd * 8]:
            _drop(club, raw, name)
        club.send(ALICE, f"bid {card}", subject=f"[{tag}] round {rnd}")
        club.send(BOB, f"bid {card - 3}", subject=f"[{tag}] round {rnd}")
        sent = club.poll(club.now + timedelta(minutes=1))
        answers = [x for x in sent if f"bid {card}" in body(x) or f"bid {card - 3}" in body(x)]
        assert len([x for x in answers if "DONE (bid" in body(x)]) == 2, [
            x["Subject"] for x in sent]
    with club.referee.sessions() as db:
        rows = list(db.scalars(select(m.Inbound)))
        actions = list(db.scalars(select(m.ActionLog).where(m.ActionLog.source == "player")))
        outbox = list(db.scalars(select(m.Outbox)))
    assert [(a.seat, a.action["args"]) for a in actions] == [
        (1, [6]), (2, [3]), (1, [5]), (2, [2]), (1, [4]), (2, [1])]
    assert len(hostile) <= 24 and len(rows) == len(hostile) + 6  # every mail is recorded
    # Each hostile mail was read and answered, or not answered for its own
    # reason: none was taken for a copy of another, or for a loop.
    assert outcomes(club) == {name: expected(name) for name, _ in hostile}
    answered = {mid for r in rows if r.status == "processed" and (mid := r.message_id)
                and r.source_key.startswith("maildir:hostile-")}
    replies = [r for r in outbox if r.recipients == [ALICE] and "In-Reply-To: <" in r.raw]
    assert {mid for mid in answered if f"In-Reply-To: <{mid}>" in "".join(
        r.raw for r in replies)} == answered  # an answer to each, to Alice alone
    assert all(r.sent_at is not None for r in outbox)  # nothing stuck in the outbox
    assert max(len(r.raw) for r in outbox) < 64_000  # no reply grows with its input
    # Mail that a hostile mail answered went to the player's own address only.
    assert {a for r in outbox for a in r.recipients} <= {ALICE, BOB}
    with capsys.disabled():
        print(f"\n[{club.referee.db_engine.dialect.name}] {len(hostile)} hostile mails: "
              f"{sum(s == 'processed' for s, _ in outcomes(club).values())} read and answered, "
              f"{sum(s == 'ignored' for s, _ in outcomes(club).values())} ignored (no sender), "
              f"{sum(s == 'failed' for s, _ in outcomes(club).values())} failed; "
              f"6 moves applied once")


def test_a_reply_that_cannot_be_built_still_records_the_mail_and_moves_on(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = new_goofspiel(club)
    club.poll()

    def broken(*_args: object, **_kw: object) -> None:
        raise RuntimeError("the template engine broke")

    for built in ("answer", "reply"):  # the answer, and the note of a fault
        monkeypatch.setattr(club.referee.delivery, built, broken)
    club.send(ALICE, "bid 5", subject=f"[{tag}]")
    assert club.poll() == []
    monkeypatch.undo()
    club.send(BOB, "bid 3", subject=f"[{tag}]")
    (reply,) = club.poll()
    assert "DONE (bid 3)" in body(reply)
    with club.referee.sessions() as db:
        statuses = [r.status for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]
    assert statuses == ["failed", "processed"]


# Any header value Hypothesis can make, raw bytes included.
header_values = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" "))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(subject=header_values, message_id=header_values, references=header_values,
       from_name=header_values, body_bytes=st.binary(max_size=2000))
def test_any_mail_is_processed_or_recorded_failed_and_the_next_mail_is_processed(
        tmp_path_factory: pytest.TempPathFactory, subject: bytes, message_id: bytes,
        references: bytes, from_name: bytes, body_bytes: bytes) -> None:
    club = _shared_club(tmp_path_factory)
    raw = (b"From: " + from_name + b" <" + ALICE.encode() + b">\r\nTo: " + REF.encode() +
           b"\r\nSubject: " + subject + b"\r\nMessage-ID: " + message_id +
           b"\r\nReferences: " + references + b"\r\n\r\n" + body_bytes)
    # An hour apart, so the reply budget never decides the outcome.
    now = club.now + timedelta(hours=len(_seen))
    outcome = club.referee.process(raw, f"hypothesis-{len(_seen)}", now=now)
    _seen.append(outcome.status)
    assert outcome.status in {
        "processed", "failed", "refused", "ignored", "duplicate", "stranger"}
    follow = club.referee.process(
        f"From: {ALICE}\r\nTo: {REF}\r\nSubject: x\r\nMessage-ID: <ok-{len(_seen)}@club.test>"
        f"\r\n\r\nhelp\r\nthanks {len(_seen)}\r\n".encode(), f"hypothesis-ok-{len(_seen)}",
        now=now)
    assert follow.status == "processed"


_seen: list[str] = []
_clubs: dict[str, Club] = {}


def _shared_club(factory: pytest.TempPathFactory) -> Club:
    """One club for every Hypothesis example (a fixture would be one per test)."""
    if "club" not in _clubs:
        club = Club(factory.mktemp("hypothesis"))
        new_goofspiel(club)
        _clubs["club"] = club
    return _clubs["club"]


def test_forged_hostile_mail_in_verified_mode_blocks_nothing(tmp_path: Path) -> None:
    """In verified mode a forged From of a player reaches the "not verified"
    answer, which echoes the subject: it must not fault either."""
    club = Club(tmp_path, auth={"require": "verified", "authserv_id": "mx.club.test"},
                limits=ROOMY)
    tag = new_goofspiel(club)
    club.poll()
    hostile = corpus(f"Alice <{ALICE}>", REF)
    for name, raw in hostile:
        _drop(club, raw, name)
    club.poll(club.now + timedelta(minutes=1))
    with club.referee.sessions() as db:
        unsent = list(db.scalars(select(m.Outbox).where(m.Outbox.sent_at.is_(None))))
    # Each reached the check of its sender, and was refused there.
    assert outcomes(club) == {name: expected(name) if name in NO_SENDER | UNREADABLE.keys() else (
        "refused", "sender not verified: no Authentication-Results from mx.club.test")
        for name, _ in hostile}
    assert unsent == []
    club.send(BOB, "help", subject=f"[{tag}] still there?")
    (answer,) = club.poll(club.now + timedelta(minutes=2))
    assert "(not applied)" in answer["Subject"]  # Bob's mail is read at once
    club.referee.close()
