"""Replay reports every distinct finding once, grouped by signature, and shrinking keeps the
signature: the printed reproducer and the pinned snippet fail the same way (ARCHITECTURE.md §7.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reproducers import reproduces
from rich.console import Console

from tcr.corpora import bundled
from tcr.corpus import Frame, new_header, write_recording
from tcr.detector.broken import BROKEN
from tcr.replay import Report, run
from tcr.replay.report import found_count, render
from tcr.signature import WHOLE

DETECTOR = "signature_detectors:renames_and_loses_text"
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
EXPECT = {
    "text": "Let me check.  Done.",
    "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
}


def recording(folder: Path, name: str, chunks: list[str]) -> Path:
    path = folder / f"{name}.msgpack"
    frames = [Frame(i * 1_000_000, c) for i, c in enumerate(chunks)]
    return write_recording(path, new_header("chunks"), frames, expect=EXPECT)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    recording(folder, "call", ["Let me check. ", CALL[:30], CALL[30:], " Done."])
    recording(folder, "call_again", ["Let me check. ", CALL, " Done."])
    return folder


def test_a_chunk_dependent_failure_shrinks_to_a_split_not_to_whole(corpus: Path) -> None:
    report = run([corpus / "call.msgpack"], strategies=["original"], detector=DETECTOR)
    by_kind = {f.signature.kind: f for _, f in report.failures}
    # The whole run already calls the wrong name: that finding needs no split.
    renamed = by_kind["ToolCall name differs"]
    assert renamed.signature.shape == WHOLE and renamed.splits == ()
    # Text lost after a call only when the call is split: it keeps a split inside the block.
    # Its dialect is the block the lost text lies in: none (text lost after a block is the
    # same finding as text lost with no block before it).
    lost = by_kind["missing Text"]
    assert str(lost.signature) == "expected/missing Text@split-in-body"
    assert len(lost.splits) == 1
    for outcome, failure in report.failures:
        reproduces(outcome, failure)


def test_one_check_reports_each_distinct_failure(corpus: Path) -> None:
    report = run(
        [corpus / "call.msgpack"], strategies=["original"], detector=DETECTOR, checks=["expected"]
    )
    kinds = sorted(f.signature.kind for _, f in report.failures)
    assert kinds == ["ToolCall name differs", "missing Text"]


def test_findings_are_grouped_by_signature_across_recordings_and_strategies(
    corpus: Path,
) -> None:
    report = run([corpus], strategies=["original", "char", "whole"], detector=DETECTOR)
    groups = {str(g.signature): g for g in report.findings}
    renamed = groups["expected/ToolCall name differs/hermes@whole"]
    assert (renamed.recordings, renamed.strategies) == (2, 3)
    assert len(groups) == len(report.findings)  # each signature once
    assert sum(len(g.failures) for g in report.findings) == len(report.failures)


def test_the_report_shows_each_finding_once_with_where_it_showed(corpus: Path) -> None:
    report = run([corpus], strategies=["original", "char", "whole"], detector=DETECTOR)
    console = Console(record=True, width=400)
    render(report, console)
    out = console.export_text()
    assert out.count("expected/ToolCall name differs/hermes@whole: 2 recordings, 3 strategies") == 1
    last = out.rstrip().splitlines()[-1]
    assert found_count(len(report.causes), len(report.findings), len(report.failures)) in last
    assert out.count("pin it as a regression test") == len(report.causes)


def test_under_a_cause_s_heading_the_case_shown_is_named_by_its_own_signature(
    corpus: Path,
) -> None:
    report = run([corpus], strategies=["original", "char", "whole"], detector=DETECTOR)
    console = Console(record=True, width=400)
    render(report, console)
    lines = console.export_text().splitlines()
    (cause,) = [c for c in report.causes if len(c.items) > 1]  # split-in-body, three checks
    heading = next(i for i, line in enumerate(lines) if line.startswith(f"{cause.name}: "))
    shown = cause.shown[0].signature
    assert shown.label != cause.name
    assert lines[heading + 1].startswith(f"{shown.label} in ")  # not the check alone
    single = next(c for c in report.causes if len(c.items) == 1)
    heading = next(
        i for i, line in enumerate(lines) if line.startswith(single.items[0].signature.label)
    )
    assert lines[heading + 1].startswith(f"{single.items[0].signature.check} in ")  # said above


def test_json_lists_the_findings_and_each_failure_names_its_signature(corpus: Path) -> None:
    report = run([corpus], strategies=["original"], detector=DETECTOR)
    data = json.loads(json.dumps(report.to_dict()))
    assert [f["signature"] for f in data["findings"]] == [str(g.signature) for g in report.findings]
    failure = data["outcomes"][0]["failures"][0]
    assert {"signature", "kind", "dialect", "shape", "check", "message"} <= set(failure)


def test_exit_codes_and_exitfirst_are_unchanged(corpus: Path) -> None:
    report = run([corpus], strategies=["original", "char"], detector=DETECTOR, exitfirst=True)
    assert report.stopped_early and report.exit_code == 1
    assert len(report.outcomes) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_finding_over_the_bundled_corpora_reproduces_its_signature(name: str) -> None:
    # The 2 MB too-long block is left out: it shows nothing the others do not, at 50x the time.
    files = [p for p in bundled() if p.stat().st_size < 1_000_000]
    spec = f"tcr.detector.broken:{name}"
    report = run(files, strategies=["original", "char", "random"], runs=3, detector=spec)
    if not report.findings:
        pytest.skip(f"{name} fails no bundled recording under these strategies")
    for group in report.findings:  # each distinct finding, as it is printed
        reproduces(*group.first)


@pytest.mark.slow
@pytest.mark.process
def test_jobs_keep_the_same_findings_as_one_process(corpus: Path) -> None:
    one = run([corpus], strategies=["original", "char", "random"], detector=DETECTOR)
    two = run([corpus], strategies=["original", "char", "random"], detector=DETECTOR, jobs=2)
    assert [(o.path, o.strategy, [f.signature for f in o.failures]) for o in two.outcomes] == [
        (o.path, o.strategy, [f.signature for f in o.failures]) for o in one.outcomes
    ]


def test_report_type_is_reexported() -> None:
    assert Report().findings == []
