"""The rules of Spades, rule text 001 (Spades), as rulings SP-1 … SP-18
(docs/rulings.md) read them: the state, the cards and tricks, the setup,
each move, who owes what, the timeouts and the scoring.

Players are numbered 1-4 in the playing order drawn by :meth:`SpadesRules.new`
(players 1 and 3 are team 1, players 2 and 4 team 2); the state indexes
everything by that order, 0-based. Seats (``SeatInfo.position``) appear only
where the service needs them: in audiences, pendings and notice contexts.

The notices a move sends carry what the players may see, which the game's
views build (:mod:`referee.games.spades.views`): :class:`SpadesMail` says
what the rules ask of them, and the game class gives the rules its views.
House readings not settled by the text or the rulings are marked
``House reading:`` beside the code that implements them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol

from referee.games.base import (
    JSON,
    Action,
    Audience,
    Event,
    FollowedOrders,
    Forced,
    Game,
    IllegalAction,
    Notice,
    OptionError,
    Pending,
    Placing,
    Result,
    Scope,
    SeatInfo,
)
from referee.games.cards import SUIT_NAMES, SUIT_SYMBOLS, Card, full_deck, rank_value_ace_high
from referee.games.draws import Draws
from referee.games.names import Nameable, find_seat

PLAYERS = 4  # "Players: exactly 4 players and 1 referee are needed."
HAND_SIZE = 13  # rule 1: "deals 13 cards to each player"
TRICKS_PER_ROUND = 13  # rule 3: "The main part of a round consists of 13 tricks."
TARGET = 500  # rule 5: "greater than or equal to 500"
VALID_BIDS: tuple[int, ...] = (0, *range(2, 14))  # rule 2, ruling SP-4: no bid of 1
TIMEOUT_BID = 2  # rule 7: "a bid of 2 is made"
BOT_PLAYS = ("sensible", "random")
MISPLAY_PENALTY = 100  # rule 6, ruling SP-14: "the misplaying player's team scores -100"
MISPLAYS_TO_FORFEIT_IN_HAND = 2  # rule 6: "twice in one hand"
MISPLAYS_TO_FORFEIT_IN_GAME = 3  # rule 6: "three times in a game"

#: Hands are shown spades first, then the red and black suits alternating.
SUIT_ORDER: tuple[str, ...] = ("S", "H", "C", "D")

BIDDING = "bidding"
PLAYING = "playing"
OVER = "over"

#: The bidding and 13 tricks.
TURNS_PER_ROUND = 14

#: The valid bids (rule 2) as the players' mails write them.
VALID_BIDS_TEXT = "0 (nil), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 or 13"
#: How to write a card, told with a play whose card cannot be read.
CARD_HELP = "Write a card as QH, Q♥, 10D, TD or queen of hearts."


# -- state --------------------------------------------------------------------


@dataclass
class Trick:
    """A completed trick: who led, the four cards in play order, who won."""

    leader: int
    cards: list[str]
    winner: int


@dataclass
class SpadesState:
    """One game of Spades. Player indexes (0-3) follow the playing order;
    team indexes are 0 (players 1 and 3) and 1 (players 2 and 4)."""

    order: list[int]  # seat positions in playing order: order[0] is player 1
    names: list[str]  # display names in playing order
    target: int = TARGET
    teams_chosen: bool = False  # teams came from the players, not the draw
    round: int = 1  # ruling SP-18: a round and a hand are the same thing
    phase: str = BIDDING
    hands: list[list[str]] = field(default_factory=lambda: [[] for _ in range(PLAYERS)])
    # Ruling SP-17 keeps the seed from the players, so each deal is committed
    # hand by hand: each player's salt (secret, in eir hand mail) and the
    # SHA-256 of eir hand as dealt with it (public), for this round.
    hand_salts: list[str] = field(default_factory=list)
    hand_sha256: list[str] = field(default_factory=list)
    bids: list[int | None] = field(default_factory=lambda: [None] * PLAYERS)
    turn: int = 0  # the player who owes the next bid or card
    leader: int = 0  # the player who led (or will lead) the current trick
    trick: list[str] = field(default_factory=list)  # cards of the trick in progress
    tricks: list[Trick] = field(default_factory=list)  # completed tricks of this round
    tricks_won: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    scores: list[int] = field(default_factory=lambda: [0, 0])  # the Spadescores
    bags: list[int] = field(default_factory=lambda: [0, 0])  # cumulative, never reset
    hand_misplays: list[int] = field(default_factory=lambda: [0, 0])
    game_misplays: list[int] = field(default_factory=lambda: [0, 0])
    misplay_points: list[int] = field(default_factory=lambda: [0, 0])  # this round
    hand_start_scores: list[int] = field(default_factory=lambda: [0, 0])
    conceded: list[int] = field(default_factory=list)  # players, in order of concession
    reports: list[dict[str, Any]] = field(default_factory=list)  # one per scored round
    winner: int | None = None  # the winning team's number, 1 or 2
    end_reason: str | None = None  # "score", "concession" or "forfeit"
    #: How a bot seat plays (``--option bot``): ``sensible`` (:mod:`.bot`)
    #: or ``random``; a game stored before the option plays random.
    bot: str = "random"
    #: The edition of the rules the game began under (:attr:`SpadesRules.edition`).
    edition: int = 2


def _evolve(state: SpadesState) -> SpadesState:
    """A copy of ``state`` to change, so :meth:`SpadesRules.apply` never
    mutates its input. Like :func:`referee.games.base.evolve`, but it copies
    only the lists (and the hands in them): completed tricks and round
    reports are never changed once made, so they are shared. (A deep copy
    grows with the game's history: late in a game it cost milliseconds a
    card.)"""
    changes: dict[str, Any] = {
        f.name: [list(x) if isinstance(x, list) else x for x in value]
        for f in fields(state)
        if isinstance(value := getattr(state, f.name), list)
    }
    return replace(state, **changes)


# -- cards and tricks ---------------------------------------------------------


def card_of(code: str) -> Card:
    """The card of a code such as ``"QH"``."""
    return Card(code[:-1], code[-1])


def card_text(code: str) -> str:
    """``"QH"`` as players read it: ``"Q♥"``."""
    return card_of(code).symbol


def _sort_key(code: str) -> tuple[int, int]:
    card = card_of(code)
    return SUIT_ORDER.index(card.suit), -rank_value_ace_high(card.rank)


def sort_hand(cards: Iterable[str]) -> list[str]:
    """A hand sorted by suit (♠ ♥ ♣ ♦), highest card first within a suit."""
    return sorted(cards, key=_sort_key)


def hand_lines(hand: Sequence[str]) -> list[str]:
    """A hand as its mail writes it: a line a suit (♠ ♥ ♣ ♦), the suit's
    symbol and its ranks, highest first (``♥ Q 10 2``; ``♦ -`` for none)."""
    cards = sort_hand(hand)
    return [f"{SUIT_SYMBOLS[suit]} {' '.join(c[:-1] for c in cards if c[-1] == suit) or '-'}"
            for suit in SUIT_ORDER]


def hand_commitment_text(hand: Sequence[str], salt: str) -> str:
    """What a hand's commitment hashes: ``hand: `` and the hand as its mail
    writes it, its four lines joined by single spaces
    (``♠ A 10 2 ♥ J 8 ♣ - ♦ K Q 9 …``); a newline, ``salt: `` and the salt
    (32 hex digits), a newline."""
    return f"hand: {' '.join(hand_lines(hand))}\nsalt: {salt}\n"


def hand_commitment(hand: Sequence[str], salt: str) -> str:
    """The SHA-256 (lower-case hex) of :func:`hand_commitment_text`:
    ``printf 'hand: %s\\nsalt: %s\\n' '♠ A K ♥ …' SALT | sha256sum``."""
    return hashlib.sha256(hand_commitment_text(hand, salt).encode("utf-8")).hexdigest()


def dealt_hand(state: SpadesState, player: int) -> list[str]:
    """The 13 cards ``player`` was dealt this round: the cards e holds and
    those e played to this round's tricks (the order is the hand mail's)."""
    played = [t.cards[(player - t.leader) % PLAYERS] for t in state.tricks]
    if state.trick and (player - state.leader) % PLAYERS < len(state.trick):
        played.append(state.trick[(player - state.leader) % PLAYERS])
    return sort_hand([*state.hands[player], *played])


def legal_plays(hand: Sequence[str], trick: Sequence[str]) -> list[str]:
    """The cards of ``hand`` that may go to ``trick`` (rule 3): any card to
    lead (ruling SP-6: spades may be led at any time), else the suit led if
    held."""
    if not trick:
        return list(hand)
    led = trick[0][-1]
    follow = [c for c in hand if c[-1] == led]
    return follow or list(hand)


def _lowest(cards: Sequence[str]) -> str:
    """The lowest of ``cards`` by rank (ace high), a spade only if all are."""
    return min(cards, key=lambda c: (c[-1] == "S", rank_value_ace_high(card_of(c).rank)))


def trick_winner(cards: Sequence[str]) -> int:
    """The position in ``cards`` (play order) of the card that wins (ruling
    SP-7): the highest spade if any spade was played, else the highest of the
    suit led."""
    trump = [i for i, c in enumerate(cards) if c[-1] == "S"]
    led = cards[0][-1]
    candidates = trump or [i for i, c in enumerate(cards) if c[-1] == led]
    return max(candidates, key=lambda i: rank_value_ace_high(card_of(cards[i]).rank))


def first_leader(bids: Sequence[int | None], first_bidder: int) -> int:
    """Who leads trick 1 (ruling SP-5): the highest bidder, the earliest in
    this round's bidding order on a tie; the first bidder if everyone bid
    nil."""
    best = first_bidder
    for step in range(1, PLAYERS):
        player = (first_bidder + step) % PLAYERS
        if (bids[player] or 0) > (bids[best] or 0):
            best = player
    return best


# -- scoring (rule 4) and winning (rule 5) ------------------------------------

DOUBLING_BID = 10  # rule 4, ruling SP-9: "20 times the bid if it was 10 or more"
NIL_POINTS = 100  # rule 4: "the team scores 100 if e took no tricks, or -100 …"
BAGS_PER_PENALTY = 10  # rule 4, ruling SP-11: "their 10th, 20th, 30th, etc. sandbag"
SANDBAG_PENALTY = 100  # rule 4: "they score -100"


def score_team(bids: Sequence[int], tricks: Sequence[int], bags_before: int) -> dict[str, Any]:
    """One team's score for a round, by rule 4 and rulings SP-8 … SP-12.

    ``bids`` and ``tricks`` are the two partners'. "The bids the two players
    won are added together, as are the number of tricks taken by the two
    players": the team bid is the sum of the bids (a nil adds 0) and the
    team's tricks include a nil bidder's (ruling SP-8). The contract counts
    10 a bid, 20 when the team bid is 10 or more, made or set (ruling SP-9);
    each overtrick scores 1 and a sandbag; a set team gets no bags (ruling
    SP-11). Each nil scores ±100 on its own (rulings SP-10, SP-12), and each
    multiple of 10 bags crossed costs 100 (ruling SP-11).
    """
    team_bid = sum(bids)
    team_tricks = sum(tricks)
    doubled = team_bid >= DOUBLING_BID
    per_trick = 20 if doubled else 10
    made = team_tricks >= team_bid
    contract_points = per_trick * team_bid if made else -per_trick * team_bid
    overtricks = team_tricks - team_bid if made else 0
    nils = [
        {
            "index": i,
            "made": tricks[i] == 0,
            "points": NIL_POINTS if tricks[i] == 0 else -NIL_POINTS,
        }
        for i, bid in enumerate(bids)
        if bid == 0
    ]
    nil_points = sum(n["points"] for n in nils)
    bags = bags_before + overtricks
    penalties = bags // BAGS_PER_PENALTY - bags_before // BAGS_PER_PENALTY
    sandbag_points = -SANDBAG_PENALTY * penalties
    return {
        "team_bid": team_bid,
        "team_tricks": team_tricks,
        "doubled": doubled,
        "made": made,
        "contract_points": contract_points,
        "overtricks": overtricks,
        "overtrick_points": overtricks,
        "nils": nils,
        "nil_points": nil_points,
        "bags_before": bags_before,
        "bags_added": overtricks,
        "bags": bags,
        "sandbag_penalties": penalties,
        "sandbag_points": sandbag_points,
        "round_points": contract_points + overtricks + nil_points + sandbag_points,
    }


def _score_round(s: SpadesState) -> dict[str, Any]:
    """Rule 4: "After the 13th trick in a round is completed, each team
    scores", each by :func:`score_team`; the round's report. Then rule 5:
    "After the scoring for a round, if at least one team has a Spadescore of
    greater than or equal to 500, and the teams aren't tied, the team with
    the greater score wins" (ruling SP-13: checked only here)."""
    teams = []
    for team in (0, 1):
        members = team_members(team)
        bids = [s.bids[p] or 0 for p in members]
        tricks = [s.tricks_won[p] for p in members]
        part = score_team(bids, tricks, s.bags[team])
        s.bags[team] = part["bags"]
        s.scores[team] += part["round_points"]
        nils = [
            {"name": s.names[members[n["index"]]], "made": n["made"], "points": n["points"]}
            for n in part.pop("nils")
        ]
        teams.append(
            {
                "number": team + 1,
                "names": [s.names[p] for p in members],
                "bids": [{"name": s.names[p], "bid": s.bids[p]} for p in members],
                "tricks": [{"name": s.names[p], "tricks": s.tricks_won[p]} for p in members],
                **part,
                "nils": nils,
                "misplay_points": s.misplay_points[team],
                "previous_score": s.hand_start_scores[team],
                "score": s.scores[team],
            }
        )
    report = {"round": s.round, "teams": teams}
    s.reports.append(report)
    top = max(s.scores)
    if top >= s.target and s.scores[0] != s.scores[1]:
        s.phase, s.winner, s.end_reason = OVER, s.scores.index(top) + 1, "score"
    return report


