"""The progress of a fuzz run: phase, time left, examples per dialect, findings so far."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.commands import fuzz as fuzz_command
from tcr.detector.broken import per_chunk_markers
from tcr.fuzz import FuzzReport, run
from tcr.fuzz.report import progress_line


def _reports(**options: object) -> list[FuzzReport]:
    seen: list[FuzzReport] = []

    def progress(report: FuzzReport) -> None:
        seen.append(FuzzReport(**{f: getattr(report, f) for f in FuzzReport.__slots__}))

    run(save=None, on_progress=progress, **options)  # type: ignore[arg-type]
    return seen


def test_progress_says_the_phase_and_counts_generated_examples_per_claimed_dialect() -> None:
    seen = _reports(max_examples=500, dialects=["hermes", "qwen3_coder"], corpus=[])
    assert [r.phase for r in seen][:2] == ["cost", "generate"]
    assert {r.phase for r in seen[1:]} == {"generate"}
    last = seen[-1]
    assert set(last.by_dialect) == {"hermes", "qwen3_coder"}
    assert 0 < last.by_dialect["hermes"] <= last.generated


def test_mutated_batches_are_the_mutate_phase() -> None:
    seen = _reports(max_examples=750, dialects=["hermes"])  # batch 1 of 3 mutates (BATCH: 250)
    assert {"generate", "mutate"} <= {r.phase for r in seen}


def test_a_new_finding_is_reported_while_it_is_shrunk() -> None:
    seen = _reports(
        detector=per_chunk_markers, max_examples=600, dialects=["hermes"], corpus=[], exitfirst=True
    )
    shrinking = [r for r in seen if r.phase == "shrink"]
    # Counted up to the example that showed it, in the batch being run too.
    assert shrinking and all(r.shrinking and r.examples > 0 for r in shrinking)


def test_line_says_phase_examples_time_left_findings_and_dialects() -> None:
    report = FuzzReport("x:y", 0, 60.0, None, ("hermes", "qwen3_coder"))
    report.generated, report.mutated, report.phase = 12_000, 345, "mutate"
    report.by_dialect = {"hermes": 9_000, "qwen3_coder": 3_000}
    line = progress_line(report, elapsed=14.2)
    assert line == (
        "fuzzing (mutate): 12,345 examples in 14 s, 46 s left, 0 findings; "
        "hermes 9,000, qwen3_coder 3,000"
    )


def test_line_counts_examples_left_without_a_budget_and_names_what_is_shrunk() -> None:
    report = FuzzReport("x:y", 0, None, 5000, ("hermes",))
    report.generated, report.phase = 1000, "shrink"
    report.shrinking = "no_leak/leaked/hermes"
    line = progress_line(report, elapsed=3.0)
    assert (
        line == "fuzzing (shrink no_leak/leaked/hermes): 1,000 of 5,000 examples in 3 s, 0 findings"
    )


def test_piped_fuzz_prints_plain_progress_lines_to_stderr_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fuzz_command, "PLAIN_EVERY", 0.0)  # a line per report, not per 5 s
    result = CliRunner().invoke(main, ["fuzz", "--max-examples", "250", "--dialect", "hermes"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("fuzzing (") for line in lines), lines
    assert "\x1b" not in result.stderr and "fuzzing" not in result.stdout
