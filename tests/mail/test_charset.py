"""Charsets: bodies and headers in whatever charset they claim, RFC 2047
encoded-words, raw 8-bit headers, and charsets no mailer sends
(``referee/mail/charset.py``), read through ``parse_message``."""

from __future__ import annotations

import warnings

import pytest

from referee.mail.headers import find_tag
from tests.mail.mails import parse, simple


def test_iso_8859_1_body_and_french_gmail_attribution() -> None:
    msg = parse(b"""\
From: =?iso-8859-1?q?Ren=E9e_Dupont?= <renee@example.net>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Manche 2
MIME-Version: 1.0
Content-Type: text/plain; charset=ISO-8859-1
Content-Transfer-Encoding: 8bit

bid 3

Tr\xe8s bien, je garde le roi.

Le lun. 3 juin 2024 \xe0 10:00, Goofspiel Referee <referee@pbm.example.org> a
\xe9crit :

> Round 2 of goofspiel-7: the prize is the 7.
""")
    assert msg.lines == ("bid 3", "Tr\u00e8s bien, je garde le roi.")
    assert msg.sender_name == "Ren\u00e9e Dupont"


def test_koi8_r_body_and_encoded_subject() -> None:
    msg = parse(b"""\
From: =?koi8-r?B?8dLP08zB1w==?= <yaroslav@example.org>
To: referee@pbm.example.org
Subject: =?koi8-r?B?UmU6IFtnb29mc3BpZWwtN10g89TB18vB?=
MIME-Version: 1.0
Content-Type: text/plain; charset="koi8-r"
Content-Transfer-Encoding: 8bit

bid 8
\xf5\xc4\xc1\xde\xc9 \xd7\xd3\xc5\xcd!
""")
    assert msg.lines == ("bid 8", "\u0423\u0434\u0430\u0447\u0438 \u0432\u0441\u0435\u043c!")
    assert msg.subject == "Re: [goofspiel-7] \u0421\u0442\u0430\u0432\u043a\u0430"
    assert msg.sender_name == "\u042f\u0440\u043e\u0441\u043b\u0430\u0432"
    assert find_tag(msg.subject) == "goofspiel-7"


@pytest.mark.parametrize(("content_type", "body", "expected"), [
    # declared us-ascii, really UTF-8: UTF-8 is the first fallback
    (b"text/plain; charset=us-ascii", "bid 5\nna\u00efve\n".encode(), ("bid 5", "na\u00efve")),
    # no charset, Windows-1252 bytes: curly apostrophe 0x92
    (b"text/plain", b"bid 5\nI\x92m in\n", ("bid 5", "I\u2019m in")),
    # a charset Python does not know
    (b"text/plain; charset=x-unknown", "bid 5\n\u00e9t\u00e9\n".encode(),
     ("bid 5", "\u00e9t\u00e9")),
    # UTF-8 with a byte-order mark
    (b"text/plain; charset=utf-8", b"\xef\xbb\xbfbid 5\n", ("bid 5",)),
    # a declared charset that is wrong for one byte (0x81 is not Windows-1252)
    (b"text/plain; charset=windows-1252", b"bid 5\n\x81x\n", ("bid 5", "\x81x")),
])
def test_charset_fallback(content_type: bytes, body: bytes, expected: tuple[str, ...]) -> None:
    raw = (b"From: alice@example.com\nTo: referee@pbm.example.org\nSubject: x\n"
           b"MIME-Version: 1.0\nContent-Type: " + content_type + b"\n"
           b"Content-Transfer-Encoding: 8bit\n\n" + body)
    assert parse(raw).lines == expected


def test_rfc2047_subject_and_from_name_are_decoded_and_unfolded() -> None:
    msg = parse(b"""\
From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <Juergen@Example.org>
To: =?UTF-8?Q?Goofspiel_Schiedsrichter?= <referee@pbm.example.org>
Subject: =?UTF-8?Q?Re=3A_=5Bgoofspiel-7=5D_Runde_2_=E2=80=93_Gebot_f=C3?=
 =?UTF-8?Q?=BCr_die_Sieben?=
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: quoted-printable

bid 5

Am Mo., 3. Juni 2024 um 10:00 Uhr schrieb Goofspiel Referee <
referee@pbm.example.org>:

> Round 2 of goofspiel-7: the prize is the 7.
""")
    assert msg.subject == "Re: [goofspiel-7] Runde 2 \u2013 Gebot f\u00fcr die Sieben"
    assert msg.sender_name == "J\u00fcrgen M\u00fcller"
    assert msg.sender == "juergen@example.org"
    assert msg.lines == ("bid 5",)


def test_raw_utf8_headers_are_read() -> None:  # RFC 6532
    msg = parse(simple(sender="Zo\u00eb \u00d8deg\u00e5rd <zoe@example.org>".encode(),
                       subject="Re: [goofspiel-7] R\u00f8und 2".encode()))
    assert msg.sender_name == "Zo\u00eb \u00d8deg\u00e5rd"
    assert msg.subject == "Re: [goofspiel-7] R\u00f8und 2"
    assert msg.lines == ("bid 5",)


def test_a_charset_that_decodes_to_lone_surrogates_falls_back() -> None:
    # "+2D0-" is UTF-7 for half a surrogate pair: no line may carry one, as
    # the transcript and the database need valid Unicode.
    msg = parse(simple(body=b"bid 5\n+2D0-\n").replace(b"charset=utf-8", b"charset=utf-7"))
    assert msg.lines == ("bid 5", "+2D0-")


def test_python_only_codecs_are_no_charsets() -> None:
    # unicode_escape would split this line in two, and warn on "\\`".
    raw = simple(body=b"bid 5 \\n play 2C \\`\n").replace(b"charset=utf-8",
                                                          b"charset=unicode_escape")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse(raw).lines == ("bid 5 \\n play 2C \\`",)
