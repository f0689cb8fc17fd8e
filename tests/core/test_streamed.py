"""A run judged as it streams gives the held trace's verdict, and keeps nothing per chunk."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from itertools import pairwise

import crashing_detectors
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages import CASES, expectation
from toy_detectors import ForeignAdapter, ForgetfulReset, RaisesOnThirdChunk

from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.judge import Judge
from tcr.rechunk import Cuts, parse_strategy
from tcr.streamed import streamed_verdict

# The reference, every seeded bug, detectors that crash or carry no raw spans.
DETECTORS: dict[str, Callable[..., object]] = {
    "reference": StreamDetector,
    **BROKEN,
    "feed_raises": crashing_detectors.feed_raises,
    "text_not_str": crashing_detectors.text_not_str,
    "raises_on_third_chunk": lambda tools=None: RaisesOnThirdChunk(),
    "foreign": lambda tools=None: ForeignAdapter(),
}
NOISE = st.text(alphabet="ab <>{}[]|/_\"':\n", max_size=12)


@st.composite
def messages(draw: st.DrawFn) -> tuple[str, dict[str, object] | None, list[str]]:
    """A case's text, perhaps with text around it (then no expectation), cut anywhere."""
    text, events = CASES[draw(st.sampled_from(sorted(CASES)))]
    before, after = draw(NOISE), draw(NOISE)
    expect = expectation(events) if not before + after else None
    text = before + text + after
    cuts = draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12, unique=True))
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return text, expect, [text[a:b] for a, b in pairwise(bounds) if b > a]


@pytest.mark.parametrize("name", sorted(DETECTORS))
@settings(max_examples=60, deadline=None)
@given(message=messages())
def test_a_streamed_verdict_is_the_held_traces(
    name: str, message: tuple[str, dict[str, object] | None, list[str]]
) -> None:
    text, expect, chunks = message
    judge = Judge(DETECTORS[name], text, expectation=expect, timeout=10.0)
    assert judge.verdict(chunks, streamed=True) == judge.verdict(chunks)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reference_passes_every_case_streamed_without_a_held_run(case: str) -> None:
    text, events = CASES[case]
    judge = Judge(StreamDetector, text, expectation=expectation(events))
    for spec in ("char", "random:4", "tokens"):
        for chunking in parse_strategy(spec).chunkings(text, runs=3):
            passed = streamed_verdict(
                judge.detector(),
                chunking.chunks,
                judge._streamed_reference(),
                text=text,
                checks=judge.trace_checks,
                expectation=judge.expectation,
                bound=judge.bound,
                leak=judge.leak,
                shown_anyway=judge._shown_anyway,
            )
            held = judge.verdict(chunking.chunks, checks=judge.trace_checks)
            assert passed is not None and passed == held, chunking.label


def test_a_crash_is_told_from_the_streamed_run_alone() -> None:
    # The flaky detector answers every other detector made otherwise: a second, held run
    # of the same chunking would not crash. The streamed run is the one judged.
    text = 'Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    judge = Judge(crashing_detectors.flaky, text, checks=["crash", "conservation"])
    chunks = [text[:5], text[5:]]
    verdicts = {judge.verdict(chunks, streamed=True).ok for _ in range(4)}
    assert verdicts == {True, False}


@pytest.mark.slow  # 128,000 characters fed one at a time, twice, traced
def test_a_char_level_run_streamed_keeps_nothing_per_character() -> None:
    text = "Plain prose with no marker in it, fed one character at a time. " * 2_000
    judge = Judge(StreamDetector, text)
    chunks = Cuts(text, None, 1)
    judge.whole  # noqa: B018  (made before measuring: it is held for every chunking)
    tracemalloc.start()
    try:
        assert judge.verdict(chunks, checks=judge.trace_checks, streamed=True).ok
        _, streamed_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        assert judge.verdict(chunks, checks=judge.trace_checks).ok
        _, held_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert streamed_peak < len(text) // 4  # a held run's Text per character is ~40 bytes
    assert held_peak > 20 * len(text)


@pytest.mark.parametrize("name", sorted(DETECTORS))
@settings(max_examples=30, deadline=None)
@given(message=messages())
def test_a_streamed_warm_cold_verdict_is_the_held_ones(
    name: str, message: tuple[str, dict[str, object] | None, list[str]]
) -> None:
    text, _, chunks = message
    judge = Judge(DETECTORS[name], text, timeout=10.0)
    assert judge.warm_cold(chunks, streamed=True) == judge.warm_cold(chunks)


def test_a_streamed_warm_cold_finds_a_reset_that_forgets() -> None:
    text = 'Hi <tool_call>{"name": "f", "arguments": {}}</tool_call> bye'
    judge = Judge(ForgetfulReset, text)
    held = judge.warm_cold(list(text))
    assert not held.ok and judge.warm_cold(list(text), streamed=True) == held
