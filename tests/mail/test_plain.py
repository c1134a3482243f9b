"""The mail written directly is, byte for byte, the mail the ``email``
package builds and flattens as it goes out (``as_bytes``), whatever
characters its names, subject and body hold; and it never takes the
``email`` package's slow way of building and flattening a whole message."""

from __future__ import annotations

import copy
from datetime import datetime
from email import generator, message_from_bytes
from email.message import EmailMessage
from email.policy import default
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail import plain
from referee.mail.compose import Composer

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
#: Mostly plain text, now and then with characters the direct way leaves alone.
TEXT = st.one_of(
    st.text(PRINTABLE, max_size=90), st.text(PRINTABLE, max_size=90),
    st.text(st.one_of(PRINTABLE, st.sampled_from("\t\né€\x00\r—♥Ωж漢\x85\x0b")), max_size=120))
NAME = st.one_of(st.just(""), st.from_regex(r"[A-Za-z][A-Za-z .,'\"-]{0,30}", fullmatch=True),
                 TEXT.map(lambda t: t[:40]))
LOCAL = st.from_regex(r"[a-z][a-z0-9.+_-]{0,20}", fullmatch=True)


def kwargs(to: list[tuple[str, str]], subject: str, body: str, **kw: Any) -> dict[str, Any]:
    return {"outbox_id": 17, "to": to, "subject": subject, "body": body,
            "tag": kw.get("tag"), "auto": "auto-replied", "in_reply_to": kw.get("irt"),
            "references": kw.get("refs", ()), "now": datetime(2026, 3, 2, 12, 0),
            "kind": kw.get("kind"), "reply_to": kw.get("reply_to")}


@settings(max_examples=1000, deadline=None)
@given(name=NAME, locals_=st.lists(st.tuples(LOCAL, NAME), min_size=1, max_size=3),
       subject=TEXT.map(lambda t: t.replace("\n", " ")),
       lines=st.lists(TEXT.map(lambda t: t.replace("\n", "")), min_size=1, max_size=8),
       tag=st.one_of(st.none(), st.just("spades-12")),
       irt=st.one_of(st.none(), st.just("<a.b@mua.test>"), st.just("<bad id>")),
       refs=st.lists(st.sampled_from(["<x@y.test>", "<" + "r" * 70 + "@y.test>", "<z@q>"]),
                     max_size=12),
       kind=st.one_of(st.none(), st.just("transcript"), st.just("x" * 80)),
       reply_to=st.one_of(st.none(), st.just("referee+tok@club.test")))
def test_the_direct_way_writes_what_the_email_package_writes(
        name: str, locals_: list[tuple[str, str]], subject: str, lines: list[str],
        tag: str | None, irt: str | None, refs: list[str], kind: str | None,
        reply_to: str | None) -> None:
    composer = Composer("referee@club.test", name, key=b"k")
    to = [(f"{local}@club.test", n) for local, n in locals_]
    kw = kwargs(to, subject, "\n".join(lines) + "\n", tag=tag, irt=irt, refs=refs, kind=kind,
                reply_to=reply_to)
    try:
        expected = composer.message(**kw).as_bytes().decode("utf-8")
    except ValueError:  # a subject no mail may have is refused both ways
        expected = "refused"
    try:
        written = composer.text(**kw)
    except ValueError:
        written = "refused"
    assert written == expected


def test_a_plain_mail_is_written_as_it_is() -> None:
    composer = Composer("referee@club.test", "Club Referee", key=b"k")
    mail = kwargs([("alice@club.test", "Alice")], "Re: [goofspiel-1] my bid",
                  "DONE (bid 3)\n\nYour hand: 1 2 4 5 6\n", tag="goofspiel-1",
                  irt="<a.b@mua.test>", refs=["<a.b@mua.test>"], kind="transcript")
    assert plain.address("J. Smith", "j@club.test") is None  # quoted by the registry
    for odd in ("a.@club.test", ".a@club.test", "a..b@club.test", "a@club..test"):
        assert plain.address("", odd) is None  # refused by the registry
    written = composer.text(**mail)
    assert written == composer.message(**mail).as_string()
    assert "Content-Transfer-Encoding: 7bit\r\n" in written
    assert written.endswith("\r\n\r\nDONE (bid 3)\r\n\r\nYour hand: 1 2 4 5 6\r\n")


def test_a_body_goes_out_8bit_when_its_lines_fit_and_quoted_printable_when_not() -> None:
    assert plain.transfer_encoding("plain\n") == "7bit"
    assert plain.transfer_encoding("Zoë — ♥\n") == "8bit"
    assert plain.transfer_encoding("é" * 39 + "\n") == "8bit"  # 78 bytes
    assert plain.transfer_encoding("é" * 40 + "\n") == "quoted-printable"
    assert plain.transfer_encoding("x" * 79 + "\n") == "quoted-printable"


REPORT = ("Round 3 — Zoë Ångström takes the ♥ 12 (bid 9 against Jürgen's 7)\n\n"
          "Scores: Zoë Ångström 21, Jürgen Weiß 14, Łukasz 3\n")
LONG = "A long line of the report, " * 5 + "— and its end ♥\n"


@pytest.mark.parametrize(("body", "cte"), [
    (REPORT, "8bit"), ("Your bid is noted.\n\n" + REPORT + LONG, "quoted-printable")])
