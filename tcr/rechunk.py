"""Rechunking: the same text, split the ways a network and a tokenizer might (ARCHITECTURE.md §6).

A detector must emit the same events whatever the chunking, so the central test
of tcr is to replay one recorded text under many chunkings. A ``Strategy`` is
parsed from its command-line spec and yields ``Chunking`` values lazily: an
exhaustive run over a 10 KB text yields 10k chunkings one at a time.

Content strategies split text (``str``); transport strategies (``bytes:N``,
``bytes-random[:MAX]``, ``bytes-exhaustive``) split the raw body (``bytes``) so a
UTF-8 character or a CRLF can be cut in two, which is what exercises decoders.
No chunking ever contains an empty chunk; an empty text is the empty chunking.

Special tokens (``Dialect.special_tokens``: ``<|call|>``, ``[TOOL_CALLS]``) are one
token to a model, so an engine emits each whole; only a proxy or a re-chunking
layer cuts one. ``tokens`` cuts where a tokenizer would and never inside a
special token of the claim it is given. A claim whose special tokens reach the
detector whole (``Claim.tokens_whole``: an engine-side parser) makes every content
strategy keep them whole: a split inside one is dropped, and a chunking that
then repeats one already made is not made again.
"""

from __future__ import annotations

import random
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import AnyStr, Generic, overload

from tcr.claims import EVERYTHING, Claim
from tcr.detector.formats import FORMATS
from tcr.errors import TcrError, did_you_mean
from tcr.trace import TupleLike

__all__ = [
    "DEFAULT_STRATEGIES",
    "STRATEGY_FORMS",
    "Chunking",
    "Cuts",
    "Strategy",
    "joined",
    "parse_strategy",
    "special_spans",
    "split_at",
    "split_tokens_mended",
    "splits_inside",
    "splits_spec",
    "whole_special_tokens",
]

DEFAULT_STRATEGIES: tuple[str, ...] = ("original", "whole", "char", "random", "tokens")
STRATEGY_FORMS = (
    "original, whole, char, fixed:N, random[:MAX], tokens, exhaustive, boundary, "
    "splits:A,B,..., bytes:N, bytes-random[:MAX], bytes-exhaustive"
)
DEFAULT_RANDOM_MAX = 8
TOKEN_PIECE_MAX = 8  # the longest word piece ``tokens`` cuts, as BPE vocabularies mostly do

# Kinds that take no argument, one positive size, or an optional size.
_PLAIN = {"original", "whole", "char", "tokens", "exhaustive", "boundary", "bytes-exhaustive"}
_SIZED = {"fixed", "bytes"}
_OPTIONALLY_SIZED = {"random", "bytes-random"}
_RANDOM = {"random", "bytes-random", "tokens"}
_TRANSPORT = {"bytes", "bytes-random", "bytes-exhaustive"}


@dataclass(frozen=True, slots=True)
class Chunking(Generic[AnyStr]):
    """One way of splitting a text: ``b"".join(chunks)`` / ``"".join(chunks)`` is the text.

    Construct it unsubscripted (``Chunking(...)``): on Python 3.11 a subscripted
    call of a slotted frozen generic dataclass trips a CPython bug.
    """

    strategy: str  # the canonical spec, e.g. "random:8"
    label: str  # unique within a run, e.g. "random:8#3", "exhaustive@17", "whole"
    chunks: Sequence[AnyStr]  # a tuple, or ``Cuts`` of the text (compared as a tuple)

    @property
    def splits(self) -> tuple[int, ...]:
        """Input offsets of the boundaries; ``splits_spec(c.splits)`` reproduces the chunking."""
        offsets: list[int] = []
        end = 0
        for chunk in self.chunks[:-1]:
            end += len(chunk)
            offsets.append(end)
        return tuple(offsets)


