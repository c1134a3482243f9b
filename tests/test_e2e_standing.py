"""Issue 37 over the suite's real servers (Postfix and Dovecot): a forced
card (the last of a hand) plays itself and is said, the one card of a
suit led does not, a standing order is followed, and one that became
illegal is dropped, its owner alone told.

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

    # Dave plays; Alice wins trick 1 and leads 10♦. Bob and Carol hold one
    # diamond each, but it waits for them like any card (ruling SP-21):
    # played at once, it would tell the table that they hold no other.
    table.send([("Dave", "play 4D")], 3)
    mail = table.send([("Alice", "play 10D")], 4)
    assert post.state(tag)["trick"] == ["10D"] and post.state(tag)["turn"] == 1
    assert not any("played for them" in text_of(mail[n]) for n in NAMES)
    table.send([("Bob", "play KD"), ("Carol", "play 5D"), ("Dave", "play 6D")], 5)

    # Bob's K♦ took trick 2; tricks 3 to 12 by mail, a trick a pass.
    for hours, trick in enumerate(REST, start=6):
        mail = table.send(trick, hours)
    # Alice's 7♠ ended trick 12, which Carol's Q♠ took: the four last cards
    # play themselves in the same pass, and everyone is told so in the
    # round's report.
    state = post.state(tag)
    assert state["round"] == 2 and state["phase"] == "bidding"
    said = ["Carol had one card left: K♠ played for them",
            "Dave had one card left: Q♦ played for them",
            "Alice had one card left: 9♠ played for them",
            "Bob had one card left: 10♠ played for them"]
    for name in NAMES:
        assert all(line in text_of(mail[name]) for line in said), name
    with post.referee.sessions() as db:  # and the public history says it
        history = list(db.scalars(select(m.Event.text).where(m.Event.kind == "auto",
                                                               m.Event.public)))
    assert history == [f"{line}." for line in said]
    assert [(seat, args, source) for seat, _, args, source in post.actions(tag)][5:13] == [
        (2, ["2D"], "player"), (3, ["3D"], "order"), (4, ["4D"], "player"),
        (1, ["10D"], "player"), (2, ["KD"], "player"), (3, ["5D"], "player"),
        (4, ["6D"], "player"), (2, ["3H"], "player")]
    assert [(seat, args, source) for seat, _, args, source in post.actions(tag)][-4:] == [
        (3, ["KS"], "auto"), (4, ["QD"], "auto"), (1, ["9S"], "auto"), (2, ["10S"], "auto")]
    with post.referee.sessions() as db:
        seats = db.scalars(select(m.Seat).order_by(m.Seat.position)).all()
        assert [s.orders for s in seats] == [None, None, None, None]
    # The replay from the seed and the log gives the stored state.
    assert post.referee.reading.audit(tag) == []


#: Tricks 3 to 12 after the two diamond tricks above, each led by the last
#: trick's winner: Alice takes 3-6 and 9, Bob 7, 8, 10 and 11, Carol 12.
REST: list[list[tuple[str, str]]] = [
    [("Bob", "play 3H"), ("Carol", "play 4H"), ("Dave", "play 2H"), ("Alice", "play AH")],
    [("Alice", "play KH"), ("Bob", "play 5H"), ("Carol", "play 6H"), ("Dave", "play 7H")],
    [("Alice", "play QH"), ("Bob", "play 8H"), ("Carol", "play 9H"), ("Dave", "play 10H")],
    [("Alice", "play JH"), ("Bob", "play AC"), ("Carol", "play 3C"), ("Dave", "play 4C")],
    [("Alice", "play 2C"), ("Bob", "play KC"), ("Carol", "play 5C"), ("Dave", "play 6C")],
    [("Bob", "play QC"), ("Carol", "play 8C"), ("Dave", "play 9C"), ("Alice", "play 7C")],
    [("Bob", "play JC"), ("Carol", "play 10C"), ("Dave", "play 7D"), ("Alice", "play 2S")],
    [("Alice", "play 4S"), ("Bob", "play 5S"), ("Carol", "play 3S"), ("Dave", "play 8D")],
    [("Bob", "play AS"), ("Carol", "play JS"), ("Dave", "play 9D"), ("Alice", "play 6S")],
    [("Bob", "play 8S"), ("Carol", "play QS"), ("Dave", "play JD"), ("Alice", "play 7S")],
]  # fmt: skip