def test_a_report_with_non_ascii_text_takes_the_plain_way_and_reads_back(
        body: str, cte: str, monkeypatch: pytest.MonkeyPatch) -> None:
    composer = Composer("referee@club.test", "Clüb Referee — Nord", key=b"k")
    mail = kwargs([("zoe@club.test", "Zoë Ångström"), ("j@club.test", "Jürgen Weiß")],
                  "[goofspiel-1] Round 3 — Zoë takes ♥ 12", body, tag="goofspiel-1",
                  irt="<a.b@mua.test>", refs=["<a.b@mua.test>"], kind="transcript report")

    def slow(*args: object, **kw: object) -> None:
        raise AssertionError("the email package's slow way was taken")

    with monkeypatch.context() as patched:
        for name in ("flatten", "_write", "_handle_text"):
            patched.setattr(generator.Generator, name, slow)
        patched.setattr(copy, "deepcopy", slow)
        patched.setattr(EmailMessage, "set_content", slow)
        written = composer.text(**mail)
    # The body goes out in 8bit or quoted-printable, never base64.
    assert written.partition("\r\n\r\n")[2].isascii() == (cte != "8bit")
    msg = message_from_bytes(written.encode("utf-8"), policy=default)
    assert isinstance(msg, EmailMessage)
    assert str(msg["Subject"]) == "[goofspiel-1] Round 3 — Zoë takes ♥ 12"
    assert [(a.display_name, a.addr_spec) for a in msg["To"].addresses] == [
        ("Zoë Ångström", "zoe@club.test"), ("Jürgen Weiß", "j@club.test")]
    assert msg["From"].addresses[0].display_name == "Clüb Referee — Nord"
    assert msg.get_content().replace("\r\n", "\n") == body
    assert msg["Content-Transfer-Encoding"] == cte
    assert written.partition("\r\n\r\n")[0].isascii()  # headers RFC 2047-encoded
    assert written == composer.message(**mail).as_bytes().decode("utf-8")


#: A report with a dash in its headline, non-ASCII text and a line too long
#: for 8bit (a seed's digest), byte for byte as it goes out.
PINNED_QP = (
    "From: Club Referee <referee@club.test>\r\nTo: Alice <alice@club.test>\r\n"
    "Subject: [goofspiel-3] Round 1: Alice takes 13 =?utf-8?q?=E2=80=94_round_2_p?=\r\n"
    " =?utf-8?q?rize_1=3A_your_bid?=\r\nDate: Mon, 02 Mar 2026 13:00:01 +0000\r\n"
    "Message-ID: <pbm.41.goofspiel-3.267b382f53@club.test>\r\nIn-Reply-To: <a.b@mua.test>\r\n"
    "References: <pbm.game.goofspiel-3@club.test>\r\n <a.b@mua.test>\r\n"
    "Auto-Submitted: auto-generated\r\nX-Loop: referee@club.test\r\nPrecedence: bulk\r\n"
    "X-Auto-Response-Suppress: OOF, AutoReply\r\n"
    "Reply-To: Club Referee <referee+tok@club.test>\r\n"
    "X-Referee-Mail: transcript round_report\r\n"
    'Content-Type: text/plain; charset="utf-8"\r\n'
    "Content-Transfer-Encoding: quoted-printable\r\nMIME-Version: 1.0\r\n\r\n"
    "ROUND 1: THE PRIZE WAS 5\r\n  Alice bid 5 =E2=80=94 Bob bid 3\r\n\r\n"
    "  seed-sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd=\r\n"
    "ef\r\n\r\n--=20\r\nClub Referee <referee@club.test>\r\n")
PINNED_8BIT = (
    "From: Club Referee <referee@club.test>\r\nTo: Bob <bob@club.test>\r\n"
    "Subject: [goofspiel-3] Round 2 =?utf-8?b?4oCUIEJvYg==?=\r\n"
    "Date: Mon, 02 Mar 2026 13:00:02 +0000\r\n"
    "Message-ID: <pbm.42.goofspiel-3.7955074f51@club.test>\r\n"
    "In-Reply-To: <pbm.game.goofspiel-3@club.test>\r\n"
    "References: <pbm.game.goofspiel-3@club.test>\r\nAuto-Submitted: auto-replied\r\n"
    "X-Loop: referee@club.test\r\nPrecedence: bulk\r\n"
    "X-Auto-Response-Suppress: OOF, AutoReply\r\n"
    "Reply-To: Club Referee <referee@club.test>\r\nX-Referee-Mail: transcript\r\n"
    'Content-Type: text/plain; charset="utf-8"\r\n'
    "Content-Transfer-Encoding: 8bit\r\nMIME-Version: 1.0\r\n\r\n"
    "Your hand: 1 2 4 \u2014 bid one card\r\n")


def test_a_composed_mail_is_pinned_byte_for_byte() -> None:
    composer = Composer("referee@club.test", "Club Referee", key=b"k")
    report = kwargs([("alice@club.test", "Alice")],
                    "[goofspiel-3] Round 1: Alice takes 13 \u2014 round 2 prize 1: your bid",
                    "ROUND 1: THE PRIZE WAS 5\n  Alice bid 5 \u2014 Bob bid 3\n\n  seed-sha256: "
                    + "0123456789abcdef" * 4 + "\n\n-- \nClub Referee <referee@club.test>\n",
                    tag="goofspiel-3", irt="<a.b@mua.test>", refs=["<a.b@mua.test>"],
                    kind="transcript round_report", reply_to="referee+tok@club.test")
    report.update(outbox_id=41, auto="auto-generated", now=datetime(2026, 3, 2, 13, 0, 1))
    answer = kwargs([("bob@club.test", "Bob")], "[goofspiel-3] Round 2 \u2014 Bob",
                    "Your hand: 1 2 4 \u2014 bid one card\n", tag="goofspiel-3",
                    kind="transcript")
    answer.update(outbox_id=42, now=datetime(2026, 3, 2, 13, 0, 2))
    for mail, pinned in ((report, PINNED_QP), (answer, PINNED_8BIT)):
        assert composer.text(**mail) == pinned
        assert composer.message(**mail).as_bytes() == pinned.encode("utf-8")
