"""Costs that follow the work (issue 39): ``referee poll`` with nothing due
and ``referee status TAG`` of one game do the same work at 1 game as at 200:
the same SQL statements, and as many of SQLite's steps (its virtual
machine's instructions, which a read of every game or every mail sent
would multiply)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from referee.cli import main
from referee.config import load_config
from referee.service import Referee

T0 = datetime(2026, 3, 2, 12, 0)
NOW = "2026-03-02T13:00:00"  # an hour on: every deadline days away
#: SQLite calls the progress handler every this many instructions.
STEP = 20


@dataclass
class Cost:
    statements: list[str] = field(default_factory=list)
    steps: int = 0


@contextmanager
def counted() -> Iterator[Cost]:
    """The SQL statements sent and SQLite's steps (in :data:`STEP`s) while
    the block runs, on every connection it opens."""
    cost = Cost()

    def sent(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # The pass's lease is renewed by the clock, not by the work: left out.
        if "leases" not in statement:
            cost.statements.append(" ".join(statement.split()))

    def step() -> int:
        cost.steps += 1
        return 0

    def connected(dbapi: Any, record: Any) -> None:
        dbapi.set_progress_handler(step, STEP)

    event.listen(Engine, "before_cursor_execute", sent)
    event.listen(Engine, "connect", connected)
    try:
        yield cost
    finally:
        event.remove(Engine, "before_cursor_execute", sent)
        event.remove(Engine, "connect", connected)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "referee.toml"
    path.write_text('[referee]\naddress = "referee@club.test"\n'
                    '[mailbox]\nkind = "maildir"\npath = "in"\n'
                    '[smtp]\nkind = "maildir"\npath = "out"\n', encoding="utf-8")
    assert main(["--config", str(path), "init"]) == 0
    return path


def games(config: Path, first: int, count: int) -> None:
    """``count`` more games, their openings sent by a pass."""
    ref = Referee(load_config(config))
    try:
        for i in range(first, first + count):
            ref.operator.create_game("goofspiel", [f"a{i}@club.test", f"b{i}@club.test"],
                                     now=T0, seed=f"s{i}")
    finally:
        ref.close()
    assert main(["--config", str(config), "poll", "--now", NOW]) == 0


def costs(config: Path) -> dict[str, Cost]:
    out = {}
    for name, args in (("poll", ["poll", "--now", NOW]), ("status", ["status", "goofspiel-1"])):
        with counted() as cost:
            assert main(["--config", str(config), *args]) == 0
        out[name] = cost
    return out


def test_a_pass_with_nothing_due_and_the_status_of_one_game_cost_the_same_at_200_games(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    games(config, 0, 1)
    one = costs(config)
    games(config, 1, 199)
    many = costs(config)
    for name in ("poll", "status"):
        assert many[name].statements == one[name].statements, name
        assert one[name].steps > 0
        # A read of 200 games, or of their 400 openings, is thousands of steps.
        assert many[name].steps <= one[name].steps + 5, (name, one[name].steps,
                                                         many[name].steps)
    assert "goofspiel-1" in capsys.readouterr().out
