"""``tcr matrix``: dialects by detectors, each judged against its claim; a table and a page."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from tcr.cli import main
from tcr.commands.matrix import NOT_CLAIMED, TEXT, Cell, Matrix, Sighting, build, render
from tcr.commands.matrix_page import page
from tcr.corpora import ROOT
from tcr.detector.loader import DetectorSpec
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.findings import cause
from tcr.replay import run as replay
from tcr.signature import PROXY_ONLY, Signature

REGRESSIONS = ROOT / "regressions"
# a Hermes call, a Qwen3-Coder call, and plain text with no block
PATHS = [
    REGRESSIONS / "format_tool_call_tag_json.msgpack",
    REGRESSIONS / "format_tool_call_tag_qwen3_coder.msgpack",
    REGRESSIONS / "false_start_tools_do_not.msgpack",
]
ROWS = ["hermes", "qwen3_coder"]
SPLITS_MARKERS = "tcr.detector.broken:per_chunk_markers"
HERMES_ONLY = "parsers.shapes:correct_hermes"  # tests/parsers: claims hermes


@pytest.mark.slow  # a whole matrix replayed
def test_cells_follow_each_detector_s_claim(tmp_path: Path) -> None:
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    matrix = build(specs, PATHS, rows=ROWS, budget_s=1, save=tmp_path)
    assert matrix.rows == ROWS and matrix.columns == [SPLITS_MARKERS, HERMES_ONLY]
    assert matrix.recordings == {"hermes": 1, "qwen3_coder": 1, TEXT: 0}

    broken = [matrix.cell(row, SPLITS_MARKERS) for row in ROWS]
    assert [cell.state for cell in broken] == ["fail", "fail"]
    for row, cell in zip(ROWS, broken, strict=True):
        # each finding in the row of its dialect, once per cause, with its reproducer
        causes = [f.cause for f in cell.findings]
        assert len(set(causes)) == len(causes)
        assert all(f"/{row}@" in f.signature for f in cell.findings), cell.findings
        assert all(f.reproducer.startswith("tcr replay ") for f in cell.findings)
        assert cell.recordings == 1 and cell.examples > 0

    hermes, qwen = matrix.cell("hermes", HERMES_ONLY), matrix.cell("qwen3_coder", HERMES_ONLY)
    assert hermes.state == "pass" and not hermes.findings and hermes.examples > 0
    assert qwen.state == NOT_CLAIMED and qwen.examples == 0
    assert matrix.exit_code == EXIT_VIOLATION
    assert json.loads(json.dumps(matrix.to_dict()))["cells"][0]["row"] == "hermes"


@pytest.mark.slow  # a whole matrix replayed
def test_a_cell_s_findings_are_replay_s_for_its_dialect(tmp_path: Path) -> None:
    """One bug, one finding: a marker split across chunks fails invariance, no_leak and
    expected in each dialect, and replay reports it once (tcr.findings); so does a cell,
    with the reproducer replay shows for that dialect."""
    paths = PATHS[:2]
    report = replay(paths, detector=SPLITS_MARKERS)
    matrix = build([DetectorSpec.load(SPLITS_MARKERS)], paths, rows=ROWS, budget_s=0.2,
                   save=tmp_path)  # fmt: skip
    for row in ROWS:
        replayed = [
            (finding.cause, next(g for g in finding.shown if g.signature.dialect == row))
            for finding in report.causes
            if row in finding.dialects
        ]
        expected = [(c, group.first[1].reproducer) for c, group in replayed]
        cell = matrix.cell(row, SPLITS_MARKERS)
        found = [(f.cause, f.reproducer) for f in cell.findings if "replay" in f.found_by]
        assert found == expected and len(expected) == 1, (row, cell.findings)
        signatures = {g.signature for c, g in replayed}
        assert cell.findings[0].failures >= sum(len(g.failures) for _, g in replayed)
        assert len(signatures) == 1 or "(invariance, no_leak" in cell.findings[0].label


def _sighting(check: str, found_by: str, count: int, proxy: bool = True) -> Sighting:
    signature = Signature(check, "missing ToolCall", "hermes", "split-in-opener", proxy)
    return Sighting(signature, found_by, count, f"tcr replay {found_by}.msgpack --check {check}")


def test_a_cause_found_by_replay_and_fuzz_is_one_finding_with_replay_s_reproducer() -> None:
    cell = Cell("pass")
    expected = _sighting("expected", "replay", 3)
    invariance = _sighting("invariance", "replay", 2)
    fuzzed = _sighting("conservation", "fuzz", 1)
    cell.add(cause(expected.signature), [expected, invariance])
    cell.add(cause(fuzzed.signature), [fuzzed])
    (finding,) = cell.findings
    assert cell.state == "fail"
    assert finding.reproducer == invariance.reproducer  # replay's, its first check's
    assert (finding.failures, finding.examples, finding.found_by) == (5, 1, "replay and fuzz")
    assert finding.label == (
        f"split-in-opener (conservation, invariance, expected) in hermes ({PROXY_ONLY})"
    )
    assert finding.counts == "replay: 5 failures, fuzz: 1 example; 3 signatures"


def test_a_cell_finding_is_proxy_only_when_every_signature_of_it_is() -> None:
    cell = Cell("pass")
    first, other = _sighting("no_leak", "replay", 1), _sighting("no_leak", "fuzz", 1, False)
    cell.add(cause(first.signature), [first])
    assert cell.findings[0].label == f"{first.signature} ({PROXY_ONLY})"
    assert cell.findings[0].counts == "replay: 1 failure"
    cell.add(cause(other.signature), [other])
    (finding,) = cell.findings
    assert not finding.proxy_only and PROXY_ONLY not in finding.label


def test_a_correct_detector_passes_every_claimed_row_and_the_text_row(tmp_path: Path) -> None:
    matrix = build([DetectorSpec.load(HERMES_ONLY)], PATHS, budget_s=1, save=tmp_path)
    assert matrix.rows[-1] == TEXT and "hermes" in matrix.rows
    states = {row: matrix.cell(row, HERMES_ONLY).state for row in matrix.rows}
    assert states == {row: "pass" if row in ("hermes", TEXT) else NOT_CLAIMED for row in states}
    assert matrix.exit_code == EXIT_OK


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["matrix", *args])
    return result.exit_code, result.output


@pytest.mark.slow  # a whole matrix replayed, and fuzzed for its budget
def test_the_command_prints_the_table_the_findings_and_a_summary(tmp_path: Path) -> None:
    html = tmp_path / "matrix.html"
    args = [*map(str, PATHS), "--detector", SPLITS_MARKERS, "--detector", HERMES_ONLY]
    args += ["--row", "hermes", "--budget", "1s", "--save", str(tmp_path), "--html", str(html)]
    code, out = invoke(*args)
    assert code == EXIT_VIOLATION, out
    lines = out.splitlines()
    assert lines[0] == "tcr matrix"
    assert "hermes in tcr.detector.broken:per_chunk_markers" in out
    assert "tcr replay " in out and "--detector tcr.detector.broken:per_chunk_markers" in out
    assert lines[-1].startswith("1 row, 2 detectors: 2 claimed cells, 1 with findings (1 finding")
    assert "1 finding: split-in-opener" in out  # one bug, one finding
    assert not re.search(r"\b1 (times|rows|findings|failures|examples|signatures)\b", out), out
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and "http" not in text  # nothing fetched
    assert "<summary>1 finding</summary>" in text and "1 dialect &times; 2 detectors" in text
    assert "&times;)" not in text  # counts are words ("replay: 12 failures"), not a sign


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--row", "nope"], "unknown dialect 'nope'"),
        (["--budget", "soon"], "budget"),
        (["--detector", "no.such.module:f"], "cannot import"),
        (["missing.msgpack"], "missing.msgpack"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args: list[str], message: str) -> None:
    code, out = invoke(*args)
    assert code == EXIT_ERROR
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tcr matrix: ") and message in lines[0], out


@pytest.mark.slow  # a whole matrix replayed
def test_the_page_marks_each_cell_and_escapes_what_it_shows(tmp_path: Path) -> None:
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    text = page(build(specs, PATHS[:1], rows=ROWS, budget_s=1, save=tmp_path))
    # the broken one fails both rows (fuzz writes Qwen3-Coder blocks with no recording)
    assert text.count('<td class="fail"') == 2 and text.count('<td class="pass"') == 1
    assert text.count('<td class="unclaimed"') == 1
    assert text.count("<summary>1 finding</summary>") == 2  # one bug: one finding a cell
    assert "split-in-opener (" in text and "replay: " in text


def test_the_page_escapes_what_it_shows() -> None:
    leak = Signature("no_leak", "<tool_call>", "hermes", "split-in-opener")
    cell = Cell("pass", recordings=1)
    cell.add(cause(leak), [Sighting(leak, "replay", 1, "tcr replay 'a <b>.msgpack'")])
    matrix = Matrix(["hermes"], ["x:<y>"], ["every dialect"], {"hermes": 1},
                    {("hermes", "x:<y>"): cell}, 1.0, 0)  # fmt: skip
    text = page(matrix)
    assert "no_leak/&lt;tool_call&gt;/hermes@split-in-opener" in text
    assert "a &lt;b&gt;.msgpack" in text and "x:&lt;y&gt;" in text
    assert "<tool_call>" not in text and "<b>" not in text and "<y>" not in text


@pytest.mark.slow
def test_a_detector_over_the_time_limit_is_a_timeout_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fuzz shrinks a finding for SHRINK_SECONDS, each try here taking the wall limit: cut short
    monkeypatch.setattr("tcr.fuzz.runner.SHRINK_SECONDS", 0.5)
    hangs = DetectorSpec.load("crashing_detectors:hangs_on_a_call", dialects=["hermes"])
    # no recordings: replay has none to hang on, fuzz writes a Hermes call at once
    matrix = build([hangs], [], rows=["hermes"], budget_s=0.5, save=tmp_path, timeout=0.1)
    signatures = [f.signature for f in matrix.cell("hermes", hangs.name).findings]
    assert any(s.startswith("crash/timeout") for s in signatures), signatures


def test_the_command_takes_the_time_limit() -> None:
    code, out = invoke("--row", "hermes", "--timeout", "0")
    assert code == EXIT_ERROR
    assert out.strip() == "tcr matrix: --timeout must be a positive number of seconds, not 0"


@pytest.mark.slow  # a whole matrix replayed
def test_piped_the_table_keeps_each_detector_s_name_whole(tmp_path: Path) -> None:
    """Piped, the width is whatever the console guesses (80, or a terminal on stdin): a
    detector's name is never folded across lines, whatever that width is."""
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    matrix = build(specs, PATHS[:1], rows=ROWS, budget_s=1, save=tmp_path)
    for width in (30, 80):
        out = io.StringIO()
        render(matrix, Console(file=out, width=width, soft_wrap=True))
        assert SPLITS_MARKERS in out.getvalue() and HERMES_ONLY in out.getvalue(), out.getvalue()


@pytest.mark.slow  # as above
def test_a_recording_named_with_a_byte_that_is_no_utf8_leaves_a_whole_page(
    tmp_path: Path,
) -> None:
    # issue 36: the page was 0 bytes and the command a UnicodeEncodeError
    named = tmp_path / os.fsdecode(b"bad\xff.msgpack")
    named.write_bytes(PATHS[0].read_bytes())
    html = tmp_path / "matrix.html"
    args = [str(named), "--detector", SPLITS_MARKERS, "--row", "hermes", "--budget", "0.2s"]
    result = CliRunner().invoke(
        main, ["matrix", *args, "--save", str(tmp_path), "--html", str(html)]
    )
    assert result.exit_code == EXIT_VIOLATION, result.output
    result.stdout_bytes.decode("utf-8")  # strict: no lone surrogate reached stdout
    text = html.read_bytes().decode("utf-8")
    assert text.endswith("</html>\n") and "bad\\xff.msgpack" in text
