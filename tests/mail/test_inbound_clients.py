"""Inbound mail: replies as each common client writes them -> the command lines.

One test per client and shape of reply: Outlook (plain, HTML, mobile), Apple
Mail and iOS, Gmail, Thunderbird, and the attribution lines of German, French,
Spanish and Dutch clients; then format=flowed, forwards and signed mail. Each
message is built the way its client sends it and replies to a referee report
whose own lines look like commands ("bid 5", "play 4C"). Every test asserts
the whole ``lines`` tuple: the player's move and nothing from the quote.
"""

from __future__ import annotations

import base64
import quopri

import pytest

from referee.mail.inbound import InboundMessage, parse_message

REFEREE = "referee@pbm.example.org"
LIST = "players@pbm.example.org"
DOMAIN = "pbm.example.org"

#: The referee's report every reply below quotes.
REPORT = 'Round 2 of goofspiel-7: the prize is the 7.\nSend your bid, e.g. "bid 5".\nbid 13\n'


def parse(raw: bytes) -> InboundMessage:
    """Parse as the referee does, with the wire's CRLF line ends."""
    raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return parse_message(raw, referee_address=REFEREE, list_address=LIST, our_domain=DOMAIN)


def quoted(text: str) -> str:
    """``text`` as a client quotes it: each line behind "> "."""
    return "".join(f"> {line}\n" if line else ">\n" for line in text.splitlines())


def qp(text: str, charset: str = "utf-8") -> bytes:
    return quopri.encodestring(text.encode(charset))


def b64(text: str, charset: str = "utf-8") -> bytes:
    return base64.encodebytes(text.encode(charset))


def reply(headers: str, content_type: str, body: bytes, *, cte: str = "quoted-printable") -> bytes:
    """A one-part reply from Alice to the referee's round 2 report."""
    return (
        "From: Alice Martin <alice@example.com>\n"
        "To: Goofspiel Referee <referee@pbm.example.org>\n"
        "Subject: Re: [goofspiel-7] Round 2: the prize is the 7\n"
        "Date: Mon, 3 Jun 2024 10:12:44 +0200\n"
        "In-Reply-To: <pbm.41.goofspiel-7@pbm.example.org>\n"
        "References: <pbm.41.goofspiel-7@pbm.example.org>\n"
        f"{headers}"
        "MIME-Version: 1.0\n"
        f"Content-Type: {content_type}\n"
        f"Content-Transfer-Encoding: {cte}\n"
        "\n"
    ).encode() + body


def alternative(headers: str, boundary: str, plain: bytes, html: bytes, *,
                plain_type: str = 'text/plain; charset="utf-8"',
                html_type: str = 'text/html; charset="utf-8"') -> bytes:
    """A multipart/alternative reply; both parts quoted-printable."""
    return reply(headers, f'multipart/alternative; boundary="{boundary}"', (
        f"--{boundary}\n"
        f"Content-Type: {plain_type}\n"
        "Content-Transfer-Encoding: quoted-printable\n\n"
    ).encode() + plain + (
        f"\n--{boundary}\n"
        f"Content-Type: {html_type}\n"
        "Content-Transfer-Encoding: quoted-printable\n\n"
    ).encode() + html + f"\n--{boundary}--\n".encode(), cte="7bit")


# -- Outlook, plain text ------------------------------------------------------------

OUTLOOK_HEADERS = (
    "Message-ID: <000001dab5a2$4c1e9f40$e45bddc0$@example.com>\n"
    "X-Mailer: Microsoft Outlook 16.0\n"
    "Thread-Index: AQHatb1c2Vh0lqQ2ZkK0m3y8Xz5w3w==\n"
    "Content-Language: en-gb\n"
)

OUTLOOK_QUOTED_HEADERS = """\
From: Goofspiel Referee <referee@pbm.example.org>
Sent: Monday, June 3, 2024 10:00 AM
To: Alice Martin <alice@example.com>
Subject: [goofspiel-7] Round 2: the prize is the 7

"""


def test_outlook_plain_original_message_marker_with_mailto_header_block() -> None:
    # Outlook 2010 in plain-text mode.
    body = f"""\
Hello referee,

bid 5

Alice

-----Original Message-----
From: Goofspiel Referee [mailto:referee@pbm.example.org]
Sent: Monday, June 03, 2024 10:00 AM
To: Alice Martin
Subject: [goofspiel-7] Round 2: the prize is the 7

{REPORT}"""
    msg = parse(reply(OUTLOOK_HEADERS, 'text/plain; charset="us-ascii"', qp(body)))
    assert msg.lines == ("Hello referee,", "bid 5", "Alice")


