"""``tcr matrix``: dialects by detectors, each judged against its claim; a table and a page."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from tcr.cli import main
from tcr.commands.matrix import NOT_CLAIMED, TEXT, build, render
from tcr.commands.matrix_page import page
from tcr.corpora import ROOT
from tcr.detector.loader import DetectorSpec
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION

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


def test_cells_follow_each_detector_s_claim(tmp_path: Path) -> None:
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    matrix = build(specs, PATHS, rows=ROWS, budget_s=1, save=tmp_path)
    assert matrix.rows == ROWS and matrix.columns == [SPLITS_MARKERS, HERMES_ONLY]
    assert matrix.recordings == {"hermes": 1, "qwen3_coder": 1, TEXT: 0}

    broken = [matrix.cell(row, SPLITS_MARKERS) for row in ROWS]
    assert [cell.state for cell in broken] == ["fail", "fail"]
    for row, cell in zip(ROWS, broken, strict=True):
        # each finding in the row of its dialect, once per signature, with its reproducer
        signatures = [f.signature for f in cell.findings]
        assert len(set(signatures)) == len(signatures)
        assert all(f"/{row}@" in s for s in signatures), signatures
        assert all(f.reproducer.startswith("tcr replay ") for f in cell.findings)
        assert cell.recordings == 1 and cell.examples > 0

    hermes, qwen = matrix.cell("hermes", HERMES_ONLY), matrix.cell("qwen3_coder", HERMES_ONLY)
    assert hermes.state == "pass" and not hermes.findings and hermes.examples > 0
    assert qwen.state == NOT_CLAIMED and qwen.examples == 0
    assert matrix.exit_code == EXIT_VIOLATION
    assert json.loads(json.dumps(matrix.to_dict()))["cells"][0]["row"] == "hermes"


def test_a_correct_detector_passes_every_claimed_row_and_the_text_row(tmp_path: Path) -> None:
    matrix = build([DetectorSpec.load(HERMES_ONLY)], PATHS, budget_s=1, save=tmp_path)
    assert matrix.rows[-1] == TEXT and "hermes" in matrix.rows
    states = {row: matrix.cell(row, HERMES_ONLY).state for row in matrix.rows}
    assert states == {row: "pass" if row in ("hermes", TEXT) else NOT_CLAIMED for row in states}
    assert matrix.exit_code == EXIT_OK


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["matrix", *args])
    return result.exit_code, result.output


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
    assert lines[-1].startswith("1 rows, 2 detectors: 2 claimed cells, 1 with findings (")
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and "http" not in text  # nothing fetched


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


def test_the_page_marks_each_cell_and_escapes_what_it_shows(tmp_path: Path) -> None:
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    text = page(build(specs, PATHS[:1], rows=ROWS, budget_s=1, save=tmp_path))
    # the broken one fails both rows (fuzz writes Qwen3-Coder blocks with no recording)
    assert text.count('<td class="fail"') == 2 and text.count('<td class="pass"') == 1
    assert text.count('<td class="unclaimed"') == 1
    assert "&lt;tool_call&gt;" in text and "<tool_call>" not in text


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


def test_piped_the_table_keeps_each_detector_s_name_whole(tmp_path: Path) -> None:
    """Piped, the width is whatever the console guesses (80, or a terminal on stdin): a
    detector's name is never folded across lines, whatever that width is."""
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    matrix = build(specs, PATHS[:1], rows=ROWS, budget_s=1, save=tmp_path)
    for width in (30, 80):
        out = io.StringIO()
        render(matrix, Console(file=out, width=width, soft_wrap=True))
        assert SPLITS_MARKERS in out.getvalue() and HERMES_ONLY in out.getvalue(), out.getvalue()
