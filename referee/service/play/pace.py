"""The referee's own options of a game, not the game's rules: the one
table (:data:`OPTIONS`) that ``game new --option``, ``new KIND`` by mail,
a rematch, ``referee games``, a refused option's answer and the README
read. ``autoplay=off`` and ``orders=off`` (no move plays itself, no
standing order: issue 37), ``weekends=off`` (its deadlines stand still on
Saturday and Sunday, UTC), ``away=no`` (no absence in it: a
tournament's), and ``rated=no``, a game left out of the club's standings
(issue 40). Taken out of the options before the game reads its own. Pure.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from referee.service.play import weekends

#: The game options that turn the referee's moves for a player off.
AUTOPLAY, ORDERS = "autoplay", "orders"
ON, OFF = "on", "off"
#: The game option that refuses absence, and its values.
AWAY = "away"
#: The game option that leaves a game out of the club's standings.
RATED = "rated"
YES, NO = "yes", "no"
#: Each of the referee's own options of a game, the values it takes (the
#: default first), and what the other value does.
OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    AUTOPLAY: ((ON, OFF), "off: no forced move plays itself, for any seat"),
    ORDERS: ((ON, OFF), "off: the game takes no standing orders"),
    weekends.OPTION: ((weekends.ON, weekends.OFF),
                      "off: deadlines stand still on Saturday and Sunday (UTC)"),
    AWAY: ((YES, NO), "no: players may not be away from this game (a tournament's)"),
    RATED: ((YES, NO), "no: the game does not count in the club's standings"),
}


class PaceError(ValueError):
    """A pace option with a value it does not take; the message says which."""


def table_options(raw: MutableMapping[str, str]) -> dict[str, str]:
    """The pace options of ``raw``, taken out of it and checked; those left
    at their default are not kept. Raises :class:`PaceError`."""
    out: dict[str, str] = {}
    for key, (values, _) in OPTIONS.items():
        if key not in raw:
            continue
        value = str(raw.pop(key)).strip().lower()
        if value not in values:
            raise PaceError(f"Option {key}: one of {', '.join(values)}; got {value!r}.")
        if value != values[0]:
            out[key] = value
    return out


def help_lines() -> list[str]:
    """Each option as ``referee games`` and the README list it:
    "  weekends=on|off   off: deadlines stand still ..."."""
    return [f"  {f'{key}={chr(124).join(values)}':<18} {said}"
            for key, (values, said) in OPTIONS.items()]


def in_short() -> str:
    """The options in one line, for an answer: "autoplay=on|off, ..."."""
    return ", ".join(f"{key}={'|'.join(values)}" for key, (values, _) in OPTIONS.items())


def rated(options: dict[str, object]) -> bool:
    """Whether a game with these options counts in the standings (not ``rated=no``)."""
    return options.get(RATED) != NO


def refuses_absence(options: dict[str, object]) -> bool:
    """Whether a game with these options refuses absence (``away=no``)."""
    return options.get(AWAY) == NO
