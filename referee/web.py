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
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from referee.mail.compose import TEMPLATES, format_when
from referee.service import Referee

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


def write_pages(referee: Referee, folder: Path) -> int:
    """Write ``index.html`` and one ``TAG.html`` per game into ``folder``;
    returns the number of game pages."""
    folder.mkdir(parents=True, exist_ok=True)
    games = [_public(g) for g in referee.status()]
    name = referee.config.referee.name
    for game in games:
        history = referee.public_history(game["tag"])
        _write(folder / f"{game['tag']}.html",
               _env.get_template("game.html").render(game=game, history=history, referee=name))
    _write(folder / "index.html", _env.get_template("index.html").render(games=games, referee=name))
    return len(games)


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
