"""A season of the club's standings, played quickly by mail on Maildir
(issue 40): a dozen games of mixed kinds, where some players resign by
mail at once (a bot plays out their seat, which still counts as theirs),
the rest stay silent and the referee moves for them at each deadline; one
game started with rated=no and one cancelled, which do not count; Frank
writes "standings hide". Then Alice asks "standings" by mail, and the
operator's table is printed as stored and after ``--rebuild``; the pages
(the index with the standings) are written in FOLDER/pages.

    PYTHONPATH=. python scripts/standings_season.py [FOLDER]
"""

from __future__ import annotations

import contextlib
import io
import mailbox
import shutil
import sys
import tempfile
from datetime import datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from email.utils import make_msgid
from pathlib import Path

from referee.cli import main
from referee.config import load_config
from referee.passes import run_pass
from referee.service import Referee
from referee.store.db import upgrade

REF = "referee@club.example"
START = datetime(2026, 10, 5, 9, 0)
PEOPLE = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
#: Kind, players (indexes into PEOPLE), bots, who resigns at once, options.
GAMES: list[tuple[str, list[int], int, list[int], dict[str, str]]] = [
    ("goofspiel", [0, 1], 0, [1], {}),
    ("goofspiel", [2, 3], 0, [2], {}),
    ("goofspiel", [0, 4], 0, [0, 4], {}),
    ("goofspiel", [1, 5], 0, [5], {}),
    ("pure-skill", [0, 1, 2], 0, [0, 1], {}),
    ("pure-skill", [3, 4], 1, [3], {}),
    ("pure-skill", [5, 0, 3], 0, [5, 3], {}),
    ("miser", [0, 2, 4], 0, [0, 2, 4], {}),
    ("miser", [1, 3, 5], 0, [1, 5], {}),
    ("miser", [0, 1, 2, 3], 0, [0, 1, 2], {}),
    ("spades", [0, 1, 2, 3], 0, [0, 1, 2, 3], {"target": "100"}),
    ("spades", [2, 3, 4, 5], 0, [2, 3, 4, 5], {"target": "100"}),
    # Neither counts:
    ("goofspiel", [0, 1], 0, [0, 1], {"rated": "no"}),
    ("goofspiel", [2, 3], 0, [], {}),  # cancelled below
]


def address(i: int) -> str:
    return f"{PEOPLE[i].lower()}@club.example"


def write(root: Path, who: int, text: str, subject: str) -> None:
    msg = EmailMessage()
    msg["From"] = f"{PEOPLE[who]} <{address(who)}>"
    msg["To"] = REF
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="club.example")
    msg.set_content(text)
    mailbox.Maildir(root / "in", create=True).add(msg.as_bytes())


def mail_to(root: Path, who: int, subject_has: str) -> list[EmailMessage]:
    box = mailbox.Maildir(root / "out", create=True)
    out = []
    for key in box.iterkeys():
        msg = message_from_bytes(box.get_bytes(key), policy=default)
        assert isinstance(msg, EmailMessage)
        if address(who) in str(msg["To"]) and subject_has in str(msg["Subject"]):
            out.append(msg)
    return out


def cli(config: Path, *args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["-c", str(config), *args])
    return out.getvalue()


def season(root: Path) -> None:
    (root / "referee.toml").write_text(f"""[referee]
address = "{REF}"
name = "Club Referee"
database = "sqlite:///{root / 'ref.db'}"

[mailbox]
kind = "maildir"
path = "{root / 'in'}"

[smtp]
kind = "maildir"
path = "{root / 'out'}"

[club]
standings = true
season = "quarter"

[web]
path = "{root / 'pages'}"
""", encoding="utf-8")
    config = load_config(root / "referee.toml")
    upgrade(config.database_url)
    referee = Referee(config)
    now = START
    tags = []
    for n, (kind, players, bots, _, options) in enumerate(GAMES):
        tags.append(referee.operator.create_game(
            kind, [f"{PEOPLE[i]} <{address(i)}>" for i in players], bots=bots, now=now,
            options={"deadline": "2h", "reminder": "1h", **options}, seed=f"season-{n}"))
    referee.operator.cancel_game(tags[-1], "a test of what does not count", now=now)
    run_pass(referee, now)
    for tag, (*_, resigning, _) in zip(tags, GAMES, strict=True):
        for i in resigning:
            write(root, i, "resign\n", f"[{tag}] resign")
    write(root, 5, "standings hide\n", "hide me")
    for _ in range(2000):
        now += timedelta(hours=2, minutes=1)
        run_pass(referee, now)
        if all(s["status"] != "active" for s in referee.reading.iter_status()):
            break
    write(root, 0, "standings\n", "who leads?")
    run_pass(referee, now + timedelta(minutes=1))
    referee.close()
    for s in load_status(config):
        print(f"{s['tag']:<14} {s['status']:<9} {s.get('result') or ''}")
    print(f"\nThe season ended its games by {now:%Y-%m-%d %H:%M} UTC.\n")
    (last,) = [m for m in mail_to(root, 0, "Re: who leads?")]
    print("=== Alice's answer to 'standings' ".ljust(72, "="))
    part = last.get_body(("plain",))
    assert part is not None
    print(part.get_content())
    finals = [m for m in mail_to(root, 2, "") if "THE CLUB'S STANDINGS" in
              str(m.get_body(("plain",)).get_content())]  # type: ignore[union-attr]
    if finals:
        text = str(finals[-1].get_body(("plain",)).get_content())  # type: ignore[union-attr]
        block = text[text.index("THE CLUB'S STANDINGS"):].split("\n\n")[0]
        print(f"=== the block of a last mail to Carol ({finals[-1]['Subject']}) ".ljust(72, "="))
        print(block, "\n")
    stored = cli(root / "referee.toml", "standings", "--season", "2026-Q4")
    print("=== referee standings --season 2026-Q4 ".ljust(72, "="))
    print(stored)
    rebuilt = cli(root / "referee.toml", "standings", "--season", "2026-Q4", "--rebuild")
    print("=== referee standings --season 2026-Q4 --rebuild ".ljust(72, "="))
    print(rebuilt)
    print("rebuild matches the stored table:", rebuilt == stored)
    print(f"the index page: {root / 'pages' / 'index.html'}")


def load_status(config: object) -> list[dict[str, object]]:
    referee = Referee(config)  # type: ignore[arg-type]
    try:
        return list(referee.reading.iter_status())
    finally:
        referee.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        folder = Path(sys.argv[1])
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        season(folder)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            season(Path(tmp))
