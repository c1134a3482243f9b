"""Failed inbound mail: ``status`` shows it (when, from whom, why), and the
operator reads it again (``referee inbound --retry``), once.

The referee keeps the record of a failed mail, not the mail: the mailbox
does. Reading again fetches it from there by its source key, in the next
pass, and refers it in one transaction with its record, so it is refereed
once; a mail the mailbox no longer has is recorded failed again, saying so.
The IMAP twin, through the CLI, is in ``tests/test_health.py``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games import KINDS, Registry
from referee.service.errors import RefereeError
from referee.store import models as m
from tests.test_referee import ALICE, BOB, Club, body, new_goofspiel


def broken(*_args: object, **_kw: object) -> None:
    raise RuntimeError("the template engine broke")


def records(club: Club) -> list[tuple[str, str]]:
    with club.referee.sessions() as db:
        return [(r.status, r.note) for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]


def bids(club: Club) -> list[tuple[int, list[int]]]:
    with club.referee.sessions() as db:
        return [(a.seat, a.action["args"]) for a in db.scalars(
            select(m.ActionLog).where(m.ActionLog.source == "player").order_by(m.ActionLog.id))]


def failed_bid(club: Club, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """A game, and Alice's bid that failed to be refereed; (tag, record id)."""
    tag = new_goofspiel(club)
    club.poll()
    for built in ("answer", "reply"):  # the answer, and the note of a fault
        monkeypatch.setattr(club.referee.delivery, built, broken)
    club.send(ALICE, "bid 5", subject=f"[{tag}] my bid")
    assert club.poll(club.now + timedelta(minutes=1)) == []
    monkeypatch.undo()
    (failed,) = club.referee.health.inbound()
    return tag, failed["id"]


