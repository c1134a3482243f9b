"""The layout tells the truth: imports run one way (the games <- mail, store
and config <- the service's wings <- the command line), the service's three
wings along a mail's path (intake -> club -> play -> outgoing), each game's rules
never reach for its words or views, no import cycle anywhere, and only the
service opens database transactions. Every import counts: those inside
functions and under ``TYPE_CHECKING`` too."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

import referee

PACKAGE = Path(referee.__file__).parent
#: What a game may import besides the standard library and the games.
GAMES_MAY_IMPORT = {"pydantic"}
#: The service's wings, and the wings each may import.
WINGS = {
    "referee.service.intake": {"referee.service.club", "referee.service.play",
                               "referee.service.outgoing"},
    "referee.service.club": {"referee.service.play", "referee.service.outgoing"},
    "referee.service.play": {"referee.service.outgoing"},
    "referee.service.outgoing": set(),
}
#: The modules at the root of the service a wing may import.
ROOT_FOR_WINGS = {"referee.service.errors"}
#: The parts of the package below the service: none of them imports it.
BELOW_THE_SERVICE = ("referee.games", "referee.mail", "referee.store", "referee.config",
                     "referee.logs", "referee.problems", "referee.notify")
#: The command line and what it drives: the service never imports them.
ABOVE_THE_SERVICE = ("referee.cli", "referee.passes", "referee.scheduler", "referee.demo",
                     "referee.web", "referee.check", "referee.testing")


@cache
def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def _is_package(name: str) -> bool:
    return (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()


@cache
def _imports(name: str) -> frozenset[str]:
    """Every module ``name`` imports, anywhere in it: ``from x import y``
    names ``x.y`` when that is a module, else ``x``; relative imports are
    resolved."""
    names: set[str] = set()
    modules = _modules()
    for node in ast.walk(modules[name]):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if _is_package(name) else name.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            names.update(subs or [base])
    return frozenset(names)


def _internal_imports(name: str) -> set[str]:
    """The modules of this package that ``name`` imports."""
    out = set()
    for imported in _imports(name):
        while imported and imported not in _modules():
            imported = imported.rpartition(".")[0]
        if imported and imported != name:
            out.add(imported)
    return out


def _in(name: str, prefixes: str | tuple[str, ...] | set[str]) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _calls(tree: ast.Module) -> set[str]:
    """Names of the attributes and functions called: ``x.begin()`` -> begin."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def _cycles() -> list[list[str]]:
    """The import cycles of the package: its strongly connected groups of
    more than one module (Tarjan), and modules that import themselves."""
    graph = {name: sorted(_internal_imports(name)) for name in _modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return groups


def test_no_import_cycle_anywhere_in_the_package() -> None:
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle_made_inside_a_function(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: an import of intake inside a function of
    outgoing (the way the old cycle was dodged) closes a cycle."""
    planted = dict(_modules())
    planted["referee.service.outgoing.queue"] = ast.parse(
        "def later():\n    from referee.service.intake.chain import Chain\n")
    monkeypatch.setattr(sys.modules[__name__], "_modules", lambda: planted)
    _imports.cache_clear()
    try:
        assert any("referee.service.outgoing.queue" in group for group in _cycles())
    finally:
        _imports.cache_clear()


def test_the_service_wings_import_one_way() -> None:
    for name in _modules():
        wing = next((w for w in WINGS if _in(name, w)), None)
        if wing is None:
            continue
        for imported in _internal_imports(name):
            if not _in(imported, "referee.service") or _in(imported, wing):
                continue
            allowed = _in(imported, WINGS[wing]) or imported in ROOT_FOR_WINGS
            assert allowed, f"{name} imports {imported}: {wing} may use only {WINGS[wing]}"


def test_nothing_in_the_service_imports_its_door() -> None:
    for name in _modules():
        if _in(name, "referee.service") and name != "referee.service":
            assert not _internal_imports(name) & {"referee.service", "referee.service.core"}, \
                name


def test_imports_run_from_the_command_line_down_to_the_games() -> None:
    for name in _modules():
        imported = _internal_imports(name)
        if _in(name, BELOW_THE_SERVICE):
            assert not [i for i in imported if _in(i, "referee.service")], name
        if _in(name, ("referee.service", *BELOW_THE_SERVICE)):
            assert not [i for i in imported if _in(i, ABOVE_THE_SERVICE)], name


def test_games_import_only_the_standard_library_pydantic_and_games() -> None:
    for name in _modules():
        if not _in(name, "referee.games"):
            continue
        for imported in _imports(name):
            top = imported.partition(".")[0]
            assert (_in(imported, "referee.games") or top in GAMES_MAY_IMPORT
                    or top in sys.stdlib_module_names or top == "__future__"), (name, imported)


def test_a_games_rules_never_import_its_words_or_views() -> None:
    """rules.py holds the rules; words.py (the grammar) and views.py (what
    each seat sees, the mails' data) read them, never the other way."""
    rules = [name for name in _modules() if name.endswith(".rules") and _in(name, "referee.games")]
    assert rules, "no game package has a rules.py"
    for name in rules:
        package = name.rpartition(".")[0]
        assert not _internal_imports(name) & {f"{package}.words", f"{package}.views",
                                              package}, name


def test_each_kind_is_a_package_named_after_its_game() -> None:
    from referee.games import KINDS

    for kind, (module, _) in KINDS.items():
        assert module == "referee.games." + kind.replace("-", "_"), (kind, module)
        assert _is_package(module), module


def test_every_module_says_its_job_in_a_docstring() -> None:
    for name, tree in _modules().items():
        assert ast.get_docstring(tree), f"{name} has no docstring"


def test_only_the_service_and_the_store_speak_to_the_database() -> None:
    for name in _modules():
        if _in(name, ("referee.service", "referee.store")):
            continue
        for imported in _imports(name):
            assert not imported.startswith(("sqlalchemy", "referee.store.models")), \
                (name, imported)


def test_only_the_service_opens_sessions_and_transactions() -> None:
    for name, tree in _modules().items():
        if _in(name, "referee.service"):
            continue
        opened = _calls(tree) & {"begin", "sessions", "sessionmaker", "Session"}
        # The store makes the session factory; it never opens one.
        if name == "referee.store.db":
            assert opened == {"sessionmaker"}, opened
            continue
        assert not opened, (name, opened)


def test_outgoing_calls_nothing_of_play_back() -> None:
    """Decide, then do: delivery reads the value play hands it (a
    ``Decision``); no module of the outgoing wing declares a protocol for
    its caller to meet, nor names the play wing's ``GameSession``."""
    found = []
    for name, tree in _modules().items():
        if not name.startswith("referee.service.outgoing"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    getattr(b, "id", getattr(b, "attr", "")) == "Protocol" for b in node.bases):
                found.append(f"{name}: protocol {node.name}")
            if isinstance(node, ast.Name) and node.id == "GameSession":
                found.append(f"{name}: names GameSession")
    assert not found