def _report_text(report: Mapping[str, Any]) -> str:
    """A round's report as one line of the game's history."""
    parts = []
    for t in report["teams"]:
        contract = "made" if t["made"] else "set"
        # Misplays were scored when they happened; name them so the sum adds up.
        misplays = f", misplays {t['misplay_points']:+d}" if t["misplay_points"] else ""
        parts.append(
            f"team {t['number']} bid {t['team_bid']}, took {t['team_tricks']} ({contract}), "
            f"scores {t['round_points']:+d}{misplays}, now {t['score']}"
        )
    return f"Round {report['round']}: " + "; ".join(parts) + "."


# -- small helpers on the state -----------------------------------------------


def team_of(player: int) -> int:
    return player % 2


def team_members(team: int) -> tuple[int, int]:
    return team, team + 2


def _first_bidder(state: SpadesState) -> int:
    """Ruling SP-3: player 1 bids first in round 1, the next player each
    later round."""
    return (state.round - 1) % PLAYERS


def bidding_order(state: SpadesState) -> list[int]:
    first = _first_bidder(state)
    return [(first + step) % PLAYERS for step in range(PLAYERS)]


def team_label(state: SpadesState, team: int) -> str:
    a, b = team_members(team)
    return f"team {team + 1} ({state.names[a]} & {state.names[b]})"


