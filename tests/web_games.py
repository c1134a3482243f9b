"""Games of every kind, finished and in play, for the tests of the game
pages: bots play the finished ones to their end; in each running one Alice
stays silent, so the referee moves for her at each deadline, and the game
stops where she owes a move (in Goofspiel, with her bid sealed and Bob's
owed); and Alice's open table for Spades, Bob invited, where one with
markup in her name has taken a seat. The club keeps standings by quarter:
two games of Goofspiel whose players all left (bots played them out) are
rated, one of them Carol's."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from referee.service.club.words import NewTable
from tests.test_referee import ALICE, BOB, Club

#: One who took a seat at the open table: markup in her name.
CAROL = '"<i>Carol</i>" <carol@club.test>'

#: Kind: the seats of its games, and the deadlines (of 3 days) its running
#: game sees pass before the pages are looked at.
KINDS = {"goofspiel": (2, 1), "pure-skill": (3, 6), "spades": (4, 8), "miser": (3, 1),
         "loatcg": (4, 14)}
#: The passes of 3 days and an hour: a tournament of bots takes 9 weeks and more.
PASSES = 26


def play_games(root: Path) -> tuple[Club, dict[str, tuple[str, str]]]:
    """A club (on ``root``, pages in ``root/pages``) with a finished and a
    running game of each kind; each kind's tags, (finished, running)."""
    club = Club(root, web={"path": "pages"}, club={"standings": True, "season": "quarter"})
    operator = club.referee.operator
    done = {kind: operator.create_game(kind, [], bots=seats, now=club.now, seed=f"done-{kind}")
            for kind, (seats, _) in KINDS.items()}
    running: dict[str, str] = {}
    for left in range(PASSES, 0, -1):
        for kind, (seats, passes) in KINDS.items():
            if passes == left:
                players = [f"Alice <{ALICE}>"] + ([f"Bob <{BOB}>"] if kind == "goofspiel" else [])
                running[kind] = operator.create_game(
                    kind, players, bots=seats - len(players), now=club.now, seed=f"run-{kind}")
        club.poll(club.now + timedelta(days=3, hours=1))
    # Alice seals a bid in Goofspiel: a secret the pages must keep.
    tag = running["goofspiel"]
    club.send(ALICE, f"bid {_held(club, tag)}", subject=f"[{tag}] bid")
    with club.referee.sessions.begin() as db:
        table = club.referee.tables.open(db, f"Alice <{ALICE}>",
                                         NewTable("spades", names=("Bob",)), club.now)
        club.referee.tables.join(db, CAROL, table.table, club.now)
    for pair in ([f"Alice <{ALICE}>", f"Bob <{BOB}>"], [f"Bob <{BOB}>", CAROL]):
        rated = operator.create_game("goofspiel", pair, now=club.now, seed="rated")
        for player in pair:
            operator.resign_player(rated, player, now=club.now)
    club.poll()
    return club, {kind: (done[kind], running[kind]) for kind in KINDS}


def _held(club: Club, tag: str) -> int:
    """A card Alice still holds in a bidding game."""
    state = club.referee.reading.stored_state(tag)
    return int(state["packs"][0][-1])
