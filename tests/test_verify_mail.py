"""``referee verify TAG --mail PATH``: a player checks the draws from their
own mailbox (referee/verify_mail.py).

Each game is played whole by mail on the Maildir harness (tests/test_referee.py
``Club``): Alice against bots, so every mail she gets is hers alone. Her
mailbox is the referee's outbox mail addressed to her, as a Maildir folder;
some tests turn it into an mbox file.
"""

from __future__ import annotations

import mailbox
import random
import re
import shutil
from collections.abc import Callable, Iterator
from datetime import timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest

from referee.games import get_game
from referee.games.draws import SequentialDraws
from referee.games.loatcg.instructions import EXAMPLE_INSTRUCTIONS, parse_instructions
from referee.verify_mail import main, verify_mailbox
from tests.test_referee import T0, Club

ALICE = "Alice <alice@club.test>"
SEED = "verify-by-mail"
#: Each kind, with Alice and enough bots, and options to keep the game short.
GAMES: dict[str, tuple[int, dict[str, str]]] = {
    # Random bots: a random bot's bid is a draw of the seed, which verify checks.
    "goofspiel": (1, {"bot": "random"}),
    "pure-skill": (2, {"bot": "random"}),
    "miser": (2, {}),
    "loatcg": (2, {}),
    "spades": (3, {"target": "100"}),
}


def play(kind: str, root: Path) -> str:
    """A whole game of ``kind``: Alice answers what she owes with a random
    legal move, the bots play theirs; returns the tag."""
    bots, options = GAMES[kind]
    club = Club(root)
    tag = club.referee.operator.create_game(kind, [ALICE], bots=bots, options=options,
                                            now=T0, seed=SEED)
    game = get_game(kind)
    rng = random.Random(1)
    now = T0
    for _ in range(3000):
        club.poll(now)
        status = club.referee.reading.status(tag)[0]
        if status["status"] != "active":
            break
        if 1 in {d["seat"] for d in status["deadlines"]}:
            state = game.load(dict(club.referee.reading.stored_state(tag)))
            action = game.bot_action(state, 1, SequentialDraws(rng))
            club.send(ALICE, " ".join([action.verb, *map(str, action.args)]),
                      subject=f"Re: [{tag}] my move")
            now += timedelta(hours=1)
        else:
            now += timedelta(days=1)
    assert club.referee.reading.status(tag)[0]["status"] == "finished"
    club.referee.close()
    return tag


def alices_maildir(root: Path) -> Path:
    """The referee's outbox mail addressed to Alice, as her Maildir folder."""
    folder = root / "alice"
    box = mailbox.Maildir(folder, create=True)
    for key in mailbox.Maildir(root / "out", create=False).iterkeys():
        data = mailbox.Maildir(root / "out", create=False).get_bytes(key)
        msg = message_from_bytes(data, policy=default)
        if "alice@club.test" in f"{msg['To']} {msg['Cc'] or ''}":
            box.add(data)
    return folder


def messages(folder: Path) -> Iterator[tuple[str, EmailMessage]]:
    """Alice's mails in the order they were sent, with their Maildir keys."""
    box = mailbox.Maildir(folder, create=False)
    found = []
    for key in box.iterkeys():
        msg = message_from_bytes(box.get_bytes(key), policy=default)
        assert isinstance(msg, EmailMessage)
        found.append((int(str(msg["Message-ID"]).split(".")[1]), key, msg))
    for _, key, msg in sorted(found, key=lambda f: f[0]):
        yield key, msg


def text(msg: EmailMessage) -> str:
    part = msg.get_body(("plain",))
    assert isinstance(part, EmailMessage)
    return str(part.get_content())


def rewrite(folder: Path, key: str, msg: EmailMessage, body: str) -> None:
    part = msg.get_body(("plain",))
    assert isinstance(part, EmailMessage)
    part.set_content(body)
    box = mailbox.Maildir(folder, create=False)
    box[key] = mailbox.MaildirMessage(msg.as_bytes())


