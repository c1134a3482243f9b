"""``referee verify TAG --mail``: every claim checked (issue 38). Whole
games played by mail on the Maildir harness (as tests/test_verify_mail.py
plays them), some with Alice late so that the referee moves for her; then
her mailbox verified as it is, and refused, naming the mail, once one
claim is altered: a subject, a heading, a late move, a removed card, an
HTML part, a prize line reworded, a fixed order; and another club's game
or a stranger's forged opening beside an honest game does not fail it.
"""

from __future__ import annotations

import html
import mailbox
import random
import re
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from referee.games import get_game
from referee.games.cards import full_deck
from referee.games.draws import KeyedDraws, SequentialDraws
from referee.games.miser.rules import DECK_SIZE, card_text, owed_step
from referee.verify_mail import check_mailbox, main, verify_mailbox
from tests.test_referee import T0, Club
from tests.test_verify_mail import (
    ALICE,
    GAMES,
    SEED,
    TAMPER,
    alices_maildir,
    change_prize,
    edit,
    messages,
    text,
)

#: Games beside tests/test_verify_mail.py's: (kind, bots, options, how Alice plays).
#: "late": Alice never writes (Miser: but to accept an offer, so that she
#: owes a card), and the referee moves for her at each deadline.
VARIANTS: dict[str, tuple[str, int, dict[str, str], str]] = {
    "goofspiel": ("goofspiel", 1, {"bot": "random"}, "plays"),
    "pure-skill": ("pure-skill", 2, {"bot": "random"}, "plays"),
    "miser": ("miser", 2, {}, "plays"),
    "spades": ("spades", 3, {"target": "100"}, "plays"),
    "loatcg": ("loatcg", 2, {}, "plays"),
    "goofspiel-ascending": ("goofspiel", 1, {"bot": "random", "prize_order": "ascending"},
                            "plays"),
    "goofspiel-late": ("goofspiel", 1, {"bot": "random"}, "late"),
    "miser-late": ("miser", 2, {}, "late"),
    "spades-late": ("spades", 3, {"target": "100"}, "late"),
}


def play(name: str, root: Path) -> str:
    kind, bots, options, how = VARIANTS[name]
    club = Club(root)
    tag = club.referee.operator.create_game(kind, [ALICE], bots=bots, options=options,
                                            now=T0, seed=SEED)
    game = get_game(kind)
    rng = random.Random(1)
    now = T0
    for _ in range(5000):
        club.poll(now)
        status = club.referee.reading.status(tag)[0]
        if status["status"] != "active":
            break
        if 1 in {d["seat"] for d in status["deadlines"]}:
            state = game.load(dict(club.referee.reading.stored_state(tag)))
            if how == "late":
                if kind == "miser" and owed_step(state, state.seats.index(1)) == "answer":
                    club.send(ALICE, "accept", subject=f"Re: [{tag}] offer")
                    now += timedelta(hours=1)
                else:
                    now += timedelta(days=4)  # past every deadline
                continue
            action = game.bot_action(state, 1, SequentialDraws(rng))
            club.send(ALICE, " ".join([action.verb, *map(str, action.args)]),
                      subject=f"Re: [{tag}] my move")
            now += timedelta(hours=1)
        else:
            now += timedelta(days=1)
    assert club.referee.reading.status(tag)[0]["status"] == "finished"
    club.referee.close()
    return tag


_PLAYED: dict[str, tuple[str, Path]] = {}


@pytest.fixture
def mailboxes(tmp_path_factory: pytest.TempPathFactory,
              tmp_path: Path) -> Callable[[str], tuple[str, Path]]:
    """A game's tag and a copy of Alice's Maildir the test may change (each
    game is played once for the session)."""

    def get(name: str) -> tuple[str, Path]:
        if name not in _PLAYED:
            root = tmp_path_factory.mktemp(name)
            _PLAYED[name] = play(name, root), alices_maildir(root)
        tag, folder = _PLAYED[name]
        copy = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(folder, copy)
        return tag, copy

    return get


def save(folder: Path, key: str, data: bytes) -> None:
    mailbox.Maildir(folder, create=False)[key] = mailbox.MaildirMessage(data)


