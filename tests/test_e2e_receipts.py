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

from referee.service.outgoing.queue import SECRET_NOTE
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