def bid_text(bid: int) -> str:
    return "nil" if bid == 0 else str(bid)


def _parse_hand(hand: str | Sequence[str]) -> list[str]:
    words = hand.split() if isinstance(hand, str) else list(hand)
    cards = []
    for word in words:
        card = Card.parse(word)
        if card is None:
            raise ValueError(f"not a card: {word!r}")
        cards.append(str(card))
    return cards


# -- the rules ----------------------------------------------------------------


class SpadesMail(Protocol):
    """What the rules ask of the game's views (its Observer,
    :class:`referee.games.spades.views.SpadesViews`, which the game class
    gives them) for the data of the notices a move sends: the rules state
    the move's facts, the views what each audience may see."""

    def common(self, s: SpadesState) -> dict[str, JSON]:
        """The public facts every notice carries."""
        ...

    def trick(self, s: SpadesState, trick: Trick, number: int) -> dict[str, JSON]:
        """A completed trick as notices and views show it."""
        ...

    def hand_notice(self, s: SpadesState, player: int, reason: str) -> Notice:
        """The secret mail of ``player``'s hand."""
        ...

    def your_turn(self, s: SpadesState, misplay: dict[str, JSON] | None = None) -> Notice:
        """The secret call to the player due to bid or play."""
        ...


class SpadesRules(Game[SpadesState]):
    """The rules of rule text 001 as a game: setup, the moves, who owes
    what and the timeouts. Options: ``teams`` ("A+C,B+D", default none) and
    ``target`` (default 500).

    ``deals`` and ``seating`` are test hooks, not player options: ``deals[r]``
    is the deal of round ``r + 1`` as four hands of 13 cards in playing order
    (player 1 first), each a list of card names or one space-separated string;
    later rounds are dealt from the RNG. ``seating`` fixes the playing order
    as seat positions (player 1 first) instead of drawing it.

    What a notice shows beside the move's facts comes from :attr:`views`,
    which the game class (:class:`referee.games.spades.Spades`) gives; its
    bots' moves are the game class's too (:mod:`.bot`).
    """

    #: The views that make each notice's data (:class:`SpadesMail`).
    views: SpadesMail

    option_help: ClassVar[Mapping[str, str]] = {
        "teams": "the partners, e.g. ann+cat,ben+dan (the first pair is team 1); "
                 "drawn at random without it",
        "target": "the points a team plays to",
        "bot": "how a bot seat plays: sensible, or random",
    }
    #: 2 (2026-11-27, ruling SP-17): each hand is committed to as it is
    #: dealt (its salt and fingerprint). A game of edition 1 commits to none.
    edition: ClassVar[int] = 2

    def __init__(
        self,
        *,
        deals: Sequence[Sequence[str | Sequence[str]]] | None = None,
        seating: Sequence[int] | None = None,
    ) -> None:
        self._deals: list[list[list[str]]] = []
        for number, deal in enumerate(deals or (), start=1):
            if isinstance(deal, str):
                raise ValueError(f"deal {number}: give four hands, not one string")
            hands = [sort_hand(_parse_hand(hand)) for hand in deal]
            cards = [c for hand in hands for c in hand]
            if len(hands) != PLAYERS or any(len(h) != HAND_SIZE for h in hands):
                raise ValueError(f"deal {number}: four hands of 13 cards are needed")
            if sorted(cards) != sorted(str(c) for c in full_deck()):
                raise ValueError(f"deal {number}: the hands must hold the 52 cards once each")
            self._deals.append(hands)
        self._seating = list(seating) if seating is not None else None

    # -- setup ----------------------------------------------------------------

    def parse_options(self, raw: Mapping[str, str]) -> dict[str, JSON]:
        options: dict[str, JSON] = {"teams": None, "target": TARGET, "bot": "sensible"}
        for key, value in raw.items():
            if key == "bot":
                if value.strip() not in BOT_PLAYS:
                    raise OptionError(f"bot: {value!r} must be sensible or random")
                options["bot"] = value.strip()
            elif key == "teams":
                options["teams"] = _check_teams_option(value)
            elif key == "target":
                try:
                    target = int(value.strip())
                except ValueError:
                    raise OptionError(f"target: {value!r} is not a whole number") from None
                if target < 1:
                    raise OptionError("target: the score to reach must be at least 1")
                options["target"] = target
            else:
                raise OptionError(
                    f"Spades has no option {key!r}; its options are teams, target, bot")
        return options

    def seat_count(self, options: Mapping[str, JSON]) -> tuple[int, int]:
        return PLAYERS, PLAYERS

    def upgrade(self, data: JSON) -> JSON:
        """A state stored before editions were: of edition 1 if it lacks
        ``hand_salts`` (stored before 2026-11-27), else of edition 2."""
        if isinstance(data, dict) and "edition" not in data:
            return {**data, "edition": 2 if "hand_salts" in data else 1}
        return data

    def new(
        self, options: Mapping[str, JSON], seats: Sequence[SeatInfo], draws: Draws
    ) -> Result[SpadesState]:
        if len(seats) != PLAYERS or len({s.position for s in seats}) != PLAYERS:
            raise OptionError("Spades needs exactly 4 players")
        same, apart, first = _team_constraints(options.get("teams"), seats)
        positions = [s.position for s in seats]
        pairings = [p for p in _pairings(positions) if _fits(p, same, apart)]
        if not pairings:
            raise OptionError("teams: the chosen teams cannot be formed; give two pairs")
        if self._seating is not None:
            order = list(self._seating)
            if sorted(order) != sorted(positions):
                raise OptionError("seating must list each seat position once")
            if not _fits(((order[0], order[2]), (order[1], order[3])), same, apart):
                raise OptionError("seating puts chosen partners side by side")
        else:
            # Ruling SP-1: a random order with partners opposite. Draw the
            # pairing, which team is team 1, and who of each team plays first.
            rng = draws.rng("seating")
            teams = [list(pair) for pair in rng.choice(pairings)]
            rng.shuffle(teams)
            for team in teams:
                rng.shuffle(team)
            if first is not None and first not in teams[0]:
                teams.reverse()  # the first pair named is team 1
            order = [teams[0][0], teams[1][0], teams[0][1], teams[1][1]]
        by_position = {s.position: s.name for s in seats}
        state = SpadesState(
            order=order,
            names=[by_position[p] for p in order],
            target=int(options.get("target") or TARGET),
            teams_chosen=bool(same or apart),
            bot=str(options.get("bot") or "random"),
            edition=self.edition_begun(options),
        )
        self._deal(state, draws)
        seating_text = ", ".join(f"{i + 1} {name}" for i, name in enumerate(state.names))
        events = [
            Event(
                "seating",
                f"Seating: {seating_text}. Team 1: {state.names[0]} & {state.names[2]}; "
                f"team 2: {state.names[1]} & {state.names[3]}.",
                data={"order": list(order), "names": list(state.names)},
            ),
            *self._deal_events(state),
        ]
        notices = [
            Notice(
                Audience.everyone(),
                "opening",
                {
                    **self.views.common(state),
                    "teams_chosen": state.teams_chosen,
                    "valid_bids": list(VALID_BIDS),
                    "hand_commitments": self._commitment_list(state),
                },
            ),
            *self._hand_notices(state),
        ]
        return Result(state, events, notices)

    # -- play -----------------------------------------------------------------

    def accepts(self, action: Action, scope: Scope) -> None:
        """Every command is accepted in every scope.

        Rule 6 makes bids and plays public, and issue 3 asks for moves mailed
        to the referee alone to count as well: the referee announces every
        bid, card and misplay to everyone, so a move sent in secret becomes
        public all the same. House reading (ruling SP-16): a concession, too,
        may be mailed in any scope; the referee posts it publicly at once,
        which is what makes it count. ``hand`` may come in any scope; its
        answer is always secret.
        """

    def apply(
        self, state: SpadesState, seat: int, action: Action, draws: Draws
    ) -> Result[SpadesState]:
        player = self._player(state, seat)
        if action.verb == "hand":
            notice = self.views.hand_notice(state, player, "request")
            return Result(state, notices=[notice], reply="Your hand is below, for you alone.")
        if state.phase == OVER:
            raise IllegalAction(f"The game is over: {self._result_text(state)}")
        if action.verb == "concede":
            return self._concede(state, player)
        if action.verb == "bid":
            return self._bid(state, player, _int_arg(action))
        if action.verb == "play":
            return self._play(state, player, _card_arg(action), draws)
        raise IllegalAction(f"Spades has no command {action.verb!r}.")

    def pending(self, state: SpadesState) -> list[Pending]:
        if state.phase == OVER:
            return []
        seat = state.order[state.turn]
        if state.phase == BIDDING:
            return [Pending(seat, f"r{state.round}-bid-{seat}", f"a bid for round {state.round}")]
        number = len(state.tricks) + 1
        # The misplay count is in the key: a player told to play again after
        # a misplay gets a fresh deadline.
        key = f"r{state.round}-t{number}-{seat}-m{sum(state.game_misplays)}"
        return [Pending(seat, key, f"a card to trick {number}")]

    def timeout_action(self, state: SpadesState, seat: int, draws: Draws) -> Action:
        """Rule 7 and ruling SP-15: a bid of 2, or a random card among the legal plays."""
        player = self._due(state, seat)
        if state.phase == BIDDING:
            return Action("bid", (TIMEOUT_BID,))
        rng = self.move_rng(state, seat, draws, "timeout")
        return Action("play", (rng.choice(legal_plays(state.hands[player], state.trick)),))

    # -- moves the referee makes for a player (issue 37) -------------------------

    def forced_action(self, state: SpadesState, seat: int) -> Forced | None:
        """Only the last card of a hand is forced (SP-21): everyone knows
        each seat holds one card then, so playing it at once tells nothing.
        The only card held of the suit led is not: playing it at once would
        tell the table the seat holds no other card of that suit, and rule 6
        lets nobody reveal what cards a player has (issue 37)."""
        if state.phase != PLAYING or seat not in state.order:
            return None
        player = state.order.index(seat)
        if state.turn != player or len(state.hands[player]) != 1:
            return None
        card, name = state.hands[player][0], state.names[player]
        return Forced(Action("play", (card,)),
                      f"{name} had one card left: {card_text(card)} played for them.")

    def follow_orders(self, state: SpadesState, seat: int,
                      orders: Sequence[JSON]) -> FollowedOrders:
        """A Spades standing order (``words.parse_order``) plays a card of
        its round when it applies: ``if`` (a card if a suit is led), ``low``
        (the lowest legal card, spades last), ``list`` (its cards in order,
        each when the seat is next to play). An order whose card the seat no
        longer holds, or that rule 3 would make a misplay, is dropped (issue
        37): the referee never misplays for a player."""
        left: list[JSON] = []
        dropped: list[str] = []
        action: Action | None = None
        player = state.order.index(seat) if seat in state.order else None
        if player is None or state.phase == OVER:
            return FollowedOrders(None, [], [])
        hand = state.hands[player]
        to_play = state.phase == PLAYING and state.turn == player
        legal = legal_plays(hand, state.trick) if to_play else []
        for order in orders:
            order = dict(order)
            text = str(order.get("text", ""))
            order.setdefault("round", state.round)
            if order["round"] != state.round:
                dropped.append(f"{text}: round {order['round']} is over.")
                continue
            cards = [str(c) for c in order.get("cards", [])]
            missing = next((c for c in cards if c not in hand), None)
            if missing is not None:
                dropped.append(f"{text}: {card_text(missing)} is not in your hand.")
                continue
            kind = order.get("kind")
            applies = to_play and action is None and (
                kind in ("low", "list")
                or (kind == "if" and bool(state.trick) and state.trick[0][-1] == order["suit"]))
            if not applies:
                left.append(order)
                continue
            card = cards[0] if cards else _lowest(legal)
            if card not in legal:
                suit = SUIT_NAMES[state.trick[0][-1]]
                dropped.append(f"{text}: {suit} were led and you hold {suit}, so "
                               f"{card_text(card)} would be a misplay (rule 3).")
                continue
            action = Action("play", (card,))
            if kind == "list" and len(cards) > 1:
                rest = cards[1:]
                left.append({**order, "cards": rest,
                             "text": "play " + ", ".join(card_text(c) for c in rest)})
        return FollowedOrders(action, left, dropped)

    def random_bot_action(self, state: SpadesState, seat: int, draws: Draws) -> Action:
        """A bot plays a random legal card, as issue 3 asks, and bids by a
        rough count of its likely tricks, give or take one, never below 2.
        With no likely trick it bids nil one time in five. (Measured over
        bot games: nils by random players fail four times in five, and with
        these bids a bot game to 500 lasts some 17 rounds.)"""
        player = self._due(state, seat)
        rng = self.move_rng(state, seat, draws, "bot")
        if state.phase == PLAYING:
            return Action("play", (rng.choice(legal_plays(state.hands[player], state.trick)),))
        estimate = _estimate_tricks(state.hands[player])
        if estimate == 0 and rng.random() < 1 / 5:
            return Action("bid", (0,))
        bid = estimate + rng.choice((-1, 0, 0, 1))
        return Action("bid", (min(max(bid, 2), 13),))

    def replace_with_bot(self, state: SpadesState, seat: int) -> Result[SpadesState]:
        """Issue 3: ``resign`` hands the seat to a bot (sensible, or random
        with ``bot=random``). The state does not change (the service marks
        the seat a bot); everyone is told, since a bot now plays for one of
        the teams."""
        player = self._player(state, seat)
        name = state.names[player]
        how = "plays random legal cards" if state.bot == "random" else "plays for its partner"
        text = f"{name} has left the game; a bot that {how} takes the seat."
        context = {**self.views.common(state), "name": name, "team": team_of(player) + 1,
                   "at_random": state.bot == "random"}
        return Result(
            state,
            [Event("resign", text, data={"player": name, "team": team_of(player) + 1})],
            [Notice(Audience.everyone(), "resign", context)],
            text,
        )

    def is_over(self, state: SpadesState) -> bool:
        return state.phase == OVER

    def placings(self, state: SpadesState) -> list[Placing] | None:
        """The winning team (both partners) first, the other second."""
        if state.phase != OVER or state.winner is None:
            return None
        return [Placing(tuple(state.order[p] for p in team_members(team)),
                        1 if team == state.winner - 1 else 2) for team in (0, 1)]

    def turn_name(self, turn: int, now: int | None = None) -> str:
        """The players' mails never number a turn: the bidding of a round, or
        one of its tricks ("trick 5 of round 2"; "trick 5" beside a turn of
        the same round)."""
        number, step = divmod(turn - 1, TURNS_PER_ROUND)
        name = "the bidding" if step == 0 else f"trick {step}"
        same = now is not None and (now - 1) // TURNS_PER_ROUND == number
        return name if same else f"{name} of round {number + 1}"

    def turn(self, state: SpadesState) -> int:
        """Each player moves once in a round's bidding and once a trick, so
        the turns count them through the game: 14 a round, the bidding
        first (a misplay's retry stays in its trick's turn)."""
        return (state.round - 1) * TURNS_PER_ROUND + (
            1 if state.phase == BIDDING else 2 + len(state.tricks))

    # -- the moves ------------------------------------------------------------

    def _bid(self, state: SpadesState, player: int, bid: int) -> Result[SpadesState]:
        if state.phase != BIDDING:
            raise IllegalAction("The bidding is over for this round; it is time to play cards.")
        if state.turn != player:
            raise IllegalAction(f"It is {state.names[state.turn]}'s turn to bid, not yours.")
        if bid not in VALID_BIDS:
            raise IllegalAction(f"{bid} is not a valid bid. The valid bids are {VALID_BIDS_TEXT}.")
        s = _evolve(state)
        s.bids[player] = bid
        done = all(b is not None for b in s.bids)
        leader: int | None = None
        if done:
            leader = first_leader(s.bids, _first_bidder(s))
            s.phase, s.turn, s.leader = PLAYING, leader, leader
        else:
            s.turn = (player + 1) % PLAYERS
        text = f"{s.names[player]} bids {bid_text(bid)}."
        if leader is not None:
            text += f" The bidding is over; {s.names[leader]} leads to trick 1."
        context = {
            **self.views.common(s),
            "name": s.names[player],
            "bid": bid,
            "bid_text": bid_text(bid),
            "bidding_over": done,
            "leader": s.names[leader] if leader is not None else None,
        }
        return Result(
            s,
            [Event("bid", text, data={"player": s.names[player], "bid": bid})],
            [Notice(Audience.everyone(), "bid", context), self.views.your_turn(s)],
        )

    def _play(
        self, state: SpadesState, player: int, card: str, draws: Draws
    ) -> Result[SpadesState]:
        if state.phase != PLAYING:
            raise IllegalAction(
                f"The bidding is not over: it is {state.names[state.turn]}'s turn to bid."
            )
        if state.turn != player:
            # Ruling SP-14: a play out of turn is refused, not a misplay.
            raise IllegalAction(f"It is {state.names[state.turn]}'s turn to play, not yours.")
        hand = state.hands[player]
        if card not in hand:
            return self._misplay(
                state, player, card, "not_held", f"You do not hold {card_text(card)}."
            )
        if card not in legal_plays(hand, state.trick):
            suit = SUIT_NAMES[state.trick[0][-1]]
            return self._misplay(
                state,
                player,
                card,
                "revoke",
                f"{suit.capitalize()} were led and you hold {suit}: you must follow suit.",
            )
        s = _evolve(state)
        s.hands[player].remove(card)
        s.trick.append(card)
        number = len(s.tricks) + 1
        events = [
            Event(
                "play",
                f"{s.names[player]} plays {card_text(card)} to trick {number}.",
                data={"player": s.names[player], "card": card, "trick": number},
            ),
        ]
        played = {"name": s.names[player], "card": card, "card_text": card_text(card)}
        if len(s.trick) < PLAYERS:
            s.turn = (player + 1) % PLAYERS
            notice = Notice(Audience.everyone(), "play", {**self.views.common(s), **played})
            return Result(s, events, [notice, self.views.your_turn(s)])
        winner = (s.leader + trick_winner(s.trick)) % PLAYERS
        done = Trick(leader=s.leader, cards=list(s.trick), winner=winner)
        s.tricks.append(done)
        s.tricks_won[winner] += 1
        s.trick = []
        s.leader = s.turn = winner
        completed = self.views.trick(s, done, number)
        events.append(
            Event(
                "trick",
                f"{s.names[winner]} wins trick {number} with {completed['winning_card_text']}.",
                data={"trick": number, "cards": list(done.cards), "winner": s.names[winner]},
            )
        )
        if len(s.tricks) < TRICKS_PER_ROUND:
            context = {**self.views.common(s), **played, "completed": completed}
            return Result(
                s, events, [Notice(Audience.everyone(), "trick", context), self.views.your_turn(s)]
            )
        report = _score_round(s)
        events.append(Event("round_scored", _report_text(report), data=report))
        if s.phase == OVER:
            events.append(self._game_over_event(s))
            notices: list[Notice] = []
        else:
            self._next_round(s, draws)
            events.extend(self._deal_events(s))
            notices = self._hand_notices(s)
        context = {**self.views.common(s), **played, "completed": completed, "report": report,
                   "hand_commitments": [] if s.phase == OVER else self._commitment_list(s)}
        return Result(s, events, [Notice(Audience.everyone(), "round_report", context), *notices])

    def _misplay(
        self, state: SpadesState, player: int, card: str, reason: str, message: str
    ) -> Result[SpadesState]:
        """Ruling SP-14: the card is void, the team scores -100 at once and the
        same player plays again; a 2nd misplay in a hand or 3rd in the game
        forfeits.

        Because the card is refused at once, no play ever follows a misplay
        that is not yet voided, so ruling SP-14's last sentence never applies.

        House reading (ruling SP-17): the public notice does not name the card
        or the reason, since either could tell others what the player holds;
        only the misplaying player is told, in secret.
        """
        s = _evolve(state)
        team = team_of(player)
        s.scores[team] -= MISPLAY_PENALTY
        s.misplay_points[team] -= MISPLAY_PENALTY
        s.hand_misplays[team] += 1
        s.game_misplays[team] += 1
        forfeit = (
            s.hand_misplays[team] >= MISPLAYS_TO_FORFEIT_IN_HAND
            or s.game_misplays[team] >= MISPLAYS_TO_FORFEIT_IN_GAME
        )
        if forfeit:
            s.phase, s.winner, s.end_reason = OVER, 2 - team, "forfeit"
        text = (
            f"{s.names[player]} misplayed; the card is void and team {team + 1} scores "
            f"-{MISPLAY_PENALTY}."
        )
        text += f" Team {team + 1} forfeits." if forfeit else f" {s.names[player]} plays again."
        events = [
            Event(
                "misplay",
                text,
                data={
                    "player": s.names[player],
                    "team": team + 1,
                    "forfeit": forfeit,
                },
            ),
            Event(
                "misplay_card",
                f"{s.names[player]} tried {card}: {reason}.",
                public=False,
                data={"player": s.names[player], "card": card, "reason": reason},
            ),
        ]
        if forfeit:
            events.append(self._game_over_event(s))
        context = {
            **self.views.common(s),
            "name": s.names[player],
            "team": team + 1,
            "penalty": -MISPLAY_PENALTY,
            "misplays_hand": s.hand_misplays[team],
            "misplays_game": s.game_misplays[team],
            "forfeit": forfeit,
        }
        notices = [Notice(Audience.everyone(), "misplay", context)]
        # The transcript goes to the misplaying player alone, so it may say why.
        reply = (
            f"Misplay: {message} The card is void and your team scores -{MISPLAY_PENALTY} "
            f"(misplays this hand: {s.hand_misplays[team]}, this game: {s.game_misplays[team]})."
        )
        reply += " Your team forfeits the game." if forfeit else " Please play again."
        if not forfeit:
            misplay = {
                "card": card,
                "card_text": card_text(card),
                "reason": reason,
                "message": message,
            }
            notices.append(self.views.your_turn(s, misplay))
        return Result(s, events, notices, reply, penalty=True)

    def _concede(self, state: SpadesState, player: int) -> Result[SpadesState]:
        """Ruling SP-16: one partner's concession is recorded; the game ends
        when the second partner concedes, and the other team wins."""
        if player in state.conceded:
            raise IllegalAction("You have already conceded; the game ends if your partner does.")
        s = _evolve(state)
        s.conceded.append(player)
        team = team_of(player)
        partner = (player + 2) % PLAYERS
        both = partner in s.conceded
        text = f"{s.names[player]} concedes for team {team + 1}."
        events = [Event("concession", text, data={"player": s.names[player], "team": team + 1})]
        if both:
            s.phase, s.winner, s.end_reason = OVER, 2 - team, "concession"
            events.append(self._game_over_event(s))
        context = {
            **self.views.common(s),
            "name": s.names[player],
            "team": team + 1,
            "partner": s.names[partner],
            "partner_conceded": both,
        }
        return Result(s, events, [Notice(Audience.everyone(), "concession", context)])

    # -- rounds ---------------------------------------------------------------

    def _deal(self, state: SpadesState, draws: Draws) -> None:
        """Rule 1: shuffle the 52 cards (``deal`` keyed by the round) and deal
        13 to each player."""
        if state.round <= len(self._deals):
            hands = [list(h) for h in self._deals[state.round - 1]]
        else:
            deck = [str(c) for c in full_deck()]
            draws.rng("deal", state.round).shuffle(deck)
            hands = [sort_hand(deck[i * HAND_SIZE : (i + 1) * HAND_SIZE]) for i in range(PLAYERS)]
        state.hands = hands
        if state.edition < 2:  # begun before the hands were committed
            state.turn = state.leader = _first_bidder(state)
            return
        # Drawn after the deal, which they must not change (a game of the
        # counter scheme draws both from one generator).
        salts = (draws.rng("hand-salt", state.round, seat) for seat in state.order)
        state.hand_salts = [f"{rng.getrandbits(128):032x}" for rng in salts]
        state.hand_sha256 = [hand_commitment(hands[p], state.hand_salts[p]) for p in range(PLAYERS)]
        state.turn = state.leader = _first_bidder(state)

    def _next_round(self, s: SpadesState, draws: Draws) -> None:
        s.round += 1
        s.phase = BIDDING
        s.bids = [None] * PLAYERS
        s.trick, s.tricks = [], []
        s.tricks_won = [0] * PLAYERS
        s.hand_misplays = [0, 0]
        s.misplay_points = [0, 0]
        s.hand_start_scores = list(s.scores)
        self._deal(s, draws)

    def _deal_events(self, s: SpadesState) -> list[Event]:
        first = s.names[_first_bidder(s)]
        return [
            Event(
                "deal",
                f"Round {s.round}: 13 cards dealt to each player; {first} bids first.",
                data={"round": s.round, "hand_sha256": self._commitments(s)}
                if s.edition >= 2 else {"round": s.round},
            ),
            Event(
                "hands",
                f"Round {s.round} hands.",
                public=False,
                data={
                    "round": s.round,
                    "hands": {s.names[p]: list(s.hands[p]) for p in range(PLAYERS)},
                    "salts": {s.names[p]: salt for p, salt in enumerate(s.hand_salts)},
                },
            ),
        ]

    @staticmethod
    def _commitments(s: SpadesState) -> dict[str, JSON]:
        """Each player's hand commitment of the round just dealt, by name."""
        return {s.names[p]: h for p, h in enumerate(s.hand_sha256)}

    @staticmethod
    def _commitment_list(s: SpadesState) -> list[JSON]:
        """The hand commitments as the mail that starts a round lists them."""
        return [{"name": s.names[p], "sha256": h} for p, h in enumerate(s.hand_sha256)]

    def _hand_notices(self, s: SpadesState) -> list[Notice]:
        """Rule 1: each player's cards by secret mail; the first bidder's
        mail doubles as eir call to bid."""
        return [self.views.hand_notice(s, p, "deal") for p in range(PLAYERS)]

    # -- who acts, and how the game ended -------------------------------------

    def _player(self, state: SpadesState, seat: int) -> int:
        if seat not in state.order:
            raise IllegalAction("You have no seat in this game.")
        return state.order.index(seat)

    def _due(self, state: SpadesState, seat: int) -> int:
        player = self._player(state, seat)
        if state.phase == OVER or state.turn != player:
            raise IllegalAction(f"{state.names[player]} owes no action now.")
        return player

    def _result_text(self, s: SpadesState) -> str:
        if s.winner is None:
            return "no result yet."
        label = team_label(s, s.winner - 1)
        how = {
            "score": f"with {s.scores[s.winner - 1]} to {s.scores[2 - s.winner]}",
            "concession": "by the other team's concession",
            "forfeit": "by the other team's forfeit",
        }[s.end_reason or "score"]
        return f"{label[0].upper()}{label[1:]} wins {how}."

    def _game_over_event(self, s: SpadesState) -> Event:
        return Event(
            "game_over",
            self._result_text(s),
            data={"winning_team": s.winner, "reason": s.end_reason, "scores": list(s.scores)},
        )


