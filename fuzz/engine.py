"""Hypothesis's search and shrinker, driven directly: one batch of byte strings.

``@given`` wraps each example in machinery a fuzzer does not need: binding the
test's arguments through ``inspect.signature``, saving and restoring the global
random state, building a report for every call. On this project's benchmark
machine that alone capped the search at about 950 examples/s before tcr did any
work; the engine underneath (``ConjectureRunner``) runs the same draws at about
3,000/s (benchmarks/RESULTS.md). So the search drives the engine itself, which
is an internal API of Hypothesis: everything this project uses of it is here,
and ``pyproject.toml`` bounds the versions it is tested with
(``tests/fuzz/test_fuzz_engine.py`` checks what is relied on; it passes with 6.131 to
6.170, the versions whose prefixes are choices).

One more saving: a new example's choices come from ``generate_novel_prefix``,
which walks Hypothesis's tree of explored choices and draws a bytes choice a byte
at a time (one forced boolean per byte: about 40% of the engine's time for this
project's 241 bytes). For a test that draws one fixed-size byte string, a novel
prefix is just fresh random bytes (two alike have a chance of 2**-1928), so
``_Runner`` draws them at once, from the runner's seeded random as before.
Shrinking, the tree's bookkeeping and everything else are Hypothesis's own.

The test sees a byte string of a fixed size, drawn as one choice. It raises
``Interesting`` (or a subclass) to say the bytes show what is being searched for:
generation then stops, Hypothesis shrinks the bytes while the test keeps raising
it, and ``search`` returns the smallest bytes it saw raise. Any other exception,
``BaseException`` included, leaves the search at once, as it came.
"""

from __future__ import annotations

from collections.abc import Callable
from random import Random
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.engine import ConjectureRunner
from hypothesis.internal.escalation import InterestingOrigin

__all__ = ["Interesting", "search"]


class Interesting(Exception):
    """Raised by a test: these bytes show what is searched for."""


_SETTINGS = settings(
    database=None,
    deadline=None,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,  # the first interesting example ends generation
    verbosity=Verbosity.quiet,
)


class _Runner(ConjectureRunner):
    """The engine, drawing each novel prefix of one ``size``-byte choice at once."""

    def __init__(self, test: Callable[[ConjectureData], None], *, size: int, **kw: Any) -> None:
        super().__init__(test, **kw)
        self._size = size

    def generate_novel_prefix(self) -> tuple[bytes, ...]:
        return (self.random.randbytes(self._size),)


def search(test: Callable[[bytes], object], *, size: int, seed: int, limit: int) -> bytes | None:
    """Run ``test`` on up to ``limit`` byte strings of ``size`` bytes drawn from ``seed``
    (the same seed draws the same ones); the shrunk bytes of the first that raised
    ``Interesting``, or ``None``."""
    origin: InterestingOrigin | None = None
    smallest: bytes | None = None

    def test_function(data: ConjectureData) -> None:
        nonlocal origin, smallest
        drawn = data.draw_bytes(size, size)
        try:
            test(drawn)
        except Interesting as error:
            if origin is None:  # one origin: what is shrunk is "raised Interesting"
                origin = InterestingOrigin.from_exception(error)
            # Hypothesis orders byte strings of one size as bytes compare: the smallest
            # seen is the one it shrank to (read here, not from the runner's attributes).
            if smallest is None or drawn < smallest:
                smallest = drawn
            data.mark_interesting(origin)

    runner = _Runner(
        test_function,
        size=size,
        settings=settings(_SETTINGS, max_examples=limit),
        random=Random(seed),
    )
    runner.run()
    return smallest
