"""Lanes: how a chunk of outbox rows is shared over several SMTP connections.

Rows that share a recipient fall into one lane, in queue order, and a lane
never leaves its connection, which sends its rows one after another: a
player never gets two mails out of order. Lanes are dealt to connections
biggest first, each to the connection with the fewest rows so far. Pure
functions over row positions; the outbox (``outbox.py``) does the sending.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

#: An extra connection is opened only for this many rows of a chunk.
ROWS_PER_CONNECTION = 8


def lanes(recipients: Sequence[Iterable[str]]) -> list[list[int]]:
    """The positions of the rows, grouped so that any two rows sharing a
    recipient (directly, or through other rows) are in one lane; each lane
    in queue order, the lanes in the order of their first row."""
    parent = list(range(len(recipients)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}  # recipient -> the first row to them
    for i, to in enumerate(recipients):
        for address in to:
            j = first.setdefault(address.lower(), i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    grouped: dict[int, list[int]] = {}
    for i in range(len(recipients)):
        grouped.setdefault(root(i), []).append(i)
    return list(grouped.values())


def connections_for(rows: int, lanes: int, most: int) -> int:
    """How many connections a chunk of ``rows`` rows in ``lanes`` lanes
    uses: at most ``most``, one per lane, one per
    :data:`ROWS_PER_CONNECTION` rows begun, and one at least."""
    return max(1, min(most, lanes, -(-rows // ROWS_PER_CONNECTION)))


def deal(lanes: Sequence[Sequence[int]], connections: int) -> list[list[int]]:
    """The rows each connection sends, in queue order: lanes dealt biggest
    first to the connection with the fewest rows yet (the first of them on
    a tie). Connections left without rows are left out."""
    load = [(0, c) for c in range(max(connections, 1))]
    heapq.heapify(load)
    rows: list[list[int]] = [[] for _ in load]
    for lane in sorted(lanes, key=lambda lane: (-len(lane), lane[0] if lane else 0)):
        n, c = heapq.heappop(load)
        rows[c].extend(lane)
        heapq.heappush(load, (n + len(lane), c))
    return [sorted(r) for r in rows if r]
