"""``tcr replay`` reports at pytest's levels: marks by default, ``-v`` the table, ``-q`` the
failures and the summary line alone; the summary line is always last."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from itertools import accumulate, takewhile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT, bundled
from tcr.corpus import Frame, new_header, write_recording
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.replay.progress import gaps
from tcr.replay.report import Level, short_path

SPLITS_MARKERS = "tcr.detector.broken:per_chunk_markers"
CRASHES = "crashing_detectors:feed_raises"
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QUICK = ("--rechunk", "original", "--rechunk", "whole")
ESCAPE = "\x1b"


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two recordings: one whose marker arrives split (the broken detector leaks it), one
    plain text; the working directory is their parent."""
    folder = tmp_path / "corpus"
    chunks = [["Let me check. ", CALL[:5], CALL[5:], " Done."], ["No call here."]]
    for name, pieces in zip(("split", "plain"), chunks, strict=True):
        frames = [Frame(i * 1_000_000, c) for i, c in enumerate(pieces)]
        write_recording(folder / f"{name}.msgpack", new_header("chunks"), frames)
    monkeypatch.chdir(tmp_path)
    return folder


def tcr(*args: str) -> tuple[int, list[str]]:
    """The exit code and the lines on stdout (stderr has the progress and the errors)."""
    result = CliRunner().invoke(main, ["replay", *args])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("judged against: "), result.stdout  # every report's first line
    return result.exit_code, lines[1:]


def test_a_passing_replay_of_every_bundled_recording_fits_in_a_few_lines() -> None:
    code, lines = tcr(*QUICK)
    assert code == EXIT_OK, "\n".join(lines)
    assert len(lines) <= 8, "\n".join(lines)  # a line per folder, however many recordings
    assert lines[-1].startswith(f"{len(bundled())} recordings, 3 strategies and the cost probe")
    assert lines[-1].endswith(": all checks pass")


