"""Choices read from one drawn byte string: why the strategies draw bytes, not values.

Hypothesis spends tens of microseconds on every draw, and a message with its
blocks, names and arguments takes a few hundred choices. Drawn one by one,
that caps a fuzz run at well under a hundred examples a second; decoded from
one ``st.binary()`` draw, it costs one draw. Hypothesis still shrinks it: it
deletes and lowers bytes, and the decoding is laid out so that fewer and
smaller bytes mean a simpler message. An exhausted source reads zeros, and
zero is always the simplest choice (stop a list, take the first option).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["Source"]

T = TypeVar("T")


class Source:
    """Reads choices from ``data``, forwards or (``reverse``) from its end."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes, *, reverse: bool = False) -> None:
        self._data = data[::-1] if reverse else data
        self._pos = 0

    @property
    def used(self) -> int:
        """Bytes read so far (reads past the end count too)."""
        return self._pos

    def byte(self) -> int:
        pos = self._pos
        self._pos = pos + 1
        return self._data[pos] if pos < len(self._data) else 0

    def below(self, n: int) -> int:
        """An integer in ``[0, n)``; 0 when the bytes run out."""
        if n <= 1:
            return 0
        if n <= 256:
            return self.byte() % n
        if n <= 1 << 16:
            return ((self.byte() << 8) | self.byte()) % n
        return ((self.byte() << 24) | (self.byte() << 16) | (self.byte() << 8) | self.byte()) % n

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; the first when the bytes run out."""
        return options[self.below(len(options))]

    def flag(self) -> bool:
        return self.byte() & 1 == 1

    def count(self, most: int) -> int:
        """How many items a list gets, ``0..most``."""
        return self.below(most + 1)
