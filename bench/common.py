"""What the benchmarks share: the test suite's mail servers as the yardstick
(their raw delivery rate and CPU), the referee's config over them, and the
mail a benchmark sends."""

from __future__ import annotations

import contextlib
import os
import platform
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from imapclient import IMAPClient

from tests.mailstack import PLAYERS, MailStack

REF = "referee@example.test"
#: Reply budgets that never stop a benchmark's moves (the defaults would).
UNLIMITED = """
[limits]
replies_per_hour = 1000000
replies_per_day = 1000000
"""


def say(line: str = "") -> None:
    print(line, flush=True)


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, IndexError, ValueError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.1f} GB RAM"
    return (f"{os.cpu_count()} CPU ({model or platform.machine()}){mem}, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


def machine_busy() -> float:
    """CPU seconds the machine has been busy since boot (/proc/stat: all
    but idle and iowait), to take a difference of."""
    with contextlib.suppress(OSError, ValueError):
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def write_config(folder: Path, stack: MailStack, url: str, extra: str = "",
                 limits: str = UNLIMITED) -> Path:
    """The referee's config over ``stack`` (IMAP in, SMTP out) and ``url``:
    ``extra`` lines in [referee], and ``limits`` as the [limits] section
    ("": the defaults)."""
    path = folder / "referee.toml"
    path.write_text(f"""\
[referee]
address = "{REF}"
name = "Bench Referee"
database = "{url}"
{extra}
[mailbox]
kind = "imap"
host = "{stack.host}"
port = {stack.imap_port}
username = "{REF}"
password = "{stack.password}"
security = "none"

[smtp]
kind = "smtp"
host = "{stack.host}"
port = {stack.smtp_port}
security = "none"
timeout = "30s"
{limits}""", encoding="utf-8")
    return path


def mail(sender: str, subject: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = REF
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="mua.example.test")
    msg.set_content(body)
    return msg


def submit(stack: MailStack, msgs: list[EmailMessage]) -> None:
    """Submit over one SMTP connection, as a busy client would."""
    with stack.smtp(timeout=60) as conn:
        for msg in msgs:
            conn.send_message(msg, from_addr=str(msg["From"]), to_addrs=[REF])


def inbox_count(client: IMAPClient) -> int:
    return int(client.folder_status("INBOX", [b"MESSAGES"])[b"MESSAGES"])


def wait_inbox(stack: MailStack, user: str, count: int, timeout: float = 300) -> float:
    """Wait (STATUS from an unselected connection, every 20 ms) until
    ``user``'s INBOX holds ``count``; returns the monotonic time it did."""
    give_up = time.monotonic() + timeout
    with stack.imap(user) as client:
        while True:
            if inbox_count(client) >= count:
                return time.monotonic()
            if time.monotonic() > give_up:
                raise TimeoutError(f"{user}: fewer than {count} messages after {timeout} s")
            time.sleep(0.02)


def raw_rates(stack: MailStack, n: int) -> tuple[float, float, float]:
    """(delivery msg/s, IMAP fetch msg/s, the servers' CPU seconds per
    delivered message) of the servers alone."""
    stack.clear_all()
    msgs = [mail(stack.address(PLAYERS[i % 6]), f"raw {i}", f"bid {i % 6 + 1}\n")
            for i in range(n)]
    busy, mine = machine_busy(), sum(os.times()[:2])
    start = time.monotonic()
    submit(stack, msgs)
    done = wait_inbox(stack, "referee", n)
    delivery = n / (done - start)
    servers = (machine_busy() - busy) - (sum(os.times()[:2]) - mine)
    with stack.imap("referee") as client:
        client.select_folder("INBOX", readonly=True)
        uids = sorted(client.search(["ALL"]))
        start = time.monotonic()
        for i in range(0, len(uids), 200):
            client.fetch(uids[i:i + 200], ["BODY.PEEK[]"])
        fetch = len(uids) / (time.monotonic() - start)
    stack.clear("referee")
    return delivery, fetch, servers / n
