"""What a player checks of a Land of Agora tournament from their mails
(``referee verify TAG --mail PATH``): the Scoring Instructions' commitment,
each Round Report's instruction and the cards dealt to them."""

from __future__ import annotations

import re

from referee.games.draws import KeyedDraws, Stream
from referee.games.loatcg.instructions import (
    BASIC,
    CARD_TYPES,
    InstructionError,
    parse_instructions,
)
from referee.games.loatcg.rules import cards_text
from referee.games.mailcheck import Check, MailCheck, number, sha256, words

DIGEST = re.compile(r"SHA-256 hash of their text[^\n]*\n\s*([0-9a-f]{64})[ \t]*$", re.M)
COMMITTED = re.compile(r"^-----\n(.*?\n)-----$", re.M | re.S)
#: A Round Report's heading; its instruction follows the words below.
REPORT = re.compile(r"^ROUND REPORT (\d{1,6}) [^\n]*$", re.M)
#: A Round Report named in a subject: ``[loatcg-1] Round Report 1: round 2 begins``.
REPORT_SAID = re.compile(r"\bRound Report (\d{1,6})\b")
NOT_GIVEN = "(its number is not given):\n\n"
#: The instruction's line, as a pattern: what a mail's HTML part must state too.
GIVEN = re.compile(r"^\(its number is not given\):\n\n[^\n]*$", re.M)
REPORTED = re.compile(r"^[ \t]+(\d{1,6})\. [^\n]*\(Round Report (\d{1,6})\)$", re.M)


def check_loatcg(check: Check, seed: str) -> None:
    """The opening's hash opens with the Final Report's text and salt
    (ruling TCG-19), and each Round Report's instruction is the draw
    ``report`` keyed by the report: a choice of the numbers not yet reported."""
    both = check.committed_and_opened(
        DIGEST, "the opening mail (with the Scoring Instructions' SHA-256)",
        COMMITTED, "the Final Report (with the Scoring Instructions' text and salt)")
    if both is None:
        return
    opened, final = both
    digest = opened[0].match.group(1)
    committed = final[-1].match.group(1)
    if sha256(committed) != digest:
        check.mismatch(final[-1].mail, f"the SHA-256 of the Scoring Instructions' text is "
                       f"{sha256(committed)}, but the opening gave {digest}")
        return
    body = committed.split("\n", 1)[1] if committed.startswith("salt:") else committed
    try:
        instructions = parse_instructions(body)
    except InstructionError as e:
        check.mismatch(final[-1].mail, f"the Scoring Instructions' text cannot be read: {e}")
        return
    numbers = {words(i.english()): i.number for i in instructions}
    draws = KeyedDraws(seed)
    unreported = [i.number for i in instructions]
    drawn: dict[int, int] = {}
    for report in range(1, len(instructions)):
        drawn[report] = draws.rng("report", report).choice(unreported)
        unreported.remove(drawn[report])
    check.find(GIVEN)  # read: the HTML part must give the same instruction
    for mail, report, quoted in _reports(check):
        given = numbers.get(quoted)
        if report not in drawn:
            check.mismatch(mail, f"Round Report {report}, but the tournament has "
                           f"{len(drawn)} reports")
        elif given is None:
            check.mismatch(mail, f"Round Report {report} gives the instruction \"{quoted[:200]}\", "
                           "which the Scoring Instructions do not hold")
        elif given != drawn[report]:
            check.mismatch(mail, f"Round Report {report} gives instruction {given}, but the "
                           f"seed draws instruction {drawn[report]}")
    _check_subjects(check)
    for f in check.find(REPORTED):
        said, report = int(f.match.group(1)), int(f.match.group(2))
        if drawn.get(report) != said:
            check.mismatch(f.mail, f"instruction {said} is said to be Round Report {report}'s, "
                           f"but the seed draws instruction {drawn.get(report)} for it")
    budget = MAX_DEALS_DRAWN
    for f in check.find(DEALT_CARDS):
        shown, draw = words(f.match.group(1)), f.match.group(2)
        counts = [number(n, MAX_DEALT) for n in re.findall(r"\d+", shown)]
        if any(n is None for n in counts) or sum(n or 0 for n in counts) > MAX_DEALT:
            check.mismatch(f.mail, f"the cards dealt to you by the draw {draw} are "
                           f"{shown[:200]}: more than a deal holds ({MAX_DEALT})")
            continue
        count = sum(n or 0 for n in counts)
        budget -= count
        if budget < 0:
            check.mismatch(f.mail, f"more cards are said to be dealt to you than a tournament "
                           f"deals ({MAX_DEALS_DRAWN})")
            return
        stream = Stream(f"{seed}/{draw}")
        cards = dict.fromkeys(CARD_TYPES, 0)
        for _ in range(count):
            cards[stream.choice(BASIC)] += 1  # definition C: each a basic type, 1/5 each
        if cards_text(cards) != shown:
            check.mismatch(f.mail, f"the cards dealt to you by the draw {draw} are {shown}, "
                           f"but the seed deals {cards_text(cards)}")


def _check_subjects(check: Check) -> None:
    """A Round Report's subject names the report its body is: which
    report, so which draw, the instruction it gives is. A player reads the
    subject first."""
    in_body: dict[int, set[int]] = {}
    for f in check.find(REPORT):
        in_body.setdefault(f.mail, set()).add(int(f.match.group(1)))
    for f in check.in_subjects(REPORT_SAID):
        said = int(f.match.group(1))
        if f.mail in in_body and said not in in_body[f.mail]:
            body = ", ".join(map(str, sorted(in_body[f.mail])))
            check.mismatch(f.mail, f"its subject says Round Report {said}, but its body is "
                                   f"Round Report {body}")


def _reports(check: Check) -> list[tuple[int, int, str]]:
    """Each Round Report's instruction: (mail, report, the instruction's
    words), read with string searches bounded by the next report."""
    out: list[tuple[int, int, str]] = []
    by_mail: dict[int, list[re.Match[str]]] = {}
    for f in check.find(REPORT):
        by_mail.setdefault(f.mail, []).append(f.match)
    for i, heads in by_mail.items():
        text = check.mails[i].text
        for k, head in enumerate(heads):
            end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
            at = text.find(NOT_GIVEN, head.end(), end)
            report = number(head.group(1), 10**6)
            if at < 0 or report is None:
                continue
            start = at + len(NOT_GIVEN)
            stop = text.find("\n\n", start, end)
            out.append((i, report, words(text[start:stop if stop >= 0 else end])))
    return out


#: The most cards one deal gives a member (a stranger's "99999999 ore" is none),
#: and the most drawn again for all the deals of a mailbox.
MAX_DEALT = 100
MAX_DEALS_DRAWN = 20000
#: A tournament's deal to the member: the cards, and the seed's draw that chose them.
DEALT_CARDS = re.compile(r"^Dealt to you: (.+)\n\(The seed's draw \"([a-z]+(?:/\d+)+)\" "
                         r"chose them", re.M)


class LoatcgMailCheck(MailCheck):
    """The seed, then the instructions, reports and deals (:func:`check_loatcg`)."""

    def draws(self, check: Check, seed: str) -> None:
        check_loatcg(check, seed)
