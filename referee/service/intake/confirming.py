"""The address a stranger confirms a join by mail at. A join that nothing
vouches for (no aligned pass of the trusted Authentication-Results) seats
no one: the referee asks the address in From to reply, with the Reply-To
``referee+join-TAG-DAY-MAC@domain``, and only a reply from that address to
that one seats it. A forger never sees the request, so forges no reply.

The address keeps no state: the day it was made is written in it, and the
MAC (HMAC-SHA256 under the key that signs our Message-IDs) covers the
sender's address, the game's tag and that day, so it works only for that
sender, that game, and :data:`CONFIRM_DAYS` days. Pure; no transaction.

The club's commands by mail (``new``, ``join TAG``, ``accept`` ...) that
nothing vouches for are confirmed the same way, at
``referee+club-DAY-MAC@domain``: signed for one sender and day, no table
named; the reply says its command lines again, and counts as its sender's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

#: A confirmation works on the day it was asked and so many days after.
CONFIRM_DAYS = 3
#: The MAC in a confirmation address: 64 bits of HMAC-SHA256, in hex.
MAC_LENGTH = 16


@dataclass(frozen=True)
class Claim:
    """A confirmation address as a mail was sent to it: its game's tag, the
    day it was made and its MAC, none of them checked yet."""

    address: str
    tag: str
    day: date
    mac: str

    @property
    def expires(self) -> datetime:
        """When a reply to it no longer counts (naive UTC)."""
        return expiry(self.day)


def expiry(day: date) -> datetime:
    """When a confirmation made on ``day`` stops working (naive UTC)."""
    return datetime.combine(day, time()) + timedelta(days=CONFIRM_DAYS + 1)


class Confirmations:
    """Makes and reads the confirmation addresses of one referee identity."""

    def __init__(self, referee_address: str, key: bytes) -> None:
        self.local, _, self.domain = referee_address.lower().partition("@")
        self.key = key
        self._form = re.compile(re.escape(self.local) + r"\+join-([a-z][a-z0-9-]*-\d+)-"
                                + rf"(\d{{8}})-([0-9a-f]{{{MAC_LENGTH}}})")

    def mac(self, sender: str, tag: str, day: date) -> str:
        said = f"join\n{sender.lower()}\n{tag}\n{day:%Y%m%d}"
        return hmac.new(self.key, said.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).hexdigest()[:MAC_LENGTH]

    def address(self, sender: str, tag: str, day: date) -> str:
        """Where ``sender`` confirms joining game ``tag``, asked on ``day``."""
        return f"{self.local}+join-{tag}-{day:%Y%m%d}-{self.mac(sender, tag, day)}@{self.domain}"

    def club_address(self, sender: str, day: date) -> str:
        """Where ``sender`` confirms club commands (``intake/gamesmaster``),
        asked on ``day``."""
        return f"{self.local}+club-{day:%Y%m%d}-{self._club_mac(sender, day)}@{self.domain}"

    def club_claim(self, recipients: Iterable[str]) -> tuple[date, str] | None:
        """The day and MAC of the first of ``recipients`` that has the form
        of a club confirmation address; None if none has."""
        form = re.compile(re.escape(self.local) + rf"\+club-(\d{{8}})-([0-9a-f]{{{MAC_LENGTH}}})")
        for recipient in recipients:
            local, _, domain = recipient.lower().rpartition("@")
            found = form.fullmatch(local) if domain == self.domain else None
            if found is None:
                continue
            try:
                return datetime.strptime(found.group(1), "%Y%m%d").date(), found.group(2)
            except ValueError:
                continue
        return None

    def club_confirmed(self, claim: tuple[date, str], sender: str, now: datetime) -> bool:
        """Whether ``claim`` (:meth:`club_claim`) was made for ``sender`` and
        still works at ``now``."""
        day, mac = claim
        return now < expiry(day) and hmac.compare_digest(mac, self._club_mac(sender, day))

    def _club_mac(self, sender: str, day: date) -> str:
        said = f"club\n{sender.lower()}\n{day:%Y%m%d}"
        return hmac.new(self.key, said.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).hexdigest()[:MAC_LENGTH]

    def claim(self, recipients: Iterable[str]) -> Claim | None:
        """The first of ``recipients`` that has the form of a confirmation
        address, read; None if none has."""
        for recipient in recipients:
            local, _, domain = recipient.lower().rpartition("@")
            found = self._form.fullmatch(local) if domain == self.domain else None
            if found is None:
                continue
            try:
                day = datetime.strptime(found.group(2), "%Y%m%d").date()
            except ValueError:
                continue
            return Claim(recipient.lower(), found.group(1), day, found.group(3))
        return None

    def made_for(self, claim: Claim, sender: str) -> bool:
        """Whether ``claim`` is an address the referee made for ``sender``."""
        return hmac.compare_digest(claim.mac, self.mac(sender, claim.tag, claim.day))
