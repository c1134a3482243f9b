"""The players' own entropy in Spades and Miser over the real Postfix and
Dovecot (issue 38, "Tests that must exist"): a table opened by mail, each
seat's contribution quoted back (one the Message-ID of the player's mail,
one words of their own), the game started from it and played by the
referee's deadlines far enough that every kind of draw happens (the deal,
Miser's removed cards and draw for first player, a card the referee draws
for a late player), then ``referee verify TAG --mail`` on one player's
mailbox: their contribution found, every draw holding. The same mailbox
with (a) a contribution altered, (b) a subject altered, (c) the late
player's drawn card altered, and (d) a seed changed after the
contributions is refused, naming the mail."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.games.cards import full_deck
from referee.games.draws import seed_fingerprint
from referee.games.miser.rules import card_text
from referee.games.spades.verify import HAND, hand_cards
from tests.mailstack import MailStack
from tests.test_e2e import T0, Post, body
from tests.test_e2e_club import club_of
from tests.test_e2e_entropy import seed_changed_to, verify

#: ``alter(subject, text)``: the mail's subject and plain text, rewritten.


@pytest.fixture
def post(mailstack: MailStack, tmp_path: Path) -> Iterator[Post]:
    p = club_of(Post(mailstack, tmp_path), "alice", "bob", "carol", "dave")
    yield p
    p.close()


def arrived(post: Post, user: str, subject: str, timeout: float = 30) -> EmailMessage:
    """The last mail whose subject holds ``subject`` in ``user``'s INBOX, once come."""
    deadline = time.monotonic() + timeout
    while True:
        got = post.stack.fetch_all(user)
        found = [x for x in got if subject in str(x["Subject"])]
        if found:
            return found[-1]
        assert time.monotonic() < deadline, (user, subject, [
            (str(x["Subject"]), body(x)[:3000]) for x in got])
        time.sleep(0.2)


def open_table(post: Post, kind: str, guests: list[str], options: str = ""
               ) -> tuple[str, str, str]:
    """Alice opens a table of ``kind`` with ``guests`` by mail (her
    contribution the Message-ID of her mail), Bob accepts giving words of
    his own, the others accept giving none (their Message-IDs count); the
    game starts. Its tag, the table's fingerprint, and Alice's Message-ID."""
    names = ", ".join(g.capitalize() for g in guests)
    alices_id = post.write("alice", f"new {kind} with {names}{options}\n", subject="a game?")
    post.poll(T0)
    opened = arrived(post, "alice", "is open")
    committed = re.search(r"^  seed-sha256: ([0-9a-f]{64})$", body(opened), re.M)
    assert committed is not None
    assert f"  your-entropy: {alices_id}\n" in body(opened)
    for guest in guests:
        invited = arrived(post, guest, "invites you to play")
        address = invited["Reply-To"].addresses[0].addr_spec
        words = "entropy  Rain on   the roof\n" if guest == "bob" else ""
        post.write(guest, f"accept\n{words}", subject=f"Re: {invited['Subject']}",
                   to=[address], reply_to=invited)
    post.poll(T0 + timedelta(minutes=5))
    started = arrived(post, "alice", f"[{kind}-1] ")
    tag = str(started["Subject"]).split("]")[0].lstrip("[")
    return tag, committed.group(1), alices_id


def late(post: Post, user: str, played: str) -> EmailMessage | None:
    """The last mail telling ``user`` the referee ``played`` a card for them."""
    found = [x for x in post.stack.fetch_all(user)
             if played in " ".join(body(x).split())]
    return found[-1] if found else None


def refused(said: tuple[int, str], mail: str, *why: str) -> None:
    """``verify`` exited 1, its first line naming ``mail`` and saying ``why``."""
    code, text = said
    assert code == 1, text
    first = text.splitlines()[0]
    assert first.startswith(f'the mail "{mail}'), text
    for part in why:
        assert part in text, text


