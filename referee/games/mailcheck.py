"""How a player checks a game's draws from the mails they received: the
mails as read (:class:`Mail`), the mismatches found (:class:`Check`), the
seed's commitment (:func:`check_seed`), and what a game declares to read
its own mails (:class:`MailCheck`, ``Game.mail_check``).

``referee verify TAG --mail PATH`` (:mod:`referee.verify_mail`) walks the
mailbox and hands the game's mails to its kind's :class:`MailCheck`; what
draws a game's mails show, and the patterns that find them in its
templates' text, live with the game (its ``verify`` module). A game that
declares none has the seed checked: the opening's commitment opens with
the seed its last mail reveals (docs/engines.md, "Randomness and replay").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from referee.games.draws import mixed_seed, seed_fingerprint


@dataclass(frozen=True)
class Mail:
    """One of the game's mails, as the player received it."""

    subject: str
    date: datetime | None
    text: str  # the plain-text body, lines ending in "\n"

    def __str__(self) -> str:
        when = f", {self.date:%a %d %b %Y %H:%M}" if self.date else ""
        return f'the mail "{self.subject}"{when}'


@dataclass(frozen=True)
class Found:
    """A line of a mail: where it was and what it says."""

    mail: int  # the mail's place in the game's mails
    match: re.Match[str]


def find(mails: Sequence[Mail], pattern: re.Pattern[str]) -> list[Found]:
    return [Found(i, m) for i, mail in enumerate(mails) for m in pattern.finditer(mail.text)]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def words(text: str) -> str:
    return " ".join(text.split())


#: The opening's commitment to the seed: SHA-256 of ``seed: SEED\n``.
SEED_SHA = re.compile(r"^[ \t]*seed-sha256:[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)
#: A player's contribution the opening of a game from a table lists
#: (issue 38), as the derivation hashes it: ``  entropy 2: VALUE``.
ENTROPY = re.compile(r"^  entropy ([0-9]{1,3}): ([^\n]{1,200}?)[ \t\r]*$", re.M)
#: The seed, revealed by the game's last public mail.
SEED = re.compile(r"^[ \t]*seed:[ \t]*(\S+)[ \t]*$", re.M)


class Check:
    """The mismatches found, each with the place of the mail it names."""

    def __init__(self, tag: str, mails: Sequence[Mail]) -> None:
        self.tag = tag
        self.mails = mails
        self.found: list[tuple[int, str]] = []
        #: The players' contributions the opening lists (position, value),
        #: which the draws mix in (:meth:`draw_seed`); what held, to print.
        self.entropy: list[tuple[int, str]] = []
        self.notes: list[str] = []

    def draw_seed(self, seed: str) -> str:
        """The seed the draws are keyed by: ``seed`` mixed with the
        contributions the opening lists, where it lists any."""
        return mixed_seed(seed, self.entropy) if self.entropy else seed

    def elsewhere(self, mail: Mail, text: str) -> None:
        """A mismatch in a mail that is not the game's (a table's)."""
        self.found.append((-1, f"{mail}: {text}"))

    def missing(self, what: str) -> None:
        self.found.append((-1, f"{what} of {self.tag} is not in the mailbox"))

    def mismatch(self, mail: int, text: str) -> None:
        self.found.append((mail, f"{self.mails[mail]}: {text}"))

    def committed_and_opened(self, commitment: re.Pattern[str], where: str,
                             opening: re.Pattern[str], then: str
                             ) -> tuple[list[Found], list[Found]] | None:
        """The mails with a commitment and those that open it; None, saying
        which mail is missing (``where``, ``then``), unless both are here."""
        committed, opened = find(self.mails, commitment), find(self.mails, opening)
        if not committed:
            self.missing(where)
        if not opened:
            self.missing(then)
        return (committed, opened) if committed and opened else None

    def result(self) -> list[str]:
        """The mismatches, a missing mail first, then in the order of the mails."""
        return [text for _, text in sorted(self.found, key=lambda f: f[0])]


def opening_entropy(check: Check) -> tuple[int, str, list[tuple[int, str]]] | None:
    """The opening (its place), its seed fingerprint, and the players'
    contributions it lists by seat position; None if no mail commits to a seed."""
    committed = find(check.mails, SEED_SHA)
    if not committed:
        return None
    first = committed[0]
    listed = [(int(m.group(1)), m.group(2)) for m in ENTROPY.finditer(check.mails[first.mail].text)]
    return first.mail, first.match.group(1).lower(), listed


def check_seed(check: Check) -> str | None:
    """The revealed seed, once its SHA-256 is the opening's; else None."""
    both = check.committed_and_opened(
        SEED_SHA, "the opening mail (with the seed's SHA-256)",
        SEED, "the game's last mail (revealing the seed)")
    if both is None:
        return None
    committed, revealed = both
    opening = committed[0].match.group(1).lower()
    for f in committed[1:]:
        if f.match.group(1).lower() != opening:
            check.mismatch(f.mail, f"the seed's SHA-256 is {f.match.group(1)}, but the "
                           f"opening gave {opening}")
    seed = revealed[-1].match.group(1)
    if seed_fingerprint(seed) != opening:
        check.mismatch(revealed[-1].mail, f"the seed {seed} does not open the commitment: "
                       f"SHA-256 of 'seed: {seed}' and a newline is {seed_fingerprint(seed)}, "
                       f"but the opening gave {opening}")
        return None
    for f in revealed[:-1]:
        if f.match.group(1) != seed:
            check.mismatch(f.mail, f"the seed is given as {f.match.group(1)}, but the "
                           f"last mail gives {seed}")
    return seed


class MailCheck:
    """What a game's mails show that a player can check, and how to read
    it: a game declares one as ``Game.mail_check``. This one checks the
    seed's commitment, then the draws (:meth:`draws`, nothing here); a
    game whose mails reveal no seed overrides :meth:`__call__`."""

    def __call__(self, check: Check) -> None:
        if (seed := check_seed(check)) is not None:
            self.draws(check, check.draw_seed(seed))

    def draws(self, check: Check, seed: str) -> None:
        """The mismatches between the draws the mails show and ``seed``'s."""
