"""The club's command lines, as a player writes them in a mail to the
referee (or to the list): what each asks, or why it cannot be read and
what would be right. Pure: no I/O, no database.

The grammar (issue 36; synonyms in :data:`VERBS`)::

    new KIND [with NAME, NAME ...] [KEY=VALUE ...] [teams A+B C+D] [players=N]
    join TAG          leave TAG          start TAG
    accept [TAG]      decline [TAG]      rematch          tables
    standings [KIND] [SEASON | all]      standings hide   standings show
    entropy [TAG] WORDS

``KIND`` is a kind of the games' registry (a packaged game's too); the
options are checked by the game's own ``parse_options``, so a bad one is
refused with the game's own words for what it takes. ``players=N`` is the
game's option where it has one (Goofspiel, Pure Skill), else the number of
seats wanted, within the game's range (``new miser players=5``). ``teams``
names the partners (where the game takes a ``teams`` option); its names
are invited like those after ``with``. ``TAG`` is a table's, ``KIND-tN``
(:data:`TABLE_TAG`), written bare or in brackets. ``entropy WORDS`` gives
the writer's own entropy for the draws (issue 38): in the mail that takes
their seat, or later with the table's tag (or in a reply about it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.games import GAMES, GameUnavailable, PackageFault, get_game
from referee.games.base import Game, OptionError
from referee.games.draws import ENTROPY_MAX, valid_entropy
from referee.service.play.pace import PaceError, in_short, table_options

#: A table's tag: its game's kind, "-t", and its number ("spades-t12"). A
#: game's tag never has this form (``KIND-N``), so the two never mix.
TABLE_TAG = re.compile(r"[a-z][a-z0-9-]*?-t\d+")
#: Each verb of the grammar, and the words that mean it.
VERBS: dict[str, frozenset[str]] = {
    "new": frozenset({"new", "open", "create", "seek"}),
    "join": frozenset({"join", "sit", "signon"}),
    "leave": frozenset({"leave", "unjoin", "withdraw", "signoff"}),
    "accept": frozenset({"accept", "accepted", "agree"}),
    "decline": frozenset({"decline", "declined", "refuse", "reject"}),
    "start": frozenset({"start", "begin"}),
    "rematch": frozenset({"rematch"}),
    "tables": frozenset({"tables"}),
    "standings": frozenset({"standings", "standing", "ratings", "ladder", "rankings"}),
}
_VERB = {word: verb for verb, words in VERBS.items() for word in words}
#: The verbs whose table's tag may be left out (in a reply to an invitation).
TAG_OPTIONAL = frozenset({"accept", "decline"})
#: The words of the grammar that games use for moves of their own
#: (loatcg's ``join``, ``accept``, ``withdraw``; Miser's ``accept``,
#: ``decline``): such a line is the club's only with a table's tag, or,
#: bare, where the caller knows it answers an invitation.
GAME_WORDS = frozenset({"join", "withdraw", "accept", "decline"})
#: The option that says how many seats a table wants, where the game has
#: no option of that name.
SEATS_OPTION = "players"
#: The word of a player's own entropy line.
ENTROPY = "entropy"
#: Filler after ``new KIND``: "new spades game", "new goofspiel against Bob".
_WITH = frozenset({"with", "against", "vs", "invite", "inviting"})
_FILLER = frozenset({"game", "a", "of", "table"})
#: Most names one ``new`` may invite (no game seats more).
MAX_NAMES = 12


class Unreadable(ValueError):
    """A club line that cannot be done as written; the message, one or two
    sentences, says what would be right."""


@dataclass(frozen=True)
class NewTable:
    """``new KIND ...``: the options as written (checked, ``teams`` and a
    seats-wanted ``players`` left out), the names invited as written, the
    teams as pairs of names, and the seats wanted (None: the game's)."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    teams: tuple[tuple[str, ...], ...] = ()
    seats: int | None = None


@dataclass(frozen=True)
class TableLine:
    """``join``, ``leave``, ``start``, ``accept``, ``decline`` (with a
    table's tag, or None where it may be left out), ``rematch``, ``tables``."""

    verb: str
    tag: str | None = None


@dataclass(frozen=True)
class StandingsLine:
    """``standings [KIND] [SEASON | all]``: the club's tables (every kind,
    by default; a season's key like ``2026-Q4`` or ``2026``, or ``all``
    for the all-time table alone); or ``standings hide`` / ``show``
    (``hide`` True / False): the writer left out of published tables, or
    in them again."""

    kind: str | None = None
    season: str | None = None
    hide: bool | None = None


#: A season as written after ``standings``: a year, or a year's quarter.
_STANDINGS_FILLER = _FILLER | {"for", "the", "me", "please", "thanks"}
_SEASON = re.compile(r"(\d{4})(?:-?q([1-4]))?", re.IGNORECASE)


@dataclass(frozen=True)
class EntropyLine:
    """``entropy [TAG] WORDS``: the words, whitespace made single spaces."""

    words: str
    tag: str | None = None


ClubLine = NewTable | TableLine | StandingsLine | EntropyLine


def is_table_tag(text: str) -> bool:
    return TABLE_TAG.fullmatch(text) is not None


def parse_line(line: str) -> ClubLine | None:
    """The club command ``line`` writes; None if it is none (a game's
    move, table talk, a ``join`` or ``accept offer 3`` with no table's
    tag, which a game reads as its own: :data:`GAME_WORDS`).

    :raises Unreadable: it starts like a club command but cannot be done
        as written (an unknown kind, a bad option, no tag).
    """
    head = line.split(None, 1)
    if head and head[0].casefold() == ENTROPY:
        return _entropy(head[1] if len(head) > 1 else "")
    words = [part for word in line.split()
             for part in ([word] if "=" in word else word.replace(",", " , ").split())]
    if not words:
        return None
    verb = _VERB.get(words[0].casefold())
    rest = words[1:]
    if verb is None and len(words) >= 2 and " ".join(w.casefold() for w in words[:2]) in (
            "open tables", "list tables", "play again"):
        verb, rest = ("rematch" if words[0].casefold() == "play" else "tables"), words[2:]
    if verb is None:
        return None
    if verb == "new":
        return _new(rest, line)
    if verb == "standings":
        return _standings([w for w in rest if w != ","], line)
    if verb in ("rematch", "tables"):
        return TableLine(verb) if not [w for w in rest if w != ","] else None
    tags = [_tag(w) for w in rest if w != ","]
    if tags and len(tags) == 1 and tags[0] is not None:
        return TableLine(verb, tags[0])
    if words[0].casefold() in GAME_WORDS:
        # Without a table's tag it is no club line: a game's own ``join``
        # ("deal me in"), ``accept offer 3``; a bare ``accept`` is the
        # club's only in a reply to an invitation (the caller knows).
        return TableLine(verb) if not tags and verb in TAG_OPTIONAL else None
    if not tags and verb in TAG_OPTIONAL:
        return TableLine(verb)
    if not tags:
        raise Unreadable(f"Write the table's tag after {words[0]}, like "
                         f"'{verb} spades-t12'; 'tables' lists the open tables.")
    raise Unreadable(f"'{' '.join(rest)}' is no table's tag; write {verb} and one tag, "
                     f"like '{verb} spades-t12'.")


def read(lines: Iterable[str]) -> list[ClubLine | Unreadable]:
    """The club lines of a mail, in order, each read or why not; lines
    that are no club command are left out."""
    out: list[ClubLine | Unreadable] = []
    for line in lines:
        try:
            found = parse_line(line)
        except Unreadable as e:
            out.append(e)
            continue
        if found is not None:
            out.append(found)
    return out


def _entropy(after: str) -> EntropyLine:
    """``entropy [TAG] WORDS`` after its first word."""
    first, *rest = after.split(None, 1) or [""]
    tag = _tag(first) if first else None
    text = " ".join((rest[0] if rest else "").split() if tag else after.split())
    if not text:
        raise Unreadable("Write your words after 'entropy', like 'entropy my cat "
                         "Tibbles, 1987'; with a table's tag where the mail takes no "
                         "seat: 'entropy spades-t12 my cat Tibbles'.")
    if not valid_entropy(text):
        raise Unreadable(f"Your entropy must be at most {ENTROPY_MAX} printable "
                         f"characters on one line; yours has {len(text)}"
                         + ("." if len(text) > ENTROPY_MAX else ", some not printable."))
    return EntropyLine(text, tag)


def _tag(word: str) -> str | None:
    text = word.strip("[]<>()\"'.,;:!?").casefold()
    return text if is_table_tag(text) else None


def kinds() -> list[str]:
    """Every kind a table may be opened for, as the refusal lists them."""
    return sorted(GAMES)


def engine_of(kind: str) -> Game[Any]:
    """The game of ``kind``; :class:`Unreadable` with the kinds there are."""
    try:
        return get_game(kind)
    except GameUnavailable as e:
        raise Unreadable(f"{kind} cannot be played now: {e}.") from None
    except PackageFault as e:
        raise Unreadable(f"{kind} cannot be played now: {e.line}.") from None
    except KeyError:
        raise Unreadable(f"There is no game '{kind}' here; the games are "
                         f"{', '.join(kinds())}.") from None


def _kind(rest: list[str]) -> tuple[str, list[str]]:
    """The kind ``rest`` starts with (a word, or two: "pure skill"), and
    the words after it."""
    known = set(kinds())
    for n in (2, 1):
        if len(rest) >= n:
            written = "-".join(w.casefold() for w in rest[:n]).replace("_", "-")
            if written in known or n == 1:
                return written, rest[n:]
    raise Unreadable(f"Write the game after new, like 'new spades'; the games are "
                     f"{', '.join(kinds())}.")


def _new(rest: list[str], line: str) -> NewTable:
    while rest and rest[0].casefold() in _FILLER:
        rest = rest[1:]
    kind, rest = _kind(rest)
    engine = engine_of(kind)
    options: dict[str, str] = {}
    names: list[str] = []
    teams: list[tuple[str, ...]] = []
    name: list[str] = []
    mode = ""
    for word in rest:
        low = word.casefold()
        if mode == "with" and name and ("=" in word or low == "teams"):
            names.append(" ".join(name))
            name = []
        if "=" in word:
            key, _, value = word.partition("=")
            key = key.strip().casefold()
            if key == "teams":
                teams += _pairs(value.replace(",", " ").split())
            else:
                options[key] = value.strip()
            mode = ""
        elif low == "teams":
            mode = "teams"
        elif low in _WITH or (low == "and" and mode == "with") or word == ",":
            if mode == "with" and name:
                names.append(" ".join(name))
            name = []
            mode = "with" if low in _WITH or mode == "with" else mode
        elif mode == "teams":
            teams += _pairs([word])
        elif mode == "with":
            name.append(word)
        elif low in _FILLER:
            continue
        else:
            raise Unreadable(f"'{word}' in '{line.strip()}' is neither an option (KEY=VALUE) "
                             f"nor a name after 'with': write e.g. 'new {kind} with Bob' or "
                             f"'new {kind} {_example(engine)}'.")
    if mode == "with" and name:
        names.append(" ".join(name))
    if len(names) > MAX_NAMES:
        raise Unreadable(f"At most {MAX_NAMES} players may be invited at once.")
    checked, seats = _options(engine, options, teams)
    return NewTable(kind, checked, tuple(names), tuple(teams), seats)


def _standings(rest: list[str], line: str) -> StandingsLine:
    """What ``standings`` asks, from the words after it."""
    words = [w.strip("[]<>()\"'.,;:!?") for w in rest]
    words = [w for w in words if w and w.casefold() not in _STANDINGS_FILLER]
    low = [w.casefold() for w in words]
    if low in (["hide"], ["show"]):
        return StandingsLine(hide=low[0] == "hide")
    season: str | None = None
    if words and (low[-1] in ("all", "all-time", "alltime")
                  or _SEASON.fullmatch(words[-1])):
        last = words.pop()
        found = _SEASON.fullmatch(last)
        season = "all" if found is None else (
            f"{found[1]}-Q{found[2]}" if found[2] else found[1])
    kind = None
    if words:
        kind, left = _kind(words)
        if left:
            raise Unreadable(f"'{line.strip()}' cannot be read: write 'standings', "
                             "'standings spades', 'standings spades 2026-Q4' or "
                             "'standings hide'.")
        if kind not in kinds():
            raise Unreadable(f"There is no game '{kind}' here; the games are "
                             f"{', '.join(kinds())}.")
    return StandingsLine(kind, season)


def _pairs(words: list[str]) -> list[tuple[str, ...]]:
    pairs = []
    for word in words:
        pair = tuple(n.strip() for n in word.split("+"))
        if len(pair) < 2 or not all(pair):
            raise Unreadable(f"teams: '{word}' is no team; join the partners with '+', "
                             "like 'teams alice+carol bob+dave'.")
        pairs.append(pair)
    return pairs


def _options(engine: Game[Any], options: dict[str, str],
             teams: list[tuple[str, ...]]) -> tuple[dict[str, str], int | None]:
    """The options as written, checked by the game, and the seats wanted
    where ``players`` is no option of the game's."""
    raw = {k: v for k, v in options.items() if k != SEATS_OPTION}
    # The referee's own options (pace.OPTIONS: autoplay, orders, weekends,
    # away, rated) are checked here and kept as written; the game reads the rest.
    ours = dict(raw)
    try:
        table_options(ours)
    except PaceError as e:
        raise Unreadable(str(e)) from None
    try:
        defaults = engine.parse_options(ours)
        if teams:
            engine.parse_options({**ours, "teams": ",".join("+".join(p) for p in teams)})
    except OptionError as e:
        raise Unreadable(_option_refusal(engine, str(e))) from None
    except PackageFault as e:
        raise Unreadable(f"{engine.kind} cannot be played now: {e.line}.") from None
    if SEATS_OPTION not in options:
        return raw, None
    wanted = options[SEATS_OPTION]
    if SEATS_OPTION in defaults:  # the game's own option
        try:
            engine.parse_options({**ours, SEATS_OPTION: wanted})
        except OptionError as e:
            raise Unreadable(_option_refusal(engine, str(e))) from None
        return {**raw, SEATS_OPTION: wanted}, None
    low, high = engine.seat_count(defaults)
    need = str(low) if low == high else f"{low} to {high}"
    if not wanted.strip().isdecimal() or not low <= int(wanted) <= high:
        raise Unreadable(f"players: {wanted!r}: {engine.title} takes {need} players.")
    return raw, int(wanted)


def _option_refusal(engine: Game[Any], said: str) -> str:
    """The game's refusal of an option, and what each option takes."""
    said = said.rstrip(".") + "."
    helps = "; ".join(f"{k}: {v}" for k, v in engine.option_help.items())
    ours = f" Every game takes {in_short()} too."
    return (f"{said} The options of {engine.title}: {helps}.{ours}" if helps
            else f"{said}{ours}")


def _example(engine: Game[Any]) -> str:
    first = next(iter(engine.option_help), "")
    return f"{first}=..." if first else "with Bob, Carol"
