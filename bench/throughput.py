"""Benchmark: how fast the referee turns inbound mail into replies.

Runs the whole pipeline on the embedded default (Maildir in and out, SQLite
in a temporary folder): N goofspiel games, every player bidding by mail each
round. Prints messages per second, the mean and worst time per message, and
the peak memory. Usage: python bench/throughput.py [GAMES]
"""

from __future__ import annotations

import mailbox
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from referee.config import config_from_dict
from referee.passes import run_pass
from referee.service import Referee
from referee.store.db import upgrade

T0 = datetime(2026, 1, 1)


def main(games: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="referee-bench-"))
    config = config_from_dict({
        "referee": {"address": "referee@bench.test", "database": f"sqlite:///{root}/r.db"},
        "mailbox": {"kind": "maildir", "path": str(root / "in")},
        "smtp": {"kind": "maildir", "path": str(root / "out")},
    }, base_dir=root)
    upgrade(config.database_url)
    ref = Referee(config)
    tags = [ref.create_game("goofspiel", [f"a{i}@bench.test", f"b{i}@bench.test"],
                            options={"prize_order": "ascending"}, now=T0, seed=str(i))
            for i in range(games)]
    inbox = mailbox.Maildir(root / "in", create=True)
    tracemalloc.start()
    count, worst, start = 0, 0.0, time.perf_counter()
    for rnd in range(1, 6):
        for i, tag in enumerate(tags):
            for who, card in ((f"a{i}", rnd), (f"b{i}", 7 - rnd)):
                msg = EmailMessage()
                msg["From"] = f"{who}@bench.test"
                msg["To"] = "referee@bench.test"
                msg["Subject"] = f"[{tag}] round {rnd}"
                msg["Message-ID"] = make_msgid(domain="bench.test")
                msg.set_content(f"bid {card}\n")
                key = inbox.add(msg.as_bytes())
                t = time.perf_counter()
                ref.process(inbox.get_bytes(key), f"maildir:{key}", now=T0 + timedelta(hours=rnd))
                worst = max(worst, time.perf_counter() - t)
                inbox.discard(key)
                count += 1
    elapsed = time.perf_counter() - start
    t = time.perf_counter()
    report = run_pass(ref, T0 + timedelta(hours=6))
    send = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    print(f"games: {games}, inbound messages: {count}")
    print(f"processing: {count / elapsed:.1f} msg/s, mean {1000 * elapsed / count:.1f} ms, "
          f"worst {1000 * worst:.1f} ms")
    print(f"outbox: {report.sent} mails written in {send:.2f} s "
          f"({report.sent / send:.0f} mails/s)")
    print(f"peak traced memory: {peak / 1e6:.1f} MB")
    ref.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