# -- the teams option and the seating (setup) ---------------------------------


def _check_teams_option(value: str) -> str | None:
    """``teams`` is "A+C,B+D" (or just "A+C"), each player named by
    address, name, a word of the name or the part of the address before the
    @: checked for shape here and matched against the players in
    :meth:`SpadesRules.new`, the first pair given being team 1."""
    text = value.strip()
    if not text:
        return None
    groups = [g.split("+") for g in text.split(",")]
    names = [" ".join(n.split()).lower() for g in groups for n in g]
    if len(groups) > 2 or any(len(g) != 2 for g in groups) or any(not n for n in names):
        raise OptionError(
            f"teams: {value!r} should be two pairs of players, each pair joined by '+' and "
            "the pairs by ',', like ann@example.org+cat@example.org,ben@example.org+dan@example.org"
        )
    for n in names:
        if names.count(n) > 1:
            raise OptionError(f"teams: {n!r} is named twice in {value!r}")
    return text


def _team_constraints(
    teams: JSON, seats: Sequence[SeatInfo]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int | None]:
    """The pairs of seats that must be partners and that must not be, from
    teams given with the seats (``SeatInfo.team``) and from the ``teams``
    option, and a seat of team 1 (the first named in the option). Players
    in different teams of the same source must not be partners; the two
    sources may repeat each other, and if they disagree no seating fits
    them both."""
    labelled: dict[str, list[int]] = {}
    for s in seats:
        if s.team:
            labelled.setdefault(s.team, []).append(s.position)
    sources = [list(labelled.items())]
    first: int | None = None
    if isinstance(teams, str) and teams:
        named = [
            (group.strip(), [_seat_named(name, seats) for name in group.split("+")])
            for group in teams.split(",")
        ]
        everyone = [seat for _, pair in named for seat in pair]
        for seat in everyone:
            if everyone.count(seat) > 1:
                who = next(s.name for s in seats if s.position == seat)
                raise OptionError(f"teams: {teams!r} names {who} twice")
        sources.append(named)
        first = everyone[0]
    same: list[tuple[int, int]] = []
    apart: list[tuple[int, int]] = []
    for groups in sources:
        for label, members in groups:
            if len(members) > 2:
                raise OptionError(f"teams: team {label!r} has more than two players")
            if len(members) == 2:
                same.append((members[0], members[1]))
        for i, (_, one) in enumerate(groups):
            for _, other in groups[i + 1 :]:
                apart.extend((a, b) for a in one for b in other)
    return same, apart, first


