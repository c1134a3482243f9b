"""The referee's own addresses: its address and ``+`` forms, the VERP
forms bounces come back to, the private reply addresses, and the public
list's List-Id. Pure answers over the config; no transaction.

A private reply address, ``referee+TOKEN@domain``, works like a password:
mail to it from the player's own address is theirs (verified mode), so it
is only ever sent to the player, as the Reply-To of mail to them alone,
and in verified mode of secret mail alone (never of their copy of a
report, which they may forward).
Each seat has its own, bound to its game: it vouches for its player's
moves in that game and no other. A player's own address, for mail about
no game, vouches for no move.
"""

from __future__ import annotations

import re
import secrets

from referee.config import Config
from referee.store import models as m

#: The detail of a private reply address: 64 random bits, in hex.
_TOKEN = re.compile(r"[0-9a-f]{16}")


def new_token() -> str:
    """The secret of a private reply address: 64 random bits, in hex."""
    return secrets.token_hex(8)


def seat_of(game: m.Game, player: m.Player) -> m.Seat | None:
    """The seat ``player`` plays in ``game`` (not one a bot took over)."""
    return next((s for s in game.seats if s.player_id == player.id and not s.bot), None)


class Addresses:
    """Which addresses are the referee's, for one referee identity."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.local, _, self.domain = config.referee.address.partition("@")
        #: Verified mode: a seat's private address vouches for its player's
        #: moves, so it rides on secret mail alone (``MailQueue.to_player``).
        self.verified = config.auth.require == "verified"

    def is_referee(self, addr: str) -> bool:
        """``addr`` is the referee's address or one of its ``+`` forms."""
        a_local, _, a_domain = addr.partition("@")
        return a_domain == self.domain and a_local.split("+")[0] == self.local

    def is_bounce_address(self, addr: str) -> bool:
        """``addr`` is one of the referee's VERP forms, ``referee+bounce-…``,
        signed or not: no person writes there."""
        a_local, _, a_domain = addr.partition("@")
        return a_domain == self.domain and a_local.startswith(f"{self.local}+bounce-")

    def token_of(self, addr: str) -> str | None:
        """The private-address token of ``addr``, if it is one of ours."""
        a_local, _, a_domain = addr.partition("@")
        base, plus, detail = a_local.partition("+")
        if plus and base == self.local and a_domain == self.domain and _TOKEN.fullmatch(detail):
            return detail
        return None

    def private_address(self, player: m.Player, game: m.Game | None = None) -> str:
        """The private reply address of ``player`` for mail about ``game``:
        their seat's in it; with no game, or no seat of theirs in it, their
        own."""
        seat = seat_of(game, player) if game is not None else None
        return self.address_of(seat if seat is not None else player)

    def address_of(self, holder: m.Player | m.Seat) -> str:
        """The private reply address of a seat or a player (a token is made
        if it has none)."""
        if holder.token is None:
            holder.token = new_token()
        return f"{self.local}+{holder.token}@{self.domain}"

    def list_id(self) -> str | None:
        """The List-Id of the public list, configured or made from its address."""
        ref = self.config.referee
        if ref.list_id:
            return ref.list_id.strip("<>").lower()
        return ref.public_list.replace("@", ".") if ref.public_list else None
