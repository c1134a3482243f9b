"""Benchmark: the referee against the raw speed of its mail servers, in one run.

Starts the real Postfix + Dovecot of the test suite (``tests/mailstack.py``,
as root), measures what the servers alone do, then the referee on the same
stack, on SQLite and on PostgreSQL (127.0.0.1:5432, database ``test``,
skipped when none answers):

* raw: SMTP submission to Postfix until every message is in the referee's
  Dovecot INBOX (msg/s), and IMAP ``UID FETCH BODY.PEEK[]`` of them (msg/s);
* one ``referee poll`` (the real CLI, a process of its own) over a backlog of
  moves (a thousand), with each player in many games and with each in one
  game: moves/s of the whole pass (intake, replies and reports sent through
  Postfix), and that over the raw delivery rate; on PostgreSQL also two
  polls at once (``workers = "many"``) over one backlog; every move is
  checked applied once;
* reply latency under ``referee run`` (IMAP IDLE): submit -> the reply in the
  player's INBOX, p50/p95/max;
* ``referee poll`` with no mail and nothing due at 1,000 and 10,000 active
  games (the deadline sweep), and the sweep alone in-process;
* ``referee status --json`` at 10,000 games.

Memory is the peak RSS of each CLI process as the kernel counts it (GNU
``time``, which forks it, else ``wait4``), outside anything timed; nothing
is traced. CPU is counted too: the referee's (``wait4``) and the whole
machine's (``/proc/stat``) while a backlog's pass runs, and the mail
servers' per message in the raw run. From the last, each backlog prints
the most moves a second the servers' own work for the mail the pass sent
would leave room for on this machine's CPUs, with a referee that cost
nothing: the ceiling the ratio is up against on a small machine. Timings
are wall clock on this machine, printed with its CPU count and model.

Usage (as root, from the checkout)::

    .venv/bin/python bench/throughput.py [--games 500] [--samples 20] [--big 10000]
        [--db sqlite,postgresql] [--workers 2] [--only status] [--against REV]
        [--only-backlogs]

``--against REV`` times each backlog with the referee of git revision REV
too (its files from ``git archive`` in a temporary folder, its own schema,
run by this virtualenv), and prints a table side by side: moves/s, that
over raw, the ceiling (the raw delivery rate over the mails a move sends)
and the share of it reached, the referee's CPU (user + system) per move;
``--only-backlogs`` skips everything after the backlogs.

``--only status`` times just ``referee status --json`` at ``--big`` games
(a maildir referee, no mail stack, not as root); ``--only sending`` just
the outbox over Postfix: the openings of ``--games`` games, by the outbox
in-process and by a ``referee poll`` with nothing to read (mails/s).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from imapclient import IMAPClient  # noqa: E402
from sqlalchemy import create_engine, insert, select, text, update  # noqa: E402

from bench.common import (  # noqa: E402
    REF,
    UNLIMITED,
    machine,
    machine_busy,
    mail,
    raw_rates,
    say,
    submit,
    wait_inbox,
    write_config,
)
from referee.config import load_config  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store import models as m  # noqa: E402
from referee.store.db import upgrade  # noqa: E402
from tests.mailstack import PLAYERS, MailStack, _short_tmpdir  # noqa: E402

T0 = datetime(2026, 3, 2, 12, 0)
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PAIRS = [(a, b) for i, a in enumerate(PLAYERS) for b in PLAYERS[i + 1:]]  # 15 pairs


# -- the databases ----------------------------------------------------------------

@contextlib.contextmanager
def database(kind: str, folder: Path) -> Iterator[str | None]:
    """A fresh database of ``kind``; None when PostgreSQL does not answer."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'referee.db'}"
        return
    try:
        admin = create_engine(PG_ADMIN, connect_args={"connect_timeout": 3})
        with admin.connect() as conn:
            conn.execute(text("select 1"))
    except Exception as e:
        say(f"  (no PostgreSQL on 127.0.0.1:5432: {type(e).__name__}; skipped)")
        yield None
        return
    name = f"bench_{uuid.uuid4().hex[:10]}"
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f'create database "{name}"'))
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'drop database "{name}" with (force)'))
        admin.dispose()