@pytest.mark.slow
@pytest.mark.process
def test_a_piped_tcr_replay_prints_a_few_lines_and_no_escape_codes(tmp_path: Path) -> None:
    tcr_script = Path(sys.executable).with_name("tcr")
    env = {**os.environ, "TERM": "xterm-256color"}  # a terminal name must not bring colours
    started = time.monotonic()
    # From outside the bundled corpora, as after `pip install .`: in a clone's root with an
    # editable install they are inside the working directory and shown as corpora/recorded/.
    done = subprocess.run(
        [str(tcr_script), "replay"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    elapsed = time.monotonic() - started
    lines = done.stdout.splitlines()
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert len(lines) <= 8, done.stdout
    assert lines[-1].startswith(f"{len(bundled())} recordings, 6 strategies")
    assert lines[-1].endswith(": all checks pass")
    assert ESCAPE not in done.stdout and ESCAPE not in done.stderr
    # Never silent for long: a progress line on stderr after each of gaps()'s waits (EVERY
    # seconds twice, then doubling), one fewer allowed for a line due as the run ended.
    progress = done.stderr.splitlines()
    assert all(line.startswith("tcr replay: ") for line in progress), done.stderr
    due = list(takewhile(lambda at: at <= elapsed, accumulate(gaps())))
    assert len(progress) >= len(due) - 1, (elapsed, done.stderr)


def test_default_shows_a_group_of_marks_per_recording_one_mark_per_strategy(
    corpus: Path,
) -> None:
    code, lines = tcr("corpus", *QUICK, "--check", "no_leak", "--detector", SPLITS_MARKERS)
    assert code == EXIT_VIOLATION
    assert lines[0] == "corpus/ .. F."  # plain passes twice; split fails as recorded


def test_a_folder_whose_every_run_passes_shows_its_marks_once_with_a_count(
    corpus: Path,
) -> None:
    code, lines = tcr("corpus", *QUICK, "--check", "no_leak")  # the reference: both pass
    assert code == EXIT_OK
    assert lines[0] == "corpus/ .. (2 recordings)"
    bundled_lines = tcr(*QUICK)[1]  # every bundled recording: one line per folder
    assert [line.split(" ")[0] for line in bundled_lines[:2]] == ["recorded/", "regressions/"]
    assert all(line.endswith(" recordings)") for line in bundled_lines[:2]), bundled_lines


def test_a_folder_of_one_recording_is_shown_as_that_recording(corpus: Path) -> None:
    code, lines = tcr("corpus/plain.msgpack", *QUICK, "--check", "no_leak")
    assert code == EXIT_OK
    assert lines[0] == "corpus/plain.msgpack .."


def test_bundled_recordings_are_shown_relative_to_the_bundled_corpora() -> None:
    path = ROOT / "regressions" / "split_marker_mlx.msgpack"
    assert short_path(str(path)) == "regressions/split_marker_mlx.msgpack"
    assert short_path("corpus/plain.msgpack") == "corpus/plain.msgpack"


def test_the_failures_are_shown_in_full_under_the_marks(corpus: Path) -> None:
    _, lines = tcr("corpus", *QUICK, "--check", "no_leak", "--detector", SPLITS_MARKERS)
    text = "\n".join(lines)
    assert (
        "no_leak/<tool_call>/hermes@split-in-opener (only when a proxy re-chunks): "
        "1 recording, 1 strategy"
    ) in text
    assert "reproduce with:" in text and "pin it as a regression test:" in text


def test_the_summary_counts_findings_then_signatures_and_failures_by_check(corpus: Path) -> None:
    code, lines = tcr(
        "corpus",
        "--rechunk",
        "original",
        "--rechunk",
        "char",
        "--check",
        "no_leak",
        "--detector",
        SPLITS_MARKERS,
    )
    assert code == EXIT_VIOLATION
    assert lines[-1].endswith(": 1 finding (2 failures): no_leak 2")


def test_a_crash_is_marked_e(corpus: Path) -> None:
    code, lines = tcr("corpus/split.msgpack", "--rechunk", "whole", "--detector", CRASHES)
    assert code == EXIT_ERROR
    assert lines[0] == "corpus/split.msgpack Es"  # a crash; warm-cold then judges nothing
    assert lines[-1].endswith(": 1 finding: crash 1")


def test_an_unreadable_recording_is_marked_e_in_its_folder(corpus: Path) -> None:
    (corpus / "broken.msgpack").write_bytes(b"garbage")
    code, lines = tcr("corpus", *QUICK, "--check", "no_leak")
    assert code == EXIT_ERROR
    assert lines[0] == "corpus/ E .. .."  # in the order replayed: sorted by path
    assert any(line.startswith("error ") and "broken.msgpack" in line for line in lines)
    assert lines[-1].endswith(": 1 error")


def test_verbose_shows_the_table(corpus: Path) -> None:
    code, lines = tcr("corpus", *QUICK, "--check", "no_leak", "-v")
    assert code == EXIT_OK
    assert lines[0].startswith("tcr replay")
    assert any("┃ recording" in line for line in lines)
    assert lines[-1].endswith(": all checks pass")


def test_verbose_shows_bundled_recordings_by_their_short_path_unfolded_when_piped() -> None:
    path = ROOT / "regressions" / "split_marker_llama_server.msgpack"
    code, lines = tcr(str(path), *QUICK, "-v")
    assert code == EXIT_OK
    rows = [line for line in lines if "split_marker_llama_server" in line]
    assert len(rows) == 3  # original, whole, warm-cold: one line each
    assert all("regressions/split_marker_llama_server.msgpack" in row for row in rows)
    assert not any(str(ROOT.parent) in line for line in lines)


def test_quiet_shows_the_summary_line_alone_when_all_pass(corpus: Path) -> None:
    code, lines = tcr("corpus", *QUICK, "-q")
    assert code == EXIT_OK
    assert len(lines) == 1 and lines[0].endswith(": all checks pass")


def test_quiet_keeps_the_failures(corpus: Path) -> None:
    code, lines = tcr("corpus", *QUICK, "--check", "no_leak", "--detector", SPLITS_MARKERS, "-q")
    assert code == EXIT_VIOLATION
    assert not lines[0].startswith("corpus/")  # no marks
    assert any("reproduce with:" in line for line in lines)
    assert lines[-1].endswith(": 1 finding: no_leak 1")


def test_verbose_and_quiet_count_against_each_other_as_in_pytest() -> None:
    assert Level.of(0, 0) is Level.NORMAL
    assert Level.of(1, 0) is Level.VERBOSE and Level.of(3, 0) is Level.VERBOSE
    assert Level.of(0, 2) is Level.QUIET and Level.of(1, 1) is Level.NORMAL


def test_bad_input_is_one_line_and_exit_2_with_no_report(corpus: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "corpus/absent.msgpack"])
    assert result.exit_code == EXIT_ERROR
    assert result.stdout == ""
    assert result.stderr.startswith("tcr replay: ") and result.stderr.count("\n") == 1


def test_a_violation_without_an_offset_says_where_it_is_without_none() -> None:
    # A call lost to a merge is missing from the whole message: the expected check knows
    # its chunk, not its offset.
    regression = ROOT / "regressions" / "two_calls_one_chunk.msgpack"
    merges = "tcr.detector.broken:merges_calls_in_one_chunk"
    code, lines = tcr(str(regression), "--detector", merges, "--check", "expected")
    assert code == EXIT_VIOLATION
    located = [line for line in lines if line.lstrip().startswith("at chunk")]
    assert located and any("offset" not in line for line in located)
    assert not any("offset None" in line or "chunk None" in line for line in lines)
