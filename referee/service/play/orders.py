"""A player's lines about the moves the referee makes for them (issue 37),
in every game: ``autoplay on``/``off`` (forced moves played at once or
not), a standing order in the game's own words (``Game.parse_order``),
``orders`` (the seat's orders, listed in its secret answer) and ``cancel
orders``. The orders themselves are followed by ``GameSession.run_bots``.

Orders are secret until they apply: a line that leaves one must come to
the referee alone, and its answer, like every transcript of a game with
secret transcripts, goes to its writer alone. Runs inside intake's
transaction, on the ``GameSession`` of the mail.
"""

from __future__ import annotations

from referee.games.base import ParseError, Scope
from referee.service.play import standing
from referee.service.play.session import GameSession

#: The words of these lines, for "did you mean" and the transcript.
STANDING_VERBS = ("autoplay", "orders", "cancel")
#: How the transcript reads these lines: answers of their own, never "(done)".
STANDING_READ = ("autoplay", "orders", "cancel orders", "order")
#: The most orders a seat keeps at once.
MAX_ORDERS = 20

#: How a line was read, what came of it, and the answer.
Done = tuple[str, str, str]


def standing_line(gs: GameSession, seat: int, command: str, scope: Scope) -> Done | None:
    """The answer to ``command`` if it is one of these lines, else None."""
    words = command.lower().rstrip(".!?").split()
    if words and words[0] == "autoplay" and len(words) <= 2:
        return "autoplay", *_autoplay(gs, seat, words[1] if len(words) > 1 else "")
    if words in (["orders"], ["my", "orders"], ["show", "orders"]):
        return "orders", "applied", _listed(gs, seat)
    if words in (["cancel", "orders"], ["cancel", "order"], ["no", "orders"]):
        row = gs.row.seats[seat - 1]
        had = len(row.orders or [])
        row.orders = None
        return "cancel orders", "applied", (
            f"Your {had} standing order{'s' if had != 1 else ''} {'were' if had != 1 else 'was'} "
            "dropped." if had else "You had no standing orders.")
    try:
        order = gs.engine.parse_order(command)
    except ParseError as e:
        return "order", "refused", str(e)
    if order is None:
        return None
    return "order", *_keep(gs, seat, order, scope)


def _autoplay(gs: GameSession, seat: int, word: str) -> tuple[str, str]:
    row = gs.row.seats[seat - 1]
    if word not in ("", "on", "off"):
        return "refused", f"Write 'autoplay on' or 'autoplay off', not 'autoplay {word}'."
    if word and str(gs.row.options.get("autoplay", "on")) == "off":
        return "refused", ("This game was made with autoplay off: every move waits for its "
                           "player's mail.")
    if word:
        row.autoplay = word == "on"
    if standing.autoplay_on(gs.row, row):
        return "applied", ("Autoplay is on: when the rules leave you one move that tells "
                           "nothing more than the move itself, the referee makes it at once "
                           "and says so. Write 'autoplay off' to make every move yourself.")
    return "applied", ("Autoplay is off: the referee waits for your mail even when the rules "
                       "leave you one move. Write 'autoplay on' to have such moves made at once.")


def _listed(gs: GameSession, seat: int) -> str:
    orders = standing.orders_of(gs.row.seats[seat - 1])
    if not gs.engine.order_help:
        return f"{gs.engine.title} takes no standing orders."
    lines = ([f"Your standing orders, in the order they are followed ({len(orders)}):",
              *(f"  {_text(o)}" for o in orders)] if orders else
             ["You have no standing orders."])
    lines += ["", "Standing orders this game takes (send them to the referee alone):",
              *(f"  {h}" for h in gs.engine.order_help),
              "'cancel orders' drops them all."]
    return "\n".join(lines)


def _keep(gs: GameSession, seat: int, order: object, scope: Scope) -> tuple[str, str]:
    row = gs.row.seats[seat - 1]
    if not standing.orders_on(gs.row):
        return "refused", "This game was made to take no standing orders: send each move."
    if gs.row.status != "active" or gs.engine.is_over(gs.state):
        return "refused", "The game is over."
    if scope is not Scope.SECRET:
        return "refused", ("A standing order is secret until it applies, and this mail went "
                           "to others too, so it was not kept. Send it to the referee alone.")
    orders = standing.orders_of(row)
    if len(orders) >= MAX_ORDERS:
        return "refused", (f"You have {MAX_ORDERS} standing orders already; 'cancel orders' "
                           "drops them all.")
    # An order the game could not follow even now (a card not in your
    # pack, a prize played) is refused, not kept to be dropped at once.
    never = gs.engine.follow_orders(gs.state, seat, [order]).dropped
    if never:
        return "refused", f"Not kept: {never[0]}"
    row.orders = [*orders, order]
    return "applied", (f"Kept, secret until it applies: {_text(order)}. You have "
                       f"{len(orders) + 1} standing order{'s' if orders else ''}; 'orders' "
                       "lists them.")


def _text(order: object) -> str:
    """An order as the ``orders`` answer lists it."""
    return str(order.get("text", order)) if isinstance(order, dict) else str(order)
