"""How many mails a player of each game gets from the referee (issue 21),
per mail mode, with a public list and without: the README's table.

Each game is played by mail on Maildir and SQLite by players who answer
every move they owe within the hour, one mail a move, as a club plays: the
move a player makes is the one a random bot would choose (seeded), written
as a player writes it. Public moves go to the list when there is one (the
list's own copy reaches the referee), secret ones (a sealed bid, a card
face down, a tournament member's work on their own hand) to the referee
alone, a Miser contract to the partner with the referee on Cc. A player
counts every mail of the referee that reaches them: their own mails, and
the list's posts, which every player reads. A list reader without a seat
reads the posts alone.

Run alone, ``python -m tests.test_mail_counts`` prints the table.
"""

from __future__ import annotations

import mailbox
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest

from referee.games import get_game
from referee.games.base import Action, EngineError, Scope
from referee.games.draws import SequentialDraws
from referee.passes import run_pass
from tests.test_referee import REF, T0, Club

NAMES = ["Alice", "Bob", "Carol", "Dave"]
LIST = "table@club.test"
MODES = ("turns", "digest", "all")
#: What each game is played for: its players, and how far it goes.
GAMES: dict[str, tuple[int, str]] = {
    "goofspiel": (2, "a game of 6 rounds"),
    "pure-skill": (3, "a game of 13 rounds"),
    "spades": (4, "a round"),
    "miser": (3, "a game"),
    "loatcg": (4, "8 weeks"),
}
#: A tournament member acts on this many days of seven, on average.
TOURNAMENT_DAYS = 3 / 7
#: How often a member who acts offers a trade.
TOURNAMENT_OFFERS = 0.3
README = Path(__file__).resolve().parents[1] / "README.md"


def address(name: str) -> str:
    return f"{name.lower()}@club.test"


@dataclass
class Census:
    """One game played to its end (or to the end of its first round), and
    the referee's mails counted by who reads them."""

    kind: str
    listed: bool
    mode: str
    root: Path
    players: list[str] = field(init=False)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        count, _ = GAMES[self.kind]
        self.players = NAMES[:count]
        self.rng = random.Random(f"census-{self.kind}")
        self.engine = get_game(self.kind)
        self.club = Club(self.root, **({"public_list": LIST} if self.listed else {}))
        self.tag = self.club.referee.operator.create_game(
            self.kind, [f"{n} <{address(n)}>" for n in self.players],
            options={"mail": self.mode}, now=T0, seed=f"census-{self.kind}")
        self.now = T0
        self.sent = 0

    # -- the players -------------------------------------------------------------

    def state(self) -> Any:
        return self.engine.load(self.club.referee.reading.stored_state(self.tag))

    def write(self, seat: int, action: Action) -> None:
        """The player at ``seat`` mails ``action``, then the referee reads it."""
        name = self.players[seat - 1]
        to, cc = self.audience(seat, action)
        self.club.send(f"{name} <{address(name)}>", f"{self.engine.read_as(action)}\n\n{name}\n",
                       subject=f"[{self.tag}] move", to=to, cc=cc)
        self.sent += 1
        self.now += timedelta(hours=1)
        run_pass(self.club.referee, self.now)

    def audience(self, seat: int, action: Action) -> tuple[str, str | None]:
        """Where a player sends ``action``: the list when the move is public
        and there is one, else the referee alone; a private move (a Miser
        contract and its answer, a tournament trade) to the players it
        concerns, with the referee on Cc."""
        others = [address(self.players[s - 1]) for s in sorted(action.seen_by) if s != seat]
        if action.scope is Scope.PRIVATE and others:
            return ", ".join(others), REF
        if action.scope is Scope.SECRET:
            return REF, None
        if action.scope is Scope.PUBLIC:
            return (LIST if self.listed else REF), None
        try:
            self.engine.accepts(action, Scope.PUBLIC)
        except EngineError:
            return REF, None
        return (LIST if self.listed else REF), None

    def move(self, seat: int, rng: random.Random) -> Action | None:
        """The move a player at ``seat`` makes now, with the audience the
        rules give it (a random bot's choice, seeded)."""
        state = self.state()
        try:
            # The random bot's, not the sensible one's: a player as the table counts them.
            action = self.engine.random_bot_action(state, seat, SequentialDraws(rng))
        except EngineError:
            return None
        if self.kind == "loatcg":
            return self.trade(state, seat, action, rng)
        if self.kind == "miser" and action.verb == "contract":
            partner = state.seats[list(state.names).index(str(action.args[0]))]
            return Action(action.verb, action.args, Scope.PRIVATE, frozenset({partner}))
        if self.kind == "miser" and action.verb in ("accept", "decline"):
            # The answer goes to those who saw the offer (rule text 004).
            offer = state.contract
            if offer is not None and offer.audience is not None:
                return Action(action.verb, action.args, Scope.PRIVATE,
                              frozenset({state.seats[state.turn]}))
        return action

    def trade(self, state: Any, seat: int, action: Action, rng: random.Random) -> Action:
        """A member trades as people do (rule 10): now and then they offer
        a card they hold for one of another type, on the list (or, with no
        list, to every other member), and they take up an open offer they
        can meet in the audience it was made in; else their quiet choice."""
        member = next(mb for mb in state.members if mb.seat == seat)
        held = [t for t, n in member.hand.items() if n and t != "apple"]
        others = frozenset(mb.seat for mb in state.members if mb.seat != seat)
        if held and rng.random() < TOURNAMENT_OFFERS:
            give = rng.choice(held)
            want = rng.choice([t for t in member.hand if t not in (give, "apple")])
            offer = Action("offer", ({give: 1}, {want: 1}, []))
            return (Action(offer.verb, offer.args, Scope.PUBLIC) if self.listed
                    else Action(offer.verb, offer.args, Scope.PRIVATE, others))
        if action.verb == "execute":
            offer = next(o for o in state.offers if o.number == action.args[0])
            if not offer.audience:
                return (Action(action.verb, action.args, Scope.PUBLIC) if self.listed
                        else Action(action.verb, action.args, Scope.PRIVATE, others))
        return action

    # -- the game ----------------------------------------------------------------

    def play(self) -> None:
        run_pass(self.club.referee, self.now)
        if self.kind == "loatcg":
            self.play_weeks(8)
            return
        for _ in range(2000):
            state = self.state()
            if self.engine.is_over(state) or (self.kind == "spades" and state.round > 1):
                return
            owing = sorted({p.seat for p in self.engine.pending(state)
                            if p.seat and p.due_in is None})
            if not owing:
                raise AssertionError(f"{self.tag}: nobody owes a move")
            for seat in owing:
                action = self.move(seat, self.rng)
                if action is not None:
                    self.write(seat, action)
        raise AssertionError(f"{self.tag}: not over after 2000 moves")

    def play_weeks(self, weeks: int) -> None:
        """A tournament: each member acts on some days (their own hand,
        trades), and the referee's sweep runs every day."""
        for _ in range(weeks * 7):
            day = self.now.replace(hour=9, minute=0) + timedelta(days=1)
            for seat in range(1, len(self.players) + 1):
                if self.rng.random() < TOURNAMENT_DAYS:
                    action = self.move(seat, self.rng)
                    if action is not None:
                        self.write(seat, action)
            self.now = day
            run_pass(self.club.referee, self.now)

    # -- the count ---------------------------------------------------------------

    def mails(self) -> Iterator[EmailMessage]:
        box = mailbox.Maildir(self.root / "out", create=True)
        for key in box.iterkeys():
            msg = message_from_bytes(box.get_bytes(key), policy=default)
            assert isinstance(msg, EmailMessage)
            yield msg

    def counts(self) -> tuple[list[int], int]:
        """Each player's mails from the referee, and the list's posts."""
        per = [0] * len(self.players)
        posts = 0
        for msg in self.mails():
            rcpts = {a.addr_spec for h in ("To", "Cc") for a in getattr(msg[h], "addresses", ())}
            if LIST in rcpts:
                posts += 1
            for i, name in enumerate(self.players):
                per[i] += address(name) in rcpts or LIST in rcpts
        return per, posts


    def played(self) -> str:
        """What was played, for the table: a Miser game's turns too."""
        count, what = GAMES[self.kind]
        if self.kind == "miser":
            what = f"{what} of {len(self.state().history)} turns"
        return f"{count} players, {what}"


