"""The game pages: public state and history as static HTML (rule text 000, 6)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from sqlalchemy import select

from referee import web
from referee.mail.compose import format_when
from referee.store import models as m
from referee.web import write_pages
from referee.web.feed import ATOM
from referee.web.xmlchars import xml_text
from tests.test_referee import ALICE, BOB, Club


def test_a_page_shows_the_public_history_but_no_sealed_bid_and_no_address(
        tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    tag = club.referee.operator.create_game(
        "goofspiel", [f'"<b>Alice</b>" <{ALICE}>', f"Bob <{BOB}>"],
        options={"prize_order": "5,1,6,4,3,2"}, now=club.now, seed="s")
    club.send(ALICE, "bid 6")
    club.poll()  # [web] path set: the pass writes the pages
    page = (tmp_path / "club" / "pages" / f"{tag}.html").read_text()
    index = (tmp_path / "club" / "pages" / "index.html").read_text()
    assert "Round 1: the prize is 5." in page
    assert "&lt;b&gt;Alice&lt;/b&gt;" in page and "<b>Alice" not in page
    assert "Waiting for <strong>Bob</strong>: a bid for round 1," in page
    # Alice's bid is sealed: the history holds the seed's fingerprint and
    # the prize alone.
    assert page.count("<pre>") == 2
    assert "its SHA-256 fingerprint is " in page
    for text in (page, index):
        assert "@club.test" not in text
    assert f'<a href="{tag}.html">{tag}</a>' in index

    club.send(BOB, "bid 2")
    club.poll()
    page = (tmp_path / "club" / "pages" / f"{tag}.html").read_text()
    # The bids are revealed with the round's result (PS-12).
    assert ("Round 1, prize 5: &lt;b&gt;Alice&lt;/b&gt; 6, Bob 2; "
            "&lt;b&gt;Alice&lt;/b&gt; takes 2 5 6 (13).") in page
    club.referee.close()


def test_pages_can_be_written_to_any_folder_on_demand(tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club")
    assert write_pages(club.referee, tmp_path / "www") == 0
    assert "No games yet." in (tmp_path / "www" / "index.html").read_text()
    club.referee.close()


def test_a_pass_writes_the_pages_of_the_games_that_changed_and_no_other(
        tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    pages = tmp_path / "club" / "pages"
    moved, still = (club.referee.operator.create_game(
        "goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
        options={"prize_order": "ascending"}, now=club.now, seed=f"s{i}") for i in range(2))
    club.poll()  # the first pass writes every page
    assert "Round 1: the prize is 1." in (pages / f"{still}.html").read_text()
    assert f'<a href="{still}.html">{still}</a>' in (pages / "index.html").read_text()

    def mark() -> None:
        for page in pages.iterdir():
            page.write_text("as it was")

    # Nothing changed: nothing is written.
    mark()
    club.poll()
    assert {p.read_text() for p in pages.iterdir()} == {"as it was"}
    # A mail refused changes nothing either.
    club.send(ALICE, "bid 99", subject=f"[{moved}] bid")
    club.poll()
    assert {p.read_text() for p in pages.iterdir()} == {"as it was"}
    # A move: that game's page, and the index only if its line changed (no).
    club.send(ALICE, "bid 6", subject=f"[{moved}] bid")
    club.poll()
    waiting = "Waiting for <strong>Bob</strong>: a bid for round"
    assert waiting in (pages / f"{moved}.html").read_text()
    assert (pages / f"{still}.html").read_text() == "as it was"
    assert (pages / "index.html").read_text() == "as it was"
    # The operator moves a deadline: the page shows the new one.
    mark()
    club.referee.operator.extend_deadlines(still, timedelta(days=2), now=club.now)
    club.poll()
    due = club.referee.reading.status(still)[0]["deadlines"][0]["due_at"].rstrip("Z")
    assert f"by {format_when(due)}" in (pages / f"{still}.html").read_text()
    assert (pages / f"{moved}.html").read_text() == "as it was"
    # A game cancelled: its page, and its line of the index.
    mark()
    club.referee.operator.cancel_game(moved, "a test", now=club.now)
    club.poll()
    assert "<strong>The game was cancelled.</strong>" in (pages / f"{moved}.html").read_text()
    assert (pages / f"{still}.html").read_text() == "as it was"
    index = (pages / "index.html").read_text()
    assert f'<a href="{moved}.html">{moved}</a></td><td>cancelled' in index
    assert f'<a href="{still}.html">{still}</a></td><td>active' in index
    # The folder emptied: the next pass writes every page again.
    for page in pages.iterdir():
        page.unlink()
    club.poll()
    assert sorted(p.name for p in pages.iterdir()) == sorted(
        [f"{moved}.html", f"{still}.html", "index.html",
         f"{moved}.atom", f"{still}.atom", "index.atom"])
    club.referee.close()


def test_pages_written_a_few_games_at_a_time_are_the_pages_written_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club")
    tags = [club.referee.operator.create_game(
        "goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
        options={"prize_order": "ascending"}, now=club.now, seed=f"s{i}") for i in range(5)]
    for tag, (a, b) in zip(tags, [(1, 2), (3, 3), (4, 1), (2, 5), (6, 6)], strict=True):
        club.send(ALICE, f"bid {a}", subject=f"[{tag}] bid")
        club.send(BOB, f"bid {b}", subject=f"[{tag}] bid")
    club.poll()
    assert write_pages(club.referee, tmp_path / "once") == 5
    for size in (1, 2, 4, 5):
        monkeypatch.setattr(web, "BATCH", size)
        assert write_pages(club.referee, tmp_path / f"by{size}") == 5
        for page in (tmp_path / "once").iterdir():
            assert page.read_text() == (tmp_path / f"by{size}" / page.name).read_text(), (
                size, page.name)
    # Each page holds its own game's history and no other's.
    page = (tmp_path / "once" / f"{tags[2]}.html").read_text()
    assert "Alice 4, Bob 1" in page and "Alice 1, Bob 2" not in page
    club.referee.close()


def test_a_change_while_a_page_is_written_leaves_the_page_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club")
    www = tmp_path / "www"
    tag = club.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                   now=club.now, seed="s")
    assert web.publish(club.referee, www) == 1
    club.referee.operator.extend_deadlines(tag, timedelta(days=1), now=club.now)
    read = club.referee.reading.status_of

    def racing(ids: list[int]) -> Iterator[dict[str, Any]]:
        games = list(read(ids))  # the game as it was read for its page
        club.referee.operator.extend_deadlines(tag, timedelta(days=1), now=club.now)
        return iter(games)

    monkeypatch.setattr(club.referee.reading, "status_of", racing)
    assert web.publish(club.referee, www) == 1
    monkeypatch.undo()
    # The page shows the first extension, not the second: still behind.
    assert [b.tag for b in club.referee.pages.behind()] == [tag]
    assert web.publish(club.referee, www) == 1
    due = club.referee.reading.status(tag)[0]["deadlines"][0]["due_at"].rstrip("Z")
    assert f"by {format_when(due)}" in (www / f"{tag}.html").read_text()
    assert club.referee.pages.behind() == []
    club.referee.close()


def test_no_page_of_a_game_in_play_shows_its_seed_only_its_fingerprint(
        tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    seed = "a-secret-seed-of-goofspiel"
    tag = club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed=seed)
    club.send(ALICE, "bid 6")
    club.poll()
    pages = [p.read_text() for p in (tmp_path / "club" / "pages").iterdir()]
    assert len(pages) == 4 and not any(seed in text for text in pages)  # 2 pages, 2 feeds
    fingerprint = hashlib.sha256(f"seed: {seed}\n".encode()).hexdigest()
    assert fingerprint in (tmp_path / "club" / "pages" / f"{tag}.html").read_text()
    club.referee.close()


def test_the_page_of_a_game_over_tells_its_seed_as_its_last_mail_does(tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    seed = "a-seed-told-at-the-end"
    tag = club.referee.operator.create_game("goofspiel", [ALICE], bots=1, now=club.now,
                                            seed=seed)
    for _ in range(6):  # Alice stays silent: the referee bids for her
        club.poll(club.now + timedelta(days=4))
    page = (tmp_path / "club" / "pages" / f"{tag}.html").read_text()
    assert club.referee.reading.status(tag)[0]["status"] == "finished"
    assert f"<p class=\"hash\">seed: {seed}</p>" in page
    assert f"printf 'seed: %s\\n' '{seed}' | sha256sum" in page
    club.referee.close()


def test_pages_say_when_they_were_written_and_link_their_feeds(tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club")
    tag = club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="s")
    write_pages(club.referee, tmp_path / "www", now=datetime(2026, 3, 4, 9, 30))
    page = (tmp_path / "www" / f"{tag}.html").read_text()
    index = (tmp_path / "www" / "index.html").read_text()
    for text in (page, index):
        assert "As of Wed 04 Mar 2026 09:30 UTC." in text
    assert (f'<link rel="alternate" type="application/atom+xml" title="{tag}: Goofspiel" '
            f'href="{tag}.atom">') in page
    assert 'type="application/atom+xml" title="Games of Club Referee" href="index.atom">' in index
    club.referee.close()


#: What XML 1.0 forbids in a text, as a name or a reason may hold it.
FORBIDDEN = "\ufffe\uffff\x01\x0b\x1f"


def _well_formed(path: Path) -> ET.Element:
    """``path`` parsed by an XML parser (expat), which refuses a feed
    holding a character XML forbids, as feed readers do."""
    return ET.fromstring(path.read_bytes())


def test_no_character_xml_forbids_reaches_a_feed_or_a_page(tmp_path: Path) -> None:
    """A name with U+FFFE made index.atom and the game's feed ill-formed
    XML: a feed reader dropped them whole."""
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    pages = tmp_path / "club" / "pages"
    tag = club.referee.operator.create_game("goofspiel", [f"Alice <{ALICE}>", f"Bob <{BOB}>"],
                                            now=club.now, seed="s")
    with club.referee.sessions.begin() as db:  # a name stored before names were cleaned
        seat = db.scalars(select(m.Seat).where(m.Seat.name == "Alice")).one()
        seat.name = f"Al{FORBIDDEN}ice"
    club.referee.operator.cancel_game(tag, f"Bob{FORBIDDEN} left", now=club.now)
    club.poll()
    index = _well_formed(pages / "index.atom")
    (line,) = index.iter(f"{{{ATOM}}}content")
    assert "Al\ufffd\ufffd\ufffd\ufffd\ufffdice" in (line.text or "")
    game = _well_formed(pages / f"{tag}.atom")
    texts = [e.text or "" for e in game.iter(f"{{{ATOM}}}content")]
    assert any("Bob\ufffd\ufffd\ufffd\ufffd\ufffd left" in t for t in texts)
    for page in pages.iterdir():
        text = page.read_text(encoding="utf-8")
        assert not any(c in text for c in FORBIDDEN), page.name
    club.referee.close()


def test_every_character_xml_forbids_is_replaced_and_no_other() -> None:
    forbidden = ["\x00", "\x08", "\ud800", "\udfff", "\ufffe", "\uffff"]
    assert xml_text("a".join(forbidden)) == "a".join("\ufffd" * len(forbidden))
    kept = "\t\n\r Ann \u00e9 \u2028 \ud7ff \ue000 \ufffd \U00010000 \U0010ffff \x7f \x85"
    assert xml_text(kept) == kept


class Killed(BaseException):
    """A pass killed where it stood."""


@pytest.mark.parametrize("where", ["index", "books"])
def test_a_pass_killed_while_publishing_leaves_no_game_out_of_the_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A pass killed between booking the pages and writing the index left
    a new game out of the index for good: its page was booked as listed."""
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    pages = tmp_path / "club" / "pages"
    first = club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="a")
    club.poll()
    new = club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="b")

    def killed(*args: Any, **kwargs: Any) -> None:
        raise Killed

    if where == "index":
        monkeypatch.setattr(web, "_write_index", killed)
    else:
        monkeypatch.setattr(club.referee.pages, "written", killed)
    with pytest.raises(Killed):
        club.poll()
    monkeypatch.undo()
    club.poll()
    for tag in (first, new):
        assert f'<a href="{tag}.html">{tag}</a>' in (pages / "index.html").read_text()
    entries = [e.text for e in _well_formed(pages / "index.atom").iter(f"{{{ATOM}}}title")]
    assert sum(new in (t or "") for t in entries) == 1
    assert club.referee.pages.behind() == []
    club.referee.close()


