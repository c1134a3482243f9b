"""Atom feeds (RFC 4287): one a game, an entry for each of its latest public
events, and one for the club's index, an entry for each game as its line
of the index last changed. Written with the standard library's XML, which
escapes every text, and holding only characters XML allows
(``referee.web.xmlchars``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import NAMESPACE_URL, uuid5
from xml.etree import ElementTree as ET

from referee.web.xmlchars import xml_text

ATOM = "http://www.w3.org/2005/Atom"
#: The latest public events a game's feed holds (a feed reader keeps the rest).
ENTRIES = 50


def _stamp(when: datetime | str) -> str:
    """RFC 3339 in UTC, as Atom dates are written: ``2026-03-02T12:00:00Z``."""
    if isinstance(when, str):
        when = datetime.fromisoformat(when.rstrip("Z"))
    return when.replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def tag_uri(authority: str, since: datetime | str, specific: str) -> str:
    """A tag URI (RFC 4151), unique and stable: ``tag:club.test,2026-03-02:goofspiel-1``."""
    day = _stamp(since)[:10]
    return f"tag:{authority},{day}:{specific}"


def _feed(title: str, feed_id: str, updated: str, author: str, self_href: str,
          page_href: str) -> ET.Element:
    feed = ET.Element("feed", xmlns=ATOM)
    ET.SubElement(feed, "title").text = title
    ET.SubElement(feed, "id").text = feed_id
    ET.SubElement(feed, "updated").text = updated
    ET.SubElement(ET.SubElement(feed, "author"), "name").text = author
    ET.SubElement(feed, "link", rel="self", href=self_href, type="application/atom+xml")
    ET.SubElement(feed, "link", rel="alternate", href=page_href, type="text/html")
    return feed


def _entry(feed: ET.Element, entry_id: str, title: str, updated: str, text: str,
           href: str) -> None:
    entry = ET.SubElement(feed, "entry")
    ET.SubElement(entry, "id").text = entry_id
    ET.SubElement(entry, "title").text = title
    ET.SubElement(entry, "updated").text = updated
    ET.SubElement(entry, "link", rel="alternate", href=href, type="text/html")
    ET.SubElement(entry, "content", type="text").text = text


def _text(feed: ET.Element) -> str:
    ET.indent(feed)
    return xml_text('<?xml version="1.0" encoding="utf-8"?>\n'
                    + ET.tostring(feed, encoding="unicode") + "\n")


def game_feed(game: Mapping[str, Any], title: str, events: Sequence[Mapping[str, Any]],
              authority: str, author: str, now: datetime) -> str:
    """The feed of a game: its latest public events, the newest first."""
    tag = game["tag"]
    since = events[0]["at"] if events else now
    latest = list(reversed(events))[:ENTRIES]
    updated = _stamp(latest[0]["at"]) if latest else _stamp(now)
    feed = _feed(f"{tag}: {title}", tag_uri(authority, since, tag), updated, author,
                 f"{tag}.atom", f"{tag}.html")
    for e in latest:
        first_line = e["text"].splitlines()[0] if e["text"] else e["kind"]
        _entry(feed, tag_uri(authority, since, f"{tag}/event/{e['id']}"),
               f"{tag}: {first_line}", _stamp(e["at"]), e["text"], f"{tag}.html")
    return _text(feed)


def index_feed(lines: Sequence[Mapping[str, Any]], club: str, address: str,
               now: datetime, tables: Sequence[Mapping[str, Any]] = (),
               standings: Sequence[Mapping[str, Any]] = ()) -> str:
    """The club's feed: an entry for each game, updated when its line of
    the index changed (a game begun, finished, cancelled), the latest
    first; one for each open table, updated when it was opened; and one
    for each table of the standings, updated when a game last moved it."""
    dated = sorted((line for line in lines if line.get("updated")),
                   key=lambda line: (line["updated"], line["tag"]), reverse=True)[:ENTRIES]
    stamps = [_stamp(dated[0]["updated"])] if dated else []
    stamps += [_stamp(t["since"]) for t in tables]
    stamps += [_stamp(s["updated"]) for s in standings if s["updated"]]
    updated = max(stamps) if stamps else _stamp(now)
    # The club's feed is the referee's, whatever its games: a name-based UUID.
    feed_id = uuid5(NAMESPACE_URL, f"mailto:{address}#games").urn
    feed = _feed(f"Games of {club}", feed_id, updated, club, "index.atom", "index.html")
    for line in dated:
        players = ", ".join(line["players"])
        what = line.get("result") or f"{line['status']}: {players}"
        _entry(feed, tag_uri(address.rpartition("@")[2], line["since"], f"{line['tag']}/line"),
               f"{line['tag']} ({line['kind']}): {what}", _stamp(line["updated"]),
               f"{line['tag']}, {line['kind']}, {line['status']}; players: {players}."
               + (f" {line['result']}." if line.get("result") else ""), f"{line['tag']}.html")
    for t in tables:
        left = t["seats_left"]
        seats = f"{left} seat{'s' if left != 1 else ''} left" if left else "no seat left"
        _entry(feed, tag_uri(address.rpartition("@")[2], t["since"], f"{t['tag']}/table"),
               f"{t['tag']} ({t['kind']}): {t['opener']} seeks players, {seats}",
               _stamp(t["since"]),
               f"{t['title']}, opened by {t['opener']}; seated: {', '.join(t['seated'])}; "
               f"{seats}; closes {_stamp(t['expires'])}. Write 'join {t['tag']}' to the "
               "referee to sit.", "index.html#tables")
    for s in standings:
        season = s["season"] or "all"
        since = s["updated"] or now
        ranks = "; ".join(f"{ln['place']}. {ln['name']} {ln['points']}" for ln in s["lines"])
        # One entry a table, its id the same however often it moves.
        _entry(feed, uuid5(NAMESPACE_URL, f"mailto:{address}#standings/{s['kind']}/{season}").urn,
               f"Standings: {s['title']}, {s['label']}", _stamp(since),
               f"The club's {s['title']} standings, {s['label']}: {ranks or 'nobody yet'}.",
               "index.html#standings")
    return _text(feed)