# -- the referee --------------------------------------------------------------------

@dataclass
class Run:
    seconds: float
    rss_mb: float
    code: int
    output: str
    #: CPU seconds (user + system) of the command's process(es).
    cpu: float = 0.0
    #: CPU seconds of the whole machine while it ran (every process: the
    #: mail servers' share is this less ``cpu``).
    machine_cpu: float = 0.0


def in_checkout(checkout: Path) -> dict[str, str]:
    """The environment of a process that runs the referee of ``checkout``."""
    return {**os.environ, "PYTHONPATH": str(checkout)}


def cli(config: Path, *args: str, checkout: Path = ROOT) -> Run:
    """One ``referee`` command (of ``checkout``) in a process of its own:
    wall time, peak RSS and CPU."""
    cmd = [sys.executable, "-m", "referee.cli", "--config", str(config), *args]
    # The kernel's peak RSS of a child forked from this (large) process
    # counts this process's memory at the fork; GNU time, small, forks it.
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        if gnu_time.exists():
            cmd = [str(gnu_time), "-f", "%M", "-o", rss.name, *cmd]
        busy = machine_busy()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=checkout, env=in_checkout(checkout),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        out = proc.stdout.read()
        # Linux counts in a child's usage that of the children it waited
        # for: GNU time's is the referee's (and its forked senders').
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - start
        busy = machine_busy() - busy
        proc.returncode = os.waitstatus_to_exitcode(status)
        kb = int(rss.read().split()[-1]) if gnu_time.exists() else usage.ru_maxrss
    return Run(seconds, kb / 1024, proc.returncode, out.decode(errors="replace"),
               usage.ru_utime + usage.ru_stime, busy)


def cli_together(config: Path, count: int, *args: str) -> Run:
    """``count`` of the same ``referee`` command at once, each a process of
    its own: the wall time until the last ends, the largest peak RSS."""
    runs: list[Run] = []
    with ThreadPoolExecutor(count) as pool:
        busy = machine_busy()
        start = time.monotonic()
        runs = list(pool.map(lambda _: cli(config, *args), range(count)))
        seconds = time.monotonic() - start
        busy = machine_busy() - busy
    return Run(seconds, max(r.rss_mb for r in runs), max(r.code for r in runs),
               "\n".join(r.output for r in runs), sum(r.cpu for r in runs), busy)


def games_for(stack: MailStack, scenario: str, games: int) -> list[tuple[str, str]]:
    """The two players of each game: ``many`` seats six people in every
    pairing (each in games/3 games); ``one`` gives each seat a person of its
    own (plus addresses: one game each)."""
    if scenario == "many":
        return [(stack.address(a), stack.address(b))
                for a, b in (PAIRS[i % len(PAIRS)] for i in range(games))]
    return [(stack.address(a, f"g{i}"), stack.address(b, f"g{i}"))
            for i, (a, b) in enumerate(PAIRS[i % len(PAIRS)] for i in range(games))]


def backlog(stack: MailStack, config: Path, scenario: str, games: int,
            workers: int = 1, checkout: Path = ROOT) -> tuple[Run, int, int]:
    """Create the games, send their openings, then queue one round of bids
    and time one ``referee poll`` over them (``workers`` of them at once, on
    PostgreSQL). Returns the run, the moves, each checked applied once, and
    the mails the pass sent."""
    cfg = load_config(config)
    seats = games_for(stack, scenario, games)
    tags = setup_games(config, seats, scenario, checkout)
    stack.clear_all()
    queued = count_rows(cfg.database_url, "outbox", "sent_at is not null")
    moves = [mail(pair[k], f"[{tag}] round 1", f"bid {1 if k == 0 else 6}\n")
             for tag, pair in zip(tags, seats, strict=True) for k in (0, 1)]
    submit(stack, moves)
    wait_inbox(stack, "referee", len(moves))
    when = (T0 + timedelta(hours=1)).isoformat()
    run = (cli(config, "poll", "--now", when, checkout=checkout) if workers == 1
           else cli_together(config, workers, "poll", "--now", when))
    assert run.code == 0, run.output
    applied = count_rows(cfg.database_url, "actions")
    assert applied == len(moves), f"{applied} moves applied of {len(moves)}:\n{run.output}"
    sent = count_rows(cfg.database_url, "outbox", "sent_at is not null") - queued
    stack.clear_all()
    return run, len(moves), sent


