"""Structure figures: the calls one round-closing bid makes through the code.

Not a timing: it counts. A Goofspiel game of Alice and Bob on the embedded
default (Maildir and SQLite, in a temporary folder); Alice bids, then Bob's
bid, which closes the round, is traced through ``Referee.process`` (from
the raw mail to its answer and the round report in the outbox) with
``sys.setprofile``. It prints:

* module hops: calls from a function of one ``referee`` module into a
  function of another;
* climbs back up: the hops into a module on a higher floor than the
  caller's (a floor is one more than the highest module it imports; a
  climb is a call against the imports, a callback);
* the calls from ``service/outgoing`` into ``service/play``, and the calls
  into ``GameSession`` from other modules;
* with ``--longest``, the ten longest functions of the package (lines).

usage: python bench/hops.py [--longest]
"""

from __future__ import annotations

import ast
import sys
import tempfile
from collections import Counter
from datetime import datetime, timedelta
from email.message import EmailMessage
from functools import cache
from pathlib import Path

from referee.config import config_from_dict
from referee.passes import run_pass
from referee.service import Referee
from referee.store.db import upgrade

PACKAGE = Path(__file__).resolve().parent.parent / "referee"
START = datetime(2026, 1, 5, 9, 0)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Every referee module and the referee modules it imports (anywhere in it)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                if t in modules and t != name:
                    found.add(t)
        graph[name] = found
    return graph


GRAPH = _imports()


@cache
def floor(module: str) -> int:
    return 1 + max((floor(m) for m in GRAPH.get(module, ())), default=0)


def _mail(sender: str, tag: str, body: str, n: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "referee@demo.example"
    msg["Subject"] = f"Re: [{tag}] my bid"
    msg["Message-ID"] = f"<bid{n}@demo.example>"
    msg.set_content(body)
    return msg.as_bytes()


def trace_closing_bid() -> dict[str, int]:
    root = Path(tempfile.mkdtemp(prefix="hops-"))
    config = config_from_dict({
        "referee": {"address": "referee@demo.example", "name": "Demo Referee",
                    "database": f"sqlite:///{root / 'referee.db'}"},
        "mailbox": {"kind": "maildir", "path": str(root / "inbox")},
        "smtp": {"kind": "maildir", "path": str(root / "outbox")},
    }, base_dir=root)
    upgrade(config.database_url)
    referee = Referee(config)
    alice, bob = "Alice <alice@demo.example>", "Bob <bob@demo.example>"
    tag = referee.operator.create_game("goofspiel", [alice, bob], seed="hops", now=START)
    run_pass(referee, START)
    now = START + timedelta(hours=1)
    referee.process(_mail(alice, tag, "bid 13", 1), "alice-1", now)
    closing = _mail(bob, tag, "bid 12", 2)
    referee.process(_mail(bob, tag, "status", 3), "warm-up", now)  # imports made

    hops: Counter[tuple[str, str]] = Counter()

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        caller_frame = frame.f_back
        caller = caller_frame.f_globals.get("__name__", "") if caller_frame else ""
        if callee.startswith("referee") and caller.startswith("referee") and callee != caller:
            hops[(caller, callee)] += 1

    sys.setprofile(profile)
    try:
        referee.process(closing, "bob-1", now)
    finally:
        sys.setprofile(None)
    referee.close()
    climbs = sum(n for (a, b), n in hops.items() if floor(b) > floor(a))
    out_to_play = sum(n for (a, b), n in hops.items()
                      if a.startswith("referee.service.outgoing")
                      and b.startswith("referee.service.play"))
    session = sum(n for (a, b), n in hops.items() if b == "referee.service.play.session")
    return {"module hops": sum(hops.values()), "climbs back up": climbs,
            "calls outgoing -> play": out_to_play, "calls into play/session.py": session}, hops


def longest(n: int = 10) -> list[tuple[int, str]]:
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((lines, f"{path.relative_to(PACKAGE.parent)}:{node.name}"))
    return sorted(found, reverse=True)[:n]


def main() -> None:
    figures, hops = trace_closing_bid()
    for name, value in figures.items():
        print(f"{name:28} {value}")
    if "-v" in sys.argv:
        for (a, b), n in sorted(hops.items(), key=lambda kv: -kv[1]):
            up = " (climb)" if floor(b) > floor(a) else ""
            print(f"  {n:4}  {a} -> {b}{up}")
    if "--longest" in sys.argv:
        print("ten longest functions (lines):")
        for lines, name in longest():
            print(f"  {lines:4}  {name}")


if __name__ == "__main__":
    main()
