"""The game pages: public state and history as static HTML (rule text 000, 6)."""

from __future__ import annotations

from pathlib import Path

from referee.web import write_pages
from tests.test_referee import ALICE, BOB, Club


def test_a_page_shows_the_public_history_but_no_sealed_bid_and_no_address(
        tmp_path: Path) -> None:
    (tmp_path / "club").mkdir()
    club = Club(tmp_path / "club", web={"path": "pages"})
    tag = club.referee.create_game(
        "goofspiel", [f'"<b>Alice</b>" <{ALICE}>', f"Bob <{BOB}>"],
        options={"prize_order": "5,1,6,4,3,2"}, now=club.now, seed="s")
    club.send(ALICE, "bid 6")
    club.poll()  # [web] path set: the pass writes the pages
    page = (tmp_path / "club" / "pages" / f"{tag}.html").read_text()
    index = (tmp_path / "club" / "pages" / "index.html").read_text()
    assert "Round 1: the prize is 5." in page
    assert "&lt;b&gt;Alice&lt;/b&gt;" in page and "<b>Alice" not in page
    assert "waiting for</th><td>Bob: your bid" in page
    # Alice's bid is sealed: the history holds the prize alone.
    assert page.count("<pre>") == 1
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
