"""A corpus of hostile mails, generated: each is something a stranger, a
broken client or a forger can send, and none may stop or slow the referee.

Each entry is (name, raw bytes). ``sender`` is put in From (a player's
address, so the mail reaches the game's code, not just the stranger path).
Each mail has its own Date and command lines, so that none is taken for a
copy of another (intake's digest of sender, Date and commands) or for a
loop (the same commands again and again): each reaches the reply path, and
:data:`EXPECTED` says what each comes to.
"""

from __future__ import annotations

import base64

#: Above the referee's default limit of 10 MB no mail is fetched whole; the
#: corpus stays under it, where the work is real.
MB = 1024 * 1024
#: The mails with no sender the referee could answer: no From at all, or one
#: over SMTP's length. Every other mail is a player's, read and answered.
NO_SENDER = frozenset({"long-from", "no-headers-at-all", "binary-garbage"})
#: The mails the referee will not read, and why: their record's note.
UNREADABLE = {"too-deep-mime": "unreadable: MIME parts nested more than 100 deep"}


def expected(name: str) -> tuple[str, str]:
    """What the corpus mail ``name`` from a player comes to: the (status,
    note) of its record. Never "duplicate of ..." nor "the same mail again"."""
    if name in NO_SENDER:
        return "ignored", "not answered: no sender address"
    if name in UNREADABLE:
        return "failed", UNREADABLE[name]
    return "processed", "processed"


def _mail(sender: str, to: str, subject: bytes, body: bytes, date: bytes,
          extra: bytes = b"", message_id: bytes | None = None) -> bytes:
    mid = message_id if message_id is not None else b"<hostile-%d@evil.test>" % id(subject)
    return (b"From: " + sender.encode() + b"\r\nTo: " + to.encode() + b"\r\n"
            b"Subject: " + subject + b"\r\nMessage-ID: " + mid + b"\r\n"
            b"Date: " + date + b"\r\n" + extra +
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

    dates: dict[str, bytes] = {}

    def date(name: str) -> bytes:
        """A Date of the mail's own: a minute each, a day each round ``n``."""
        return dates.setdefault(name, b"%02d Mar 2026 %02d:%02d:00 +0000" % (
            2 + n, 12 + len(dates) // 60, len(dates) % 60))

    def mail(name: str, subject: bytes, **kw: bytes) -> tuple[str, bytes]:
        kw.setdefault("message_id", mid(name))
        # Its own commands: "help", and a line of its name (read, not understood).
        kw.setdefault("body", b"help\r\nthis is " + name.encode() + b"\r\n")
        return name, _mail(sender, to, subject, date=date(name), **kw)

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
        # As deep as the referee reads, and deeper.
        ("deep-mime", (f"From: {sender}\r\nTo: {to}\r\nSubject: deep\r\n".encode() +
                       b"Message-ID: " + mid("deep-mime") + b"\r\nDate: " + date("deep-mime") +
                       b"\r\nMIME-Version: 1.0\r\n" + _deep(100))),
        ("too-deep-mime", (f"From: {sender}\r\nTo: {to}\r\nSubject: deeper\r\n".encode() +
                           b"Message-ID: " + mid("too-deep-mime") + b"\r\nDate: " +
                           date("too-deep-mime") + b"\r\nMIME-Version: 1.0\r\n" + _deep(500))),
        ("wide-mime", (f"From: {sender}\r\nTo: {to}\r\nSubject: wide\r\n".encode() +
                       b"Message-ID: " + mid("wide-mime") + b"\r\nDate: " + date("wide-mime") +
                       b"\r\nMIME-Version: 1.0\r\n"
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
        "long-from", _mail(long_from, to, b"hi", b"help\r\n", date("long-from"),
                           message_id=mid("long-from")))
    out.append(("name-with-breaks", _mail(
        f"=?utf-8?q?Eve=0D=0ABcc=3A_x?= <{sender.split('<')[-1].rstrip('>')}>", to, b"hi",
        b"help\r\nthis is name-with-breaks\r\n", date("name-with-breaks"),
        message_id=mid("name-with-breaks"))))
    return out