#: Run by the Python of a checkout (its referee on PYTHONPATH): its schema,
#: then the games of argv's JSON, their openings sent; prints their tags.
SETUP = """
import json, sys
from datetime import datetime
from referee.config import load_config
from referee.service import Referee
from referee.store.db import upgrade
config, seats, scenario, t0 = json.loads(sys.argv[1])
cfg = load_config(config)
upgrade(cfg.database_url)
ref = Referee(cfg)
try:
    t0 = datetime.fromisoformat(t0)
    tags = [ref.operator.create_game("goofspiel", list(pair),
                                     options={"prize_order": "ascending"}, now=t0,
                                     seed=f"{scenario}-{i}") for i, pair in enumerate(seats)]
    ref.send_outbox(t0)
finally:
    ref.close()
print(json.dumps(tags))
"""


def setup_games(config: Path, seats: list[tuple[str, str]], scenario: str,
                checkout: Path) -> list[str]:
    """The schema and games of a backlog, made by the referee of ``checkout``
    (whose schema may be older), their openings sent; their tags."""
    out = subprocess.run([sys.executable, "-c", SETUP,
                          json.dumps([str(config), seats, scenario, T0.isoformat()])],
                         cwd=checkout, env=in_checkout(checkout), capture_output=True,
                         text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"setting up the games in {checkout} failed:\n{out.stderr[-3000:]}")
    tags: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return tags


