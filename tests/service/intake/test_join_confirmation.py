"""A stranger's join that nothing vouches for (issue 22, "safe defaults"):
with no ``authserv_id``, or no aligned pass in its Authentication-Results,
"deal me in" seats no one; the address in From is asked to reply, to a
signed confirmation address, and only its reply seats it. So a forged From
deals no one in, and all replies to such strangers together stay within
``[limits] stranger_replies_per_day``. On Maildir and SQLite; the same over
the real Postfix and Dovecot is in ``tests/test_e2e_joining.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.store import models as m
from tests.test_referee import SIGNATURE, T0, Club, body, to

LIST = "players@club.test"
ANN, DAN, EVE = "Ann <ann@club.test>", "Dan <dan@club.test>", "Eve <eve@else.test>"
MX = "mx.club.test"
DAY = timedelta(days=1)


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    """A club with a list and the default [auth]: no authserv_id."""
    c = Club(tmp_path, public_list=LIST)
    yield c
    c.referee.close()


def tournament(club: Club) -> str:
    """A Land of Agora tournament, which anyone may join by mail; Ann in it."""
    tag = club.referee.operator.create_game("loatcg", [ANN], now=T0, seed="confirm")
    club.poll(T0)
    return tag


def seats(club: Club) -> list[tuple[str, str | None, bool]]:
    with club.referee.sessions() as db:
        return [(s.name, s.player.address if s.player else None, s.bot)
                for s in db.scalars(select(m.Seat).order_by(m.Seat.position))]


def players(club: Club) -> list[str]:
    with club.referee.sessions() as db:
        return sorted(db.scalars(select(m.Player.address)))


def members(club: Club, tag: str) -> list[str]:
    return [mb["name"] for mb in club.referee.reading.stored_state(tag)["members"]]


def reply_to(msg: EmailMessage) -> str:
    return str(msg["Reply-To"].addresses[0].addr_spec)


def answer(club: Club, sender: str, request: EmailMessage, to_: str | None = None) -> None:
    """``sender`` replies to ``request`` as a mail client does: to its
    Reply-To (or ``to_``), quoting it, with nothing else written."""
    quoted = "".join(f"> {line}\n" for line in body(request).splitlines())
    club.send(sender, f"On Tuesday, Club Referee wrote:\n{quoted}",
              subject=f"Re: {request['Subject']}", to=to_ or reply_to(request),
              headers={"In-Reply-To": str(request["Message-ID"])})


def asked(club: Club, tag: str, sender: str = DAN, when: timedelta = DAY) -> EmailMessage:
    """``sender`` writes "deal me in"; the request to confirm they get."""
    club.send(sender, "Hello!\n\ndeal me in\n", subject=f"[{tag}] may I play?")
    (request,) = club.poll(T0 + when)
    assert request["X-Referee-Mail"] == "confirm_join" and to(request) == sender
    return request


def test_a_join_nothing_vouches_for_seats_no_one_and_asks_the_address_in_from(
        club: Club) -> None:
    """Mallory writes "deal me in" as Dan: before, Dan was seated and dealt
    cards. Now Dan alone is asked, and nobody is seated or told anything."""
    tag = tournament(club)
    request = asked(club, tag)
    assert request["Subject"] == f"[{tag}] To take a seat, reply to this mail"
    assert request["Auto-Submitted"] == "auto-replied"
    assert request["Cc"] is None
    assert body(request) == f"""\
Hello,

This is Club Referee, a robot that referees games played by email.
A mail from this address asked to join the Land of Agora tournament [{tag}]
("deal me in").

To take your seat, reply to this mail, from this address, by
Sat 07 Mar 2026 00:00 UTC. What you write in the reply does not matter.

If you did not ask to join, do nothing: no one takes a seat in your name
unless you reply.

