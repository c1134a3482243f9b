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
from typing import Any

from referee.games.base import JSON, Audience, Course, Notice, PageTable
from referee.games.loatcg.bot import MemberView, OfferSeen
from referee.games.loatcg.instructions import score
from referee.games.loatcg.rules import (
    FREEZE_DAYS,
    LoatcgState,
    Member,
    Offer,
    cards_list,
    cards_text,
    final_json,
    instructions_of,
    member_at,
    names_text,
    offer_json,
    report_json,
    result_text,
    seat_name,
)


class LoatcgViews:
    """What each member and the public may see of a tournament: OpenSpiel's
    Observer, an object the game holds, given each state to show. It makes
    ``view``, ``summary`` and ``status``, and the data the rules ask for to
    write each notice (:class:`~referee.games.loatcg.rules.LoatcgMail`)."""

    def page_table(self, view: Mapping[str, JSON],
                   events: Sequence[Mapping[str, JSON]]) -> PageTable:
        """The game as its table for its page (:func:`loatcg_page`)."""
        return loatcg_page(view, events)


    def view(self, state: LoatcgState, seat: int | None) -> dict[str, JSON]:
        """The public view holds no hand, no deal and no instruction a report
        has not shown (and no report's instruction number) until the Freeze.
        A member's view adds eir hand, the instructions revealed to em and
        the offers e saw; never eir Hand Score (ruling TCG-22)."""
        view = self.common(state)
        view["reports"] = [report_json(r) for r in state.reports]
        view["offers"] = [offer_json(state, o) for o in state.offers if not o.audience]
        if state.frozen:
            view["final"] = final_json(state)
        member = member_at(state, seat) if seat is not None else None
        if member is not None:
            view["you"] = self.you(state, member)
            view["offers"] = [
                offer_json(state, o)
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
            "result": result_text(state) if state.frozen else None,
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
            return (f"The tournament is over (rule 6): {result_text(s)}\n"
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

    def dealt_notice(
        self, s: LoatcgState, member: Member, dealt: Mapping[str, int], reason: str,
        draw: tuple[str | int, ...],
    ) -> Notice:
        """Definition C, rule 7, ruling TCG-3: a deal is secret and carries the
        member's whole hand; the 3 cards dealt each round (rule 7) carry eir
        score too, and no other deal does (ruling TCG-22)."""
        you = self.you(s, member)
        if reason == "round":
            you["score"] = score(instructions_of(s), member.hand)
        context = {
            **self.common(s),
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

    def common(self, s: LoatcgState) -> dict[str, JSON]:
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

    def you(self, s: LoatcgState, member: Member) -> dict[str, JSON]:
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

    def how(self, s: LoatcgState, audience: Audience, seat: int) -> dict[str, JSON]:
        """How a request came, for the answer's wording: its scope (definition
        F) and the members who saw it."""
        if audience.public:
            return {"scope": "public", "audience_names": []}
        scope = "secret" if audience.seats == {seat} else "private"
        return {"scope": scope, "audience_names": [seat_name(s, x) for x in sorted(audience.seats)]}


# -- what a bot sees ----------------------------------------------------------------


def member_view(s: LoatcgState, member: Member) -> MemberView:
    """What ``member`` knows: eir hand, the instructions revealed to em (with
    their numbers) and those the reports published (without), and the
    offers open to em. Nothing of another hand, nor of an instruction kept
    from em, nor a report's instruction number e was not told (rule 5)."""
    instructions = instructions_of(s)
    known = sorted(set(member.known))
    rules = [instructions[k - 1].rule for k in known]
    for r in s.reports:
        rule = instructions[r.instruction - 1].rule
        if r.instruction not in known and rule not in rules:
            rules.append(rule)

    def seen(o: Offer) -> OfferSeen:
        return OfferSeen(o.number, o.maker, dict(o.give), dict(o.want), not o.audience)

    offers = tuple(seen(o) for o in s.offers if o.maker != member.seat
                   and (not o.takers or member.seat in o.takers)
                   and (not o.audience or member.seat in o.audience)
                   and member_at(s, o.maker) is not None)
    return MemberView(
        seat=member.seat,
        hand=dict(member.hand),
        rules=tuple(rules),
        known_numbers=tuple(known),
        rounds=s.rounds,
        reports=len(s.reports),
        offers=offers,
        mine=tuple(seen(o) for o in s.offers if o.maker == member.seat),
    )


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
