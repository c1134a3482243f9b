"""Installed like any Python service: a wheel built from the checkout, put in
a fresh virtual environment outside it, runs ``init``, ``demo`` and ``poll``
with the migrations and templates it carries as package data.

Offline: the wheel is built without build isolation (setuptools and wheel
come with the ``test`` extra) and installed without its dependencies, which
the new environment reads from the project's own ``.venv``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What the wheel is built from; the links referee/templates and
#: referee/migrations are copied as the folders they point to.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "referee")


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{args} exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc"))
        else:
            shutil.copy(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "-w", out, src], cwd=src)
    (built,) = out.glob("pbm_referee-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new environment with only the wheel installed; the dependencies
    come from this interpreter's site-packages through a .pth file (whose
    own .pth files, the editable install of the checkout among them, are
    not read)."""
    return fresh_venv(tmp_path_factory, wheel)


def fresh_venv(tmp_path_factory: pytest.TempPathFactory, *packages: Path) -> Path:
    """A new environment with ``packages`` (wheels or source folders)
    installed offline and nothing else; their dependencies come from this
    interpreter's site-packages through a .pth file."""
    env = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", env], cwd=env)
    purelib = Path(_run([env / "bin" / "python", "-c",
                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=env).stdout.strip())
    (purelib / "_project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "-q",
          "--no-deps", "--no-index", "--no-build-isolation", *packages], cwd=env)
    return env


def test_the_wheel_carries_the_migrations_and_the_templates(wheel: Path) -> None:
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert "referee/migrations/env.py" in names
    assert "referee/migrations/versions/0001_initial_schema.py" in names
    assert "referee/templates/common/transcript.txt" in names
    assert "referee/templates/web/index.html" in names


def test_the_wheel_names_its_licence_as_an_spdx_expression(wheel: Path) -> None:
    """PEP 639: ``License-Expression``, and the licence's own text inside."""
    import zipfile

    with zipfile.ZipFile(wheel) as whl:
        (metadata,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        headers = whl.read(metadata).decode().partition("\n\n")[0].splitlines()
        assert "License-Expression: MIT" in headers
        assert "License-File: LICENSE" in headers
        (licence,) = [n for n in whl.namelist() if n.endswith("licenses/LICENSE")]
        assert "Copyright (c) the pbm-referee authors" in whl.read(licence).decode()


def test_an_installed_wheel_says_its_version(venv: Path, tmp_path: Path) -> None:
    said = _run([venv / "bin" / "referee", "--version"], cwd=tmp_path).stdout
    assert said == "referee 0.1.0\n"


def test_an_installed_wheel_runs_init_demo_and_poll_outside_the_checkout(
    venv: Path, tmp_path: Path
) -> None:
    referee = venv / "bin" / "referee"
    work = tmp_path / "club"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = _run([venv / "bin" / "python", "-c", "import referee; print(referee.__file__)"],
                 cwd=work, env=env).stdout
    assert where.startswith(str(venv)), where
    (work / "referee.toml").write_text(
        '[referee]\naddress = "referee@club.test"\n'
        '[mailbox]\nkind = "maildir"\npath = "in"\n'
        '[smtp]\nkind = "maildir"\npath = "out"\n', encoding="utf-8")
    assert "database ready" in _run([referee, "init"], cwd=work, env=env).stdout
    _run([referee, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
          "--player", "bob@club.test"], cwd=work, env=env)
    for sub in ("cur", "new", "tmp"):
        (work / "in" / sub).mkdir(parents=True, exist_ok=True)
    _run([referee, "poll"], cwd=work, env=env)
    sent = [p.read_text() for p in (work / "out" / "new").iterdir()]
    assert sent and all("goofspiel-1" in mail for mail in sent)  # the opening, from templates
    demo = _run([referee, "demo", "--dir", tmp_path / "demo"], cwd=work, env=env).stdout
    assert "Final result of goofspiel-1" in demo
