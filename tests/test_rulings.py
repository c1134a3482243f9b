"""The rulings the code cites are the rulings docs/rulings.md writes up.

A ruling id is one of the five prefixes (G2, PS, SP, TCG, MI), a hyphen
and a number. A ruling is written up on the page under a heading of its
own, ``### <id>``, and only once. Every id cited anywhere in referee/,
tests/, templates/, docs/ or the README must have its heading there, so a
citation never points at a ruling nobody can read.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "rulings.md"
#: Where rulings are cited: the code, the tests, the mail templates, the docs.
CITING = ("referee", "tests", "templates", "docs", "README.md")
RULING_ID = re.compile(r"\b(?:G2|PS|SP|TCG|MI)-[0-9]+\b")
HEADING = re.compile(r"^###[ \t]+(.+?)[ \t]*$", re.MULTILINE)


def _texts() -> list[tuple[Path, str]]:
    """Every text file under CITING but the rulings page itself."""
    out = []
    for name in CITING:
        top = ROOT / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path == PAGE:
                continue
            data = path.read_bytes()
            if b"\0" in data:
                continue  # not text
            out.append((path, data.decode("utf-8", errors="replace")))
    return out


def cited() -> dict[str, list[str]]:
    """Each ruling id cited outside the page -> the files that cite it."""
    where: dict[str, list[str]] = {}
    for path, text in _texts():
        for ruling in sorted(set(RULING_ID.findall(text))):
            where.setdefault(ruling, []).append(str(path.relative_to(ROOT)))
    return where


def headings() -> list[str]:
    """The ``###`` headings of the page, in order."""
    return HEADING.findall(PAGE.read_text(encoding="utf-8"))


def test_every_cited_ruling_is_written_up() -> None:
    where = cited()
    assert where, "no ruling id found in the code: is RULING_ID still right?"
    written = set(headings())
    missing = {r: files for r, files in where.items() if r not in written}
    assert not missing, "ruling ids cited but not written up in docs/rulings.md: " + "; ".join(
        f"{r} (in {', '.join(files)})" for r, files in sorted(missing.items())
    )


def test_no_ruling_is_written_up_twice() -> None:
    twice = sorted(r for r, n in Counter(headings()).items() if n > 1)
    assert not twice, f"written up more than once in docs/rulings.md: {', '.join(twice)}"


def test_each_write_up_is_headed_by_its_id_alone() -> None:
    """A ``###`` heading is a ruling's id and nothing else, so its anchor is
    the id (``#sp-14``) and the tests above read the page right."""
    bad = [h for h in headings() if not RULING_ID.fullmatch(h)]
    assert not bad, f"### headings that are not a ruling id: {bad}"


#: A path to the rule texts or the rulings as handed to the project: neither
#: is in a clone, so code and tests cite a rule text by title and rule
#: number and a ruling by id.
OUTSIDE = re.compile(r"seeds/[0-9]{3}|RULINGS\.md|\.\./shared/")


def test_nothing_cites_a_file_outside_the_repository() -> None:
    found = [f"{path.relative_to(ROOT)}: {match.group()}" for path, text in _texts()
             if path != Path(__file__) for match in OUTSIDE.finditer(text)]
    assert not found, "cite the rule text by title and number, the ruling by id: " + \
        "; ".join(found)
