"""The clock's judgement, pass by pass (``service/clock.py``): a mark the
clock moves on while passes go on, mail that vouches for it, a jump with
no mail, a clock behind the mail, and the operator's word. The CLI over
the real servers is in ``tests/test_clock.py``."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from referee.service.clock import Clock, ClockVerdict, clock_against
from tests.test_referee import Club

T = datetime(2026, 3, 2, 12, 0)
MINUTE, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)


def fresh_clock(tmp_path: Path, mail: datetime | None = None) -> Clock:
    clock = Club(tmp_path).referee.clock
    clock.first_mark(T)
    if mail is not None:
        clock.saw_mail(mail, "imap:referee/INBOX")
    return clock


def test_passes_every_few_minutes_keep_a_quiet_clubs_clock_trusted(tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path, mail=T - 3 * DAY)  # no mail for three days
    for n in range(1, 5):
        verdict = clock.judge(T + n * 5 * MINUTE)
        assert (verdict.held, verdict.warning) == (False, None)


def test_a_jump_of_a_day_with_no_mail_holds_until_confirmed(tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path, mail=T - 3 * DAY)
    assert not clock.judge(T + 5 * MINUTE).held
    jumped = clock.judge(T + DAY)
    assert jumped.held and jumped.warning is not None
    assert "24 hours after the newest mail" in jumped.warning
    assert clock.judge(T + DAY + 5 * MINUTE).held  # still: the mark stays where it was right
    assert clock.warning() is not None
    confirmed = clock.judge(T + DAY + 10 * MINUTE, confirmed=True)
    assert (confirmed.held, confirmed.warning) == (False, None)
    assert confirmed.note is not None and "after the newest mail" in confirmed.note
    assert clock.judge(T + DAY + 15 * MINUTE) == ClockVerdict()  # trusted on
    assert clock.warning() is None


def test_mail_that_came_meanwhile_vouches_for_the_time_away(tmp_path: Path) -> None:
    """Stopped for two days while mail kept coming: the newest mail says
    the world is there too."""
    clock = fresh_clock(tmp_path, mail=T - HOUR)
    assert not clock.judge(T).held
    clock.saw_mail(T + 2 * DAY - 10 * MINUTE, "imap:referee/INBOX")
    assert clock.judge(T + 2 * DAY) == ClockVerdict()


def test_an_older_mail_filed_later_does_not_move_the_mails_time_back(tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path, mail=T)
    clock.saw_mail(T - 5 * DAY, "imap:referee/INBOX")  # moved back in by a mail client
    assert clock.judge(T + 5 * MINUTE) == ClockVerdict()


def test_a_clock_behind_the_mail_warns_and_holds_nothing(tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path, mail=T + 10 * DAY)
    verdict = clock.judge(T)
    assert not verdict.held
    assert verdict.warning is not None and "10 days before the newest mail" in verdict.warning


def test_the_config_key_trusts_the_clock_always_and_says_it_only_as_a_note(
        tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path, mail=T)
    verdict = clock.judge(T + 10 * DAY, always=True)
    assert (verdict.held, verdict.warning) == (False, None) and verdict.note
    assert clock.warning() is None


def test_with_no_mail_ever_there_is_nothing_to_compare(tmp_path: Path) -> None:
    clock = fresh_clock(tmp_path)
    assert clock.judge(T + 10 * DAY) == ClockVerdict()


def test_check_reads_the_imap_servers_clock_in_its_test_mail() -> None:
    assert clock_against(T, T - 5 * MINUTE) is None
    ahead = clock_against(T + 10 * DAY, T)
    assert ahead == ("this machine's clock says 2026-03-12 12:00 UTC, 10 days ahead of the IMAP "
                     "server's (the test mail arrived 2026-03-02 12:00 UTC by its clock): set it "
                     "right (NTP); the deadlines the players are told are off by as much")
    behind = clock_against(T, T + 3 * HOUR)
    assert behind is not None and "3 hours behind the IMAP server's" in behind