def test_outlook_plain_header_block_without_a_rule_ends_the_reply() -> None:
    body = f"bid 5\r\n\r\n{OUTLOOK_QUOTED_HEADERS}{REPORT}"
    msg = parse(reply(OUTLOOK_HEADERS, 'text/plain; charset="us-ascii"', qp(body)))
    assert msg.lines == ("bid 5",)


def test_outlook_plain_header_block_below_an_underscore_rule_ends_the_reply() -> None:
    body = f"bid 5\n\nThanks\n________________________________\n{OUTLOOK_QUOTED_HEADERS}{REPORT}"
    msg = parse(reply(OUTLOOK_HEADERS, 'text/plain; charset="us-ascii"', qp(body)))
    assert msg.lines == ("bid 5", "Thanks")


def test_outlook_for_mac_header_block_has_date_instead_of_sent() -> None:
    body = f"""\
bid 5

From: Goofspiel Referee <referee@pbm.example.org>
Date: Monday, 3 June 2024 at 10:00
To: Alice Martin <alice@example.com>
Subject: [goofspiel-7] Round 2: the prize is the 7

{REPORT}"""
    msg = parse(reply("X-Mailer: Microsoft Outlook for Mac 16.85\n",
                      'text/plain; charset="UTF-8"', qp(body)))
    assert msg.lines == ("bid 5",)


def test_an_outlook_header_block_run_onto_one_line_ends_the_reply() -> None:
    # As a client that rewraps quoted text leaves it.
    body = (
        "bid 5\n\nFrom: Goofspiel Referee [mailto:referee@pbm.example.org] Sent: Monday, June 3,"
        " 2024 10:00 AM To: Alice Martin Subject: [goofspiel-7] Round 2: the prize is the 7\n\n"
        + REPORT
    )
    msg = parse(reply(OUTLOOK_HEADERS, 'text/plain; charset="us-ascii"', qp(body)))
    assert msg.lines == ("bid 5",)


def test_german_outlook_header_block_ends_the_reply() -> None:
    body = f"""\
Hallo,

bid 5

Gru\u00df, J\u00fcrgen

Von: Goofspiel Referee <referee@pbm.example.org>
Gesendet: Montag, 3. Juni 2024 10:00
An: J\u00fcrgen M\u00fcller <juergen@example.org>
Betreff: [goofspiel-7] Round 2: the prize is the 7

{REPORT}"""
    msg = parse(reply(OUTLOOK_HEADERS, 'text/plain; charset="iso-8859-1"',
                      qp(body, "iso-8859-1")))
    assert msg.lines == ("Hallo,", "bid 5", "Gru\u00df, J\u00fcrgen")


# -- Outlook, HTML -------------------------------------------------------------------

NEW_OUTLOOK_PLAIN = f"""\
Hi,

bid 5

Alice
________________________________
{OUTLOOK_QUOTED_HEADERS}{REPORT}"""

NEW_OUTLOOK_HTML = """\
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>
</head>
<body dir="ltr">
<div class="elementToProof" style="font-family: Aptos, Aptos_EmbeddedFont, \
Aptos_MSFontService, Calibri, Helvetica, sans-serif; font-size: 12pt; color: rgb(0, 0, 0);">
Hi,</div>
<div class="elementToProof" style="font-family: Aptos; font-size: 12pt;"><br></div>
<div class="elementToProof" style="font-family: Aptos; font-size: 12pt;">bid 5</div>
<div class="elementToProof" style="font-family: Aptos; font-size: 12pt;"><br></div>
<div class="elementToProof" style="font-family: Aptos; font-size: 12pt;">Alice</div>
<div id="appendonsend"></div>
<hr style="display:inline-block;width:98%" tabindex="-1">
<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" \
color="#000000"><b>From:</b> Goofspiel Referee &lt;referee@pbm.example.org&gt;<br>
<b>Sent:</b> Monday, June 3, 2024 10:00<br>
<b>To:</b> Alice Martin &lt;alice@example.com&gt;<br>
<b>Subject:</b> [goofspiel-7] Round 2: the prize is the 7</font>
<div>&nbsp;</div>
</div>
<div class="BodyFragment"><font size="2"><span style="font-size:11pt;">
<div class="PlainText">Round 2 of goofspiel-7: the prize is the 7.<br>
Send your bid, e.g. &quot;bid 5&quot;.<br>
bid 13<br>
</div>
</span></font></div>
</body>
</html>
"""


