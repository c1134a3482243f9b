"""HTML mail as typed text (``referee/mail/htmltext.py``), read through
``parse_message``."""

from __future__ import annotations

from tests.mail.mails import parse


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
