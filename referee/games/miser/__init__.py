"""Miser by mail, as rule text 004 (``seeds/004_930c3a681d0f32af.txt``) and
rulings MI-1 … MI-15 of ``RULINGS.md`` describe it.

Three to eight players, 20 pennies each and the whole deck dealt equally
(MI-1). On her turn a player passes (3 pennies to the centre, MI-4), takes
out a contract with a partner against a victim (MI-6), attacks another player
(MI-7, MI-12) or bids for the centre (MI-8, MI-9). The game ends after the
first exchange that leaves a player with no pennies; the most pennies wins,
and a tie for most is a tie (MI-10).

Each exchange is a sub-state of the game (``contract``, ``attack`` or
``auction``) with its own steps, and :meth:`Miser.pending` names every player
who owes one with a key naming the exchange and the step.

What is public, by MI-14 ("All of a player's pennies must be visible"; "No
player may show her hand"):

* public: every player's pennies and the centre at all times, so every move
  of pennies is announced to everyone: a pass, an accepted contract with its
  two wagers and the victim's stake, an attack's wager and stake, every bid
  and raise; how many cards each player holds; how many cards each side has
  face down, never which; the face-up bid cards; the cards turned up at each
  flip; the draw for the first player (MI-2); how many cards were removed
  before the deal (MI-1), never which.
* secret (to the holder alone): a hand, and a face-down card until the flip.
  Face-down cards are accepted only in a mail to the referee alone.
* private: a contract offer, and its refusal or lapse, go to the seats that
  saw the offer and the partner, so talks may stay private; an acceptance is
  public, because it moves three players' pennies.

Players are numbered 1..n in seat order (MI-3); the state indexes them 0-based
in that order. Seats appear only in audiences, pendings and notice contexts.
House readings are marked ``House reading:`` beside the code. The state and
the resolutions are in :mod:`referee.games.miser.rules`, the grammar in
:mod:`referee.games.miser.words`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from referee.games.base import (
    JSON,
    Action,
    Audience,
    Event,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    Pending,
    Result,
    Scope,
    ScopeError,
    SeatInfo,
)
from referee.games.cards import Card, full_deck, rank_value_ace_high
from referee.games.miser.rules import (
    ATTACK,
    AUCTION,
    CONTRACT,
    DECK_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    OFFER,
    OWED_TEXT,
    PASS_COST,
    PENNIES,
    TURN,
    WAGER_CAP,
    Attack,
    Auction,
    Bid,
    Contract,
    MiserState,
    attack_settled,
    attack_side,
    card_text,
    card_value,
    cards_text,
    contract_side,
    draw_for_first,
    evolve_state,
    hand_text,
    is_bidder,
    now_text,
    offer_audience,
    owed_step,
    pending_key,
    pennies_text,
    report_text,
    resolve_attack,
    resolve_auction,
    resolve_contract,
    result_text,
    sees_offer,
    shown_cards,
    sort_hand,
    stage_of,
)
from referee.games.miser.words import parse_line, read_attack, read_contract, resolve_name

__all__ = ["Miser", "MiserState", "card_value"]

# -- the game -----------------------------------------------------------------


class Miser(Game[MiserState]):
    """Rule text 004. Options: ``pennies`` (20 each) and ``wager`` (3, the
    most a player may wager on a contract or an attack)."""

    kind = "miser"
    title = "Miser"
    state_type = MiserState
    demo_with_bots: ClassVar[bool] = True
    #: A card put face down, a raise in an auction: lines in the next mail
    #: of a player who asked for ``mail turns``.
    routine_notices: ClassVar[frozenset[str]] = frozenset({"down", "auction"})

    def __init__(
        self,
        *,
        deal: Sequence[Sequence[str]] | None = None,
        draw: Sequence[str] | None = None,
    ) -> None:
        """The registered engine shuffles. A test may fix the ``deal`` (one
        hand a player in seat order; the cards left out are the ones removed
        face down, MI-1) and the ``draw`` for first player (one card a player
        in seat order, one of them highest, MI-2)."""
        self._deal = [sort_hand(_card_codes(hand)) for hand in deal] if deal else None
        if self._deal is not None:
            dealt = [c for hand in self._deal for c in hand]
            n = len(self._deal)
            if not MIN_PLAYERS <= n <= MAX_PLAYERS:
                raise ValueError(f"a deal has {MIN_PLAYERS} to {MAX_PLAYERS} hands")
            if any(len(hand) != DECK_SIZE // n for hand in self._deal):
                raise ValueError(f"each of {n} hands holds {DECK_SIZE // n} cards")
            if len(set(dealt)) != len(dealt):
                raise ValueError("a card is dealt twice")
        self._draw = _card_codes(draw) if draw else None
        if self._draw is not None:
            ranks = sorted((rank_value_ace_high(c[:-1]) for c in self._draw), reverse=True)
            if len(ranks) > 1 and ranks[0] == ranks[1]:
                raise ValueError("a fixed draw needs one highest card")

    # -- setup ----------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"pennies": PENNIES, "wager": WAGER_CAP}
        for key, value in raw.items():
            if key not in options:
                raise OptionError(f"Miser has no option {key!r}; its options are pennies, wager")
            text = value.strip()
            if not text.isdecimal() or len(text) > 4:
                raise OptionError(f"{key}: {value!r} is not a whole number")
            if int(text) < 1:
                raise OptionError(f"{key}: it must be at least 1")
            options[key] = int(text)
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        return MIN_PLAYERS, MAX_PLAYERS

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], rng: random.Random
    ) -> Result[MiserState]:
        n = len(seats)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS or len({s.position for s in seats}) != n:
            raise OptionError(f"Miser needs {MIN_PLAYERS} to {MAX_PLAYERS} players")
        ordered = sorted(seats, key=lambda s: s.position)  # MI-3: seat order
        first, draws = draw_for_first(n, rng)
        if self._draw is not None:
            fixed = self._draw
            if len(fixed) != n:
                raise OptionError(f"the fixed draw is for {len(fixed)} players")
            row: list[str | None] = list(fixed)
            draws = [row]
            first = max(range(n), key=lambda p: rank_value_ace_high(fixed[p][:-1]))
        # MI-2: the full deck is reshuffled after the draw; MI-1: 52 mod n
        # random cards are removed face down and the rest dealt equally.
        deck = [str(c) for c in full_deck()]
        rng.shuffle(deck)
        cut = DECK_SIZE % n
        removed, rest = deck[:cut], deck[cut:]
        hands = [sort_hand(rest[i::n]) for i in range(n)]
        if self._deal is not None:
            if len(self._deal) != n:
                raise OptionError(f"the fixed deal is for {len(self._deal)} players")
            hands = [list(hand) for hand in self._deal]
            dealt = {c for hand in hands for c in hand}
            removed = [c for c in deck if c not in dealt]
        pennies = int(options.get("pennies") or PENNIES)
        state = MiserState(
            seats=[s.position for s in ordered],
            names=[s.name for s in ordered],
            pennies_each=pennies,
            wager_cap=int(options.get("wager") or WAGER_CAP),
            first=first,
            draws=draws,
            removed=sorted(removed),
            hands=hands,
            pennies=[pennies] * n,
            turn=first,
        )
        size = len(hands[0])
        draw_text = "; ".join(
            ", ".join(f"{state.names[p]} {card_text(c)}" for p, c in enumerate(row) if c)
            for row in draws
        )
        events = [
            Event(
                "seating",
                "Seating: " + ", ".join(f"{state.names[p]}" for p in range(n)) + ".",
                data={"seats": list(state.seats), "names": list(state.names)},
            ),
            Event(
                "draw",
                f"The draw for first player: {draw_text}. {state.names[first]} goes first.",
                data={"draws": [list(r) for r in draws], "first": state.names[first]},
            ),
            Event(
                "deal",
                f"{size} cards dealt to each player, {cut} removed face down; "
                f"{pennies} pennies each.",
                data={"hand_size": size, "removed": cut, "pennies": pennies},
            ),
            Event(
                "hands",
                "The deal.",
                public=False,
                data={
                    "hands": {state.names[p]: list(hands[p]) for p in range(n)},
                    "removed": list(state.removed),
                },
            ),
        ]
        opening = {
            **self._common(state),
            "draws": [
                {
                    "round": number,
                    "cards": [
                        {"name": state.names[p], "card": c, "text": card_text(c)}
                        for p, c in enumerate(row)
                        if c
                    ],
                }
                for number, row in enumerate(draws, start=1)
            ],
            "first": state.names[first],
            "hand_size": size,
        }
        notices = [Notice(Audience.everyone(), "opening", opening)]
        notices += [self._hand_notice(state, p, "deal") for p in range(n)]
        return Result(state, events, notices)

    # -- play -----------------------------------------------------------------

    def parse(self, line: str) -> Action | None:
        """See :mod:`referee.games.miser.words` for every spelling read."""
        return parse_line(line)

    def accepts(self, action: Action, scope: Scope) -> None:
        """A face-down card is accepted only in a mail to the referee alone
        (MI-14): anyone else on the mail would see the card. Everything else
        is accepted in every scope; a contract offer's answers follow the
        audience of the offer."""
        if action.verb == "down" and scope is not Scope.SECRET:
            raise ScopeError(
                "A card put face down must stay hidden until the flip, and this mail also "
                "went to other players or the list, so it would show the card. It was not "
                "played: send it again in a mail to the referee alone."
            )

    def apply(
        self, state: MiserState, seat: int, action: Action, rng: random.Random
    ) -> Result[MiserState]:
        player = self._player(state, seat)
        if action.verb == "hand":
            notice = self._hand_notice(state, player, "request")
            return Result(state, notices=[notice], reply="Your hand follows in a secret mail.")
        if state.over:
            raise IllegalAction(f"The game is over: {result_text(state)}")
        verb = action.verb
        owes = owed_step(state, player)
        if verb == "pass" and owes in ("auction_bid", "auction_join"):
            verb = "done"  # in an auction, "pass" is read as "done"
        handler = {
            "pass": self._pass,
            "contract": self._offer,
            "attack": self._attack,
            "bid": self._bid,
            "raise": self._raise,
            "accept": self._accept,
            "decline": self._decline,
            "lapse": self._decline,
            "down": self._down,
            "flip": self._flip,
            "done": self._done,
        }.get(verb)
        if handler is None:
            raise IllegalAction(f"Miser has no command {action.verb!r}.")
        return handler(state, player, action)

    def pending(self, state: MiserState) -> list[Pending]:
        """Who owes which step. The answer to a contract offer made in
        private is a private obligation (MI-14: contract talks may be
        private): views for everyone show the offerer's turn instead, as
        the public summary does."""
        out = []
        c = state.contract
        for p in range(len(state.names)):
            owes = owed_step(state, p)
            if owes is None:
                continue
            key = pending_key(state, p, owes)
            if owes == "answer" and c is not None and c.audience is not None:
                cover = (state.seats[state.turn], OWED_TEXT[TURN])
                out.append(Pending(state.seats[p], key, OWED_TEXT[owes], private=True,
                                   cover=cover))
            else:
                out.append(Pending(state.seats[p], key, OWED_TEXT[owes]))
        return out

    def timeout_action(self, state: MiserState, seat: int, rng: random.Random) -> Action:
        """MI-15: a silent turn player passes; an unanswered offer lapses; a
        partner who does not play plays a random card; silence in an attack
        is "flip"; silence in an auction is "done".

        House reading: an attacker who owes her first card (MI-7: "the
        attacker plays at least one card") has not yet a side to flip, so,
        like a silent partner, she plays a random card.
        """
        player = self._player(state, seat)
        owes = owed_step(state, player)
        if owes is None:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        if owes == "turn":
            return Action("pass")
        if owes == "answer":
            return Action("lapse")
        if owes in ("contract_card", "attack_first"):
            return Action("down", (rng.choice(sorted(state.hands[player])),))
        if owes == "attack":
            return Action("flip")
        return Action("done")

    def bot_action(self, state: MiserState, seat: int, rng: random.Random) -> Action:
        """A random player with a little sense: it never bids or wagers more
        pennies than it holds, prefers to attack players with no cards, bids
        for a centre worth having, and adds cards to an attack while it has
        fewer down than its opponent."""
        player = self._player(state, seat)
        owes = owed_step(state, player)
        if owes is None:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        if owes == "turn":
            return _bot_turn(state, player, rng)
        if owes == "answer":
            return Action("accept" if rng.random() < 0.6 else "decline")
        hand = sort_hand(state.hands[player])
        if owes in ("contract_card", "attack_first"):
            return Action("down", (rng.choice(hand),))
        if owes == "attack":
            assert state.attack is not None
            side = 0 if player == state.turn else 1
            mine, theirs = len(state.attack.cards[side]), len(state.attack.cards[1 - side])
            if hand and ((mine < theirs and rng.random() < 0.7) or rng.random() < 0.15):
                return Action("down", (rng.choice(hand),))
            return Action("flip")
        assert state.auction is not None
        purse = state.pennies[player]
        if owes == "auction_join":
            if state.centre >= 4 and rng.random() < 0.35:
                pennies = min(purse, max(1, state.centre // 3))
                return Action("bid", (hand[-1], pennies))
            return Action("done")
        top = max(b.pennies for b in state.auction.bids)
        mine_bid = next(b.pennies for b in state.auction.bids if b.player == player)
        if mine_bid < top and top + 1 <= min(purse, state.centre) and rng.random() < 0.5:
            return Action("raise", ("to", top + 1))
        return Action("done")

    def replace_with_bot(self, state: MiserState, seat: int) -> Result[MiserState]:
        """A player resigns: a bot takes the seat (the service marks it), and
        everyone is told, since a bot now plays that purse and hand."""
        player = self._player(state, seat)
        name = state.names[player]
        text = f"{name} has left the game; a bot takes the seat."
        context = {**self._common(state), "name": name}
        return Result(
            state,
            [Event("resign", text, data={"player": name})],
            [Notice(Audience.everyone(), "resign", context)],
            text,
        )

    def turn(self, state: MiserState) -> int:
        """The turn number: one player's turn, with every exchange it opens."""
        return state.turn_number

    def is_over(self, state: MiserState) -> bool:
        return state.over

    # -- what people see ------------------------------------------------------

    def view(self, state: MiserState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no card in a hand, face down or removed
        (MI-14); a seat's view adds that seat's hand and face-down cards."""
        view = self._common(state)
        view["history"] = list(state.history)
        view["slush"] = shown_cards(state.slush)
        if seat is not None and seat in state.seats:
            player = state.seats.index(seat)
            view["you"] = self._you(state, player)
            offer = state.contract
            if offer is not None and not offer.accepted and sees_offer(state, player):
                view["offer"] = self._offer_json(state)
        return view

    def help(self, state: MiserState, seat: int | None) -> str:
        return _help_text(state, seat)

    def summary(self, state: MiserState) -> dict[str, JSON]:
        public = self._common(state)
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

    # -- the turn -------------------------------------------------------------

    def _pass(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "pass")
        s = evolve_state(state)
        # MI-4: with fewer than 3 pennies she puts in all she has.
        paid = min(PASS_COST, s.pennies[player])
        s.pennies[player] -= paid
        s.centre += paid
        report = {"kind": "pass", "name": s.names[player], "paid": paid}
        text = f"{s.names[player]} passes and puts {pennies_text(paid)} in the centre."
        return self._end_turn(s, report, text)

    def _offer(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "take out a contract")
        _require_cards(state, player)
        if len(action.args) == 1:  # kept as written until the names are known
            written_partner, written_victim, mine, yours = read_contract(
                str(action.args[0]), state.names, state.seats)
        else:
            written_partner, written_victim, mine, yours = _args(action, 4)
        partner = resolve_name(str(written_partner), state.names, state.seats)
        victim = resolve_name(str(written_victim), state.names, state.seats)
        if player in (partner, victim):
            raise IllegalAction("Your partner and your victim must be two other players.")
        if partner == victim:
            raise IllegalAction("Your partner cannot also be the victim.")
        if not state.hands[partner]:
            raise IllegalAction(
                f"{state.names[partner]} has no cards left, so cannot enter a contract "
                "(rule text: a player out of cards cannot enter into contracts)."
            )
        self._check_wager(state, player, mine, "Your wager")
        self._check_wager(state, partner, yours, f"{state.names[partner]}'s wager")
        s = evolve_state(state)
        s.offers += 1
        audience = action.came_to(s.seats[player])
        seen = None if audience.public else sorted({*audience.seats, s.seats[partner]})
        s.contract = Contract(partner, victim, [int(mine), int(yours)], seen)
        offer = self._offer_json(s)
        context = {**self._common(s, offer=True), "offer": offer}
        text = (
            f"{s.names[player]} offers {s.names[partner]} a contract against "
            f"{s.names[victim]}: {s.names[player]} wagers {mine}, {s.names[partner]} {yours}."
        )
        return Result(
            s,
            [Event("offer", text, public=seen is None, data=offer)],
            [Notice(offer_audience(s), "offer", context)],
            f"Your offer is made; {s.names[partner]} answers 'accept' or 'decline'.",
        )

    def _accept(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        offer = _offer_to(state, player)
        s = evolve_state(state)
        c = s.contract
        assert c is not None
        by, partner, victim = s.turn, c.partner, c.victim
        s.pennies[by] -= c.wagers[0]
        s.pennies[partner] -= c.wagers[1]
        # MI-6: the victim matches the sum; MI-11: if short, all she has.
        c.stake = min(sum(c.wagers), s.pennies[victim])
        s.pennies[victim] -= c.stake
        s.centre += sum(c.wagers) + c.stake
        c.accepted = True
        text = (
            f"{s.names[partner]} accepts: {s.names[by]} ({c.wagers[0]}) and "
            f"{s.names[partner]} ({c.wagers[1]}) take out a contract against "
            f"{s.names[victim]}, who puts in {c.stake}. The centre holds {pennies_text(s.centre)}."
        )
        context = {**self._common(s), "offer": offer, "short": c.stake < sum(c.wagers)}
        notices = [Notice(Audience.everyone(), "contract", context)]
        notices += [self._your_move(s, p) for p in (by, partner)]
        return Result(s, [Event("contract", text, data=dict(offer))], notices)

    def _decline(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        offer = _offer_to(state, player)
        s = evolve_state(state)
        c = s.contract
        assert c is not None
        audience = offer_audience(s)
        lapsed = action.verb == "lapse"
        s.contract = None
        how = "lapsed unanswered" if lapsed else f"was declined by {s.names[player]}"
        text = f"{s.names[s.turn]}'s contract offer {how}; {s.names[s.turn]} chooses again."
        context = {**self._common(s), "offer": offer, "lapsed": lapsed}
        return Result(
            s,
            [Event("lapse" if lapsed else "decline", text, public=c.audience is None, data=offer)],
            [Notice(audience, "declined", context)],
            text,
        )

    def _attack(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        _require_turn(state, player, "attack")
        _require_cards(state, player)
        if len(action.args) == 1:  # kept as written until the names are known
            written, wager = read_attack(str(action.args[0]), state.names, state.seats)
        else:
            written, wager = _args(action, 2)
        victim = resolve_name(str(written), state.names, state.seats)
        if victim == player:
            raise IllegalAction("You cannot attack yourself.")
        self._check_wager(state, player, wager, "Your wager")
        s = evolve_state(state)
        stake = min(int(wager), s.pennies[victim])  # MI-7, MI-11
        s.pennies[player] -= int(wager)
        s.pennies[victim] -= stake
        s.centre += int(wager) + stake
        s.attack = Attack(victim, int(wager), stake)
        text = (
            f"{s.names[player]} attacks {s.names[victim]}, wagering {wager}; "
            f"{s.names[victim]} puts in {stake}. The centre holds {pennies_text(s.centre)}."
        )
        context = {**self._common(s), "short": stake < int(wager)}
        # The attacker is told what comes next in the answer to her own mail,
        # not in a separate mail: the same mail may already put cards down.
        low = sort_hand(s.hands[player])[-1]
        reply = (
            f"{text} Now put one or more cards face down, in a mail to the referee "
            f"alone, like 'down {low}'."
        )
        return Result(
            s,
            [Event("attack", text, data={"attacker": s.names[player], "victim": s.names[victim],
                                          "wager": int(wager), "stake": stake})],
            [Notice(Audience.everyone(), "attack", context)],
            reply,
        )  # fmt: skip

    def _bid(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        card, pennies = _args(action, 2)
        card = str(card)
        stage = stage_of(state)
        auction = state.auction
        # A pending offer may be private (MI-14): anyone but the turn player
        # gets the same answer whether or not one is pending.
        if stage in (TURN, OFFER) and player != state.turn:
            raise IllegalAction(
                f"It is {state.names[state.turn]}'s turn; you may join a bid for the centre "
                "only once it is made."
            )
        if stage == OFFER:
            _require_turn(state, player, "bid for the centre")
        if stage not in (TURN, AUCTION):
            raise IllegalAction(f"There is no bidding for the centre now. {now_text(state)}")
        if auction is not None and any(b.player == player for b in auction.bids):
            mine = next(b.pennies for b in auction.bids if b.player == player)
            raise IllegalAction(
                f"You are already bidding {pennies_text(mine)}. To add 2, write 'raise 2'; "
                f"to bring your bid to {mine + 2}, write 'raise to {mine + 2}'."
            )
        _require_cards(state, player)
        if card not in state.hands[player]:
            raise IllegalAction(
                f"You do not hold {card_text(card)}. Your cards: {hand_text(state.hands[player])}."
            )
        amount = self._check_bid(state, player, pennies)
        s = evolve_state(state)
        s.hands[player].remove(card)
        if s.auction is None:
            s.auction = Auction([Bid(player, card, amount)])
            what = "open"
            text = (
                f"{s.names[player]} bids {pennies_text(amount)} for the centre "
                f"({pennies_text(s.centre)}), with {card_text(card)} face up."
            )
        else:
            s.auction.bids.append(Bid(player, card, amount))
            s.auction.done = []
            s.auction.step += 1
            if player in s.auction.declined:
                s.auction.declined.remove(player)
            what = "join"
            text = (
                f"{s.names[player]} joins the bidding: {card_text(card)} "
                f"and {pennies_text(amount)}."
            )
        result = self._auction_step(s, player, what, text)
        if what == "open" and not s.over and s.auction is not None:
            result.notices += [
                self._your_move(s, p)
                for p in range(len(s.names))
                if owed_step(s, p) == "auction_join"
            ]
        return result

    def _raise(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        auction = state.auction
        if auction is None or not any(b.player == player for b in auction.bids):
            raise IllegalAction(
                "You have no bid to raise. " + ("Join the bidding with 'bid 7H 2'."
                                                if owed_step(state, player) == "auction_join"
                                                else now_text(state))
            )  # fmt: skip
        mine = next(b for b in auction.bids if b.player == player)
        if len(action.args) == 2 and action.args[0] == "to":
            total = action.args[1]
        else:
            (add,) = _args(action, 1)
            total = mine.pennies + add if isinstance(add, int) else add
        if not isinstance(total, int) or total <= mine.pennies:
            raise IllegalAction(
                f"Your bid is {pennies_text(mine.pennies)}; a raise must make it more "
                "(bids are never withdrawn)."
            )
        self._check_bid(state, player, total)
        s = evolve_state(state)
        assert s.auction is not None
        next(b for b in s.auction.bids if b.player == player).pennies = total
        s.auction.done = []
        s.auction.step += 1
        text = f"{s.names[player]} raises to {pennies_text(total)}."
        return self._auction_step(s, player, "raise", text)

    def _done(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        owes = owed_step(state, player)
        if owes == "auction_bid":
            s = evolve_state(state)
            assert s.auction is not None
            s.auction.done.append(player)
            text = f"{s.names[player]} is done bidding."
        elif owes == "auction_join":
            s = evolve_state(state)
            assert s.auction is not None
            s.auction.declined.append(player)
            text = f"{s.names[player]} will not join the bidding."
        elif state.auction is not None and is_bidder(state, player):
            raise IllegalAction("You have said done since the last raise; wait for the others.")
        elif state.auction is not None and state.hands[player]:
            raise IllegalAction(
                "You have said you will not join; you still may, with 'bid 7H 2', "
                "until the bidding ends."
            )
        else:
            raise IllegalAction(f"There is no bidding to be done with now. {now_text(state)}")
        return self._auction_step(s, player, "done", text)

    def _auction_step(self, s: MiserState, player: int, what: str, text: str) -> Result[MiserState]:
        """Announce one step of the auction, and resolve it when nobody owes
        a step: every bidder has said done since the last bid or raise, and
        every other player holding cards has joined or said she will not."""
        assert s.auction is not None
        bid = next((b for b in s.auction.bids if b.player == player), None)
        data = {
            "player": s.names[player],
            "what": what,
            "pennies": bid.pennies if bid else None,
            "card": bid.card if bid else None,
        }
        events = [Event("auction", text, data=data)]
        if any(owed_step(s, p) for p in range(len(s.names))):
            context = {**self._common(s), "name": s.names[player], "step": what,
                       "bid": self._bid_json(s, bid) if bid else None}  # fmt: skip
            return Result(s, events, [Notice(Audience.everyone(), "auction", context)])
        report = resolve_auction(s)
        result = self._end_turn(s, report, report_text(s, report))
        result.events[:0] = events
        return result

    # -- face-down cards and the flip -------------------------------------------

    def _down(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        cards = [str(c) for c in action.args]
        if not cards:
            raise IllegalAction("Name the card to put face down, like 'down QS'.")
        stage = stage_of(state)
        if stage == CONTRACT:
            assert state.contract is not None
            side = contract_side(state, player)
            if state.contract.cards[side] is not None:
                raise IllegalAction("Your card for this contract is already down.")
            if len(cards) != 1:
                raise IllegalAction("Each partner in a contract puts down exactly one card.")
        elif stage == ATTACK:
            assert state.attack is not None
            side = attack_side(state, player)
            if side == 1 and not state.attack.cards[0]:
                raise IllegalAction(
                    f"Wait for {state.names[state.turn]}'s first card; then you may answer."
                )
        else:
            raise IllegalAction(f"No card is to be put face down now. {now_text(state)}")
        missing = [c for c in cards if c not in state.hands[player]]
        if missing or len(set(cards)) != len(cards):
            shown = ", ".join(card_text(c) for c in missing) or "a card twice"
            raise IllegalAction(
                f"You do not hold {shown}. Your cards: {hand_text(state.hands[player])}."
            )
        s = evolve_state(state)
        for card in cards:
            s.hands[player].remove(card)
        name = s.names[player]
        hidden = Event("down_cards", f"{name} puts {' '.join(cards)} face down.",
                       public=False, data={"player": name, "cards": list(cards)})  # fmt: skip
        reply = f"Face down: {' '.join(card_text(c) for c in cards)}."
        if stage == CONTRACT:
            c = s.contract
            assert c is not None
            c.cards[side] = cards[0]
            text = f"{name} puts a card face down for the contract."
            events = [Event("down", text, data={"player": name, "count": 1}), hidden]
            if all(x is not None for x in c.cards):
                report = resolve_contract(s)
                result = self._end_turn(s, report, report_text(s, report))
                result.events[:0] = events
                result.reply = reply
                return result
        else:
            a = s.attack
            assert a is not None
            a.cards[side].extend(cards)
            a.step += len(cards)
            a.flipped = [False, False]  # each side says "flip" again after a new card
            count = len(a.cards[side])
            text = f"{name} puts {cards_text(len(cards))} face down ({count} down in all)."
            events = [Event("down", text, data={"player": name, "count": len(cards)}), hidden]
            if attack_settled(s):
                return self._flip_attack(s, events, reply, "down")
        context = {**self._common(s), "name": name, "count": len(cards)}
        notices = [Notice(Audience.everyone(), "down", context)]
        a = s.attack
        if a is not None and side == 0 and len(a.cards[0]) == len(cards) and s.hands[a.victim]:
            # The attacker's first card: the victim may now answer.
            notices.append(self._your_move(s, a.victim))
        return Result(s, events, notices, reply)

    def _flip(self, state: MiserState, player: int, action: Action) -> Result[MiserState]:
        if stage_of(state) != ATTACK:
            raise IllegalAction(f"There is nothing to flip now. {now_text(state)}")
        assert state.attack is not None
        side = attack_side(state, player)
        if not state.attack.cards[0]:
            if side == 0:
                raise IllegalAction("Put at least one card face down first, like 'down QS'.")
            raise IllegalAction(f"Wait for {state.names[state.turn]}'s first card.")
        if state.attack.flipped[side]:
            raise IllegalAction("You have said flip; the other side must say it too.")
        s = evolve_state(state)
        assert s.attack is not None
        s.attack.flipped[side] = True
        name = s.names[player]
        events = [Event("flip", f"{name} is ready to flip.", data={"player": name})]
        if attack_settled(s):
            return self._flip_attack(s, events, None, "flip")
        context = {**self._common(s), "name": name}
        return Result(s, events, [Notice(Audience.everyone(), "flip", context)])

    def _flip_attack(
        self, s: MiserState, events: list[Event], reply: str | None, last: str
    ) -> Result[MiserState]:
        """Turn up an attack's cards. ``last`` is the move that settled it
        ("down" or "flip"), so a report of the referee's move for a silent
        player says which it made."""
        report = {**resolve_attack(s), "last_move": last}
        result = self._end_turn(s, report, report_text(s, report))
        result.events[:0] = events
        result.reply = reply
        return result

    # -- the end of a turn (MI-10) ----------------------------------------------

    def _end_turn(self, s: MiserState, report: dict[str, Any], text: str) -> Result[MiserState]:
        """Report a resolved turn to everyone. A player left with no pennies
        is knocked out and the game ends; otherwise the next player's turn."""
        n = len(s.names)
        s.contract = s.attack = s.auction = None
        report = {"turn": s.turn_number, **report}
        s.history.append(report)
        events = [Event("resolved", text, data=report)]
        knocked = [p for p in range(n) if s.pennies[p] == 0]
        if knocked:
            s.over = True
            s.knocked_out = knocked
            top = max(s.pennies)
            s.winners = [p for p in range(n) if s.pennies[p] == top]
            data = {
                "winners": [s.names[p] for p in s.winners],
                "pennies": dict(zip(s.names, s.pennies, strict=True)),
            }
            events.append(Event("game_over", result_text(s), data=data))
        else:
            s.turn = (s.turn + 1) % n
            s.turn_number += 1
            s.offers = 0
        context = {**self._common(s), "report": report}
        notices = [Notice(Audience.everyone(), "round_report", context)]
        if not s.over:
            notices.append(self._your_move(s, s.turn))
        return Result(s, events, notices)

    # -- checks -----------------------------------------------------------------

    def _check_wager(self, state: MiserState, player: int, wager: JSON, whose: str) -> None:
        if not isinstance(wager, int) or not 1 <= wager <= state.wager_cap:
            raise IllegalAction(f"{whose} must be 1 to {state.wager_cap} pennies.")
        if wager > state.pennies[player]:
            has = "you have" if whose == "Your wager" else f"{state.names[player]} has"
            raise IllegalAction(f"{whose} is {wager}, but {has} only {state.pennies[player]}.")

    def _check_bid(self, state: MiserState, player: int, pennies: JSON) -> int:
        if not isinstance(pennies, int) or pennies < 1:
            raise IllegalAction("A bid is 1 penny or more.")
        if pennies > state.pennies[player]:
            raise IllegalAction(
                f"You hold {pennies_text(state.pennies[player])}; you cannot bid more than that."
            )
        return pennies

    def _player(self, state: MiserState, seat: int) -> int:
        if seat not in state.seats:
            raise IllegalAction("You have no seat in this game.")
        return state.seats.index(seat)

    # -- notices ----------------------------------------------------------------

    def _common(self, s: MiserState, *, offer: bool = False) -> dict[str, JSON]:
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
            "to_move_text": _names_text(names) if len(names) <= 3 else f"{len(names)} players",
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
                "bids": [self._bid_json(s, b) for b in au.bids],
                "done": [s.names[p] for p in au.done],
                "declined": [s.names[p] for p in au.declined],
            },
            "game_over": s.over,
            "winners": [s.names[p] for p in s.winners],
            "tie": len(s.winners) > 1,
            "knocked_out": [s.names[p] for p in s.knocked_out],
            "result": result_text(s) if s.over else None,
        }

    def _offer_json(self, s: MiserState) -> dict[str, JSON]:
        c = s.contract
        assert c is not None
        return {
            "by": s.names[s.turn],
            "partner": s.names[c.partner],
            "victim": s.names[c.victim],
            "wagers": list(c.wagers),
            "total": sum(c.wagers),
            "private": c.audience is not None,
            "audience": (
                [s.names[s.seats.index(x)] for x in c.audience] if c.audience is not None else []
            ),
            "audience_text": _names_text(
                [s.names[s.seats.index(x)] for x in c.audience] if c.audience is not None else []
            ),
        }

    def _contract_json(self, s: MiserState) -> dict[str, JSON]:
        c = s.contract
        assert c is not None
        return {
            **self._offer_json(s),
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

    def _bid_json(self, s: MiserState, bid: Bid) -> dict[str, JSON]:
        return {"name": s.names[bid.player], "card": bid.card, "text": card_text(bid.card),
                "value": card_value(bid.card), "pennies": bid.pennies}  # fmt: skip

    def _you(self, s: MiserState, player: int) -> dict[str, JSON]:
        """What only ``player`` may see: eir hand, eir face-down cards, and
        what ey owe now."""
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
            "help": _help_text(s, s.seats[player]),
        }

    def _hand_notice(self, s: MiserState, player: int, reason: str) -> Notice:
        context = {**self._common(s), "you": self._you(s, player), "reason": reason}
        return Notice(Audience.only(s.seats[player]), "hand", context)

    def _your_move(self, s: MiserState, player: int) -> Notice:
        context = {**self._common(s), "you": self._you(s, player)}
        if s.contract is not None and not s.contract.accepted and sees_offer(s, player):
            context["offer"] = self._offer_json(s)
        return Notice(Audience.only(s.seats[player]), "your_move", context)