def test_new_outlook_alternative_reads_the_plain_part_up_to_the_rule() -> None:
    msg = parse(alternative(
        OUTLOOK_HEADERS, "_000_DB9PR07MB7771C0FFEE_",
        qp(NEW_OUTLOOK_PLAIN), qp(NEW_OUTLOOK_HTML),
    ))
    assert msg.lines == ("Hi,", "bid 5", "Alice")


def test_new_outlook_html_alone_stops_at_divrplyfwdmsg() -> None:
    msg = parse(reply(OUTLOOK_HEADERS, 'text/html; charset="utf-8"', qp(NEW_OUTLOOK_HTML)))
    assert msg.lines == ("Hi,", "bid 5", "Alice")


def test_outlook_html_without_its_div_ids_stops_at_the_header_block() -> None:
    # Some gateways drop element ids: the From/Sent block still ends the reply.
    html = NEW_OUTLOOK_HTML.replace(' id="appendonsend"', "").replace(' id="divRplyFwdMsg"', "")
    msg = parse(reply(OUTLOOK_HEADERS, 'text/html; charset="utf-8"', qp(html)))
    assert msg.lines == ("Hi,", "bid 5", "Alice")


OUTLOOK_2010_HTML = """\
<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" \
xmlns:w="urn:schemas-microsoft-com:office:word"><head>
<meta http-equiv=Content-Type content="text/html; charset=windows-1252">
<meta name=Generator content="Microsoft Word 14 (filtered medium)">
<style><!--
p.MsoNormal, li.MsoNormal, div.MsoNormal {margin:0cm; margin-bottom:.0001pt; \
font-size:11.0pt; font-family:"Calibri","sans-serif";}
--></style><!--[if gte mso 9]><xml>
<o:shapedefaults v:ext="edit" spidmax="1026" />
</xml><![endif]--></head>
<body lang=EN-GB link=blue vlink=purple><div class=WordSection1>
<p class=MsoNormal><span style='color:#1F497D'>bid 5<o:p></o:p></span></p>
<p class=MsoNormal><span style='color:#1F497D'><o:p>&nbsp;</o:p></span></p>
<p class=MsoNormal><span style='color:#1F497D'>I\u2019ll keep the king.<o:p></o:p></span></p>
<p class=MsoNormal><span style='color:#1F497D'><o:p>&nbsp;</o:p></span></p>
<div><div style='border:none;border-top:solid #B5C4DF 1.0pt;padding:3.0pt 0cm 0cm 0cm'>\
<p class=MsoNormal><b><span lang=EN-US style='font-size:10.0pt;font-family:"Tahoma",\
"sans-serif"'>From:</span></b><span lang=EN-US style='font-size:10.0pt;font-family:"Tahoma",\
"sans-serif"'> Goofspiel Referee [mailto:referee@pbm.example.org] <br><b>Sent:</b> Monday, \
June 03, 2024 10:00 AM<br><b>To:</b> Alice Martin<br><b>Subject:</b> [goofspiel-7] Round 2: \
the prize is the 7<o:p></o:p></span></p></div></div>
<p class=MsoNormal><o:p>&nbsp;</o:p></p>
<p class=MsoNormal>Round 2 of goofspiel-7: the prize is the 7.<br>Send your bid, e.g. \
&quot;bid 5&quot;.<br>bid 13<o:p></o:p></p>
</div></body></html>
"""


def test_outlook_desktop_html_with_a_border_top_separator_in_windows_1252() -> None:
    msg = parse(reply(OUTLOOK_HEADERS, 'text/html; charset="windows-1252"',
                      b64(OUTLOOK_2010_HTML, "windows-1252"), cte="base64"))
    assert msg.lines == ("bid 5", "I\u2019ll keep the king.")


def test_outlook_html_border_top_separator_ends_the_reply_whatever_the_labels_say() -> None:
    # Polish Outlook: "Od:", "Wys\u0142ano:", labels no rule knows; the div's
    # border-top is the separator.
    html = OUTLOOK_2010_HTML.replace(">From:<", ">Od:<").replace(
        "<b>Sent:</b>", "<b>Wys\u0142ano:</b>").replace("<b>To:</b>", "<b>Do:</b>").replace(
        "<b>Subject:</b>", "<b>Temat:</b>").replace("charset=windows-1252", "charset=utf-8")
    msg = parse(reply(OUTLOOK_HEADERS, 'text/html; charset="utf-8"', qp(html)))
    assert msg.lines == ("bid 5", "I\u2019ll keep the king.")


