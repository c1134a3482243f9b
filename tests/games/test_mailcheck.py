"""What a player checks from their mail by default (referee/games/mailcheck.py):
the seed the last mail reveals opens the opening's commitment."""

from __future__ import annotations

from referee.games.base import Game
from referee.games.draws import seed_fingerprint
from referee.games.mailcheck import Check, Mail, MailCheck


def _mails(revealed: str) -> list[Mail]:
    return [Mail("[x-1] opening", None, f"  seed-sha256: {seed_fingerprint('s3')}\n"),
            Mail("[x-1] over", None, f"  seed: {revealed}\n")]


def test_a_game_declaring_no_check_has_its_seed_commitment_checked() -> None:
    assert type(Game.mail_check) is MailCheck
    check = Check("x-1", _mails("s3"))
    Game.mail_check(check)
    assert check.result() == []


def test_a_seed_that_does_not_open_the_commitment_is_a_mismatch() -> None:
    check = Check("x-1", _mails("other"))
    MailCheck()(check)
    (problem,) = check.result()
    assert problem.startswith('the mail "[x-1] over": the seed other does not open')


def test_the_draws_are_checked_only_once_the_seed_opens() -> None:
    seen: list[str] = []

    class Drawn(MailCheck):
        def draws(self, check: Check, seed: str) -> None:
            seen.append(seed)

    Drawn()(Check("x-1", _mails("other")))
    Drawn()(Check("x-1", _mails("s3")))
    assert seen == ["s3"]


def test_a_mailbox_without_the_opening_says_which_mail_is_missing() -> None:
    check = Check("x-1", _mails("s3")[1:])
    MailCheck()(check)
    assert check.result() == [
        "the opening mail (with the seed's SHA-256) of x-1 is not in the mailbox"]
