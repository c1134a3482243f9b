"""The club's mails as letters to render: for each club action (a
:class:`~referee.service.club.tables.Done` and the table as it is after
it, a :class:`~referee.service.club.tables.TableView`), who gets which of
the ``templates/common/club_*.txt`` mails and with what data; and the
answers to ``tables``, to ``standings`` and to a line refused; the request to confirm
lines nothing vouches for. Pure: no I/O, no database;
the caller renders each letter (``Composer.render("common", ...)``) and
sends it in its own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from referee.service.club.tables import Done, Entropy, Invitation, TableView


@dataclass(frozen=True)
class Letter:
    """A mail to render: ``template`` (``templates/common/``) with
    ``context``, to ``to`` (an address, or the list's where ``public``).
    ``token``: an invitation's secret, for its reply address
    (``referee+TOKEN@``); never in the text."""

    to: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)
    public: bool = False
    token: str | None = None
    #: A Reply-To of its own (a confirmation address), else none.
    reply_to: str | None = None


def options_text(table: TableView) -> str:
    """The table's options as written: ``cards=13, speed=fast``."""
    return ", ".join(f"{key}={value}" for key, value in table.options)


def letters(done: Done, table: TableView, writer: str, who: str,
            public_list: str | None = None, table_days: int = 0) -> list[Letter]:
    """The mails ``done`` (an action by ``writer``, an address, called
    ``who`` at the table) sends, ``table`` as it is after it: the answer
    to the writer and the others told; the invitations; the table posted
    to ``public_list`` when it has seats for anyone; the start announced
    there (to those seated where there is no list). ``table_days``: how
    long an expired table waited."""
    if done.what == "opened":
        out = [Letter(writer, "club_opened", {"t": table, "list": public_list,
                                              **_entropy(done.entropy)})]
        out += [invitation(i, table) for i in done.invitations]
    elif done.what == "seated":  # the operator's table: each player told
        return [Letter(address, "club_seated", {"t": table, "name": name,
                                                "options": options_text(table)})
                for address, name in zip(done.tell, table.seated, strict=False)]
    elif done.what == "started":
        started = {"t": table, "game": done.game}
        # The writer's mail started it (the seat that filled the table, the
        # last entropy given): the answer to it quotes back the entropy
        # taken from it, so they can find their own in the game's mix. Their
        # start mail is that answer; the list's is no one's, so the writer
        # is answered on their own then.
        mine = done.entropy if writer else None
        yours = [Letter(writer, "club_entropy", {"t": table, "game": done.game,
                                                  **_entropy(mine)})]
        if public_list:
            return [*(yours if mine is not None else []),
                    Letter(public_list, "club_started", {**started, **_entropy(None)},
                           public=True)]
        told = [Letter(address, "club_started",
                       {**started, **_entropy(mine if address == writer else None)})
                for address in done.tell]
        return [*(yours if mine is not None and writer not in done.tell else []), *told]
    elif done.what in ("expired", "cancelled"):
        # Cancelled by the opener's ``leave``, or by the operator's
        # ``table cancel`` (``who`` is no one at the table then).
        closed = {"t": table, "what": done.what, "days": table_days,
                  "by_opener": who == table.opener}
        return [Letter(address, "club_closed", closed) for address in done.tell]
    elif done.what == "entropy":
        return [Letter(writer, "club_entropy", {"t": table, "game": None,
                                                **_entropy(done.entropy)})]
    else:  # joined, accepted, left, declined: the opener is told last
        opener = done.tell[-1] if done.tell else ""
        out = [Letter(address, "club_seat",
                      {"t": table, "what": done.what,
                       "who": "You" if address == writer else who,
                       "opener": address == opener,
                       **_entropy(done.entropy if address == writer else None)})
               for address in done.tell]
    if done.post and public_list:
        out.append(posted(table, public_list))
    return out


def invitation(invited: Invitation, table: TableView) -> Letter:
    """The invitation to ``invited.address``; its reply address holds the token."""
    return Letter(invited.address, "club_invitation",
                  {"t": table, "name": invited.name, "by": invited.by,
                   "options": options_text(table)}, token=invited.token)


def posted(table: TableView, public_list: str) -> Letter:
    """The open table, posted to the list: "Alice seeks 3 players for Spades"."""
    return Letter(public_list, "club_posted",
                  {"t": table, "options": options_text(table), "list": public_list},
                  public=True)


def listing(to: str, tables: Sequence[TableView], subject: str,
            kinds: Sequence[str]) -> Letter:
    """The answer to ``tables``: every open table, and how to open one."""
    return Letter(to, "club_tables", {"tables": list(tables), "subject": subject,
                                      "kinds": list(kinds), "example": _example(kinds)})


def standings(to: str, subject: str, tables: str = "", hide: bool | None = None,
              off: bool = False) -> Letter:
    """The answer to ``standings``: the club's ``tables`` as text (players
    who hide left out); or to ``standings hide`` / ``show`` (``hide``);
    ``off``: the club keeps no standings."""
    return Letter(to, "club_standings", {"subject": subject, "tables": tables, "hide": hide,
                                         "off": off})


def refusal(to: str, line: str, why: str, subject: str) -> Letter:
    """The answer to a club line not done: the line, and what would be right
    (a :class:`~referee.service.club.tables.Refused`'s or an
    :class:`~referee.service.club.words.Unreadable`'s words)."""
    return Letter(to, "club_refused", {"line": line.strip(), "lines": [], "why": why,
                                       "subject": subject})


def not_read(to: str, lines: Sequence[str], tags: Sequence[str], subject: str) -> Letter:
    """The answer to a game's moves (``lines``) in a mail the club took: not
    read, and where to write them (the writer's games, ``tags``)."""
    where = (f"with [{tags[0]}] in the subject" if len(tags) == 1 else
             "with the game's tag in the subject (" + ", ".join(f"[{t}]" for t in tags) + ")")
    why = ("a mail with the club's lines (new, join, tables ...) that names no game is "
           "the club's, so a game's moves and questions in it are not read. Write "
           f"{'them' if len(lines) > 1 else 'it'} again in a reply to a mail of your "
           f"game, or in a mail {where}.")
    return Letter(to, "club_refused", {"line": "", "lines": [line.strip() for line in lines],
                                       "why": why, "subject": subject})


def confirmation(to: str, lines: Sequence[str], subject: str, until: datetime,
                 reply_to: str) -> Letter:
    """The request to confirm club lines nothing vouches for: a reply to
    ``reply_to`` that writes them again does them."""
    return Letter(to, "club_confirm", {"lines": [line.strip() for line in lines],
                                       "subject": subject, "until": until},
                  reply_to=reply_to)


def _entropy(given: Entropy) -> dict[str, Any]:
    """The writer's own entropy, as the answer to their mail quotes it back."""
    if given is None:
        return {"entropy": None}
    return {"entropy": given[0], "entropy_how": given[1]}


def _example(kinds: Sequence[str]) -> str:
    return "spades" if "spades" in kinds else (kinds[0] if kinds else "spades")