def test_outlook_html_original_message_marker_ends_the_reply() -> None:
    html = OUTLOOK_2010_HTML.replace(
        "<div><div style='border:none;border-top:solid #B5C4DF 1.0pt;padding:3.0pt 0cm 0cm 0cm'>",
        "<div><p class=MsoNormal>-----Original Message-----</p><div>",
    )
    msg = parse(reply(OUTLOOK_HEADERS, 'text/html; charset="windows-1252"',
                      qp(html, "windows-1252")))
    assert msg.lines == ("bid 5", "I\u2019ll keep the king.")


# -- Outlook and other mobile clients -------------------------------------------------

OUTLOOK_ANDROID_PLAIN = f"""\
bid 5

Get Outlook for Android<https://aka.ms/AAb9ysg>
________________________________
From: Goofspiel Referee <referee@pbm.example.org>
Sent: Monday, June 3, 2024 10:00:00 AM
To: Alice Martin <alice@example.com>
Subject: [goofspiel-7] Round 2: the prize is the 7

{REPORT}"""

OUTLOOK_ANDROID_HTML = """\
<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head>
<body><div dir="auto">bid 5</div><div dir="auto"><br></div>
<div id="ms-outlook-mobile-signature" dir="auto"><div dir="auto">Get \
<a href="https://aka.ms/AAb9ysg">Outlook for Android</a></div></div>
<div id="ms-outlook-mobile-body-separator-line" dir="auto">\
<hr style="display:inline-block;width:98%" tabindex="-1"></div>
<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" \
color="#000000"><b>From:</b> Goofspiel Referee &lt;referee@pbm.example.org&gt;<br>
<b>Sent:</b> Monday, June 3, 2024 10:00:00 AM<br>
<b>To:</b> Alice Martin &lt;alice@example.com&gt;<br>
<b>Subject:</b> [goofspiel-7] Round 2: the prize is the 7</font>
<div>&nbsp;</div></div>
<div>Send your bid, e.g. &quot;bid 5&quot;.<br>bid 13</div>
</body></html>
"""


def test_outlook_for_android_plain_stops_at_get_outlook_for_android() -> None:
    msg = parse(alternative(
        "Message-ID: <AM0PR02MB5555A1@AM0PR02MB5555.eurprd02.prod.outlook.com>\n",
        "_000_AM0PR02MB5555A1_", qp(OUTLOOK_ANDROID_PLAIN), qp(OUTLOOK_ANDROID_HTML),
    ))
    assert msg.lines == ("bid 5",)


def test_outlook_for_android_html_alone_drops_its_signature_and_the_original() -> None:
    msg = parse(reply("", 'text/html; charset="utf-8"', qp(OUTLOOK_ANDROID_HTML)))
    assert msg.lines == ("bid 5",)


@pytest.mark.parametrize("signature", [
    "Sent from my iPhone",
    "Sent from my iPad",
    "Sent from my Galaxy",
    "Sent from Outlook for iOS<https://aka.ms/o0ukef>",
    "Get Outlook for iOS<https://aka.ms/o0ukef>",
    "Get Outlook for Android",
    "Sent from Yahoo Mail on Android",
    "Sent from Mail for Windows",
    "Von meinem iPhone gesendet",
    "Envoy\u00e9 de mon iPhone",
    "Enviado desde mi iPhone",
    "Verstuurd vanaf mijn iPhone",
    "Verzonden vanaf mijn Galaxy",
    "Outlook f\u00fcr Android<https://aka.ms/AAb9ysg> herunterladen",
    "Obtenir Outlook pour Android<https://aka.ms/AAb9ysg>",
    "Obtener Outlook para iOS<https://aka.ms/o0ukef>",
    "Outlook voor iOS<https://aka.ms/o0ukef> downloaden",
])
def test_a_mobile_signature_ends_the_reply(signature: str) -> None:
    body = f"bid 5\n\n{signature}\n\nbid 13\n"
    msg = parse(reply("", "text/plain; charset=utf-8", qp(body)))
    assert msg.lines == ("bid 5",)


# -- Apple Mail and iOS ---------------------------------------------------------------

APPLE_HEADERS = (
    "Message-Id: <B5C2E1F0-3A4D-4E8B-9F7A-6C5D4E3F2A1B@example.com>\n"
    "X-Mailer: Apple Mail (2.3774.600.62)\n"
)


