"""Game pages: each game's public state and history as static HTML, and
its Atom feed.

Rule text 000 (6) asks the referee to keep "a web page of the state of the
game, and the history of each move". Only public facts go in: the status
entry (the engine's summary, the seats' names, never addresses), the
engine's view for no seat and the events marked public. Each page shows
the game as its table first (the engine's ``page_table``), its scores over the
rounds (``referee.web.chart``), the history folded by round
(``referee.web.history``) and what the game committed to and revealed;
each has a feed (``referee.web.feed``), and so has the index, which also
lists the club's open tables (kind, who sits, seats left, who opened it,
when it closes; never an invitation's secret). Each file is
written to a temporary name (``.NAME.XXXXXXXX.tmp``) and renamed, so a web
server never serves half a page; a write that fails (a full disk) takes its
temporary file away, and each process sweeps a folder it publishes to of
those a killed process left there before anything else, written or not.
Every page and feed holds only characters XML allows
(``referee.web.xmlchars``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    TemplateNotFound,
    select_autoescape,
)

from referee.games import GAMES, PackageFault
from referee.games.base import Game
from referee.mail.compose import TEMPLATES, format_when
from referee.service import Referee
from referee.service.pages import Written
from referee.service.play import guests
from referee.service.play.guests import Unserved, faulted
from referee.store.db import now_utc
from referee.web.feed import game_feed, index_feed
from referee.web.history import fold
from referee.web.tables import table
from referee.web.xmlchars import xml_text

#: Games whose histories are read at a time.
BATCH = 500
#: The mark in the head of ``index.html`` of the open tables it shows.
_TABLES_MARK = '<meta name="open-tables" content="'
#: The mark in the head of ``index.html`` of the standings it shows.
_STANDINGS_MARK = '<meta name="standings" content="'
#: The folders this process has swept of temporary files (:func:`_sweep`).
_swept: set[Path] = set()


class _GamePages(BaseLoader):
    """A game's own ``page.html`` (``KIND/page.html``) from the package
    that brings the game (``Game.templates_package``); a built-in game's
    is under the referee's templates."""

    def get_source(self, environment: Environment, template: str
                   ) -> tuple[str, str | None, Callable[[], bool] | None]:
        folder, _, name = template.partition("/")
        package = GAMES.templates_package(folder) if name else ""
        if not package:
            raise TemplateNotFound(template)
        return PackageLoader(package, "templates").get_source(environment, template)


_env = Environment(
    loader=ChoiceLoader([FileSystemLoader(TEMPLATES / "web"), _GamePages(),
                         FileSystemLoader(TEMPLATES)]),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # shipped templates: no stat of the file per page
)
_env.filters["when"] = format_when


def _page(template: str, **context: Any) -> str:
    """The page ``template`` (``templates/web/``, or a game's own) for
    ``context``, holding only characters XML allows."""
    return xml_text(_env.get_template(template).render(**context))


def _public(game: dict[str, Any]) -> dict[str, Any]:
    """A status entry without what is not for the public: addresses, bounces."""
    players = [{k: p[k] for k in ("seat", "name", "bot")} for p in game["players"]]
    return {**game, "players": players}


