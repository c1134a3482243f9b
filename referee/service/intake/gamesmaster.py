"""The club's GamesMaster by mail (issue 36): a mail whose command lines
are the club's (``club/words.py``: ``new KIND``, ``join TAG``, ``leave
TAG``, ``start TAG``, ``accept``, ``decline``, ``rematch``, ``tables``,
``standings``) and
that names no game in progress is the club's. Its lines are done through
``club/tables.py`` and answered with the club's letters
(``club/letters.py``, queued by ``club/sending.py`` as the play step queues
a game's reports): the writer answered, those at the table told, the
invitations mailed, the open table posted to the list, the start
announced (the game's own opening is queued as it is made).

A link of the chain (``club``), after the automation and list checks (an
autoresponder's reply, or another list's mail, does nothing) and before
``sender`` (so a ``join TAG`` is never read as a tournament's join); it
ends the way of every mail it takes.

Which mail: one with a club line whose subject and thread name no active
game. A bare ``accept`` or ``decline`` is a game's move (Miser's) unless
the mail came to an invitation's reply address (``referee+TOKEN@``) or to
a club confirmation address; a line that only starts like a club command
from a player in a game is left to the game.

Who: a line that changes something counts when something vouches for its
sender: the trusted Authentication-Results (an aligned pass for the From
domain), a reply to the club's confirmation address made for them
(``intake/confirming``), for ``accept``/``decline`` the invitation's own
reply address; or, with ``[auth] require = "none"``, the From of an
address the referee knows, for all but ``accept`` and ``decline``. Else
nothing is done and the From address is asked to confirm (once a day,
within the day's replies to strangers): a forger never sees the request.
``tables`` and ``standings`` need no vouching (``standings hide`` and
``show`` do: they change what is shown of someone).

What it costs: the mail is charged to its sender's reply budget (the
verified one, or the budget of mail in their name); over it, or the same
mail again, nothing is done or answered. A writer who is no member, and
whom nothing vouches for, is answered within the day's replies to
strangers (``[limits] stranger_replies_per_day``, ``_per_domain``).

Runs inside intake's transaction; each line in a savepoint of its own, so
a line refused changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from email.utils import formataddr

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from referee.config import Config
from referee.games.draws import MESSAGE_ID, WORDS, valid_entropy
from referee.mail.compose import echo_subject
from referee.service.club import letters, words
from referee.service.club.letters import Letter
from referee.service.club.sending import send
from referee.service.club.tables import Done, Entropy, Refused, Tables
from referee.service.club.words import (
    EntropyLine,
    NewTable,
    StandingsLine,
    TableLine,
    Unreadable,
)
from referee.service.intake.budgets import (
    ADDRESS_MAX,
    UNVERIFIED,
    Allowance,
    Budgets,
    loop_digest,
)
from referee.service.intake.confirming import Confirmations, expiry
from referee.service.intake.joining import own_name
from referee.service.intake.letter import GO_ON, Judgement
from referee.service.intake.letter import Letter as Mail
from referee.service.intake.senders import Senders
from referee.service.outgoing.delivery import Delivery
from referee.service.play import results
from referee.service.play.commands import COMMAND_WORDS, is_game_line
from referee.service.play.guests import Unserved, engine_of
from referee.service.play.ratings import ALL_TIME
from referee.store import models as m

#: A club line as read, or why it cannot be.
Line = NewTable | TableLine | StandingsLine | EntropyLine | Unreadable
#: The club's verbs that change nothing: answered whoever wrote.
READING = frozenset({"tables"})
#: The verbs only an invitation's reply address (or what vouches for the
#: domain, or a confirmation) may say: a seat taken in someone's name.
ANSWERING = frozenset({"accept", "decline"})
#: The verbs that seat the writer: the seat takes the mail's entropy.
SEATING = frozenset({"new", "join", "accept", "rematch"})


class GamesMaster:
    """The ``club`` link: the club's command lines of a mail, done."""

    name = "club"

    def __init__(self, config: Config, delivery: Delivery, tables: Tables, senders: Senders,
                 budgets: Budgets, confirmations: Confirmations) -> None:
        self.config, self.delivery, self.tables = config, delivery, tables
        self.senders, self.budgets, self.confirmations = senders, budgets, confirmations

    def judge(self, db: Session, letter: Mail) -> Judgement:
        msg = letter.msg
        if letter.from_referee or not msg.sender:
            return GO_ON
        claim = self.confirmations.club_claim((*msg.to, *msg.cc))
        invitation = next((seat for token in letter.tokens
                           if (seat := self.tables.invitation_of(db, token)) is not None), None)
        addressed = claim is not None or invitation is not None
        lines = _club_lines(letter.lines)
        if not lines and not addressed and (tag := _table_tag(msg.subject)) is not None and (
                self.tables.seated_at_operator_table(db, msg.sender, tag)):
            return self._contribute(db, letter, tag)
        if not lines:
            if addressed:  # an unmarked autoresponder's reply, or "thanks"
                return Judgement("ignored", "not answered: a reply to the club's mail with "
                                            "no club line")
            return GO_ON
        if letter.tag is not None and db.scalar(select(exists().where(
                m.Game.tag == letter.tag, m.Game.status == "active"))):
            return GO_ON  # the game's mail: its own "accept", "join"
        found = [f for _, f in lines]
        player = db.scalar(select(m.Player).where(m.Player.address == msg.sender))
        games = _active_games(db, player) if player is not None else []
        if not addressed and all(_bare_answer(f) for f in found) and (
                games or not self.tables.invited(db, player)):
            # A game's "accept" or "decline" (Miser's); from one who sits
            # in no game but is invited, the invitation's, to confirm.
            return GO_ON
        moves = _game_lines(db, games, letter.lines, {raw for raw, _ in lines})
        if not addressed and games and all(isinstance(f, Unreadable) for f in found) and (
                moves or any(_talk(raw) for raw, _ in lines)):
            # A player's line that only starts like the club's, or one beside
            # the game's own moves: the game's. Alone in a short line ("new
            # chess", "new goofspiel cards=99") it is the club's, refused
            # with what would be right.
            return GO_ON
        return self._do_all(db, letter, lines, player, claim, invitation,
                            (moves, [g.tag for g in games]))

    def _contribute(self, db: Session, letter: Mail, tag: str) -> Judgement:
        """A seated player's mail about the operator's table ``tag`` with
        no club line: its Message-ID is their entropy, if they have given
        none (issue 38); answered with it quoted back."""
        msg, now = letter.msg, letter.now
        domain = self.senders.verify_domain(letter)
        if domain.failed:
            return Judgement("ignored", f"not answered: a mail about {tag} its sender's "
                                        f"domain disowns ({domain.detail})")
        if not domain.passed and self.config.auth.require != "none":
            return Judgement("ignored", f"not answered: a mail about {tag} nothing vouches "
                                        "for; 'entropy TAG WORDS' from a vouched mail counts")
        allowance = self.budgets.charge(db, msg.sender, loop_digest(letter), now)
        if allowance is not Allowance.ANSWER:
            return Judgement("ignored", "not answered: over the reply budget, or the same "
                                        "mail again")
        did = self.tables.contribute(db, msg.sender, tag, _entropy_of(letter, []), now)
        if did is None:
            return Judgement("ignored", f"not answered: a mail about {tag} from a seat that "
                                        "gave its entropy already, or none to give")
        table = self.tables.view(db, did.table)
        assert table is not None
        send(db, self.delivery,
             letters.letters(did, table, msg.sender, self._name(db, msg.sender),
                             self.config.referee.public_list, self.config.club.table_days),
             now, in_reply_to=msg.message_id, references=msg.references)
        return Judgement("processed", f"club: entropy {did.table}"
                                      + (f", started as {did.game}" if did.game else ""))

    def _do_all(self, db: Session, letter: Mail,
                lines: Sequence[tuple[str, Line]],
                player: m.Player | None, claim: tuple[date, str] | None,
                invitation: m.TableSeat | None,
                moves: tuple[Sequence[str], Sequence[str]] = ((), ())) -> Judgement:
        """Do the club ``lines`` of a mail the club takes, and queue what
        they cause. ``moves``: the mail's lines that are a game's moves (or
        look like them), not done here, and the tags of the writer's games:
        the answer says so, and where to write them."""
        msg, now = letter.msg, letter.now
        domain = self.senders.verify_domain(letter)
        if domain.failed:
            return Judgement("ignored", f"not answered: club lines its sender's domain "
                                        f"disowns ({domain.detail})")
        confirmed = claim is not None and self.confirmations.club_confirmed(
            claim, msg.sender, now)
        vouched = domain.passed or confirmed
        key = msg.sender if vouched else f"{UNVERIFIED}{msg.sender}"[:ADDRESS_MAX]
        allowance = self.budgets.charge(db, key, loop_digest(letter), now)
        if allowance is not Allowance.ANSWER:
            return Judgement("ignored", "not answered: club lines over the reply budget, or "
                                        "the same mail again")
        if not domain.passed and not self.tables.is_member(db, player) and (
                not self.budgets.stranger_reply(db, msg.sender, now)):
            return Judgement("ignored", "not answered: club lines from a stranger over "
                                        "[limits] stranger_replies_per_day or _per_domain")
        by_token = invitation is not None and invitation.player.address == msg.sender
        known = self.config.auth.require == "none" and player is not None
        name = own_name(msg.sender_name)
        writer = formataddr((name, msg.sender)) if name else msg.sender
        subject = echo_subject(msg.subject)
        out: list[Letter] = []
        unconfirmed: list[str] = []
        done: list[str] = []
        seating = any(_verb(f) in SEATING for _, f in lines)
        for raw, found in lines:
            if isinstance(found, Unreadable):
                out.append(letters.refusal(msg.sender, raw, str(found), subject))
                continue
            if isinstance(found, StandingsLine):
                if found.hide is not None and not (vouched or known):
                    unconfirmed.append(raw)
                    continue
                out.append(self._standings(db, raw, found, player, msg.sender, subject, now))
                done.append("standings" + ("" if found.hide is None else
                                           " hide" if found.hide else " show"))
                continue
            if isinstance(found, EntropyLine) and found.tag is None and seating:
                continue  # the words of the seat this mail takes
            verb = _verb(found)
            if verb in READING:
                out.append(letters.listing(msg.sender, self.tables.listing(db), subject,
                                           words.kinds()))
                done.append(verb)
                continue
            may = (by_token or vouched) if verb in ANSWERING else (vouched or known)
            if not may and verb == "new" and (
                    why := self.tables.may_not_open(db, player)) is not None:
                # Refused whoever wrote it: no confirmation to ask for first.
                out.append(letters.refusal(msg.sender, raw, why, subject))
                continue
            if not may:
                unconfirmed.append(raw)
                continue
            try:
                with db.begin_nested():
                    did = self._do(db, letter, found, writer,
                                   invitation.token if by_token and invitation else None,
                                   _entropy_of(letter, lines))
            except Refused as e:
                out.append(letters.refusal(msg.sender, raw, str(e), subject))
                continue
            table = self.tables.view(db, did.table)
            assert table is not None
            out += letters.letters(did, table, msg.sender, self._name(db, msg.sender),
                                   self.config.referee.public_list,
                                   self.config.club.table_days)
            done.append(f"{did.what} {did.table}" + (f" as {did.game}" if did.game else ""))
        if moves[0] and (vouched or known):  # a forger's mail: its victim told once, below
            out.append(letters.not_read(msg.sender, moves[0], moves[1], subject))
        if unconfirmed and self.budgets.tell_stranger(db, "club", msg.sender, now):
            out.append(letters.confirmation(
                msg.sender, unconfirmed, subject, expiry(now.date()),
                self.confirmations.club_address(msg.sender, now.date())))
        if out:
            send(db, self.delivery, out, now, in_reply_to=msg.message_id,
                 references=msg.references)
        note = "club: " + (", ".join(done) if done else "nothing done")
        if unconfirmed:
            note += f"; {len(unconfirmed)} line(s) to confirm"
        status = "processed" if done else ("to confirm" if unconfirmed else "refused")
        return Judgement(status, note)

    def _do(self, db: Session, letter: Mail, found: NewTable | TableLine | EntropyLine, writer: str,
            token: str | None, entropy: Entropy) -> Done:
        now = letter.now
        if isinstance(found, NewTable):
            return self.tables.open(db, writer, found, now, entropy=entropy)
        if isinstance(found, EntropyLine):
            tag = found.tag or _table_tag(letter.msg.subject)
            if tag is None:
                raise Refused("Write the table's tag after 'entropy', like 'entropy "
                              "spades-t12 my own words', or write it in a reply to a mail "
                              "about the table.")
            return self.tables.give_entropy(db, writer, tag, found.words, now)
        verb, tag = found.verb, found.tag
        if verb == "rematch":
            if letter.tag is None:
                raise Refused("Write 'rematch' in a reply to the last mail of the game to "
                              "play again.")
            return self.tables.rematch(db, writer, letter.tag, now, entropy=entropy)
        if verb == "accept":
            return self.tables.accept(db, writer, tag, now, token=token, entropy=entropy)
        if verb == "decline":
            return self.tables.decline(db, writer, tag, now, token=token)
        assert tag is not None  # the grammar gives join, leave and start their tag
        if verb == "join":
            return self.tables.join(db, writer, tag, now, entropy=entropy)
        action = {"leave": self.tables.leave, "start": self.tables.start}[verb]
        return action(db, writer, tag, now)

    def _standings(self, db: Session, raw: str, found: StandingsLine,
                   player: m.Player | None, to: str, subject: str, now: datetime) -> Letter:
        """The answer to ``standings``: the club's published tables; or the
        writer left out of them (``standings hide``), or in them again."""
        if not self.config.club.standings:
            return letters.standings(to, subject, off=True)
        if found.hide is not None:
            if player is None:
                return letters.refusal(
                    to, raw, "You have played no game here, so no table shows you.", subject)
            results.set_hidden(db, player, found.hide)
            return letters.standings(to, subject, hide=found.hide)
        if found.season is not None:
            wanted = [ALL_TIME if found.season == "all" else found.season]
        else:
            wanted = [s for s in (results.current_season(self.config, now), ALL_TIME)
                      if s is not None]
        tables = [t for season in wanted
                  for t in results.tables(db, self.config, found.kind, season)]
        left = {k: v for k, v in results.left_out(db).items() if found.kind in (None, k)}
        text = (results.as_text(tables, left) if tables
                else "  No game has been rated yet.")
        return letters.standings(to, subject, tables=text)

    @staticmethod
    def _name(db: Session, address: str) -> str:
        player = db.scalar(select(m.Player).where(m.Player.address == address))
        if player is not None and player.name:
            return player.name
        return address.partition("@")[0].capitalize()