def test_a_spades_table_by_mail_verifies_from_alices_mailbox_and_refuses_each_tampering(
        post: Post) -> None:
    tag, fingerprint, alices_id = open_table(post, "spades", ["bob", "carol", "dave"])
    # Alice has every mail as it happens, each with a subject saying what
    # happened ("Trick 4: Bob plays Q♥"). No one moves: the referee bids 2
    # for each (rule 7) and plays a random legal card for each, deadline
    # after deadline, until one is Alice's.
    post.write("alice", "mail all\n", subject=f"[{tag}] mail")
    now = T0 + timedelta(minutes=10)
    post.poll(now)
    # A card that ends a trick is told under the trick's subject ("Trick 1 to
    # Dave"): on until one of Alice's is told under its own.
    for _ in range(40):
        moved = late(post, "alice", " for you, chosen at random")
        if moved is not None and "Alice plays" in str(moved["Subject"]):
            break
        now += timedelta(days=3, hours=1)
        post.poll(now)
    assert moved is not None, [str(x["Subject"]) for x in post.stack.fetch_all("alice")]
    opening = next(x for x in post.stack.fetch_all("alice")
                   if "  entropy 1: " in body(x) and f"[{tag}]" in str(x["Subject"]))
    assert f"  seed-sha256: {fingerprint}\n" in body(opening)
    opening_subject = str(opening["Subject"])
    seat = re.search(rf"^  entropy (\d): {re.escape(alices_id)}$", body(opening), re.M)
    assert seat is not None
    code, said = verify(post, "alice", tag)
    print(said)
    assert (code, said) == (
        0, f"your entropy {alices_id} is seat {seat.group(1)}'s in the opening's mix (the "
           "Message-ID of your mail)\nverified\n")

    # (a) Her contribution altered in the opening: refused, naming it.
    def hers(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"entropy {seat.group(1)}: {alices_id}",
                                     f"entropy {seat.group(1)}: <forged@mua.example.test>")

    said_a = verify(post, "alice", tag, hers)
    print(said_a[1])
    refused(said_a, opening_subject, f"does not list your entropy {alices_id}")

    # (b) A subject altered: the mail telling her of the card drawn for her
    # says in its subject that she played another.
    card = re.search(r"played (10|[2-9JQKA])([♠♥♦♣]) for you", body(moved))
    assert card is not None
    mine = card.group(1) + card.group(2)
    assert f"Alice plays {mine}" in str(moved["Subject"]), moved["Subject"]
    hand_mail = next(x for x in post.stack.fetch_all("alice") if HAND.search(body(x)))
    hand = HAND.search(body(hand_mail))
    assert hand is not None
    held = hand_cards(hand.group(3))
    other = next(card_text(str(c)) for c in full_deck() if card_text(str(c)) not in held)

    def subject_altered(subject: str, text: str) -> tuple[str, str]:
        return subject.replace(f"Alice plays {mine}", f"Alice plays {other}"), text

    said_b = verify(post, "alice", tag, subject_altered)
    print(said_b[1])
    refused(said_b, str(moved["Subject"]).replace(mine, other),
            f"its subject says Alice plays {other}, but the referee played {mine} for you")

    # (c) The card the referee drew for her, altered to one she did not hold.
    def draw_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"played {mine} for you", f"played {other} for you")

    said_c = verify(post, "alice", tag, draw_altered)
    print(said_c[1])
    refused(said_c, str(moved["Subject"]),
            f"the referee played {other} for you, a card you did not hold")

    # (d) A seed changed after the contributions: the game's mails commit
    # to another fingerprint than the table's.
    changed = seed_fingerprint("0" * 32)
    seed_changed = seed_changed_to("spades", fingerprint, None, "0" * 32)
    said_d = verify(post, "alice", tag, seed_changed)
    print(said_d[1])
    refused(said_d, "[spades-t1]",
            f"but the game's opening gives {changed}")


