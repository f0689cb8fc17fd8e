"""``tcr fuzz`` keeps going: every distinct finding once, with its count, shrunk keeping its
signature and saved as one recording that replays to the same signature (ARCHITECTURE.md §7.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from reproducers import replays_to_its_signature

from tcr.cli import main
from tcr.detector.broken import BROKEN
from tcr.fuzz import FuzzReport, run
from tcr.fuzz.model import Case, Finding
from tcr.fuzz.report import findings
from tcr.fuzz.runner import merge_findings
from tcr.oracle import Check, Violation
from tcr.signature import Signature

TWO_BUGS = "signature_detectors:renames_and_loses_text"


def fuzz_two_bugs(**options: object) -> FuzzReport:
    """The two-bug detector on Hermes calls only, no recordings mutated: a quick search."""
    settings: dict[str, object] = {"max_examples": 500, "seed": 1, "save": None, **options}
    return run(detector=TWO_BUGS, formats=["hermes"], corpus=[], **settings)  # type: ignore[arg-type]


def finding(kind: str, count: int, text: str = "x") -> Finding:
    violation = Violation(Check.EXPECTED, "m", 0, 0, "", kind, "hermes")
    return Finding(
        violation=violation,
        violations=(violation,),
        case=Case((text,), None, None, "test"),
        found_after=1,
        seconds_to_find=0.0,
        shrink_seconds=0.0,
        original_length=1,
        original_splits=0,
        signature=Signature("expected", kind, "hermes", "whole"),
        count=count,
    )


def test_workers_findings_merge_by_signature_with_their_counts_added() -> None:
    merged = merge_findings(
        [
            [finding("missing Text", 3, "a"), finding("extra Text", 1)],
            [finding("missing Text", 4, "b")],
        ]
    )
    assert [(f.signature.kind, f.count, f.case.text) for f in merged] == [
        ("missing Text", 7, "a"),  # the first worker's case, everyone's count
        ("extra Text", 1, "x"),
    ]


@pytest.mark.slow
def test_the_search_goes_on_and_reports_each_distinct_finding_once(tmp_path: Path) -> None:
    report = fuzz_two_bugs(save=tmp_path)
    signatures = [f.signature for f in report.findings]
    assert len(signatures) == len(set(signatures)) >= 2
    kinds = {s.kind for s in signatures}
    assert "ToolCall name differs" in kinds  # the bug any chunking shows
    assert kinds & {"missing Text", "lost at end", "lost"}  # the chunk-dependent one
    assert report.stopped == "max_examples" and report.examples == 500
    assert all(f.count >= 1 for f in report.findings)
    assert sorted(tmp_path.iterdir()) == sorted(f.saved for f in report.findings)  # one each
    for found in report.findings:
        replays_to_its_signature(found)


@pytest.mark.slow
def test_exitfirst_stops_at_the_first_finding_and_max_findings_after_n() -> None:
    first = fuzz_two_bugs(exitfirst=True)
    assert len(first.findings) == 1 and first.stopped == "failure"
    two = fuzz_two_bugs(max_findings=2)
    assert len(two.findings) == 2 and two.stopped == "max_findings"
    assert two.findings[0].signature == first.findings[0].signature


@pytest.mark.slow
@pytest.mark.process
def test_jobs_merge_their_findings_by_signature() -> None:
    report = fuzz_two_bugs(max_examples=1000, jobs=2)
    keys = [f.signature.key for f in report.findings]
    assert len(keys) == len(set(keys)) >= 2


def test_max_findings_must_be_positive() -> None:
    result = CliRunner().invoke(main, ["fuzz", "--max-examples", "1", "--max-findings", "0"])
    assert result.exit_code == 2
    assert "--max-findings must be at least 1, not 0" in result.output


def test_help_names_the_options_that_stop_early() -> None:
    out = CliRunner().invoke(main, ["fuzz", "--help"]).output
    assert "-x, --exitfirst" in out and "--max-findings N" in out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_fuzz_finding_of_a_broken_detector_replays_to_its_signature(
    name: str, tmp_path: Path
) -> None:
    spec = f"tcr.detector.broken:{name}"
    report = run(detector=spec, max_examples=1000, seed=0, corpus=[], save=tmp_path, max_findings=3)
    assert report.findings, f"{name} survived {report.examples} examples"
    for found in report.findings:
        replays_to_its_signature(found)


@pytest.mark.slow
def test_a_split_that_settled_in_the_preamble_stays_there() -> None:
    # preamble_settles stops parsing once a chunk showed text: a split in the preamble or
    # at the marker after it shows it. Cutting the text shrank the preamble to one
    # character and moved the split onto the marker: one more finding. (A split in the
    # body is still one: conservation needs the block open when parsing stops.)
    report = run(
        detector="tcr.detector.broken:preamble_settles",
        formats=["hermes"],
        corpus=[],
        max_examples=300,
        seed=0,
        save=None,
    )
    shapes = [g.cause.shape for g in findings(report)]
    assert shapes[0] == "split-in-text" and "split-at-marker-edge" not in shapes, shapes


@pytest.mark.slow
def test_a_chunking_right_where_the_unsplit_run_is_wrong_is_the_unsplit_runs_finding(
    tmp_path: Path,
) -> None:
    # The parser drops the argument text that comes with a call's name: a whole call is
    # rejected, and an unterminated one, its "{" dropped, is accepted with no arguments.
    # A chunking that splits after the "{" rejects the unterminated call, rightly: it
    # differs from the unsplit run (invariance) and used to be a third finding, blaming
    # the split. Its shrunk case is cut (no truth of its own): the reference's reading
    # tells that the unsplit run is the wrong one.
    detector = "parsers.shapes:arguments_dropped_hermes"
    report = run(detector=detector, max_examples=2000, seed=0, save=tmp_path)
    causes = [str(g.cause) for g in findings(report)]
    assert causes == [
        "expected/Rejected instead of ToolCall@whole",
        "expected/extra ToolCall@whole",
    ], causes
    for found in report.findings:
        replays_to_its_signature(found)
