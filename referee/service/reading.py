"""The read side: ``status``, the public history of the game pages, a
game's stored state, ``replay`` from the seed and the action log, and the
operator's ``audit`` of a game's draws and commitments.

Each call reads in a session of its own and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, select
from sqlalchemy.orm import Session, sessionmaker

from referee.games import PackageFault
from referee.games.base import (
    EDITION,
    REFEREE_SEAT_NAME,
    Action,
    EngineError,
    Event,
    SeatInfo,
    shown_publicly,
)
from referee.games.draws import (
    KEYED,
    MIXED,
    contributions,
    draws_for,
    mixed_seed,
    seed_fingerprint,
)
from referee.service.errors import RefereeError
from referee.service.play import guests, pace
from referee.store import models as m
from referee.store.db import now_utc

#: Games ``status`` reads at a time.
STATUS_BATCH = 500


class Reading:
    """Answers questions about games without changing them."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def status(self, tag: str | None = None) -> list[dict[str, Any]]:
        """Public facts about games: whose move, deadlines, scores."""
        return list(self.iter_status(tag))

    def iter_status(self, tag: str | None = None,
                    batch: int = STATUS_BATCH) -> Iterator[dict[str, Any]]:
        """``status`` one game at a time, read ``batch`` games at a time: three
        statements a batch (games, their seats with players, their
        deadlines), so memory stays flat whatever the number of games."""
        with self.sessions() as db:
            # Core rows, not ORM objects: a third of the time at 10,000 games.
            conn = db.connection()
            after = 0
            found = False
            while True:
                # One game by its tag's index; else a batch by the ids' range
                # (a tag asked with the range was read in id order: every game).
                q = (GAMES.where(_g.tag == tag) if tag
                     else GAMES.where(_g.id > after).order_by(_g.id).limit(batch))
                games = conn.execute(q).all()
                if not games:
                    break
                found = True
                # The batch's ids are a range (every game in it, or the one
                # game asked for): its seats and deadlines are asked by it,
                # not by a list of 500 ids to bind (PostgreSQL's driver took
                # a fifth of the time over those).
                low = games[0].id - 1 if tag else after
                yield from _entries(conn, games, low)
                after = games[-1].id
                if tag or len(games) < batch:
                    break
            if tag and not found:
                raise RefereeError(f"There is no game {tag}.")

    def away(self, now: datetime | None = None) -> dict[tuple[str, int], str]:
        """Who is away now, by game tag and seat, until when (ISO-8601, UTC):
        an ``away`` said in a game's mail, or one from all games that moved
        its deadlines. One statement when nobody is away, two else."""
        a, s, g = (m.table_of(t).c for t in (m.Absence, m.Seat, m.Game))
        now = now or now_utc()
        with self.sessions() as db:
            conn = db.connection()
            running = conn.execute(select(a.player_id, a.game_id, a.games, a.end_at).where(
                a.ended_at.is_(None), a.start_at <= now, a.end_at > now)).all()
            if not running:
                return {}
            covers: dict[tuple[int, int], datetime] = {}
            for player, game, covered, until in running:
                for gid in ([game] if game is not None else covered or []):
                    covers[gid, player] = max(covers.get((gid, player), until), until)
            out = {}
            for gid, tag, position, player in conn.execute(
                    select(s.game_id, g.tag, s.position, s.player_id)
                    .select_from(m.table_of(m.Seat).join(m.table_of(m.Game), s.game_id == g.id))
                    .where(s.player_id.in_({p for p, *_ in running}), s.bot.is_(False),
                           g.status == "active")).all():
                if (until := covers.get((gid, player))) is not None:
                    out[tag, position] = until.isoformat() + "Z"
            return out

    def status_of(self, ids: Sequence[int], batch: int = STATUS_BATCH
                  ) -> Iterator[dict[str, Any]]:
        """``status`` of the games ``ids`` alone (those whose page is behind),
        in the order of their ids, ``batch`` games at a time."""
        wanted = sorted(ids)
        with self.sessions() as db:
            conn = db.connection()
            for start in range(0, len(wanted), batch):
                chunk = wanted[start:start + batch]
                games = conn.execute(GAMES.where(_g.id.in_(chunk)).order_by(_g.id)).all()
                yield from _entries(conn, games)

    def public_histories(self, tags: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """The public events of each game of ``tags``, oldest first (by the
        step of the game they came from): what their web pages and feeds
        show (one statement; none for a tag of no game). Secret facts
        (sealed bids, deals) are left out here, at the source."""
        e, g = m.table_of(m.Event), m.table_of(m.Game)
        out: dict[str, list[dict[str, Any]]] = {tag: [] for tag in tags}
        with self.sessions() as db:
            for tag, id_, step, at, kind, text, data in db.connection().execute(
                    select(g.c.tag, e.c.id, e.c.step, e.c.at, e.c.kind, e.c.text, e.c.data)
                    .select_from(e.join(g, e.c.game_id == g.c.id))
                    .where(g.c.tag.in_(tags), e.c.public)
                    .order_by(e.c.game_id, e.c.step, e.c.id)):
                out[tag].append({"id": id_, "step": step, "at": at, "kind": kind,
                                 "text": text, "data": data})
        return out

    def public_views(self, tags: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What everyone may see of each game of ``tags``, for its page: the
        engine's view for no seat (``view``), and the seed once the rules let
        it be told (``seed``: the game is over, its kind reveals it, and its
        opening committed to it; else None), as the game's last mail tells it.
        A game whose package cannot serve it now, or raises here, has none
        (``guests``)."""
        g = m.table_of(m.Game).c
        out: dict[str, dict[str, Any]] = {}
        with self.sessions() as db:
            for tag, kind, state, seed, draws in db.connection().execute(
                    select(g.tag, g.kind, g.state, g.seed, g.draws).where(g.tag.in_(tags))):
                try:
                    engine = guests.engine(kind)
                except guests.Unserved:
                    continue
                try:
                    loaded = engine.load(state)
                    told = (engine.reveals_seed and draws in (KEYED, MIXED)
                            and engine.is_over(loaded))
                    out[tag] = {"view": engine.view(loaded, None),
                                "seed": seed if told else None}
                except PackageFault:
                    # Its package raised (its line logged): its kind is
                    # unavailable from now on, its page waits, the others
                    # are written.
                    continue
        return out

    def secret(self, name: str) -> str:
        """A key the referee made for itself at ``init`` ("" if none)."""
        with self.sessions() as db:
            row = db.get(m.Secret, name)
            return row.value if row else ""

    def stored_state(self, tag: str, as_loaded: bool = False) -> Any:
        """The game's state as stored (JSON), for audits and the demo;
        ``as_loaded``: as the engine reads it now (``Game.upgrade``: a state
        stored by an earlier version, a field added since filled in as the
        game had it), what a replay is compared with."""
        with self.sessions() as db:
            game = self._game(db, tag)
            if not as_loaded:
                return game.state
            engine = guests.engine_of(db, game)
            return engine.dump(engine.load(game.state))

    def replay(self, tag: str) -> Any:
        """Rebuild a game's state from its seed and action log (an audit)."""
        with self.sessions() as db:
            return self._replay(db, self._game(db, tag))[0]

    def audit(self, tag: str) -> list[str]:
        """What does not hold of a game's draws (:meth:`examine`), the first
        first; empty when all does."""
        return self.examine(tag).problems

    def examine(self, tag: str) -> Audit:
        """The operator's audit of a game's draws (``referee verify TAG``).
        The opening's seed fingerprint must be SHA-256 of the stored seed
        (a game made before openings published one has none to check), the
        replay from the seed and the action log must give the stored state
        (as the engine reads it now), and every commitment the game published
        (a tournament's hash of its Scoring Instructions, Spades' hand
        fingerprints) must be the one the replay makes at the same step,
        from the secrets it draws again."""
        with self.sessions() as db:
            game = self._game(db, tag)
            engine = guests.engine_of(db, game)
            stored = list(db.scalars(select(m.Event).where(m.Event.game_id == game.id)
                                     .order_by(m.Event.step, m.Event.id)))
            found = Audit(tag)
            opening = next((e for e in stored if e.kind == m.SEED_EVENT), None)
            expected = seed_fingerprint(game.seed)
            if opening is None:
                found.held.append("made before openings published a seed fingerprint: the "
                                  "fingerprint check does not apply")
            elif opening.data.get("seed_sha256") != expected:
                found.problems.append(f"{tag}: the opening's seed fingerprint "
                                      f"{opening.data.get('seed_sha256')} is not SHA-256 of "
                                      f"the stored seed ({expected})")
            else:
                found.held.append("the seed fingerprint matches")
            if game.draws == MIXED:
                self._examine_entropy(db, game, opening, found)
            loaded = engine.load(game.state)
            if (edition := engine.edition_of(loaded)) != engine.edition:
                found.held.append(f"begun under edition {edition} of its rules (now "
                                  f"{engine.edition}), which it keeps")
            try:
                state, events = self._replay(db, game)
            except EngineError as e:
                # Another seed deals other cards: a logged move may not fit.
                found.problems.append(f"{tag}: the replay from the stored seed and the action "
                                      f"log fails: {e}")
                return found
            difference = first_difference(json.loads(json.dumps(state)), engine.dump(loaded))
            if difference is not None:
                found.problems.append(f"{tag}: the stored state differs from the replay at "
                                      f"{difference}")
            else:
                found.held.append("the replay matches")
            published = [(e.step, e.kind, e.data) for e in stored
                         if e.public and _commits(e.data)]
            replayed = [(step, e.kind, json.loads(json.dumps(dict(e.data))))
                        for step, e in events if e.public and _commits(e.data)]
            _compare_commitments(found, published, replayed, older=opening is None)
            return found

    @staticmethod
    def _examine_entropy(db: Session, game: m.Game, opening: m.Event | None,
                         found: Audit) -> None:
        """A ``mixed`` game (issue 38): the opening lists the contributions
        the draws mix in, and the table it came from committed, when it
        opened, to the seed the game keeps."""
        tag, entropy = game.tag, list(game.entropy or ())
        listed = None if opening is None else opening.data.get("entropy")
        if listed != entropy:
            found.problems.append(f"{tag}: the opening lists the players' entropy "
                                  f"{listed!r}, not the {entropy!r} the draws mix in")
            return
        try:
            mixed = mixed_seed(game.seed, contributions(entropy))
        except ValueError as e:
            found.problems.append(f"{tag}: {e}")
            return
        found.held.append(f"the draws mix the seed with {len(entropy)} player"
                          f"{'' if len(entropy) == 1 else 's'}' entropy, as the opening "
                          f"lists it (the draws' seed is {mixed[:12]}...)")
        table = db.scalar(select(m.OpenTable).where(m.OpenTable.game_id == game.id))
        if table is None or table.seed is None:
            return
        if table.seed != game.seed:
            found.problems.append(f"{tag}: the seed is not the one {table.tag} committed to "
                                  f"when it opened (seed-sha256 {seed_fingerprint(table.seed)})")
        else:
            found.held.append(f"{table.tag} published the same fingerprint when it opened, "
                              "before any player's entropy")

    def _replay(self, db: Session, game: m.Game) -> tuple[Any, list[tuple[int, Event]]]:
        """The state the seed and the action log give, and every event of
        the replay with its step."""
        engine = guests.engine_of(db, game)
        opts = {k: v for k, v in game.options.items()  # the service's, not the game's
                if k not in ("deadline", "reminder", "mail", "aliases", *pace.OPTIONS)}
        # The game plays by the edition of the rules it began under.
        if (edition := engine.edition_of(engine.load(game.state))) != engine.edition:
            opts[EDITION] = edition
        bots = {s.position for s in game.seats if s.bot and s.player is None}
        # The aliases the seats had at the start (none, in a game made before them).
        aliases = {int(pos): tuple(a) for pos, a in game.options.get("aliases", [])}
        infos = [SeatInfo(s.position, s.name, s.position in bots, s.team,
                          aliases.get(s.position, ())) for s in game.seats]
        actions = list(db.scalars(select(m.ActionLog).where(m.ActionLog.game_id == game.id)
                                  .order_by(m.ActionLog.step)))
        if engine.takes_members_by_mail:
            # A seat whose member joined by mail was not there at the start.
            joined = {a.seat for a in actions if a.action.get("verb") == "join"}
            infos = [i for i in infos if i.position not in joined]
        result = engine.new(opts, infos, draws_for(game.draws, game.seed, 0,
                                                   entropy=game.entropy))
        state = result.state
        events = [(0, e) for e in result.events]
        for a in actions:
            act = Action.from_json(a.action)
            if act.verb == "resign":
                result = engine.replace_with_bot(state, a.seat)
            else:
                result = engine.apply(state, a.seat, act,
                                      draws_for(game.draws, game.seed, a.step,
                                                entropy=game.entropy))
            state = result.state
            events.extend((a.step, e) for e in result.events)
        return engine.dump(state), events

    @staticmethod
    def _game(db: Session, tag: str) -> m.Game:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        if game is None:
            raise RefereeError(f"There is no game {tag}.")
        return game


def _commits(data: Any) -> bool:
    """An event's data publishes a commitment: a tournament's hash of its
    Scoring Instructions (``digest``), Spades' hand fingerprints."""
    return isinstance(data, dict) and bool(data.keys() & {"digest", "hand_sha256"})


@dataclass
class Audit:
    """What ``referee verify TAG`` found of one game: each check that held
    (or why it does not apply to a game this old), and what does not hold,
    the first first."""

    tag: str
    held: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The checks that held, in a line: ``TAG: the seed fingerprint
        matches; the replay matches; 2 commitments match``."""
        return f"{self.tag}: {'; '.join(self.held)}"


def _compare_commitments(found: Audit, published: list[tuple[int, str, Any]],
                         replayed: list[tuple[int, str, Any]], older: bool) -> None:
    """Each commitment the game published against the one the replay makes
    at the same step (and of the same kind of event). A commitment the
    replay makes that a game from before seed fingerprints (``older``) never
    published, at a step before its first published one, was made by an
    engine that came later: the game plays on with the older one's, as begun."""
    by_step: dict[tuple[int, str], list[Any]] = {}
    for step, kind, data in replayed:
        by_step.setdefault((step, kind), []).append(data)
    first = min((step for step, _, _ in published), default=None)
    matched = 0
    for step, kind, data in published:
        again = by_step.get((step, kind))
        if not again:
            found.problems.append(f"{found.tag}: the commitment published at step {step} "
                                  f"({kind}) is not made by the replay")
            return
        made = again.pop(0)
        if made != data:
            found.problems.append(f"{found.tag}: the commitment published at step {step} "
                                  f"({kind}) is not the replay's: "
                                  f"{first_difference(made, data, 'data')}")
            return
        matched += 1
    for (step, kind), left in sorted(by_step.items()):
        if left and not (older and (first is None or step < first)):
            found.problems.append(f"{found.tag}: the replay makes a commitment at step {step} "
                                  f"({kind}) that the game did not publish")
            return
    found.held.append(f"{matched} commitment{'' if matched == 1 else 's'} match"
                      f"{'es' if matched == 1 else ''}")


def first_difference(replayed: Any, stored: Any, path: str = "state") -> str | None:
    """Where a replayed state first differs from the stored one
    (``state.packs[1][3]: 5 != 6``), or None. Compare with the stored state
    as the engine loads it (``Reading.stored_state(tag, as_loaded=True)``),
    where a field an earlier version did not store is filled in as that
    game had it: then a key on one side alone is a difference too (a sealed
    bid taken out of the stored state)."""
    if isinstance(replayed, dict) and isinstance(stored, dict):
        for key in sorted(replayed.keys() | stored.keys(), key=str):
            if key not in stored:
                return f"{path}.{key}: missing from the stored state"
            if key not in replayed:
                return f"{path}.{key}: missing from the replay"
            found = first_difference(replayed[key], stored[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(replayed, list) and isinstance(stored, list):
        for i, (a, b) in enumerate(zip(replayed, stored, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(replayed) != len(stored):
            return f"{path}: {len(replayed)} items replayed, {len(stored)} stored"
        return None
    if replayed != stored:
        return f"{path}: replayed {json.dumps(replayed)}, stored {json.dumps(stored)}"
    return None


#: The columns of games that ``status`` shows.
_g = m.table_of(m.Game).c
GAMES = select(_g.id, _g.tag, _g.kind, _g.status, _g.public_view)


def _entries(conn: Connection, games: Sequence[Any], low: int | None = None
             ) -> Iterator[dict[str, Any]]:
    """The ``status`` entries of ``games`` (rows of :data:`GAMES`, in id
    order), with two statements: their seats and their deadlines, asked by
    their ids, or, given ``low``, by the range of ids above it to the last."""
    s, p, d = (m.table_of(t).c for t in (m.Seat, m.Player, m.Deadline))
    ids = [row.id for row in games]

    def of(game_id: ColumnElement[int]) -> ColumnElement[bool]:
        return game_id.in_(ids) if low is None else (game_id > low) & (game_id <= ids[-1])

    # Each game's players and seat names are built as their rows come: a
    # row a seat, unpacked once.
    players: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    names: dict[int, dict[int, str]] = {i: {} for i in ids}
    for gid, position, name, bot, address, bounced_at, bounce in conn.execute(
            select(s.game_id, s.position, s.name, s.bot, p.address, p.bounced_at, p.bounce)
            .select_from(m.table_of(m.Seat).outerjoin(m.table_of(m.Player),
                                                      s.player_id == p.id))
            .where(of(s.game_id)).order_by(s.game_id, s.position)).all():
        players[gid].append({"seat": position, "name": name, "bot": bot, "address": address,
                             "bounced": _bounced(bounced_at, bounce)})
        names[gid][position] = name
    deadlines: dict[int, list[Any]] = {i: [] for i in ids}
    for line in conn.execute(select(d.game_id, d.seat, d.key, d.what, d.due_at)
                             .where(of(d.game_id))
                             .order_by(d.game_id, d.due_at, d.id)).all():
        deadlines[line.game_id].append(line)
    # The kinds whose package cannot serve them now: said by each of their
    # games (the distributions remembered are read only then).
    unserved = guests.unserved_kinds((kind for _, _, kind, _, _ in games), conn)
    # A game that has not moved since views were kept: from its state.
    views = {gid: view for gid, _, _, _, view in games}
    if old := [i for i, view in views.items() if view is None]:
        for i, kind, state in conn.execute(select(_g.id, _g.kind, _g.state)
                                           .where(_g.id.in_(old))):
            try:
                engine = guests.engine(kind, conn)
                views[i] = engine.public_view(engine.load(state))
            except guests.Unserved as e:
                unserved.setdefault(kind, e)
                views[i] = {"summary": {}, "shown": []}
            except PackageFault as e:  # its package raised: its games wait
                unserved.setdefault(kind, guests.faulted(e))
                views[i] = {"summary": {}, "shown": []}
    for gid, game_tag, kind, status, _ in games:
        view = views[gid]
        seat_names = names[gid]
        yield {
            "tag": game_tag, "kind": kind, "status": status,
            **({"waits": unserved[kind].what} if kind in unserved else {}),
            "players": players[gid],
            "deadlines": [{"seat": seat,
                           "name": seat_names.get(seat, REFEREE_SEAT_NAME)
                           if seat else REFEREE_SEAT_NAME,
                           "what": what, "due_at": x.due_at.isoformat() + "Z"}
                          for x, seat, what in shown_publicly(view, deadlines[gid])],
            **view["summary"],
        }


def _bounced(at: datetime | None, said: str | None) -> dict[str, str | None] | None:
    """A seat's player's last bounce (when, what the server said), for
    ``status``; None if their mail never bounced (or the seat has no player)."""
    if at is None:
        return None
    return {"at": at.isoformat() + "Z", "said": said}
