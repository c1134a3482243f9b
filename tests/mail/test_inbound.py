"""Inbound mail: real clients' messages -> InboundMessage.

Each message is written the way its client sends it (headers, MIME structure,
transfer encoding), with CRLF line ends as IMAP delivers them unless a test
says otherwise. Every test asserts the whole ``lines`` tuple.
"""

from __future__ import annotations

import base64
import binascii
import html
import quopri
import subprocess
import sys
import warnings
from datetime import UTC, datetime, timedelta, timezone
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail import headers, mime, quotes
from referee.mail.automation import Automation, Bounce
from referee.mail.headers import Unreadable, find_tag
from referee.mail.inbound import InboundMessage, parse_message, read_heading, recipients
from tests.mailstack import GIVE_UP, REPO_ROOT

REFEREE = "referee@pbm.example.org"
LIST = "players@pbm.example.org"
DOMAIN = "pbm.example.org"


def parse(raw: bytes, *, crlf: bool = True) -> InboundMessage:
    """Parse as the referee does; ``crlf`` turns LF line ends into the wire's CRLF."""
    if crlf:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return parse_message(raw, referee_address=REFEREE, list_address=LIST, our_domain=DOMAIN)


def b64(text: str, charset: str) -> bytes:
    """A body as Outlook sends it: base64 in lines of 76."""
    return base64.encodebytes(text.encode(charset))


def simple(headers: bytes = b"", *, subject: bytes = b"Re: [goofspiel-7] Round 2",
           sender: bytes = b"Alice Martin <alice@example.com>", body: bytes = b"bid 5\n") -> bytes:
    """A one-part plain message with extra ``headers``, for single-header rules."""
    return (
        b"From: " + sender + b"\n"
        b"To: Goofspiel Referee <referee@pbm.example.org>\n"
        b"Subject: " + subject + b"\n"
        b"Date: Mon, 3 Jun 2024 11:02:17 +0200\n"
        b"Message-ID: <20240603090217.12345@mail.example.com>\n"
        + headers
        + b"MIME-Version: 1.0\n"
        b"Content-Type: text/plain; charset=utf-8\n"
        b"\n" + body
    )


# -- replies from real clients ---------------------------------------------------

GMAIL_REPLY = b"""\
Return-Path: <alice.martin@example.com>
Delivered-To: referee@pbm.example.org
MIME-Version: 1.0
References: <pbm.game.goofspiel-7@pbm.example.org> <pbm.41.goofspiel-7@pbm.example.org>
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>
From: Alice Martin <Alice.Martin@example.com>
Date: Mon, 3 Jun 2024 11:02:17 +0200
Message-ID: <CAF3x8_Zq1wQk9s0GjH4f2+v=Wm5xVdE_tn0A@mail.gmail.com>
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
To: Goofspiel Referee <referee@pbm.example.org>
Content-Type: multipart/alternative; boundary="0000000000004f3b6a061a0e2c1d"

--0000000000004f3b6a061a0e2c1d
Content-Type: text/plain; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

bid 5

I=E2=80=99m saving the king for later.

On Mon, 3 Jun 2024 at 10:00, Goofspiel Referee <referee@pbm.example.org>
wrote:

> Round 2 of goofspiel-7: the prize is the 7.
> Your pack: A 2 3 4 5 6 8 9 10 J Q K
> Send your bid, e.g. "bid 5".
>
> --
> Goofspiel Referee
>

--0000000000004f3b6a061a0e2c1d
Content-Type: text/html; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

<div dir=3D"ltr"><div>bid 5</div><div><br></div><div>I=E2=80=99m saving th=
e king for later.</div></div><br><div class=3D"gmail_quote"><div dir=3D"ltr=
" class=3D"gmail_attr">On Mon, 3 Jun 2024 at 10:00, Goofspiel Referee &lt;<=
a href=3D"mailto:referee@pbm.example.org">referee@pbm.example.org</a>&gt; w=
rote:<br></div><blockquote class=3D"gmail_quote" style=3D"margin:0px 0px 0p=
x 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">Round 2 of=
 goofspiel-7: the prize is the 7.<br>Your pack: A 2 3 4 5 6 8 9 10 J Q K<br=
>Send your bid, e.g. &quot;bid 5&quot;.<br><br>--<br>Goofspiel Referee<br>
</blockquote></div>

--0000000000004f3b6a061a0e2c1d--
"""


def test_gmail_reply_reads_the_top_posted_plain_part() -> None:
    msg = parse(GMAIL_REPLY)
    assert msg.lines == ("bid 5", "I\u2019m saving the king for later.")
    assert msg.automation is Automation.NONE
    assert msg.sender == "alice.martin@example.com"
    assert msg.sender_name == "Alice Martin"
    assert msg.to == ("referee@pbm.example.org",)
    assert msg.cc == ()
    assert msg.subject == "Re: [goofspiel-7] Round 2: the prize is the 7"
    assert msg.message_id == "CAF3x8_Zq1wQk9s0GjH4f2+v=Wm5xVdE_tn0A@mail.gmail.com"
    assert msg.in_reply_to == ("pbm.41.goofspiel-7@pbm.example.org",)
    assert msg.references == (
        "pbm.game.goofspiel-7@pbm.example.org", "pbm.41.goofspiel-7@pbm.example.org",
    )
    assert msg.list_id is None
    assert msg.date == datetime(2024, 6, 3, 9, 2, 17, tzinfo=UTC)
    assert msg.size == len(GMAIL_REPLY.replace(b"\n", b"\r\n"))
    assert not msg.tnef_only


def test_gmail_html_part_alone_drops_gmail_quote_and_signature() -> None:
    msg = parse(b"""\
From: Alice Martin <alice.martin@example.com>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
MIME-Version: 1.0
Content-Type: text/html; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

<div dir=3D"ltr"><div>bid 5</div><div>play&nbsp;QH</div><br clear=3D"all"><=
div><div dir=3D"ltr" class=3D"gmail_signature">Alice<br>alice.example.com</=
div></div></div><br><div class=3D"gmail_quote gmail_quote_container"><div d=
ir=3D"ltr" class=3D"gmail_attr">On Mon, 3 Jun 2024 at 10:00, Goofspiel Refe=
ree &lt;referee@pbm.example.org&gt; wrote:<br></div><blockquote class=3D"gm=
ail_quote">Send your bid, e.g. &quot;bid 5&quot;.</blockquote></div>
""")
    assert msg.lines == ("bid 5", "play QH")


THUNDERBIRD_REPLY = b"""\
Message-ID: <6f1d2c3a-9b7e-4c1f-8a2d-1e5b7c9d0f3a@example.net>
Date: Mon, 3 Jun 2024 12:15:40 +0200
MIME-Version: 1.0
User-Agent: Mozilla Thunderbird
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
Content-Language: en-GB
To: Goofspiel Referee <referee@pbm.example.org>
References: <pbm.game.goofspiel-7@pbm.example.org>
 <pbm.41.goofspiel-7@pbm.example.org>
From: Bob Ferris <bob@example.net>
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>
Content-Type: multipart/alternative;
 boundary="------------Hd0w2PqzK3mV9cJx1aLsT7Ye"

This is a multi-part message in MIME format.
--------------Hd0w2PqzK3mV9cJx1aLsT7Ye
Content-Type: text/plain; charset=UTF-8; format=flowed
Content-Transfer-Encoding: 7bit

On 03/06/2024 10:00, Goofspiel Referee wrote:
> Round 2 of goofspiel-7: the prize is the 7.
> Your pack: A 2 3 4 5 6 8 9 10 J Q K
> Send your bid, e.g. "bid 5".

bid 9

The 7 is worth more to me than it looks, so I am bidding high this\x20
round and keeping the queen for the last prizes.

--\x20
Bob Ferris
bid 1 (my signature is not a move)

--------------Hd0w2PqzK3mV9cJx1aLsT7Ye
Content-Type: text/html; charset=UTF-8
Content-Transfer-Encoding: 7bit

<!DOCTYPE html>
<html>
  <head>
    <meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
  </head>
  <body>
    <div class="moz-cite-prefix">On 03/06/2024 10:00, Goofspiel Referee
      wrote:<br>
    </div>
    <blockquote type="cite"
      cite="mid:pbm.41.goofspiel-7@pbm.example.org">Round 2 of goofspiel-7: the prize is
      the 7.<br>
      Send your bid, e.g. "bid 5".<br>
    </blockquote>
    <p>bid 9</p>
    <p>The 7 is worth more to me than it looks, so I am bidding high this
      round and keeping the queen for the last prizes.</p>
    <div class="moz-signature">-- <br>
      Bob Ferris<br>
      bid 1 (my signature is not a move)</div>
  </body>
</html>

--------------Hd0w2PqzK3mV9cJx1aLsT7Ye--
"""


