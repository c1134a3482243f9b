"""Who wrote a mail, and who saw it: the referee's own addresses, the public
list, private reply addresses and Authentication-Results (verified mode),
and the scope of a mail by definition F of rule text 002.

Pure reads of the message and of rows the caller loaded; no transaction.
"""

from __future__ import annotations

import re

from referee.config import Config
from referee.games.base import Scope
from referee.mail.auth import Verdict, verify
from referee.mail.inbound import InboundMessage
from referee.service.delivery import Delivery
from referee.store import models as m


class Senders:
    """Answers about the people on a mail, for one referee identity."""

    def __init__(self, config: Config, delivery: Delivery) -> None:
        self.config = config
        self.delivery = delivery

    def is_referee(self, addr: str) -> bool:
        """``addr`` is the referee's address or one of its ``+`` forms."""
        local, _, domain = self.config.referee.address.partition("@")
        a_local, _, a_domain = addr.partition("@")
        return a_domain == domain and a_local.split("+")[0] == local

    def is_bounce_address(self, addr: str) -> bool:
        """``addr`` is one of the referee's VERP forms, ``referee+bounce-…``,
        signed or not: no person writes there."""
        local, _, domain = self.config.referee.address.partition("@")
        a_local, _, a_domain = addr.partition("@")
        return a_domain == domain and a_local.startswith(f"{local}+bounce-")

    def list_id(self) -> str | None:
        """The List-Id of the public list, configured or made from its address."""
        ref = self.config.referee
        if ref.list_id:
            return ref.list_id.strip("<>").lower()
        return ref.public_list.replace("@", ".") if ref.public_list else None

    def from_our_list(self, msg: InboundMessage) -> bool:
        return bool(msg.list_id) and msg.list_id == self.list_id()

    def scope(self, msg: InboundMessage, game: m.Game) -> tuple[Scope, frozenset[int]]:
        """Secret to the referee alone; private among players; public
        otherwise. With it, unless public, the seats of ``game`` whose players
        were on the mail besides the sender."""
        ref = self.config.referee
        others = {a for a in (*msg.to, *msg.cc) if not self.is_referee(a)}
        if (ref.public_list and ref.public_list in others) or self.from_our_list(msg):
            return Scope.PUBLIC, frozenset()
        others.discard(msg.sender)
        if not others:
            return Scope.SECRET, frozenset()
        seats = {s.player.address: s.position for s in game.seats if s.player is not None}
        if not others <= seats.keys():
            return Scope.PUBLIC, frozenset()
        return Scope.PRIVATE, frozenset(seats[a] for a in others)

    def tokens_on(self, msg: InboundMessage) -> set[str]:
        """The private-address tokens among the mail's recipients."""
        local, _, domain = self.config.referee.address.partition("@")
        out = set()
        for a in (*msg.to, *msg.cc):
            a_local, _, a_domain = a.partition("@")
            base, plus, detail = a_local.partition("+")
            if plus and base == local and a_domain == domain and re.fullmatch(r"[0-9a-f]{16}",
                                                                                 detail):
                out.add(detail)
        return out

    def shown_to_others(self, msg: InboundMessage, owner: m.Player) -> bool:
        """Whether this mail showed ``owner``'s private address to anyone
        but them: someone else sent it, it went to the list, or it went to
        others besides the referee."""
        if msg.sender != owner.address or self.from_our_list(msg):
            return True
        others = {a for a in (*msg.to, *msg.cc) if not self.is_referee(a)}
        return bool(others - {owner.address})

    def verify_domain(self, msg: InboundMessage) -> Verdict:
        """Whether the trusted Authentication-Results show an aligned pass
        for the From domain (no private address: for senders in no game)."""
        authserv_id = self.config.auth.authserv_id
        if not authserv_id:
            return Verdict(None, "no [auth] authserv_id to trust")
        return verify(msg.auth_results, authserv_id, msg.sender.rpartition("@")[2])

    def verify(self, msg: InboundMessage, player: m.Player) -> Verdict:
        """Whether ``msg`` is really from ``player``: it came to their private
        address, or the trusted Authentication-Results show an aligned pass."""
        private = self.delivery.private_address(player) if player.token else None
        if private and private in (*msg.to, *msg.cc):
            return Verdict("token", "sent to the player's private address")
        authserv_id = self.config.auth.authserv_id
        if not authserv_id:
            return Verdict(None, "no [auth] authserv_id to trust")
        list_domain = None
        if self.from_our_list(msg) and self.config.referee.public_list:
            list_domain = self.config.referee.public_list.rpartition("@")[2]
        return verify(msg.auth_results, authserv_id, msg.sender.rpartition("@")[2],
                      also_trusted=list_domain)