def _listing(game: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """A game's line of the index page and of the club's feed: ``since``
    its first public event, ``updated`` when the line last changed (its
    start while it runs, its last event once it is over)."""
    since = events[0]["at"].isoformat() if events else None
    last = events[-1]["at"].isoformat() if events else None
    return {"tag": game["tag"], "kind": game["kind"], "status": game["status"],
            "players": [p["name"] for p in game["players"]], "result": game.get("result"),
            "since": since, "updated": since if game["status"] == "active" else last}


def _shown(line: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a line of the index shows: not its dates, which change only
    with what it shows (a game's first event, its status)."""
    return None if line is None else {k: v for k, v in line.items()
                                      if k not in ("since", "updated")}


def write_pages(referee: Referee, folder: Path, now: datetime | None = None,
                waiting: list[str] | None = None) -> int:
    """Write ``index.html`` and one ``TAG.html`` per game into ``folder``
    (``referee pages``: every page, wherever asked), each with its feed,
    as of ``now``; returns the number of game pages. A game whose package
    cannot serve it now has its page left as it was, the index lists it as
    waiting, and its line (``TAG: why``) is added to ``waiting``. Books
    nothing: the pages of ``[web] path`` are ``publish``'s."""
    now = now or now_utc()
    folder.mkdir(parents=True, exist_ok=True)
    _sweep(folder)
    games = referee.reading.iter_status()
    lines, written = [], 0
    for game, line, waits in _write_games(referee, folder, games, now):
        lines.append(line)
        if waits is None:
            written += 1
        elif waiting is not None:
            waiting.append(f"{game['tag']}: {waits}")
    _write_index(referee, folder, lines, now)
    return written


def publish(referee: Referee, folder: Path, now: datetime | None = None) -> int:
    """After a pass, write into ``folder`` (``[web] path``) the pages of the
    games that changed since they were last written, and the index if a
    line of it changed; every page when the folder has no index or no
    index feed yet. The pages are booked written after the index is, so
    an index is never behind the books. Returns the number of game pages
    written (0 too while another worker writes them)."""
    now = now or now_utc()
    with referee.pages.alone() as mine:
        if not mine:
            return 0  # another worker is writing them; what it misses stays behind
        folder.mkdir(parents=True, exist_ok=True)
        _sweep(folder)
        every = not all((folder / name).exists() for name in ("index.html", "index.atom"))
        behind = {b.tag: b for b in referee.pages.behind(every)}
        tables = open_tables(referee)
        ranks = standings(referee, now)
        # The index shows the open tables as they are: a table opened,
        # joined, started or closed since it was written makes it due; and
        # the standings (a player who writes "standings hide").
        index = folder / "index.html"
        moved = (_tables_digest(tables) != _tables_shown(index)
                 or _tables_digest(ranks) != _tables_shown(index, _STANDINGS_MARK))
        if not behind and not every and not moved:
            return 0
        written, relisted = [], every or moved
        games = referee.reading.status_of([b.id for b in behind.values()])
        for game, line, waits in _write_games(referee, folder, games, now):
            if waits is not None:
                continue  # its page stays behind, to be written once its package is back
            was = behind[game["tag"]]
            relisted = relisted or _shown(line) != _shown(was.listing)
            written.append(Written(was.id, was.due, line))
        # The index before the books: a pass stopped between the two
        # leaves these pages behind, and the next writes them and the
        # index again; never a game booked as listed that the index lacks.
        if relisted:
            _write_index(referee, folder,
                         referee.pages.listings({w.id: w.listing for w in written}), now,
                         tables, ranks)
        referee.pages.written(written)
        return len(written)


def _write_games(referee: Referee, folder: Path, games: Iterable[dict[str, Any]],
                 now: datetime,
                 ) -> Iterator[tuple[dict[str, Any], dict[str, Any], str | None]]:
    """Write the page and the feed of each of ``games`` (status entries),
    reading their histories and views :data:`BATCH` games at a time;
    yields each game with its line of the index, and, for a game whose
    package cannot serve it now, why (its page is not written then, and
    its line says it waits)."""
    batch: list[dict[str, Any]] = []
    for game in chain(games, [None]):
        if game is not None:
            batch.append(_public(game))
            if len(batch) < BATCH:
                continue
        if not batch:
            break
        tags = [g["tag"] for g in batch]
        histories = referee.reading.public_histories(tags)
        views = referee.reading.public_views(tags)
        for entry in batch:
            events = histories[entry["tag"]]
            waits = entry.get("waits")
            try:
                engine = guests.engine(entry["kind"])
            except Unserved as e:
                # Failed since the status was read (its view raised, for one).
                waits = waits or e.what
            if waits is None and entry["tag"] not in views:
                waits = "its game package cannot serve it"  # gone since its view was read
            if waits is not None:
                yield entry, {**_listing(entry, events), "waits": True}, waits
                continue
            try:
                _write_game(referee, folder, engine, entry, events, views[entry["tag"]], now)
            except PackageFault as e:
                # Its package raised (its page code, its page.html): its page
                # is left as it was, and the others are written.
                yield entry, {**_listing(entry, events), "waits": True}, faulted(e).what
                continue
            yield entry, _listing(entry, events), None
        batch = []


def _write_game(referee: Referee, folder: Path, engine: Game[Any], game: dict[str, Any],
                events: list[dict[str, Any]], public: dict[str, Any], now: datetime) -> None:
    tag, config = game["tag"], referee.config.referee
    title = engine.title
    # The commitment the opening published (a game from before it published
    # one has none).
    seed_sha256 = next((e["data"]["seed_sha256"] for e in events
                        if isinstance(e["data"], dict) and "seed_sha256" in e["data"]), None)
    # The players' own entropy the draws mix in (a game from a table, issue 38).
    entropy = next((e["data"]["entropy"] for e in events
                    if isinstance(e["data"], dict) and "entropy" in e["data"]), None)
    # Made whole before a file is written: what a game package's code
    # raises here is its fault (PackageFault), an OSError the disk's.
    with GAMES.guard(game["kind"], "its page"):
        shown = table(engine, public["view"], events)
        page = _page("game.html",
            game=game, title=title, table=shown, history=fold(engine, events),
            waiting=_waiting(game),
            seed_sha256=seed_sha256, seed=public["seed"], entropy=entropy,
            referee=config.name, now=now)
    feed = game_feed(game, title, events, config.address.rpartition("@")[2], config.name, now)
    _write(folder / f"{tag}.html", page)
    _write(folder / f"{tag}.atom", feed)


def _waiting(game: dict[str, Any]) -> list[dict[str, Any]]:
    """Who owes what by when, those who owe the same by the same time
    together; not a bot's timetabled turn, which is nobody's wait."""
    bots = {p["seat"] for p in game["players"] if p["bot"]}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for d in game["deadlines"]:
        if d["seat"] in bots:
            continue
        key = (d["what"], d["due_at"])
        out.setdefault(key, {"names": [], "what": d["what"], "due_at": d["due_at"]})
        out[key]["names"].append(d["name"])
    return list(out.values())


def open_tables(referee: Referee) -> list[dict[str, Any]]:
    """The club's open tables as the index lists them, oldest first: the
    names of who sits, never an address or an invitation's secret."""
    views = referee.pages.open_tables(referee.tables)
    return [{"tag": t.tag, "kind": t.kind, "title": t.title, "opener": t.opener,
             "seated": list(t.seated), "seats_left": t.seats_left,
             "expires": t.expires_at.isoformat(),
             "since": (t.opened_at or t.expires_at).isoformat()} for t in views]


def standings(referee: Referee, now: datetime) -> list[dict[str, Any]]:
    """The club's standings as the index shows them: each table's kind,
    title, season and lines (place, name, points, games, won), never a
    player who asked to be left out (``standings hide``)."""
    return [{"kind": t.kind, "title": t.title, "season": t.season, "label": t.label,
             "more": t.more, "updated": t.updated.isoformat() if t.updated else None,
             "lines": [{"place": ln.place, "name": ln.name, "points": f"{ln.points:.1f}",
                        "games": ln.games, "won": ln.wins} for ln in t.lines]}
            for t in referee.pages.standings(referee.config, now)]


def _tables_digest(tables: list[dict[str, Any]]) -> str:
    """What marks the open tables (or the standings) an index shows ("" for none)."""
    if not tables:
        return ""
    text = json.dumps(tables, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _tables_shown(index: Path, mark: str = _TABLES_MARK) -> str:
    """The mark of the open tables (or of ``mark``'s) ``index`` shows, read
    from its head."""
    try:
        with index.open(encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return ""
    start = head.find(mark)
    if start < 0:
        return ""
    start += len(mark)
    return head[start:head.find('"', start)]


def _write_index(referee: Referee, folder: Path, lines: list[dict[str, Any]],
                 now: datetime, tables: list[dict[str, Any]] | None = None,
                 ranks: list[dict[str, Any]] | None = None) -> None:
    config = referee.config.referee
    tables = open_tables(referee) if tables is None else tables
    ranks = standings(referee, now) if ranks is None else ranks
    _write(folder / "index.html", _page("index.html", games=lines, referee=config.name,
                                        now=now, tables=tables,
                                        tables_mark=_tables_digest(tables),
                                        standings=ranks,
                                        standings_mark=_tables_digest(ranks)))
    _write(folder / "index.atom", index_feed(lines, config.name, config.address, now, tables,
                                             ranks))


def _write(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: through a temporary file, taken
    away again when anything fails. A failure is an :class:`OSError` about
    ``path`` (a write or a close that found the disk full names no file)."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError):
            raise OSError(e.errno, e.strerror, os.fspath(path)) from e
        raise


def _sweep(folder: Path) -> None:
    """Take away the temporary files (``.*.tmp``) of writes that never
    ended, once a process: a failed write takes its own away, so only a
    process killed in the middle of one leaves any, and the passes that
    write a folder run one at a time (the lock file, the pass lease; with
    several workers the pages' own lock)."""
    if folder in _swept:
        return
    with os.scandir(folder) as entries:
        stale = [e.path for e in entries
                 if e.name.startswith(".") and e.name.endswith(".tmp") and e.is_file()]
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    _swept.add(folder)
