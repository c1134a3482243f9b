"""Each game as its table, for its page: what the template of its kind
(``templates/web/_KIND.html``) shows, and the scores over the rounds for
its chart. Built from the engine's view for no seat and the public events
alone, so a page can show nothing a seat keeps secret.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS
from referee.web.chart import Chart, chart

View = Mapping[str, Any]


@dataclass(frozen=True)
class Table:
    """A game's table: its template, the data it shows, its score chart."""

    template: str
    data: dict[str, Any]
    chart: Chart | None
    #: Commitments and what was revealed, beyond the seed's (which every game has).
    fairness: dict[str, Any] = field(default_factory=dict)


def card(code: str) -> dict[str, str]:
    """A French card (``QH``) as a page shows it: its rank and suit symbol
    always written out (``Q♥``), the suit's name for screen readers, and
    a class that colours the red suits."""
    rank, suit = code[:-1], code[-1]
    return {"code": code, "text": f"{rank}{SUIT_SYMBOLS[suit]}",
            "title": f"{rank} of {SUIT_NAMES[suit]}", "red": str(suit in "HD").lower()}


def _bidding(view: View, game: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Table:
    """Goofspiel and Pure Skill (rule texts 003, 000): the prize, each
    player's points, prizes won and cards left; the rounds resolved."""
    played = view.get("played", [])
    players = [{**p, "take": _words(p["take"]), "pack": _words(p["pack"]),
                "symbol": _symbol(p["suit"])} for p in view["players"]]
    names = [p["name"] for p in view["players"]]
    totals = [0] * len(names)
    course: list[list[int | None]] = [[0] for _ in names]
    for r in played:
        if r["winner"] is not None:
            totals[names.index(r["winner"])] += r["won_points"]
        for i, t in enumerate(totals):
            course[i].append(t)
    data = {
        "round": view["round"], "total_rounds": view["total_rounds"],
        "prize": None if view["over"] else view["prize"],
        "carry": _words(view["carry"]), "carry_points": view["carry_points"],
        "players": players, "played": list(reversed(played)),
        "winner": view["winner"], "clinched": view["clinched"], "over": view["over"],
        "tie_rule": view["tie_rule"], "take_bids": view["take_bids"],
    }
    labels = ["start", *(str(r["number"]) for r in played)]
    return Table("_bidding.html", data,
                 chart("Points after each round", "points", labels,
                       list(zip(names, course, strict=True))))


def _spades(view: View, game: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Table:
    """Spades (rule text 001): the two teams, the four players around the
    table in the order they play, bids against tricks, the trick on the
    table or the last one taken, bags; the rounds scored."""
    players = view["players"]
    trick = [{**p, **card(p["card"])} for p in view["trick"]]
    last = view["tricks"][-1] if view["tricks"] else None
    if last is not None:
        last = {**last, "plays": [{**p, **card(p["card"])} for p in last["plays"]],
                "winning": card(last["winning_card"])}
    by_name = {p["name"]: p for p in players}
    for p in trick:
        by_name[p["name"]] = {**by_name[p["name"]], "played": p}
    seats = [by_name[p["name"]] for p in players]
    rounds = [{"round": r["round"], "teams": r["teams"]} for r in view["rounds"]]
    course = [[0, *(r["teams"][t]["score"] for r in view["rounds"])] for t in (0, 1)]
    labels = ["start", *(str(r["round"]) for r in view["rounds"])]
    teams = [f"Team {t['number']} ({' & '.join(t['names'])})" for t in view["teams"]]
    deals = [{"round": e["data"]["round"], "hands": e["data"]["hand_sha256"]}
             for e in events if e["kind"] == "deal" and "hand_sha256" in e["data"]]
    data = {
        **{k: view[k] for k in ("round", "target", "phase", "teams", "to_move", "what",
                                "trick_number", "game_over", "winners", "end_reason")},
        # Around the table, clockwise in the order of play: partners face each other.
        "north": seats[0], "east": seats[1], "south": seats[2], "west": seats[3],
        "trick": trick, "last": last, "rounds": list(reversed(rounds)),
    }
    return Table("_spades.html", data,
                 chart("Team points after each round", "points", labels,
                       list(zip(teams, course, strict=True))),
                 {"deals": list(reversed(deals))})


def _miser(view: View, game: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Table:
    """Miser (rule text 004): each player's pennies and cards, the centre,
    what the turn under way has come to; the turns resolved."""
    names = [p["name"] for p in view["players"]]
    course = _pennies(view, names)
    labels = ["start", *(str(h["turn"]) for h in view["history"])]
    data = {
        **{k: view[k] for k in ("turn_number", "turn_player", "stage", "players", "centre",
                                "pennies_each", "contract", "attack", "game_over",
                                "winners", "result", "slush_count", "removed_count")},
        "auction": None if view["auction"] is None else {
            **view["auction"],
            "bids": [{**b, **card(b["card"])} for b in view["auction"]["bids"]]},
        "turns": [_turn(h) for h in reversed(view["history"])],
    }
    return Table("_miser.html", data,
                 None if course is None else chart(
                     "Pennies after each turn", "pennies", labels,
                     list(zip(names, course, strict=True))))


def _pennies(view: View, names: list[str]) -> list[list[int | None]] | None:
    """Each player's pennies after each resolved turn, worked out from the
    public reports of the turns (rule text 004: wagers and stakes go into
    the centre, a pass pays 3 into it, the taker takes it); None if they do
    not come to the pennies the players hold now (a report this does not
    know how to read), so no chart is drawn rather than a wrong one."""
    purse = {n: int(view["pennies_each"]) for n in names}
    course: list[list[int | None]] = [[purse[n]] for n in names]
    for h in view["history"]:
        kind = h["kind"]
        if kind == "pass":
            purse[h["name"]] -= h["paid"]
        elif kind == "contract":
            purse[h["by"]] -= h["wagers"][0]
            purse[h["partner"]] -= h["wagers"][1]
            purse[h["victim"]] -= h["stake"]
            for taker in h["takers"]:
                purse[taker] += h["share"]
        elif kind == "attack":
            purse[h["attacker"]] -= h["wager"]
            purse[h["victim"]] -= h["stake"]
            if h["taker"] is not None:
                purse[h["taker"]] += h["pot"]
        elif kind == "auction":
            if h.get("winner") is not None:
                purse[h["winner"]] += h["pot"]
            for b in h["bids"]:
                if b["outcome"] == "paid":
                    purse[b["name"]] -= b["pennies"]
        else:
            return None
        for i, n in enumerate(names):
            course[i].append(purse[n])
    # What the turn under way has put into the centre so far comes back
    # out of it: it is in no report yet.
    now = {p["name"]: p["pennies"] for p in view["players"]}
    if (c := view["contract"]) is not None:
        now[c["by"]] += c["wagers"][0]
        now[c["partner"]] += c["wagers"][1]
        now[c["victim"]] += c["stake"]
    if (a := view["attack"]) is not None:
        now[a["attacker"]] += a["wager"]
        now[a["victim"]] += a["stake"]
    if purse != now:
        return None
    return course


def _turn(h: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved Miser turn, its cards as cards."""
    out = dict(h)
    if "cards" in h:
        out["cards"] = [{**c, **card(c["card"])} for c in h["cards"]]
    if "sides" in h:
        out["sides"] = [{**s, "cards": [{**c, **card(c["card"])} for c in s["cards"]]}
                        for s in h["sides"]]
    if "bids" in h:
        out["bids"] = [{**b, **card(b["card"])} for b in h["bids"]]
    return out


def _loatcg(view: View, game: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Table:
    """The Land of Agora tournament (rule text 002): each member's Hand
    Scores as each report published them (never the current ones, ruling
    TCG-20), the Discard Pile, the instructions shown, the open public
    offers; the Final Report once frozen, with the salt and the text the
    digest was made from."""
    reports = view["reports"]
    final = view.get("final")
    columns = [f"Report {r['number']}" for r in reports] + (["Final"] if final else [])
    scores_by = [{s["name"]: s["score"] for s in r["scores"]} for r in reports]
    if final:
        scores_by.append({h["name"]: h["score"] for h in final["hands"]})
    members = list(view["members"])
    for scores in scores_by:  # a member since gone is still in the reports
        members += [n for n in scores if n not in members]
    rows = [{"name": n, "scores": [s.get(n) for s in scores_by]} for n in members]
    data = {
        **{k: view[k] for k in ("round", "rounds", "next_event", "frozen", "winners",
                                "digest", "offers", "members")},
        "columns": columns, "rows": rows,
        "reports": list(reversed(reports)),
        "discard_pile": reports[-1]["discard_pile"] if reports else None,
        "final": final,
    }
    labels = [c.removeprefix("Report ") for c in columns]
    return Table("_loatcg.html", data,
                 chart("Hand Scores as each report published them", "points", labels,
                       [(r["name"], r["scores"]) for r in rows]),
                 {"final": final} if final else {})


def _words(text: str) -> list[str]:
    """A view's list of cards as words (``"1 2 5"``; ``"(none)"`` for none)."""
    return [] if text.startswith("(") else text.split()


def _symbol(suit_name: str | None) -> str | None:
    by_name = {name: SUIT_SYMBOLS[code] for code, name in SUIT_NAMES.items()}
    return by_name.get(suit_name) if suit_name else None


Builder = Callable[[View, Mapping[str, Any], Sequence[Mapping[str, Any]]], Table]
#: The table of each kind of game.
BUILDERS: dict[str, Builder] = {
    "goofspiel": _bidding, "pure-skill": _bidding, "spades": _spades,
    "miser": _miser, "loatcg": _loatcg,
}


def table(kind: str, view: View, game: Mapping[str, Any],
          events: Sequence[Mapping[str, Any]]) -> Table | None:
    """The table of a game of ``kind`` (None for a kind with none: its page
    shows its summary)."""
    builder = BUILDERS.get(kind)
    return builder(view, game, events) if builder else None