def edit(folder: Path, change: Callable[[str], str | None]) -> str:
    """Change the first of Alice's mails that ``change`` changes (it
    returns the new body, or None to leave the mail); returns its subject."""
    for key, msg in messages(folder):
        new = change(text(msg))
        if new is not None:
            rewrite(folder, key, msg, new)
            return " ".join(str(msg["Subject"]).split())
    raise AssertionError("no mail to change")


_PLAYED: dict[str, tuple[str, Path]] = {}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[str, Path]]:
    """A whole game of a kind, played once for the module: its tag and Alice's Maildir."""

    def get(kind: str) -> tuple[str, Path]:
        if kind not in _PLAYED:
            root = tmp_path_factory.mktemp(kind)
            tag = play(kind, root)
            _PLAYED[kind] = tag, alices_maildir(root)
        return _PLAYED[kind]

    return get


@pytest.fixture
def mailboxes(played: Callable[[str], tuple[str, Path]],
              tmp_path: Path) -> Callable[[str], tuple[str, Path]]:
    """A game's tag and a copy of Alice's Maildir the test may change."""

    def get(kind: str) -> tuple[str, Path]:
        tag, folder = played(kind)
        copy = tmp_path / kind
        shutil.copytree(folder, copy)
        return tag, copy

    return get


def to_mbox(folder: Path, path: Path) -> Path:
    box = mailbox.mbox(path, create=True)
    for _, msg in messages(folder):
        box.add(msg.as_bytes())
    box.close()
    return path


# -- tampering: one drawn card, prize or instruction changed in one mail ------------


def change_prize(body: str) -> str | None:
    """Round 2's prize or later, as a state shows it, made another card."""
    m = re.search(r"^ROUND ([2-9]|1\d) OF (\d+): THE PRIZE IS (.+)$", body, re.M)
    if m is None:
        return None
    points = re.search(r"\((\d+) points?\)", m.group(3))
    value = int(points.group(1) if points else m.group(3))
    other = value % int(m.group(2)) + 1
    return body[:m.start(3)] + f"{other}" + body[m.end(3):]


def change_card(pattern: str) -> Callable[[str], str | None]:
    """One card of the hand the line after ``pattern`` shows, made another."""

    def change(body: str) -> str | None:
        m = re.search(pattern + r".*?\n\n(.*?)\n", body, re.S)
        if m is None:
            return None
        line = m.group(1)
        for old, new in (("♠", "♥"), ("♥", "♦"), ("♦", "♣"), ("♣", "♠")):
            # Miser writes ranks then suits (A♠), Spades a suit then its ranks (♠ Q 5).
            for a, b in ((f"A{old}", f"A{new}"), (f"{old} A", f"{old} 2"),
                         (f"K{old}", f"K{new}"), (f"{old} K", f"{old} 3")):
                if a in line and b not in line:
                    return body[:m.start(1)] + line.replace(a, b, 1) + body[m.end(1):]
        raise AssertionError(f"cannot change a card of {line!r}")

    return change


def change_instruction(body: str) -> str | None:
    """Round Report 3's instruction made another one."""
    m = re.search(r"^ROUND REPORT 3 .*?\(its number is not given\):\n\n  (.*?)\n", body,
                  re.M | re.S)
    if m is None:
        return None
    other = next(i.english() for i in parse_instructions(EXAMPLE_INSTRUCTIONS)
                 if i.english() != m.group(1))
    return body[:m.start(1)] + other + body[m.end(1):]


#: For each kind: the change, and what the first mismatch must name.
TAMPER: dict[str, tuple[Callable[[str], str | None], str]] = {
    "goofspiel": (change_prize, "round 2's prize"),
    "pure-skill": (change_prize, "round 2's prize"),
    "miser": (change_card(r"here are the \d+ cards dealt to you\."), "the hand dealt to Alice"),
    "loatcg": (change_instruction, "Round Report 3"),
    "spades": (change_card(r"here are your 13 cards for round 2\."), "round 2's hand"),
}


