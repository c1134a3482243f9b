"""Who wrote a mail: whether it came to the player's private reply address
for the game it is about, or the trusted Authentication-Results show an
aligned pass (verified mode),
and whether it showed a private reply address to anyone but its owner.

Pure reads of the mail's facts and of rows the caller loaded; no transaction.
"""

from __future__ import annotations

from referee.config import Config
from referee.mail.auth import Verdict, verify
from referee.service.intake.letter import Letter
from referee.service.outgoing.addresses import Addresses
from referee.store import models as m


class Senders:
    """Answers about the sender of a mail, for one referee identity."""

    def __init__(self, config: Config, addresses: Addresses) -> None:
        self.config = config
        self.addresses = addresses

    def verify_domain(self, letter: Letter) -> Verdict:
        """Whether the trusted Authentication-Results show an aligned pass
        for the From domain, or for our list's on mail that came by it (no
        private address: for senders in no game)."""
        authserv_id = self.config.auth.authserv_id
        if not authserv_id:
            return Verdict(None, "no [auth] authserv_id to trust")
        msg = letter.msg
        list_domain = None
        if letter.from_our_list and self.config.referee.public_list:
            list_domain = self.config.referee.public_list.rpartition("@")[2]
        return verify(msg.auth_results, authserv_id, msg.sender.rpartition("@")[2],
                      also_trusted=list_domain)

    def verify(self, letter: Letter, player: m.Player, game: m.Game | None = None) -> Verdict:
        """Whether the mail is really from ``player`` in ``game``, the game it
        is about: it came to their private address for that game (found for
        ``letter.player``: ``letter.bound``), or the trusted
        Authentication-Results show an aligned pass. Their address for
        another game, or their own, vouches for nothing here."""
        msg = letter.msg
        authserv_id = self.config.auth.authserv_id
        verdict = Verdict(None, "no [auth] authserv_id to trust")
        if authserv_id:
            list_domain = None
            if letter.from_our_list and self.config.referee.public_list:
                list_domain = self.config.referee.public_list.rpartition("@")[2]
            verdict = verify(msg.auth_results, authserv_id, msg.sender.rpartition("@")[2],
                             also_trusted=list_domain)
        if game is not None and player is letter.player and game.id in letter.bound:
            if verdict.failed:
                # The address vouches for the player only on mail that could
                # be theirs: this one came by a path their domain disowns.
                return Verdict(None, f"sent to the player's private address, but "
                                     f"{verdict.detail}", failed=True)
            return Verdict("token", "sent to the player's private address")
        return verdict

    @staticmethod
    def shown_to_others(letter: Letter, owner: m.Player) -> bool:
        """Whether the mail showed ``owner``'s private address to anyone
        but them: someone else sent it, it went to the list, or it went to
        others besides the referee."""
        if letter.msg.sender != owner.address or letter.from_our_list:
            return True
        return bool(letter.others - {owner.address})
