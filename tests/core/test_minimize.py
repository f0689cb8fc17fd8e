"""The minimizer: a failing chunking shrinks to the fewest splits, then the shortest text.

How replay uses it: ARCHITECTURE.md §7.4.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import accumulate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcr.detector.broken import BROKEN
from tcr.detector.loader import Factory, load_factory, make_detector
from tcr.minimize import Minimized, NotFailing, Predicate, minimize, minimize_splits, minimize_text
from tcr.oracle import check_trace
from tcr.rechunk import parse_strategy, split_at
from tcr.trace import run_trace

MESSAGE = (
    "Sure, I can help you plan the trip. First I need the current weather in Paris, "
    "so let me look it up before suggesting what to pack.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", '
    '"days": 3}}\n</tool_call>\n'
    "While that runs: do you prefer museums or walks along the Seine? I will adjust the plan."
)
# Ends in a held marker prefix, the shape of PR #2262's swallowed buffer (ARCHITECTURE.md §15.3).
TRAILING_PREFIX = MESSAGE + " Meanwhile, the raw output looked like <tool"
TEXT = "".join(chr(ord("a") + i % 26) for i in range(120))  # for synthetic predicates


def fails_check(factory: Factory, check: str) -> Predicate:
    """What the replay runner asks: does this chunking still fail ``check``? The whole run
    is taken of the chunking's own text, so the predicate also judges shortened texts."""

    def fails(chunks: Sequence[str]) -> bool:
        whole = run_trace(make_detector(factory), ["".join(chunks)], states=False)
        trace = run_trace(make_detector(factory), chunks, states=False)
        return any(v.check == check for v in check_trace(trace, whole=whole).violations)

    return fails


def offsets_of(chunks: Sequence[str]) -> set[int]:
    return set(accumulate(len(c) for c in chunks[:-1]))


def first_failing_random_chunking(text: str, fails: Predicate) -> tuple[str, ...]:
    for chunking in parse_strategy("random:8").chunkings(text, runs=50, seed=1):
        if fails(chunking.chunks):
            return chunking.chunks
    raise AssertionError("no random:8 chunking fails")


def counting(fails: Predicate) -> tuple[Predicate, list[tuple[str, ...]]]:
    seen: list[tuple[str, ...]] = []

    def counted(chunks: Sequence[str]) -> bool:
        seen.append(tuple(chunks))
        return fails(chunks)

    return counted, seen


LEAKS = fails_check(BROKEN["per_chunk_markers"], "no_leak")
LEAKY = first_failing_random_chunking(MESSAGE, LEAKS)


def test_reference_detector_never_needs_minimizing() -> None:
    reference = load_factory(None)
    chunkings = [
        chunking.chunks
        for spec in ("random:8", "char", "boundary")
        for chunking in parse_strategy(spec).chunkings(MESSAGE, runs=20)
    ]
    for check in ("no_leak", "conservation", "invariance", "holdback"):
        fails = fails_check(reference, check)
        assert not any(fails(chunks) for chunks in chunkings), check


def test_marker_split_leak_shrinks_to_at_most_two_splits() -> None:
    assert len(LEAKY) > 20
    shrunk = minimize_splits(LEAKY, LEAKS)
    assert "".join(shrunk) == MESSAGE
    assert 1 <= len(shrunk) - 1 <= 2
    assert LEAKS(shrunk)


def test_shrunk_marker_split_is_one_minimal() -> None:
    shrunk = minimize_splits(LEAKY, LEAKS)
    splits = sorted(offsets_of(shrunk))
    for dropped in splits:
        assert not LEAKS(split_at(MESSAGE, [k for k in splits if k != dropped])), dropped


def test_dropped_pending_at_finish_shrinks_to_at_most_one_split() -> None:
    fails = fails_check(BROKEN["drops_pending_at_finish"], "conservation")
    start = first_failing_random_chunking(TRAILING_PREFIX, fails)
    shrunk = minimize_splits(start, fails)
    assert len(shrunk) - 1 <= 1
    assert fails(shrunk)


def test_minimize_text_yields_a_much_shorter_text_that_still_fails() -> None:
    shrunk = minimize_text(LEAKY, LEAKS)
    assert len("".join(shrunk)) < len(MESSAGE) // 10
    assert LEAKS(shrunk)


def test_minimize_reports_the_reproducer_and_what_it_started_from() -> None:
    result = minimize(LEAKY, LEAKS, text_too=False)
    assert isinstance(result, Minimized)
    assert result.rechunk == "splits:" + ",".join(map(str, result.splits))
    assert split_at(MESSAGE, result.splits) == list(result.chunks)
    assert (result.original_splits, result.original_length) == (len(LEAKY) - 1, len(MESSAGE))
    assert result.calls > 0


def test_minimize_with_text_too_shrinks_splits_and_text() -> None:
    result = minimize(LEAKY, LEAKS, text_too=True)
    assert "".join(result.chunks) == "<tool_call>"  # the marker a split leaked, nothing else
    assert len(result.splits) == 1