@pytest.mark.parametrize("attribution", [
    "On 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org> wrote:",
    "On Jun 3, 2024, at 10:00\u202fAM, Goofspiel Referee <referee@pbm.example.org> wrote:",
    "On 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org>\nwrote:",
    "On 3 Jun 2024, at 10:00, Goofspiel Referee\n<referee@pbm.example.org> wrote:",
])
def test_apple_mail_attribution_on_one_or_two_lines(attribution: str) -> None:
    body = f"bid 6\n\n{attribution}\n\n{quoted(REPORT)}"
    msg = parse(reply(APPLE_HEADERS, "text/plain; charset=utf-8", qp(body)))
    assert msg.lines == ("bid 6",)


def test_apple_mail_attribution_above_an_unquoted_original_ends_the_reply() -> None:
    body = f"bid 6\n\nOn 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org> " \
           f"wrote:\n\n{REPORT}"
    msg = parse(reply(APPLE_HEADERS, "text/plain; charset=utf-8", qp(body)))
    assert msg.lines == ("bid 6",)


APPLE_MAIL_HTML = """\
<html aria-label="message body"><head><meta http-equiv="content-type" \
content="text/html; charset=utf-8"></head><body style="overflow-wrap: break-word; \
-webkit-nbsp-mode: space; line-break: after-white-space;">bid 6<br \
id="lineBreakAtBeginningOfMessage"><div><br><blockquote type="cite"><div>On 3 Jun 2024, \
at 10:00, Goofspiel Referee &lt;referee@pbm.example.org&gt; wrote:</div><br \
class="Apple-interchange-newline"><div><div>Round 2 of goofspiel-7: the prize is the 7.<br>\
Send your bid, e.g. "bid 5".<br>bid 13</div></div></blockquote></div><br></body></html>
"""


def test_apple_mail_html_drops_the_cited_blockquote() -> None:
    msg = parse(alternative(
        APPLE_HEADERS, "Apple-Mail=_5E0C1B2A-1F2E-4D3C-9B8A-7F6E5D4C3B2A",
        qp(f"bid 6\n\nOn 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org> "
           f"wrote:\n\n{quoted(REPORT)}"),
        qp(APPLE_MAIL_HTML),
    ))
    assert msg.lines == ("bid 6",)
    html_only = parse(reply(APPLE_HEADERS, "text/html; charset=utf-8", qp(APPLE_MAIL_HTML)))
    assert html_only.lines == ("bid 6",)


IOS_MAIL_HTML = """\
<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>\
<body dir="auto"><div dir="ltr">Bid 6</div><div dir="ltr"><br></div><div dir="ltr">Sent from \
my iPhone</div><div dir="ltr"><br><blockquote type="cite">On 3 Jun 2024, at 10:00, Goofspiel \
Referee &lt;referee@pbm.example.org&gt; wrote:<br><br></blockquote></div><blockquote \
type="cite"><div dir="ltr">\ufeffRound 2 of goofspiel-7: the prize is the 7.<br>Send your bid, \
e.g. "bid 5".<br>bid 13</div></blockquote></body></html>
"""


def test_ios_mail_html_alone_stops_at_sent_from_my_iphone() -> None:
    msg = parse(reply("X-Mailer: iPhone Mail (21F90)\n", "text/html; charset=utf-8",
                      qp(IOS_MAIL_HTML)))
    assert msg.lines == ("Bid 6",)


# -- Gmail -----------------------------------------------------------------------------

GMAIL_HTML = """\
<div dir="ltr">Hi Referee,<div><br></div><div>bid 5</div><div><br></div><div>Cheers,</div>\
<div>Alice</div><div><br clear="all"></div><div><div dir="ltr" class="gmail_signature" \
data-smartmail="gmail_signature"><div dir="ltr">Alice Martin<br>play QH is my favourite \
move</div></div></div></div><br><div class="gmail_quote gmail_quote_container"><div dir="ltr" \
class="gmail_attr">On Mon, 3 Jun 2024 at 10:00, Goofspiel Referee &lt;<a \
href="mailto:referee@pbm.example.org">referee@pbm.example.org</a>&gt; wrote:<br></div>\
<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid \
rgb(204,204,204);padding-left:1ex">Round 2 of goofspiel-7: the prize is the 7.<br>Send your \
bid, e.g. &quot;bid 5&quot;.<br>bid 13<br></blockquote></div>
"""


def test_gmail_html_alone_keeps_the_greeting_and_drops_signature_and_quote() -> None:
    msg = parse(reply("Message-ID: <CAF3x8_Zq1wQk9s0GjH4f2@mail.gmail.com>\n",
                      'text/html; charset="UTF-8"', qp(GMAIL_HTML)))
    assert msg.lines == ("Hi Referee,", "bid 5", "Cheers,", "Alice")


