"""The rules engines, and the registry of game kinds: the five built in, and
any a package installed beside the referee declares.

A game package declares its kinds under the entry-point group
:data:`GROUP` (``pbm_referee.games``), each as ``kind = "module:Class"``
(docs/plugins.md). The built-in five are declared there too, and are known
from :data:`KINDS` as well, so a checkout whose installed metadata is stale
still has them.

An engine's module is imported the first time its kind is asked for: a
pass that touches no game of a kind does not load its rules (a cron pass
pays for every module it imports, at every start). The installed packages'
declarations are read once, when a kind outside :data:`KINDS` is first
asked for, or the kinds are listed.

A package whose kind clashes with another's, or whose engine cannot be
loaded, is one line naming the package (:meth:`Registry.problems`, logged
once, as an error); its kind is unavailable (:class:`GameUnavailable`),
and every other kind plays on.

A package's engine is a guest: whatever it raises where the referee calls
it (at import, even ``sys.exit``; in ``parse``, ``apply``, its views, its
bot, its templates) but the errors it owes the players
(:class:`~referee.games.base.EngineError`) is :class:`PackageFault`, and
its kind is unavailable for the rest of the process, in the line that
names the package, where it raised and what (:class:`Guest`,
:meth:`Registry.guard`). A built-in engine is called as it is.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import os
import sys
import time
from collections.abc import Callable, ItemsView, Iterator, MutableMapping, ValuesView
from dataclasses import dataclass
from typing import Any, cast

from referee.games.base import EngineError, Game

log = logging.getLogger(__name__)

#: The entry-point group a game package declares its kinds under.
GROUP = "pbm_referee.games"
#: The distribution the built-in kinds come with.
BUILT_IN = "pbm-referee"

#: Each kind of game built in, and the module and class of its engine.
KINDS: dict[str, tuple[str, str]] = {
    "pure-skill": ("referee.games.pure_skill", "PureSkill"),
    "goofspiel": ("referee.games.goofspiel", "Goofspiel"),
    "spades": ("referee.games.spades", "Spades"),
    "loatcg": ("referee.games.loatcg", "Loatcg"),
    "miser": ("referee.games.miser", "Miser"),
}


class GameUnavailable(KeyError):
    """A kind is declared, but its engine cannot be had: its package failed
    to load, or clashes with another. ``str()`` says which, and why."""

    def __init__(self, line: str, kind: str = "") -> None:
        super().__init__(line)
        self.kind = kind

    def __str__(self) -> str:
        return str(self.args[0])


class PackageFault(Exception):
    """A game package raised where the referee called it: ``line`` names
    the package, the kind, where it raised and what. Its kind is
    unavailable from then on, for the rest of the process
    (:meth:`Registry.fault`)."""

    def __init__(self, line: str, kind: str, package: str | None) -> None:
        super().__init__(line)
        self.line, self.kind, self.package = line, kind, package

    def __str__(self) -> str:
        return self.line


#: What a package's code may raise through the referee: the errors it owes
#: the players, and an operator's Ctrl-C (or a generator closed).
PASSES = (EngineError, KeyboardInterrupt, GeneratorExit)
#: How much of what a package raised its line repeats.
SAID = 200
#: How often (seconds) a failed package's files are looked at for a change.
LOOK_AGAIN = 10.0


def _said(error: BaseException) -> str:
    """What a package raised, in a few words: its type and message."""
    text = f"{type(error).__name__}: {error}".strip().rstrip(":")
    return text if len(text) <= SAID else text[:SAID - 1] + "…"


@dataclass(frozen=True)
class Source:
    """Where a kind's engine comes from: ``module:Class``, and the installed
    package (distribution) that declared it; None for a built-in kind."""

    kind: str
    module: str
    name: str
    package: str | None = None

    @property
    def target(self) -> str:
        return f"{self.module}:{self.name}"

    @property
    def where(self) -> str:
        """How ``referee games`` says where the kind comes from."""
        return "built in" if self.package is None else f"from the package {self.package}"


class Registry(MutableMapping[str, Game[Any]]):
    """Kind -> engine, each made (and its module imported) at first use.

    ``group`` names the entry points read for kinds beyond ``kinds`` (None:
    none are read)."""

    def __init__(self, kinds: dict[str, tuple[str, str]], group: str | None = GROUP) -> None:
        self._sources = {kind: Source(kind, module, name) for kind, (module, name) in kinds.items()}
        self._group = group
        self._scanned = group is None
        self._games: dict[str, Game[Any]] = {}
        #: Kinds that cannot be had, each with its one line.
        self._broken: dict[str, str] = {}
        #: Kinds whose package raised where the referee called it.
        self._faults: set[str] = set()
        #: For a kind whose package failed: when its module's file was
        #: changed then, and when that was last looked at (:meth:`_mended`).
        self._stamps: dict[str, tuple[int | None, float]] = {}
        self._problems: list[str] = []

    # -- the installed packages -------------------------------------------------

    def _scan(self) -> None:
        """Read the installed packages' declarations, once: a kind another
        package (or the referee) has is refused, and so is a name that is no
        ``module:Class``; each refusal is one line naming the package."""
        if self._scanned:
            return
        self._scanned = True
        from importlib.metadata import entry_points

        assert self._group is not None
        claims: dict[str, list[Source]] = {}
        for ep in entry_points(group=self._group):
            package = ep.dist.name if ep.dist is not None else "an unnamed package"
            module, _, name = ep.value.partition(":")
            source = Source(ep.name, module.strip(), name.strip(), package)
            if _normal(package) == BUILT_IN and ep.name in self._sources:
                continue  # the referee's own declaration of a built-in kind
            if not source.module or not source.name or "[" in ep.value:
                self._problem(f"the game package {package} declares kind {ep.name!r} as "
                              f"{ep.value!r}, not as 'module:Class'; its game is not loaded")
                continue
            claims.setdefault(ep.name, []).append(source)
        for kind, sources in sorted(claims.items()):
            packages = sorted({s.package or "" for s in sources})
            if kind in self._sources:
                for package in packages:
                    self._problem(f"the game package {package} declares kind {kind!r}, which "
                                  f"the referee has already ({self._sources[kind].where}); "
                                  "its game is not loaded")
            elif len(packages) > 1 or len(sources) > 1:
                self._problem(f"the game packages {' and '.join(packages)} each declare kind "
                              f"{kind!r}; neither is loaded until one is uninstalled")
                self._sources[kind] = sources[0]
                self._broken[kind] = (f"game kind {kind!r} is declared by "
                                      f"{' and '.join(packages)}; uninstall one")
            else:
                self._sources[kind] = sources[0]

    def _problem(self, line: str) -> None:
        self._problems.append(line)
        log.error("%s", line)

    def problems(self) -> list[str]:
        """What is wrong with the installed game packages, a line each: a
        kind that clashes, a declaration that is no ``module:Class``, a
        module that is not there (found without importing it), and an
        engine that failed to load so far. Each is logged once, as found."""
        self._scan()
        for kind, source in sorted(self._sources.items()):
            if source.package is None or kind in self._broken:
                continue
            if not _findable(source.module):
                self._fail(source, f"no module named {source.module!r}")
        return list(self._problems)

    def broken(self, kind: str) -> str | None:
        """Why the declared ``kind`` cannot be had, as known without
        importing its engine (it clashes, its module is not there, or it
        failed to load already), in its package's line; None: as far as is
        known, it can. A kind no package declares is not in the registry."""
        source = self._sources.get(kind)
        if source is not None and source.package is None:
            return self._broken.get(kind)  # built in: no package need be read
        self._scan()
        source = self._sources.get(kind)
        if kind in self._broken and self._mended(kind):
            return None
        if kind not in self._broken and source is not None and source.package is not None \
                and kind not in self._games and not _findable(source.module):
            self._fail(source, f"no module named {source.module!r}")
        return self._broken.get(kind)

    def look_again(self, kind: str) -> bool:
        """Whether ``kind`` is declared now: if it was not when the packages
        were read, they are read again for it (a package installed while
        the daemon runs is found without a restart). Only a kind one package
        alone declares, as ``module:Class``, is taken; a clash is said at
        the next start."""
        if kind in self:
            return True
        if self._group is None:
            return False
        from importlib.metadata import entry_points

        importlib.invalidate_caches()  # the folder of installed packages changed
        found = list(entry_points(group=self._group, name=kind))
        if len(found) != 1:
            return False
        (ep,) = found
        module, _, name = ep.value.partition(":")
        if not module.strip() or not name.strip() or "[" in ep.value:
            return False
        package = ep.dist.name if ep.dist is not None else "an unnamed package"
        self._sources[kind] = Source(kind, module.strip(), name.strip(), package)
        return True

    def sources(self) -> dict[str, Source]:
        """Every kind, built in or installed, and where it comes from."""
        self._scan()
        return dict(self._sources)

    def _fail(self, source: Source, why: str) -> None:
        line = (f"the game package {source.package} failed to load kind {source.kind!r} "
                f"({source.target}): {why}")
        self._broken[source.kind] = line
        self._stamps[source.kind] = (_stamp(source.module), time.monotonic())
        self._problem(line)

    def _mended(self, kind: str) -> bool:
        """Whether the package of ``kind``, which failed, has changed on disk
        since (reinstalled, upgraded, mended: its module's file is newer),
        looked at once every :data:`LOOK_AGAIN` seconds at most; if so it is
        forgotten as failed and its modules unloaded, to be imported anew at
        the next use (the daemon needs no restart)."""
        if kind not in self._stamps:
            return False
        stamp, seen = self._stamps[kind]
        if time.monotonic() - seen < LOOK_AGAIN:
            return False
        importlib.invalidate_caches()
        source = self._sources[kind]
        now = _stamp(source.module)
        self._stamps[kind] = (stamp, time.monotonic())
        if now == stamp:
            return False
        del self._stamps[kind]
        self._broken.pop(kind, None)
        self._faults.discard(kind)
        top = source.module.partition(".")[0]
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[name]
        log.info("the game package %s changed: kind %r is loaded again", source.package, kind)
        return True

    def templates_package(self, folder: str) -> str:
        """The package whose ``templates/`` holds the mails of ``folder`` (a
        game's ``templates`` or kind), when a game from a package of its own
        names one (``Game.templates_package``); else "", the referee's own.
        An installed kind of that name is loaded to be asked."""
        def named() -> str:
            return next((g.templates_package for g in self._games.values()
                         if (g.templates or g.kind) == folder and g.templates_package), "")

        if (found := named()) or folder in self._games or folder not in self:
            return found
        if self._sources[folder].package is None:
            return ""
        try:
            self[folder]
        except KeyError:
            return ""
        return named()

    # -- the mapping ------------------------------------------------------------

    def __getitem__(self, kind: str) -> Game[Any]:
        if kind in self._games:
            return self._games[kind]
        if kind not in self._sources:
            self._scan()
        if kind in self._broken and not self._mended(kind):
            raise GameUnavailable(self._broken[kind], kind)
        source = self._sources[kind]
        game: Game[Any]
        if source.package is None:
            game = getattr(importlib.import_module(source.module), source.name)()
        else:
            game = self._load(source)
        self._games[kind] = game
        return game

    def _load(self, source: Source) -> Game[Any]:
        """An installed package's engine; any failure is its package's line."""
        try:
            cls = getattr(importlib.import_module(source.module), source.name)
            if not (isinstance(cls, type) and issubclass(cls, Game)):
                raise TypeError(f"{source.target} is no subclass of referee.games.base.Game")
            if getattr(cls, "kind", None) != source.kind:
                raise TypeError(f"its class says kind {getattr(cls, 'kind', None)!r}")
            game: Game[Any] = cls()
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as e:
            self._fail(source, _said(e))
            raise GameUnavailable(self._broken[source.kind], source.kind) from e
        return cast(Game[Any], Guest(game, source, self))

    def fault(self, kind: str, where: str, error: BaseException) -> PackageFault:
        """A package raised ``error`` in ``where`` (``parse``, "its page"):
        its kind is unavailable from now on in this process, the line
        logged once with the traceback; the fault to raise."""
        source = self._sources[kind]
        line = (f"the game package {source.package} raised in {where} (kind {kind!r}, "
                f"{source.target}): {_said(error)}")
        if kind not in self._broken:
            self._broken[kind] = line
            self._faults.add(kind)
            self._stamps[kind] = (_stamp(source.module), time.monotonic())
            self._problems.append(line)
            log.error("%s", line)
            log.info("where the game package %s raised", source.package, exc_info=error)
        self._games.pop(kind, None)
        return PackageFault(self._broken[kind], kind, source.package)

    def faults(self) -> dict[str, str]:
        """Each kind whose package raised in this process, with its line."""
        return {kind: self._broken[kind] for kind in sorted(self._faults)}

    def served(self) -> list[str]:
        """The kinds from packages of their own loaded in this process that
        have not raised."""
        return sorted(kind for kind in self._games if self._sources[kind].package is not None)

    def guest(self, name: str) -> str | None:
        """``name`` if it is the kind of a game from a package of its own;
        else the kind of such a game loaded whose templates of its own
        (``templates_package``) are the folder ``name``; else None (a
        built-in game's, or the referee's templates another game uses)."""
        source = self._sources.get(name)
        if source is not None and source.package is not None:
            return name
        return next((kind for kind, g in list(self._games.items())
                     if self._sources[kind].package is not None and g.templates_package
                     and (g.templates or g.kind) == name), None)

    @contextlib.contextmanager
    def guard(self, name: str, where: str) -> Iterator[None]:
        """Inside, what is raised is the :class:`PackageFault` of the
        package of :meth:`guest` ``(name)``, a kind or a folder of
        templates (its page, a template of its own that fails to render);
        where there is none, it is raised as it is."""
        try:
            yield
        except PASSES:
            raise
        except PackageFault:
            raise
        except BaseException as e:
            kind = self.guest(name)
            if kind is None:
                raise
            raise self.fault(kind, where, e) from e

    def __setitem__(self, kind: str, game: Game[Any]) -> None:
        self._sources.setdefault(kind, Source(kind, type(game).__module__, type(game).__name__))
        self._broken.pop(kind, None)
        self._games[kind] = game

    def __delitem__(self, kind: str) -> None:
        self._scan()
        del self._sources[kind]
        self._games.pop(kind, None)
        self._broken.pop(kind, None)

    def __contains__(self, kind: object) -> bool:
        if kind in self._sources:
            return True
        self._scan()
        return kind in self._sources

    def __iter__(self) -> Iterator[str]:
        self._scan()
        return iter(list(self._sources))

    def __len__(self) -> int:
        self._scan()
        return len(self._sources)

    def items(self) -> ItemsView[str, Game[Any]]:
        """Each kind that can be had, with its engine (a kind that fails to
        load is left out, its line logged)."""
        return _Available(self)

    def values(self) -> ValuesView[Game[Any]]:
        return ValuesView(dict(self.items()))


class Guest:
    """A game package's engine as the referee calls it: each attribute and
    method of ``game``, but anything it raises beyond :data:`PASSES` is
    its package's :class:`PackageFault` (:meth:`Registry.fault`)."""

    def __init__(self, game: Game[Any], source: Source, registry: Registry) -> None:
        self._game, self._source, self._registry = game, source, registry

    def __getattr__(self, name: str) -> Any:
        try:
            value = getattr(self._game, name)
        except (AttributeError, *PASSES):
            raise
        except BaseException as e:
            raise self._registry.fault(self._source.kind, name, e) from e
        if not callable(value) or isinstance(value, type):
            return value
        return self._called(name, value)

    def _called(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except PASSES:
                raise
            except BaseException as e:
                raise self._registry.fault(self._source.kind, name, e) from e
        return call

    def __repr__(self) -> str:
        return f"Guest({self._game!r})"


class _Available(ItemsView[str, Game[Any]]):
    """The items of a :class:`Registry`, but for the kinds that fail to load."""

    def __init__(self, registry: Registry) -> None:
        super().__init__(registry)
        self.registry = registry

    def __iter__(self) -> Iterator[tuple[str, Game[Any]]]:
        for kind in self.registry:
            try:
                yield kind, self.registry[kind]
            except GameUnavailable:
                continue


def _normal(name: str) -> str:
    """A distribution's name as PEP 503 compares it."""
    return name.lower().replace("_", "-").replace(".", "-")


def _stamp(module: str) -> int | None:
    """When the file of ``module``'s top package was last changed (ns), found
    without running it; None if it is not there."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module.partition(".")[0])
        return os.stat(spec.origin).st_mtime_ns if spec and spec.origin else None
    except (ImportError, ValueError, OSError):
        return None


def _findable(module: str) -> bool:
    """Whether ``module``'s top package is there, found without running it."""
    import importlib.util

    try:
        return importlib.util.find_spec(module.partition(".")[0]) is not None
    except (ImportError, ValueError):
        return False


GAMES: Registry = Registry(KINDS)


def title_of(kind: str) -> str:
    """The title of ``kind``'s game, or the kind itself when its engine
    cannot be had: for what lists several games (a player's games, a
    digest's subject), where one absent package must not stop the rest."""
    try:
        return GAMES[kind].title
    except KeyError:
        return kind


def get_game(kind: str) -> Game[Any]:
    """The engine for ``kind``; raises KeyError naming the known kinds, or
    :class:`GameUnavailable` (a KeyError) naming the package that failed."""
    try:
        return GAMES[kind]
    except GameUnavailable:
        raise
    except KeyError:
        raise KeyError(f"unknown game kind {kind!r}; known: {', '.join(sorted(GAMES))}") from None