def test_thunderbird_bottom_posted_flowed_reply_keeps_the_text_below_the_quote() -> None:
    msg = parse(THUNDERBIRD_REPLY)
    assert msg.lines == (
        "bid 9",
        "The 7 is worth more to me than it looks, so I am bidding high this round and"
        " keeping the queen for the last prizes.",
    )
    assert msg.references == (
        "pbm.game.goofspiel-7@pbm.example.org", "pbm.41.goofspiel-7@pbm.example.org",
    )


def test_thunderbird_html_alone_drops_moz_cite_prefix_blockquote_and_signature() -> None:
    html = THUNDERBIRD_REPLY.split(b"Content-Transfer-Encoding: 7bit\n\n")[2]
    msg = parse(
        b"From: Bob Ferris <bob@example.net>\n"
        b"To: Goofspiel Referee <referee@pbm.example.org>\n"
        b"Subject: Re: [goofspiel-7] Round 2: the prize is the 7\n"
        b"MIME-Version: 1.0\n"
        b"Content-Type: text/html; charset=UTF-8\n"
        b"Content-Transfer-Encoding: 7bit\n\n" + html.split(b"--------------")[0]
    )
    assert msg.lines == (
        "bid 9",
        "The 7 is worth more to me than it looks, so I am bidding high this round and"
        " keeping the queen for the last prizes.",
    )


OUTLOOK_WEB_HTML = """\
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=Windows-1252">
<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>
</head>
<body dir="ltr">
<div class="elementToProof" style="font-family: Aptos, Calibri, Helvetica, sans-serif; \
font-size: 12pt; color: rgb(0, 0, 0);">
play QH</div>
<div class="elementToProof" style="font-family: Aptos, Calibri, Helvetica, sans-serif; \
font-size: 12pt; color: rgb(0, 0, 0);">
I\u2019m leading with the queen \u2013 trumps next. Tr\u00e8s bien.</div>
<div id="appendonsend"></div>
<hr style="display:inline-block;width:98%" tabindex="-1">
<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" \
color="#000000"><b>From:</b> Spades Referee &lt;referee@pbm.example.org&gt;<br>
<b>Sent:</b> Monday, June 3, 2024 10:00<br>
<b>To:</b> Carol Nguyen &lt;carol@example.org&gt;<br>
<b>Subject:</b> [spades-3] Trick 4: your lead</font>
<div>&nbsp;</div>
</div>
<div class="BodyFragment"><font size="2"><span style="font-size:11pt;">
<div class="PlainText">Trick 4 of spades-3: you lead.<br>
Your hand: QH 9H 4C 2S<br>
Play a card, e.g. &quot;play 4C&quot;.<br>
</div>
</span></font></div>
</body>
</html>
"""


def test_outlook_web_html_reply_in_windows_1252_base64_stops_at_divrplyfwdmsg() -> None:
    msg = parse(b"""\
From: Carol Nguyen <carol@example.org>
To: Spades Referee <referee@pbm.example.org>
Subject: Re: [spades-3] Trick 4: your lead
Thread-Topic: [spades-3] Trick 4: your lead
Thread-Index: AQHatb1c2Vh0lqQ2ZkK0m3y8Xz5w3w==
Date: Mon, 3 Jun 2024 08:41:09 +0000
Message-ID:
 <DB9PR07MB7771C0FFEE0A1B2C3D4E5F6A7B8C9D0@DB9PR07MB7771.eurprd07.prod.outlook.com>
References: <pbm.57.spades-3@pbm.example.org>
In-Reply-To: <pbm.57.spades-3@pbm.example.org>
Accept-Language: en-GB, en-US
Content-Language: en-GB
X-MS-Has-Attach:
X-MS-TNEF-Correlator:
Content-Type: text/html; charset="Windows-1252"
Content-Transfer-Encoding: base64
MIME-Version: 1.0

""" + b64(OUTLOOK_WEB_HTML, "windows-1252"))
    assert msg.lines == (
        "play QH",
        "I\u2019m leading with the queen \u2013 trumps next. Tr\u00e8s bien.",
    )
    assert msg.message_id == (
        "DB9PR07MB7771C0FFEE0A1B2C3D4E5F6A7B8C9D0@DB9PR07MB7771.eurprd07.prod.outlook.com"
    )
    assert msg.date == datetime(2024, 6, 3, 8, 41, 9, tzinfo=UTC)


OUTLOOK_HEADERS = b"""\
From: Dan Okafor <dan@example.org>
To: "Goofspiel Referee" <referee@pbm.example.org>
Subject: RE: [goofspiel-7] Round 2: the prize is the 7
Date: Mon, 3 Jun 2024 09:12:44 +0100
Message-ID: <000001dab5a2$4c1e9f40$e45bddc0$@example.org>
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: 7bit
X-Mailer: Microsoft Outlook 16.0
Thread-Index: AQHatb1c2Vh0lqQ2ZkK0m3y8Xz5w3w==
Content-Language: en-gb

"""


def test_outlook_desktop_html_reply_stops_at_the_from_sent_block() -> None:
    msg = parse(b"""\
From: Dan Okafor <dan@example.org>
To: "Goofspiel Referee" <referee@pbm.example.org>
Subject: RE: [goofspiel-7] Round 2: the prize is the 7
Date: Mon, 3 Jun 2024 09:12:44 +0100
Message-ID: <000101dab5a2$4c1e9f40$e45bddc0$@example.org>
MIME-Version: 1.0
Content-Type: text/html; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable
X-Mailer: Microsoft Outlook 16.0

<html xmlns:v=3D"urn:schemas-microsoft-com:vml" xmlns:o=3D"urn:schemas-micr=
osoft-com:office:office"><head><!--[if gte mso 9]><xml><o:shapedefaults v:e=
xt=3D"edit" spidmax=3D"1026" /></xml><![endif]--><style><!--
p.MsoNormal {margin:0cm; font-size:11.0pt; font-family:"Calibri",sans-serif;}
--></style></head><body lang=3DEN-GB style=3D'word-wrap:break-word'><div cl=
ass=3DWordSection1><p class=3DMsoNormal>bid 4<o:p></o:p></p><p class=3DMsoN=
ormal><o:p>&nbsp;</o:p></p><p class=3DMsoNormal>Dan<o:p></o:p></p><p class=
=3DMsoNormal><o:p>&nbsp;</o:p></p><div><div style=3D'border:none;border-top=
:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm'><p class=3DMsoNormal><b><sp=
an lang=3DEN-US>From:</span></b><span lang=3DEN-US> Goofspiel Referee &lt;r=
eferee@pbm.example.org&gt; <br><b>Sent:</b> 03 June 2024 10:00<br><b>To:</b=
> Dan Okafor &lt;dan@example.org&gt;<br><b>Subject:</b> [goofspiel-7] Round=
 2<o:p></o:p></span></p></div></div><p class=3DMsoNormal><o:p>&nbsp;</o:p><=
/p><p class=3DMsoNormal>Send your bid, e.g. &quot;bid 5&quot;.<o:p></o:p></=
p></div></body></html>
""")
    assert msg.lines == ("bid 4", "Dan")


@pytest.mark.parametrize("separator", [
    b"",
    b"________________________________\n",
    b"-----Original Message-----\n",
])
def test_outlook_plain_reply_stops_at_the_quoted_header_block(separator: bytes) -> None:
    msg = parse(OUTLOOK_HEADERS + b"bid 4\n\nDan\n\n" + separator + b"""\
From: Goofspiel Referee <referee@pbm.example.org>\x20
Sent: 03 June 2024 10:00
To: Dan Okafor <dan@example.org>
Subject: [goofspiel-7] Round 2: the prize is the 7

Round 2 of goofspiel-7: the prize is the 7.
Send your bid, e.g. "bid 5".
""")
    assert msg.lines == ("bid 4", "Dan")


def test_outlook_original_message_marker_alone_ends_the_reply() -> None:
    msg = parse(OUTLOOK_HEADERS + b"""\
bid 4

----- Original Message -----
Send your bid, e.g. "bid 5".
""")
    assert msg.lines == ("bid 4",)


def test_iphone_reply_stops_at_sent_from_my_iphone() -> None:
    msg = parse(b"""\
Content-Type: text/plain;
\tcharset=utf-8
Content-Transfer-Encoding: quoted-printable
From: Erin Walsh <erin@example.com>
Mime-Version: 1.0 (1.0)
Date: Mon, 3 Jun 2024 10:20:31 +0100
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
Message-Id: <4B1E5C2D-8F3A-4D6B-9C7E-2A1F0E9D8C7B@example.com>
References: <pbm.41.goofspiel-7@pbm.example.org>
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>
To: Goofspiel Referee <referee@pbm.example.org>
X-Mailer: iPhone Mail (21F90)

Bid 6

Sent from my iPhone

> On 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org> wro=
te:
>=20
> =EF=BB=BFRound 2 of goofspiel-7: the prize is the 7.
> Send your bid, e.g. "bid 5".
""")
    assert msg.lines == ("Bid 6",)
    assert msg.message_id == "4B1E5C2D-8F3A-4D6B-9C7E-2A1F0E9D8C7B@example.com"


