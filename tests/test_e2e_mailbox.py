"""The player's mailbox (issue 21), read over the suite's real Postfix and
Dovecot: how many mails a player gets from the referee, in which order a
mail client shows them, and where a reply to all of a public mail goes.

Everything one mail (or one deadline) causes for one player is one mail;
a game's mails carry strictly increasing ``Date``s, so a client sorting by
date shows them in event order, whichever way round Postfix delivered two
mails sent a moment apart. With a public list the list hears the reports,
not every card, and its posts carry no Reply-To: a reply to all reaches the
list and the referee, and stays public.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid, parsedate_to_datetime
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import REF, T0, Post, body, person
from tests.test_spades_mail import BIDS, DEAL, SCRIPT, SEATING

#: The most mails a player of a Spades round may get from the referee in
#: the default mode, hand, prompts and answers included (issue 21).
ROUND_MOST = 20
#: What a scripted round of Spades (four bids, 13 tricks, each move one
#: mail and one pass) brought each player, the README's table: without a
#: list, and with one (its two posts, the opening and the round's report,
#: included).
#: A receipt answers each bid or card that brought its player no other mail
#: in its pass (issue 37): 15 to 16 and 17 to 18 before receipts.
ROUND_MAILS = {"none": [28, 29, 30, 30], "list": [30, 31, 32, 32]}


def from_referee(stack: MailStack, user: str) -> list[EmailMessage]:
    """The referee's mails in ``user``'s mailbox, in the order they arrived
    (the list's posts among them; the players' own posts left out)."""
    return [x for x in stack.fetch_all(user) if REF in str(x["From"])]


def outbox_number(msg: EmailMessage) -> int:
    return int(str(msg["Message-ID"]).split(".")[1])


def assert_in_order(mails: list[EmailMessage]) -> None:
    """Dated strictly later in the order the referee queued them: a client
    sorting by date shows the events in order."""
    queued = sorted(mails, key=outbox_number)
    dates = [parsedate_to_datetime(str(x["Date"])) for x in queued]
    assert all(a < b for a, b in itertools.pairwise(dates)), [
        (str(x["Subject"]), str(x["Date"])) for x in queued]
    by_date = sorted(mails, key=lambda x: parsedate_to_datetime(str(x["Date"])))
    assert [outbox_number(x) for x in by_date] == [outbox_number(x) for x in queued]


@pytest.fixture
def stack(mailstack: MailStack, monkeypatch: pytest.MonkeyPatch) -> MailStack:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    return mailstack


@pytest.fixture(params=["none", "list"])
def listed(request: pytest.FixtureRequest, stack: MailStack, tmp_path: Path) -> Iterator[Post]:
    extra = {"public_list": stack.list_address} if request.param == "list" else {}
    post = Post(stack, tmp_path, **extra)
    yield post
    post.close()


def test_a_spades_round_reaches_each_player_in_at_most_20_mails_in_order(listed: Post) -> None:
    lst = listed.config.referee.public_list
    players = ["alice", "bob", "carol", "dave"]
    # Every card by mail, as SCRIPT writes it (no forced card plays itself, issue 37).
    tag = listed.referee.operator.create_game("spades", [person(u) for u in players],
                                              now=T0, seed="sp", options={"autoplay": "off"})
    listed.poll(T0)
    moves = [*BIDS, *SCRIPT]
    for n, (name, text) in enumerate(moves, start=1):
        # With a list, the moves go to it, as players of a list game write them.
        listed.write(name.lower(), text, subject=f"[{tag}] move",
                     to=[lst] if lst else [REF])
        listed.poll(T0 + timedelta(minutes=n))
    assert listed.state(tag)["round"] == 2
    with listed.referee.sessions() as db:
        queued = {u: sum(f"{u}@example.test" in r.recipients or (lst in r.recipients if lst
                                                                  else False)
                         for r in db.scalars(select(m.Outbox))) for u in players}
    mails = {u: listed.new_mail(u, queued[u]) for u in players}
    mails = {u: [x for x in got if REF in str(x["From"])] for u, got in mails.items()}
    counts = [len(mails[u]) for u in players]
    assert counts == ROUND_MAILS["list" if lst else "none"]
    # Issue 21's target, for the mail of the game: the receipts come on top.
    assert max(len([x for x in mails[u] if "receipt" not in str(x["X-Referee-Mail"])])
               for u in players) <= ROUND_MOST
    for u in players:
        assert_in_order(mails[u])
        # Every answer to a move rode along: each move of theirs is in a mail.
        text = "\n".join(body(x) for x in mails[u])
        for name, move in moves:
            if name.lower() == u:
                assert f"You: {move} (done)" in text or f"> {move}" in text, (u, move)
    if lst:
        posts = [x for x in mails["bob"] if lst in str(x["To"])]
        assert [str(x["X-Referee-Mail"]) for x in posts] == ["opening", "round_report"]
        assert all(x["Reply-To"] is None and x["List-Post"] == f"<mailto:{lst}>"
                   for x in posts)


def test_a_reply_to_all_of_a_list_post_stays_public_and_a_reply_to_a_secret_one_secret(
        mailstack: MailStack, tmp_path: Path) -> None:
    """Goofspiel's bids are secret (003 rule 2): a bid that reached the list
    is not applied. A reply to all of the list's opening, shaped as s-nail
    (To: the referee and the list) or Gmail (To: the referee, Cc: the list)
    shape it, or mutt's list reply (To: the list, from List-Post), is read
    as public; a reply to a mail for the player alone goes to the referee
    alone and counts."""
    post = Post(mailstack, tmp_path, public_list=mailstack.list_address)
    lst = mailstack.list_address
    try:
        tag = post.referee.operator.create_game("goofspiel", [person("alice"), person("bob")],
                                                now=T0, seed="r")
        post.poll(T0)
        (opening,) = [x for x in from_referee(mailstack, "alice") if lst in str(x["To"])]
        assert opening["Reply-To"] is None and opening["List-Post"] == f"<mailto:{lst}>"
        shapes = {"s-nail": ([REF, lst], []), "gmail": ([REF], [lst]),
                  "mutt list-reply": ([lst], [])}
        for n, (client, (to, cc)) in enumerate(shapes.items(), start=1):
            reply = EmailMessage()
            reply["From"] = person("alice")
            reply["To"] = ", ".join(to)
            if cc:
                reply["Cc"] = ", ".join(cc)
            reply["Subject"] = f"Re: {opening['Subject']}"
            reply["Message-ID"] = make_msgid(idstring=f"alice{n}", domain="mua.example.test")
            reply["In-Reply-To"] = reply["References"] = str(opening["Message-ID"])
            reply.set_content("bid 5\n\nOn Mon, the referee wrote:\n> ROUND 1\n")
            mailstack.send(reply, "alice", [*to, *cc])
            post.in_referee_inbox += 1  # Postfix hands the referee one copy
            post.poll(T0 + timedelta(minutes=n))
            assert post.actions(tag) == [], client
            answer = [x for x in from_referee(mailstack, "alice")
                      if "transcript" in str(x["X-Referee-Mail"])][-1]
            assert "to the list" in " ".join(body(answer).split()), (client, body(answer))
        # A reply to that answer (for Alice alone) goes to her private address.
        private = str(answer["Reply-To"])
        assert "referee+" in private
        post.write("alice", "bid 5", subject=f"Re: {answer['Subject']}",
                   to=[private.rpartition("<")[2].rstrip(">")], reply_to=answer)
        post.poll(T0 + timedelta(minutes=9))
        assert [(s, v, a) for s, v, a, _ in post.actions(tag)] == [(1, "bid", [5])]
    finally:
        post.close()


def test_a_tournaments_report_and_deal_and_a_miser_turn_read_back_in_order(
        mailstack: MailStack, tmp_path: Path) -> None:
    """Round Report 2 goes to the list and each member's 3-card deal (rule 7
    of rule text 002) to them alone, in the same sweep: dated in that order.
    In Miser, each pass is a turn resolved; every player's mails read in
    order too."""
    lst = mailstack.list_address
    post = Post(mailstack, tmp_path, public_list=lst)
    members = ["alice", "bob", "carol"]
    try:
        tag = post.referee.operator.create_game("loatcg", [person(u) for u in members],
                                                now=T0, seed="t")
        post.poll(T0)
        post.poll(T0 + timedelta(days=7, minutes=1))   # Round Report 1
        post.poll(T0 + timedelta(days=14, minutes=2))  # Round Report 2, and the deals
        for u in members:
            mine = from_referee(mailstack, u)
            assert_in_order(mine)
            kinds = [str(x["X-Referee-Mail"]) for x in sorted(mine, key=outbox_number)]
            assert kinds[-2:] == ["round_report", "dealt"], (u, kinds)
        miser = post.referee.operator.create_game("miser", [person(u) for u in members],
                                                  now=T0 + timedelta(days=15), seed="m")
        post.poll(T0 + timedelta(days=15))
        for n in range(1, 4):
            state = post.state(miser)
            who = state["names"][state["turn"]].lower()
            post.write(who, "pass", subject=f"[{miser}] my turn")
            post.poll(T0 + timedelta(days=15, minutes=n))
        assert post.state(miser)["turn_number"] == 4
        for u in members:
            mine = [x for x in from_referee(mailstack, u) if f"[{miser}]" in str(x["Subject"])
                    or miser in str(x["References"])]
            assert len(mine) >= 3, u
            assert_in_order(mine)
        assert tag
    finally:
        post.close()
