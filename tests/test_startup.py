"""What a command imports at start: cron runs ``referee poll`` every few
minutes, and each start pays for every module it loads. A pass with no mail
needs no Alembic, no PostgreSQL dialect (on SQLite), no template engine and
no game's rules; ``status`` needs no mail server library either."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.games import GAMES, KINDS, get_game
from tests.test_cli import config as config  # the fixture

#: Loaded only when needed: ``init``, PostgreSQL, a mail to write, a game of that kind.
NOT_AT_START = ["alembic", "sqlalchemy.dialects.postgresql", "jinja2",
                *sorted({module for module, _ in KINDS.values()})]
#: Only for the commands that talk to the mail servers.
MAIL_SERVERS = ["imapclient", "referee.check"]


def _loaded_by(argv: list[str], folder: Path) -> set[str]:
    """The modules loaded by ``referee ARGV`` run in a fresh interpreter."""
    code = ("import sys\nfrom referee.cli import main\n"
            f"assert main({argv!r}) == 0\n"
            "print(__import__('json').dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True,
                         text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("command", ["poll", "status", "outbox"])
def test_a_command_with_nothing_to_do_loads_only_what_it_needs(
        config: Path, command: str) -> None:
    loaded = _loaded_by(["--config", str(config), command], config.parent)
    unwanted = NOT_AT_START + (MAIL_SERVERS if command != "poll" else [])
    assert not [name for name in unwanted if name in loaded]


def test_each_kind_is_played_by_its_engine() -> None:
    for kind in KINDS:
        assert get_game(kind).kind == kind
    assert sorted(GAMES) == sorted(KINDS)
    with pytest.raises(KeyError, match="known: goofspiel, loatcg, miser, pure-skill, spades"):
        get_game("chess")