def test_apple_mail_flowed_delsp_reply_drops_an_attribution_wrapped_over_two_lines() -> None:
    msg = parse(b"""\
From: Erin Walsh <erin@example.com>
Content-Type: text/plain; charset=us-ascii; format=flowed; delsp=yes
Content-Transfer-Encoding: 7bit
Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3774.600.62\\))
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
Date: Mon, 3 Jun 2024 10:24:02 +0100
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>
To: Goofspiel Referee <referee@pbm.example.org>
References: <pbm.41.goofspiel-7@pbm.example.org>
Message-Id: <B5C2E1F0-3A4D-4E8B-9F7A-6C5D4E3F2A1B@example.com>
X-Mailer: Apple Mail (2.3774.600.62)

bid 6
and for the record: I will keep the king for the thir\x20
teen.

On 3 Jun 2024, at 10:00, Goofspiel Referee
<referee@pbm.example.org> wrote:

> Round 2 of goofspiel-7: the prize is the 7.
> Send your bid, e.g. "bid 5".
""")
    assert msg.lines == ("bid 6", "and for the record: I will keep the king for the thirteen.")


def test_attribution_followed_by_an_unquoted_original_ends_the_reply() -> None:
    msg = parse(simple(body=b"""\
bid 2

On Mon, 3 Jun 2024 at 10:00, Goofspiel Referee
<referee@pbm.example.org> wrote:
Round 2 of goofspiel-7: the prize is the 7.
Send your bid, e.g. "bid 5".
"""))
    assert msg.lines == ("bid 2",)


def test_interleaved_answers_below_quoted_lines_are_kept() -> None:
    msg = parse(simple(body=b"""\
Goofspiel Referee <referee@pbm.example.org> wrote:
> Round 2 of goofspiel-7: the prize is the 7.
> Send your bid, e.g. "bid 5".
bid 7
> Or "resign".
  no thanks
"""))
    assert msg.lines == ("bid 7", "no thanks")


@pytest.mark.parametrize("separator", [b"--\x20", b"--"])
def test_everything_after_a_signature_separator_is_dropped(separator: bytes) -> None:
    msg = parse(simple(body=b"bid 5\n\n" + separator + b"\nAlice\nplay QH\n"))
    assert msg.lines == ("bid 5",)


# -- charsets and encoded words ----------------------------------------------------

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


# -- forwards, attachments, signed and Outlook mail ---------------------------------

def test_commands_inside_a_forwarded_message_are_not_read() -> None:
    msg = parse(b"""\
From: Frank Li <frank@example.org>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Fwd: my bid
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="fwd-9f8e7d"

--fwd-9f8e7d
Content-Type: text/plain; charset=utf-8

Referee, Gina asked me to pass this on.

--fwd-9f8e7d
Content-Type: message/rfc822
Content-Disposition: inline

From: Gina Rossi <gina@example.org>
To: Frank Li <frank@example.org>
Subject: my bid
Content-Type: text/plain; charset=utf-8

bid 12

--fwd-9f8e7d--
""")
    assert msg.lines == ("Referee, Gina asked me to pass this on.",)


def test_an_inline_forward_is_cut_at_its_marker() -> None:
    msg = parse(simple(body=b"""\
Referee, Gina asked me to pass this on.

---------- Forwarded message ---------
From: Gina Rossi <gina@example.org>
Date: Mon, 3 Jun 2024 at 09:00
Subject: my bid
To: Frank Li <frank@example.org>

bid 12
"""))
    assert msg.lines == ("Referee, Gina asked me to pass this on.",)


def test_attachments_are_ignored() -> None:
    msg = parse(b"""\
From: Alice Martin <alice@example.com>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Round 2
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="mixed-1a2b"

--mixed-1a2b
Content-Type: text/plain; charset=utf-8

bid 2

--mixed-1a2b
Content-Type: text/plain; charset=utf-8; name="plan.txt"
Content-Disposition: attachment; filename="plan.txt"

bid 13
--mixed-1a2b
Content-Type: image/png; name="board.png"
Content-Disposition: attachment; filename="board.png"
Content-Transfer-Encoding: base64

iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==
--mixed-1a2b--
""")
    assert msg.lines == ("bid 2",)


def test_pgp_mime_signed_mail_reads_the_signed_part() -> None:
    msg = parse(b"""\
Message-ID: <0b9a8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d@example.org>
Date: Mon, 3 Jun 2024 12:40:00 +0200
MIME-Version: 1.0
User-Agent: Mozilla Thunderbird
From: Hana Sato <hana@example.org>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
Content-Type: multipart/signed; micalg=pgp-sha256;
 protocol="application/pgp-signature";
 boundary="------------0LlX7wYn1Ug5Uy2dEJ6nBK8q"

This is an OpenPGP/MIME signed message (RFC 4880 and 3156)
--------------0LlX7wYn1Ug5Uy2dEJ6nBK8q
Content-Type: multipart/mixed; boundary="------------b1ZaVgP2WcFtD4K8hX0mQsRj";
 protected-headers="v1"
From: Hana Sato <hana@example.org>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Round 2: the prize is the 7

--------------b1ZaVgP2WcFtD4K8hX0mQsRj
Content-Type: text/plain; charset=UTF-8; format=flowed
Content-Transfer-Encoding: base64

YmlkIDEwDQoNCi0tIA0KSGFuYQ0K

--------------b1ZaVgP2WcFtD4K8hX0mQsRj--

--------------0LlX7wYn1Ug5Uy2dEJ6nBK8q
Content-Type: application/pgp-signature; name="OpenPGP_signature.asc"
Content-Description: OpenPGP digital signature
Content-Disposition: attachment; filename="OpenPGP_signature.asc"

-----BEGIN PGP SIGNATURE-----

wnsEABYIACMWIQTlF1ClXh5Q6qg9n4n9q9cM5w0gBQJmXZ7AAwUAAAAACgkQ9q9cM5w0gBTA
=Jm3c
-----END PGP SIGNATURE-----

--------------0LlX7wYn1Ug5Uy2dEJ6nBK8q--
""")
    assert msg.lines == ("bid 10",)


def test_inline_pgp_clearsigned_text_is_read_without_its_armor() -> None:
    msg = parse(simple(body=b"""\
-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA256

bid 11
- --\x20
Hana
-----BEGIN PGP SIGNATURE-----

iHUEARYIAB0WIQTlF1ClXh5Q6qg9n4n9q9cM5w0gBQJmXZ7A
=Jm3c
-----END PGP SIGNATURE-----
"""))
    assert msg.lines == ("bid 11",)


TNEF = b"""\
Content-Type: application/ms-tnef; name="winmail.dat"
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="winmail.dat"

eJ8+IhIAAQaQCAAEAAAAAAABAAEAAQeQBgAIAAAA5AQAAAAAAADoAAEIgAcAGAAAAElQTS5NaWNy
b3NvZnQgTWFpbC5Ob3RlADEIAQOQBgAcAAAAAAAAAAAA
"""

OUTLOOK_TNEF_HEADERS = b"""\
From: Ivan Petrov <ivan@example.org>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: RE: [goofspiel-7] Round 2
Date: Mon, 3 Jun 2024 09:30:00 +0000
Message-ID: <AM0PR02MB5555E1A2B3C4D5E6F7A8B9C0D1E2F3A4@AM0PR02MB5555.eurprd02.prod.outlook.com>
X-MS-Has-Attach:
X-MS-TNEF-Correlator: <AM0PR02MB5555E1A2B3C4D5E6F7A8B9C0D1E2F3A4@AM0PR02MB5555>
MIME-Version: 1.0
"""


def test_a_winmail_dat_alone_is_tnef_only() -> None:
    msg = parse(OUTLOOK_TNEF_HEADERS + b'Content-Type: multipart/mixed; boundary="_tnef_"\n\n'
                b"--_tnef_\n" + TNEF + b"--_tnef_--\n")
    assert msg.tnef_only
    assert msg.lines == ()


def test_a_top_level_tnef_body_is_tnef_only() -> None:
    msg = parse(OUTLOOK_TNEF_HEADERS + TNEF)
    assert msg.tnef_only
    assert msg.lines == ()


def test_a_winmail_dat_beside_a_text_body_is_not_tnef_only() -> None:
    msg = parse(OUTLOOK_TNEF_HEADERS + b'Content-Type: multipart/mixed; boundary="_tnef_"\n\n'
                b"--_tnef_\nContent-Type: text/plain; charset=us-ascii\n\nbid 4\n\n"
                b"--_tnef_\n" + TNEF + b"--_tnef_--\n")
    assert not msg.tnef_only
    assert msg.lines == ("bid 4",)