def test_a_miser_table_by_mail_verifies_from_the_first_players_mailbox_and_refuses_tampering(
        post: Post) -> None:
    tag, fingerprint, alices_id = open_table(post, "miser", ["bob", "carol"],
                                             " players=3 pennies=3")
    opening = arrived(post, "alice", "Miser begins: ")
    first = re.search(r"Miser begins: (\w+) goes first", str(opening["Subject"]))
    assert first is not None
    names = ["Alice", "Bob", "Carol"]
    player = first.group(1)
    user = player.lower()
    victim = names[(names.index(player) + 1) % 3]
    # The first player attacks and then says nothing: the referee puts a
    # card of theirs face down, drawn at random; then the deadlines run
    # the game (a pass costs 3 of the 3 pennies each) to its end.
    post.write(user, f"attack {victim} 1\n", subject=f"[{tag}] attack")
    now = T0 + timedelta(minutes=10)
    post.poll(now)
    for _ in range(12):
        if any("GAME OVER" in body(x) for x in post.stack.fetch_all(user)):
            break
        now += timedelta(days=3, hours=1)
        post.poll(now)
    moved = late(post, user, "face down for you, drawn at random")
    assert moved is not None, [str(x["Subject"]) for x in post.stack.fetch_all(user)]
    final = next(x for x in post.stack.fetch_all(user) if "GAME OVER" in body(x))
    seed = re.search(r"^  seed: (\S+)$", body(final), re.M)
    assert seed is not None and seed_fingerprint(seed.group(1)) == fingerprint
    code, said = verify(post, user, tag)
    print(said)
    assert code == 0, said
    assert said.endswith("verified\n"), said
    position = names.index(player) + 1
    opening = next(x for x in post.stack.fetch_all(user)
                   if f"[{tag}]" in str(x["Subject"]) and "  entropy 1: " in body(x))
    opening_subject = str(opening["Subject"])
    mine = re.search(rf"^  entropy {position}: (.+)$", body(opening), re.M)
    assert mine is not None
    # Alice's is her mail's Message-ID, Bob's his words, Carol's her accept's.
    assert mine.group(1) == {"Alice": alices_id, "Bob": "Rain on the roof"}.get(
        player, mine.group(1))
    assert said.startswith(f"your entropy {mine.group(1)} is seat {position}'s in the "
                           "opening's mix"), said
    # Carol's accept filled the table and started the game: the start mail
    # answering it quotes her entropy back, as the others' answers do
    # theirs, so her own mailbox finds it too (whoever went first).
    carols = re.search(r"^  entropy 3: (<[^>\n]+>)$", body(opening), re.M)
    assert carols is not None
    start = arrived(post, "carol", "Miser starts: ")
    assert start["In-Reply-To"] == carols.group(1)
    assert f"  your-entropy: {carols.group(1)}\n" in body(start)
    assert verify(post, "carol", tag) == (
        0, f"your entropy {carols.group(1)} is seat 3's in the opening's mix (the "
           "Message-ID of your mail)\nverified\n")

    # (a) Their contribution altered in the opening.
    def theirs(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"entropy {position}: {mine.group(1)}",
                                     f"entropy {position}: <forged@mua.example.test>")

    said_a = verify(post, user, tag, theirs)
    print(said_a[1])
    refused(said_a, opening_subject, f"does not list your entropy {mine.group(1)}")

    # (b) The opening's subject names another first player.
    other = victim

    def subject_altered(subject: str, text: str) -> tuple[str, str]:
        return subject.replace(f"{player} goes first", f"{other} goes first"), text

    said_b = verify(post, user, tag, subject_altered)
    print(said_b[1])
    refused(said_b, opening_subject.replace(f"{player} goes first", f"{other} goes first"),
            f"says {other} goes first")

    # (c) The card drawn for the late player, altered to another card of
    # their hand: the draw named takes the card it took, not this one.
    card = re.search(r"put (10|[2-9JQKA])([♠♥♦♣]) face down for you", body(moved))
    assert card is not None
    drawn = card.group(1) + card.group(2)
    dealt = re.search(rf"^{player}, here are the \d+ cards dealt to you\.\n[^\n]*\n\n\s*(.+)$",
                      "\n".join(body(x) for x in post.stack.fetch_all(user)), re.M)
    assert dealt is not None
    swap = next(c for c in dealt.group(1).split() if c != drawn)

    def draw_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"put {drawn} face down for you",
                                     f"put {swap} face down for you")

    said_c = verify(post, user, tag, draw_altered)
    print(said_c[1])
    refused(said_c, str(moved["Subject"]),
            f"the referee put {swap} face down for you, but the draw timeout/")

    # (d) A seed changed after the contributions: the game's mails give
    # another fingerprint (and seed) than the table committed to.
    new_seed = "0" * 32
    seed_changed = seed_changed_to("miser", fingerprint, seed.group(1), new_seed)
    said_d = verify(post, user, tag, seed_changed)
    print(said_d[1])
    refused(said_d, "[miser-t1]", f"but the game's opening gives {seed_fingerprint(new_seed)}")


