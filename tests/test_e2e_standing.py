"""Issue 37 over the suite's real servers (Postfix and Dovecot): a forced
card plays itself and is said, a standing order is followed, and one that
became illegal is dropped, its owner alone told.

The fixed deal of ``tests/test_spades_mail.py``: Alice leads A♦, then
10♦, to which Bob and Carol each hold one diamond.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

import referee.games
from referee.games.spades import Spades
from referee.store import models as m
from tests.mailstack import MailStack
from tests.test_e2e import T0, Post, body, person
from tests.test_spades_mail import BIDS, DEAL, NAMES, SEATING

USER = {name: name.lower() for name in NAMES}
ADDRESS = {name: f"{USER[name]}@example.test" for name in NAMES}


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    monkeypatch.setitem(referee.games.GAMES, "spades", Spades(deals=[DEAL], seating=SEATING))
    p = Post(mailstack, tmp_path)
    yield p
    p.close()


class Table:
    """The four players' side: moves mailed, one pass, the mail each got."""

    def __init__(self, post: Post, tag: str) -> None:
        self.post, self.tag, self.last = post, tag, 0

    def send(self, moves: list[tuple[str, str]], hours: int) -> dict[str, list[EmailMessage]]:
        for name, text in moves:  # each in the referee's INBOX before the next
            self.post.write(USER[name], text, subject=f"[{self.tag}] move")
            self.post.stack.wait_for("referee", self.post.in_referee_inbox)
        self.post.poll(T0 + timedelta(hours=hours))
        with self.post.referee.sessions() as db:
            rows = list(db.scalars(select(m.Outbox).where(m.Outbox.id > self.last)))
        self.last = max([self.last, *(r.id for r in rows)])
        sent = Counter(a for r in rows for a in r.recipients)
        return {n: self.post.new_mail(USER[n], sent[ADDRESS[n]]) if sent[ADDRESS[n]] else []
                for n in NAMES}


def text_of(mails: list[EmailMessage]) -> str:
    return "\n".join(f"{x['Subject']}\n{body(x)}" for x in mails)


def test_a_forced_card_plays_itself_and_standing_orders_are_followed_or_dropped(
        post: Post) -> None:
    tag = post.referee.operator.create_game("spades", [person(USER[n]) for n in NAMES],
                                            now=T0, seed="standing")
    table = Table(post, tag)
    table.send([], 0)  # the opening
    # Carol leaves an order for a diamond lead; Dave one that a diamond lead
    # will make a misplay (he holds diamonds): both kept, in secret.
    mail = table.send([*BIDS, ("Carol", "play 3D if diamonds led"),
                       ("Dave", "play 9C if diamonds led"), ("Alice", "play AD")], 1)
    assert "Kept, secret until it applies: play 3♦ if diamonds are led" in text_of(mail["Carol"])
    assert "Kept, secret until it applies: play 9♣ if diamonds are led" in text_of(mail["Dave"])
    for name in ("Alice", "Bob"):  # nobody else hears of an order
        assert "diamonds are led" not in text_of(mail[name])

    # Bob plays 2♦: Carol's order plays 3♦ at once; Dave's would revoke, so
    # it is dropped and Dave alone is told, and the card is still his to play.
    mail = table.send([("Bob", "play 2D")], 2)
    assert post.state(tag)["trick"] == ["AD", "2D", "3D"]
    dropped = [x for x in mail["Dave"] if "A standing order of yours was dropped" in body(x)]
    assert len(dropped) == 1 and str(dropped[0]["Subject"]).endswith("(secret)")
    # Carol's prompt went with the move made for her: she gets no mail.
    assert mail["Carol"] == []
    assert ("play 9♣ if diamonds are led: diamonds were led and you hold diamonds, so 9♣ "
            "would be a misplay (rule 3)." in body(dropped[0]))
    for name in ("Alice", "Bob", "Carol"):
        assert "9♣" not in text_of(mail[name]) and "dropped" not in text_of(mail[name])

    # Dave plays; Alice wins trick 1 and leads 10♦: Bob's one diamond and
    # Carol's play themselves, and everyone is told so.
    table.send([("Dave", "play 4D")], 3)
    mail = table.send([("Alice", "play 10D")], 4)
    state = post.state(tag)
    assert state["trick"] == ["10D", "KD", "5D"] and state["turn"] == 3  # Dave to play
    said = ["Bob had one of diamonds: K♦ played for them",
            "Carol had one of diamonds: 5♦ played for them"]
    # Dave, whose turn it is, reads it at once; the others in their next
    # mail (Spades' default, mail turns, sends a card played as a line of it).
    assert all(line in text_of(mail["Dave"]) for line in said)
    assert mail["Bob"] == mail["Carol"] == []
    mail = table.send([("Dave", "play 6D")], 5)  # Bob's K♦ takes trick 2: his lead
    assert all(line in text_of(mail["Bob"]) for line in said)
    with post.referee.sessions() as db:  # and the public history says it
        history = list(db.scalars(select(m.Event.text).where(m.Event.kind == "auto",
                                                               m.Event.public)))
    assert history == [f"{line}." for line in said]
    assert [(seat, args, source) for seat, _, args, source in post.actions(tag)][5:] == [
        (2, ["2D"], "player"), (3, ["3D"], "order"), (4, ["4D"], "player"),
        (1, ["10D"], "player"), (2, ["KD"], "auto"), (3, ["5D"], "auto"),
        (4, ["6D"], "player")]
    with post.referee.sessions() as db:
        seats = db.scalars(select(m.Seat).order_by(m.Seat.position)).all()
        assert [s.orders for s in seats] == [None, None, None, None]
    # The replay from the seed and the log gives the stored state.
    assert post.referee.reading.audit(tag) == []