class Cuts(TupleLike, Sequence[AnyStr]):
    """A text's chunks as the offsets where each one ends, each sliced when it is read.

    ``tcr replay`` of a large recording at ``char`` chunking made a tuple of a million
    one-character chunks, at ``random`` a million strings of a few characters (about
    50 bytes each), beside the text they add up to. Here a chunk costs 4 bytes (8 past
    4 GB of text), and one of ``fixed`` or ``char`` chunks none (``ends=None``, ``size``).
    """

    __slots__ = ("_ends", "_size", "_text")

    def __init__(self, text: AnyStr, ends: Iterable[int] | None, size: int = 0) -> None:
        self._text: AnyStr = text
        self._size = size  # ends is None: chunks of ``size``, the last one shorter
        self._ends = None if ends is None else array("I" if len(text) >> 32 == 0 else "q", ends)

    @classmethod
    def of(cls, text: AnyStr, chunks: Iterable[AnyStr]) -> Cuts[AnyStr]:
        """``chunks`` of ``text`` (they must add up to it), empty ones left out; each is read
        once and not kept."""
        return cls(text, _ends(chunks))

    def joined(self) -> AnyStr:
        """The chunks joined (the text they were cut from), with no chunk made."""
        if self._ends is None or (self._ends and self._ends[-1] == len(self._text)):
            return self._text
        return self._text[: self._ends[-1] if self._ends else 0]

    def __len__(self) -> int:
        if self._ends is None:
            return -(-len(self._text) // self._size)
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> AnyStr: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[AnyStr, ...]: ...
    def __getitem__(self, index: int | slice) -> AnyStr | tuple[AnyStr, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("chunk index out of range")
        if self._ends is None:
            return self._text[index * self._size : (index + 1) * self._size]
        return self._text[self._ends[index - 1] if index else 0 : self._ends[index]]

    def __iter__(self) -> Iterator[AnyStr]:
        if self._ends is None:
            return _fixed(self._text, self._size)
        return _sliced(self._text, self._ends)


def joined(chunks: Sequence[AnyStr], empty: AnyStr) -> AnyStr:
    """``empty.join(chunks)``, without a tuple of every chunk when they are ``Cuts``."""
    return chunks.joined() if isinstance(chunks, Cuts) else empty.join(chunks)


def _ends(chunks: Iterable[AnyStr]) -> Iterator[int]:
    end = 0
    for chunk in chunks:
        if chunk:
            end += len(chunk)
            yield end


def _sliced(text: AnyStr, ends: Iterable[int]) -> Iterator[AnyStr]:
    start = 0
    for end in ends:
        yield text[start:end]
        start = end


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
        claim: Claim = EVERYTHING,
    ) -> Iterator[Chunking[AnyStr]]:
        """Every chunking this strategy makes of ``text``, from the ``start``-th on.

        ``original`` is the recorded chunking (used by ``original`` only);
        ``runs`` and ``seed`` drive the random strategies, reproducibly. A random
        strategy makes runs ``start`` to ``runs - 1`` without making the earlier
        ones, so a range of runs can be replayed on its own (``tcr replay --jobs``).
        ``claim`` is the detector's: ``tokens`` never cuts inside its special tokens,
        and no strategy does when they reach the detector whole (module docstring).
        """
        self._check(text, original, runs, start)
        if self.repeated:
            made = self._generate(text, original, runs, seed, start, claim)
        else:
            made = islice(self._generate(text, original, runs, seed, 0, claim), start, None)
        if claim.tokens_whole and not self.transport and isinstance(text, str):
            spans = special_spans(text, claim.special_markers)
            return _kept_whole(made, spans, once=not self.repeated)
        return made

    def nth(
        self, text: AnyStr, n: int, *, seed: int = 0, claim: Claim = EVERYTHING
    ) -> tuple[str, Iterator[AnyStr]]:
        """The label and chunks of the ``n``-th chunking of ``text`` (``chunkings``'
        ``n``-th, going round when it makes fewer; a random strategy's run ``n``).

        The chunks of ``char``, ``fixed``, ``bytes`` and the random kinds are cut as
        they are taken: ``tcr serve`` sends one chunking per request, and per
        character of a 1 MB recording their tuple was a million strings per client.
        """
        self._check(text, None, n, n)
        kept = claim.tokens_whole and not self.transport  # cut by chunkings(), then merged
        if self.kind == "tokens" or (kept and self.repeated):
            chunking = next(self.chunkings(text, runs=n + 1, seed=seed, start=n, claim=claim))
            return chunking.label, iter(chunking.chunks)
        if self.kind in ("char", "fixed", "bytes") and not kept:
            return self.spec, _fixed(text, self.size or 1)  # char: size 0, cut per 1
        if self.repeated:
            return f"{self.spec}#{n}", _random(text, self.size, random.Random(f"{seed}/{n}"))
        made = 0  # counted, not kept: exhaustive makes one chunking per character
        for chunking in self.chunkings(text, seed=seed, claim=claim):
            if made == n:
                return chunking.label, iter(chunking.chunks)
            made += 1
        if made == 0:
            return self.spec, iter(())
        chunking = next(self.chunkings(text, seed=seed, start=n % made, claim=claim))
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
        if self.kind == "tokens" and not isinstance(text, str):
            raise TcrError(
                "rechunk strategy 'tokens' cuts content text where a tokenizer would: "
                "give it the decoded text (str), not bytes"
            )
        if runs < 0 or start < 0:
            raise TcrError(f"rechunk runs and start must be 0 or more, not {runs} and {start}")
        if self.kind == "splits":
            try:  # raise now, not at the first next()
                split_at(text, self.offsets)
            except TcrError as error:
                raise TcrError(f"rechunk strategy {self.spec!r}: {error}") from None
        if self.kind == "original" and original is not None and joined(original, text[:0]) != text:
            raise TcrError("the original chunks do not add up to the text being rechunked")

    def _generate(
        self,
        text: AnyStr,
        original: Sequence[AnyStr] | None,
        runs: int,
        seed: int,
        start: int,
        claim: Claim,
    ) -> Iterator[Chunking[AnyStr]]:
        spec = self.spec
        # The chunks of a long text are Cuts: offsets, not strings (see Cuts).
        if self.kind == "original":
            cuts = _nonempty((text,)) if original is None else Cuts.of(text, original)
            yield Chunking(spec, spec, cuts)
        elif self.kind == "whole":
            yield Chunking(spec, spec, _nonempty((text,)))
        elif self.kind in ("char", "fixed", "bytes"):
            yield Chunking(spec, spec, Cuts(text, None, self.size or 1))  # char: size 0
        elif self.kind in ("random", "bytes-random"):
            for run in range(start, runs):
                # One generator per run, so "random:8#13" is reproducible on its own; a
                # str seed is hashed with SHA-512, not hash(), so PYTHONHASHSEED is moot.
                rng = random.Random(f"{seed}/{run}")
                yield Chunking(
                    spec, f"{spec}#{run}", Cuts(text, _random_ends(text, self.size, rng))
                )
        elif self.kind == "tokens":
            assert isinstance(text, str)  # _check refused bytes
            specials = special_spans(text, claim.special_markers)
            for run in range(start, runs):
                pieces = _tokens(text, specials, random.Random(f"{seed}/{run}"))
                yield Chunking(spec, f"{spec}#{run}", Cuts.of(text, pieces))
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
    return _sliced(text, _random_ends(text, most, rng))


def _random_ends(text: AnyStr, most: int, rng: random.Random) -> Iterator[int]:
    """Where each chunk of sizes 1..``most`` drawn from ``rng`` ends, up to ``len(text)``."""
    # The draws of rng.randrange(most), inlined (rejection sampling on getrandbits, as
    # CPython does it; test_rechunk pins the equality): on a large text this loop was
    # a quarter of a random run's replay.
    bits, width = rng.getrandbits, most.bit_length()
    end, length = 0, len(text)
    while end < length:
        size = bits(width)
        while size >= most:
            size = bits(width)
        end = min(end + size + 1, length)
        yield end


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
    if not seen:  # a text no longer than one marker character: nowhere to cut, run it whole
        yield Chunking(spec, spec, _nonempty((text,)))


# -- special tokens ---------------------------------------------------------------


def special_spans(text: str, markers: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` that are special-token markers, scanned left to right (of
    markers starting at one place, the longest): where an engine emits one token."""
    if not markers or not text:
        return ()
    pattern = _marker_pattern(tuple(sorted(set(markers), key=lambda m: (-len(m), m))))
    return tuple(match.span() for match in pattern.finditer(text))


_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _marker_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    pattern = _PATTERNS.get(markers)
    if pattern is None:
        pattern = _PATTERNS[markers] = re.compile("|".join(map(re.escape, markers)))
    return pattern


def splits_inside(splits: Sequence[int], spans: Sequence[tuple[int, int]]) -> list[int]:
    """The split offsets that fall strictly inside one of ``spans`` (both sorted)."""
    inside: list[int] = []
    at = 0
    for split in splits:
        while at < len(spans) and spans[at][1] <= split:
            at += 1
        if at < len(spans) and spans[at][0] < split:
            inside.append(split)
    return inside


def whole_special_tokens(chunk: str, markers: Sequence[str]) -> tuple[str, ...]:
    """The special-token ``markers`` that ``chunk`` holds whole, in order: what a parser
    keyed on token ids finds in ``delta_token_ids`` for it (``tcr.adapters``)."""
    return tuple(chunk[a:b] for a, b in special_spans(chunk, tuple(markers)))


def split_tokens_mended(chunks: Sequence[str], markers: Sequence[str]) -> tuple[str, ...]:
    """``chunks`` with every split inside one of the special-token ``markers`` dropped: the
    chunking a parser that sees token ids gets (fuzz's drawn chunkings, for such a claim)."""
    text = "".join(chunks)
    splits = Chunking("splits", "", tuple(chunks)).splits
    inside = set(splits_inside(splits, special_spans(text, markers)))
    if not inside:
        return tuple(chunks)
    return tuple(_cut(text, [s for s in splits if s not in inside]))


def _kept_whole(
    chunkings: Iterator[Chunking[AnyStr]], spans: tuple[tuple[int, int], ...], *, once: bool
) -> Iterator[Chunking[AnyStr]]:
    """Each chunking with its splits inside a special token dropped; with ``once``, one
    whose splits are then those of a chunking already made is left out (``exhaustive``,
    ``boundary``; a seeded run is kept, so run ``#n`` stays run ``#n``)."""
    seen: set[tuple[int, ...]] = set()
    for chunking in chunkings:
        splits = chunking.splits
        inside = set(splits_inside(splits, spans)) if spans else set()
        if inside:
            kept = tuple(s for s in splits if s not in inside)
            text = chunking.chunks[0][:0].join(chunking.chunks)
            chunking = Chunking(chunking.strategy, chunking.label, tuple(_cut(text, kept)))
            splits = kept
        if once:
            if splits in seen:
                continue
            seen.add(splits)
        yield chunking


# -- tokens: where a tokenizer cuts -------------------------------------------------

# The pre-tokenizer of GPT-2 style BPE vocabularies, in the standard library's re: a
# contraction, a word with its leading space, a digit run, one other character with its
# leading space (punctuation alone), white space (the last space before a word stays
# with the word). Every character is matched, so the pieces add up to the text.
_PRE_TOKENS = re.compile(r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)|\s+(?!\S)|\s+")
_DIGIT_GROUP = 3  # digits go in groups of 1..3, as cl100k and Llama 3 split numbers
_MERGED_BITS = 3  # one token in 2**3 is emitted with the one before (a detokenizer's held
# bytes, speculative decoding): so a point between tokens is sometimes no split


def _tokens(text: str, specials: Sequence[tuple[int, int]], rng: random.Random) -> Iterator[str]:
    """``text`` as an engine streams it: token-sized pieces, each special token whole."""
    bits = rng.getrandbits
    start = 0
    held = ""
    for a, b in (*specials, (len(text), len(text))):
        for piece in _ordinary(text[start:a], bits):
            if held and bits(_MERGED_BITS) == 0:
                held += piece
                continue
            if held:
                yield held
            held = piece
        if b > a:  # a special token: one token, one chunk of its own
            if held:
                yield held
            held = ""
            yield text[a:b]
        start = b
    if held:
        yield held


def _ordinary(text: str, bits: Callable[[int], int]) -> Iterator[str]:
    """Token-sized pieces of text holding no special token. The sizes are drawn as
    ``randrange`` draws them (rejection sampling on ``getrandbits``), inlined: a piece
    size per call of ``randrange`` made ``tokens`` ten times slower than ``random``."""
    for match in _PRE_TOKENS.finditer(text):
        word = match.group()
        if len(word) == 1:
            yield word
            continue
        most = _DIGIT_GROUP if word.lstrip(" ").isdigit() else TOKEN_PIECE_MAX
        width = most.bit_length() if most & (most - 1) else most.bit_length() - 1
        at = 0
        while at < len(word):
            size = bits(width)
            while size >= most:
                size = bits(width)
            yield word[at : at + size + 1]
            at += size + 1
