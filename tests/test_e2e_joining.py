"""Who may deal themselves in, and under what name, over the real Postfix
and Dovecot, on SQLite and PostgreSQL (issue 22, "parsing gaps" and "safe
defaults"): a From whose display name is a group holding another player's
address seats and mails no one; two joiners of the same 200-character name
are both seated, the second under a name cut to fit its column, and told
so; with nothing to vouch for joiners (no ``authserv_id``), a join forged
in someone's name seats no one and only its victim hears of it, while a
real joiner is seated once they reply to the confirmation. In each, no one
else is seated or moved. ``tests/service/intake/test_joining_names.py``
and ``test_join_confirmation.py`` hold the same on Maildir."""

from __future__ import annotations

import base64
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import timedelta
from email.utils import formatdate, make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.service.play.session import MAX_SEAT_NAME
from referee.store import models as m
from tests.databases import KINDS, database_url
from tests.mailstack import REPO_ROOT, MailStack
from tests.test_e2e import REF, T0, Post, body, kind, person, referee_command

#: A name as long as a From's display name is read (``headers.MAX_NAME``).
LONG = ("Maximilian Alexander Bartholomew von Habsburg-Lothringen " * 4)[:200].strip()
DAY = timedelta(days=1)
#: Characters XML forbids.
FORBIDDEN = ("\ufffe", "\uffff", "\x08")
#: The authserv-id of the players' mail server in the tests that trust one.
MX = "mail.example.test"


def posts(kind: str, stack: MailStack, tmp_path: Path,
          auth: dict[str, str] | None = None) -> Iterator[Post]:
    for url in database_url(kind, tmp_path):
        p = Post(stack, tmp_path, auth=auth, database=url)
        yield p
        p.close()


@pytest.fixture(params=KINDS)
def post(request: pytest.FixtureRequest, mailstack: MailStack,
         tmp_path: Path) -> Iterator[Post]:
    """The referee as configured by default: no mail server to trust."""
    yield from posts(request.param, mailstack, tmp_path)


@pytest.fixture(params=KINDS)
def vouched(request: pytest.FixtureRequest, mailstack: MailStack,
            tmp_path: Path) -> Iterator[Post]:
    """The referee trusting the Authentication-Results of ``MX``, which
    vouches for every joiner (:func:`join` writes it, as that server would)."""
    yield from posts(request.param, mailstack, tmp_path, auth={"authserv_id": MX})


def tournament(post: Post) -> str:
    """A Land of Agora tournament, open to anyone by mail, with Alice in it."""
    tag = post.referee.operator.create_game("loatcg", [person("alice")], now=T0, seed="names")
    post.poll(T0)
    post.new_mail("alice", 1)
    return tag


def seats(post: Post) -> list[tuple[str, str | None, bool]]:
    """(name, address, bot) of each seat, in order."""
    with post.referee.sessions() as db:
        return [(s.name, s.player.address if s.player else None, s.bot)
                for s in db.scalars(select(m.Seat).order_by(m.Seat.position))]


def members(post: Post, tag: str) -> dict[str, dict[str, int]]:
    """Each member's hand, by name."""
    return {mb["name"]: mb["hand"] for mb in post.state(tag)["members"]}


def join(post: Post, user: str, sender: str, tag: str, hours: int = 1) -> None:
    """``user`` writes "deal me in" from their own server, under ``sender``
    as typed (an EmailMessage would quote a group-like name, or refuse it),
    dated ``hours`` after T0. Where the referee trusts ``MX``, it vouches
    for the sender's domain."""
    mid = make_msgid(idstring=user, domain="mua.example.test")
    vouch = (f"Authentication-Results: {MX}; dmarc=pass header.from=example.test\r\n"
             if post.config.auth.authserv_id == MX else "")
    date = formatdate(T0.timestamp() + hours * 3600, usegmt=True)
    raw = (f"{vouch}From: {sender}\r\nTo: {REF}\r\nSubject: [{tag}] deal me in\r\n"
           f"Date: {date}\r\nMessage-ID: {mid}\r\n"
           "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
           "deal me in\r\n")
    post.stack.send(raw.encode(), user, REF)
    post.in_referee_inbox += 1


def test_a_from_naming_a_group_with_another_players_address_seats_and_mails_no_one(
        post: Post) -> None:
    """Dave writes with a display name that parses as a group holding
    Carol's address: Carol was seated and dealt cards in his place."""
    tag = tournament(post)
    hands = members(post, tag)
    join(post, "dave", f"Dave: {post.stack.address('carol')}; <{post.stack.address('dave')}>",
         tag)
    post.poll(T0 + DAY)
    assert seats(post) == [("Alice", post.stack.address("alice"), False)]
    assert members(post, tag) == hands
    with post.referee.sessions() as db:
        (record,) = db.scalars(select(m.Inbound))
        outbox = list(db.scalars(select(m.Outbox)))
        players = [p.address for p in db.scalars(select(m.Player))]
    assert (record.sender, record.status) == ("", "failed")
    assert record.note == "unreadable: the From is a group of addresses, not one sender"
    assert players == [post.stack.address("alice")]
    assert [r.recipients for r in outbox] == [[post.stack.address("alice")]]  # the opening
    assert post.stack.count("carol") == post.stack.count("dave") == 0
    post.assert_no_more_mail("alice")