def _verb(found: Line) -> str:
    if isinstance(found, NewTable):
        return "new"
    if isinstance(found, EntropyLine):
        return words.ENTROPY
    return found.verb if isinstance(found, TableLine) else ""


def _entropy_of(letter: Mail, lines: Sequence[tuple[str, Line]]) -> Entropy:
    """The entropy a seat this mail takes gives (issue 38): the words of its
    ``entropy WORDS`` line (no tag), else its own Message-ID as the
    writer's client wrote it (with its angle brackets), else none (a mail
    without one, or one the referee could not keep as written)."""
    said = next((f.words for _, f in lines if isinstance(f, EntropyLine) and f.tag is None),
                None)
    if said is not None:
        return (said, WORDS)
    message_id = letter.msg.message_id
    if message_id and not message_id.endswith("@digest.invalid") and valid_entropy(
            value := f"<{message_id}>"):
        return (value, MESSAGE_ID)
    return None


def _table_tag(subject: str) -> str | None:
    """The table's tag a subject carries (``Re: [spades-t12] ...``)."""
    found = re.search(rf"\[\s*({words.TABLE_TAG.pattern})\s*\]", subject.casefold())
    return found.group(1) if found else None


def _club_lines(lines: Sequence[str]) -> list[tuple[str, Line]]:
    """Each club line of a mail, as written and as read (or why not)."""
    out: list[tuple[str, Line]] = []
    for line in lines:
        try:
            found = words.parse_line(line)
        except Unreadable as e:
            out.append((line, e))
            continue
        if found is not None:
            out.append((line, found))
    return out