def test_status_shows_each_failed_mail_with_when_who_and_why(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    tag, iid = failed_bid(club, monkeypatch)
    summary = club.referee.health.summary()
    reason = "internal error: RuntimeError: the template engine broke"
    assert summary["inbound"] == {"failed": 1, "retrying": 0, "waiting": 0, "recent": [{
        "id": iid, "received_at": "2026-03-02T12:01:00Z", "sender": ALICE,
        "subject": f"[{tag}] my bid", "state": "failed", "reason": reason,
        "source": summary["inbound"]["recent"][0]["source"]}]}
    assert summary["inbound"]["recent"][0]["source"].startswith("maildir:")


def test_a_failed_mail_read_again_is_refereed_once_and_answered_once(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    _, iid = failed_bid(club, monkeypatch)
    club.referee.health.retry_inbound(iid)
    assert club.referee.health.summary()["inbound"]["retrying"] == 1
    (answer,) = club.poll(club.now + timedelta(minutes=2))
    assert "DONE (bid 5)" in body(answer) and answer["To"] == f"Alice <{ALICE}>"
    assert records(club) == [("processed", "processed")]  # its own record, no second one
    assert bids(club) == [(1, [5])]
    assert club.poll(club.now + timedelta(minutes=3)) == []  # and never again
    assert bids(club) == [(1, [5])]
    with pytest.raises(RefereeError, match=f"There is no failed inbound mail {iid} "):
        club.referee.health.retry_inbound(iid)
    assert club.referee.health.summary()["inbound"] == {"failed": 0, "retrying": 0,
                                                        "waiting": 0, "recent": []}


def test_a_mail_read_again_that_fails_again_stays_failed_and_is_not_answered_twice(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    _, iid = failed_bid(club, monkeypatch)
    club.referee.health.retry_inbound(iid)
    for built in ("answer", "reply"):  # the answer, and the note of a fault
        monkeypatch.setattr(club.referee.delivery, built, broken)
    assert club.poll(club.now + timedelta(minutes=2)) == []
    monkeypatch.undo()
    assert records(club) == [
        ("failed", "internal error: RuntimeError: the template engine broke")]
    assert bids(club) == []
    club.referee.health.retry_inbound(iid)  # fixed now: read it once more
    (answer,) = club.poll(club.now + timedelta(minutes=3))
    assert "DONE (bid 5)" in body(answer)


def test_a_mail_gone_from_the_mailbox_is_not_read_again_and_says_so(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    _, iid = failed_bid(club, monkeypatch)
    for old in (club.root / "in" / "cur").iterdir():
        old.unlink()
    club.referee.health.retry_inbound(iid)
    assert club.poll(club.now + timedelta(minutes=2)) == []
    assert records(club) == [("failed", "not read again: it is no longer in the Maildir (it "
                              "had failed: internal error: RuntimeError: the template engine "
                              "broke)")]


def test_a_copy_that_came_while_the_mail_had_failed_does_not_stop_it_being_read_again(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    tag, iid = failed_bid(club, monkeypatch)
    with club.referee.sessions() as db:
        mid = db.get(m.Inbound, iid).message_id  # type: ignore[union-attr]
    club.send(ALICE, "bid 5", subject=f"[{tag}] my bid", message_id=f"<{mid}>")
    assert club.poll(club.now + timedelta(minutes=2)) == []  # the copy: a duplicate
    club.referee.health.retry_inbound(iid)
    (answer,) = club.poll(club.now + timedelta(minutes=3))
    assert "DONE (bid 5)" in body(answer) and bids(club) == [(1, [5])]


def test_reading_again_only_touches_the_mail_asked_for(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    tag, iid = failed_bid(club, monkeypatch)
    club.send(BOB, "bid 3", subject=f"[{tag}]")
    (bob,) = club.poll(club.now + timedelta(minutes=2))
    assert "DONE (bid 3)" in body(bob)
    outcome = club.referee.intake.process(b"From: x@y\r\n\r\nbid 1\r\n", "maildir:x",
                                          club.now, again=iid)
    assert outcome.status == "duplicate"  # not marked to read again: nothing done
    assert [s for s, _ in records(club)] == ["failed", "processed"]


def test_the_cli_lists_failed_mail_and_reads_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    club = Club(tmp_path)
    tag, iid = failed_bid(club, monkeypatch)
    config = tmp_path / "referee.toml"
    config.write_text(
        f'[referee]\naddress = "{club.config.referee.address}"\n'
        f'database = "{club.config.referee.database}"\n'
        f'[mailbox]\nkind = "maildir"\npath = "in"\n'
        f'[smtp]\nkind = "maildir"\npath = "out"\n', encoding="utf-8")
    cli = ["-c", str(config)]
    assert main([*cli, "status", tag]) == 0
    out = capsys.readouterr().out
    assert ("inbound: 1 failed (see: referee inbound)\n"
            f"  {iid} at 2026-03-02T12:01:00Z from {ALICE}: internal error: RuntimeError: "
            "the template engine broke\n") in out
    assert main([*cli, "inbound"]) == 0
    assert capsys.readouterr().out == (
        f"{iid:>6}  failed  2026-03-02T12:01:00Z  from {ALICE}  '[{tag}] my bid'\n"
        "        internal error: RuntimeError: the template engine broke\n")
    assert main([*cli, "inbound", "--retry", "all", "--json"]) == 0
    assert capsys.readouterr().out == f"1 mail(s) to read again\n{iid:>6}  read again: processed\n"
    (answer,) = club.new_mail()
    assert "DONE (bid 5)" in body(answer)
    assert main([*cli, "inbound"]) == 0
    assert capsys.readouterr().out == "No inbound mail failed.\n"
    assert main([*cli, "inbound", "--retry", str(iid)]) == 1
    assert f"There is no failed inbound mail {iid} " in capsys.readouterr().err
    club.referee.close()


def test_a_mail_to_a_game_whose_package_is_gone_waits_and_is_refereed_once_it_is_back(
        club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a failure and not answered: its record waits, the game's
    deadlines wait with it, and the first pass that finds the kind again
    referees the mail once, then fires what fell due. (The same through a
    real uninstall, over IMAP and the CLI: ``tests/test_e2e_packages.py``.)"""
    registry = Registry(KINDS, group=None)  # no package but the referee's own kinds
    monkeypatch.setattr(referee.games, "GAMES", registry)
    tag = new_goofspiel(club)
    club.poll()
    engine = registry.pop("goofspiel")  # the package is gone
    club.send(ALICE, "bid 5", subject=f"[{tag}] my bid")
    assert club.poll(club.now + timedelta(days=4)) == []  # past the deadline: nothing moves
    gone = (f"waiting: {tag}: its game package is not installed (kind goofspiel: install the "
            "package that declares it under the entry-point group pbm_referee.games)")
    assert records(club) == [("waiting", gone)]
    assert club.referee.health.summary()["inbound"]["waiting"] == 1
    (listed,) = club.referee.health.inbound()
    assert (listed["state"], listed["reason"]) == ("waiting", gone)
    with pytest.raises(RefereeError, match="waits for its game's package"):
        club.referee.health.retry_inbound(listed["id"])
    assert club.poll(club.now + timedelta(minutes=1)) == []  # still gone: still waiting
    assert [s.unserved.kind for s in club.referee.guests.stalled()] == ["goofspiel"]

    registry["goofspiel"] = engine  # back
    mails = club.poll(club.now + timedelta(minutes=1))
    answers = [msg for msg in mails if "DONE (bid 5)" in body(msg)]
    assert len(answers) == 1 and answers[0]["To"] == f"Alice <{ALICE}>"
    assert records(club) == [("processed", "processed")]  # its own record, no second one
    assert bids(club) == [(1, [5])]
    with club.referee.sessions() as db:  # Bob's deadline, long past, fires now
        assert db.scalars(select(m.ActionLog.seat)
                          .where(m.ActionLog.source == "timeout")).all() == [2]
    club.poll(club.now + timedelta(minutes=1))
    assert bids(club) == [(1, [5])] and club.referee.guests.stalled() == []