def test_no_temporary_file_outlives_the_pass_that_left_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass killed mid-write leaves its temporary file; the next pass
    takes it away, though it has no page to write."""
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    pages = tmp_path / "club" / "pages"
    club.referee.operator.create_game("goofspiel", [ALICE, BOB], now=club.now, seed="a")
    club.poll()
    left = pages / ".index.html.k7vyh2tv.tmp"
    left.write_text("half a page")
    monkeypatch.setattr(web, "_swept", set())  # the next pass: a process of its own
    club.poll()
    assert club.referee.pages.behind() == []
    assert not left.exists()
    assert sorted(p.name for p in pages.iterdir() if p.name.endswith(".tmp")) == []
    club.referee.close()


def test_the_index_lists_the_open_tables_as_they_change(tmp_path: Path) -> None:
    """An open table on the index and in its feed (kind, who sits, seats
    left, who opened it, when it closes), escaped, with no invitation's
    secret; each change to it writes the index again, and its start takes
    it off."""
    from referee.service.club.words import NewTable

    club = Club(tmp_path, web={"path": "pages"})
    pages = tmp_path / "pages"
    club.referee.operator.create_game(
        "goofspiel", [f'"<b>Alice</b>" <{ALICE}>', f"Bob <{BOB}>"], now=club.now, seed="s")
    club.poll()
    index = (pages / "index.html").read_text()
    assert "Open tables" not in index and 'name="open-tables"' not in index
    with club.referee.sessions.begin() as db:
        opened = club.referee.tables.open(db, ALICE, NewTable("goofspiel", {"cards": "5"},
                                                              ("Bob",)), club.now)
    (token,) = (i.token for i in opened.invitations)
    club.poll()  # no game changed: the table alone makes the index due
    index, feed = (pages / "index.html").read_text(), (pages / "index.atom").read_text()
    tag = opened.table
    closes = format_when(club.now + timedelta(days=14))
    assert (f"<tr><td>{tag}<br>Goofspiel</td><td>&lt;b&gt;Alice&lt;/b&gt;<br>opened by "
            f"&lt;b&gt;Alice&lt;/b&gt;</td>\n<td>0<br>closes {closes}</td></tr>") in index
    assert "<b>Alice" not in index and token not in index and token not in feed
    entries = ET.fromstring(feed).findall(f"{{{ATOM}}}entry")
    assert f"{tag} (goofspiel): <b>Alice</b> seeks players, no seat left" in [
        e.findtext(f"{{{ATOM}}}title") for e in entries]
    assert ALICE not in index and ALICE not in feed and BOB not in feed
    # Bob declines: his seat is free, and the index says so.
    with club.referee.sessions.begin() as db:
        club.referee.tables.decline(db, BOB, tag, club.now)
    club.poll()
    assert (f"&lt;b&gt;Alice&lt;/b&gt;</td>\n<td>1<br>closes {closes}</td></tr>"
            in (pages / "index.html").read_text())
    # Nothing changed: the index is not written again.
    written = (pages / "index.html").stat().st_mtime_ns
    club.poll()
    assert (pages / "index.html").stat().st_mtime_ns == written
    # Bob joins after all: the game starts, and the table leaves the index.
    with club.referee.sessions.begin() as db:
        started = club.referee.tables.join(db, BOB, tag, club.now)
    club.poll()
    index = (pages / "index.html").read_text()
    assert "Open tables" not in index and tag not in index
    assert f'<a href="{started.game}.html">{started.game}</a>' in index


def test_the_index_shows_the_standings_and_a_player_who_hides_leaves_them(
        tmp_path: Path) -> None:
    """The club's standings on the index and in its feed; a player's
    ``standings hide`` (no game changed) writes the index again without
    them, in the page and the feed."""
    from referee.service.play import results

    club = Club(tmp_path, web={"path": "pages"}, club={"standings": True})
    pages = tmp_path / "pages"
    tag = club.referee.operator.create_game(
        "goofspiel", [f'"<b>Alice</b>" <{ALICE}>', f"Bob <{BOB}>"], now=club.now, seed="s")
    club.poll()
    for player in (ALICE, BOB):
        club.referee.operator.resign_player(tag, player, now=club.now)
    club.poll()
    index, feed = (pages / "index.html").read_text(), (pages / "index.atom").read_text()
    assert '<h2 id="standings">Standings</h2>' in index and "<h3>Goofspiel, all time</h3>" in index
    assert "&lt;b&gt;Alice&lt;/b&gt;" in index and "<b>Alice" not in index
    assert "Standings: Goofspiel, all time" in feed and ALICE not in index + feed
    with club.referee.sessions.begin() as db:
        bob = db.scalar(select(m.Player).where(m.Player.address == BOB))
        assert bob is not None
        results.set_hidden(db, bob, True)
    club.poll()
    index, feed = (pages / "index.html").read_text(), (pages / "index.atom").read_text()
    assert "<td>Bob</td>" not in index and "Bob" not in feed.split("Standings:")[1]
    assert "&lt;b&gt;Alice&lt;/b&gt;" in index
