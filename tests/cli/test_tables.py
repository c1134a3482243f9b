"""``referee tables``, ``referee table cancel`` and ``referee member add``
(referee/cli/tables.py, referee/cli/member.py): the club's open tables
listed as the index lists them, one closed with those seated told by mail,
and a member added who may then open a table."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import load_config
from referee.service import Referee
from referee.service.club.words import NewTable, parse_line
from tests.test_cli import _sent, config  # noqa: F401  (the fixture)

NOW = "2026-01-01T09:00:00"


def open_table(config: Path, writer: str, line: str, *joiners: str) -> str:  # noqa: F811
    referee = Referee(load_config(config))
    asked = parse_line(line)
    assert isinstance(asked, NewTable)
    try:
        with referee.sessions.begin() as db:
            now = datetime.fromisoformat(NOW)
            tag = referee.tables.open(db, writer, asked, now).table
            for joiner in joiners:
                referee.tables.join(db, joiner, tag, now)
        return tag
    finally:
        referee.close()


def test_a_member_added_opens_a_table_tables_lists_it_and_cancel_tells_those_seated(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    cli = ["--config", str(config)]
    assert main([*cli, "tables"]) == 0
    assert capsys.readouterr().out == "no open tables\n"
    assert main([*cli, "member", "add", "alice@club.test", "--name", "Alice",
                 "--now", NOW]) == 0
    assert capsys.readouterr().out == "Alice <alice@club.test>: a member since 2026-01-01\n"
    tag = open_table(config, "alice@club.test", "new pure-skill", "Bob <bob@club.test>")
    assert main([*cli, "tables"]) == 0
    assert capsys.readouterr().out == (
        f"{tag} Game of Pure Skill, opened by Alice: Alice, Bob seated; 1 seat left; "
        "expires 2026-01-15 09:00\n")
    assert main([*cli, "tables", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row == {"tag": tag, "kind": "pure-skill", "title": "Game of Pure Skill",
                   "opener": "Alice", "seated": ["Alice", "Bob"], "invited": [],
                   "seats_left": 1, "seats_min": 3, "seats_max": 3, "options": {},
                   "rematch_of": None, "opened": "2026-01-01T09:00:00",
                   "expires": "2026-01-15T09:00:00"}
    assert main([*cli, "table", "cancel", tag, "--now", NOW]) == 0
    assert capsys.readouterr().out == f"{tag}: cancelled; 2 told\n"
    sent = _sent(config)
    assert [m.split("\nTo: ", 1)[1].split("\n", 1)[0] for m in sent] == [
        "alice@club.test", "bob@club.test"]
    assert all(f"Subject: [{tag}] The table for Game of Pure Skill is closed" in m
               for m in sent)
    assert main([*cli, "tables", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main([*cli, "table", "cancel", tag]) == 1
    assert f"referee: {tag} is cancelled; 'tables' lists the open tables." in (
        capsys.readouterr().err)


def test_member_add_refuses_what_is_no_address(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert main(["--config", str(config), "member", "add", "nobody"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("referee: ") and err.count("\n") == 1
