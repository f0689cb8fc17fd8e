"""Recordings keep the request's tools: ``Recording.tool_specs`` reads them back as specs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcr.corpora import bundled
from tcr.corpus import Frame, new_header, read_recording, write_recording
from tcr.errors import CorpusError

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}},
        },
    }
]


def _written(tmp_path: Path, request: dict[str, Any]) -> Path:
    header = new_header("chunks", id="specs", request=request, tools=["get_weather"])
    return write_recording(tmp_path / "r.msgpack", header, [Frame(0, "hi")])


def test_the_request_s_tools_round_trip_as_specs(tmp_path: Path) -> None:
    recording = read_recording(_written(tmp_path, {"tools": TOOLS}))
    assert recording.tool_specs == tuple(TOOLS)
    assert recording.tools == ["get_weather"]  # the names stay as they are


def test_a_request_without_tools_has_no_specs(tmp_path: Path) -> None:
    assert read_recording(_written(tmp_path, {"messages": []})).tool_specs is None


def test_malformed_request_tools_are_a_corpus_error_naming_the_file(tmp_path: Path) -> None:
    recording = read_recording(_written(tmp_path, {"tools": [{"function": {"name": 3}}]}))
    with pytest.raises(CorpusError, match=r"r\.msgpack: header request\.tools\[0\]\.function"):
        recording.tool_specs  # noqa: B018


def test_every_bundled_recording_s_request_tools_read_as_specs() -> None:
    for path in bundled():
        read_recording(path).tool_specs  # noqa: B018  (raises if one is malformed)
