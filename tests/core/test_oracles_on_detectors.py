"""The oracles on real detectors: the reference passes everything, each seeded bug is caught where it happens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from messages import CASES, expectation

from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.detector.formats import HOLDBACK_BOUND
from tcr.oracle import TRACE_CHECKS, Violation, check_trace, warm_cold_verdict
from tcr.rechunk import Chunking, parse_strategy
from tcr.trace import run_trace


def every_chunking(text: str) -> Iterator[Chunking[str]]:
    """Whole, one character at a time, every 2-way split, around every marker, 200 seeded random."""
    for spec in ("whole", "char", "exhaustive", "boundary"):
        yield from parse_strategy(spec).chunkings(text)
    yield from parse_strategy("random:8").chunkings(text, runs=200, seed=2)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.slow
def test_reference_detector_passes_every_oracle_under_every_chunking(case: str) -> None:
    text, expected = CASES[case]
    want = expectation(expected)
    whole = run_trace(StreamDetector(), [text])
    runs = 0
    for chunking in every_chunking(text):
        verdict = check_trace(
            run_trace(StreamDetector(), chunking.chunks), whole=whole, expectation=want
        )
        assert verdict.ok, f"{case} {chunking.label}: {verdict.violations}"
        assert set(verdict.ran) == set(TRACE_CHECKS)
        runs += 1
    assert runs > 200 + len(text)


@pytest.mark.parametrize("case", CASES)
def test_reference_detector_is_warm_equals_cold(case: str) -> None:
    text, _ = CASES[case]
    for chunking in parse_strategy("random:5").chunkings(text, runs=5, seed=3):
        verdict = warm_cold_verdict(StreamDetector, chunking.chunks)
        assert verdict.ok and verdict.ran == ("warm_cold",), verdict


def violations(bug: str, chunks: list[str], **kwargs: object) -> list[Violation]:
    factory = BROKEN[bug]
    whole = run_trace(factory(**kwargs), ["".join(chunks)])
    return list(check_trace(run_trace(factory(**kwargs), chunks), whole=whole).violations)


def test_pending_dropped_at_finish_is_a_conservation_violation_at_the_finish_step() -> None:
    found = violations("drops_pending_at_finish", ["Answer: 42 ", "<tool"])
    assert [(v.check, v.chunk, v.offset) for v in found] == [("conservation", 2, 11)]
    assert "lost 5 characters" in found[0].message


def test_marker_matched_one_chunk_at_a_time_is_a_leak_at_the_marker() -> None:
    chunks = ["Hi <tool", "_c", "all>", '{"name": "f", "arguments": {}}', "</tool_call>"]
    found = {v.check: v for v in violations("per_chunk_markers", chunks)}
    assert (found["no_leak"].chunk, found["no_leak"].offset) == (
        2,
        3,
    )  # the chunk that completed it
    assert found["invariance"].offset == 3


def test_duplicated_flushed_prefix_is_a_conservation_violation_where_it_repeats() -> None:
    found = violations("duplicates_flushed_prefix", ["a <tool", "s do not"])
    conservation = [v for v in found if v.check == "conservation"]
    assert [(v.chunk, v.offset) for v in conservation] == [(1, 7)]
    assert "duplicated" in conservation[0].message


def test_text_held_until_finish_breaks_the_holdback_bound_as_soon_as_it_passes_it() -> None:
    found = violations("holds_all_text", ["abcd"] * (HOLDBACK_BOUND // 2))
    first_over = HOLDBACK_BOUND // 4  # 4 * (first_over + 1) characters held > the bound
    assert [(v.check, v.chunk) for v in found] == [("holdback", first_over)]
    assert f"holds back {4 * (first_over + 1)} characters" in found[0].message


@pytest.mark.parametrize(
    ("bug", "chunks", "kwargs", "check"),
    [
        (
            "per_chunk_closing",
            ['<tool_call>{"name": "f", "arguments": {}}</tool_', "call> ok"],
            {},
            "invariance",
        ),
        (
            "undeclared_clears_buffer",
            ['<tool_call>{"name": "g", "arguments": {}}</tool_call>'],
            {"tools": ["f"]},
            "conservation",
        ),
        (
            "preamble_settles",
            ["Sure. ", '<tool_call>{"name": "f", "arguments": {}}</tool_call>'],
            {},
            "no_leak",
        ),
        (
            "holds_non_call_json",
            ['{"answer": 42}', " and a sentence after it, long enough to pass the holdback bound."],
            {},
            "holdback",
        ),
    ],
)
def test_every_other_seeded_bug_is_caught(
    bug: str, chunks: list[str], kwargs: dict[str, object], check: str
) -> None:
    assert check in {v.check for v in violations(bug, chunks, **kwargs)}
