"""``referee standings`` (referee/cli/standings.py): the club's stored
tables printed, one kind's, one season's, as JSON, and the rebuild from
the record printing the same; refused while the club keeps none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import load_config
from referee.passes import run_pass
from referee.service import Referee
from tests.test_cli import config  # noqa: F401  (the fixture)

NOW = "2026-11-02T09:00:00"


def play(config: Path) -> None:  # noqa: F811
    """Two games of Goofspiel whose players both resigned: bots played them out."""
    from datetime import datetime

    referee = Referee(load_config(config))
    now = datetime.fromisoformat(NOW)
    try:
        for seed, pair in (("a", ("Alice <alice@club.test>", "Bob <bob@club.test>")),
                           ("b", ("Bob <bob@club.test>", "Carol <carol@club.test>"))):
            tag = referee.operator.create_game("goofspiel", list(pair), now=now, seed=seed)
            for player in pair:
                referee.operator.resign_player(tag, player, now=now)
        run_pass(referee, now)
    finally:
        referee.close()


def test_standings_prints_the_table_and_the_rebuild_the_same(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    cli = ["--config", str(config)]
    with config.open("a", encoding="utf-8") as f:
        f.write('[club]\nstandings = true\nseason = "quarter"\n')
    play(config)
    capsys.readouterr()
    assert main([*cli, "standings", "--now", NOW]) == 0
    stored = capsys.readouterr().out
    lines = stored.splitlines()
    assert lines[:2] == ["Goofspiel, season 2026-Q4:", "    #  Player  Points  Games  Won"]
    assert sorted(line.split()[1] for line in lines[2:5]) == ["Alice", "Bob", "Carol"]
    assert main([*cli, "standings", "goofspiel", "--season", "all", "--rebuild"]) == 0
    rebuilt = capsys.readouterr().out
    assert rebuilt.replace("all time", "season 2026-Q4") == stored
    assert main([*cli, "standings", "--season", "all", "--json"]) == 0
    (table,) = json.loads(capsys.readouterr().out)
    assert (table["kind"], table["season"]) == ("goofspiel", "all")
    assert {ln["name"]: ln["games"] for ln in table["lines"]} == {
        "Alice": 1, "Bob": 2, "Carol": 1}
    assert main([*cli, "standings", "spades"]) == 0
    assert capsys.readouterr().out == "no game rated yet (spades)\n"


def test_standings_is_refused_while_the_club_keeps_none(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert main(["--config", str(config), "standings"]) != 0
    assert "The club keeps no standings: set [club] standings = true." in (
        capsys.readouterr().err)