def test_results_are_deterministic() -> None:
    runs = [minimize(LEAKY, LEAKS, text_too=True) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_every_predicate_call_is_a_new_chunking() -> None:
    counted, seen = counting(LEAKS)
    result = minimize(LEAKY, counted, text_too=True)
    assert len(seen) == len(set(seen)) == result.calls


@pytest.mark.parametrize("budget", [1, 2, 5, 9])
def test_budget_caps_predicate_calls_and_keeps_the_best_found(budget: int) -> None:
    counted, seen = counting(LEAKS)
    result = minimize(LEAKY, counted, text_too=True, budget=budget)
    assert len(seen) == result.calls <= budget
    assert LEAKS(result.chunks)
    assert len(result.splits) <= len(LEAKY) - 1


def test_budget_below_one_raises_value_error() -> None:
    with pytest.raises(ValueError, match="budget"):
        minimize_splits(LEAKY, LEAKS, budget=0)


class VirtualClock:
    """Seconds that pass only when a predicate call says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def taking_a_second(fails: Predicate, clock: VirtualClock) -> Predicate:
    def slow(chunks: Sequence[str]) -> bool:
        clock.now += 1.0
        return fails(chunks)

    return slow


@pytest.mark.parametrize("deadline", [1, 2, 5, 9])
def test_a_deadline_stops_the_search_as_a_budget_of_calls_does(deadline: int) -> None:
    clock = VirtualClock()
    counted, seen = counting(taking_a_second(LEAKS, clock))
    result = minimize(LEAKY, counted, text_too=True, deadline=deadline, clock=clock)
    # a call a second: no call once the clock reads the deadline, the best found kept
    assert len(seen) == result.calls == deadline == clock.now
    assert result == minimize(LEAKY, LEAKS, text_too=True, budget=deadline)
    assert LEAKS(result.chunks)


def test_a_deadline_already_passed_still_proves_the_input_fails_and_keeps_it() -> None:
    clock = VirtualClock()
    clock.now = 100.0
    counted, seen = counting(LEAKS)
    assert minimize_splits(LEAKY, counted, deadline=1.0, clock=clock) == list(LEAKY)
    assert len(seen) == 1
    with pytest.raises(NotFailing):  # never "not failing" for want of time
        minimize_text([MESSAGE], LEAKS, deadline=1.0, clock=clock)


def test_a_deadline_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        minimize_splits(LEAKY, LEAKS, deadline=1.0)


def test_non_failing_input_raises_not_failing_a_value_error() -> None:
    with pytest.raises(NotFailing, match="does not fail"):
        minimize_splits(split_at(MESSAGE, [5, 50]), LEAKS)
    with pytest.raises(ValueError, match="does not fail"):
        minimize_text([MESSAGE], LEAKS)


def test_a_predicate_that_raises_propagates() -> None:
    def crashes(chunks: Sequence[str]) -> bool:
        if len(chunks) < len(LEAKY):
            raise RuntimeError("detector exploded")
        return True

    with pytest.raises(RuntimeError, match="exploded"):
        minimize_splits(LEAKY, crashes)


def test_a_failure_that_needs_no_split_shrinks_to_the_whole_text() -> None:
    assert minimize_splits(split_at(TEXT, [3, 40, 77]), lambda chunks: True) == [TEXT]


def test_one_culprit_among_two_thousand_splits_costs_logarithmic_calls() -> None:
    text = "x" * 2001
    culprit = 1234
    counted, seen = counting(lambda chunks: culprit in offsets_of(chunks))
    result = minimize(split_at(text, range(1, 2001)), counted, text_too=False)
    assert result.splits == (culprit,)
    assert len(seen) <= 2 * math.ceil(math.log2(2000)) + 2


def test_text_chunks_that_become_empty_disappear_and_their_splits_merge() -> None:
    def fails(chunks: Sequence[str]) -> bool:
        return len(chunks) >= 2 and "a" in chunks[0] and "b" in chunks[-1]

    assert minimize_text(["xa", "yyy", "bz"], fails) == ["a", "b"]


splits_around = st.sets(st.integers(1, len(TEXT) - 1), max_size=60)


@given(st.integers(1, len(TEXT) - 1), splits_around)
def test_a_single_culprit_split_is_found_exactly(culprit: int, others: set[int]) -> None:
    chunks = split_at(TEXT, sorted(others | {culprit}))
    shrunk = minimize_splits(chunks, lambda c: culprit in offsets_of(c))
    assert offsets_of(shrunk) == {culprit}


@given(st.sets(st.integers(1, len(TEXT) - 1), min_size=2, max_size=2), splits_around)
def test_two_culprit_splits_are_found_exactly(culprits: set[int], others: set[int]) -> None:
    chunks = split_at(TEXT, sorted(others | culprits))
    shrunk = minimize_splits(chunks, lambda c: culprits <= offsets_of(c))
    assert offsets_of(shrunk) == culprits


# --- where a split settles ----------------------------------------------------------

# A failure that needs some text before the marker in an earlier chunk: any split in
# "Sure. " fails, or at the marker's edge (a preamble settles the decision).
PREAMBLE = "Sure. <tool_call>x</tool_call>"
MARKER = PREAMBLE.index("<")


def preamble_settles(chunks: Sequence[str]) -> bool:
    return len(chunks) > 1 and 0 < len(chunks[0]) <= MARKER


def telling(text: str) -> Callable[[int], int]:
    """How telling a split at an offset is, as ``tcr.signature`` ranks places: inside the
    marker (0), at its edge (1), in the text before it (2)."""
    return lambda at: 0 if MARKER < at < MARKER + 11 else 1 if at == MARKER else 2


def test_a_split_settles_where_the_failure_needs_the_least_telling_place() -> None:
    at_edge = [PREAMBLE[:MARKER], PREAMBLE[MARKER:]]
    shrunk = minimize_splits(at_edge, preamble_settles, rank=telling)
    assert preamble_settles(shrunk)
    assert len(shrunk[0]) < MARKER  # in the text: the marker's edge was not what it needed


def test_a_split_that_needs_its_place_stays_there() -> None:
    def inside_marker(chunks: Sequence[str]) -> bool:
        return len(chunks) > 1 and MARKER < len(chunks[0]) < MARKER + 11

    start = [PREAMBLE[: MARKER + 4], PREAMBLE[MARKER + 4 :]]
    assert minimize_splits(start, inside_marker, rank=telling) == start