@pytest.mark.parametrize("kind", list(GAMES))
def test_a_whole_game_by_mail_verifies_from_the_players_mailbox(
        kind: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(kind)
    assert verify_mailbox(tag, folder) == []


@pytest.mark.parametrize("kind", list(GAMES))
def test_one_drawn_card_prize_or_instruction_changed_in_one_mail_is_named(
        kind: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(kind)
    change, named = TAMPER[kind]
    subject = edit(folder, change)
    problems = verify_mailbox(tag, folder)
    assert problems, "the changed mail went unnoticed"
    assert f'the mail "{subject}"' in problems[0]
    assert named in problems[0]


def change_bot_bid(body: str) -> str | None:
    """Round 1's bid of a bot, as its report shows it, made another card
    (in round 1 every card is still in its pack)."""
    m = re.search(r"^ROUND 1: THE PRIZE WAS .*?^  (\S.*?)\s+bid (\S+)   \(bot\)$", body,
                  re.M | re.S)
    if m is None:
        return None
    other = "2" if m.group(2) != "2" else "3"
    return body[:m.start(2)] + other + body[m.end(2):]


@pytest.mark.parametrize("kind", ["goofspiel", "pure-skill"])
def test_a_bid_the_referee_chose_for_a_bot_changed_in_one_mail_is_named(
        kind: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(kind)
    subject = edit(folder, change_bot_bid)
    problems = verify_mailbox(tag, folder)
    assert problems, "the changed bid went unnoticed"
    assert f'the mail "{subject}"' in problems[0]
    assert "round 1: the referee bid " in problems[0] and ", but the seed draws " in problems[0]


def change_deal(body: str) -> str | None:
    """A tournament deal's cards, as its secret mail shows them, made others."""
    m = re.search(r"^Dealt to you: (.+)$", body, re.M)
    if m is None:
        return None
    other = "3 ore" if m.group(1) != "3 ore" else "3 wool"
    return body[:m.start(1)] + other + body[m.end(1):]


def test_a_tournament_deal_changed_in_one_mail_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("loatcg")
    subject = edit(folder, change_deal)
    problems = verify_mailbox(tag, folder)
    assert problems, "the changed deal went unnoticed"
    assert f'the mail "{subject}"' in problems[0]
    assert "the cards dealt to you by the draw " in problems[0]
    assert ", but the seed deals " in problems[0]


@pytest.mark.parametrize("kind", list(GAMES))
def test_an_mbox_file_verifies_as_the_maildir_does(
        kind: str, mailboxes: Callable[[str], tuple[str, Path]], tmp_path: Path) -> None:
    tag, folder = mailboxes(kind)
    path = to_mbox(folder, tmp_path / "alice.mbox")
    assert verify_mailbox(tag, path) == []
    edit(folder, TAMPER[kind][0])
    assert verify_mailbox(tag, to_mbox(folder, tmp_path / "changed.mbox")) != []


def test_a_seed_that_does_not_open_the_openings_commitment_fails(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel")
    subject = edit(folder, lambda body: body.replace(f"  seed: {SEED}", "  seed: another")
                   if f"  seed: {SEED}" in body else None)
    problems = verify_mailbox(tag, folder)
    assert len(problems) == 1
    assert problems[0].startswith(f'the mail "{subject}"')
    assert "the seed another does not open the commitment" in problems[0]


def test_a_missing_opening_is_named(mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("pure-skill")
    key, _ = next(messages(folder))
    mailbox.Maildir(folder, create=False).remove(key)
    assert verify_mailbox(tag, folder)[0] == (
        f"the opening mail (with the seed's SHA-256) of {tag} is not in the mailbox")


def test_another_games_mail_is_not_read(mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    _, folder = mailboxes("goofspiel")
    assert verify_mailbox("goofspiel-99", folder) == [
        f"no mail of goofspiel-99 is in the mailbox {folder}"]


def test_the_command_says_verified_or_names_each_mismatch(
        mailboxes: Callable[[str], tuple[str, Path]], capsys: pytest.CaptureFixture[str]) -> None:
    tag, folder = mailboxes("miser")
    assert main([tag, "--mail", str(folder)]) == 0
    assert capsys.readouterr().out == "verified\n"
    edit(folder, TAMPER["miser"][0])
    assert main([tag, "--mail", str(folder)]) == 1
    assert "the hand dealt to Alice" in capsys.readouterr().out