ALTERNATIVE = b"""\
From: Alice Martin <alice@example.com>
To: referee@pbm.example.org
Subject: Re: [goofspiel-7] Round 2
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="alt-5e"

--alt-5e
Content-Type: text/plain; charset=utf-8

%s
--alt-5e
Content-Type: multipart/related; boundary="rel-6f"

--rel-6f
Content-Type: text/html; charset=utf-8

<div>bid 4</div><img src="cid:logo">
--rel-6f
Content-Type: image/png
Content-ID: <logo>
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--rel-6f--

--alt-5e--
"""


def test_alternative_parts_prefer_the_plain_text() -> None:
    assert parse(ALTERNATIVE % b"bid 3\n").lines == ("bid 3",)


def test_a_blank_plain_alternative_falls_back_to_the_html() -> None:
    assert parse(ALTERNATIVE % b" \n").lines == ("bid 4",)


# -- HTML that looks like Markdown -------------------------------------------------

def test_html_text_reads_as_typed_not_as_markdown() -> None:
    msg = parse(b"""\
From: Alice Martin <alice@example.com>
To: referee@pbm.example.org
Subject: moves
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8

<html><body><div>- trade 3 for 5</div><div>1. bid 5</div><div>+ play *QH* [now]</div>
<ul><li>play 2C</li></ul>
<table><tr><td>bid</td><td>6</td></tr></table>
<hr>
<div>under_score \\ back</div></body></html>
""")
    assert msg.lines == (
        "- trade 3 for 5", "1. bid 5", "+ play *QH* [now]", "play 2C", "bid 6",
        "under_score \\ back",
    )


# -- classification: auto-replies ---------------------------------------------------

def test_gmail_vacation_reply_is_an_auto_reply() -> None:
    msg = parse(b"""\
MIME-Version: 1.0
From: Alice Martin <alice.martin@example.com>
Date: Mon, 3 Jun 2024 10:00:04 +0200
Message-ID: <CAF3x8_Y0uVacation=42@mail.gmail.com>
Subject: Re: [goofspiel-7] Round 2: the prize is the 7
To: Goofspiel Referee <referee@pbm.example.org>
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>
References: <pbm.41.goofspiel-7@pbm.example.org>
Auto-Submitted: auto-replied
Precedence: bulk
X-Autoreply: yes
Content-Type: text/plain; charset="UTF-8"

I am on holiday until 10 June. Your message was:
Send your bid, e.g. "bid 5".
""")
    assert msg.automation is Automation.AUTO_REPLY
    assert msg.lines == ("I am on holiday until 10 June. Your message was:",
                         'Send your bid, e.g. "bid 5".')


@pytest.mark.parametrize("header", [
    b"Auto-Submitted: auto-replied\n",
    b"Auto-Submitted: auto-generated\n",
    b"Auto-Submitted: auto-notified; owner-email=\"alice@example.com\"\n",
    b"X-Autoreply: yes\n",
    b"X-Autorespond: Out of office\n",
    b"Precedence: bulk\n",
    b"Precedence: junk\n",
    b"Precedence: auto_reply\n",
    b"X-Precedence: auto_reply\n",
    b"Feedback-ID: 42:campaign:mailer:esp\n",
    b"X-Autogenerated: Reply\n",
    b"X-Mail-Autoreply: yes\n",
    b"X-Vacation: yes\n",
    b"Delivered-By-The-Graces-Of: The Vacation program\n",
    b"Precedence: list\n",  # through no list: no List-Id
])
def test_each_automation_header_alone_marks_an_auto_reply(header: bytes) -> None:
    msg = parse(simple(header))
    assert msg.automation is Automation.AUTO_REPLY
    assert msg.lines == ("bid 5",)


@pytest.mark.parametrize("subject", [
    b"Out of Office: Re: [goofspiel-7] Round 2",
    b"Out of Office AutoReply: [goofspiel-7] Round 2",
    b"Automatic reply: [goofspiel-7] Round 2",
    b"Autoreply: Re: [goofspiel-7] Round 2",
    b"Auto-Reply: I am away",
    b"[Auto-Reply] I am away",
    b"Abwesenheitsnotiz: Re: [goofspiel-7] Runde 2",
    b"Automatische Antwort: [goofspiel-7] Runde 2",
    b"=?UTF-8?Q?R=C3=A9ponse_automatique_:_[goofspiel-7]?=",
    b"Vacation",
    b"Vacation: Re: [goofspiel-7] Round 2",
    b"Vacation reply",
    b"Auto: Re: [goofspiel-7] Round 2",
    b"AUTO: Alice Martin is out of the office",
    b"away from my mail",
    b"I am on vacation",
])
def test_out_of_office_subjects_mark_an_auto_reply(subject: bytes) -> None:
    assert parse(simple(subject=subject)).automation is Automation.AUTO_REPLY


@pytest.mark.parametrize("body", [
    b"I will not be reading my mail for a while. Your mail concerning\n"
    b"\"Re: [goofspiel-7] Round 2\" will be read when I'm back.\n",
    b"Hello,\n\nThis is an automatic reply. I am away until 10 June.\n",
    b"This is an automated response: your ticket 4711 is open.\n",
    b"I am currently out of the office with limited access to email.\n",
    b"Thank you for your email. I am out of the office until Monday.\n",
])
def test_out_of_office_bodies_mark_an_auto_reply(body: bytes) -> None:
    """vacation(1)'s text, and bodies that say they are automatic, with
    an ordinary subject and no header that says so."""
    msg = parse(simple(subject=b"Re: [goofspiel-7] Round 2", body=body))
    assert msg.automation is Automation.AUTO_REPLY


@pytest.mark.parametrize("body", [
    b"I am away until Monday, so bid 5 for me now.\n",
    b"bid 5\nI am currently out of the office, sorry for the delay.\n"
    b"Back soon\nAlice\n",
    b"Thank you for the game!\nbid 5\n",
])
def test_a_person_saying_they_are_away_is_no_auto_reply(body: bytes) -> None:
    msg = parse(simple(subject=b"Re: [goofspiel-7] Round 2", body=body))
    assert msg.automation is Automation.NONE


@pytest.mark.parametrize("subject", [
    b"Vacation next week: bid 5 for me",
    b"Re: [goofspiel-7] back from the office",
    b"Re: [goofspiel-7] my auto reply was wrong, sorry",
    b"Read the rules again",
])
def test_ordinary_subjects_are_not_auto_replies(subject: bytes) -> None:
    assert parse(simple(subject=subject)).automation is Automation.NONE


def test_auto_submitted_no_is_a_person() -> None:
    assert parse(simple(b"Auto-Submitted: no\n")).automation is Automation.NONE


def test_x_auto_response_suppress_alone_is_a_person() -> None:
    # Outlook stamps it on mail people write; it asks us not to auto-answer.
    msg = parse(simple(b"X-Auto-Response-Suppress: All\n"))
    assert msg.automation is Automation.NONE
    assert msg.lines == ("bid 5",)


def test_x_auto_response_suppress_with_a_receipt_subject_is_an_auto_reply() -> None:
    msg = parse(simple(b"X-Auto-Response-Suppress: DR, RN, NRN, OOF, AutoReply\n",
                       subject=b"Read: [goofspiel-7] Round 2"))
    assert msg.automation is Automation.AUTO_REPLY


def test_a_read_receipt_report_is_an_auto_reply() -> None:  # RFC 8098
    msg = parse(b"""\
From: Alice Martin <alice@example.com>
To: referee@pbm.example.org
Subject: Read: [goofspiel-7] Round 2
MIME-Version: 1.0
Content-Type: multipart/report; report-type=disposition-notification;
\tboundary="mdn-77"

--mdn-77
Content-Type: text/plain; charset=utf-8

Your message was displayed.
--mdn-77
Content-Type: message/disposition-notification

Final-Recipient: rfc822;alice@example.com
Disposition: manual-action/MDN-sent-manually; displayed
--mdn-77--
""")
    assert msg.automation is Automation.AUTO_REPLY
    assert msg.lines == ("Your message was displayed.",)


# -- classification: bounces ---------------------------------------------------------

POSTFIX_DSN = b"""\
Return-Path: <>
Delivered-To: referee@pbm.example.org
Date: Mon,  3 Jun 2024 10:00:05 +0200 (CEST)
From: MAILER-DAEMON@mx.pbm.example.org (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: referee@pbm.example.org
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
\tboundary="4VtR2K0Zz9z9sZ.1717401605/mx.pbm.example.org"
Message-Id: <20240603080005.4VtR2K0Zz9z9sZ@mx.pbm.example.org>

This is a MIME-encapsulated message.

--4VtR2K0Zz9z9sZ.1717401605/mx.pbm.example.org
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.pbm.example.org.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

                   The mail system

<nobody@example.com>: host mx.example.com[192.0.2.25] said: 550 5.1.1 User
    unknown (in reply to RCPT TO command)

--4VtR2K0Zz9z9sZ.1717401605/mx.pbm.example.org
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.pbm.example.org
Arrival-Date: Mon,  3 Jun 2024 10:00:01 +0200 (CEST)

Final-Recipient: rfc822; nobody@example.com
Action: failed
Status: 5.1.1

--4VtR2K0Zz9z9sZ.1717401605/mx.pbm.example.org
Content-Description: Undelivered Message
Content-Type: message/rfc822

From: Goofspiel Referee <referee@pbm.example.org>
To: nobody@example.com
Subject: [goofspiel-7] Round 2: the prize is the 7
Message-ID: <pbm.41.goofspiel-7@pbm.example.org>
X-Loop: referee@pbm.example.org

Send your bid, e.g. "bid 5".

--4VtR2K0Zz9z9sZ.1717401605/mx.pbm.example.org--
"""


