"""Shrinking a failing chunking: fewest split points, then the shortest input.

How replay uses it: ARCHITECTURE.md §7.4. Both searches are ddmin, the delta
debugging algorithm of Zeller and Hildebrandt, "Simplifying and Isolating
Failure-Inducing Input" (IEEE TSE 28(2), 2002): cut the
current configuration into ``n`` parts; keep one part, or drop one, while the
failure persists; otherwise double ``n``. One culprit among ``n`` elements costs
O(log n) tests, and the result is 1-minimal: removing any single remaining
element makes the failure go away.

Special tokens (``keep_whole``): a failure found on a chunking that cuts a special
token may not need that cut. Before shrinking, every split inside one of the given
markers is moved to both its edges (a cut an engine streaming tokens makes too);
when that chunking still fails, the search starts from it, and since ddmin only
drops splits the result cuts none. So a minimal chunking cuts a special token only
when the failure needs it, and that is the finding that happens "only when a
proxy re-chunks" (``tcr.signature``).

Where a split settles (``rank``): ddmin keeps a split where it was found, and one
failure often fails for a whole run of neighbouring offsets (any split in the
preamble before a marker, say). Each remaining split is then moved, within the
failing run of offsets around it (found by bisection, so a few calls), to the
least telling place in it: a split at a marker's edge that fails as well one
character into the text is reported as a split in the text. So one bug reads as
one shape whichever offset a chunking happened to cut at.

Sans-I/O: the caller's predicate runs the detector and decides what "fails the same
way" means (the same check, say). A predicate that raises propagates: wrapping a
detector crash into a verdict is the caller's business, not a search result. A
search bounded in time (``deadline``) reads the clock the caller injects
(``time.perf_counter``, say), as ``tcr.cost`` does: the core reads none of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tcr.rechunk import special_spans, split_at, splits_inside, splits_spec

__all__ = [
    "FLAKY",
    "Clock",
    "Minimized",
    "NotFailing",
    "Predicate",
    "Rank",
    "minimize",
    "minimize_splits",
    "minimize_text",
]

Predicate = Callable[[Sequence[str]], bool]
"""True when this chunking still fails the same way as the one being minimized."""

Clock = Callable[[], float]
"""Seconds, monotonic: what a ``deadline`` is a time on."""

Rank = Callable[[str], Callable[[int], int]]
"""Of a text, how little a split at each offset says: higher is less telling (a split in
plain text says less than one inside a marker, ``tcr.signature.split_rank``)."""

_Items = tuple[int, ...]

# What a caller adds to a failure it could not shrink because it did not fail again.
FLAKY = "flaky: the same input did not fail again, so it was not shrunk"


class NotFailing(ValueError):
    """The chunking to minimize does not fail: if it failed before, the detector is flaky."""


@dataclass(frozen=True, slots=True)
class Minimized:
    """The smallest failing chunking found, and what finding it cost."""

    chunks: tuple[str, ...]
    splits: tuple[int, ...]  # offsets into "".join(chunks)
    calls: int  # predicate evaluations spent (cache hits are free)
    original_splits: int
    original_length: int

    @property
    def rechunk(self) -> str:
        """The ``--rechunk`` spec that reproduces it, e.g. ``splits:12,15``."""
        return splits_spec(self.splits) if self.splits else "whole"


class _OutOfBudget(Exception):
    """The predicate budget or the time is spent: every search keeps the best it has found
    so far."""


class _Search:
    """One minimization's predicate, its cache, its call budget and its deadline, shared by
    every phase."""

    __slots__ = ("_budget", "_clock", "_deadline", "_fails", "_seen", "calls")

    def __init__(
        self, fails: Predicate, budget: int | None, deadline: float | None, clock: Clock | None
    ) -> None:
        if budget is not None and budget < 1:
            # The first call proves the input fails; without it nothing can be minimized.
            raise ValueError(f"minimize: budget must be at least 1 predicate call, not {budget}")
        if deadline is not None and clock is None:
            raise ValueError("minimize: a deadline needs the clock it is a time on")
        self._fails = fails
        self._budget = budget
        self._deadline = deadline
        self._clock = clock
        # Keyed by (text, split offsets): the text phase revisits chunkings ddmin has
        # already tried (complements of complements), and a detector run costs far more.
        self._seen: dict[tuple[str, _Items], bool] = {}
        self.calls = 0

    @property
    def exhausted(self) -> bool:
        """No call may be made: the budget is spent, or the deadline has passed (read only
        after the first call, which proves the input fails)."""
        if self._budget is not None and self.calls >= self._budget:
            return True
        if self._deadline is None or self._clock is None or not self.calls:
            return False
        return self._clock() >= self._deadline

    def fails(self, text: str, splits: _Items) -> bool:
        key = (text, splits)
        known = self._seen.get(key)
        if known is not None:
            return known
        if self.exhausted:
            raise _OutOfBudget
        self.calls += 1
        result = bool(self._fails(tuple(split_at(text, splits))))
        self._seen[key] = result
        return result


def _bounds(length: int, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous, near-equal slices of ``range(length)``: neighbours stay together,
    which is where related split points and characters usually are."""
    size, extra = divmod(length, n)
    bounds: list[tuple[int, int]] = []
    start = 0
    for i in range(n):
        end = start + size + int(i < extra)
        bounds.append((start, end))
        start = end
    return bounds