def test_gmail_mobile_html_reply_in_a_dir_auto_div() -> None:
    html = (
        '<div dir="auto">bid 5</div><br><div class="gmail_quote"><div dir="ltr" '
        'class="gmail_attr">On Mon, 3 Jun 2024, 10:00 Goofspiel Referee, &lt;'
        'referee@pbm.example.org&gt; wrote:<br></div><blockquote class="gmail_quote" '
        'style="margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex">bid 13<br>'
        "</blockquote></div>\n"
    )
    msg = parse(reply("", 'text/html; charset="UTF-8"', qp(html)))
    assert msg.lines == ("bid 5",)


# -- Thunderbird ---------------------------------------------------------------------------

THUNDERBIRD_TOP_POSTED_HTML = """\
<!DOCTYPE html>
<html>
  <head>
    <meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
  </head>
  <body>
    <p>bid 7</p>
    <p>Bob<br>
    </p>
    <div class="moz-cite-prefix">On 03/06/2024 10:00, Goofspiel Referee wrote:<br>
    </div>
    <blockquote type="cite"
      cite="mid:pbm.41.goofspiel-7@pbm.example.org">Round 2 of goofspiel-7: the prize is
      the 7.<br>
      Send your bid, e.g. "bid 5".<br>
      bid 13<br>
    </blockquote>
  </body>
</html>
"""


def test_thunderbird_top_posted_html_drops_moz_cite_prefix_and_blockquote() -> None:
    msg = parse(reply("User-Agent: Mozilla Thunderbird\n", "text/html; charset=UTF-8",
                      THUNDERBIRD_TOP_POSTED_HTML.encode(), cte="7bit"))
    assert msg.lines == ("bid 7", "Bob")


def test_thunderbird_top_posted_plain_drops_attribution_and_quote() -> None:
    body = f"bid 7\n\nBob\n\nOn 03/06/2024 10:00, Goofspiel Referee wrote:\n{quoted(REPORT)}"
    msg = parse(reply("User-Agent: Mozilla Thunderbird\n",
                      "text/plain; charset=UTF-8; format=flowed", body.encode(), cte="7bit"))
    assert msg.lines == ("bid 7", "Bob")


def test_an_undated_attribution_above_a_quote_is_dropped() -> None:
    # Thunderbird with the reply header set to "author wrote:".
    body = f"bid 7\n\nGoofspiel Referee wrote:\n{quoted(REPORT)}"
    msg = parse(reply("User-Agent: Mozilla Thunderbird\n", "text/plain; charset=UTF-8",
                      body.encode(), cte="7bit"))
    assert msg.lines == ("bid 7",)


def test_an_undated_wrote_line_above_plain_text_is_the_player_writing() -> None:
    body = "My partner wrote:\nbid 7\nand I agree.\n"
    msg = parse(reply("", "text/plain; charset=UTF-8", body.encode(), cte="7bit"))
    assert msg.lines == ("My partner wrote:", "bid 7", "and I agree.")


# -- attributions in other languages --------------------------------------------------------

@pytest.mark.parametrize("attribution", [
    # German: Gmail (wrapped), Thunderbird, Apple Mail
    "Am Mo., 3. Juni 2024 um 10:00 Uhr schrieb Goofspiel Referee <\nreferee@pbm.example.org>:",
    "Am 03.06.24 um 10:00 schrieb Goofspiel Referee:",
    "Am 03.06.2024 um 10:00 schrieb Goofspiel Referee <referee@pbm.example.org>:",
    # French: Gmail, Thunderbird, Apple Mail (with a no-break space before the colon)
    "Le lun. 3 juin 2024 \u00e0 10:00, Goofspiel Referee <referee@pbm.example.org> a \u00e9crit :",
    "Le 03/06/2024 \u00e0 10:00, Goofspiel Referee a \u00e9crit\u00a0:",
    "Le 3 juin 2024 \u00e0 10:00, Goofspiel Referee <referee@pbm.example.org> a\n\u00e9crit :",
    # Spanish: Gmail (wrapped), Thunderbird
    "El lun, 3 jun 2024 a las 10:00, Goofspiel Referee (<\nreferee@pbm.example.org>)"
    " escribi\u00f3:",
    "El 3/6/24 a las 10:00, Goofspiel Referee escribi\u00f3:",
    "El 3 jun 2024, a las 10:00, Goofspiel Referee <referee@pbm.example.org> escribi\u00f3:",
    # Dutch: Gmail (wrapped), Thunderbird, Apple Mail (on one line and wrapped)
    "Op ma 3 jun 2024 om 10:00 schreef Goofspiel Referee <\nreferee@pbm.example.org>:",
    "Op 03-06-2024 om 10:00 schreef Goofspiel Referee:",
    "Op 3 jun 2024, om 10:00 heeft Goofspiel Referee <referee@pbm.example.org> het volgende"
    " geschreven:",
    "Op 3 jun 2024, om 10:00 heeft Goofspiel Referee <referee@pbm.example.org> het\nvolgende"
    " geschreven:",
])
def test_a_translated_attribution_and_its_quote_are_dropped(attribution: str) -> None:
    body = f"bid 5\n\n{attribution}\n\n{quoted(REPORT)}"
    msg = parse(reply("", "text/plain; charset=UTF-8", qp(body)))
    assert msg.lines == ("bid 5",)
    unquoted = f"bid 5\n\n{attribution}\n{REPORT}"
    assert parse(reply("", "text/plain; charset=UTF-8", qp(unquoted))).lines == ("bid 5",)