def test_a_delivery_status_notification_is_a_bounce() -> None:
    msg = parse(POSTFIX_DSN)
    assert msg.automation is Automation.BOUNCE
    assert msg.sender == "mailer-daemon@mx.pbm.example.org"
    assert msg.sender_name == "Mail Delivery System"  # the comment names the sender
    assert msg.lines == (
        "This is the mail system at host mx.pbm.example.org.",
        "I'm sorry to have to inform you that your message could not",
        "be delivered to one or more recipients.",
        "The mail system",
        "<nobody@example.com>: host mx.example.com[192.0.2.25] said: 550 5.1.1 User",
        "unknown (in reply to RCPT TO command)",
    )


def test_a_bounce_names_the_recipient_that_failed_and_the_returned_message() -> None:
    bounce = parse(POSTFIX_DSN).bounce
    assert bounce == Bounce(failed=(("nobody@example.com", "5.1.1"),),
                            message_ids=("pbm.41.goofspiel-7@pbm.example.org",))


def test_a_delay_warning_is_no_failure_and_returned_headers_are_read_too() -> None:
    delayed = POSTFIX_DSN.replace(b"Action: failed\nStatus: 5.1.1\n",
                                  b"Action: delayed\nStatus: 4.4.1\n")
    assert parse(delayed).bounce == Bounce((), ("pbm.41.goofspiel-7@pbm.example.org",))
    headers_only = POSTFIX_DSN.replace(b"Content-Type: message/rfc822",
                                       b"Content-Type: text/rfc822-headers").replace(
        b"Status: 5.1.1\n", b"Status: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1\n  User unknown\n")
    assert parse(headers_only).bounce == Bounce(
        (("nobody@example.com", "5.1.1 550 5.1.1 User unknown"),),
        ("pbm.41.goofspiel-7@pbm.example.org",))


def test_mail_from_a_person_has_no_bounce() -> None:
    assert parse(simple(b"")).bounce is None


@pytest.mark.parametrize(("header", "sender"), [
    (b"Return-Path: <>\n", b"Alice Martin <alice@example.com>"),
    (b"Return-Path: <MAILER-DAEMON>\n", b"Alice Martin <alice@example.com>"),
    (b"", b"Mail Delivery Subsystem <mailer-daemon@googlemail.com>"),
    (b"", b"postmaster@example.com"),
    (b"Return-Path: <postmaster@example.com>\n", b"Alice Martin <alice@example.com>"),
])
def test_each_bounce_sign_alone_marks_a_bounce(header: bytes, sender: bytes) -> None:
    msg = parse(simple(header, sender=sender))
    assert msg.automation is Automation.BOUNCE
    assert msg.lines == ("bid 5",)


def test_a_delivery_status_report_alone_is_a_bounce() -> None:
    report = POSTFIX_DSN.replace(b"Return-Path: <>\n", b"").replace(
        b"From: MAILER-DAEMON@mx.pbm.example.org (Mail Delivery System)",
        b"From: Mail System <mail@mx.pbm.example.org>",
    ).replace(b"Auto-Submitted: auto-replied\n", b"")
    assert parse(report).automation is Automation.BOUNCE


# -- classification: list mail and our own echo ---------------------------------------

MAILMAN_POST = b"""\
Return-Path: <players-bounces@pbm.example.org>
Delivered-To: referee@pbm.example.org
From: Alice Martin <alice.martin@example.com>
To: players@pbm.example.org
Subject: [spades-3] Trick 4
Date: Mon, 3 Jun 2024 11:30:00 +0200
Message-ID: <CAF3x8_public=1@mail.gmail.com>
In-Reply-To: <pbm.57.spades-3@pbm.example.org>
Content-Type: text/plain; charset="UTF-8"
Content-Transfer-Encoding: 7bit
MIME-Version: 1.0
Message-ID-Hash: 7ZQ2H4YBMJ3LDUQ5VQ5N3Y6RUT2DZ6QK
X-Message-ID-Hash: 7ZQ2H4YBMJ3LDUQ5VQ5N3Y6RUT2DZ6QK
X-MailFrom: alice.martin@example.com
X-Mailman-Version: 3.3.9
Precedence: list
List-Id: Spades players <Players.pbm.example.org>
Archived-At: <https://lists.pbm.example.org/archives/players/message/7ZQ2H4YB/>
List-Archive: <https://lists.pbm.example.org/archives/players/>
List-Help: <mailto:players-request@pbm.example.org?subject=help>
List-Owner: <mailto:players-owner@pbm.example.org>
List-Post: <mailto:players@pbm.example.org>
List-Subscribe: <mailto:players-join@pbm.example.org>
List-Unsubscribe: <mailto:players-leave@pbm.example.org>

play QH
_______________________________________________
Players mailing list -- players@pbm.example.org
To unsubscribe send an email to players-leave@pbm.example.org
"""


def test_a_public_move_through_the_game_list_is_a_person_not_bulk_mail() -> None:
    msg = parse(MAILMAN_POST)
    assert msg.automation is Automation.NONE
    assert msg.list_id == "players.pbm.example.org"
    assert msg.to == ("players@pbm.example.org",)
    assert msg.lines == ("play QH",)


OUR_REPORT_VIA_LIST = b"""\
Return-Path: <players-bounces@pbm.example.org>
From: Spades Referee <referee@pbm.example.org>
To: Spades players <players@pbm.example.org>
Subject: [spades-3] Trick 4: Alice leads
Date: Mon, 3 Jun 2024 10:00:00 +0000
Message-ID: <pbm.58.spades-3@pbm.example.org>
In-Reply-To: <pbm.game.spades-3@pbm.example.org>
References: <pbm.game.spades-3@pbm.example.org>
Auto-Submitted: auto-generated
X-Loop: referee@pbm.example.org
Precedence: bulk
X-Auto-Response-Suppress: OOF, AutoReply
Reply-To: referee@pbm.example.org
Content-Type: text/plain; charset="utf-8"
Content-Transfer-Encoding: 7bit
MIME-Version: 1.0
List-Id: Spades players <players.pbm.example.org>
List-Post: <mailto:players@pbm.example.org>

Trick 4: Alice leads.
Play a card, e.g. "play 4C".
"""


def test_our_own_report_back_through_the_list_is_a_loop_not_an_auto_reply() -> None:
    msg = parse(OUR_REPORT_VIA_LIST)
    assert msg.automation is Automation.LOOP
    assert msg.lines == ("Trick 4: Alice leads.", 'Play a card, e.g. "play 4C".')


@pytest.mark.parametrize("header", [
    b"X-Loop: referee@pbm.example.org\n",
    b"X-Loop: <Referee@PBM.example.org>\n",
    b"Message-ID: <pbm.58.spades-3@pbm.example.org>\n",
])
def test_each_echo_sign_alone_marks_a_loop(header: bytes) -> None:
    raw = simple(header)
    if header.startswith(b"Message-ID"):
        raw = raw.replace(b"Message-ID: <20240603090217.12345@mail.example.com>\n", b"")
    assert parse(raw).automation is Automation.LOOP


@pytest.mark.parametrize("sender", [
    b"Goofspiel Referee <referee@pbm.example.org>",
    b"referee+bounces@pbm.example.org",
])
def test_mail_from_the_referee_address_is_a_loop(sender: bytes) -> None:
    assert parse(simple(sender=sender)).automation is Automation.LOOP


def test_a_loop_wins_over_a_bounce() -> None:
    assert parse(simple(b"Return-Path: <>\nX-Loop: referee@pbm.example.org\n")).automation \
        is Automation.LOOP


def test_a_player_message_id_in_our_domain_is_not_a_loop() -> None:
    # The demo and the test mail stack put players in the referee's domain.
    raw = simple(sender=b"Alice <alice@pbm.example.org>").replace(
        b"<20240603090217.12345@mail.example.com>",
        b"<171740160512.4242.1234567890123456789@pbm.example.org>",
    )
    assert parse(raw).automation is Automation.NONE


