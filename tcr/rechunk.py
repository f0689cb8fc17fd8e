"""Rechunking: the same text, split the ways a network and a tokenizer might (ARCHITECTURE.md §6).

A detector must emit the same events whatever the chunking, so the central test
of tcr is to replay one recorded text under many chunkings. A ``Strategy`` is
parsed from its command-line spec and yields ``Chunking`` values lazily: an
exhaustive run over a 10 KB text yields 10k chunkings one at a time.

Content strategies split text (``str``); transport strategies (``bytes:N``,
``bytes-random[:MAX]``, ``bytes-exhaustive``) split the raw body (``bytes``) so a
UTF-8 character or a CRLF can be cut in two, which is what exercises decoders.
No chunking ever contains an empty chunk; an empty text is the empty chunking.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import AnyStr, Generic

from tcr.detector.formats import FORMATS
from tcr.errors import TcrError, did_you_mean

__all__ = [
    "DEFAULT_STRATEGIES",
    "STRATEGY_FORMS",
    "Chunking",
    "Strategy",
    "parse_strategy",
    "split_at",
    "splits_spec",
]

DEFAULT_STRATEGIES: tuple[str, ...] = ("original", "whole", "char", "random")
STRATEGY_FORMS = (
    "original, whole, char, fixed:N, random[:MAX], exhaustive, boundary, splits:A,B,..., "
    "bytes:N, bytes-random[:MAX], bytes-exhaustive"
)
DEFAULT_RANDOM_MAX = 8

# Kinds that take no argument, one positive size, or an optional size.
_PLAIN = {"original", "whole", "char", "exhaustive", "boundary", "bytes-exhaustive"}
_SIZED = {"fixed", "bytes"}
_OPTIONALLY_SIZED = {"random", "bytes-random"}
_RANDOM = {"random", "bytes-random"}
_TRANSPORT = {"bytes", "bytes-random", "bytes-exhaustive"}


@dataclass(frozen=True, slots=True)
class Chunking(Generic[AnyStr]):
    """One way of splitting a text: ``b"".join(chunks)`` / ``"".join(chunks)`` is the text.

    Construct it unsubscripted (``Chunking(...)``): on Python 3.11 a subscripted
    call of a slotted frozen generic dataclass trips a CPython bug.
    """

    strategy: str  # the canonical spec, e.g. "random:8"
    label: str  # unique within a run, e.g. "random:8#3", "exhaustive@17", "whole"
    chunks: tuple[AnyStr, ...]

    @property
    def splits(self) -> tuple[int, ...]:
        """Input offsets of the boundaries; ``splits_spec(c.splits)`` reproduces the chunking."""
        offsets: list[int] = []
        end = 0
        for chunk in self.chunks[:-1]:
            end += len(chunk)
            offsets.append(end)
        return tuple(offsets)


def splits_spec(offsets: Sequence[int]) -> str:
    """The ``splits:A,B,C`` spec that reproduces a chunking with these boundaries."""
    return "splits:" + ",".join(str(o) for o in offsets)


def split_at(text: AnyStr, offsets: Sequence[int]) -> list[AnyStr]:
    """``text`` cut at the given strictly increasing offsets, each inside the text."""
    previous = 0
    for offset in offsets:
        if offset <= previous:
            raise TcrError(
                f"split offsets must be strictly increasing and positive: {list(offsets)}"
            )
        if offset >= len(text):
            raise TcrError(
                f"split offset {offset} is not inside the {len(text)}-character text "
                f"(valid offsets: 1..{len(text) - 1})"
            )
        previous = offset
    return _cut(text, offsets)


def _cut(text: AnyStr, offsets: Sequence[int]) -> list[AnyStr]:
    bounds = [0, *offsets, len(text)]
    return [text[a:b] for a, b in pairwise(bounds) if b > a]


def _bad(spec: str, why: str) -> TcrError:
    return TcrError(f"bad rechunk strategy {spec!r}: {why}; valid forms: {STRATEGY_FORMS}")


def _positive(spec: str, value: str, what: str) -> int:
    # isascii: str.isdigit() also accepts digits like "³" that int() refuses.
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise _bad(spec, f"{what} must be a positive integer, not {value!r}")
    return int(value)


def parse_strategy(spec: str) -> Strategy:
    """The strategy a command-line spec names; a bad spec raises ``TcrError``."""
    text = spec.strip()
    kind, colon, arg = text.partition(":")
    if kind in _PLAIN:
        if colon:
            raise _bad(spec, f"{kind} takes no argument")
        return Strategy(kind, kind, kind in _TRANSPORT)
    if kind in _SIZED:
        if not colon:
            raise _bad(spec, f"{kind} needs a size, as in {kind}:4")
        size = _positive(spec, arg, "N")
        return Strategy(f"{kind}:{size}", kind, kind in _TRANSPORT, size=size)
    if kind in _OPTIONALLY_SIZED:
        size = _positive(spec, arg, "MAX") if colon else DEFAULT_RANDOM_MAX
        return Strategy(f"{kind}:{size}", kind, kind in _TRANSPORT, size=size)
    if kind == "splits":
        if not colon:
            raise _bad(spec, "splits needs offsets, as in splits:3,10")
        fields = [f.strip() for f in arg.split(",")] if arg.strip() else []
        offsets = tuple(_positive(spec, f, "an offset") for f in fields)
        if any(b <= a for a, b in pairwise(offsets)):
            raise _bad(spec, "offsets must be strictly increasing")
        return Strategy(splits_spec(offsets), kind, False, offsets=offsets)
    kinds = sorted({*_PLAIN, *_SIZED, *_OPTIONALLY_SIZED, "splits"})
    raise _bad(spec, f"unknown strategy {kind!r}{did_you_mean(kind, kinds)}")


@dataclass(frozen=True, slots=True)
class Strategy:
    """A parsed spec. ``chunkings`` validates at once and then yields lazily."""

    spec: str  # canonical: "random" becomes "random:8"
    kind: str
    transport: bool  # True: splits the raw body bytes, not the content text
    size: int = 0  # N of fixed/bytes, MAX of random/bytes-random
    offsets: tuple[int, ...] = ()  # of splits:

    @property
    def repeated(self) -> bool:
        """Whether its chunkings are ``runs`` seeded runs, each made on its own (random kinds)."""
        return self.kind in _RANDOM

    def chunkings(
        self,
        text: AnyStr,
        *,
        original: Sequence[AnyStr] | None = None,
        runs: int = 20,
        seed: int = 0,
        start: int = 0,
    ) -> Iterator[Chunking[AnyStr]]:
        """Every chunking this strategy makes of ``text``, from the ``start``-th on.

        ``original`` is the recorded chunking (used by ``original`` only);
        ``runs`` and ``seed`` drive the random strategies, reproducibly. A random
        strategy makes runs ``start`` to ``runs - 1`` without making the earlier
        ones, so a range of runs can be replayed on its own (``tcr replay --jobs``).
        """
        self._check(text, original, runs, start)
        if self.repeated:
            return self._generate(text, original, runs, seed, start)
        return islice(self._generate(text, original, runs, seed), start, None)

    def nth(self, text: AnyStr, n: int, *, seed: int = 0) -> tuple[str, Iterator[AnyStr]]:
        """The label and chunks of the ``n``-th chunking of ``text`` (``chunkings``'
        ``n``-th, going round when it makes fewer; a random strategy's run ``n``).

        The chunks of ``char``, ``fixed``, ``bytes`` and the random kinds are cut as
        they are taken: ``tcr serve`` sends one chunking per request, and per
        character of a 1 MB recording their tuple was a million strings per client.
        """
        self._check(text, None, n, n)
        if self.kind in ("char", "fixed", "bytes"):
            return self.spec, _fixed(text, self.size or 1)  # char: size 0, cut per 1
        if self.repeated:
            return f"{self.spec}#{n}", _random(text, self.size, random.Random(f"{seed}/{n}"))
        made = 0  # counted, not kept: exhaustive makes one chunking per character
        for chunking in self.chunkings(text, seed=seed):
            if made == n:
                return chunking.label, iter(chunking.chunks)
            made += 1
        if made == 0:
            return self.spec, iter(())
        chunking = next(self.chunkings(text, seed=seed, start=n % made))
        return chunking.label, iter(chunking.chunks)

    def _check(
        self, text: AnyStr, original: Sequence[AnyStr] | None, runs: int, start: int
    ) -> None:
        """What ``chunkings`` refuses, refused before anything is made."""
        if self.transport and not isinstance(text, bytes):
            raise TcrError(
                f"rechunk strategy {self.spec!r} re-splits transport bytes: "
                "give it the raw body (bytes), not the decoded text"
            )
        if runs < 0 or start < 0:
            raise TcrError(f"rechunk runs and start must be 0 or more, not {runs} and {start}")
        if self.kind == "splits":
            try:  # raise now, not at the first next()
                split_at(text, self.offsets)
            except TcrError as error:
                raise TcrError(f"rechunk strategy {self.spec!r}: {error}") from None
        if self.kind == "original" and original is not None and text[:0].join(original) != text:
            raise TcrError("the original chunks do not add up to the text being rechunked")

    def _generate(
        self,
        text: AnyStr,
        original: Sequence[AnyStr] | None,
        runs: int,
        seed: int,
        start: int = 0,
    ) -> Iterator[Chunking[AnyStr]]:
        spec = self.spec
        if self.kind == "original":
            chunks = (text,) if original is None else tuple(c for c in original if c)
            yield Chunking(spec, spec, _nonempty(chunks))
        elif self.kind == "whole":
            yield Chunking(spec, spec, _nonempty((text,)))
        elif self.kind == "char":
            yield Chunking(spec, spec, tuple(_fixed(text, 1)))
        elif self.kind in ("fixed", "bytes"):
            yield Chunking(spec, spec, tuple(_fixed(text, self.size)))
        elif self.kind in ("random", "bytes-random"):
            for run in range(start, runs):
                # One generator per run, so "random:8#13" is reproducible on its own; a
                # str seed is hashed with SHA-512, not hash(), so PYTHONHASHSEED is moot.
                chunks = tuple(_random(text, self.size, random.Random(f"{seed}/{run}")))
                yield Chunking(spec, f"{spec}#{run}", chunks)
        elif self.kind in ("exhaustive", "bytes-exhaustive"):
            yield from _exhaustive(spec, text)
        elif self.kind == "boundary":
            yield from _boundary(spec, text)
        else:  # splits
            yield Chunking(spec, spec, tuple(_cut(text, self.offsets)))


def _nonempty(chunks: tuple[AnyStr, ...]) -> tuple[AnyStr, ...]:
    return tuple(c for c in chunks if c)


def _fixed(text: AnyStr, size: int) -> Iterator[AnyStr]:
    return (text[i : i + size] for i in range(0, len(text), size))


def _random(text: AnyStr, most: int, rng: random.Random) -> Iterator[AnyStr]:
    # The draws of rng.randrange(most), inlined (rejection sampling on getrandbits, as
    # CPython does it; test_rechunk pins the equality): on a large text this loop was
    # a quarter of a random run's replay.
    bits, width = rng.getrandbits, most.bit_length()
    start, length = 0, len(text)
    while start < length:
        size = bits(width)
        while size >= most:
            size = bits(width)
        end = start + size + 1
        yield text[start:end]
        start = end


def _exhaustive(spec: str, text: AnyStr) -> Iterator[Chunking[AnyStr]]:
    # Splits at 0 and len(text) would only repeat the whole text (no empty chunks
    # ever), so a text of n >= 2 characters has n - 1 chunkings.
    if len(text) < 2:
        yield Chunking(spec, f"{spec}@whole", _nonempty((text,)))
        return
    for k in range(1, len(text)):
        yield Chunking(spec, f"{spec}@{k}", (text[:k], text[k:]))


def _marker_spans(text: AnyStr) -> list[tuple[int, int]]:
    """Input spans of every opening or closing marker of the format table."""
    anywhere: set[str] = set()
    at_start: set[str] = set()
    for fmt in FORMATS:
        (anywhere if fmt.anywhere else at_start).update(fmt.opens)
        anywhere.update(fmt.closes)
    spans: set[tuple[int, int]] = set()
    for needle in _as_text_type(text, anywhere):
        at = text.find(needle)
        while at >= 0:
            spans.add((at, at + len(needle)))
            at = text.find(needle, at + 1)
    # Policy 3: bare_json's "{" opens only while all content so far is white space.
    first = len(text) - len(text.lstrip())
    for needle in _as_text_type(text, at_start):
        if text.startswith(needle, first):
            spans.add((first, first + len(needle)))
    return sorted(spans)


def _as_text_type(text: AnyStr, markers: set[str]) -> list[AnyStr]:
    """The markers as ``str`` or as UTF-8 ``bytes``, whichever ``text`` is."""
    if isinstance(text, bytes):
        return [m.encode() for m in sorted(markers)]
    return sorted(markers)


def _boundary(spec: str, text: AnyStr) -> Iterator[Chunking[AnyStr]]:
    n = len(text)
    spans = _marker_spans(text)
    if not spans:
        # Nothing to aim at: a few char-level splits so the strategy still tests something.
        points = sorted({k for k in (1, n // 2, n - 1) if 0 < k < n})
        if not points:
            yield Chunking(spec, spec, _nonempty((text,)))
        for k in points:
            yield Chunking(spec, f"{spec}@{k}", (text[:k], text[k:]))
        return
    seen: set[tuple[int, ...]] = set()
    for start, end in spans:
        for k in range(start - 1, end + 2):
            if 0 < k < n and (k,) not in seen:
                seen.add((k,))
                yield Chunking(spec, f"{spec}@{k}", (text[:k], text[k:]))
        # The marker shattered into single characters, as a tokenizer might.
        shattered = tuple(k for k in range(start, end + 1) if 0 < k < n)
        if len(shattered) > 1 and shattered not in seen:
            seen.add(shattered)
            yield Chunking(spec, f"{spec}@{start}..{end}", tuple(_cut(text, shattered)))
