"""What a player checks from their mail by default (referee/games/mailcheck.py):
the seed the last mail reveals opens the opening's commitment."""

from __future__ import annotations

from referee.games.base import Game
from referee.games.draws import mixed_seed, seed_fingerprint
from referee.games.mailcheck import Check, Mail, MailCheck, opening_entropy


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


def _mixed_mails(listed: str) -> list[Mail]:
    """A game of a table: the opening lists ``listed`` as seat 2's entropy;
    the last mail states the draws' seed mixed with seat 2's own words."""
    mixed = mixed_seed("s3", [(1, "<a@mua.test>"), (2, "Rain on the roof")])
    return [Mail("[x-1] opening", None, f"  seed-sha256: {seed_fingerprint('s3')}\n"
                 f"  entropy 1: <a@mua.test>\n  entropy 2: {listed}\n"),
            Mail("[x-1] over", None, f"  seed: s3\n  draws' seed: {mixed}\n")]


def test_an_altered_contribution_is_refused_by_the_draws_seed_even_where_draws_agree() -> None:
    """Three prizes have six orders: one altered contribution in six draws
    them as the honest one did. The mix the last mail states tells it."""
    seen: list[str] = []

    class Drawn(MailCheck):
        def draws(self, check: Check, seed: str) -> None:
            seen.append(seed)  # as if every draw agreed

    for listed, problems in (("Rain on the roof", 0), ("Rain on the road", 1)):
        check = Check("x-1", _mixed_mails(listed))
        opening = opening_entropy(check)
        assert opening is not None
        check.entropy = opening[2]
        Drawn()(check)
        assert len(check.result()) == problems, check.result()
    assert check.result()[0].startswith('the mail "[x-1] over": its draws\' seed is ')
    assert seen[0] == mixed_seed("s3", [(1, "<a@mua.test>"), (2, "Rain on the roof")])


def test_a_mailbox_without_the_opening_says_which_mail_is_missing() -> None:
    check = Check("x-1", _mails("s3")[1:])
    MailCheck()(check)
    assert check.result() == [
        "the opening mail (with the seed's SHA-256) of x-1 is not in the mailbox"]


def test_a_late_move_is_read_from_its_sentence_wrapped_as_the_mail_has_it() -> None:
    from referee.games.mailcheck import late_moves

    text = ("The deadline passed: the referee moved for you\n---\n"
            "No card came from you by the deadline, Thu 05 Mar 2026 13:00 UTC: the\n"
            "referee put 5♦ face down for you, drawn at random from your hand, by the\n"
            "house rule for silent players.\nYour next move is due by Mon 09 Mar 2026.\n")
    assert late_moves(text) == [
        ("card", "put 5♦ face down for you, drawn at random from your hand")]
    assert late_moves("No bid came from you by the deadline, Thu: the referee bid 2 for "
                      "you, as rule 7 says.") == [("bid", "bid 2 for you")]
    # A draw's key with a dot in it (a second offer in a turn) ends no sentence.
    assert late_moves("No card came from you by the deadline, Thu: the referee put 5♦ face "
                      "down for you, drawn at random from your hand (the draw "
                      "timeout/2/contract-7.2:card:2), by the house rule.") == [
        ("card", "put 5♦ face down for you, drawn at random from your hand (the draw "
                 "timeout/2/contract-7.2:card:2)")]
    # A stranger's run of half sentences: each read within its window, none matched.
    assert late_moves(" came from you by the deadline, " * 10_000) == []


def test_an_html_part_stating_other_claims_is_refused_as_parts_that_disagree() -> None:
    import re

    mails = [Mail("[x-1] r", None, "ROUND 2 OF 6: THE PRIZE IS 4\n",
                  "ROUND 2 OF 6: THE PRIZE IS 5\n"),
             Mail("[x-1] s", None, "ROUND 3 OF 6: THE PRIZE IS 1\n",
                  "ROUND 3 OF 6: THE PRIZE IS 1\n")]
    check = Check("x-1", mails)
    check.find(re.compile(r"^ROUND \d+ OF \d+: THE PRIZE IS \d+$", re.M))
    check.check_parts()
    (problem,) = check.result()
    assert problem == ('the mail "[x-1] r": its parts disagree: the plain text says "ROUND 2 '
                       'OF 6: THE PRIZE IS 4", the HTML part (what a mail client shows) '
                       '"ROUND 2 OF 6: THE PRIZE IS 5"')