def _names_text(names: Sequence[str]) -> str:
    """``Ann``, ``Ann and Ben``, ``Ann, Ben and Cat``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _card_codes(cards: Sequence[str]) -> list[str]:
    """``["QS", "10h", "A♠"]`` -> ``["QS", "10H", "AS"]``; raises on a non-card."""
    out = []
    for text in cards:
        card = Card.parse(text)
        if card is None:
            raise ValueError(f"{text!r} is not a card")
        out.append(str(card))
    return out


def _offer_to(s: MiserState, player: int) -> dict[str, JSON]:
    if stage_of(s) != OFFER or s.contract is None or s.contract.partner != player:
        raise IllegalAction(f"No contract offer awaits your answer. {now_text(s)}")
    return {
        "by": s.names[s.turn],
        "partner": s.names[player],
        "victim": s.names[s.contract.victim],
        "wagers": list(s.contract.wagers),
        "total": sum(s.contract.wagers),
        "private": s.contract.audience is not None,
    }


def _require_turn(s: MiserState, player: int, doing: str) -> None:
    if player == s.turn and stage_of(s) == OFFER:
        assert s.contract is not None
        raise IllegalAction(f"Your contract offer awaits {s.names[s.contract.partner]}'s answer.")
    if player != s.turn:
        raise IllegalAction(f"It is {s.names[s.turn]}'s turn, not yours: you cannot {doing} now.")
    if stage_of(s) != TURN:
        raise IllegalAction(f"Your turn is under way. {now_text(s)}")


def _require_cards(s: MiserState, player: int) -> None:
    if not s.hands[player]:
        raise IllegalAction(
            "You have no cards left, so on your turn you can only pass (write 'pass')."
        )


def _args(action: Action, count: int) -> tuple[JSON, ...]:
    if len(action.args) != count:
        raise IllegalAction(f"I cannot read that {action.verb}; write 'help' for examples.")
    return action.args


# -- bots -----------------------------------------------------------------------------


def _bot_turn(s: MiserState, player: int, rng: random.Random) -> Action:
    hand = sort_hand(s.hands[player])
    purse = s.pennies[player]
    if not hand:
        return Action("pass")
    n = len(s.names)
    others = [p for p in range(n) if p != player]
    wager = min(rng.randint(1, s.wager_cap), purse)
    bare = [p for p in others if not s.hands[p]]
    if bare and rng.random() < 0.8:
        return Action("attack", (s.names[rng.choice(bare)], wager))
    roll = rng.random()
    if s.centre >= 6 and roll < 0.4:
        return Action("bid", (hand[-1], min(purse, max(1, s.centre // 3))))
    partners = [p for p in others if s.hands[p]]
    if s.offers == 0 and partners and roll < 0.6:
        partner = rng.choice(partners)
        victim = rng.choice([p for p in others if p != partner])
        yours = min(rng.randint(1, s.wager_cap), s.pennies[partner])
        return Action("contract", (s.names[partner], s.names[victim], wager, yours))
    if roll < 0.85:
        return Action("attack", (s.names[rng.choice(others)], wager))
    return Action("pass")


# -- help -------------------------------------------------------------------------------


def _help_text(s: MiserState, seat: int | None) -> str:
    """What this seat can do now, and how to write it."""
    player = s.seats.index(seat) if seat is not None and seat in s.seats else None
    if s.over:
        return f"The game is over: {result_text(s)}"
    lines: list[str] = []
    owes = owed_step(s, player) if player is not None else None
    hand = sort_hand(s.hands[player]) if player is not None else []
    low = hand[-1] if hand else "7H"
    names = s.names
    if player is not None:
        others = [p for p in range(len(names)) if p != player]
        victim = names[others[-1]]
    if owes == "turn" and player is not None:
        cap = min(s.wager_cap, s.pennies[player])
        lines.append("It is your turn. Write one of:")
        lines.append("  pass")
        lines.append(f"      put {pennies_text(min(PASS_COST, s.pennies[player]))} in the centre")
        if hand:
            partners = [p for p in others if s.hands[p]]
            if partners:
                partner = names[partners[0]]
                target = names[next(p for p in others if p != partners[0])]
                lines.append(f"  contract with {partner} against {target} {cap} 1")
                lines.append(
                    f"      you wager {cap} and {partner} 1 (each 1 to {s.wager_cap});\n"
                    f"      {partner} answers accept or decline"
                )
            lines.append(f"  attack {victim} {cap}")
            lines.append(f"      a wager of 1 to {s.wager_cap}; {victim} matches it")
            bid = min(2, s.pennies[player])
            lines.append(f"  bid {low} {bid}")
            lines.append(
                f"      bid {pennies_text(bid)} for the centre ({pennies_text(s.centre)} now),\n"
                f"      with {card_text(low)} face up"
            )
        else:
            lines.append("You have no cards left, so passing is all you can do.")
    elif owes == "answer":
        assert s.contract is not None
        c = s.contract
        seen = "" if c.audience is None else " (a private offer)"
        lines.append(
            f"{names[s.turn]} offers you a contract against {names[c.victim]}{seen}:\n"
            f"{names[s.turn]} wagers {c.wagers[0]}, you {c.wagers[1]}, and {names[c.victim]} "
            f"matches the {sum(c.wagers)}.\n"
            "Write 'accept' or 'decline'. If you accept, each of you puts one\n"
            "card face down, in a mail to the referee alone."
        )
    elif owes in ("contract_card", "attack_first", "attack"):
        what = {"contract_card": "a card face down for the contract",
                "attack_first": "one or more cards face down for the attack",
                "attack": "a card face down for the attack"}[owes]  # fmt: skip
        lines.append(f"Put {what}, in a mail to the\nreferee alone: 'down {low}'.")
        if owes == "attack":
            lines.append(
                f"You may put down more cards ('down {' '.join(hand[-2:])}'), or write\n"
                "'flip' when you are done."
            )
        lines.append(f"Your cards: {hand_text(hand)}")
    elif owes == "auction_bid":
        lines.append(
            "You are bidding for the centre. Write 'raise 1' to add a\n"
            f"penny, 'raise to N' (up to {s.pennies[player or 0]}), or 'done' (you may\n"
            "raise again if anyone else bids or raises)."
        )
    elif owes == "auction_join" or (
        player is not None and s.auction is not None and hand and not is_bidder(s, player)
    ):
        lines.append(
            "You may join the bidding for the centre with one card\n"
            f"face up and 1 or more pennies: 'bid {low} {min(2, s.pennies[player or 0])}'."
            + (" Or write\n'done' to stay out." if owes == "auction_join" else "")
        )
    elif player is not None and s.auction is not None and is_bidder(s, player):
        lines.append(
            "You have said done. You may still raise your bid ('raise 1'),\n"
            "until every bidder has said done since the last bid or raise."
        )
    else:
        waiting = (
            ", ".join(
                names[p] for p in range(len(names)) if owed_step(s, p) not in (None, "answer")
            )
            or names[s.turn]
        )
        lines.append(f"{now_text(s)} Waiting for: {waiting}.")
    if player is not None:
        lines.append("'hand' shows your cards and pennies in a secret reply.")
    return "\n".join(lines)