# -- not over-stripping ----------------------------------------------------------------

def test_a_bare_command_after_a_greeting_is_kept() -> None:
    body = "Hi Referee,\n\nbid 5\n\nOn Monday I will bid higher.\nFrom: now on, no nil.\n"
    msg = parse(reply("", "text/plain; charset=utf-8", qp(body)))
    assert msg.lines == (
        "Hi Referee,", "bid 5", "On Monday I will bid higher.", "From: now on, no nil.",
    )


def test_a_bare_command_after_a_greeting_in_html_is_kept() -> None:
    html = "<p>Hello!</p><p>bid nil</p><p>On reflection: play QH</p><div>See you</div>"
    msg = parse(reply("", "text/html; charset=utf-8", qp(html)))
    assert msg.lines == ("Hello!", "bid nil", "On reflection: play QH", "See you")


# -- format=flowed --------------------------------------------------------------------------

def test_format_flowed_delsp_yes_joins_soft_broken_lines_and_drops_the_quote() -> None:
    # DelSp=yes (RFC 3676 §4.2): the space before each soft break is the
    # marker alone and is deleted, so a break between words carries two.
    body = (
        "bid 5\n"
        "and I will keep the queen of hearts until the very last tr \n"
        "ick of the hand.\n"
        " From the 7 on I bid high.\n"  # space-stuffed (§4.4)
        "\n"
        "On 3 Jun 2024, at 10:00, Goofspiel Referee <referee@pbm.example.org>  \n"
        "wrote:\n"
        "\n"
        "> Round 2 of goofspiel-7: the prize is the  \n"
        "> 7. Send your bid, e.g. \"bid  \n"
        "> 5\".\n"
        ">\n"
        "> bid 13\n"
    )
    msg = parse(reply(APPLE_HEADERS,
                      "text/plain; charset=us-ascii; format=flowed; DelSp=yes",
                      body.encode(), cte="7bit"))
    assert msg.lines == (
        "bid 5",
        "and I will keep the queen of hearts until the very last trick of the hand.",
        "From the 7 on I bid high.",
    )


# -- forwards ---------------------------------------------------------------------------

def test_a_forward_attached_as_message_rfc822_never_runs_its_commands() -> None:
    # Thunderbird's "Forward As Attachment": the inner message is a whole reply.
    msg = parse(reply("User-Agent: Mozilla Thunderbird\n",
                      'multipart/mixed; boundary="------------fwd8Kq2N"', b"""\
This is a multi-part message in MIME format.
--------------fwd8Kq2N
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: 7bit

Referee, Gina's move is below; mine is
bid 3

--------------fwd8Kq2N
Content-Type: message/rfc822; name="Re: [goofspiel-7] Round 2.eml"
Content-Disposition: attachment; filename="Re: [goofspiel-7] Round 2.eml"

From: Gina Rossi <gina@example.org>
To: Goofspiel Referee <referee@pbm.example.org>
Subject: Re: [goofspiel-7] Round 2
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset=utf-8

bid 12
--inner
Content-Type: text/html; charset=utf-8

<div>bid 12</div>
--inner--

--------------fwd8Kq2N--
""", cte="7bit"))
    assert msg.lines == ("Referee, Gina's move is below; mine is", "bid 3")


