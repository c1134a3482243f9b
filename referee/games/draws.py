"""Every chance decision of a game, keyed by what it is for.

An engine asks ``draws.rng(purpose, *key)`` for each decision (the prize of
round 5: ``rng("prize", 5)``), and gets a generator seeded by the game's
secret seed, the purpose and the key alone. Nothing else goes in: not the
actions taken so far, not what any seat holds in secret. So once the seed
is public, anyone can draw every public draw again from the seed and the
public record, by hand or in any language, following
:class:`Stream`'s description (also in docs/engines.md, "Randomness").

Games begun before keyed draws used one generator per logged action
(:func:`rng_for`, the ``counter`` scheme); :class:`SequentialDraws` gives
them the very same sequence, so they replay exactly.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, MutableSequence, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

#: The draw schemes a stored game may use (``games.draws`` in the database).
#: ``counter``: one :class:`random.Random` per action, seeded from the seed
#: and the action's number (:func:`rng_for`); ``keyed``: :class:`KeyedDraws`;
#: ``mixed``: :class:`KeyedDraws` of the seed mixed with the players' own
#: entropy (:func:`mixed_seed`), for a game started from a table by mail.
COUNTER, KEYED, MIXED = "counter", "keyed", "mixed"
SCHEMES = (COUNTER, KEYED, MIXED)

_WORD = 1 << 64


class Rng(Protocol):
    """What an engine draws with: the part of :class:`random.Random` it uses,
    which :class:`Stream` implements with its own, documented algorithms."""

    def random(self) -> float: ...

    def randint(self, a: int, b: int) -> int: ...

    def choice(self, seq: Sequence[T]) -> T: ...

    def shuffle(self, x: MutableSequence[Any]) -> None: ...

    def getrandbits(self, k: int) -> int: ...


class Draws(Protocol):
    """The game's source of chance, given to :meth:`Game.new`,
    :meth:`Game.apply`, :meth:`Game.timeout_action` and :meth:`Game.bot_action`."""

    def rng(self, purpose: str, *key: int | str) -> Rng:
        """The generator for the decision ``purpose`` at ``key`` (one word
        and whole numbers or words, none holding ``/``)."""
        ...


class Stream:
    """Uniform draws from one SHA-256 stream. The stream's bytes are the
    blocks ``SHA-256(NAME/0)``, ``SHA-256(NAME/1)``, ... one after another,
    where ``NAME`` is the stream's name and the block's number is written in
    decimal (UTF-8 text, hashed as it is: ``printf '%s' 'NAME/0' | sha256sum``).
    The bytes are read 8 at a time as unsigned big-endian numbers ("words"):

    * ``below(n)``: the next word ``w``, until one is less than
      ``2**64 - 2**64 % n``; then ``w % n``.
    * ``choice(seq)``: ``seq[below(len(seq))]``.
    * ``shuffle(x)``: Fisher–Yates from the end: for ``i`` from ``len(x) - 1``
      down to 1, swap ``x[i]`` and ``x[below(i + 1)]``.
    * ``randint(a, b)``: ``a + below(b - a + 1)``.
    * ``random()``: the next word shifted right by 11 bits, over ``2**53``.
    * ``getrandbits(k)``: the next ``ceil(k / 64)`` words as one big-endian
      number, shifted right to ``k`` bits.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._prefix = f"{name}/".encode()
        self._block = 0
        self._buffer = b""

    def _word(self) -> int:
        if not self._buffer:
            self._buffer = hashlib.sha256(self._prefix + str(self._block).encode()).digest()
            self._block += 1
        word, self._buffer = self._buffer[:8], self._buffer[8:]
        return int.from_bytes(word, "big")

    def below(self, n: int) -> int:
        """A whole number from 0 to ``n - 1``, each as likely."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        limit = _WORD - _WORD % n
        while (word := self._word()) >= limit:
            pass
        return word % n

    def choice(self, seq: Sequence[T]) -> T:
        if not seq:
            raise IndexError("cannot choose from an empty sequence")
        return seq[self.below(len(seq))]

    def shuffle(self, x: MutableSequence[Any]) -> None:
        for i in reversed(range(1, len(x))):
            j = self.below(i + 1)
            x[i], x[j] = x[j], x[i]

    def randint(self, a: int, b: int) -> int:
        return a + self.below(b - a + 1)

    def random(self) -> float:
        return float(self._word() >> 11) / (1 << 53)

    def getrandbits(self, k: int) -> int:
        words = -(-k // 64)
        value = 0
        for _ in range(words):
            value = value << 64 | self._word()
        return value >> (64 * words - k)


class KeyedDraws:
    """The ``keyed`` scheme: the decision ``purpose`` at ``key`` draws from
    the :class:`Stream` named ``SEED/PURPOSE/KEY1/KEY2/...`` (whole numbers
    in decimal), so the prize of round 5 of the game with seed ``abc`` is
    drawn from the stream ``abc/prize/5``."""

    def __init__(self, seed: str) -> None:
        self.seed = seed

    def name(self, purpose: str, *key: int | str) -> str:
        """The name of the stream of ``purpose`` at ``key``."""
        parts = [purpose, *(str(k) for k in key)]
        if any("/" in p or not p for p in parts):
            raise ValueError(f"a purpose and key hold no '/' and are never empty: {parts}")
        return "/".join([self.seed, *parts])

    def rng(self, purpose: str, *key: int | str) -> Stream:
        return Stream(self.name(purpose, *key))


class SequentialDraws:
    """Every decision draws from one generator, in the order the engine asks:
    the ``counter`` scheme of games begun before keyed draws (with
    ``rng_for(seed, step)``), and randomness that is no referee's draw (a
    demo's players, a test's)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def rng(self, purpose: str, *key: int | str) -> random.Random:
        return self._rng


