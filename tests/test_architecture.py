"""The layout tells the truth: engines are pure, and only the service opens
database transactions (checked on the import graph and the calls)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import referee

PACKAGE = Path(referee.__file__).parent
#: What an engine may import besides the standard library and other engines.
ENGINE_MAY_IMPORT = {"pydantic"}


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _calls(tree: ast.Module) -> set[str]:
    """Names of the attributes and functions called: ``x.begin()`` -> begin."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def test_engines_import_only_the_standard_library_pydantic_and_engines() -> None:
    for name, tree in _modules().items():
        if not name.startswith("referee.games"):
            continue
        for imported in _imports(tree):
            top = imported.partition(".")[0]
            assert (imported.startswith("referee.games") or top in ENGINE_MAY_IMPORT
                    or top in sys.stdlib_module_names or top == "__future__"), (name, imported)


def test_only_the_service_and_the_store_speak_to_the_database() -> None:
    for name, tree in _modules().items():
        if name.startswith(("referee.service", "referee.store")):
            continue
        for imported in _imports(tree):
            assert not imported.startswith(("sqlalchemy", "referee.store.models")), \
                (name, imported)


def test_only_the_service_opens_sessions_and_transactions() -> None:
    for name, tree in _modules().items():
        if name.startswith("referee.service"):
            continue
        opened = _calls(tree) & {"begin", "sessions", "sessionmaker", "Session"}
        # The store makes the session factory; it never opens one.
        if name == "referee.store.db":
            assert opened == {"sessionmaker"}, opened
            continue
        assert not opened, (name, opened)


def test_each_room_of_the_service_stays_small() -> None:
    for path in (PACKAGE / "service").glob("*.py"):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 300, f"{path.name} has {lines} lines: split it by job"