def test_two_joiners_of_one_long_name_are_both_seated_within_the_column(
        vouched: Post) -> None:
    """On PostgreSQL the second, "<200 characters> 2", overflowed the
    seats' name column: the join failed, every time the mail was read."""
    post = vouched
    tag = tournament(post)
    alice = members(post, tag)["Alice"]
    join(post, "erin", f'"{LONG}" <{post.stack.address("erin")}>', tag)
    join(post, "frank", f'"{LONG}" <{post.stack.address("frank")}>', tag)
    post.poll(T0 + DAY)
    second = LONG[:MAX_SEAT_NAME - 2].rstrip() + " 2"
    assert seats(post) == [("Alice", post.stack.address("alice"), False),
                           (LONG, post.stack.address("erin"), False),
                           (second, post.stack.address("frank"), False)]
    assert members(post, tag)["Alice"] == alice  # no one else moved
    assert sorted(sum(h.values()) for n, h in members(post, tag).items() if n != "Alice") == [
        5, 5]
    with post.referee.sessions() as db:
        statuses = [r.status for r in db.scalars(select(m.Inbound))]
    assert statuses == ["processed", "processed"]
    told = ("Your name is too long for a seat here (at most 200 characters), so you play "
            f"as: {second}")
    (frank,) = [x for x in post.new_mail("frank", 1) if "deal me in" in body(x)]
    assert told in " ".join(body(frank).split())
    assert all("too long" not in body(x) for x in post.stack.fetch_all("erin"))


def test_a_forged_join_seats_no_one_and_a_real_joiner_is_seated_once_they_confirm(
        post: Post) -> None:
    """Frank writes "deal me in" as Carol: before, Carol was seated and
    dealt cards, and nothing could tell. Now Carol alone is asked to
    confirm, and, as she does not, nobody is seated; Dave, who asks for
    himself, replies to his request and is seated as a join ever was."""
    tag = tournament(post)
    hands = members(post, tag)
    carol, dave = post.stack.address("carol"), post.stack.address("dave")
    join(post, "frank", f"Carol <{carol}>", tag)
    join(post, "dave", f"Dave <{dave}>", tag)
    post.poll(T0 + DAY)
    (carols,) = post.new_mail("carol", 1)
    (daves,) = post.new_mail("dave", 1)
    for request, who in ((carols, carol), (daves, dave)):
        assert kind(request) == "confirm_join" and request["To"].addresses[0].addr_spec == who
        assert request["Subject"] == f"[{tag}] To take a seat, reply to this mail"
    confirm = daves["Reply-To"].addresses[0].addr_spec
    assert confirm.startswith(f"referee+join-{tag}-") and confirm.endswith("@example.test")
    assert carols["Reply-To"].addresses[0].addr_spec not in (confirm, REF)
    assert seats(post) == [("Alice", post.stack.address("alice"), False)]
    assert members(post, tag) == hands
    post.assert_no_more_mail("alice", "frank")

    post.write("dave", "Yes please!", subject=f"Re: {daves['Subject']}", to=[confirm],
               reply_to=daves)
    post.poll(T0 + DAY + timedelta(hours=1))
    (seated,) = post.new_mail("dave", 1)
    assert kind(seated) == "table transcript joined dealt"
    assert "> deal me in\n  DONE (join): Dave deals emself in and draws 5 cards." in body(seated)
    assert seats(post) == [("Alice", post.stack.address("alice"), False),
                           ("Dave", dave, False)]
    assert sum(members(post, tag)["Dave"].values()) == 5
    assert members(post, tag)["Alice"] == hands["Alice"]  # no one else moved
    # Days on, Carol's request has run out unanswered: still no seat for her.
    post.poll(T0 + 5 * DAY)
    assert [name for name, _, _ in seats(post)] == ["Alice", "Dave"]
    post.assert_no_more_mail("carol", "frank")
    with post.referee.sessions() as db:
        addresses = sorted(db.scalars(select(m.Player.address)))
    assert addresses == [post.stack.address("alice"), dave]


