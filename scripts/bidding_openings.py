#!/usr/bin/env python3
"""Write referee/games/bidding/openings.py: the sensible bidding bot's worth
of each card in the first round of a two-player game of six cards, worked
out once here rather than in every process that bids (1.5-3 s of CPU).

    PYTHONPATH=. python scripts/bidding_openings.py

tests/games/test_bidding_openings.py checks that the shipped table is what
the bot works out.
"""

from __future__ import annotations

from pathlib import Path

HEAD = '''"""The sensible bidding bot's worth of each card (1 to six) in the first
round of a two-player game of six cards, by (take_bids, carries, prize):
what :func:`referee.games.bidding.bot.opening_chances` works out. Written by
scripts/bidding_openings.py; do not edit.
"""

OPENINGS: dict[tuple[bool, bool, int], tuple[float, ...]] = {
'''


def render(table: dict[tuple[bool, bool, int], tuple[float, ...]]) -> str:
    lines = []
    for key, values in sorted(table.items()):
        lines.append(f"    {key!r}: (")
        lines += [f"        {', '.join(repr(v) for v in values[i:i + 3])},"
                  for i in range(0, len(values), 3)]
        lines.append("    ),")
    return HEAD + "\n".join(lines) + "\n}\n"


def main() -> None:
    from referee.games.bidding import bot

    out = Path(__file__).resolve().parents[1] / "referee/games/bidding/openings.py"
    out.write_text(render(bot.all_openings()))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