{SIGNATURE}"""
    address = reply_to(request)
    assert address.startswith(f"referee+join-{tag}-20260303-") and address.endswith(
        "@club.test")
    assert seats(club) == [("Ann", "ann@club.test", False)]
    assert players(club) == ["ann@club.test"] and members(club, tag) == ["Ann"]
    with club.referee.sessions() as db:
        record = db.scalars(select(m.Inbound).order_by(m.Inbound.id.desc())).first()
    assert record is not None and record.status == "to confirm"


def test_a_reply_from_the_asked_address_seats_it_once(club: Club) -> None:
    tag = tournament(club)
    request = asked(club, tag)
    answer(club, DAN, request)
    post, dans = club.poll(T0 + DAY + timedelta(hours=1))
    # Seated exactly as a join vouched for: the join to the list, then his
    # answer and his cards.
    assert to(post) == LIST and post["X-Referee-Mail"] == "joined"
    assert to(dans) == DAN and dans["X-Referee-Mail"] == "table transcript dealt"
    assert "Since your last mail:\n  You: deal me in (done)\n\n" in body(dans)
    assert seats(club) == [("Ann", "ann@club.test", False), ("Dan", "dan@club.test", False)]
    assert members(club, tag) == ["Ann", "Dan"]
    assert club.referee.reading.replay(tag) == club.referee.reading.stored_state(tag)
    # A second reply (the same, sent again) seats him no second time.
    answer(club, DAN, request)
    (again,) = club.poll(T0 + DAY + timedelta(hours=2))
    assert to(again) == DAN
    assert ("> deal me in\n  REFUSED (join): You are a Member already; dealing yourself in "
            "again draws nothing (rule 3).") in body(again)
    assert members(club, tag) == ["Ann", "Dan"] and len(seats(club)) == 2


def test_a_reply_from_another_address_seats_no_one(club: Club) -> None:
    """Eve, who learnt Dan's confirmation address, cannot take his seat nor
    one of her own with it."""
    tag = tournament(club)
    request = asked(club, tag)
    answer(club, EVE, request)
    (refusal,) = club.poll(T0 + DAY + timedelta(hours=1))
    assert to(refusal) == EVE
    assert refusal["Subject"] == f"Re: [{tag}] To take a seat, reply to this mail (no seat)"
    assert body(refusal) == f"""\
Your mail reached the referee, but it gives no one a seat:
It answers no request to confirm that the referee sent to eve@else.test. Such a request works only from the address it went to: to join from this one, ask to join from it.

{SIGNATURE}"""  # noqa: E501
    assert seats(club) == [("Ann", "ann@club.test", False)]
    assert players(club) == ["ann@club.test"]


@pytest.mark.parametrize("change", ["the day", "the game", "the signature"])
def test_a_changed_confirmation_address_seats_no_one(club: Club, change: str) -> None:
    """The address keeps no state: its day, game and sender are signed."""
    tag = tournament(club)
    other = club.referee.operator.create_game("loatcg", [ANN], now=T0, seed="other")
    club.poll(T0)
    request = asked(club, tag)
    local, _, domain = reply_to(request).partition("@")
    head, day, mac = local.rsplit("-", 2)
    forged = {"the day": f"{head}-20260310-{mac}",
              "the game": f"{head.replace(tag, other)}-{day}-{mac}",
              "the signature": f"{head}-{day}-{mac[::-1]}"}[change]
    answer(club, DAN, request, to_=f"{forged}@{domain}")
    (refusal,) = club.poll(T0 + DAY + timedelta(hours=1))
    assert to(refusal) == DAN and "(no seat)" in refusal["Subject"]
    assert seats(club) == [("Ann", "ann@club.test", False), ("Ann", "ann@club.test", False)]
    assert members(club, tag) == members(club, other) == ["Ann"]


def test_a_reply_after_the_confirmation_ran_out_seats_no_one_and_asks_again(
        club: Club) -> None:
    tag = tournament(club)
    request = asked(club, tag)
    answer(club, DAN, request)
    (again,) = club.poll(T0 + 5 * DAY)  # Sat 07 Mar 12:00, past its end
    assert again["X-Referee-Mail"] == "confirm_join" and to(again) == DAN
    assert (f"You answered a request to confirm that had run out, so you have no seat\n"
            f"yet in the Land of Agora tournament [{tag}]. Here is a new one.\n") in body(again)
    assert "by\nWed 11 Mar 2026 00:00 UTC." in body(again)
    assert reply_to(again) != reply_to(request)
    assert seats(club) == [("Ann", "ann@club.test", False)]
    answer(club, DAN, again)
    club.poll(T0 + 5 * DAY + timedelta(hours=1))
    assert members(club, tag) == ["Ann", "Dan"]


def test_a_reply_after_the_game_ended_seats_no_one(club: Club) -> None:
    tag = tournament(club)
    request = asked(club, tag)
    club.referee.operator.cancel_game(tag, now=T0 + DAY)
    club.poll(T0 + DAY)
    answer(club, DAN, request)
    (refusal,) = club.poll(T0 + DAY + timedelta(hours=1))
    assert to(refusal) == DAN and body(refusal).startswith(
        "Your mail reached the referee, but it gives no one a seat:\n"
        f"The game {tag} is over, so no one can join it any more.\n")
    assert players(club) == ["ann@club.test"]


def test_an_address_is_asked_at_most_once_a_day(club: Club) -> None:
    """A forger writing "deal me in" as Dan again and again: Dan hears once."""
    tag = tournament(club)
    for _ in range(3):
        club.send(DAN, "deal me in", subject=f"[{tag}] me")
    assert [x["X-Referee-Mail"] for x in club.poll(T0 + DAY)] == ["confirm_join"]
    club.send(DAN, "deal me in", subject=f"[{tag}] me")
    assert club.poll(T0 + DAY + timedelta(hours=23)) == []
    club.send(DAN, "deal me in", subject=f"[{tag}] me")
    assert [x["X-Referee-Mail"] for x in club.poll(T0 + 2 * DAY + timedelta(minutes=1))] == [
        "confirm_join"]


def test_all_strangers_together_get_at_most_the_days_replies(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Forged joins and stranger mail under many names: replies stop at
    ``stranger_replies_per_day``, said once in the log, and start again a
    day after the first."""
    club = Club(tmp_path, public_list=LIST, limits={"stranger_replies_per_day": 3})
    tag = tournament(club)
    for n in range(4):
        club.send(f"victim{n}@else.test", "deal me in", subject=f"[{tag}] me")
    club.send("someone@else.test", "what is this?", subject="hi")
    with caplog.at_level(logging.WARNING):
        mails = club.poll(T0 + DAY)
        club.send("victim9@else.test", "deal me in", subject=f"[{tag}] me")
        assert club.poll(T0 + DAY + timedelta(hours=1)) == []
    assert [(to(x), x["X-Referee-Mail"]) for x in mails] == [
        (f"victim{n}@else.test", "confirm_join") for n in range(3)]
    over = [r.getMessage() for r in caplog.records if "stranger_replies_per_day" in r.getMessage()]
    assert over == ["3 replies to strangers nothing vouches for since 2026-03-03 12:00 UTC "
                    "([limits] stranger_replies_per_day): no more until 2026-03-04 12:00 UTC"]
    club.send("someone@else.test", "what is this?", subject="hi")
    (told,) = club.poll(T0 + 2 * DAY)
    assert to(told) == "someone@else.test" and told["X-Referee-Mail"] == "stranger"
    assert seats(club) == [("Ann", "ann@club.test", False)]
    club.referee.close()


