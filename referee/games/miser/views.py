"""What each seat and the public may see of a game of Miser: the views,
the status summary, and the data each mail template gets, by ruling MI-14
of rule text 004 (Miser) ("All of a player's pennies must be visible"; "No
player may show her hand"; docs/rulings.md):

* public: every player's pennies and the centre at all times, so every move
  of pennies is announced to everyone: a pass, an accepted contract with its
  two wagers and the victim's stake, an attack's wager and stake, every bid
  and raise; how many cards each player holds; how many cards each side has
  face down, never which; the face-up bid cards; the cards turned up at each
  flip; the draw for first player (ruling MI-2); how many cards were removed
  before the deal (ruling MI-1), never which.
* secret (to the holder alone): a hand, and a face-down card until the flip.
  Face-down cards are accepted only in a mail to the referee alone.
* private: a contract offer, and its refusal or lapse, go to the seats that
  saw the offer and the partner, so talks may stay private; an acceptance is
  public, because it moves three players' pennies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import JSON, Audience, Course, Notice, PageTable
from referee.games.cards import card_face as card
from referee.games.miser.bot import AttackSeen, ContractSeen, MiserView
from referee.games.miser.rules import (
    OFFER,
    OWED_TEXT,
    PASS_COST,
    TURN,
    Bid,
    MiserRules,
    MiserState,
    attack_side,
    card_text,
    card_value,
    contract_side,
    hand_text,
    names_text,
    offer_json,
    owed_step,
    pennies_text,
    result_text,
    sees_offer,
    shown_cards,
    sort_hand,
    stage_of,
)


class MiserViews:
    """What each seat and the public see, and the data of each mail:
    OpenSpiel's Observer, an object the game holds. It is given each state
    to show, and the game it shows it for (:class:`~.rules.MiserRules` read
    by its words, whose help a seat's view carries); it makes the data of
    the notices the rules send (:class:`~.rules.MiserMail`)."""

    def __init__(self, game: MiserRules) -> None:
        self.game = game

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        """The game as its table for its page (:func:`miser_page`)."""
        return miser_page(view, events)


    def view(self, state: MiserState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no card in a hand, face down or removed
        (ruling MI-14); a seat's view adds that seat's hand and face-down
        cards."""
        view = self.common(state)
        view["history"] = list(state.history)
        view["slush"] = shown_cards(state.slush)
        if seat is not None and seat in state.seats:
            player = state.seats.index(seat)
            view["you"] = self._you(state, player)
            offer = state.contract
            if offer is not None and not offer.accepted and sees_offer(state, player):
                view["offer"] = offer_json(state)
        return view

    def summary(self, state: MiserState) -> dict[str, JSON]:
        public = self.common(state)
        return {
            "round": state.turn_number,
            "turn": state.turn_number,
            "phase": public["stage"],
            "scores": {state.names[p]: state.pennies[p] for p in range(len(state.names))},
            "cards": {state.names[p]: len(state.hands[p]) for p in range(len(state.names))},
            "centre": state.centre,
            "to_move": [w["name"] for w in public["waiting"]],
            "over": state.over,
            "result": result_text(state) if state.over else None,
        }

    def status(self, state: MiserState) -> str:
        """The turn and what is under way in it, every player's pennies and
        cards and the centre (ruling MI-14: all public); an offer only if it
        was made in public, and face-down cards only by their count."""
        s, public = state, self.common(state)
        n = len(s.names)
        pennies = ", ".join(f"{s.names[p]} {s.pennies[p]}" for p in range(n))
        cards = ", ".join(f"{s.names[p]} {len(s.hands[p])}" for p in range(n))
        if s.over:
            # Rule text 004 numbers no turns: the players' text names none.
            return f"The game is over: {result_text(s)}"
        lines = [f"It is {s.names[s.turn]}'s turn.",
                 f"Pennies: {pennies}; the centre holds {pennies_text(s.centre)}.",
                 f"Cards in hand: {cards}."]
        stage, c, a, au = public["stage"], s.contract, s.attack, s.auction
        if stage == OFFER and c is not None:
            lines.append(f"{s.names[s.turn]} offers {s.names[c.partner]} a contract against "
                         f"{s.names[c.victim]}: wagers {c.wagers[0]} and {c.wagers[1]}; "
                         f"{s.names[c.partner]} has yet to answer.")
        elif c is not None and c.accepted:
            down = [s.names[p] for p, x in zip((s.turn, c.partner), c.cards, strict=True) if x]
            lines.append(f"Contract: {s.names[s.turn]} and {s.names[c.partner]} against "
                         f"{s.names[c.victim]}; "
                         + (f"a card is face down from {' and '.join(down)}." if down
                            else "no card is face down yet."))
        elif a is not None:
            lines.append(f"Attack: {s.names[s.turn]} on {s.names[a.victim]}, a wager of "
                         f"{a.wager}; face down: {s.names[s.turn]} {len(a.cards[0])}, "
                         f"{s.names[a.victim]} {len(a.cards[1])}.")
        elif au is not None:
            bids = ", ".join(f"{s.names[b.player]} {pennies_text(b.pennies)} (with "
                             f"{card_text(b.card)} face up)" for b in au.bids)
            lines.append(f"Bids for the centre: {bids}."
                         + (f" Done: {names_text([s.names[p] for p in au.done])}."
                            if au.done else ""))
        return "\n".join(lines)

    def common(self, s: MiserState, *, offer: bool = False) -> dict[str, JSON]:
        """The public facts every notice and view carries. A contract offer
        appears only when ``offer`` is set (the notice goes to the offer's
        audience) or the offer was made in public."""
        n = len(s.names)
        c, a, au = s.contract, s.attack, s.auction
        show_offer = c is not None and (c.accepted or offer or c.audience is None)
        down = [0] * n
        if c is not None and c.accepted:
            for p, card in zip((s.turn, c.partner), c.cards, strict=True):
                down[p] = int(card is not None)
        if a is not None:
            down[s.turn], down[a.victim] = len(a.cards[0]), len(a.cards[1])
        bids = {b.player: b for b in au.bids} if au else {}
        waiting = [
            {"name": s.names[p], "what": OWED_TEXT[o]}
            for p in range(n)
            if (o := owed_step(s, p)) is not None and (show_offer or o != "answer")
        ]
        if c is not None and not show_offer:
            waiting.insert(0, {"name": s.names[s.turn], "what": OWED_TEXT["turn"]})
        top = max(s.pennies)
        names = [w["name"] for w in waiting]
        return {
            "turn_number": s.turn_number,
            "to_move": names,
            "to_move_text": names_text(names) if len(names) <= 3 else f"{len(names)} players",
            "turn_player": s.names[s.turn],
            "stage": stage_of(s) if show_offer or stage_of(s) != OFFER else TURN,
            "players": [
                {
                    "number": p + 1,
                    "seat": s.seats[p],
                    "name": s.names[p],
                    "pennies": s.pennies[p],
                    "cards": len(s.hands[p]),
                    "down": down[p],
                    "bid": bids[p].pennies if p in bids else None,
                    "knocked_out": p in s.knocked_out,
                    "leading": s.pennies[p] == top,
                }
                for p in range(n)
            ],
            "centre": s.centre,
            "pennies_each": s.pennies_each,
            "wager_cap": s.wager_cap,
            "pass_cost": PASS_COST,
            "removed_count": len(s.removed),
            "slush_count": len(s.slush),
            "waiting": waiting,
            "contract": self._contract_json(s) if c is not None and c.accepted else None,
            "attack": self._attack_json(s) if a is not None else None,
            "auction": None
            if au is None
            else {
                "bids": [self.bid(s, b) for b in au.bids],
                "done": [s.names[p] for p in au.done],
                "declined": [s.names[p] for p in au.declined],
            },
            "game_over": s.over,
            "winners": [s.names[p] for p in s.winners],
            "tie": len(s.winners) > 1,
            "knocked_out": [s.names[p] for p in s.knocked_out],
            "result": result_text(s) if s.over else None,
        }

    def opening(self, s: MiserState) -> dict[str, JSON]:
        """The opening mail: the public facts, each round of the draw for
        first player with the cards as players read them (ruling MI-2), who
        goes first and how many cards each holds."""
        return {
            **self.common(s),
            "draws": [
                {
                    "round": number,
                    "cards": [
                        {"name": s.names[p], "card": c, "text": card_text(c)}
                        for p, c in enumerate(row)
                        if c
                    ],
                }
                for number, row in enumerate(s.draws, start=1)
            ],
            "first": s.names[s.first],
            "hand_size": len(s.hands[0]),
        }

    def _contract_json(self, s: MiserState) -> dict[str, JSON]:
        c = s.contract
        assert c is not None
        return {
            **offer_json(s),
            "stake": c.stake,
            "down": [s.names[p] for p, x in zip((s.turn, c.partner), c.cards, strict=True) if x],
        }

    def _attack_json(self, s: MiserState) -> dict[str, JSON]:
        a = s.attack
        assert a is not None
        return {
            "attacker": s.names[s.turn],
            "victim": s.names[a.victim],
            "wager": a.wager,
            "stake": a.stake,
            "down": [len(a.cards[0]), len(a.cards[1])],
            "flipped": [
                s.names[p] for p, f in zip((s.turn, a.victim), a.flipped, strict=True) if f
            ],
        }

    def bid(self, s: MiserState, bid: Bid) -> dict[str, JSON]:
        return {"name": s.names[bid.player], "card": bid.card, "text": card_text(bid.card),
                "value": card_value(bid.card), "pennies": bid.pennies}  # fmt: skip

    def _you(self, s: MiserState, player: int) -> dict[str, JSON]:
        """What only ``player`` may see: eir hand, eir face-down cards, and
        what ey owe now, with the help of :meth:`help` (the words)."""
        down: list[str] = []
        c, a = s.contract, s.attack
        if c is not None and player in (s.turn, c.partner):
            card = c.cards[contract_side(s, player)] if c.accepted else None
            down = [card] if card else []
        if a is not None and player in (s.turn, a.victim):
            down = list(a.cards[attack_side(s, player)])
        hand = sort_hand(s.hands[player])
        owes = owed_step(s, player)
        return {
            "name": s.names[player],
            "seat": s.seats[player],
            "number": player + 1,
            "pennies": s.pennies[player],
            "hand": hand,
            "hand_text": hand_text(hand),
            "down": shown_cards(down),
            "down_text": " ".join(card_text(x) for x in down),
            "owes": owes,
            "help": self.game.help(s, s.seats[player]),
        }

    def hand_notice(self, s: MiserState, player: int, reason: str) -> Notice:
        context = {**self.common(s), "you": self._you(s, player), "reason": reason}
        return Notice(Audience.only(s.seats[player]), "hand", context)

    def your_move(self, s: MiserState, player: int) -> Notice:
        context = {**self.common(s), "you": self._you(s, player)}
        if s.contract is not None and not s.contract.accepted and sees_offer(s, player):
            context["offer"] = offer_json(s)
        return Notice(Audience.only(s.seats[player]), "your_move", context)

    def asks(self, state: MiserState, seat: int) -> str | None:
        """A turn, an answer to an offer, a card down, a bid in an auction."""
        if seat not in state.seats or state.over:
            return None
        return _ASKS.get(owed_step(state, state.seats.index(seat)) or "")


# -- what a bot sees ----------------------------------------------------------------


def seat_view(s: MiserState, player: int) -> MiserView:
    """What ``player`` knows (MI-14): her hand and her own face-down cards,
    the public table, and a contract offer only if she saw it."""
    owes = owed_step(s, player)
    assert owes is not None
    contract = None
    if s.contract is not None and sees_offer(s, player):
        c = s.contract
        contract = ContractSeen(c.partner, c.victim, (c.wagers[0], c.wagers[1]))
    attack = None
    if s.attack is not None:
        a = s.attack
        sides = (s.turn, a.victim)
        mine = tuple(a.cards[sides.index(player)]) if player in sides else ()
        attack = AttackSeen(a.victim, (len(a.cards[0]), len(a.cards[1])), mine)
    bids = tuple((b.player, b.pennies) for b in s.auction.bids) if s.auction else ()
    shown = [*s.slush, *(b.card for b in s.auction.bids)] if s.auction else list(s.slush)
    return MiserView(
        me=player,
        names=tuple(s.names),
        hand=tuple(s.hands[player]),
        pennies=tuple(s.pennies),
        cards=tuple(len(h) for h in s.hands),
        centre=s.centre,
        wager_cap=s.wager_cap,
        turn=s.turn,
        owes=owes,
        offers=s.offers,
        slush=tuple(shown),
        contract=contract,
        attack=attack,
        bids=bids,
    )


#: A subject's words for each step a player may owe (``OWED_TEXT``).
_ASKS = {"turn": "your turn", "answer": "your answer", "contract_card": "your card",
         "attack_first": "your card", "attack": "your card or flip",
         "auction_bid": "your bid", "auction_join": "your bid"}


# -- the game's public page ------------------------------------------------------

View = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]


def miser_page(view: View, events: Events) -> PageTable:
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
    return PageTable(data, None if course is None else Course(
        "Pennies after each turn", "pennies", labels, list(zip(names, course, strict=True))))


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
