"""Inbound mail: real clients' messages -> InboundMessage.

Each message is written the way its client sends it (headers, MIME structure,
transfer encoding), with CRLF line ends as IMAP delivers them unless a test
says otherwise. Every test asserts the whole ``lines`` tuple. What one
module reads alone is tested beside it (``test_charset``, ``test_headers``,
``test_mime``, ``test_htmltext``, ``test_quotes``, ``test_automation``);
here are replies as a whole, the heading, and what any mail costs and
yields.
"""

from __future__ import annotations

import base64
import binascii
import html
import quopri
import warnings
from datetime import UTC, datetime
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail import headers, mime, quotes
from referee.mail.automation import Automation
from referee.mail.headers import Unreadable
from referee.mail.inbound import InboundMessage, parse_message, read_heading
from tests.mail.mails import DOMAIN, LIST, REFEREE, b64, parse, simple

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


# -- robustness ------------------------------------------------------------------------

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