def test_our_report_relayed_with_a_from_rewritten_to_the_list_is_a_loop() -> None:
    raw = OUR_REPORT_VIA_LIST.replace(
        b"From: Spades Referee <referee@pbm.example.org>",
        b"From: Spades Referee via Players <players@pbm.example.org>",
    ).replace(b"X-Loop: referee@pbm.example.org\n", b"").replace(
        b"<pbm.58.spades-3@pbm.example.org>", b"<relayed-58@lists.example.net>"
    )
    assert parse(raw).automation is Automation.LOOP


def test_a_player_post_with_a_from_rewritten_to_the_list_is_a_person() -> None:
    raw = MAILMAN_POST.replace(
        b"From: Alice Martin <alice.martin@example.com>",
        b"From: Alice Martin via Players <players@pbm.example.org>\n"
        b"Reply-To: Alice Martin <alice.martin@example.com>",
    )
    msg = parse(raw)
    assert msg.automation is Automation.NONE
    assert msg.sender == "players@pbm.example.org"
    assert msg.sender_name == "Alice Martin via Players"
    assert msg.lines == ("play QH",)


# -- headers ---------------------------------------------------------------------------

def test_message_ids_lose_their_brackets_comments_and_phrases() -> None:
    msg = parse(b"""\
From: alice@example.com
To: referee@pbm.example.org
Subject: Re: [goofspiel-7] Round 2
Message-Id:   <abc.123@host.example.com>  (generated by hand)
In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org> (Goofspiel Referee's message of
 "Mon, 3 Jun 2024 10:00:00 +0000")
References: <pbm.game.goofspiel-7@pbm.example.org>
\t<pbm.40.goofspiel-7@pbm.example.org>
 <pbm.41.goofspiel-7@pbm.example.org>

bid 5
""", crlf=False)
    assert msg.message_id == "abc.123@host.example.com"
    assert msg.in_reply_to == ("pbm.41.goofspiel-7@pbm.example.org",)
    assert msg.references == (
        "pbm.game.goofspiel-7@pbm.example.org",
        "pbm.40.goofspiel-7@pbm.example.org",
        "pbm.41.goofspiel-7@pbm.example.org",
    )
    assert msg.lines == ("bid 5",)


@pytest.mark.parametrize(("header", "expected"), [
    (b"Message-ID: <abc@host>\n", "abc@host"),
    (b"Message-ID: abc@host\n", "abc@host"),
    (b"Message-ID:\n", None),
    (b"", None),
])
def test_message_id_forms(header: bytes, expected: str | None) -> None:
    raw = simple(header).replace(b"Message-ID: <20240603090217.12345@mail.example.com>\n", b"")
    assert parse(raw).message_id == expected


@pytest.mark.parametrize(("value", "expected"), [
    (b"Mon, 3 Jun 2024 11:02:17 +0200", datetime(2024, 6, 3, 11, 2, 17,
                                                 tzinfo=timezone(timedelta(hours=2)))),
    (b"3 Jun 2024 09:02:17 -0000", datetime(2024, 6, 3, 9, 2, 17, tzinfo=UTC)),
    (b"Mon, 3 Jun 2024 11:02:17 CEST", datetime(2024, 6, 3, 11, 2, 17, tzinfo=UTC)),
    (b"the day before yesterday", None),
])
def test_date_is_timezone_aware_or_none(value: bytes, expected: datetime | None) -> None:
    raw = simple().replace(b"Mon, 3 Jun 2024 11:02:17 +0200", value)
    date = parse(raw).date
    assert date == expected
    assert date is None or date.tzinfo is not None


def test_recipients_are_lower_cased_and_deduplicated() -> None:
    msg = parse(b"""\
From: Alice Martin <alice@example.com>
To: "Referee, Goofspiel" <Referee@PBM.Example.org>, bob@example.net,
 undisclosed-recipients:;
Cc: Bob <BOB@example.net>, =?UTF-8?Q?Ren=C3=A9e?= <renee@example.net>
Cc: players@pbm.example.org
Subject: [goofspiel-7] trade?

offer 3 for 5
""")
    assert msg.to == ("referee@pbm.example.org", "bob@example.net")
    assert msg.cc == ("bob@example.net", "renee@example.net", "players@pbm.example.org")
    assert recipients(msg) == frozenset({
        "referee@pbm.example.org", "bob@example.net", "renee@example.net",
        "players@pbm.example.org",
    })
    assert msg.lines == ("offer 3 for 5",)


def test_a_message_without_from_has_an_empty_sender() -> None:
    msg = parse(b"To: referee@pbm.example.org\nSubject: hi\n\nbid 5\n")
    assert (msg.sender, msg.sender_name, msg.automation) == ("", "", Automation.NONE)
    assert msg.lines == ("bid 5",)


# -- the heading: a first look, before the body is fetched (issue 22) ---------------

def test_a_heading_reads_the_sender_the_recipients_and_the_subjects_tag() -> None:
    head = (b"From: =?utf-8?q?Bob_Z=C3=B6e?= <Bob@Example.test>\r\n"
            b"To: referee+tok@pbm.example.org,\r\n Alice <alice@example.test>\r\n"
            b"Cc: carol@example.test\r\nSubject: Re: [Goofspiel-7] Round 2\r\n\r\n")
    heading = read_heading(head)
    assert heading.sender == "bob@example.test"
    assert heading.recipients == ("referee+tok@pbm.example.org", "alice@example.test",
                                  "carol@example.test")
    assert heading.tag == "goofspiel-7"


@pytest.mark.parametrize("head", [
    b"", b"Subject: hi\r\n\r\n", b"From: Mallory: victim@example.org;\r\n\r\n",
    b"From: \xff\xfe <\xff@\xfe>\r\n\r\n", b"From: a@b.c\r\nFrom: d@e.f\r\n\r\n",
])
def test_a_heading_with_no_one_readable_sender_has_none(head: bytes) -> None:
    assert read_heading(head).sender == ""


# -- the sender: the one mailbox of From (issue 22) ----------------------------------

@pytest.mark.parametrize(("sender", "why"), [
    # A display name that parses as a group: getaddresses took the address
    # inside it (victim@) for the sender.
    (b"Mallory: victim@example.org; <mallory@evil.test>", "a group"),
    (b"Mallory: victim@example.org;", "a group"),
    (b"Undisclosed recipients:;", "a group"),
    (b"Mallory:victim@example.org, <mallory@evil.test>;", "a group"),
    (b"victim@example.org, mallory@evil.test", "2 addresses"),
    (b"Mallory victim@example.org <mallory@evil.test>", "2 addresses"),
    (b"<victim@example.org> <mallory@evil.test>", "2 addresses"),
    # No mail can be written to these (Python's email refuses the local part).
    ("zo\u00eb@example.org".encode(), "no mail can be sent to"),
    ("Zo\u00eb <zo\u00eb@example.org>".encode(), "no mail can be sent to"),
    (b"Eve <a..b@example.org>", "no mail can be sent to"),
])
def test_a_from_that_is_not_one_answerable_mailbox_is_unreadable(sender: bytes,
                                                                  why: str) -> None:
    with pytest.raises(Unreadable, match=why):
        parse(simple(sender=sender))


def test_two_from_headers_are_unreadable() -> None:
    with pytest.raises(Unreadable, match="2 From headers"):
        parse(simple(b"From: Mallory <mallory@evil.test>\n",
                     sender=b"victim@example.org"))


@pytest.mark.parametrize(("sender", "name", "address"), [
    # Quoted, encoded or in a comment, an address in the name is only a name.
    (b'"Mallory: victim@example.org;" <mallory@evil.test>',
     "Mallory: victim@example.org;", "mallory@evil.test"),
    (b"=?utf-8?q?Mallory=3A_victim=40example=2Eorg=3B?= <mallory@evil.test>",
     "Mallory: victim@example.org;", "mallory@evil.test"),
    (b"mallory@evil.test (victim@example.org; x:y)", "victim@example.org; x:y",
     "mallory@evil.test"),
    (b"<@relay.example.org:ann@example.org>", "", "ann@example.org"),  # a source route
    ("Zo\u00eb <zoe@z\u00f6.example>".encode(), "Zo\u00eb", "zoe@z\u00f6.example"),
    (b"Doe, John <john@example.org>", "John", "john@example.org"),  # a name left unquoted
    # No address at all: no sender, so a bare MAILER-DAEMON's bounce is still read.
    (b"<>", "", ""),
    (b"MAILER-DAEMON", "", ""),
])
def test_the_sender_is_the_one_mailbox_of_from(sender: bytes, name: str,
                                               address: str) -> None:
    msg = parse(simple(sender=sender))
    assert (msg.sender_name, msg.sender) == (name, address)


