"""What each seat and the public may see of a game of Spades, rule text 001
(Spades): the views, the summary for ``referee status`` and the data each
mail template gets. Ruling SP-17 (docs/rulings.md): no unplayed card is
ever public; a seat sees its own hand and nobody else's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import JSON, Action, Audience, Course, Notice, PageTable
from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS
from referee.games.cards import card_face as card
from referee.games.spades.bot import SeatView
from referee.games.spades.rules import (
    BIDDING,
    OVER,
    PLAYERS,
    PLAYING,
    SUIT_ORDER,
    TRICKS_PER_ROUND,
    VALID_BIDS,
    SpadesRules,
    SpadesState,
    Trick,
    bid_text,
    bidding_order,
    card_text,
    dealt_hand,
    hand_commitment,
    hand_lines,
    legal_plays,
    sort_hand,
    team_label,
    team_members,
    team_of,
)


class SpadesViews:
    """What each seat and the public may see of a game of Spades: OpenSpiel's
    Observer, an object the game holds. It is given each state to show, and
    the rules (:class:`~referee.games.spades.rules.SpadesRules`, which the
    views ask for a result's words) it shows it by; it makes the data of
    the notices the rules send (:class:`~referee.games.spades.rules.SpadesMail`)."""

    def __init__(self, rules: SpadesRules) -> None:
        self.rules = rules

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        """The game as its table for its page (:func:`spades_page`)."""
        return spades_page(view, events)


    # -- what people see ------------------------------------------------------

    def view(self, state: SpadesState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no unplayed card (ruling SP-17); a seat's
        view adds that seat's own hand and legal plays under ``you``, nobody
        else's."""
        view = self.common(state)
        view["tricks"] = [self.trick(state, t, n) for n, t in enumerate(state.tricks, 1)]
        view["rounds"] = list(state.reports)
        view["valid_bids"] = list(VALID_BIDS)
        if seat is not None and seat in state.order:
            view["you"] = self._you(state, state.order.index(seat))
        return view

    def summary(self, state: SpadesState) -> dict[str, JSON]:
        due = None if state.phase == OVER else state.names[state.turn]
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": {team_label(state, t): state.scores[t] for t in (0, 1)},
            "bags": {team_label(state, t): state.bags[t] for t in (0, 1)},
            "bids": {
                state.names[p]: state.bids[p] for p in range(PLAYERS) if state.bids[p] is not None
            },
            "to_move": due,
            "over": state.phase == OVER,
            "result": self.rules._result_text(state) if state.phase == OVER else None,
        }

    def status(self, state: SpadesState) -> str:
        """The round, each team's score and bags against the target, the
        bids, the tricks taken and the trick on the table (ruling SP-17: no
        unplayed card); the result once over."""
        s = state
        teams = "; ".join(f"{team_label(s, t)} {s.scores[t]} points, {s.bags[t]} "
                          f"bag{'s' if s.bags[t] != 1 else ''}" for t in (0, 1))
        if s.phase == OVER:
            return f"The game is over: {self.rules._result_text(s)}\nFinal scores: {teams}."
        lines = [f"Round {s.round}, in a game to {s.target}.", f"Scores: {teams}."]
        bids = [f"{s.names[p]} {bid_text(bid)}" for p in bidding_order(s)
                if (bid := s.bids[p]) is not None]
        if s.phase == BIDDING:
            lines.append(f"Bidding: {', '.join(bids)}; {s.names[s.turn]} bids next." if bids
                         else f"Bidding: {s.names[s.turn]} bids first.")
        else:
            lines.append(f"Bids: {', '.join(bids)}.")
            lines.append("Tricks taken: " + ", ".join(
                f"team {t + 1} {sum(s.tricks_won[p] for p in team_members(t))} (bid "
                f"{sum(s.bids[p] or 0 for p in team_members(t))})" for t in (0, 1))
                + f"; {len(s.tricks)} of {TRICKS_PER_ROUND} tricks played.")
            number = len(s.tricks) + 1
            if s.trick:
                played = ", ".join(f"{s.names[(s.leader + i) % PLAYERS]} {card_text(c)}"
                                   for i, c in enumerate(s.trick))
                lines.append(f"Trick {number}: {played}; {s.names[s.turn]} plays next.")
            else:
                lines.append(f"Trick {number}: {s.names[s.turn]} leads.")
        misplays = [f"team {t + 1} {s.hand_misplays[t]} this round, {s.game_misplays[t]} "
                    "this game" for t in (0, 1) if s.game_misplays[t]]
        if misplays:
            lines.append(f"Misplays: {'; '.join(misplays)}.")
        if s.conceded:
            lines.append(f"Conceded: {', '.join(s.names[p] for p in s.conceded)} (the game "
                         "ends when both partners concede).")
        return "\n".join(lines)

    # -- the data of the notices ----------------------------------------------

    def common(self, s: SpadesState) -> dict[str, JSON]:
        """The public facts every notice and view carries."""
        over = s.phase == OVER
        winners = [] if s.winner is None else [s.names[p] for p in team_members(s.winner - 1)]
        what = None
        if not over:
            what = "a bid" if s.phase == BIDDING else f"a card to trick {len(s.tricks) + 1}"
        return {
            "round": s.round,
            "target": s.target,
            "phase": s.phase,
            "players": [
                {
                    "number": p + 1,
                    "seat": s.order[p],
                    "name": s.names[p],
                    "team": team_of(p) + 1,
                    "bid": s.bids[p],
                    "tricks": s.tricks_won[p],
                    "cards_left": len(s.hands[p]),
                    "conceded": p in s.conceded,
                }
                for p in range(PLAYERS)
            ],
            "teams": [
                {
                    "number": t + 1,
                    "names": [s.names[p] for p in team_members(t)],
                    "score": s.scores[t],
                    "bags": s.bags[t],
                    "bid": sum(s.bids[p] or 0 for p in team_members(t)),
                    "tricks": sum(s.tricks_won[p] for p in team_members(t)),
                    "misplays_hand": s.hand_misplays[t],
                    "misplays_game": s.game_misplays[t],
                }
                for t in (0, 1)
            ],
            "bidding_order": [s.names[p] for p in bidding_order(s)],
            "to_move": None if over else s.names[s.turn],
            "what": what,
            "trick_number": min(len(s.tricks) + 1, TRICKS_PER_ROUND),
            "trick": [
                {"name": s.names[(s.leader + i) % PLAYERS], "card": c, "card_text": card_text(c)}
                for i, c in enumerate(s.trick)
            ],
            "led_suit": SUIT_NAMES[s.trick[0][-1]] if s.trick else None,
            "game_over": over,
            "winning_team": s.winner,
            "winners": winners,
            "end_reason": s.end_reason,
        }

    def _you(self, s: SpadesState, player: int) -> dict[str, JSON]:
        """What only ``player`` may see: eir hand and legal plays."""
        hand = sort_hand(s.hands[player])
        mine = s.phase == PLAYING and s.turn == player
        legal = legal_plays(hand, s.trick) if mine else []
        by_suit = [
            {
                "suit": suit,
                "symbol": SUIT_SYMBOLS[suit],
                "name": SUIT_NAMES[suit],
                "ranks": [c[:-1] for c in hand if c[-1] == suit],
            }
            for suit in SUIT_ORDER
        ]
        return {
            "name": s.names[player],
            "seat": s.order[player],
            "number": player + 1,
            "team": team_of(player) + 1,
            "hand": hand,
            "hand_by_suit": by_suit,
            "hand_text": "\n".join(hand_lines(hand)),
            "your_move": s.phase != OVER and s.turn == player,
            "legal": legal,
            "legal_text": " ".join(card_text(c) for c in legal),
        }

    def trick(self, s: SpadesState, trick: Trick, number: int) -> dict[str, JSON]:
        """Completed trick ``number``: who led, the cards in play order and
        who won with which card."""
        plays = [
            {"name": s.names[(trick.leader + i) % PLAYERS], "card": c, "card_text": card_text(c)}
            for i, c in enumerate(trick.cards)
        ]
        win = trick.cards[(trick.winner - trick.leader) % PLAYERS]
        return {
            "number": number,
            "leader": s.names[trick.leader],
            "plays": plays,
            "winner": s.names[trick.winner],
            "winning_card": win,
            "winning_card_text": card_text(win),
        }

    def hand_notice(self, s: SpadesState, player: int, reason: str) -> Notice:
        """The ``hand`` mail to ``player`` alone, after a deal or on request."""
        # The deal's commitment opens with these (ruling SP-17): the hand as
        # dealt, as the commitment writes it, and the player's salt; asked
        # for later in the round too, with the cards played put back.
        dealt = dealt_hand(s, player)
        opens = bool(s.hand_salts) and len(dealt) == 13 \
            and hand_commitment(dealt, s.hand_salts[player]) == s.hand_sha256[player]
        context = {
            **self.common(s),
            "you": self._you(s, player),
            "reason": reason,
            "valid_bids": list(VALID_BIDS),
            "hand_cards": " ".join(hand_lines(dealt)),
            "hand_salt": s.hand_salts[player] if opens else None,
        }
        return Notice(Audience.only(s.order[player]), "hand", context)

    def your_turn(self, s: SpadesState, misplay: dict[str, JSON] | None = None) -> Notice:
        """The ``your_turn`` mail to the player due, with eir misplay if e
        must play again."""
        context = {
            **self.common(s),
            "you": self._you(s, s.turn),
            "valid_bids": list(VALID_BIDS),
            "misplay": misplay,
        }
        return Notice(Audience.only(s.order[s.turn]), "your_turn", context)

    def receipt(self, state: SpadesState, seat: int, moves: Sequence[Action]) -> str:
        """A bid or a card answered at once: bids and cards are public, and
        so is whose turn it is, so it says who is to move next."""
        what = "bid" if moves and moves[-1].verb == "bid" else "card"
        said = [f"Your {what} is in."]
        if state.phase == BIDDING:
            said.append(f"{sum(b is not None for b in state.bids)} of {PLAYERS} bids are in.")
        elif state.phase == PLAYING and state.trick:
            said.append(f"Trick {len(state.tricks) + 1}: {len(state.trick)} of {PLAYERS} "
                        "cards are in.")
        if state.phase != OVER:
            nxt = state.names[state.turn]
            said.append(f"{nxt} is to {'bid' if state.phase == BIDDING else 'play'} next; "
                        "you hear from the referee when you are to act again or the round "
                        "is over.")
        return " ".join(said)

    def asks(self, state: SpadesState, seat: int) -> str | None:
        """A bid in the bidding, else a card."""
        if state.phase == OVER or state.order[state.turn] != seat:
            return None
        return "your bid" if state.phase == BIDDING else "your card"


# -- what a bot sees ---------------------------------------------------------------


def seat_view(state: SpadesState, player: int) -> SeatView:
    """What ``player`` (an index in the playing order) knows: eir own hand
    and the public play of the round, never another hand (SP-17)."""
    played = [c for t in state.tricks for c in t.cards] + list(state.trick)
    voids: set[tuple[int, str]] = set()
    for leader, cards in [*((t.leader, t.cards) for t in state.tricks),
                          (state.leader, state.trick)]:
        for i, code in enumerate(cards):
            if code[-1] != cards[0][-1]:
                voids.add(((leader + i) % PLAYERS, cards[0][-1]))
    return SeatView(
        me=player,
        hand=tuple(state.hands[player]),
        bids=tuple(state.bids),
        tricks_won=tuple(state.tricks_won),
        trick=tuple(state.trick),
        leader=state.leader,
        played=frozenset(played),
        voids=frozenset(voids),
    )


# -- the game's public page ------------------------------------------------------

View = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]


def spades_page(view: View, events: Events) -> PageTable:
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
    return PageTable(data, Course("Team points after each round", "points", labels,
                                  list(zip(teams, course, strict=True))),
                     {"deals": list(reversed(deals))})
