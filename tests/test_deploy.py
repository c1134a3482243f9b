"""The deployment files: the systemd unit passes ``systemd-analyze verify``
(where systemd is installed), the cron example runs real commands."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "referee.service"
INSTALLED = "/opt/referee/bin/referee"


def test_the_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify wants the programs to exist: the referee of this environment
    # stands in for the one the README installs in /opt/referee.
    referee = Path(sys.executable).parent / "referee"
    unit = tmp_path / "referee.service"
    text = UNIT.read_text(encoding="utf-8")
    assert INSTALLED in text
    unit.write_text(text.replace(INSTALLED, str(referee)), encoding="utf-8")
    proc = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


def test_the_unit_is_hardened_and_keeps_its_state_in_a_state_directory() -> None:
    keys = dict(line.split("=", 1) for line in UNIT.read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    assert keys["User"] == "referee" and keys["StateDirectory"] == "referee"
    assert keys["ProtectSystem"] == "strict" and keys["NoNewPrivileges"] == "yes"
    # A file it cannot make, a refused login, a bad config: not retried.
    assert keys["RestartPreventExitStatus"] == "73 77 78"
    assert "--config /etc/referee/referee.toml" in keys["ExecStart"]


def test_each_referee_line_of_the_cron_example_parses() -> None:
    from referee.cli import build_parser

    lines = [line for line in (ROOT / "deploy" / "cron.example").read_text().splitlines()
             if INSTALLED in line and not line.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        words = line.split(INSTALLED, 1)[1].split()
        end = next((i for i, w in enumerate(words) if w in ("||", ">/dev/null", "&&")),
                   len(words))
        args = build_parser().parse_args(words[:end])
        assert args.command in ("poll", "prune")