def seed_fingerprint(seed: str) -> str:
    """The commitment to a game's seed that its opening publishes: SHA-256,
    in lower-case hex, of the UTF-8 text ``seed: SEED`` and a newline
    (``printf 'seed: %s\\n' SEED | sha256sum``)."""
    return hashlib.sha256(f"seed: {seed}\n".encode()).hexdigest()


def mixed_seed(seed: str, entropy: Iterable[tuple[int, str]]) -> str:
    """The seed every draw of a ``mixed`` game is keyed by: SHA-256, in
    lower-case hex, of the UTF-8 text ``seed: SEED`` and a newline, then one
    line ``entropy POSITION: VALUE`` and a newline for each player's
    contribution, by seat position from the lowest (a seat that gave none
    has no line). ``printf 'seed: %s\nentropy 1: %s\n' SEED VALUE | sha256sum``.
    A value is one line of printable text (:func:`valid_entropy`)."""
    text = f"seed: {seed}\n"
    for position, value in sorted(entropy, key=lambda pv: pv[0]):
        if not valid_entropy(value):
            raise ValueError(f"entropy of seat {position} is not one line of printable text")
        text += f"entropy {position}: {value}\n"
    return hashlib.sha256(text.encode()).hexdigest()


#: How a player's contribution came, as the opening and the record say it.
MESSAGE_ID, WORDS = "message-id", "words"
ENTROPY_HOW = {MESSAGE_ID: "the Message-ID of the mail that took the seat",
               WORDS: "words of their own"}
#: The longest contribution (in characters) a player may give.
ENTROPY_MAX = 200


def valid_entropy(value: str) -> bool:
    """Whether ``value`` may be a contribution: 1 to :data:`ENTROPY_MAX`
    printable characters, no line break, no space at either end."""
    return (0 < len(value) <= ENTROPY_MAX and value.isprintable() and value == value.strip())


def contributions(entropy: Sequence[Mapping[str, Any]] | None) -> list[tuple[int, str]]:
    """(position, value) of each contribution a game stores (``Game.entropy``)."""
    return [(int(c["position"]), str(c["value"])) for c in entropy or ()]


def draw_seed(scheme: str, seed: str, entropy: Sequence[Mapping[str, Any]] | None) -> str:
    """The seed a game's keyed draws are keyed by: the ``mixed`` game's
    :func:`mixed_seed`, any other's own seed."""
    return mixed_seed(seed, contributions(entropy)) if scheme == MIXED else seed


def rng_for(seed: str, step: int) -> random.Random:
    """The ``counter`` scheme's generator for action number ``step`` of the
    game with ``seed`` (step 0 is :meth:`Game.new`)."""
    digest = hashlib.sha256(f"{seed}:{step}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def draws_for(scheme: str, seed: str, step: int, source: str = "",
              entropy: Sequence[Mapping[str, Any]] | None = None) -> Draws:
    """The draws of action ``step`` of a game stored with ``scheme``:
    ``source`` is ``bot`` or ``timeout`` for the move the referee chooses for
    a seat before it is taken as step ``step`` (in the ``counter`` scheme
    those had generators of their own; keyed draws name it in the purpose).
    ``entropy``: the ``mixed`` game's contributions (``Game.entropy``)."""
    if scheme == KEYED:
        return KeyedDraws(seed)
    if scheme == MIXED:
        return KeyedDraws(mixed_seed(seed, contributions(entropy)))
    if scheme == COUNTER:
        return SequentialDraws(rng_for(f"{seed}:{source}" if source else seed, step))
    raise ValueError(f"unknown draw scheme {scheme!r}")
