"""``referee demo``: a whole game played by mail through the real pipeline.

Everything runs in a working folder: the referee reads a Maildir inbox and
sends into a Maildir outbox, on SQLite. Demo players read the mail addressed
to them, and answer with real RFC 5322 replies (threaded, secret bids to the
referee alone) written into the referee's inbox. One player makes a mistake
once, and one stays silent once so that the deadline passes; time is injected,
so nothing waits. The output is the game as the players saw it.
"""

from __future__ import annotations

import json
import mailbox
import random
import shutil
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from referee.config import config_from_dict
from referee.games import get_game
from referee.games.draws import SequentialDraws
from referee.passes import run_pass
from referee.service import Referee, RefereeError
from referee.store.db import upgrade

#: The game a demo plays when none is named.
DEMO_KIND = "goofspiel"
NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
DOMAIN = "demo.example"
START = datetime(2026, 1, 5, 9, 0)


def _print_mail(msg: EmailMessage, reader: str) -> None:
    print(f"=== {reader} receives ".ljust(78, "="))
    print(f"From: {msg['From']}\nTo: {msg['To']}\nSubject: {msg['Subject']}\n")
    body = msg.get_body(("plain",))
    print(body.get_content().rstrip() if body else "")
    print()


#: In a demo with bots only, the list's posts with these are printed whole;
#: others are counted.
REPORTS = ("opening", "round_report", "final_report")
#: Bots in a demo of a game that takes any number of members.
DEMO_BOTS = 4


def run_demo(kind: str, folder: str, seed: str) -> int:
    try:
        game = get_game(kind)
    except KeyError as e:
        raise RefereeError(f"demo: {e.args[0]}") from None
    if game.demo_with_bots:
        return _bots_demo(kind, folder, seed)
    root, referee = _setup(folder)
    rng = random.Random(seed)
    count = game.seat_count(game.parse_options({}))[0]
    players = [f"{n} <{n.lower()}@{DOMAIN}>" for n in NAMES[:count]]
    now = START
    tag = referee.operator.create_game(kind, players, seed=seed, now=now)
    print(f"Started {tag}: {game.title} with {', '.join(NAMES[:count])}.")
    print(f"Working folder: {root} (Maildir in/out, SQLite)\n")
    outbox = mailbox.Maildir(root / "outbox", create=True)
    inbox = root / "inbox"
    seen: set[str] = set()
    mistake_made = silent_once = waiting_out = False
    for _ in range(2000):
        run_pass(referee, now)
        # Everyone reads their new mail (a public mail is printed once).
        fresh = []
        for key in outbox.iterkeys():
            if key not in seen:
                seen.add(key)
                msg = message_from_bytes(outbox.get_bytes(key), policy=default)
                assert isinstance(msg, EmailMessage)
                fresh.append(msg)
        # The outbox row id is in the Message-ID: <pbm.ID.tag@domain>.
        for msg in sorted(fresh, key=lambda x: int(str(x["Message-ID"]).split(".")[1])):
            to = msg["To"]
            reader = "Everyone" if "," in str(to) else str(to).split("<")[0].strip()
            _print_mail(msg, reader)
        status = referee.reading.status(tag)[0]
        if status["status"] != "active":
            break
        if waiting_out:
            waiting_out = False
            now += timedelta(days=1)
            print("*** Another day passes, and the deadline with it. ***\n")
            continue
        owed = {d["seat"] for d in status["deadlines"]}
        state = _state(referee, tag)
        movers = sorted(owed)
        if not movers:
            break
        if not silent_once and state.get("round") == 2 and len(movers) > 1:
            # The last player to move stays silent: the deadline passes.
            silent_once = True
            quiet = movers[-1]
            for seat in movers[:-1]:
                _send_move(root, referee, tag, seat, state, rng, inbox, now)
            now += timedelta(days=2, hours=1)
            waiting_out = True
            print(f"*** {NAMES[quiet - 1]} sends nothing; two days pass. ***\n")
            continue
        for seat in movers:
            if not mistake_made:
                mistake_made = True
                _send_text(root, tag, seat, _mistake(state, seat), inbox)
            _send_move(root, referee, tag, seat, state, rng, inbox, now)
        now += timedelta(hours=5)
    final = referee.reading.status(tag)[0]
    print("=" * 78)
    print(f"Final result of {tag}: {final.get('result')}")
    for name, score in final.get("scores", {}).items():
        print(f"  {name:<10} {score}")
    referee.close()
    _where(root)
    return 0


#: Marks a folder as a demo's, so a later demo may empty it.
MARKER = ".referee-demo"
#: The demo's config, in its folder, for the commands run on it afterwards.
CONFIG = "referee.toml"


def prepare_folder(folder: str) -> Path:
    """The demo's working folder, empty: made if missing, emptied if an
    earlier demo made it. Any other folder with something in it (the
    operator's own referee.toml and database, say) is refused, never emptied."""
    root = Path(folder).resolve()
    if root.exists() and not root.is_dir():
        raise RefereeError(f"--dir {folder}: is a file, not a folder")
    if root.is_dir() and any(root.iterdir()):
        if not (root / MARKER).is_file():
            raise RefereeError(f"--dir {folder}: the folder has files the demo did not make; "
                               "name a new or empty folder")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("made by `referee demo`; a new demo empties this folder\n",
                               encoding="utf-8")
    return root


