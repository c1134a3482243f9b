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
    #: The text of its HTML part, as a mail client shows it, when it has
    #: one beside the plain text: it must state what the plain text does.
    shown: str | None = None

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


def number(text: str, most: int = 10**6) -> int | None:
    """The decimal number ``text`` when it is at most ``most`` (a stranger's
    5,000 digits are no number a game states); else None."""
    text = text.strip()
    if not text.isdecimal() or len(text) > len(str(most)):
        return None
    value = int(text)
    return value if value <= most else None


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def words(text: str) -> str:
    return " ".join(text.split())


_LATE = " came from you by the deadline, "
_LATE_DONE = ": the referee "


def _full_stop(text: str, start: int, end: int) -> int:
    """Where the sentence from ``start`` ends: a full stop before a space
    or the end of ``text`` (a draw's key, ``contract-7.2``, holds a dot),
    within ``end``; -1 if none."""
    at = start
    while (stop := text.find(".", at, end)) >= 0:
        if stop + 1 == len(text) or text[stop + 1] == " ":
            return stop
        at = stop + 1
    return -1


def late_moves(text: str) -> list[tuple[str, str]]:
    """What the referee did for the player past a deadline, as a mail to
    them says it ("No card came from you by the deadline, DUE: the referee
    DID, as rule 7 says."; templates/common/deadline_yours.txt): (what was
    missing, what was done), the words joined. Read with string searches
    in bounded windows: linear in the text."""
    flat = words(text)
    out: list[tuple[str, str]] = []
    at = 0
    while (mid := flat.find(_LATE, at)) >= 0:
        at = mid + len(_LATE)
        start = flat.rfind("No ", max(0, mid - 200), mid)
        done = flat.find(_LATE_DONE, at, at + 120)
        if start < 0 or done < 0:
            continue
        done += len(_LATE_DONE)
        end = _full_stop(flat, done, done + 400)
        sentence = flat[done:end if end >= 0 else done + 400]
        cut = max(sentence.rfind(", as "), sentence.rfind(", by "))
        out.append((flat[start + 3:mid], sentence[:cut] if cut >= 0 else sentence))
    return out


#: The opening's commitment to the seed: SHA-256 of ``seed: SEED\n``.
SEED_SHA = re.compile(r"^[ \t]*seed-sha256:[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)
#: A player's contribution the opening of a game from a table lists
#: (issue 38), as the derivation hashes it: ``  entropy 2: VALUE``.
ENTROPY = re.compile(r"^  entropy ([0-9]{1,3}): ([^\n]{1,200}?)[ \t\r]*$", re.M)
#: The seed, revealed by the game's last public mail.
SEED = re.compile(r"^[ \t]*seed:[ \t]*(\S+)[ \t]*$", re.M)
#: The seed the draws were keyed by, as the last mail of a game whose
#: players added entropy states it: the seed mixed with their entropy.
DRAWS_SEED = re.compile(r"^[ \t]*draws' seed:[ \t]*([0-9a-fA-F]{64})[ \t]*$", re.M)


class Check:
    """The mismatches found, each with the place of the mail it names."""

    def __init__(self, tag: str, mails: Sequence[Mail]) -> None:
        self.tag = tag
        self.mails = mails
        self.found: list[tuple[int, str]] = []
        #: Every pattern a game's check read its mails with: what a mail's
        #: HTML part must state as its plain text does (:meth:`check_parts`).
        self.read: list[re.Pattern[str]] = []
        #: The players' contributions the opening lists (position, value),
        #: which the draws mix in (:meth:`draw_seed`); what held, to print.
        self.entropy: list[tuple[int, str]] = []
        self.notes: list[str] = []

    def find(self, pattern: re.Pattern[str]) -> list[Found]:
        """Each place a mail's text states what ``pattern`` reads."""
        if pattern not in self.read:
            self.read.append(pattern)
        return find(self.mails, pattern)

    def find_in(self, mail: int, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """Each place mail ``mail``'s text states what ``pattern`` reads."""
        if pattern not in self.read:
            self.read.append(pattern)
        return list(pattern.finditer(self.mails[mail].text))

    def in_subjects(self, pattern: re.Pattern[str]) -> list[Found]:
        """Each place a mail's subject states what ``pattern`` reads."""
        return [Found(i, m) for i, mail in enumerate(self.mails)
                for m in pattern.finditer(mail.subject)]

    def check_parts(self) -> None:
        """A mail with an HTML part beside its plain text (what a mail client
        shows) is refused when the two do not state the same claims: each
        pattern the game read its mails with finds the same text in both."""
        for i, mail in enumerate(self.mails):
            if mail.shown is None:
                continue
            for pattern in self.read:
                plain = [words(m.group(0)) for m in pattern.finditer(mail.text)]
                shown = [words(m.group(0)) for m in pattern.finditer(mail.shown)]
                if plain != shown:
                    differ = next((p, s) for p, s in zip([*plain, ""], [*shown, ""], strict=False)
                                  if p != s)
                    self.mismatch(i, f"its parts disagree: the plain text says "
                                  f"\"{differ[0][:200]}\", the HTML part (what a mail client "
                                  f"shows) \"{differ[1][:200]}\"")
                    break

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
        committed, opened = self.find(commitment), self.find(opening)
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


def check_draws_seed(check: Check, seed: str) -> str:
    """The seed the draws are keyed by (:meth:`Check.draw_seed`); a mail
    stating another draws' seed is a mismatch. The draws alone cannot tell
    an altered contribution when few draws are made (three prizes have six
    orders): the mix the last mail states can."""
    keyed = check.draw_seed(seed)
    for f in check.find(DRAWS_SEED):
        if f.match.group(1).lower() != keyed:
            check.mismatch(f.mail, f"its draws' seed is {f.match.group(1)}, but the seed mixed "
                                   f"with the entropy the opening lists gives {keyed}")
    return keyed


class MailCheck:
    """What a game's mails show that a player can check, and how to read
    it: a game declares one as ``Game.mail_check``. This one checks the
    seed's commitment, then the draws (:meth:`draws`, nothing here); a
    game whose mails reveal no seed overrides :meth:`__call__`."""

    def __call__(self, check: Check) -> None:
        if (seed := check_seed(check)) is not None:
            self.draws(check, check_draws_seed(check, seed))

    def draws(self, check: Check, seed: str) -> None:
        """The mismatches between the draws the mails show and ``seed``'s."""
