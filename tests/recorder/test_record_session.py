"""``record_session``, the library behind ``tcr record``: called without the CLI, it prints
the summaries of what it made and raises ``RecordError`` for what ended it early."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from record_upstreams import Upstream, llm_app

from tcr.corpus import read_recording
from tcr.recorder import RecordError, RecordOptions, parse_labels, record_session, recording_paths


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def test_a_session_makes_count_recordings_and_prints_their_summaries(
    upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.msgpack"
    endpoint = f"{upstream.url}/v1/chat/completions?n=3"
    record_session(RecordOptions(endpoint=endpoint, prompt="hi", count=2, out=out))
    made = [tmp_path / "r-001.msgpack", tmp_path / "r-002.msgpack"]
    assert all(read_recording(path).complete for path in made)
    printed = capsys.readouterr().out
    assert all(str(path) in printed for path in made)
    assert "tok0 tok1 tok2" in printed


def test_a_cut_stream_ends_the_session_after_the_summaries_of_what_was_made(
    upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.msgpack"
    options = RecordOptions(endpoint=f"{upstream.url}/drop?n=5", api="openai", prompt="hi", out=out)
    with pytest.raises(RecordError, match=r"in .*r\.msgpack \(incomplete\)"):
        record_session(options)
    assert "incomplete" in capsys.readouterr().out
    assert not read_recording(out).complete


def test_an_interrupt_is_a_record_error_that_names_it(tmp_path: Path) -> None:
    def interrupted(main: Coroutine[Any, Any, Any]) -> Any:
        main.close()
        raise asyncio.CancelledError("Ctrl-C (SIGINT)")

    options = RecordOptions(endpoint="http://127.0.0.1:9/completion", prompt="p", out=tmp_path)
    with pytest.raises(RecordError, match="interrupted by Ctrl-C"):
        record_session(options, run=interrupted)


def test_bad_options_raise_before_anything_is_sent(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="not used with --proxy"):
        record_session(RecordOptions(proxy="9000", upstream="http://h", prompt="p"))
    with pytest.raises(RecordError, match="give --endpoint"):
        record_session(RecordOptions(out=tmp_path))


def test_several_recordings_into_one_file_name_are_numbered(tmp_path: Path) -> None:
    paths = recording_paths(tmp_path / "r.msgpack", 3)
    assert [paths(i).name for i in range(3)] == ["r-001.msgpack", "r-002.msgpack", "r-003.msgpack"]
    assert recording_paths(tmp_path / "one.msgpack", 1)(0) == tmp_path / "one.msgpack"
    assert recording_paths(tmp_path / "dir", 2)(0).parent == tmp_path / "dir"


def test_labels_are_key_value_pairs() -> None:
    assert parse_labels(["note=split = marker", " bug =x"]) == {
        "note": "split = marker",
        "bug": "x",
    }
    with pytest.raises(RecordError, match="expected KEY=VALUE"):
        parse_labels(["x"])
