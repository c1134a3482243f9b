"""Benchmark: the CPU one worst-case mail costs to read (``parse_message``).

Each mail is as big as the referee's default size cap lets through (9 MB
here, under the 10 MB of ``max_message_size``) and built to be as costly as
its shape can be: an RFC 2047 encoded subject, HTML, junk lines, lines
that are nearly attributions ("On ... wrote:"), a ``format=flowed``
paragraph, a recipient list, References, HTML in many parts. The tests
(``tests/mail/test_inbound.py``, "bounded work") check that what parsing
hands on is capped; this prints what it costs, in CPU seconds on this
machine, and the size of what it read.

Usage, from the checkout::

    .venv/bin/python bench/worst_mail.py [--mb 9]
"""

from __future__ import annotations

import argparse
import base64
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.mail.inbound import parse_message


def mail(body: bytes, subject: bytes = b"hi", headers: bytes = b"",
         ctype: bytes = b"text/plain; charset=utf-8") -> bytes:
    return (b"From: Alice <alice@example.test>\r\nTo: referee@example.test\r\n"
            b"Subject: " + subject + b"\r\nMessage-ID: <worst@example.test>\r\n"
            b"Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n" + headers +
            b"MIME-Version: 1.0\r\nContent-Type: " + ctype + b"\r\n\r\n" + body)


def cases(size: int) -> dict[str, Callable[[], bytes]]:
    word = b"=?utf-8?b?" + base64.b64encode("zoë ".encode() * 10) + b"?="
    html_part = b"--p\r\nContent-Type: text/html\r\n\r\n" + b"<p>bid 5</p>\r\n" * 20_000
    attribution = b"On 1 " + b"@ " * 190 + b":\r\n"
    addresses = b", ".join(b"u%d@example.test" % i for i in range(size // 22))
    return {
        "encoded subject": lambda: mail(b"help\r\n", subject=b" ".join(
            [word] * (size // (len(word) + 1)))),
        "HTML body": lambda: mail(b"<p>bid 5</p>\r\n" * (size // 14), ctype=b"text/html"),
        "HTML in many parts": lambda: mail(
            html_part * (size // len(html_part)) + b"--p--\r\n",
            ctype=b"multipart/mixed; boundary=p"),
        "junk lines": lambda: mail(b"bid x\r\n" * (size // 7)),
        # each line almost an attribution ("On ... wrote:"), as long as one may be
        "attribution lines": lambda: mail(attribution * (size // len(attribution))),
        "flowed paragraph": lambda: mail(b"bid x \r\n" * (size // 8),
                                         ctype=b"text/plain; format=flowed"),
        "recipient list": lambda: mail(b"help\r\n", headers=b"Cc: " + addresses + b"\r\n"),
        "References": lambda: mail(b"help\r\n", headers=b"References: " + addresses.replace(
            b", ", b"> <") + b"\r\n"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=9.0, help="size of each mail, in MB")
    args = parser.parse_args()
    size = int(args.mb * 1024 * 1024)
    print(f"{platform.python_implementation()} {platform.python_version()} on "
          f"{platform.machine()}; each mail {args.mb:g} MB; CPU seconds of parse_message")
    for name, build in cases(size).items():
        raw = build()
        started = time.process_time()
        msg = parse_message(raw, referee_address="referee@example.test")
        spent = time.process_time() - started
        print(f"  {name:<20} {spent:6.2f} s   {len(raw) / 2**20:5.1f} MB in, "
              f"{len(msg.lines)} line(s), subject {len(msg.subject)} chars, "
              f"{len(msg.cc)} cc, {len(msg.references)} references")


if __name__ == "__main__":
    main()
