"""The game pages: public state and history as static HTML (rule text 000, 6)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from referee import web
from referee.mail.compose import format_when
from referee.web import write_pages
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
