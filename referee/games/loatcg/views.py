"""What each member and the public may see of a Land of Agora trading-card
tournament (rule text 002), and the data each of its mails is written from.

Nothing public shows a hand, a deal, a score no report has published or an
instruction no report has shown before the Freeze; a member's own view adds
eir hand and the instructions the Dealor revealed to em (rule 9, definition
C; rulings TCG-3 and TCG-20, docs/rulings.md). A member's own Hand Score is
in no view and no mail but the 3-card deal of rule 7 (ruling TCG-22): a
score on demand would clarify the hidden instructions, which rule 11
forbids and rule 8 sells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from referee.games.base import JSON, Audience, Course, Notice, PageTable
from referee.games.loatcg.instructions import commitment, score
from referee.games.loatcg.rules import (
    FREEZE_DAYS,
    LoatcgRules,
    LoatcgState,
    Member,
    Offer,
    Report,
    cards_list,
    cards_text,
    instructions_of,
    member_at,
    names_text,
    seat_name,
)


class LoatcgViews(LoatcgRules):
    """The rules with their views: ``view``, ``summary`` and the data the
    rules ask for to write each notice."""

    #: The page folds its history into rounds at these events.
    history_ends: ClassVar[frozenset[str]] = frozenset({"round_report", "freeze"})

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        """The game as its table for its page (:mod:`.page`)."""
        return loatcg_page(view, events)


    def view(self, state: LoatcgState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no hand, no deal and no instruction a report
        has not shown (and no report's instruction number) until the Freeze.
        A member's view adds eir hand, the instructions revealed to em and
        the offers e saw; never eir Hand Score (ruling TCG-22)."""
        view = self._common(state)
        view["reports"] = [self._report_json(r) for r in state.reports]
        view["offers"] = [self._offer_json(state, o) for o in state.offers if not o.audience]
        if state.frozen:
            view["final"] = self._final_json(state)
        member = member_at(state, seat) if seat is not None else None
        if member is not None:
            view["you"] = self._you(state, member)
            view["offers"] = [
                self._offer_json(state, o)
                for o in state.offers
                if not o.audience or member.seat in o.audience
            ]
        return view

    def summary(self, state: LoatcgState) -> dict[str, JSON]:
        """Public facts only. Scores are public only as a report published
        them (ruling TCG-20): ``scores`` are those of the latest report (the
        Final Report once frozen), and ``scores_as_of`` names it; the current
        scores are secret to each member."""
        if state.frozen:
            scores, as_of = state.final_scores, "the Final Report"
        elif state.reports:
            scores, as_of = state.reports[-1].scores, f"Round Report {len(state.reports)}"
        else:
            scores, as_of = [], None
        return {
            "round": state.round,
            "rounds": state.rounds,
            "members": [m.name for m in state.members],
            "scores": {name: points for name, points in scores},
            "scores_as_of": as_of,
            "digest": state.digest,
            "to_move": None,
            "over": state.frozen,
            "result": self._result_text(state) if state.frozen else None,
        }

    def status(self, state: LoatcgState) -> str:
        """The round, the members, the Hand Scores only as the latest report
        published them (ruling TCG-20, TCG-22: the current ones are secret),
        the instructions published so far and the open public offers; the
        winners once frozen."""
        s = state
        members = names_text([m.name for m in s.members]) or "nobody yet"
        if s.frozen:
            scores = ", ".join(f"{n} {p}" for n, p in s.final_scores)
            return (f"The tournament is over (rule 6): {self._result_text(s)}\n"
                    + (f"Final Hand Scores: {scores}." if scores else ""))
        lines = [f"Round {s.round} of {s.rounds}; Members: {members}."]
        if s.reports:
            last = s.reports[-1]
            scores = ", ".join(f"{n} {p}" for n, p in last.scores)
            lines.append(f"Hand Scores as Round Report {last.number} published them: "
                         f"{scores or 'no members'}.")
            lines.append("Scoring Instructions published so far (rule 5):")
            lines += [f"  Report {r.number}: {r.text}" for r in s.reports]
        else:
            lines.append("No Round Report yet: Hand Scores are published in the Round Reports.")
        public = [o for o in s.offers if not o.audience]
        if public:
            lines.append("Open public offers (rule 10):")
            lines += [f"  #{o.number} {seat_name(s, o.maker)} gives {cards_text(o.give)} for "
                      f"{cards_text(o.want)}"
                      + (f", to {names_text([seat_name(s, t) for t in o.takers])}"
                         if o.takers else "")
                      for o in public]
        return "\n".join(lines)

    # -- the data of each mail, for the rules' notices -----------------------

    def _dealt_notice(
        self, s: LoatcgState, member: Member, dealt: Mapping[str, int], reason: str,
        draw: tuple[str | int, ...],
    ) -> Notice:
        """Definition C, rule 7, ruling TCG-3: a deal is secret and carries the
        member's whole hand; the 3 cards dealt each round (rule 7) carry eir
        score too, and no other deal does (ruling TCG-22)."""
        you = self._you(s, member)
        if reason == "round":
            you["score"] = self._score(s, member.hand)
        context = {
            **self._common(s),
            "you": you,
            "reason": reason,
            "dealt": cards_list(dealt),
            "dealt_text": cards_text(dealt),
            "dealt_count": sum(dealt.values()),
            # Which of the seed's draws chose the cards ("deal/2/3": Round
            # Report 2's deal to seat 3), for a member to check at the end.
            "draw": "/".join(str(k) for k in draw),
        }
        return Notice(Audience.only(member.seat), "dealt", context)

    def _common(self, s: LoatcgState) -> dict[str, JSON]:
        """The public facts every notice and view carries: no hand, no score
        not yet reported, no instruction not yet revealed."""
        if s.frozen:
            next_event = None
        elif s.round < s.rounds:
            next_event = f"Round Report {s.round}"
        else:
            next_event = "the Freeze and the Final Report"
        return {
            "round": s.round,
            "rounds": s.rounds,
            "report_days": s.report_days,
            "freeze_days": FREEZE_DAYS,
            "digest": s.digest,
            "members": [m.name for m in s.members],
            "reports_published": len(s.reports),
            "next_event": next_event,
            "frozen": s.frozen,
            "winners": list(s.winners),
        }

    def _you(self, s: LoatcgState, member: Member) -> dict[str, JSON]:
        """What only ``member`` may see: eir hand and the instructions the
        Dealor revealed to em. Not eir Hand Score (ruling TCG-22): only the
        deal of rule 7 adds it."""
        instructions = instructions_of(s)
        return {
            "name": member.name,
            "seat": member.seat,
            "hand": cards_list(member.hand),
            "hand_text": cards_text(member.hand),
            "cards": sum(member.hand.values()),
            "apples": member.hand["apple"],
            "known": [
                {"number": n, "text": instructions[n - 1].english()} for n in sorted(member.known)
            ],
        }

    def _offer_json(self, s: LoatcgState, offer: Offer) -> dict[str, JSON]:
        return {
            "number": offer.number,
            "maker": seat_name(s, offer.maker),
            "give": cards_list(offer.give),
            "give_text": cards_text(offer.give),
            "want": cards_list(offer.want),
            "want_text": cards_text(offer.want),
            "takers": [seat_name(s, t) for t in offer.takers],
            "private": bool(offer.audience),
        }

    def _final_json(self, s: LoatcgState) -> dict[str, JSON]:
        instructions = instructions_of(s)
        shown = {r.instruction: r.number for r in s.reports}
        return {
            "instructions": [
                {"number": i.number, "text": i.english(), "line": i.canonical(),
                 "report": shown.get(i.number)}
                for i in instructions
            ],
            "salt": s.salt,
            "committed_text": commitment(s.instructions, s.salt),
            "digest": s.digest,
            "hands": [
                {"name": m.name, "hand": cards_list(m.hand), "hand_text": cards_text(m.hand),
                 "score": score(instructions, m.hand)}
                for m in s.members
            ],
            "winners": list(s.winners),
        }

    def _result_text(self, s: LoatcgState) -> str:
        if not s.winners:
            return "the tournament ends with no members, so nobody wins."
        top = max(p for _, p in s.final_scores)
        points = f"{top} point{'' if abs(top) == 1 else 's'}"
        if len(s.winners) == 1:
            return f"{s.winners[0]} wins the tournament with {points}."
        return f"{names_text(s.winners)} win the tournament, tied with {points}."

    def _how(self, s: LoatcgState, audience: Audience, seat: int) -> dict[str, JSON]:
        """How a request came, for the answer's wording: its scope (definition
        F) and the members who saw it."""
        if audience.public:
            return {"scope": "public", "audience_names": []}
        scope = "secret" if audience.seats == {seat} else "private"
        return {"scope": scope, "audience_names": [seat_name(s, x) for x in sorted(audience.seats)]}

    def _report_json(self, report: Report) -> dict[str, JSON]:
        """A report as published: never the instruction's number (rule 5)."""
        return {
            "number": report.number,
            "round_ended": report.number,
            "round_begun": report.number + 1,
            "instruction": report.text,
            "scores": [{"name": n, "score": p} for n, p in report.scores],
            "discard_pile": cards_list(report.discard_pile),
            "discard_pile_text": cards_text(report.discard_pile),
            "deal_follows": report.deal_follows,
        }


