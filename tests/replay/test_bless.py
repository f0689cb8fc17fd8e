"""tcr bless and tcr review: golden expectations stored, compared and reviewed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.corpus import read_recording, write_expectation
from tcr.replay import run
from tcr.replay.bless import changes, expectation_of

SOURCE = ROOT / "recorded" / "tool_call_tag_json.msgpack"


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    path = tmp_path / SOURCE.name
    shutil.copy(SOURCE, path)
    return path


def test_bless_stores_what_the_reference_emits(recording: Path) -> None:
    write_expectation(recording, {"text": "stale", "calls": [], "reasoning": ""})
    result = CliRunner().invoke(main, ["bless", str(recording)])
    assert result.exit_code == 0, result.output
    assert "blessed" in result.output and "get_weather" in result.output
    assert (
        read_recording(recording).expect == read_recording(SOURCE).expect
    )  # the independent truth
    assert run([recording], runs=5).exit_code == 0


def test_bless_with_a_broken_detector_stores_its_wrong_result_and_review_finds_it(
    recording: Path,
) -> None:
    result = CliRunner().invoke(
        main, ["bless", str(recording), "--detector", "tcr.detector.broken:per_chunk_markers"]
    )
    assert result.exit_code == 0
    # Whole text in one chunk: even the broken detector gets it right, so nothing changes.
    assert changes([recording]) == []
    write_expectation(recording, {"text": "stale", "calls": [], "reasoning": ""})
    found = changes([recording])
    assert [c.path for c in found] == [recording]


def test_review_accepts_a_change_with_a(recording: Path) -> None:
    write_expectation(recording, {"text": "stale", "calls": [], "reasoning": ""})
    result = CliRunner().invoke(main, ["review", str(recording)], input="a\n")
    assert result.exit_code == 0, result.output
    assert "text: [-stale-]{+The weather in the city" in result.output
    assert "a accept · r reject · s skip · A accept all · q quit: accept" in result.output
    assert "accepted 1, rejected 0, of 1 changed" in result.output
    assert changes([recording]) == []


def test_review_reject_keeps_the_stored_expectation(recording: Path) -> None:
    stale = {"text": "stale", "calls": [], "reasoning": ""}
    write_expectation(recording, stale)
    result = CliRunner().invoke(main, ["review", str(recording)], input="r\n")
    assert "accepted 0, rejected 1" in result.output
    assert read_recording(recording).expect == stale


def test_review_with_nothing_changed_says_so(recording: Path) -> None:
    result = CliRunner().invoke(main, ["review", str(recording)])
    assert "nothing to review" in result.output


def test_bless_a_corrupt_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.msgpack"
    bad.write_bytes(b"garbage")
    result = CliRunner().invoke(main, ["bless", str(bad)])
    assert result.exit_code == 2 and "bad.msgpack" in result.output
    assert "Traceback" not in result.output


def test_expectation_of_joins_text_and_rejected_content() -> None:
    from tcr.detector import Rejected, Text, ToolCall

    events = [
        Text("a "),
        Rejected("{x", "{x", "bare_json", "not_a_call"),
        ToolCall("f", '{"k": 1}'),
    ]
    assert expectation_of(events).to_map() == {
        "text": "a {x",
        "calls": [{"name": "f", "arguments": {"k": 1}}],
        "reasoning": "",
    }


def test_bless_shows_each_change_as_a_word_and_call_diff_of_full_lines(recording: Path) -> None:
    stale = {"name": "get_weather", "arguments": {"city": "London", "days": 2}}
    write_expectation(recording, {"text": "stale", "calls": [stale], "reasoning": ""})
    result = CliRunner().invoke(main, ["bless", str(recording)])
    assert result.exit_code == 0, result.output
    assert f"{recording}: blessed" in result.output
    lines = result.output.splitlines()
    # the text as a word diff, in one line however long (the output is not a terminal)
    (text,) = [line for line in lines if line.startswith("text: ")]
    assert text.startswith("text: [-stale-]{+The weather in the city") and len(text) > 80
    assert text.endswith("of the city of.+}")
    assert '~ call 0 (get_weather) argument \'city\': "London" → "Paris"' in lines
    assert "- call 0 (get_weather) argument 'days': 2" in lines
    again = CliRunner().invoke(main, ["bless", str(recording)])
    assert f"{recording}: unchanged" in again.output and "[-" not in again.output


def test_bless_dry_run_shows_the_diff_and_writes_nothing(recording: Path) -> None:
    stale = {"text": "stale", "calls": [], "reasoning": ""}
    write_expectation(recording, stale)
    before = recording.read_bytes()
    result = CliRunner().invoke(main, ["bless", str(recording), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"{recording}: would change" in result.output
    assert "text: [-stale-]{+The weather" in result.output
    assert result.output.rstrip().endswith("1 would change; nothing written (--dry-run)")
    assert recording.read_bytes() == before


@pytest.mark.parametrize("command", ["bless", "review", "replay", "matrix"])
def test_a_folder_with_no_recording_is_one_error_not_a_quiet_success(
    tmp_path: Path, command: str
) -> None:
    result = CliRunner().invoke(main, [command, str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path}: no recording (*.msgpack) found there" in result.output
    assert result.output.count("\n") == 1


def test_a_file_name_with_a_terminal_escape_is_printed_drawn(tmp_path: Path) -> None:
    # An OSC set-title sequence in a name reached the terminal as it was.
    recording = tmp_path / "a\x1b]0;pwned\x07.msgpack"
    shutil.copy(SOURCE, recording)
    write_expectation(recording, {"text": "stale", "calls": [], "reasoning": ""})
    for command in (["bless", "--dry-run"], ["bless"]):
        result = CliRunner().invoke(main, [*command, str(recording)])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "a␛]0;pwned␇.msgpack" in result.output