def _setup(folder: str, **referee_keys: str) -> tuple[Path, Referee]:
    """A fresh working folder with a referee on Maildir and SQLite, writing
    its game pages into ``pages/``, and its config in ``referee.toml``, so
    that ``referee --config DIR/referee.toml pages`` (or ``status``) works
    on it afterwards."""
    root = prepare_folder(folder)
    data: dict[str, dict[str, str]] = {
        "referee": {"address": f"referee@{DOMAIN}", "name": "Demo Referee",
                    "database": f"sqlite:///{root / 'referee.db'}", **referee_keys},
        "mailbox": {"kind": "maildir", "path": str(root / "inbox")},
        "smtp": {"kind": "maildir", "path": str(root / "outbox")},
        "web": {"path": str(root / "pages")},
    }
    (root / CONFIG).write_text("".join(
        f"[{section}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
        for section, keys in data.items()), encoding="utf-8")
    config = config_from_dict(data, base_dir=root)
    upgrade(config.database_url)
    return root, Referee(config)


def _where(root: Path, players: bool = True) -> None:
    """The demo's last lines: where its mail is, and how to see its pages."""
    print(f"\nIts mail: {root / 'outbox'}, a Maildir, one file a mail (read it with "
          f"`mutt -f {root / 'outbox'}`)"
          + (f"; what the players wrote: {root / 'inbox'}." if players else "."))
    print(f"Its pages: {root / 'pages' / 'index.html'} (open it in a browser); to write "
          f"them again: referee --config {root / CONFIG} pages")


def _bots_demo(kind: str, folder: str, seed: str) -> int:
    """Bots in every seat play the whole game; the public list gets every
    move, and the opening and the reports are printed whole. Bots on a
    timetable of their own (a tournament's members) act as the simulated
    days pass, one pass a day."""
    game = get_game(kind)
    root, referee = _setup(folder, public_list=f"table@{DOMAIN}")
    seats = game.seat_count(game.parse_options({}))[0] or DEMO_BOTS
    tag = referee.operator.create_game(kind, [], bots=seats, seed=seed, now=START)
    now = START
    run_pass(referee, now)
    status = referee.reading.status
    while status(tag)[0]["status"] == "active" and now < START + timedelta(days=400):
        now += timedelta(days=1)
        run_pass(referee, now)
    print(f"Started {tag}: {game.title} with {seats} bots. The bots get no mail; the "
          f"list table@{DOMAIN} gets the reports,\nprinted here as its readers get them.\n"
          f"Working folder: {root} (Maildir in/out, SQLite)\n")
    outbox = mailbox.Maildir(root / "outbox", create=True)
    mails = []
    for key in outbox.iterkeys():
        msg = message_from_bytes(outbox.get_bytes(key), policy=default)
        assert isinstance(msg, EmailMessage)
        mails.append(msg)
    mails.sort(key=lambda x: int(str(x["Message-ID"]).split(".")[1]))
    for msg in mails:
        # A post of several reports is marked with each ("table opening round_report").
        if set(str(msg["X-Referee-Mail"]).split()) & set(REPORTS):
            _print_mail(msg, "The list")
    final = referee.reading.status(tag)[0]
    print("=" * 78)
    print(f"{len(mails)} mail{'s' if len(mails) != 1 else ''} went to the list in all", end="")
    if now > START:
        by_kind: dict[str, int] = {}
        for msg in mails:
            by_kind[str(msg["X-Referee-Mail"])] = by_kind.get(str(msg["X-Referee-Mail"]), 0) + 1
        print(f", over {(now - START).days} simulated days: " + ", ".join(
            f"{n} {k}" for k, n in sorted(by_kind.items(), key=lambda kv: -kv[1])), end="")
    print(".")
    print(f"Final result of {tag}: {final.get('result')}")
    for name, score in final.get("scores", {}).items():
        print(f"  {name:<10} {score}")
    referee.close()
    _where(root, players=False)
    return 0


def _state(referee: Referee, tag: str) -> dict[str, Any]:
    return dict(referee.reading.stored_state(tag))


def _mistake(state: dict[str, Any], seat: int) -> str:
    """Lines a careless player might write: a bid no game has, and in the
    bidding games a card this seat does not hold."""
    if "packs" not in state:
        return "bid 99"
    held = state["packs"][seat - 1]
    gone = [v for v in range(1, 15) if v not in held]
    return f"bid 99\nbid {gone[0]}"


def _send_move(root: Path, referee: Referee, tag: str, seat: int, state: dict[str, Any],
               rng: random.Random, inbox: Path, now: datetime) -> None:
    game = get_game(_kind(tag))
    action = game.bot_action(game.load(state), seat, SequentialDraws(rng))
    text = " ".join([action.verb, *(str(a) for a in action.args)])
    _send_text(root, tag, seat, f"Hi referee,\n\n{text}\n\nThanks!\n-- \n{NAMES[seat - 1]}",
               inbox)


def _kind(tag: str) -> str:
    return tag.rpartition("-")[0]


def _send_text(root: Path, tag: str, seat: int, body: str, inbox: Path) -> None:
    name = NAMES[seat - 1]
    commands = [ln for ln in body.splitlines() if ln and ln[0].islower()]
    print(f">>> {name} writes to the referee alone: {' / '.join(commands)}\n")
    msg = EmailMessage()
    msg["From"] = f"{name} <{name.lower()}@{DOMAIN}>"
    msg["To"] = f"referee@{DOMAIN}"
    msg["Subject"] = f"Re: [{tag}] my move"
    msg["Message-ID"] = make_msgid(domain=DOMAIN)
    msg.set_content(body)
    mailbox.Maildir(inbox, create=True).add(mailbox.MaildirMessage(msg.as_bytes()))
