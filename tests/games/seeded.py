"""Draws for tests that are no referee's: one generator, in the order asked."""

from __future__ import annotations

import random

from referee.games.draws import SequentialDraws


def seeded(seed: int | str | None = None) -> SequentialDraws:
    """Every draw from one :class:`random.Random` seeded with ``seed`` (None: at random)."""
    return SequentialDraws(random.Random(seed))