def test_mime_nested_deeper_than_the_limit_is_unreadable_wherever_it_is_read() -> None:
    def nested(depth: int) -> bytes:
        head = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (i, i)
                        for i in range(depth))
        tail = b"".join(b"\n--b%d--\n" % i for i in reversed(range(depth)))
        return (b"From: Alice <alice@example.com>\nMIME-Version: 1.0\n" + head
                + b"Content-Type: text/plain\n\nbid 5\n" + tail)

    assert parse(nested(mime.MAX_MIME_DEPTH)).lines == ("bid 5",)

    def deep_in_the_stack(frames: int, depth: int) -> InboundMessage:
        return parse(nested(depth)) if not frames else deep_in_the_stack(frames - 1, depth)

    # However deep the stack it is read from: the stdlib's parser, then the
    # referee's, recursed too deep, at a depth that depended on the caller.
    for depth in (mime.MAX_MIME_DEPTH + 1, 500, 5000):
        for frames in (0, 300):
            with pytest.raises(Unreadable, match="nested more than 100 deep"):
                deep_in_the_stack(frames, depth)


# -- find_tag ------------------------------------------------------------------------

@pytest.mark.parametrize(("subject", "tag"), [
    ("Re: [goofspiel-7] Round 2", "goofspiel-7"),
    ("RE: AW: [pure-skill-12]", "pure-skill-12"),
    ("Fwd: Re: [Spades-3] Trick 4", "spades-3"),
    ("bid 5 [loatcg-21]", "loatcg-21"),
    ("Re: Round 2", None),
    ("Re: [goofspiel] Round 2", None),
    ("Re: [7-goofspiel] Round 2", None),
    ("", None),
])
def test_find_tag(subject: str, tag: str | None) -> None:
    assert find_tag(subject) == tag


# -- robustness ------------------------------------------------------------------------

def test_a_multipart_with_a_mangled_boundary_reads_as_no_text() -> None:
    # The stdlib's get_payload() raises TypeError on this one (an RFC 2231
    # "charset*=" swallowed the boundary, and the body has 8-bit bytes).
    msg = parse(b"""\
From: alice@example.com
MIME-Version: 1.0
Content-Type: multipart/mixed; charset*= boundary="b"

--b
Content-Type: text/plain

bid 5 \xc3\xa9
--b--
""")
    assert msg.lines == ()
    assert not msg.tnef_only


@given(st.binary(max_size=2000))
def test_any_bytes_parse_without_error(raw: bytes) -> None:
    try:
        msg = parse_message(raw, referee_address=REFEREE, our_domain=DOMAIN)
    except Unreadable:
        return  # refused, saying why: a From that is no one sender
    assert msg.size == len(raw)
    assert all(line and line == line.strip() for line in msg.lines)


@given(st.text(max_size=500), st.sampled_from(["text/plain", "text/html"]))
def test_any_text_body_parses_to_stripped_lines(body: str, ctype: str) -> None:
    raw = f"From: a@example.com\nContent-Type: {ctype}; charset=utf-8\n\n{body}".encode(
        "utf-8", "surrogatepass"
    )
    msg = parse_message(raw, referee_address=REFEREE)
    assert all(line and line == line.strip() for line in msg.lines)


def test_8bit_bytes_in_a_delivery_report_are_read_not_raised_on() -> None:
    # The stdlib hands such a field back as a Header object, not a str.
    raw = POSTFIX_DSN.replace(b"Status: 5.1.1\n", b"Status: 5.1.1 \xe2\x80\x94 unknown\n").replace(
        b"Message-ID: <pbm.41.goofspiel-7@pbm.example.org>",
        b"Message-ID: <pbm.41.goofspiel-7@pbm.example.org> (\xff)",
    )
    assert parse(raw).bounce == Bounce(
        (("nobody@example.com", "5.1.1 \u2014 unknown"),), ("pbm.41.goofspiel-7@pbm.example.org",))


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


#: Run by the next test in a process of its own: for each mail on stdin (NUL
#: between them), the CPU seconds parse_message spends on it (best of three)
#: and its last line.
COSTS = f"""\
import sys, time
from referee.mail.inbound import parse_message
for raw in sys.stdin.buffer.read().split(b"\\0"):
    spent = []
    for _ in range(3):
        started = time.process_time()
        msg = parse_message(raw, referee_address={REFEREE!r})
        spent.append(time.process_time() - started)
    print(min(spent), msg.lines[-1])
"""


def test_lines_that_look_like_attributions_are_read_in_linear_time() -> None:
    # Nested ".*" in one regex made each such line cost backtracking cubic in its
    # length: this mail took 7 s to read, 700 times a plain mail of its size.
    # Its cost is weighed against that plain mail's in one process, so a busy
    # machine slows both alike; in a process of its own, so a regex that never
    # ends fails at the hang guard. What it costs: bench/worst_mail.py.
    crafted = ("On 1 " + "@ " * 190 + ":\n") * 2500 + "bid 5\n"  # under MAX_TEXT
    plain = ("I think " + "a " * 186 + "ok\n") * 2500 + "bid 5\n"
    mails = [simple(body=text.encode()).replace(b"\n", b"\r\n") for text in (crafted, plain)]
    done = subprocess.run([sys.executable, "-c", COSTS], input=b"\0".join(mails),
                          cwd=REPO_ROOT, capture_output=True, timeout=GIVE_UP, check=False)
    assert done.returncode == 0, done.stderr.decode()
    (cost, last), (plain_cost, plain_last) = (
        line.split(" ", 1) for line in done.stdout.decode().splitlines())
    assert (last, plain_last) == ("bid 5", "bid 5")
    assert float(cost) < 50 * float(plain_cost), (cost, plain_cost)


# -- robustness: structurally valid messages (Hypothesis) -----------------------------

CHARSETS = [
    "utf-8", "us-ascii", "iso-8859-1", "windows-1252", "koi8-r", "shift_jis", "gb2312",
    "utf-16", "utf-7", "cp500", "x-unknown", '"utf-8"', "rot13", "base64", "unicode_escape", "",
]
TRANSFER_ENCODINGS = ["7bit", "8bit", "binary", "base64", "quoted-printable", "x-uuencode", "bogus"]
LEAF_TYPES = [
    "text/plain", "text/plain; format=flowed; delsp=yes", "text/html", "text/enriched",
    "message/rfc822", "message/delivery-status", "text/rfc822-headers", "application/ms-tnef",
    "application/pgp-signature", "image/png",
]
MULTIPART_TYPES = [
    "mixed", "alternative", "related", "signed", "encrypted", "digest",
    "report; report-type=delivery-status", "report; report-type=disposition-notification",
]
HEADER_NAMES = [
    "From", "To", "Cc", "Subject", "Message-ID", "In-Reply-To", "References", "Date", "List-Id",
    "Return-Path", "Auto-Submitted", "X-Autoreply", "Precedence", "X-Loop", "Reply-To",
    "X-Original-From", "X-Auto-Response-Suppress", "Content-Disposition", "X-Anything",
]
DSN_FIELDS = ["Final-Recipient", "Original-Recipient", "Action", "Status", "Diagnostic-Code"]


def transfer_encoded(data: bytes, encoding: str) -> bytes:
    """``data`` as the Content-Transfer-Encoding says; unknown ones leave it as it is."""
    if encoding == "base64":
        return base64.encodebytes(data)
    if encoding == "quoted-printable":
        return quopri.encodestring(data)
    if encoding == "x-uuencode":
        chunks = (binascii.b2a_uu(data[i : i + 45]) for i in range(0, len(data), 45))
        return b"begin 644 x\n" + b"".join(chunks) + b"end\n"
    return data


@st.composite
def header_values(draw: st.DrawFn) -> bytes:
    """Plain text in UTF-8 or Latin-1, an encoded-word in any charset, or 8-bit bytes."""
    kind = draw(st.sampled_from(["text", "encoded-word", "bytes", "sign"]))
    if kind == "encoded-word":
        payload = draw(st.text(st.characters(min_codepoint=33, max_codepoint=126,
                                             blacklist_characters="?"), max_size=30))
        charset, encoding = draw(st.sampled_from(CHARSETS)), draw(st.sampled_from("BQbq"))
        return f"=?{charset}?{encoding}?{payload}?=".encode()
    if kind == "bytes":
        data = draw(st.binary(max_size=30)) + b"\xe9" + draw(st.binary(max_size=30))
        return data.replace(b"\r", b" ").replace(b"\n", b" ")
    if kind == "sign":  # values that steer the classification
        return draw(st.sampled_from([b"<>", b"failed", b"rfc822; bob@example.com", b"bulk",
                                     b"auto-replied", b"MAILER-DAEMON@example.com",
                                     REFEREE.encode(), b"<a@b> <c@d>"]))
    text = draw(st.text(max_size=60)).replace("\r", " ").replace("\n", " ")
    return text.encode(draw(st.sampled_from(["utf-8", "latin-1"])), "replace")