# -- the game's public page ------------------------------------------------------

View = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]


def loatcg_page(view: View, events: Events) -> PageTable:
    """The Land of Agora tournament (rule text 002): each member's Hand
    Scores as each report published them (never the current ones, ruling
    TCG-20), the Discard Pile, the instructions shown, the open public
    offers; the Final Report once frozen, with the salt and the text the
    digest was made from."""
    reports = view["reports"]
    final = view.get("final")
    columns = [f"Report {r['number']}" for r in reports] + (["Final"] if final else [])
    scores_by = [{s["name"]: s["score"] for s in r["scores"]} for r in reports]
    if final:
        scores_by.append({h["name"]: h["score"] for h in final["hands"]})
    members = list(view["members"])
    for scores in scores_by:  # a member since gone is still in the reports
        members += [n for n in scores if n not in members]
    rows = [{"name": n, "scores": [s.get(n) for s in scores_by]} for n in members]
    data = {
        **{k: view[k] for k in ("round", "rounds", "next_event", "frozen", "winners",
                                "digest", "offers", "members")},
        "columns": columns, "rows": rows,
        "reports": list(reversed(reports)),
        "discard_pile": reports[-1]["discard_pile"] if reports else None,
        "final": final,
    }
    labels = [c.removeprefix("Report ") for c in columns]
    return PageTable(data, Course("Hand Scores as each report published them", "points", labels,
                                  [(r["name"], r["scores"]) for r in rows]),
                     {"final": final} if final else {})
