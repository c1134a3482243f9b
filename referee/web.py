"""Game pages: each game's public state and history as static HTML.

Rule text 000 (6) asks the referee to keep "a web page of the state of the
game, and the history of each move". Only public facts go in: the engine's
summary, the seats' names (never addresses) and the events marked public.
Each file is written to a temporary name and renamed, so a web server never
serves half a page.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from referee.mail.compose import TEMPLATES, format_when
from referee.service import Referee
from referee.service.pages import Written

#: Games whose histories are read at a time.
BATCH = 500

_env = Environment(
    loader=FileSystemLoader(TEMPLATES / "web"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["when"] = format_when


def _public(game: dict[str, Any]) -> dict[str, Any]:
    """A status entry without what is not for the public: addresses, bounces."""
    players = [{k: p[k] for k in ("seat", "name", "bot")} for p in game["players"]]
    return {**game, "players": players}


def _listing(game: dict[str, Any]) -> dict[str, Any]:
    """A game's line of the index page."""
    return {"tag": game["tag"], "status": game["status"],
            "players": [p["name"] for p in game["players"]], "result": game.get("result")}


def write_pages(referee: Referee, folder: Path) -> int:
    """Write ``index.html`` and one ``TAG.html`` per game into ``folder``
    (``referee pages``: every page, wherever asked); returns the number of
    game pages. Books nothing: the pages of ``[web] path`` are ``publish``'s."""
    folder.mkdir(parents=True, exist_ok=True)
    games = referee.reading.iter_status()
    lines = [_listing(game) for game in _write_games(referee, folder, games)]
    _write_index(referee, folder, lines)
    return len(lines)


def publish(referee: Referee, folder: Path) -> int:
    """After a pass, write into ``folder`` (``[web] path``) the pages of the
    games that changed since they were last written, and the index if a
    line of it changed; every page when the folder has no index yet.
    Returns the number of game pages written (0 too while another worker
    writes them)."""
    with referee.pages.alone() as mine:
        if not mine:
            return 0  # another worker is writing them; what it misses stays behind
        folder.mkdir(parents=True, exist_ok=True)
        every = not (folder / "index.html").exists()
        behind = {b.tag: b for b in referee.pages.behind(every)}
        if not behind and not every:
            return 0
        written, relisted = [], every
        games = referee.reading.status_of([b.id for b in behind.values()])
        for game in _write_games(referee, folder, games):
            was = behind[game["tag"]]
            line = _listing(game)
            relisted = relisted or line != was.listing
            written.append(Written(was.id, was.due, line))
        referee.pages.written(written)
        if relisted:
            _write_index(referee, folder, referee.pages.listings())
        return len(written)


def _write_games(referee: Referee, folder: Path,
                 games: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Write the page of each of ``games`` (status entries), reading their
    histories :data:`BATCH` games at a time; yields each game written."""
    page = _env.get_template("game.html")
    name = referee.config.referee.name
    batch: list[dict[str, Any]] = []
    for game in chain(games, [None]):
        if game is not None:
            batch.append(_public(game))
            if len(batch) < BATCH:
                continue
        if not batch:
            break
        histories = referee.reading.public_histories([g["tag"] for g in batch])
        for entry in batch:
            _write(folder / f"{entry['tag']}.html",
                   page.render(game=entry, history=histories[entry["tag"]], referee=name))
            yield entry
        batch = []


def _write_index(referee: Referee, folder: Path, lines: list[dict[str, Any]]) -> None:
    _write(folder / "index.html", _env.get_template("index.html").render(
        games=lines, referee=referee.config.referee.name))


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