#: Names that read as "Alice" and are not "Alice" as written (issue 34,
#: "names that read as another's"), each from a joiner of their own.
LOOKALIKES = {
    "bob": "=?utf-8?b?" + base64.b64encode("\u0410lice".encode()).decode() + "?=",  # Cyrillic А
    "carol": "=?utf-8?b?" + base64.b64encode("Al\u200bice".encode()).decode() + "?=",
    "dave": "=?utf-8?b?" + base64.b64encode("\uff21lice".encode()).decode() + "?=",  # fullwidth
    "erin": "=?utf-8?b?" + base64.b64encode("\u202eecilA".encode()).decode() + "?=",  # RLO
}


def test_names_that_read_as_a_seated_players_are_refused_and_alice_still_moves(
        vouched: Post) -> None:
    """`Аlice` (Cyrillic А), `Al\\u200bice`, `Ａlice` and a right-to-left
    override shown as "Alice" were each seated beside Alice, and the club
    read four Alices. Now each is refused, told what to write instead,
    and seated under a name of their own when they write from one; Alice's
    own offer is applied as hers, and no one else is moved."""
    post = vouched
    tag = tournament(post)
    hands = members(post, tag)
    for user, name in LOOKALIKES.items():
        join(post, user, f"{name} <{post.stack.address(user)}>", tag)
    post.poll(T0 + DAY)
    assert seats(post) == [("Alice", post.stack.address("alice"), False)]
    assert members(post, tag) == hands
    refused = ("Your mail reached the referee, but it gives no one a seat in "
               f"{tag}: the name your mail comes from reads as \"Alice\", a player there, "
               "and no two players of a game may look alike. If you are Alice, write from "
               "the address you play from. Else write again from a name that reads "
               "differently: set the name your mail program shows (for example your full "
               "name), and write deal me in")
    for user in LOOKALIKES:
        (told,) = post.new_mail(user, 1)
        assert kind(told) == "name_refused"
        assert told["Subject"] == f"Re: [{tag}] deal me in (no seat)"
        assert refused in " ".join(body(told).split())
    with post.referee.sessions() as db:
        notes = [(r.status, r.note)
                 for r in db.scalars(select(m.Inbound).order_by(m.Inbound.id))]
    assert notes == [("refused", f"join refused: the name reads as 'Alice', a seat of {tag}")
                     ] * len(LOOKALIKES)
    post.assert_no_more_mail("alice")

    # Alice moves: her discard is applied, as hers.
    card = next(c for c, n in sorted(hands["Alice"].items()) if n)
    post.write("alice", f"discard {card}", subject=f"[{tag}] a card less")
    # Bob writes again from a name of his own: seated under it.
    join(post, "bob", f"Bob Lee <{post.stack.address('bob')}>", tag, hours=25)
    post.poll(T0 + DAY + timedelta(hours=1))
    answers = [body(x) for x in post.stack.fetch_all("alice") if "discard" in body(x)]
    assert any(f"> discard {card}\n  DONE" in text for text in answers), answers
    assert members(post, tag)["Alice"] == {**hands["Alice"], card: hands["Alice"][card] - 1}
    assert [name for name, _, _ in seats(post)] == ["Alice", "Bob Lee"]
    with post.referee.sessions() as db:
        names = {p.address: p.name for p in db.scalars(select(m.Player))}
    assert names[post.stack.address("bob")] == "Bob Lee"
    assert names[post.stack.address("carol")] == ""  # the name refused is not kept


def test_a_joiner_named_with_characters_xml_forbids_leaves_every_feed_well_formed(
        vouched: Post) -> None:
    """Issue 34: a name with U+FFFE (or U+FFFF, a lone control) made
    index.atom and the game's feed ill-formed XML, which feed readers drop
    whole. Carol deals herself in under such a name, over the real servers;
    ``referee poll`` writes the pages: she is seated, and every feed parses
    and no page holds such a character."""
    post = vouched
    tag = tournament(post)
    with post.config_path.open("a", encoding="utf-8") as f:
        f.write('[web]\npath = "web"\n')
    name = "Car\ufffeol\uffff D\x08ee"
    encoded = base64.b64encode(name.encode()).decode()
    join(post, "carol", f"=?utf-8?b?{encoded}?= <{post.stack.address('carol')}>", tag)
    post.stack.wait_for("referee", post.in_referee_inbox)
    done = subprocess.run(referee_command(post, "poll", "--now", (T0 + DAY).isoformat()),
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    seated = [(n, a) for n, a, _ in seats(post) if a == post.stack.address("carol")]
    assert len(seated) == 1 and not any(c in seated[0][0] for c in FORBIDDEN), seated
    web = post.config_path.parent / "web"
    feeds = sorted(p.name for p in web.glob("*.atom"))
    assert feeds == ["index.atom", f"{tag}.atom"], feeds
    for feed in feeds:
        ET.fromstring((web / feed).read_bytes())  # expat refuses what XML forbids
    for page in web.iterdir():
        text = page.read_text(encoding="utf-8")
        assert not any(c in text for c in FORBIDDEN), page.name
