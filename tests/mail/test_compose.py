"""Outgoing mail as a player's mail client reads it back."""

from __future__ import annotations

from datetime import datetime
from email import message_from_bytes
from email.header import Header, decode_header, make_header
from email.message import EmailMessage
from email.policy import SMTP, default

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail.compose import Composer, set_subject, subject_value

T0 = datetime(2026, 11, 2, 12, 0)


def read_back(msg: EmailMessage) -> EmailMessage:
    parsed = message_from_bytes(msg.as_bytes(), policy=default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def subject_round_trip(subject: str) -> str:
    msg = EmailMessage(policy=SMTP)
    set_subject(msg, subject)
    msg.set_content("x")
    return str(read_back(msg)["Subject"])


def test_a_folded_subject_with_a_dash_after_the_fold_keeps_single_spaces() -> None:
    subject = "[goofspiel-1] Round 1: Maximiliane von Hohenberg takes 12 — round 2 prize 1"
    assert subject_round_trip(subject) == subject


def test_the_game_tag_stays_plain_in_the_raw_header_for_filters() -> None:
    msg = EmailMessage(policy=SMTP)
    set_subject(msg, "[spades-4] Trick 3: Zoë wins — Zoë leads")
    msg.set_content("x")
    raw = msg.as_bytes().decode("ascii")
    assert "\nSubject: [spades-4] Trick 3: =?utf-8?" in "\n" + raw


def test_a_subject_of_two_lines_is_refused() -> None:
    with pytest.raises(ValueError):
        set_subject(EmailMessage(policy=SMTP), "bid 5\r\nBcc: victim@example.org")


# Printable text without line breaks, as a template can produce it.
subjects = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=200
).filter(lambda s: s.strip() == s and "  " not in s)


@given(subjects)
def test_every_subject_reads_back_exactly(subject: str) -> None:
    assert subject_round_trip(subject) == subject


def test_a_composed_message_threads_under_the_game_and_marks_itself_automatic() -> None:
    composer = Composer("referee@example.test", "The Referee")
    msg = read_back(composer.message(
        outbox_id=7, to=[("alice@example.test", "Alice")], subject="[goofspiel-1] Round 1",
        body="Hello.\n", tag="goofspiel-1", auto="auto-replied",
        in_reply_to="<abc@example.org>", references=["<root@example.org>"], now=T0,
    ))
    root = composer.game_root("goofspiel-1")
    assert msg["Message-ID"] == composer.message_id(7, "goofspiel-1")
    assert msg["In-Reply-To"] == "<abc@example.org>"
    assert msg["References"] == f"{root} <root@example.org> <abc@example.org>"
    assert msg["Auto-Submitted"] == "auto-replied"
    assert msg["X-Loop"] == "referee@example.test"
    assert composer.tag_from_ids([msg["Message-ID"]]) == "goofspiel-1"


def test_the_id_of_a_mail_about_no_game_names_no_game() -> None:
    """A reply to a mail of no game (a refusal, a new private address) is
    not taken for a mail about a game called "referee-0": the thread's
    game, if an earlier mail of it names one, else none."""
    composer = Composer("referee@example.test", "The Referee")
    gameless = composer.message_id(8, None)
    assert composer.tag_from_ids([gameless]) is None
    assert composer.tag_from_ids([composer.message_id(7, "goofspiel-1"), gameless]) == (
        "goofspiel-1")


@pytest.mark.parametrize("length", range(60, 100))
def test_a_plain_subject_of_any_length_reads_back_without_a_leading_space(length: int) -> None:
    """Python folded an ASCII subject of 70 to 78 characters right after
    "Subject:", and mail clients showed it beginning with a space."""
    words = "[miser-1] Turn 4: Alice passes - GAME OVER: Bob wins with 20 pennies and a lot more"
    subject = (words * 2)[:length].rstrip()
    assert subject_round_trip(subject) == subject


@given(st.lists(st.from_regex(r"[a-z][a-z_]{0,30}", fullmatch=True), min_size=1, max_size=40))
def test_a_mail_of_many_parts_names_each_kind_and_its_header_never_starts_with_a_space(
        kinds: list[str]) -> None:
    """A mail of many parts names each in X-Referee-Mail; folded or not,
    as stored (plain text) or composed, it reads back word for word."""
    composer = Composer("referee@example.test", "The Referee")
    kind = " ".join(["table", *kinds])
    common = dict(outbox_id=7, to=[("alice@example.test", "Alice")], subject="[miser-1] Miser",
                  body="Hello.\n", tag="miser-1", auto="auto-generated", in_reply_to=None,
                  references=[], now=T0, kind=kind)
    for raw in (composer.message(**common).as_bytes(), composer.text(**common).encode()):
        parsed = message_from_bytes(raw, policy=default)
        assert str(parsed["X-Referee-Mail"]) == kind
        assert all(len(line) <= 78 for line in raw.decode().splitlines())
        assert b"X-Referee-Mail: \r\n" not in raw


def _by_the_email_package(subject: str) -> str:
    """A non-ASCII subject's value as ``email.header.Header`` encodes it:
    how :func:`subject_value` wrote every one before it wrote them itself."""
    words = subject.split(" ")
    first = next(i for i, w in enumerate(words) if not w.isascii())
    header = Header(header_name="Subject")
    if first:
        header.append(" ".join(words[:first]), "us-ascii")
    header.append(" ".join(words[first:]), "utf-8")
    return header.encode()


def _read(value: str) -> tuple[str, str]:
    """``Subject: value`` as the ``email`` parser reads it, and as the old
    API (``decode_header``) does."""
    raw = f"Subject: {value.replace(chr(10), chr(13) + chr(10))}\r\n\r\nx\r\n".encode("ascii")
    parsed = message_from_bytes(raw, policy=default)
    return str(parsed["Subject"]), str(make_header(decode_header(value)))


# Any one-line text with a character beyond ASCII, double and outer spaces,
# and encoded-word punctuation included.
non_ascii_subjects = st.builds(
    lambda head, mid, tail: head + mid + tail,
    st.text(st.sampled_from(list("ab [-1]:?=_ ")) | st.characters(
        blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=90),
    st.characters(min_codepoint=0x80, blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=120),
)


@settings(max_examples=400)
@given(non_ascii_subjects)
def test_a_non_ascii_subject_is_written_directly_as_the_email_package_wrote_it(
        subject: str) -> None:
    value, before = subject_value(subject), _by_the_email_package(subject)
    assert value == before
    assert _read(value) == _read(before)
    if "  " not in subject and subject.strip() == subject:
        assert _read(value)[0] == subject
    assert "?q??=" not in value  # no empty encoded-word


def test_a_report_headline_with_a_dash_is_written_directly_as_before() -> None:
    subject = "[goofspiel-12] Round 3 report — Alice takes 5"
    assert subject_value(subject) == _by_the_email_package(subject) == (
        "[goofspiel-12] Round 3 report =?utf-8?q?=E2=80=94_Alice_takes_5?=")


@pytest.mark.parametrize("plain", range(0, 72, 3))
@pytest.mark.parametrize("text", ["𐀀𐀀𐀀 y", "é" * 40, "— a ?=_ b " * 6])
def test_a_non_ascii_subject_splits_between_characters_wherever_its_plain_words_end(
        plain: int, text: str) -> None:
    subject = (("x" * plain) + " " if plain else "") + text
    value = subject_value(subject)
    assert value == _by_the_email_package(subject)
    assert _read(value) == (subject, subject)
    assert "?q??=" not in value
