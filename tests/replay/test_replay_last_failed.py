"""``tcr replay --lf``: the recordings that failed last time, remembered in ``.tcr/`` of the
working directory as pytest remembers its own in ``.pytest_cache``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpus import Frame, new_header, write_recording
from tcr.errors import EXIT_OK, EXIT_VIOLATION
from tcr.replay import run
from tcr.replay.lastfailed import LastFailed

LEAKS_SPLIT_MARKERS = "tcr.detector.broken:per_chunk_markers"
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QUICK = ("--rechunk", "original", "--check", "no_leak")


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """split.msgpack fails under the broken detector, plain.msgpack passes; the working
    directory is their parent, with the cache in its default place."""
    folder = tmp_path / "corpus"
    chunks = {"split": ["Let me check. ", CALL[:5], CALL[5:]], "plain": ["No call here."]}
    for name, pieces in chunks.items():
        frames = [Frame(i * 1_000_000, c) for i, c in enumerate(pieces)]
        write_recording(folder / f"{name}.msgpack", new_header("chunks"), frames)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TCR_CACHE_DIR")
    return folder


def tcr(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_failing_recording_is_remembered_in_dot_tcr(corpus: Path) -> None:
    code, _, _ = tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    assert code == EXIT_VIOLATION
    remembered = json.loads(Path(".tcr/lastfailed.json").read_text())
    assert remembered == [str((corpus / "split.msgpack").resolve())]


def test_the_cache_folder_is_ignored_by_git(corpus: Path) -> None:
    tcr("corpus", *QUICK)
    assert Path(".tcr/.gitignore").read_text().splitlines()[-1] == "*"


def shown(out: str) -> list[str]:
    """The report's lines after its first, which says what it judged against."""
    first, *rest = out.splitlines()
    assert first.startswith("judged against: ")
    return rest


def test_lf_replays_only_what_failed_last_time(corpus: Path) -> None:
    tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    code, out, _ = tcr("corpus", *QUICK, "--lf")
    assert code == EXIT_OK
    lines = shown(out)
    assert lines[0] == "replaying the 1 of 2 that failed last time"
    assert lines[1] == "corpus/split.msgpack ."
    assert lines[-1].startswith("1 recording, ")


def test_lf_replays_everything_when_nothing_failed_last_time(corpus: Path) -> None:
    tcr("corpus", *QUICK)
    code, out, _ = tcr("corpus", *QUICK, "--lf")
    assert code == EXIT_OK
    assert shown(out)[0] == "no recording failed last time: replaying all 2"
    assert out.splitlines()[-1].startswith("2 recordings, ")


def test_a_fixed_recording_is_forgotten_and_the_next_lf_replays_all(corpus: Path) -> None:
    tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    tcr("corpus", *QUICK, "--lf")  # fixed: it passes now
    assert json.loads(Path(".tcr/lastfailed.json").read_text()) == []


def test_a_run_over_other_recordings_keeps_what_it_did_not_replay(corpus: Path) -> None:
    tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    tcr("corpus/plain.msgpack", *QUICK)
    assert LastFailed.read(Path(".tcr")).paths == {str((corpus / "split.msgpack").resolve())}


def test_an_unreadable_recording_counts_as_failed(corpus: Path) -> None:
    (corpus / "broken.msgpack").write_bytes(b"garbage")
    report = run([corpus], strategies=["original"], checks=["no_leak"])
    after = LastFailed().after(report)
    assert after.paths == {str((corpus / "broken.msgpack").resolve())}


def test_a_cache_that_cannot_be_written_is_one_stderr_line_and_the_same_exit(
    corpus: Path,
) -> None:
    Path(".tcr").write_text("a file, not a folder")  # as a read-only directory would refuse
    code, out, err = tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    assert code == EXIT_VIOLATION
    assert out.splitlines()[-1].endswith(": 1 finding: no_leak 1")
    assert err.count("\n") == 1 and err.startswith("tcr replay: cannot remember the failed")


def test_a_corrupt_cache_is_as_good_as_none(corpus: Path) -> None:
    Path(".tcr").mkdir()
    Path(".tcr/lastfailed.json").write_text("{not json")
    code, out, err = tcr("corpus", *QUICK, "--lf")
    assert code == EXIT_OK and err == ""
    assert shown(out)[0] == "no recording failed last time: replaying all 2"


def test_json_output_is_unchanged_by_lf(corpus: Path) -> None:
    tcr("corpus", *QUICK, "--detector", LEAKS_SPLIT_MARKERS)
    code, out, _ = tcr("corpus", *QUICK, "--lf", "--json")
    assert code == EXIT_OK
    assert json.loads(out)["recordings"] == 1