def subject_of(msg: object) -> str:
    return " ".join(str(msg["Subject"]).split())  # type: ignore[index]


def edit_subject(folder: Path, change: Callable[[str], str | None]) -> str:
    """Change the first subject ``change`` changes; returns the new subject."""
    for key, msg in messages(folder):
        new = change(subject_of(msg))
        if new is not None:
            del msg["Subject"]
            msg["Subject"] = new
            save(folder, key, msg.as_bytes())
            return new
    raise AssertionError("no subject to change")


def add_html(folder: Path, change: Callable[[str], str | None]) -> str:
    """Give the first mail ``change`` changes an HTML part (what a mail
    client shows) holding the changed text; its plain text stays."""
    for key, msg in messages(folder):
        new = change(text(msg))
        if new is not None:
            msg.add_alternative(f"<html><body><pre>{html.escape(new)}</pre></body></html>",
                                subtype="html")
            save(folder, key, msg.as_bytes())
            return subject_of(msg)
    raise AssertionError("no mail to change")


def refused(tag: str, folder: Path, subject: str, *named: str) -> str:
    problems = verify_mailbox(tag, folder)
    assert problems, "the changed mail went unnoticed"
    assert problems[0].startswith(f'the mail "{subject}"'), problems[0]
    for words in named:
        assert words in problems[0], problems[0]
    return problems[0]


# -- honest games, with the referee's moves for a late player ----------------------


@pytest.mark.parametrize("name", ["goofspiel-ascending", "goofspiel-late", "miser-late",
                                  "spades-late"])
