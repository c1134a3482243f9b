"""A corpus of hostile mails, generated: each is something a stranger, a
broken client or a forger can send, and none may stop or slow the referee.

Each entry is (name, raw bytes). ``sender`` is put in From (a player's
address, so the mail reaches the game's code, not just the stranger path).
"""

from __future__ import annotations

import base64

#: Above the referee's default limit of 10 MB no mail is fetched whole; the
#: corpus stays under it, where the work is real.
MB = 1024 * 1024


def _mail(sender: str, to: str, subject: bytes, body: bytes = b"help\n",
          extra: bytes = b"", message_id: bytes | None = None) -> bytes:
    mid = message_id if message_id is not None else b"<hostile-%d@evil.test>" % id(subject)
    return (b"From: " + sender.encode() + b"\r\nTo: " + to.encode() + b"\r\n"
            b"Subject: " + subject + b"\r\nMessage-ID: " + mid + b"\r\n"
            b"Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n" + extra +
            b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body)


def _encoded(text: bytes) -> bytes:
    return b"=?utf-8?b?" + base64.b64encode(text) + b"?="


def _deep(depth: int) -> bytes:
    head = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i)
                    for i in range(depth))
    tail = b"".join(b"\r\n--b%d--\r\n" % i for i in reversed(range(depth)))
    return head + b"Content-Type: text/plain\r\n\r\nbid 5\r\n" + tail


def corpus(sender: str, to: str, n: int = 0) -> list[tuple[str, bytes]]:
    """The hostile mails, with Message-IDs unique to round ``n``."""
    def mid(name: str) -> bytes:
        return f"<{name}-{n}@evil.test>".encode()

    def mail(name: str, subject: bytes, **kw: bytes) -> tuple[str, bytes]:
        kw.setdefault("message_id", mid(name))
        return name, _mail(sender, to, subject, **kw)

    out = [mail(f"control-{c:02x}", _encoded(b"bid 5" + bytes([c]) + b"now"))
           for c in (0x0D, 0x0B, 0x0C, 0x1C, 0x00, 0x85)]
    out += [
        mail("utf8-message-id", b"hi", message_id=f"<zo\u00eb-{n}@\u00e9vil.test>".encode()),
        mail("100k-message-id", b"hi", message_id=b"<" + b"x" * 100_000 + b"%d@evil.test>" % n),
        mail("100k-references", b"hi", extra=b"References: " + b" ".join(
            b"<r%d-%d@evil.test>" % (i, n) for i in range(5000)) + b"\r\n"),
        mail("utf8-references", b"hi", extra="In-Reply-To: <ü@ü>\r\nReferences: <ü@ü> <\x0b@x>"
             "\r\n".encode()),
        mail("1mb-subject", b"bid " * (MB // 4)),
        mail("1mb-encoded-subject", b" ".join(_encoded("zoë ".encode() * 10)
                                              for _ in range(MB // 60))),
        mail("huge-header", b"hi", extra=b"X-Junk: " + b"j" * (2 * MB) + b"\r\n"),
        mail("many-headers", b"hi", extra=b"".join(b"X-H%d: v\r\n" % i for i in range(20_000))),
        mail("2mb-line", b"hi", body=b"bid " * (MB // 2) + b"\r\n"),
        mail("2mb-of-bad-lines", b"hi", body=b"bid x\r\n" * (2 * MB // 7)),
        mail("bad-charset", b"=?x-unknown?q?bid_5?=", body=b"\xff\xfe bid 5\r\n"),
        ("deep-mime", (f"From: {sender}\r\nTo: {to}\r\nSubject: deep\r\n".encode() +
                       b"Message-ID: " + mid("deep-mime") + b"\r\nMIME-Version: 1.0\r\n" +
                       _deep(400))),
        ("wide-mime", (f"From: {sender}\r\nTo: {to}\r\nSubject: wide\r\n".encode() +
                       b"Message-ID: " + mid("wide-mime") + b"\r\nMIME-Version: 1.0\r\n"
                       b"Content-Type: multipart/mixed; boundary=w\r\n\r\n" +
                       b"".join(b"--w\r\nContent-Type: text/plain\r\n\r\nbid 5\r\n"
                                for _ in range(3000)) + b"--w--\r\n")),
        mail("long-from", b"hi", extra=b""),
        ("no-headers-at-all", b"\r\n\r\nbid 5\r\n"),
        ("binary-garbage", bytes(range(256)) * 64),
    ]
    # A From far over SMTP's length, and a display name with line breaks.
    long_from = "x" * 400 + "@evil.test"
    out[[name for name, _ in out].index("long-from")] = (
        "long-from", _mail(long_from, to, b"hi", message_id=mid("long-from")))
    out.append(("name-with-breaks", _mail(
        f"=?utf-8?q?Eve=0D=0ABcc=3A_x?= <{sender.split('<')[-1].rstrip('>')}>", to, b"hi",
        message_id=mid("name-with-breaks"))))
    return out