def test_an_inline_message_rfc822_without_a_text_part_reads_as_no_lines() -> None:
    msg = parse(reply("", "message/rfc822", b"""\
From: Gina Rossi <gina@example.org>
Subject: my bid
Content-Type: text/plain; charset=utf-8

bid 12
""", cte="7bit"))
    assert msg.lines == ()


@pytest.mark.parametrize("marker", [
    "Begin forwarded message:",
    "---------- Forwarded message ---------",
    "-------- Forwarded Message --------",
    "-----Original Message-----",
])
def test_an_inline_forward_is_cut_at_its_marker(marker: str) -> None:
    body = f"""\
Passing this on.

{marker}
From: Gina Rossi <gina@example.org>
Subject: my bid
Date: 3 June 2024 at 09:00:00 CEST
To: Alice Martin <alice@example.com>

bid 12
"""
    msg = parse(reply("", "text/plain; charset=utf-8", qp(body)))
    assert msg.lines == ("Passing this on.",)


def test_gmail_html_forward_is_dropped_with_its_quote() -> None:
    html = (
        '<div dir="ltr">Passing this on.<br><br><div class="gmail_quote gmail_quote_container">'
        '<div dir="ltr" class="gmail_attr">---------- Forwarded message ---------<br>From: '
        "<strong>Gina Rossi</strong> <span>&lt;gina@example.org&gt;</span><br>Date: Mon, 3 Jun "
        "2024 at 09:00<br>Subject: my bid<br></div><br><br><div dir=\"ltr\">bid 12</div></div>"
        "</div>\n"
    )
    msg = parse(reply("", 'text/html; charset="UTF-8"', qp(html)))
    assert msg.lines == ("Passing this on.",)


# -- signed mail --------------------------------------------------------------------------

def test_smime_signed_outlook_mail_reads_the_signed_alternative() -> None:
    msg = parse(reply(OUTLOOK_HEADERS, 'multipart/signed; protocol="application/pkcs7-signature";'
                      ' micalg=2.16.840.1.101.3.4.2.1; boundary="=-sig-Zx9"', (
        b"This is an S/MIME signed message\n\n"
        b"--=-sig-Zx9\n"
        b'Content-Type: multipart/alternative; boundary="_000_alt_"\n\n'
        b"--_000_alt_\n"
        b'Content-Type: text/plain; charset="utf-8"\n'
        b"Content-Transfer-Encoding: quoted-printable\n\n"
        + qp(NEW_OUTLOOK_PLAIN) +
        b"\n--_000_alt_\n"
        b'Content-Type: text/html; charset="utf-8"\n'
        b"Content-Transfer-Encoding: quoted-printable\n\n"
        + qp(NEW_OUTLOOK_HTML) +
        b"\n--_000_alt_--\n\n"
        b"--=-sig-Zx9\n"
        b'Content-Type: application/pkcs7-signature; name="smime.p7s"\n'
        b"Content-Transfer-Encoding: base64\n"
        b'Content-Disposition: attachment; filename="smime.p7s"\n\n'
        b"MIAGCSqGSIb3DQEHAqCAMIACAQExDzANBglghkgBZQMEAgEFADCABgkqhkiG9w0BBwEAAKCCA+gw\n"
        b"--=-sig-Zx9--\n"
    ), cte="7bit"))
    assert msg.lines == ("Hi,", "bid 5", "Alice")


def test_pgp_mime_signed_reply_drops_the_quote_inside_the_signed_part() -> None:
    signed = (f"bid 8\n\nOn 03/06/2024 10:00, Goofspiel Referee wrote:\n{quoted(REPORT)}"
              "\n-- \nHana\n")
    msg = parse(reply("User-Agent: Mozilla Thunderbird\n",
                      'multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature";'
                      ' boundary="------------sig0LlX7"', (
        b"This is an OpenPGP/MIME signed message (RFC 4880 and 3156)\n"
        b"--------------sig0LlX7\n"
        b"Content-Type: text/plain; charset=UTF-8; format=flowed\n"
        b"Content-Transfer-Encoding: base64\n\n"
        + b64(signed) +
        b"\n--------------sig0LlX7\n"
        b'Content-Type: application/pgp-signature; name="OpenPGP_signature.asc"\n'
        b'Content-Disposition: attachment; filename="OpenPGP_signature.asc"\n\n'
        b"-----BEGIN PGP SIGNATURE-----\n\nwnsEABYIACMWIQTlF1ClXh5Q6qg9\n=Jm3c\n"
        b"-----END PGP SIGNATURE-----\n\n"
        b"--------------sig0LlX7--\n"
    ), cte="7bit"))
    assert msg.lines == ("bid 8",)