def _bare_answer(found: object) -> bool:
    return isinstance(found, TableLine) and found.tag is None and found.verb in ANSWERING


def _active_games(db: Session, player: m.Player) -> list[m.Game]:
    """The games in progress where ``player`` holds a seat, by tag."""
    return list(db.scalars(select(m.Game).where(
        m.Seat.player_id == player.id, m.Game.id == m.Seat.game_id,
        m.Game.status == "active").order_by(m.Game.id).distinct()))


def _game_lines(db: Session, games: Sequence[m.Game], lines: Sequence[str],
                club: set[str]) -> list[str]:
    """The lines of a mail, not among its ``club`` lines, that are (or look
    like) a command of one of ``games`` or of their tables."""
    engines = []
    for game in games:
        try:
            engines.append(engine_of(db, game))
        except Unserved:
            continue
    return [line for line in lines if line not in club
            and any(is_game_line(engine, line) for engine in engines)]


def _talk(line: str) -> bool:
    """A line too long to be a command the club did not read: talk that
    starts with one of its words ("Start without me, I will be late"); a
    ``new`` line that names a game here is never talk, however long."""
    said = line.casefold().split()
    if said[0] in words.VERBS["new"] and set(said[1:4]) & set(words.kinds()):
        return False
    return len(said) > COMMAND_WORDS
