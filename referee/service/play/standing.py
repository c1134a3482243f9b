"""Moves the referee makes for a player who did not write them (issue 37),
as a game's rows say they may be made: a forced move played at once
(``Game.forced_action``) unless the player wrote ``autoplay off``, and a
standing order followed (``Game.parse_order``) unless the game was made
with ``--option orders=off``. Either is off for a whole game with
``--option autoplay=off`` / ``orders=off`` (a benchmark's "before", a
tournament that wants every move written).

Pure: reads the rows it is given.
"""

from __future__ import annotations

from typing import Any

from referee.service.play.pace import AUTOPLAY, ORDERS
from referee.store import models as m

#: The game options of the service's own that turn these off for a game
#: (in :data:`referee.service.play.pace.OPTIONS`, with the others).
STANDING_OPTIONS = (AUTOPLAY, ORDERS)
#: How the action log marks a move of each (``ActionLog.source``).
AUTO = "auto"
ORDER = "order"


def autoplay_on(game: m.Game, seat: m.Seat) -> bool:
    """Whether ``seat``'s forced moves play themselves: the player's own
    ``autoplay on``/``off``, else the game's option (on unless ``off``)."""
    if seat.bot:
        return False
    if seat.autoplay is not None:
        return seat.autoplay
    return str(game.options.get("autoplay", "on")) != "off"


def orders_on(game: m.Game) -> bool:
    """Whether the game takes standing orders (on unless ``orders=off``)."""
    return str(game.options.get("orders", "on")) != "off"


def orders_of(seat: m.Seat) -> list[Any]:
    """``seat``'s standing orders, the oldest first (a copy to change)."""
    return list(seat.orders or [])
