"""The game pages in a real browser: Debian's Chromium (installed by
``.ci/browser/install.sh``), driven by Playwright, over the pages of a
finished and a running game of every kind. Each page loads with no error,
fits a 390 px phone and a 1280 px desktop without scrolling sideways,
links only to what exists, names a feed that is Atom (RFC 4287), and holds
no secret of any seat. A screenshot of each kind at both widths is saved
in ``build/screenshots`` (out of the repository) to look at.

Skipped only when Chromium or Playwright is missing, and then not under
CI or ``REFEREE_REQUIRE_MAILSTACK`` (as the mail stack's tests), where it
must run.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from xml.etree import ElementTree as ET

import pytest
from sqlalchemy import select

from referee.games.loatcg.rules import cards_text
from referee.store import models as m
from tests.mailstack import REQUIRE_ENV
from tests.test_referee import Club
from tests.web_games import KINDS, play_games

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
WIDTHS = (390, 1280)
ATOM = "{http://www.w3.org/2005/Atom}"


def _unavailable(why: str) -> None:
    if any(os.environ.get(name) for name in REQUIRE_ENV):
        pytest.fail(f"{why}; run .ci/browser/install.sh as root (the suite requires it here)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Club, dict[str, Any], Path]]:
    """The pages of a club with a finished and a running game of each kind."""
    root = tmp_path_factory.mktemp("site")
    club, made = play_games(root)
    yield club, made, root / "pages"
    club.referee.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


def _pages(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.html"))


def test_every_page_loads_clean_and_fits_a_phone_and_a_desktop(
        site: tuple[Club, dict[str, Any], Path], browser: Any) -> None:
    _, made, folder = site
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = {running: kind for kind, (_, running) in made.items()}
    shot.update({finished: f"{kind}-over" for kind, (finished, _) in made.items()})
    shot["index"] = "index"  # with an open table
    errors: list[str] = []
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        for path in _pages(folder):
            page.goto(path.as_uri())
            assert errors == [], (path.name, width)
            scroll, client = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert scroll <= client, f"{path.name} scrolls sideways at {width} px"
            assert page.evaluate("document.documentElement.lang") == "en"
            levels = [int(h[1]) for h in page.eval_on_selector_all(
                "h1, h2, h3, h4", "hs => hs.map(h => h.tagName)")]
            assert levels[0] == 1 and all(b - a <= 1 for a, b in itertools.pairwise(levels)), (
                path.name, levels)
            if path.stem in shot:
                page.screenshot(path=str(SCREENSHOTS / f"{shot[path.stem]}-{width}.png"),
                                full_page=True)
        page.close()
    assert len(list(SCREENSHOTS.glob("*.png"))) >= 2 * len(WIDTHS) * len(KINDS)


#: Each element with text of its own, its text colour against the background
#: it is drawn on (the first ancestor's that is not transparent, alpha
#: blended), as WCAG 2's contrast ratio; large text (24 px, or 18.66 px bold)
#: needs 3:1, the rest 4.5:1 (success criterion 1.4.3).
CONTRAST = """() => {
  const rgba = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const over = (top, under) => {
    const a = top.length > 3 ? top[3] : 1;
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a));
  };
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c.length > 3 && c[3] === 0) continue;
      layers.push(c);
      if (c.length === 3 || c[3] === 1) break;
    }
    return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255]);
  };
  const found = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("svg")) continue;  // the chart: its text also stands in a table
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const style = getComputedStyle(el);
    if (!own || style.visibility === "hidden" || el.getClientRects().length === 0) continue;
    const bg = background(el);
    const fg = over(rgba(style.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < needed) found.push(`${el.tagName} "${el.textContent.trim().slice(0, 30)}" ` +
                                   `${ratio.toFixed(2)}:1 (needs ${needed}:1)`);
  }
  return found;
}"""


def test_the_index_shows_the_standings_of_the_season_and_of_all_time(
        site: tuple[Club, dict[str, Any], Path], browser: Any) -> None:
    _, _, folder = site
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.goto((folder / "index.html").as_uri())
    assert page.inner_text("h2#standings") == "Standings"
    titles = page.eval_on_selector_all("h2#standings ~ h3", "hs => hs.map(h => h.innerText)")
    assert titles == ["Goofspiel, season 2026-Q2", "Goofspiel, all time"]
    rows = page.eval_on_selector_all(
        "table.standings", "ts => ts.map(t => [...t.rows].slice(1).map("
        "r => [...r.cells].map(c => c.innerText)))")
    assert len(rows) == 2 and rows[0] == rows[1]
    # Bob played both games; Carol's name is shown as text, not markup.
    names = [r[1] for r in rows[0]]
    assert sorted(names) == ["<i>Carol</i>", "Alice", "Bob"]
    assert [int(r[0]) for r in rows[0]] == [1, 2, 3]
    assert {r[1]: int(r[3]) for r in rows[0]}["Bob"] == 2
    page.screenshot(path=str(SCREENSHOTS / "index-standings-390.png"), full_page=True)
    page.close()
    entries = [e.findtext(f"{ATOM}title") for e in
               ET.parse(folder / "index.atom").getroot().iter(f"{ATOM}entry")]
    assert "Standings: Goofspiel, season 2026-Q2" in entries
    assert "Standings: Goofspiel, all time" in entries


def test_every_text_has_enough_contrast(site: tuple[Club, dict[str, Any], Path],
                                        browser: Any) -> None:
    _, _, folder = site
    page = browser.new_page(viewport={"width": 390, "height": 900})
    low = {}
    for path in _pages(folder):
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        if found := page.evaluate(CONTRAST):
            low[path.name] = found[:5]
    page.close()
    assert low == {}


def test_whose_move_and_by_when_come_first(site: tuple[Club, dict[str, Any], Path],
                                           browser: Any) -> None:
    club, made, folder = site
    page = browser.new_page(viewport={"width": 390, "height": 900})
    for kind, (finished, running) in made.items():
        status = club.referee.reading.status(running)[0]
        page.goto((folder / f"{running}.html").as_uri())
        first = page.locator("main, body > section, body > div, body > table").first
        assert first.get_attribute("class") == "now", kind
        shown = first.inner_text()
        owed = [d for d in status["deadlines"] if not _is_bot(status, d["seat"])]
        assert owed, kind
        for d in owed:
            assert d["name"] in shown and d["what"] in shown, (kind, shown)
        page.goto((folder / f"{finished}.html").as_uri())
        result = club.referee.reading.status(finished)[0]["result"]
        assert result in page.locator("section.now").inner_text(), kind
    page.close()


def _is_bot(status: dict[str, Any], seat: int) -> bool:
    return any(p["seat"] == seat and p["bot"] for p in status["players"])


def test_every_link_resolves_within_the_site(site: tuple[Club, dict[str, Any], Path],
                                             browser: Any) -> None:
    _, _, folder = site
    page = browser.new_page()
    for path in _pages(folder):
        page.goto(path.as_uri())
        hrefs = page.eval_on_selector_all("a[href], link[href]",
                                          "es => es.map(e => e.getAttribute('href'))")
        assert hrefs, path.name
        for href in hrefs:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, (path.name, href)
            if parts.path:
                assert (folder / parts.path).is_file(), (path.name, href)
            if parts.fragment:
                target = folder / parts.path if parts.path else path
                assert f'id="{parts.fragment}"' in target.read_text(encoding="utf-8"), href
    page.close()


def test_each_page_names_its_feed_and_every_feed_is_atom(
        site: tuple[Club, dict[str, Any], Path], browser: Any) -> None:
    _, _, folder = site
    page = browser.new_page()
    feeds = []
    for path in _pages(folder):
        page.goto(path.as_uri())
        feed = page.get_attribute('link[rel="alternate"][type="application/atom+xml"]', "href")
        assert feed == f"{path.stem}.atom", path.name
        feeds.append(folder / feed)
    page.close()
    ids: set[str] = set()
    for feed in feeds:
        _check_atom(feed, ids)


def _check_atom(path: Path, ids: set[str]) -> None:
    """RFC 4287's musts: a feed has one id, title and updated, an author
    (or every entry has one), and should name itself (rel="self"); each
    entry has one id, title and updated, and content or an alternate link;
    ids are IRIs, here tag: (RFC 4151) or urn:, each unique; dates RFC 3339."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{ATOM}feed", path.name

    def one(element: ET.Element, name: str) -> str:
        found = element.findall(f"{ATOM}{name}")
        assert len(found) == 1 and (found[0].text or "").strip(), (path.name, name)
        return found[0].text or ""

    def stamp(text: str) -> None:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", text), text
        datetime.fromisoformat(text.replace("Z", "+00:00"))

    def iri(text: str) -> None:
        assert re.match(r"(tag:[^,]+,\d{4}(-\d\d){0,2}:|urn:)", text), text
        assert text not in ids, f"{text} is not unique"
        ids.add(text)

    iri(one(root, "id"))
    one(root, "title")
    stamp(one(root, "updated"))
    selves = [link for link in root.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert [link.get("href") for link in selves] == [path.name]
    author = root.find(f"{ATOM}author")
    entries = root.findall(f"{ATOM}entry")
    assert entries, path.name
    for entry in entries:
        iri(one(entry, "id"))
        one(entry, "title")
        stamp(one(entry, "updated"))
        assert author is not None or entry.find(f"{ATOM}author") is not None
        content = entry.find(f"{ATOM}content")
        alternate = [link for link in entry.findall(f"{ATOM}link")
                     if link.get("rel", "alternate") == "alternate"]
        assert content is not None or alternate, path.name
    if author is not None:
        one(author, "name")


def test_no_page_holds_a_secret_of_any_seat(site: tuple[Club, dict[str, Any], Path],
                                            browser: Any) -> None:
    club, made, folder = site
    page = browser.new_page()
    with club.referee.sessions() as db:
        hidden = {tag: [e.text for e in db.scalars(
            select(m.Event).join(m.Game).where(m.Game.tag == tag, m.Event.public.is_(False)))]
            for _, tag in made.values()}
        tokens = [t for t in db.scalars(select(m.Seat.token)) if t]
        tokens += [t for t in db.scalars(select(m.Player.token)) if t]
        invitations = [t for t in db.scalars(select(m.TableSeat.token)) if t]
    # The index lists the open table (Carol's markup escaped), and no
    # invitation's secret, in the page or in its feed.
    assert invitations
    page.goto((folder / "index.html").as_uri())
    html = page.content()
    assert page.locator("h2#tables + p + table td:has-text('<i>Carol</i>')").count() == 1
    assert "<i>Carol" not in html and "@club.test" not in html
    for text in (html, (folder / "index.atom").read_text()):
        assert not [t for t in invitations + tokens if t in text]
    for kind, (_, tag) in made.items():
        state = club.referee.reading.stored_state(tag)
        page.goto((folder / f"{tag}.html").as_uri())
        html = page.content()
        shown_cards = set(page.eval_on_selector_all(
            "[data-card]", "es => es.map(e => e.dataset.card)"))
        assert "@club.test" not in html and not [t for t in tokens if t in html], kind
        assert hidden[tag] and not [text for text in hidden[tag] if text in html], kind
        if kind in ("goofspiel", "pure-skill"):
            assert state["bids"], kind  # a bid is sealed now
            for seat in state["bids"]:
                # The sealed card is still in the pack shown: nothing tells it.
                pack = page.locator(f'tr[data-seat="{seat}"] .pack .card').count()
                assert pack == len(state["packs"][int(seat) - 1]), (kind, seat)
            played = page.locator("h2:has-text('Rounds played') + table tr").count() - 1
            assert played == state["round"] - 1, kind
        if kind == "spades":
            held = {c for hand in state["hands"] for c in hand}
            assert held and not held & shown_cards, kind
            assert not [salt for salt in state["hand_salts"] if salt in html]
        if kind == "miser":
            face_down = [c for side in (state["attack"] or {}).get("cards", []) for c in side]
            held = {c for hand in state["hands"] for c in hand} | set(face_down)
            public = {b["card"] for b in (state["auction"] or {}).get("bids", [])}
            assert held and not (held - public) & shown_cards, kind
        if kind == "loatcg":
            assert not state["frozen"] and state["salt"] not in html
            unreported = [line.split(". ", 1)[1] for line in state["instructions"].splitlines()
                          if re.match(r"\d+\. ", line)]
            shown = {r["text"] for r in state["reports"]}
            assert not [i for i in unreported if i not in shown and i in html]
            for member in state["members"]:
                assert f"{cards_text(member['hand'])}" not in html, member["name"]
    page.close()