def _seat_named(name: str, seats: Sequence[SeatInfo]) -> int:
    """The seat a player is called by in the ``teams`` option, as players
    name each other (``referee.games.names``): an address by the part
    before the @, which the service gives each seat as an alias."""
    try:
        return find_seat(name, [Nameable(s.position, s.name, s.aliases) for s in seats])
    except IllegalAction as e:
        raise OptionError(f"teams: {e}") from None


def _pairings(positions: Sequence[int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    a, b, c, d = positions
    return [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]


def _fits(
    pairing: tuple[tuple[int, int], tuple[int, int]],
    same: Sequence[tuple[int, int]],
    apart: Sequence[tuple[int, int]],
) -> bool:
    def together(x: int, y: int) -> bool:
        return any(x in pair and y in pair for pair in pairing)

    return all(together(x, y) for x, y in same) and not any(together(x, y) for x, y in apart)


# -- an action's arguments, and the bots' bids --------------------------------


def _int_arg(action: Action) -> int:
    if len(action.args) != 1 or not isinstance(action.args[0], int):
        raise IllegalAction("A bid is one number: write, for example, 'bid 4' or 'bid nil'.")
    return action.args[0]


def _card_arg(action: Action) -> str:
    card = Card.parse(str(action.args[0])) if len(action.args) == 1 else None
    if card is None:
        raise IllegalAction(f"That is not a card. {CARD_HELP}")
    return str(card)


def _estimate_tricks(hand: Sequence[str]) -> int:
    """A rough count of the tricks a hand should take, for bots: top spades
    and spade length, and side aces and guarded kings."""
    tricks = 0.0
    for suit in SUIT_ORDER:
        ranks = [c[:-1] for c in hand if c[-1] == suit]
        if suit == "S":
            tricks += sum(1 for r in ranks if r == "A")
            tricks += 0.8 if "K" in ranks and len(ranks) >= 2 else 0
            tricks += 0.5 if "Q" in ranks and len(ranks) >= 3 else 0
            tricks += max(0, len(ranks) - 3) * 0.8
        else:
            tricks += 1 if "A" in ranks and len(ranks) <= 6 else 0
            tricks += 0.7 if "K" in ranks and 2 <= len(ranks) <= 5 else 0
    return round(tricks)