@contextlib.contextmanager
def older(rev: str) -> Iterator[tuple[str, Path]]:
    """The files of ``rev`` (``git archive``: the repository's worktrees and
    refs untouched) in a temporary folder, run by this Python (the same
    virtualenv) with it on PYTHONPATH; removed after."""
    folder = Path(tempfile.mkdtemp(prefix="bench-against-"))
    try:
        short = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev],
                               check=True, capture_output=True, text=True).stdout.strip()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        yield short, folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def latency(stack: MailStack, config: Path, samples: int) -> list[float]:
    """Submit -> reply in the player's INBOX under ``referee run``, one at a time."""
    cfg = load_config(config)
    ref = Referee(cfg)
    try:
        a, b = stack.address("alice", "lat"), stack.address("bob", "lat")
        create = ref.operator.create_game
        tags = [create("goofspiel", [a, b], options={"cards": "13"}, seed=f"lat-{i}")
                for i in range((samples + 12) // 13)]
        ref.send_outbox()
    finally:
        ref.close()
    stack.clear_all()
    log = config.parent / "run.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "--config", str(config),
                                 "run"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    times: list[float] = []
    try:
        with stack.imap("alice") as client:
            client.select_folder("INBOX")
            seen = set(client.search(["ALL"]))
            # The first mail is read by the daemon's first pass; then it waits in IDLE.
            for i in range(samples + 1):
                tag = tags[i // 13] if i else tags[0]
                msg = mail(a, f"[{tag}]", f"bid {i % 13 + 1}\n" if i else "help\n")
                mid = str(msg["Message-ID"])
                start = time.monotonic()
                submit(stack, [msg])
                give_up = start + 30
                while not replied(client, seen, mid):
                    if time.monotonic() > give_up:
                        raise TimeoutError(f"no reply within 30 s:\n{log.read_text()[-2000:]}")
                    time.sleep(0.005)
                if i:
                    times.append(time.monotonic() - start)
                time.sleep(0.3)  # let the daemon settle back into IDLE
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    stack.clear_all()
    return times


def replied(client: IMAPClient, seen: set[int], mid: str) -> bool:
    """Whether a new message in the selected INBOX answers ``mid`` (NOOP, then
    the In-Reply-To of what is new)."""
    client.noop()
    new = [u for u in client.search(["ALL"]) if u not in seen]
    if not new:
        return False
    seen.update(new)
    heads = client.fetch(new, ["BODY.PEEK[HEADER.FIELDS (IN-REPLY-TO)]"])
    return any(mid.encode() in next(iter(v for k, v in h.items() if k.startswith(b"BODY")))
               for h in heads.values())


def clone_games(url: str, count: int) -> None:
    """``count`` more active goofspiel games like the newest one, with their
    deadlines three days off: inserted in bulk, nothing due."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            game = conn.execute(select(m.Game.__table__).order_by(m.Game.id.desc())
                                .limit(1)).mappings().one()
            seats = conn.execute(select(m.Seat.__table__).where(m.Seat.game_id == game["id"])
                                 ).mappings().all()
            lines = conn.execute(select(m.Deadline.__table__)
                                 .where(m.Deadline.game_id == game["id"])).mappings().all()
            start = int(conn.execute(select(text("max(id)")).select_from(m.Game.__table__)
                                     ).scalar_one()) + 1
            for first in range(0, count, 2000):
                ids = range(start + first, start + min(first + 2000, count))
                conn.execute(insert(m.table_of(m.Game)), [
                    {**{k: v for k, v in game.items()}, "id": i, "tag": f"sweep-{i}",
                     "seed": f"sweep-{i}"} for i in ids])
                # A seat's token is UNIQUE (its private address): each clone
                # gets one of its own.
                conn.execute(insert(m.table_of(m.Seat)), [
                    {**{k: v for k, v in s.items() if k != "id"}, "game_id": i,
                     "token": uuid.uuid4().hex if s.get("token") else s.get("token")}
                    for i in ids for s in seats])
                conn.execute(insert(m.table_of(m.Deadline)), [
                    {**{k: v for k, v in d.items() if k != "id"}, "game_id": i}
                    for i in ids for d in lines])
            if engine.dialect.name == "postgresql":
                for table in ("games", "seats", "deadlines"):
                    conn.execute(text(f"select setval(pg_get_serial_sequence('{table}', 'id'), "
                                      f"(select max(id) from {table}))"))
            conn.execute(update(m.table_of(m.Outbox)).where(m.Outbox.sent_at.is_(None))
                         .values(sent_at=T0))
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("analyze"))
    finally:
        engine.dispose()


def count_rows(url: str, table: str, where: str = "true") -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(f"select count(*) from {table} where {where}")
                                    ).scalar_one())
    finally:
        engine.dispose()


def active_games(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("select count(*) from games where status = 'active'")
                                    ).scalar_one())
    finally:
        engine.dispose()


def sweep(config: Path, sizes: list[int]) -> list[tuple[int, Run, float]]:
    """For each size: ``referee poll`` with no mail and nothing due (the CLI),
    and the deadline sweep alone in this process."""
    cfg = load_config(config)
    url = cfg.database_url
    out = []
    now = T0 + timedelta(hours=1)
    for size in sizes:
        have = active_games(url)
        if size > have:
            clone_games(url, size - have)
        cli(config, "poll", "--now", now.isoformat())  # warm the caches once
        run = cli(config, "poll", "--now", now.isoformat())
        assert run.code == 0, run.output
        ref = Referee(cfg)
        try:
            start = time.monotonic()
            fired = ref.sweep.fire(now)
            alone = time.monotonic() - start
            assert fired == 0
        finally:
            ref.close()
        out.append((size, run, alone))
    return out


def pages(config: Path, folder: Path, games: int) -> tuple[Run, Run]:
    """Two ``referee poll`` with no mail and nothing due, with ``[web] path``
    set: the first writes every game's page, the next only those behind."""
    with config.open("a", encoding="utf-8") as f:
        f.write(f'\n[web]\npath = "{folder}"\n')
    now = (T0 + timedelta(hours=1)).isoformat()
    runs = [cli(config, "poll", "--now", now) for _ in range(2)]
    for run in runs:
        assert run.code == 0, run.output[-2000:]
    assert len(list(folder.glob("*.html"))) == games + 1  # and the index
    return runs[0], runs[1]


def cpu_split(run: Run, moves: int, mails: int, per_message: float, raw: float) -> list[str]:
    """Where a backlog's CPU went: the referee's per move and the rest of
    the machine's (the mail servers taking the replies) in the same time;
    and the most moves a second the mail servers' own work would allow: the
    pass's mails, each at the raw run's CPU for one delivered message, on
    all of the machine's CPUs, with a referee that cost nothing."""
    others = max(run.machine_cpu - run.cpu, 0.0)
    cpus = os.cpu_count() or 1
    lines = [f"CPU: the referee {1000 * run.cpu / moves:.1f} ms a move ({run.cpu:.1f} s); "
             f"the mail servers and the rest of the machine {others:.1f} s; "
             f"{run.machine_cpu / run.seconds:.2f} of {cpus} CPUs busy"]
    if mails and per_message > 0:
        most = cpus / (mails / moves * per_message)
        lines.append(f"the mail servers' share alone: {mails} mails sent "
                     f"({mails / moves:.1f} a move) at {1000 * per_message:.1f} ms each "
                     f"leave room for at most {most:.0f} moves/s = {most / raw:.2f} of raw, "
                     f"with a referee that cost nothing")
    return lines


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@dataclass
class Backlog:
    """One backlog's pass by the referee of one checkout."""

    referee: str
    scenario: str
    run: Run
    moves: int
    mails: int


def backlog_table(rows: list[Backlog], raw: float) -> list[str]:
    """The backlogs side by side: moves/s and that over the raw delivery
    rate; the ceiling (the raw delivery rate over the mails a move sends:
    the rate of a referee that cost nothing) and the share of it reached;
    the referee's CPU (user + system of its process) per move."""
    head = (f"{'referee':<10} {'players':<8} {'moves':>6} {'moves/s':>8} {'of raw':>7} "
            f"{'mails/move':>10} {'ceiling':>8} {'of ceiling':>10} {'CPU/move':>9} {'RSS':>7}")
    lines = [head]
    for r in rows:
        rate = r.moves / r.run.seconds
        per_move = r.mails / r.moves if r.moves else 0.0
        ceiling = raw / per_move if per_move else float("inf")
        lines.append(f"{r.referee:<10} {r.scenario:<8} {r.moves:>6} {rate:>8.1f} "
                     f"{rate / raw:>7.2f} {per_move:>10.2f} {ceiling:>8.1f} "
                     f"{rate / ceiling:>10.2f} {1000 * r.run.cpu / r.moves:>6.1f} ms "
                     f"{r.run.rss_mb:>4.0f} MB")
    now = {r.scenario: r for r in rows if r.referee == "now"}
    for r in rows:
        if r.referee != "now" and r.scenario in now:
            ours, theirs = now[r.scenario], r
            ratio = (ours.run.cpu / ours.moves) / (theirs.run.cpu / theirs.moves)
            lines.append(f"CPU per move now / at {r.referee}, players in {r.scenario}: "
                         f"{ratio:.2f}")
    return lines


def bench_database(stack: MailStack, kind: str, args: argparse.Namespace,
                   raw: float, per_message: float,
                   against: tuple[str, Path] | None = None) -> dict[str, Any]:
    say(f"\n== {kind} ==")
    result: dict[str, Any] = {}
    rows: list[Backlog] = []
    checkouts = [("now", ROOT), *([against] if against else [])]
    for scenario, label in (("many", f"players in {args.games // 3} games each"),
                            ("one", "players in one game each")):
        for name, checkout in checkouts:
            folder = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
            try:
                with database(kind, folder) as url:
                    if url is None:
                        return result
                    config = write_config(folder, stack, url)
                    if checkout != ROOT:
                        # An older referee may read [smtp] timeout only as a
                        # bare number of seconds (units came 2026-11-29).
                        config.write_text(config.read_text(encoding="utf-8").replace(
                            'timeout = "30s"', "timeout = 30"), encoding="utf-8")
                    run, moves, mails = backlog(stack, config, scenario, args.games,
                                                checkout=checkout)
                    rate = moves / run.seconds
                    if name == "now":
                        result[scenario] = rate / raw
                    rows.append(Backlog(name, scenario, run, moves, mails))
                    say(f"[{name}] poll over a backlog, {label}: {moves} moves in "
                        f"{run.seconds:.2f} s = {rate:.1f} moves/s = {rate / raw:.2f} of raw; "
                        f"peak RSS {run.rss_mb:.0f} MB")
                    for line in cpu_split(run, moves, mails, per_message, raw):
                        say(f"  {line}")
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    say(f"\nbacklogs on {kind} (raw delivery {raw:.1f} msg/s):")
    for line in backlog_table(rows, raw):
        say(f"  {line}")
    say()
    if args.only_backlogs:
        return result
    # A database of its own, without the backlogs' games (dated in March,
    # their deadlines long past under the daemon's real clock).
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
    try:
        with database(kind, folder) as url:
            assert url is not None
            config = write_config(folder, stack, url)
            upgrade(url)
            times = latency(stack, config, args.samples)
            say(f"reply latency under `referee run` (IDLE), {len(times)} moves: "
                f"p50 {1000 * percentile(times, 50):.0f} ms, "
                f"p95 {1000 * percentile(times, 95):.0f} ms, "
                f"max {1000 * max(times):.0f} ms")
            sizes = sorted({s for s in (1000, args.big) if s <= args.big})
            for size, poll, alone in sweep(config, sizes):
                say(f"poll, no mail, nothing due, {size} games: {poll.seconds:.2f} s "
                    f"(the sweep alone {alone:.2f} s); peak RSS {poll.rss_mb:.0f} MB")
            status = cli(config, "status", "--json")
            assert status.code == 0, status.output[-2000:]
            games = len(json.loads(status.output))
            say(f"status --json, {games} games: {status.seconds:.2f} s; "
                f"peak RSS {status.rss_mb:.0f} MB")
            first, again = pages(config, folder / "pages", games)
            say(f"poll with [web] path set, nothing due, {games} games: the first writes every "
                f"page in {first.seconds:.2f} s; the next, with no page behind, "
                f"{again.seconds:.2f} s; peak RSS {max(first.rss_mb, again.rss_mb):.0f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if kind == "postgresql" and args.workers > 1:
        folder = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
        try:
            with database(kind, folder) as url:
                assert url is not None
                config = write_config(folder, stack, url, 'workers = "many"')
                upgrade(url)
                run, moves, mails = backlog(stack, config, "one", args.games, args.workers)
                rate = moves / run.seconds
                result["workers"] = rate / raw
                say(f"{args.workers} `referee poll` at once ([referee] workers = \"many\"), "
                    f"players in one game each: {moves} moves, each applied once, in "
                    f"{run.seconds:.2f} s = {rate:.1f} moves/s = {rate / raw:.2f} of raw; "
                    f"peak RSS {run.rss_mb:.0f} MB")
                for line in cpu_split(run, moves, mails, per_message, raw):
                    say(f"  {line}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return result


def status_only(kind: str, size: int) -> None:
    """``referee status --json`` at ``size`` games, nothing else."""
    say(f"\n== {kind} ==")
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
    try:
        with database(kind, folder) as url:
            if url is None:
                return
            config = folder / "referee.toml"
            config.write_text(f'[referee]\naddress = "{REF}"\ndatabase = "{url}"\n',
                              encoding="utf-8")
            upgrade(url)
            ref = Referee(load_config(config))
            try:
                tag = ref.operator.create_game("goofspiel", [PLAYERS[0] + "@example.test",
                                              PLAYERS[1] + "@example.test"],
                                options={"prize_order": "ascending"}, now=T0, seed="status")
            finally:
                ref.close()
            clone_games(url, size - 1)
            for args in (("status", "--json"), ("status",), ("status", tag)):
                run = cli(config, *args)
                assert run.code == 0, run.output[-2000:]
                say(f"{' '.join(args)}, {active_games(url)} games: {run.seconds:.2f} s; "
                    f"peak RSS {run.rss_mb:.0f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sending(stack: MailStack, kind: str, games: int, connections: int = 4) -> None:
    """The outbox alone over the real Postfix: the openings of ``games``
    games (two mails each, one per player), sent by the outbox in-process
    (``send_outbox``), and as many again by a ``referee poll`` with no mail
    to read (its stream, then the outbox); mails/s of each, every mail
    checked sent once."""
    say(f"\n== {kind}: sending over {connections} SMTP connections ==")
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
    try:
        with database(kind, folder) as url:
            if url is None:
                return
            config = write_config(folder, stack, url,
                                  limits=f"connections = {connections}\n{UNLIMITED}")
            upgrade(url)
            cfg = load_config(config)
            for how in ("send_outbox in-process", "referee poll"):
                ref = Referee(cfg)
                try:
                    seats = games_for(stack, "one", games)
                    for i, pair in enumerate(seats):
                        ref.operator.create_game("goofspiel", list(pair), now=T0,
                                                 seed=f"{how}-{i}")
                    queued = count_rows(url, "outbox", "sent_at is null")
                    start = time.monotonic()
                    if how == "referee poll":
                        run = cli(config, "poll", "--now", T0.isoformat())
                        assert run.code == 0, run.output
                    else:
                        ref.send_outbox(T0)
                    seconds = time.monotonic() - start
                finally:
                    ref.close()
                assert count_rows(url, "outbox", "sent_at is null") == 0
                say(f"{how}: {queued} mails in {seconds:.2f} s = {queued / seconds:.1f} mails/s")
                stack.clear_all()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=500,
                   help="games of each backlog, two moves each (500)")
    p.add_argument("--workers", type=int, default=2,
                   help="polls at once over one backlog on PostgreSQL (2; 1: none)")
    p.add_argument("--raw", type=int, default=600, help="messages of the raw run (600)")
    p.add_argument("--samples", type=int, default=20, help="latency samples (20)")
    p.add_argument("--big", type=int, default=10000, help="games of the big sweep (10000)")
    p.add_argument("--db", default="sqlite,postgresql")
    p.add_argument("--only", choices=["status", "sending"], help="run just this step")
    p.add_argument("--connections", type=int, default=4,
                   help="[smtp] connections of --only sending (4)")
    p.add_argument("--against", metavar="REV",
                   help="also time the backlogs with the referee of git revision REV "
                        "(its files in a temporary folder, this virtualenv), side by side")
    p.add_argument("--only-backlogs", action="store_true",
                   help="skip latency, sweeps, status and pages")
    args = p.parse_args()
    say(f"machine: {machine()}")
    if args.only == "status":
        for kind in args.db.split(","):
            status_only(kind, args.big)
        return
    path = _short_tmpdir()
    stack = MailStack.start(path)
    try:
        say(f"mail stack: Postfix + Dovecot on 127.0.0.1 in {path}")
        if args.only == "sending":
            for kind in args.db.split(","):
                sending(stack, kind, args.games, args.connections)
            return
        delivery, fetch, per_message = raw_rates(stack, args.raw)
        say(f"raw: Postfix -> Dovecot delivery {delivery:.1f} msg/s "
            f"({args.raw} messages, one SMTP connection); IMAP fetch {fetch:.0f} msg/s")
        say(f"  the mail servers' CPU per message delivered: {1000 * per_message:.1f} ms")
        with contextlib.ExitStack() as stay:
            against = stay.enter_context(older(args.against)) if args.against else None
            for kind in args.db.split(","):
                bench_database(stack, kind, args, delivery, per_message, against)
    finally:
        stack.stop()
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