def test_a_whole_game_with_the_referees_moves_verifies(
        name: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(name)
    assert verify_mailbox(tag, folder) == []
    if name.endswith("-late"):
        late = [text(msg) for _, msg in messages(folder)
                if "came from you by the deadline" in text(msg)]
        assert late, "Alice was never late"


# -- a subject, a heading -------------------------------------------------------------


def change_subject_prize(subject: str) -> str | None:
    m = re.search(r"\bround (\d+),? (?:the )?prize (?:is )?([^\s:]+(?: \(\d+ points?\))?)",
                  subject)
    if m is None:
        return None
    value = m.group(2)
    other = "2" if value != "2" else "3"
    return subject[:m.start(2)] + other + subject[m.start(2) + len(value):]


@pytest.mark.parametrize("name", ["goofspiel", "pure-skill"])
def test_a_prize_altered_in_a_subject_is_named(
        name: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(name)
    subject = edit_subject(folder, change_subject_prize)
    refused(tag, folder, subject, "its subject gives round ", "prize as ", "but the seed draws")


def change_heading_prize(body: str) -> str | None:
    m = re.search(r"— round (\d+) prize (\S+)", body)
    if m is None:
        return None
    other = "2" if m.group(2) != "2" else "3"
    return body[:m.start(2)] + other + body[m.end(2):]


def test_a_prize_altered_in_a_reports_heading_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel")
    subject = edit(folder, change_heading_prize)
    refused(tag, folder, subject, "its body gives round ", "but the seed draws")


def test_who_goes_first_altered_in_miser_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("miser")

    def change(body: str) -> str | None:
        m = re.search(r"^Miser begins: (.+) goes first$", body, re.M)
        return None if m is None else body[:m.start(1)] + "Alice" + body[m.end(1):]

    subject = edit(folder, change)
    refused(tag, folder, subject, "its heading says Alice goes first")
    tag, folder = mailboxes("miser")
    subject = edit_subject(folder, lambda s: f"[{tag}] Miser begins: Alice goes first")
    refused(tag, folder, subject, "its subject says Alice goes first")


def test_a_round_report_named_otherwise_in_its_subject_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("loatcg")

    def change(subject: str) -> str | None:
        m = re.search(r"Round Report (\d+)", subject)
        return None if m is None else subject.replace(
            m.group(0), f"Round Report {int(m.group(1)) % 2 + 1}")

    subject = edit_subject(folder, change)
    refused(tag, folder, subject, "its subject says Round Report ", "but its body is")


# -- a claim reworded, a fixed order ----------------------------------------------------


def test_a_reworded_prize_line_is_refused_as_unreadable(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel")

    def reword(body: str) -> str | None:
        m = re.search(r"^ROUND ([2-9]) OF (\d+): THE PRIZE IS (\d+)$", body, re.M)
        if m is None:
            return None
        other = int(m.group(3)) % int(m.group(2)) + 1
        return body[:m.start()] + f"ROUND {m.group(1)} OF {m.group(2)}: PRIZE {other}" + \
            body[m.end():]

    subject = edit(folder, reword)
    refused(tag, folder, subject, "states a prize in a way that cannot be read",
            "PRIZE")


def test_a_prize_out_of_a_fixed_order_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel-ascending")
    subject = edit(folder, change_prize)
    refused(tag, folder, subject, "prize as ", "but the ascending order gives")


# -- the referee's moves for a late player ---------------------------------------------


def test_a_bid_the_referee_chose_for_a_late_player_altered_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel-late")
    subject = edit(folder, _late_goofspiel)
    refused(tag, folder, subject, "round 1: the referee bid ", "for Alice, but the seed draws")


def _late_goofspiel(body: str) -> str | None:
    m = re.search(r"^ROUND 1: THE PRIZE WAS .*?^  Alice\s+bid (\S+)   \(no bid arrived", body,
                  re.M | re.S)
    if m is None:
        return None
    other = "2" if m.group(1) != "2" else "3"
    return body[:m.start(1)] + other + body[m.end(1):]


def _not_held(body: str, held_pattern: str) -> str:
    """A card the player does not hold: one the hand line never shows."""
    held = set(re.findall(r"(?:10|[2-9JQKA])[♠♥♦♣]", held_pattern))
    return next(c for c in (f"{r}{s}" for s in "♠♥♦♣" for r in "AKQJ98765432") if c not in held)


def replace_late_card(verb: str, held: str) -> Callable[[str], str | None]:
    """The card the referee says it ``verb`` for Alice made one she did not hold."""

    def change(body: str) -> str | None:
        m = re.search(rf"the\s+referee\s+{verb}\s+(\S+)", body)
        return None if m is None else body[:m.start(1)] + _not_held(body, held) + body[m.end(1):]

    return change


def test_a_card_the_referee_put_down_for_a_late_miser_player_altered_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("miser-late")
    hand = next(m.group(1) for _, msg in messages(folder)
                if (m := re.search(r"cards dealt to you\.\n.*\n\n\s*(\S.*)$", text(msg), re.M)))
    subject = edit(folder, replace_late_card("put", hand))
    refused(tag, folder, subject, "the referee put ", "face down for you, a card you did not hold")


def test_a_card_the_referee_played_for_a_late_spades_player_altered_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("spades-late")
    hand = ""  # the hand the mail asking for the card showed

    def change(body: str) -> str | None:
        nonlocal hand
        if re.search(r"the\s+referee\s+played\s", body) and hand:
            return replace_late_card("played", hand)(body)
        shown = re.search(r"^Your hand:\n((?:.*\n){4})", body, re.M)
        hand = " ".join(f"{r}{line[0]}" for line in shown.group(1).splitlines()
                        for r in line.split()[1:]) if shown else hand
        return None

    subject = edit(folder, change)
    refused(tag, folder, subject, "the referee played ", "for you, a card you did not hold")


def test_a_late_spades_bid_other_than_2_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("spades-late")

    def change(body: str) -> str | None:
        m = re.search(r"the\s+referee\s+bid\s+(2)\s+for\s+you", body)
        return None if m is None else body[:m.start(1)] + "3" + body[m.end(1):]

    subject = edit(folder, change)
    refused(tag, folder, subject, "for your late bid the referee bid 3 for you",
            "rule 7 makes a bid of 2")


# -- Miser's removed cards ----------------------------------------------------------------


def removed_cards() -> list[str]:
    deck = [str(c) for c in full_deck()]
    KeyedDraws(SEED).rng("deal").shuffle(deck)
    return [card_text(c) for c in deck[:DECK_SIZE % 3]]


def test_a_removed_card_shown_in_play_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("miser")
    removed = removed_cards()[0]

    def change(body: str) -> str | None:
        m = re.search(r"^  DONE \(down \w+\): Face down: (\S+?)\.$", body, re.M)
        return None if m is None else body[:m.start(1)] + removed + body[m.end(1):]

    subject = edit(folder, change)
    refused(tag, folder, subject, f"it shows {removed} in play, but the seed removed")


def test_a_count_of_removed_cards_altered_is_named(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("miser")
    subject = edit(folder, lambda body: body.replace("1 card was first removed face down",
                                                      "2 cards were first removed face down")
                   if "1 card was first removed face down" in body else None)
    refused(tag, folder, subject, "2 cards are said to be removed face down", "leave 1")


# -- what a mail client shows -------------------------------------------------------------


@pytest.mark.parametrize("kind", list(GAMES))
def test_an_html_part_that_says_otherwise_is_named(
        kind: str, mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes(kind)
    subject = add_html(folder, TAMPER[kind][0])
    refused(tag, folder, subject, "its parts disagree")


def test_an_html_part_that_agrees_verifies(
        mailboxes: Callable[[str], tuple[str, Path]]) -> None:
    tag, folder = mailboxes("goofspiel")
    add_html(folder, lambda body: body if "ROUND 2 OF" in body else None)
    assert verify_mailbox(tag, folder) == []


# -- whose mails: the referee's identity ----------------------------------------------------


def as_other_club(folder: Path, into: Path, domain: str, change: Callable[[str], str | None]
                  ) -> None:
    """Alice's mails again, as another club's referee at ``domain`` sent them
    for a game with the same tag, the first ``change`` changes changed."""
    box = mailbox.Maildir(into, create=False)
    changed = False
    for _, msg in messages(folder):
        for name in ("From", "Message-ID"):
            value = str(msg[name]).replace("@club.test", f"@{domain}")
            del msg[name]
            msg[name] = value
        if not changed and (new := change(text(msg))) is not None:
            part = msg.get_body(("plain",))
            assert part is not None
            part.set_content(new)
            changed = True
        box.add(msg.as_bytes())


def test_another_clubs_game_with_the_same_tag_does_not_fail_an_honest_one(
        mailboxes: Callable[[str], tuple[str, Path]], capsys: pytest.CaptureFixture[str]) -> None:
    tag, folder = mailboxes("goofspiel")
    _, other = mailboxes("goofspiel")
    shutil.rmtree(other)
    shutil.copytree(folder, other)
    as_other_club(other, folder, "other.test", change_prize)
    verdict = check_mailbox(tag, folder)
    assert verdict.problems == []
    assert verdict.referee == "referee@club.test"
    assert any("referee@other.test" in line and "do not hold" in line for line in verdict.others)
    assert main([tag, "--mail", str(folder)]) == 0
    assert capsys.readouterr().out.startswith("verified\n")
    # Named, the other club's game is the one checked: it does not hold.
    assert main([tag, "--mail", str(folder), "--referee", "referee@other.test"]) == 1
    assert "round 2's prize" in capsys.readouterr().out


def test_a_strangers_forged_opening_earlier_does_not_fail_an_honest_game(
        mailboxes: Callable[[str], tuple[str, Path]], capsys: pytest.CaptureFixture[str]) -> None:
    tag, folder = mailboxes("pure-skill")
    _, first = next(messages(folder))
    for sender, domain in (("Mallory <mallory@evil.test>", "evil.test"),
                           ("Club Referee <referee@club.test>", "evil.test")):
        forged = first.__class__()
        for name, value in first.items():
            if name.lower() not in ("from", "message-id", "date", "content-transfer-encoding",
                                    "content-type", "mime-version"):
                forged[name] = value
        forged["From"] = sender
        forged["Message-ID"] = f"<pbm.1.{tag}.0123456789@{domain}>"
        forged["Date"] = "Sun, 01 Mar 2026 12:00:00 +0000"
        forged.set_content(re.sub(r"seed-sha256: \w+", "seed-sha256: " + "0" * 64, text(first)))
        mailbox.Maildir(folder, create=False).add(forged.as_bytes())
    verdict = check_mailbox(tag, folder)
    assert verdict.problems == []
    assert verdict.ignored == 1  # its Message-ID's domain is not its From's
    assert any("mallory@evil.test" in line and "do not hold" in line for line in verdict.others)
    assert main([tag, "--mail", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("verified\n1 mail with the tag not from the referee referee@club.test")