def test_a_goofspiel_table_by_mail_verifies_from_the_last_accepters_mailbox_and_refuses_tampering(
        post: Post) -> None:
    # Bob's accept fills the table and starts the game: the start mail
    # answering it is the only one quoting his entropy back (issue 38).
    # He then never bids: the referee bids a card drawn from his pack for
    # him each round, until the last plays itself.
    tag, fingerprint, _ = open_table(post, "goofspiel", ["bob"], " cards=3")
    start = arrived(post, "bob", "Goofspiel starts: ")
    assert "  your-entropy: Rain on the roof\n" in body(start)
    now = T0 + timedelta(minutes=10)
    for n in (1, 2):
        post.write("alice", f"bid {n}", subject=f"[{tag}] bid")
        now += timedelta(days=3, hours=1)
        post.poll(now)
    final = arrived(post, "bob", "GAME OVER")
    seed = re.search(r"^  seed: (\S+)$", body(final), re.M)
    assert seed is not None and seed_fingerprint(seed.group(1)) == fingerprint
    assert verify(post, "bob", tag) == (
        0, "your entropy Rain on the roof is seat 2's in the opening's mix\nverified\n")
    opening = arrived(post, "bob", "Goofspiel begins: ")
    assert "  entropy 2: Rain on the roof\n" in body(opening)

    # (a) His contribution altered in the opening: refused, naming it.
    def his(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace("entropy 2: Rain on the roof", "entropy 2: Rain on the road")

    said_a = verify(post, "bob", tag, his)
    print(said_a[1])
    refused(said_a, str(opening["Subject"]), "does not list your entropy Rain on the roof")

    # (b) A subject altered: the report of round 1 names another prize
    # for round 2 than the seed draws (its body still says the drawn one).
    report = arrived(post, "bob", "Round 1: ")
    prize = re.search(r"round 2 prize (\d)", str(report["Subject"]))
    assert prize is not None
    other = "1" if prize.group(1) != "1" else "2"

    def subject_altered(subject: str, text: str) -> tuple[str, str]:
        return subject.replace(f"round 2 prize {prize.group(1)}", f"round 2 prize {other}"), text

    said_b = verify(post, "bob", tag, subject_altered)
    print(said_b[1])
    refused(said_b, str(report["Subject"]).replace(f"prize {prize.group(1)}", f"prize {other}"),
            "its subject gives round 2", f"prize as {other}", "but the seed draws")

    # (c) The drawn prize altered where the body states it.
    def prize_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, text.replace(f"ROUND 2 OF 3: THE PRIZE IS {prize.group(1)}",
                                     f"ROUND 2 OF 3: THE PRIZE IS {other}")

    said_c = verify(post, "bob", tag, prize_altered)
    print(said_c[1])
    refused(said_c, str(report["Subject"]), "but the seed draws")

    # (d) The card the referee drew for late Bob, altered to another of
    # his pack: the draw gives the card it gave.
    late_bid = re.search(r"^  Bob +bid (\d)   \(no bid arrived", body(report), re.M)
    assert late_bid is not None
    card = late_bid.group(1)
    swap = "1" if card != "1" else "2"

    def draw_altered(subject: str, text: str) -> tuple[str, str]:
        return subject, re.sub(rf"^(  Bob +bid ){card}(   \(no bid arrived)",
                               rf"\g<1>{swap}\g<2>", text, count=1, flags=re.M)

    said_d = verify(post, "bob", tag, draw_altered)
    print(said_d[1])
    refused(said_d, str(report["Subject"]), f"the referee bid {swap} for Bob",
            "but the seed draws")

    # (e) A seed changed after the contributions: the game's mails commit
    # to another fingerprint than the table's.
    new_seed = "0" * 32
    seed_changed = seed_changed_to("goofspiel", fingerprint, seed.group(1), new_seed)
    said_e = verify(post, "bob", tag, seed_changed)
    print(said_e[1])
    refused(said_e, "[goofspiel-t1]", f"but the game's opening gives {seed_fingerprint(new_seed)}")
