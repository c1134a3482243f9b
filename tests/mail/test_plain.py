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
