"""The MIME tree (``referee/mail/mime.py``): which parts are read
(forwards, attachments and signatures are not), PGP/MIME, winmail.dat,
alternatives and mangled multiparts, read through ``parse_message``."""

from __future__ import annotations

from tests.mail.mails import parse

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
