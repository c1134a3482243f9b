"""Every move answered within one pass (issue 37), over the real servers
(Postfix in and out, Dovecot IMAP): a mail whose moves were all done, and
that brought its sender no other mail, gets a receipt in the same pass,
whatever the sender's mail mode (``mail all``, ``turns``, ``digest``, and
the default), ``digest`` included; a sealed bid's receipt is secret, says
its value to its maker alone, and counts the bids in.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.games import get_game
from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import T0, Post, body, person
from tests.test_e2e_turns import arrived
from tests.test_spades_mail import kinds

MODES = (None, "all", "turns", "digest")


@pytest.fixture(params=[False, True], ids=["no list", "a list"])
def post(request: pytest.FixtureRequest, mailstack: MailStack,
         tmp_path: Path) -> Iterator[Post]:
    p = (Post(mailstack, tmp_path, public_list=mailstack.list_address) if request.param
         else Post(mailstack, tmp_path))
    yield p
    p.close()


def test_a_sealed_bid_is_answered_in_the_same_pass_under_every_mail_mode(post: Post) -> None:
    for n, mode in enumerate(MODES):
        start = T0 + timedelta(days=n)
        tag = post.referee.operator.create_game(
            "goofspiel", [person("alice"), person("bob")], now=start, seed=f"r{n}",
            options={"prize_order": "5,1,6,4,3,2", **({"mail": mode} if mode else {})})
        post.poll(start)
        arrived(post, "alice")
        arrived(post, "bob")
        post.write("alice", "bid 4", subject=f"[{tag}] my bid")
        post.poll(start + timedelta(hours=1))
        # One mail to Alice in that pass, for her alone, whatever her mode.
        (mail,) = arrived(post, "alice")
        text = " ".join(body(mail).split())
        assert str(mail["Subject"]).endswith("(secret)"), (mode, mail["Subject"])
        assert body(mail).startswith(SECRET_NOTE), mode
        if "transcript" in kinds(mail) and "receipt" not in kinds(mail):
            # In mail all (Goofspiel's own default without a list) the whole
            # answer comes at once, as it always did.
            listed = bool(post.config.referee.public_list)
            assert (mode or ("turns" if listed else "all")) == "all", mode
            assert "DONE (bid 4): Your bid of 4 for round 1 is sealed." in text
        else:
            assert "receipt" in kinds(mail), (mode, kinds(mail))
            assert mail["Subject"] == f"[{tag}] Goofspiel: your move is in (secret)"
            assert "You: bid 4 (done)" in text
            assert ("Your bid of 4 for round 1 is in, sealed; 1 of 2 bids are in. Still to "
                    "bid: Bob. When the last bid is in, or at the deadline, the round is "
                    "resolved and its report comes to you.") in text
            assert "The next deadline: " in text
        # Bob hears nothing of it: a sealed bid is news to nobody else.
        assert arrived(post, "bob") == [], mode
        # Bob's bid closes the round: the report answers him, and reaches Alice.
        post.write("bob", "bid 2", subject=f"[{tag}] my bid")
        post.poll(start + timedelta(hours=2))
        alices, bobs = arrived(post, "alice"), arrived(post, "bob")
        assert all("receipt" not in kinds(x) for x in [*alices, *bobs]), mode


def test_one_digest_a_day_across_three_games(post: Post) -> None:
    """Dave plays three games of Spades in ``mail digest``: the moves held
    for him in each come in one mail a day, a section a game, each with his
    private address for that game, which a reply about that game reaches."""
    users = ("alice", "bob", "carol", "dave")
    spades = get_game("spades")
    tags = []
    for n in range(3):
        tag = post.referee.operator.create_game(
            "spades", [person(u) for u in users], now=T0, seed=f"d{n}",
            options={"mail": "digest"})
        tags.append(tag)
    post.poll(T0)
    for u in users:
        arrived(post, u)
    at = T0
    for tag in tags:
        # The bidders bid until something of the game is held for Dave.
        for _ in range(4):
            if held(post, tag, "dave"):
                break
            state = spades.load(post.state(tag))
            bidder = state.names[state.turn].lower()
            post.write(bidder, "bid 3", subject=f"[{tag}] bid")
            at += timedelta(minutes=1)
            post.poll(at)
        assert held(post, tag, "dave"), tag
    for u in users:
        arrived(post, u)
    post.poll(T0 + timedelta(days=1, minutes=5))
    (digest,) = arrived(post, "dave")
    subject = str(digest["Subject"])
    assert subject == ("Your digest of 3 games: " + ", ".join(f"{t} Spades" for t in tags)
                       + " (secret)")
    text = body(digest)
    assert text.startswith(SECRET_NOTE)
    with post.referee.sessions() as db:
        for tag in tags:
            game = db.scalar(select(m.Game).where(m.Game.tag == tag))
            assert game is not None
            seat = next(s for s in game.seats if s.name.lower().startswith("dave"))
            assert f"[{tag}] Spades\n" in text
            assert f"To answer about this game, write to referee+{seat.token}@" in text
        # Nothing is left held for Dave, and what others hold is theirs.
        assert not db.scalars(select(m.HeldMail).join(m.Player).where(
            m.Player.address == "dave@example.test")).all()
    # Each of the others' digests names only games they sit in, and says
    # nothing of Dave's private addresses.
    for u in ("alice", "bob", "carol"):
        for x in arrived(post, u):
            assert "To answer about this game, write to" not in body(x) or all(
                f"referee+{t}@" not in body(x) for t in dave_tokens(post))
    # A reply to a section's address is about that game.
    second = tokens_of(post, "dave")[tags[1]]
    post.write("dave", "status", subject="Re: my games", to=[f"referee+{second}@example.test"])
    post.poll(T0 + timedelta(days=1, minutes=10))
    (answer,) = arrived(post, "dave")
    assert f"DONE (status): {tags[1]}, Spades" in body(answer)


def held(post: Post, tag: str, user: str) -> bool:
    with post.referee.sessions() as db:
        return bool(db.scalars(select(m.HeldMail.id).join(m.Game).join(
            m.Player, m.Player.id == m.HeldMail.player_id).where(
            m.Game.tag == tag, m.Player.address == f"{user}@example.test")).first())


def tokens_of(post: Post, user: str) -> dict[str, str]:
    with post.referee.sessions() as db:
        return {g.tag: s.token for g in db.scalars(select(m.Game)) for s in g.seats
                if s.player is not None and s.player.address == f"{user}@example.test"
                and s.token}


def dave_tokens(post: Post) -> list[str]:
    return list(tokens_of(post, "dave").values())
