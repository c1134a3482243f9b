"""The command line is a table of commands, a module each, and names no
game: what a game needs of it, the game declares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import referee.cli
from referee.cli import COMMANDS, build_parser
from referee.games import GAMES, KINDS

FOLDER = Path(referee.cli.__file__).parent


def test_each_command_of_the_parser_is_in_the_table_once() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices or {}) == list(COMMANDS)


def test_no_game_is_named_in_the_command_line() -> None:
    kinds = re.compile("|".join(re.escape(kind) for kind in KINDS), re.IGNORECASE)
    named = [f"{path.name}: {m.group()}" for path in sorted(FOLDER.glob("*.py"))
             for m in kinds.finditer(path.read_text(encoding="utf-8"))]
    assert not named


def test_game_new_takes_each_file_option_a_game_declares(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a help line is not broken at its hyphens
    with pytest.raises(SystemExit):
        build_parser().parse_args(["game", "new", "--help"])
    said = " ".join(capsys.readouterr().out.split())  # as one line, however wrapped
    declared = [(kind, name, text) for kind, engine in GAMES.items()
                for name, text in engine.option_files.items()]
    assert declared  # a built-in game has one
    for kind, name, text in declared:
        assert re.search(rf"--{name} FILE {re.escape(kind)}: {re.escape(text)}", said)
        assert said.index(f"--{name} FILE") < said.index("--seed SEED")


def test_a_file_option_is_read_and_a_game_new_without_one_loads_no_other_game() -> None:
    code = ("import sys\nfrom referee.cli import build_parser\n"
            "args = build_parser().parse_args(['game', 'new', 'goofspiel', '--player', 'a'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('referee.games.')))\n"
            "args = build_parser().parse_args(['game', 'new', 'x', '--instr', 'F'])\n"
            "print(vars(args)['file:instructions'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert "referee.games.loatcg" not in out[0] and out[1] == "F"
