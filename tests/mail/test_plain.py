"""The mail written directly is, byte for byte, the mail the ``email``
package builds and flattens; what the direct way cannot write, it leaves."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail import plain
from referee.mail.compose import Composer

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
#: Mostly plain text, now and then with characters the direct way leaves alone.
TEXT = st.one_of(
    st.text(PRINTABLE, max_size=90), st.text(PRINTABLE, max_size=90),
    st.text(st.one_of(PRINTABLE, st.sampled_from("\t\né€\x00\r")), max_size=120))
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
        expected = composer.message(**kw).as_string()
    except ValueError:  # a subject no mail may have is refused both ways
        expected = "refused"
    try:
        written = composer.text(**kw)
    except ValueError:
        written = "refused"
    assert written == expected


def test_a_plain_mail_takes_the_direct_way_and_an_unusual_one_does_not() -> None:
    composer = Composer("referee@club.test", "Club Referee", key=b"k")
    mail = kwargs([("alice@club.test", "Alice")], "Re: [goofspiel-1] my bid",
                  "DONE (bid 3)\n\nYour hand: 1 2 4 5 6\n", tag="goofspiel-1",
                  irt="<a.b@mua.test>", refs=["<a.b@mua.test>"], kind="transcript")
    head = [("From", "Club Referee <referee@club.test>"), ("Subject", "hi")]
    assert plain.flatten(head, mail["body"]) is not None
    assert plain.flatten(head, "é\n") is None
    assert plain.flatten(head, "x" * 79 + "\n") is None
    assert plain.address("J. Smith", "j@club.test") is None  # quoted by the registry
    for odd in ("a.@club.test", ".a@club.test", "a..b@club.test", "a@club..test"):
        assert plain.address("", odd) is None  # refused by the registry
    assert composer.text(**mail) == composer.message(**mail).as_string()
