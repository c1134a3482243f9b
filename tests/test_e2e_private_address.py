"""A private reply address is bound to its game (issue 22), over the real
Postfix and Dovecot, in verified mode: each seat's address reaches the
referee by plus addressing and vouches for its player in that game alone.
It rides on secret mail alone (issue 34): a player's copy of a public
report, which they may forward, shows none, so a forwarded copy lets no
one move for them. A verified mail replayed into another game of the same
player is not applied there; an address forwarded from a secret mail and
used by an outsider (in the player's name, or their own) moves nothing,
is rotated, and the player is told how to go on."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest

from tests.mailstack import MailStack
from tests.test_e2e import ALICE, BOB, REF, T0, Post, body, person

#: The authserv-id of the referee's MX. The test stack's Postfix runs no
#: SPF or DMARC check: a mail stamped as that MX would stamp it carries its
#: header from the sender.
MX = "mail.example.test"
SHOWN = "Your private referee address has changed (secret)"


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = Post(mailstack, tmp_path, auth={"require": "verified", "authserv_id": MX})
    yield p
    p.close()


def vouched(post: Post, user: str, tag: str) -> EmailMessage:
    """The answer to ``user``'s "help" in game ``tag``, a mail the MX vouches
    for (an aligned pass): a secret mail, whose Reply-To is their seat's
    private address."""
    post.write(user, "help", subject=f"[{tag}] help", headers={
        "Authentication-Results": f"{MX}; dmarc=pass header.from=example.test"})
    post.poll(T0)
    (answer,) = post.new_mail(user, 1)
    assert "(secret)" in str(answer["Subject"])
    return answer


def two_games(post: Post) -> tuple[str, str, dict[str, EmailMessage]]:
    """Two games of Alice and Bob, opened: their tags, and a secret mail to
    Alice in each by its tag. Their copies of the openings show no private
    address."""
    first, second = (post.referee.operator.create_game(
        "goofspiel", [ALICE, BOB], now=T0, seed=seed) for seed in ("one", "two"))
    post.poll(T0)
    openings = [*post.new_mail("bob", 2), *post.new_mail("alice", 2)]
    assert all("referee+" not in x.as_string() for x in openings)
    secrets = {tag: vouched(post, "alice", tag) for tag in (first, second)}
    return first, second, secrets


def private(mail: EmailMessage) -> str:
    """The private reply address a mail gives: its Reply-To."""
    address = str(mail["Reply-To"].addresses[0].addr_spec)
    assert address.startswith("referee+")
    return address


def bids(post: Post, tag: str) -> list[tuple[int, list[object]]]:
    return [(seat, args) for seat, verb, args, _ in post.actions(tag) if verb == "bid"]


def test_a_verified_bid_replayed_into_another_game_is_not_applied_there(post: Post) -> None:
    first, second, secrets = two_games(post)
    assert private(secrets[first]) != private(secrets[second])
    post.write("alice", "bid 6", subject=f"Re: {secrets[first]['Subject']}",
               to=[private(secrets[first])], reply_to=secrets[first])
    post.poll(T0 + timedelta(minutes=1))
    (answer,) = post.new_mail("alice", 1)
    assert "DONE (bid 6)" in body(answer)
    # The same bid, to the same address, with the other game's tag.
    post.write("alice", "bid 6", subject=f"[{second}] my bid", to=[private(secrets[first])])
    post.poll(T0 + timedelta(minutes=2))
    (refusal,) = post.new_mail("alice", 1)
    assert refusal["Subject"] == f"Re: [{second}] my bid (not applied) (secret)"
    assert "could not be verified as coming from you" in body(refusal)
    assert bids(post, first) == [(1, [6])] and bids(post, second) == []
    # Her real bid there: a reply to the refusal, to the address it gives.
    assert private(refusal) == private(secrets[second])
    post.write("alice", "bid 5", subject=f"Re: {refusal['Subject']}",
               to=[private(refusal)], reply_to=refusal)
    post.poll(T0 + timedelta(minutes=3))
    (answer,) = post.new_mail("alice", 1)
    assert "DONE (bid 5)" in body(answer)
    assert bids(post, first) == [(1, [6])] and bids(post, second) == [(1, [5])]
    post.assert_no_more_mail("bob")


@pytest.mark.parametrize("from_", ["alice", "carol"], ids=["forged", "own"])
def test_an_address_forwarded_from_a_secret_mail_moves_nothing_and_is_rotated(
        post: Post, from_: str) -> None:
    """Alice forwards a secret mail of the first game (the answer to her
    "help"; her choice, as a hand's would be) to Carol, who plays in no
    game. Carol writes a bid to the Reply-To she finds in it, in Alice's
    name (from a server the MX finds Alice's domain disowns) or in her own."""
    first, second, secrets = two_games(post)
    forward = EmailMessage()
    forward["From"], forward["To"] = ALICE, person("carol")
    forward["Subject"] = f"Fwd: {secrets[first]['Subject']}"
    forward["Message-ID"] = make_msgid(idstring="alice", domain="mua.example.test")
    forward.set_content("Look what the referee sends me.")
    forward.add_attachment(secrets[first])
    post.stack.send(forward, "alice", "carol")
    (received,) = post.new_mail("carol", 1)
    attached = next(received.iter_attachments()).get_content()
    old = private(attached)
    assert old == private(secrets[first])

    use = EmailMessage()
    use["From"], use["To"] = person(from_), old
    use["Subject"] = f"Re: {attached['Subject']}"
    use["Message-ID"] = make_msgid(idstring="carol", domain="mua.example.test")
    if from_ == "alice":
        use["Authentication-Results"] = f"{MX}; dmarc=fail header.from=example.test"
    use.set_content("bid 6")
    post.stack.send(use, "carol", old)
    post.in_referee_inbox += 1
    post.poll(T0 + timedelta(minutes=1))

    # Alice alone is told (and, for the mail in her name, that it was not
    # applied); Carol, whose mail no server vouches for, gets no answer.
    mails = post.new_mail("alice", 2 if from_ == "alice" else 1)
    notice = next(x for x in mails if x["Subject"] == SHOWN)
    new = private(notice)
    assert new not in (old, private(secrets[second]))
    told = " ".join(body(notice).split())
    if from_ == "alice":
        assert (f"A mail in your name came to your private referee address for [{first}] "
                f"({old}) from a server that does not send your mail") in told
        assert any("(not applied)" in str(x["Subject"]) for x in mails)
    else:
        assert (f"A mail from carol@example.test came to your private referee address "
                f"for [{first}] ({old}). Someone else knows that address") in told
    assert "just reply to it, or to the referee's other secret mails to you" in told
    assert bids(post, first) == bids(post, second) == []
    post.assert_no_more_mail("bob", "carol")

    # Alice goes on as told: a reply to the notice, with no tag, is her bid
    # in the game whose address it gives; her other game's address still counts.
    post.write("alice", "bid 6", subject=f"Re: {SHOWN}", to=[new], reply_to=notice)
    post.write("alice", "bid 3", subject=f"Re: {secrets[second]['Subject']}",
               to=[private(secrets[second])], reply_to=secrets[second])
    post.poll(T0 + timedelta(minutes=2))
    answers = post.new_mail("alice", 2)
    assert sorted(x for a in answers for x in ("DONE (bid 6)", "DONE (bid 3)")
                  if x in body(a)) == ["DONE (bid 3)", "DONE (bid 6)"]
    assert bids(post, first) == [(1, [6])] and bids(post, second) == [(1, [3])]


def test_a_forwarded_copy_of_a_public_report_lets_no_one_move_for_its_player(
        post: Post) -> None:
    """Bob forwards his copy of "Goofspiel begins ... your bid" to Carol, who
    writes "bid 5" in Bob's name to the address it gives, in its thread.
    The copy shows no private address, so her mail reached the referee's own
    address, and nothing vouches for it: no one moves for Bob, Bob alone is
    told in secret, and his own bid, a reply to that secret mail, counts."""
    tag = post.referee.operator.create_game("goofspiel", [ALICE, BOB], now=T0,
                                            seed="forwarded")
    post.poll(T0)
    post.new_mail("alice", 1)
    (opening,) = post.new_mail("bob", 1)
    assert str(opening["Subject"]).startswith(f"[{tag}] Goofspiel begins")
    assert "your bid" in str(opening["Subject"])
    assert "referee+" not in opening.as_string()
    forward = EmailMessage()
    forward["From"], forward["To"] = BOB, person("carol")
    forward["Subject"] = f"Fwd: {opening['Subject']}"
    forward["Message-ID"] = make_msgid(idstring="bob", domain="mua.example.test")
    forward.set_content("The game has started.")
    forward.add_attachment(opening)
    post.stack.send(forward, "bob", "carol")
    (received,) = post.new_mail("carol", 1)
    attached = next(received.iter_attachments()).get_content()
    shown = [a.addr_spec for a in attached["Reply-To"].addresses]
    assert shown == [REF]

    use = EmailMessage()
    use["From"], use["To"] = BOB, ", ".join(shown)
    use["Subject"] = f"Re: {attached['Subject']}"
    use["Message-ID"] = make_msgid(idstring="carol", domain="mua.example.test")
    use["In-Reply-To"] = attached["Message-ID"]
    use["References"] = f"{attached['References'] or ''} {attached['Message-ID']}".strip()
    use.set_content("bid 5")
    post.stack.send(use, "carol", shown)
    post.in_referee_inbox += 1
    post.poll(T0 + timedelta(minutes=1))

    assert post.actions(tag) == []
    (notice,) = post.new_mail("bob", 1)
    assert notice["Subject"] == f"Re: {attached['Subject']} (not applied) (secret)"
    assert str(notice["To"]) == BOB
    assert "someone wrote in your name; nothing changed" in " ".join(body(notice).split())
    post.assert_no_more_mail("alice", "carol")

    # Bob's own bid, a reply to that secret mail: to his private address.
    theirs = private(notice)
    bid = post.write("bob", "bid 3", subject=f"Re: {notice['Subject']}", to=[theirs],
                     reply_to=notice)
    post.poll(T0 + timedelta(minutes=2))
    (answer,) = post.new_mail("bob", 1)
    assert answer["In-Reply-To"] == bid and "DONE (bid 3)" in body(answer)
    assert private(answer) == theirs  # a secret mail: the address again
    assert [(seat, verb, args) for seat, verb, args, _ in post.actions(tag)] == [
        (2, "bid", [3])]
    post.assert_no_more_mail("alice", "carol")