def census(kind: str, listed: bool, mode: str) -> tuple[list[int], int, int, str]:
    """Each player's count, the list's posts, the players' own mails and
    what was played."""
    with TemporaryDirectory() as tmp:
        game = Census(kind, listed, mode, Path(tmp))
        try:
            game.play()
            per, posts = game.counts()
            return per, posts, game.sent, game.played()
        finally:
            game.club.referee.close()


def spread(counts: list[int]) -> str:
    low, high = min(counts), max(counts)
    return f"{low}" if low == high else f"{low} to {high}"


HEADER = ["| game (what is played) | moves mailed | mode | no list | with a list "
          "| a list reader |", "|---|---|---|---|---|---|"]


def rows(kind: str) -> list[str]:
    """The README's rows of one game, as the census finds them."""
    lines = []
    for mode in MODES:
        bare, _, sent, played = census(kind, False, mode)
        listed, posts, _, _ = census(kind, True, mode)
        lines.append(f"| `{kind}` ({played}) | {sent} | `mail {mode}` "
                     f"| {spread(bare)} | {spread(listed)} | {posts} |")
    return lines


def table() -> str:
    """The README's table, as the census finds it."""
    return "\n".join([*HEADER, *(line for kind in GAMES for line in rows(kind))])


def readme_table() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^\| game \(what is played\).*?(?=\n\n)", text, re.M | re.S)
    return found.group(0) if found else ""


def test_the_readme_table_has_its_header_and_three_rows_a_game_in_order() -> None:
    lines = readme_table().splitlines()
    assert lines[:2] == HEADER
    assert [line.split("`")[1] for line in lines[2:]] == [kind for kind in GAMES for _ in MODES]


@pytest.mark.parametrize("kind", GAMES)
def test_the_readme_gives_each_games_mail_counts_as_played(kind: str) -> None:
    """One game a test, so the five census runs share the workers."""
    measured = rows(kind)
    written = [line for line in readme_table().splitlines() if line.startswith(f"| `{kind}`")]
    assert written == measured, "the README's rows should read:\n" + "\n".join(measured)


if __name__ == "__main__":
    print(table())
