"""``referee game new`` seats the players and waits for their entropy
(issue 38), on a Maildir referee: what the game would refuse is refused at
once with nothing written; a player's first mail about the table is their
contribution, a second gives nothing more; ``start`` and ``leave`` are not
theirs; the pass at the start deadline starts the game, listing the seat
that gave none."""

from __future__ import annotations

import mailbox
import re
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.cli import main
from tests.test_cli import config as config  # the fixture


def _sent(config: Path) -> list[mailbox.MaildirMessage]:
    """Every mail the referee has sent, in its out Maildir."""
    box = mailbox.Maildir(config.parent / "out", create=True)
    return [box.get_message(key) for key in sorted(box.keys())]


def _text(msg: mailbox.MaildirMessage) -> str:
    payload = msg.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode("utf-8")


def _mail(config: Path, sender: str, subject: str, text: str, mid: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "referee@club.test", subject
    msg["Message-ID"] = mid
    msg.set_content(text)
    mailbox.Maildir(config.parent / "in", create=True).add(msg)


def test_game_new_waits_for_entropy_and_starts_at_its_deadline(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = ["--config", str(config)]
    assert main([*cli, "game", "new", "goofspiel", "--player", "alice@club.test",
                 "--player", "bob@club.test", "--option", "cards=99"]) == 1
    assert "cards" in capsys.readouterr().err
    assert main([*cli, "tables"]) == 0
    assert capsys.readouterr().out == "no open tables\n"

    assert main([*cli, "game", "new", "goofspiel", "--player", "Alice <alice@club.test>",
                 "--player", "Bob <bob@club.test>", "--option", "cards=3",
                 "--start-within", "1d", "--now", "2026-03-02T12:00:00"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("goofspiel-t1: 2 player(s) seated and mailed; the game starts when "
                          "each has added entropy, at the latest 2026-03-03 12:00 UTC\n"), out
    seated = [m for m in _sent(config) if "You are seated" in str(m["Subject"])]
    assert sorted(str(m["To"]) for m in seated) == ["alice@club.test", "bob@club.test"]

    subject = f"Re: {seated[0]['Subject']}"
    _mail(config, "alice@club.test", subject, "start goofspiel-t1\n", "<a0@club.test>")
    _mail(config, "alice@club.test", subject, "Count me in\n", "<a1@club.test>")
    _mail(config, "alice@club.test", subject, "And again\n", "<a2@club.test>")
    assert main([*cli, "poll", "--now", "2026-03-02T13:00:00"]) == 0
    texts = [_text(m) for m in _sent(config)]
    assert any("The operator opened goofspiel-t1" in t for t in texts)
    assert sum("your-entropy: <a1@club.test>" in t for t in texts) == 1
    assert not any("<a2@club.test>" in t for t in texts)
    assert not any("Goofspiel begins" in str(m["Subject"]) for m in _sent(config))

    assert main([*cli, "poll", "--now", "2026-03-03T12:01:00"]) == 0
    opening = next(_text(m) for m in _sent(config)
                   if "Goofspiel begins" in str(m["Subject"]) and "alice" in str(m["To"]))
    assert re.search(r"entropy \d: <a1@club.test>\n", opening), opening
    assert re.search(r"  Bob, seat \d, gave no entropy by 2026-03-03 12:00 UTC\.\n",
                     opening), opening
    assert main([*cli, "tables"]) == 0
    assert capsys.readouterr().out.endswith("no open tables\n")