def test_a_join_the_mail_server_vouches_for_seats_at_once_and_one_it_disowns_gets_nothing(
        tmp_path: Path) -> None:
    club = Club(tmp_path, public_list=LIST, auth={"authserv_id": MX})
    tag = tournament(club)
    club.send(EVE, "deal me in", subject=f"[{tag}] me", headers={
        "Authentication-Results": f"{MX}; dmarc=fail header.from=else.test"})
    assert club.poll(T0 + DAY) == []
    club.send(DAN, "deal me in", subject=f"[{tag}] me", headers={
        "Authentication-Results": f"{MX}; dkim=pass header.d=club.test"})
    post, dans = club.poll(T0 + DAY)  # the join to the list, and Dan's mail
    assert to(post) == LIST and "You: deal me in (done)" in body(dans)
    assert members(club, tag) == ["Ann", "Dan"] and "eve@else.test" not in players(club)
    club.referee.close()


def test_in_verified_mode_a_stranger_who_confirms_is_seated(tmp_path: Path) -> None:
    """Before, verified mode with nothing to vouch for a stranger let no
    stranger join at all; the reply to the confirmation vouches for them,
    as a private reply address does for a player."""
    club = Club(tmp_path, public_list=LIST, auth={"require": "verified"})
    tag = tournament(club)
    request = asked(club, tag)
    answer(club, DAN, request)
    post, dans = club.poll(T0 + DAY + timedelta(hours=1))  # the join to the list, Dan's mail
    assert to(post) == LIST and "You: deal me in (done)" in body(dans)
    assert members(club, tag) == ["Ann", "Dan"]
    # From then on his mail counts as any player's: at his private address.
    club.send(DAN, "hand", subject=f"[{tag}] cards")
    (refused,) = club.poll(T0 + DAY + timedelta(hours=2))
    assert "(not applied)" in refused["Subject"]
    club.referee.close()