def _ddmin(items: _Items, fails: Callable[[_Items], bool]) -> _Items:
    """A 1-minimal failing subset of ``items`` (which fail), or the best one when out of budget."""
    current, n = items, 2
    try:
        while len(current) >= 2:
            bounds = _bounds(len(current), n)
            for a, b in bounds:  # reduce to a subset
                if fails(current[a:b]):
                    current, n = current[a:b], 2
                    break
            else:
                # At n == 2 each complement is the other subset, just tested.
                for a, b in bounds if n > 2 else ():  # reduce to a complement
                    rest = current[:a] + current[b:]
                    if fails(rest):
                        current, n = rest, max(n - 1, 2)
                        break
                else:
                    if n >= len(current):
                        break  # every single element was removed once: 1-minimal
                    n = min(2 * n, len(current))
    except _OutOfBudget:
        pass
    return current


def _layout(chunks: Sequence[str]) -> tuple[str, _Items]:
    """The text and its split offsets; empty chunks split nothing."""
    offsets: list[int] = []
    end = 0
    for chunk in chunks:
        if chunk and end:
            offsets.append(end)
        end += len(chunk)
    return "".join(chunks), tuple(offsets)


def _start(
    chunks: Sequence[str],
    fails: Predicate,
    budget: int | None,
    deadline: float | None,
    clock: Clock | None,
) -> tuple[_Search, str, _Items]:
    search = _Search(fails, budget, deadline, clock)
    text, splits = _layout(chunks)
    if not search.fails(text, splits):
        raise NotFailing(
            f"minimize: the given chunking ({len(splits)} splits, {len(text)} characters) "
            "does not fail, so there is nothing to minimize"
        )
    return search, text, splits


def _tokens_whole(search: _Search, text: str, splits: _Items, markers: Sequence[str]) -> _Items:
    """``splits`` with those inside a special token moved to its edges, if that still fails."""
    spans = special_spans(text, markers)
    inside = set(splits_inside(splits, spans))
    if not inside:
        return splits
    moved = {s for s in splits if s not in inside}
    for a, b in spans:
        if any(a < s < b for s in inside):
            moved.update(edge for edge in (a, b) if 0 < edge < len(text))
    snapped = tuple(sorted(moved))
    try:
        return snapped if search.fails(text, snapped) else splits
    except _OutOfBudget:
        return splits


def _shrink_splits(search: _Search, text: str, splits: _Items) -> _Items:
    if not splits:
        return splits
    try:
        # A failure that needs no split at all is common (the whole run fails too) and is
        # the one chunking ddmin never tries: one call settles it.
        if search.fails(text, ()):
            return ()
    except _OutOfBudget:
        return splits
    return _ddmin(splits, lambda subset: search.fails(text, subset))


_NEAR = 32


def _settle(
    search: _Search,
    text: str,
    splits: _Items,
    rank: Callable[[int], int],
    keep_whole: Sequence[tuple[int, int]],
) -> _Items:
    """Each split moved to the least telling offset of the failing run around it (within
    ``_NEAR`` characters: where a split falls relative to a marker is told nearby)."""
    settled = list(splits)
    try:
        for i, split in enumerate(splits):
            low = max(settled[i - 1] + 1 if i else 1, split - _NEAR)
            high = min(splits[i + 1] - 1 if i + 1 < len(splits) else len(text) - 1, split + _NEAR)
            if all(rank(at) <= rank(split) for at in range(low, high + 1)):
                continue  # nothing near says less: no run of the detector

            def fails_at(at: int, i: int = i) -> bool:
                return search.fails(text, (*settled[:i], at, *settled[i + 1 :]))

            left = _edge(split, low, fails_at)
            right = _edge(split, high, fails_at)
            places = [
                at for at in range(left, right + 1) if not any(a < at < b for a, b in keep_whole)
            ]
            best = max(places, key=lambda at: (rank(at), -abs(at - split)), default=split)
            if rank(best) > rank(split) and fails_at(best):
                settled[i] = best
    except _OutOfBudget:
        pass
    return tuple(settled)