@st.composite
def header_blocks(draw: st.DrawFn, names: list[str] = HEADER_NAMES) -> bytes:
    """A few header fields, some folded, with now and then a line that is no field."""
    block = b""
    for _ in range(draw(st.integers(0, 5))):
        value = draw(header_values())
        if draw(st.booleans()):
            value = value[: len(value) // 2] + b"\n\t" + value[len(value) // 2 :]
        block += draw(st.sampled_from(names)).encode() + b": " + value + b"\n"
        if draw(st.integers(0, 9)) == 0:
            block += draw(st.sampled_from([b"no colon\n", b" stray fold\n", b"X-\xff: \xff\n"]))
    return block


@st.composite
def mime_parts(draw: st.DrawFn, depth: int = 0) -> bytes:
    """One MIME entity: headers, then a body that may be a multipart or a message."""
    headers = draw(header_blocks())
    if depth < 3 and draw(st.integers(0, 2)) == 0:
        boundary = draw(st.sampled_from(["b1", "=_x", "with space", f"level{depth}"]))
        body = draw(st.sampled_from([b"", b"preamble\n"]))
        for child in draw(st.lists(mime_parts(depth + 1), max_size=3)):
            body += f"--{boundary}\n".encode() + child + b"\n"
        if draw(st.booleans()):  # the closing delimiter may be missing
            body += f"--{boundary}--\n".encode()
        kind = draw(st.sampled_from(MULTIPART_TYPES))
        content_type = f'Content-Type: multipart/{kind}; boundary="{boundary}"\n\n'
        return headers + content_type.encode() + body
    kind = draw(st.sampled_from(LEAF_TYPES))
    charset = draw(st.sampled_from(CHARSETS))
    encoding = draw(st.sampled_from(TRANSFER_ENCODINGS))
    if kind == "message/delivery-status":  # per-message fields, then per-recipient ones
        data = b"\n".join(draw(st.lists(header_blocks(DSN_FIELDS), min_size=1, max_size=3)))
    elif kind == "message/rfc822" and depth < 3:
        data = draw(mime_parts(depth + 1))
    elif kind in ("message/rfc822", "text/rfc822-headers"):
        data = draw(header_blocks())
    elif draw(st.booleans()):
        data = draw(st.text(max_size=200)).encode()
    else:
        data = draw(st.binary(max_size=200))
    body = transfer_encoded(data, encoding) if draw(st.booleans()) else data
    return headers + (
        f"Content-Type: {kind}; charset={charset}\nContent-Transfer-Encoding: {encoding}\n\n"
    ).encode() + body


@settings(max_examples=200, deadline=None)
@given(mime_parts(), st.sampled_from([b"", b"Return-Path: <>\n"]), st.booleans())
def test_any_mime_message_parses_to_valid_text(raw: bytes, envelope: bytes, crlf: bool) -> None:
    raw = envelope + raw
    if crlf:
        raw = raw.replace(b"\n", b"\r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning
        try:
            msg = parse_message(raw, referee_address=REFEREE, list_address=LIST,
                                our_domain=DOMAIN)
        except Unreadable:
            return  # refused, saying why: a From that is no one sender
    assert msg.size == len(raw)
    assert all(line and line == line.strip() for line in msg.lines)
    for text in (*msg.lines, msg.subject, msg.sender_name):
        text.encode("utf-8")  # no lone surrogates: the transcript and the database need UTF-8
    assert (msg.bounce is not None) == (msg.automation is Automation.BOUNCE)


quoted_lines = st.lists(
    st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=40),
    min_size=1, max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(
    quoted_lines,
    st.booleans(),
    st.sampled_from(["utf-8", "utf-16", "utf-7", "iso-8859-1", "windows-1252", "koi8-r", "cp500"]),
    st.sampled_from(["8bit", "base64", "quoted-printable"]),
    st.sampled_from(["plain", "flowed", "html", "alternative", "signed"]),
)
def test_a_quoted_body_yields_no_lines_and_a_move_above_it_is_the_only_one(
    quote: list[str], move_above: bool, charset: str, encoding: str, shape: str,
) -> None:
    move = ["bid 5"] if move_above else []
    plain = "\n".join([*move, *(f"> {line}" for line in quote)]) + "\n"
    rich = "".join(f"<div>{m}</div>" for m in move) + '<blockquote type="cite">' + "<br>".join(
        html.escape(line) for line in quote) + "</blockquote>"

    def part(kind: str, text: str) -> bytes:
        data = transfer_encoded(text.encode(charset, "replace"), encoding)
        return (f"Content-Type: {kind}; charset={charset}\n"
                f"Content-Transfer-Encoding: {encoding}\n\n").encode() + data

    if shape in ("plain", "flowed", "html"):
        kind = {"plain": "text/plain", "flowed": "text/plain; format=flowed; delsp=yes",
                "html": "text/html"}[shape]
        entity = part(kind, rich if shape == "html" else plain)
    else:
        children = [part("text/plain", plain), part("text/html", rich)]
        if shape == "signed":
            children = [children[0], b"Content-Type: application/pgp-signature\n\nsig\n"]
        boundary = "=_quoted_boundary_7f3a"
        entity = f'Content-Type: multipart/{shape}; boundary="{boundary}"\n\n'.encode()
        for child in children:
            entity += f"--{boundary}\n".encode() + child + b"\n"
        entity += f"--{boundary}--\n".encode()
    raw = b"From: alice@example.com\nTo: referee@pbm.example.org\nMIME-Version: 1.0\n" + entity
    assert parse_message(raw, referee_address=REFEREE).lines == tuple(move)


# -- bounded work: the worst mail under the size cap ------------------------------
#
# Each mail is nearly as big as the referee's default size cap (10 MB) lets
# through; what parsing it hands on is capped, so its work is too. Timings
# are for bench/worst_mail.py, not for tests.

WORST = 9 * 1024 * 1024


def spy(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[int]:
    """Record how long the text ``module`` gives to its ``<name>`` is, call
    by call (a list of strings: all together)."""
    real = getattr(module, name)
    seen: list[int] = []

    def recording(arg: str | list[str], *args: object, **kw: object) -> object:
        seen.append(len(arg) if isinstance(arg, str) else sum(map(len, arg)))
        return real(arg, *args, **kw)

    monkeypatch.setattr(module, name, recording)
    return seen


def test_a_9mb_encoded_subject_is_decoded_only_as_far_as_a_subject_is_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    word = b"=?utf-8?b?" + base64.b64encode("zoë ".encode() * 10) + b"?="
    decoded = spy(monkeypatch, headers, "decode_words")
    msg = parse(simple(subject=b" ".join([word] * (WORST // len(word)))))
    assert msg.subject == ("zoë " * (headers.MAX_SUBJECT // 4))[:headers.MAX_SUBJECT]
    assert decoded and max(decoded) <= headers.MAX_ENCODED


def test_9mb_of_html_is_converted_only_up_to_the_html_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    converted = spy(monkeypatch, mime, "html_text")
    msg = parse(simple(b"Content-Type: text/html\n", body=b"<p>bid 5</p>\n" * (WORST // 13)))
    assert sum(converted) <= mime.MAX_HTML
    assert msg.lines[0] == "bid 5"


def test_html_in_many_parts_shares_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    part = b"--p\nContent-Type: text/html\n\n" + b"<p>bid 5</p>\n" * 20_000
    converted = spy(monkeypatch, mime, "html_text")
    parse(simple(b"Content-Type: multipart/mixed; boundary=p\n",
                 body=part * (WORST // len(part)) + b"--p--\n"))
    assert sum(converted) <= mime.MAX_HTML


def test_9mb_of_junk_lines_are_examined_only_up_to_the_line_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    read = spy(monkeypatch, quotes, "command_lines")
    cleaned = spy(monkeypatch, quotes, "_clean")
    msg = parse(simple(body=b"bid x\n" * (WORST // 6)))
    assert read == [mime.MAX_TEXT]  # the text handed on is capped
    assert len(cleaned) <= quotes.MAX_BODY_LINES  # and reading stops early
    assert msg.lines == ("bid x",) * quotes.MAX_BODY_LINES


def test_a_9mb_flowed_paragraph_is_capped_and_joined_whole() -> None:
    msg = parse(simple(b"Content-Type: text/plain; format=flowed\n",
                       body=b"bid x \n" * (WORST // 7) + b"end\n"))
    (line,) = msg.lines  # one soft-broken paragraph, cut at MAX_TEXT
    assert line.startswith("bid x bid x") and mime.MAX_TEXT * 0.8 < len(line) <= mime.MAX_TEXT


def test_a_9mb_recipient_list_is_read_only_up_to_its_cap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    listed = spy(monkeypatch, headers, "getaddresses")
    to = b", ".join(b"u%d@example.com" % i for i in range(WORST // 20))
    msg = parse(simple(b"Cc: " + to + b"\nReferences: " + to.replace(b", ", b"> <") + b"\n"))
    assert max(listed) <= headers.MAX_LIST_HEADER
    assert msg.cc[:2] == ("u0@example.com", "u1@example.com")
    assert len(", ".join(msg.cc)) <= headers.MAX_LIST_HEADER
    assert len(msg.references) == headers.MAX_IDS