def _edge(start: int, limit: int, fails_at: Callable[[int], bool]) -> int:
    """The farthest offset from ``start`` towards ``limit`` that still fails, by bisection
    (exact when the failing offsets around ``start`` are one run, as they usually are)."""
    good, far = start, limit
    step = 1 if limit > start else -1
    while (far - good) * step > 0:
        mid = good + ((far - good) * step + 1) // 2 * step
        if fails_at(mid):
            good = mid
        else:
            far = mid - step
    return good


def _shrink_text(search: _Search, text: str, splits: _Items) -> tuple[str, _Items]:
    # The items are character positions; a subset keeps those characters, each in the
    # chunk it came from. Chunks left empty vanish, so neighbouring splits merge.
    owner: list[int] = []
    previous = 0
    for index, end in enumerate((*splits, len(text))):
        owner += [index] * (end - previous)
        previous = end

    def rebuilt(kept: _Items) -> tuple[str, _Items]:
        cuts = tuple(k for k in range(1, len(kept)) if owner[kept[k]] != owner[kept[k - 1]])
        return "".join(text[i] for i in kept), cuts

    kept = _ddmin(tuple(range(len(text))), lambda subset: search.fails(*rebuilt(subset)))
    return rebuilt(kept)


def _result(search: _Search, text: str, splits: _Items, original: tuple[str, _Items]) -> Minimized:
    return Minimized(
        chunks=tuple(split_at(text, splits)),
        splits=splits,
        calls=search.calls,
        original_splits=len(original[1]),
        original_length=len(original[0]),
    )


def minimize(
    chunks: Sequence[str],
    fails: Predicate,
    *,
    text_too: bool,
    budget: int | None = None,
    deadline: float | None = None,
    clock: Clock | None = None,
    keep_whole: Sequence[str] = (),
    rank: Rank | None = None,
) -> Minimized:
    """The fewest split points that still fail; with ``text_too``, then the shortest text.

    ``budget`` caps predicate calls across all phases; when it runs out the best
    chunking found so far is returned. So does ``deadline``, a time on ``clock`` (which
    it needs): once the clock reads it, no further call is made; it is read only after
    the first call, so an input that fails is never "not failing" for want of time.
    ``keep_whole``: special-token markers a split
    falls inside only when the failure needs it (module docstring). Raises
    ``NotFailing`` (a ``ValueError``) when ``chunks`` does not fail. ``rank``: where each
    split settles (module docstring). Deterministic
    for a deterministic predicate.
    """
    search, text, splits = _start(chunks, fails, budget, deadline, clock)
    original = (text, splits)
    splits = _tokens_whole(search, text, splits, keep_whole)
    splits = _shrink_splits(search, text, splits)
    if rank is not None:
        splits = _settle(search, text, splits, rank(text), special_spans(text, keep_whole))
    if text_too and not search.exhausted:
        # Text only after splits: with few chunks left, each text test is a cheaper run,
        # and the few surviving splits pin down which characters the failure needs.
        text, splits = _shrink_text(search, text, splits)
        splits = _shrink_splits(search, text, splits)
    return _result(search, text, splits, original)


def minimize_splits(
    chunks: Sequence[str],
    fails: Predicate,
    *,
    budget: int | None = None,
    deadline: float | None = None,
    clock: Clock | None = None,
    keep_whole: Sequence[str] = (),
    rank: Rank | None = None,
) -> list[str]:
    """The same text cut at a 1-minimal set of the split points that still fails
    (``budget``, ``deadline``, ``keep_whole`` and ``rank``: as ``minimize`` takes them)."""
    shrunk = minimize(
        chunks,
        fails,
        text_too=False,
        budget=budget,
        deadline=deadline,
        clock=clock,
        keep_whole=keep_whole,
        rank=rank,
    )
    return list(shrunk.chunks)


def minimize_text(
    chunks: Sequence[str],
    fails: Predicate,
    *,
    budget: int | None = None,
    deadline: float | None = None,
    clock: Clock | None = None,
) -> list[str]:
    """The shortest text (characters deleted from inside chunks) that still fails,
    then cut at a 1-minimal set of its remaining split points (``budget`` and
    ``deadline``: as ``minimize`` takes them).

    The predicate sees texts other than the original: anything it compares with
    (the whole run of invariance and holdback) must be taken of the text it is given.
    """
    search, text, splits = _start(chunks, fails, budget, deadline, clock)
    text, splits = _shrink_text(search, text, splits)
    splits = _shrink_splits(search, text, splits)
    return list(split_at(text, splits))
