"""The request files the README records with are the ones the bundled recordings were made with."""

from __future__ import annotations

import json
from pathlib import Path

from record_corpus import DIALECTS, dialect_request, native_request

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_weather_json_is_the_request_behind_the_bundled_hermes_recording() -> None:
    (case,) = [c for c in DIALECTS if c.name == "tool_call_tag_json"]
    assert json.loads((EXAMPLES / "weather.json").read_text()) == dialect_request(case)


def test_weather_native_json_is_the_native_tool_calls_request() -> None:
    assert json.loads((EXAMPLES / "weather_native.json").read_text()) == native_request("auto")


def test_tools_json_declares_the_native_request_s_tools_as_tcr_record_reads_them() -> None:
    from tcr.recorder.request import load_tools

    tools = json.loads((EXAMPLES / "tools.json").read_text())
    assert tools == native_request("auto")["tools"]
    assert load_tools(EXAMPLES / "tools.json") == tools


def test_every_dialect_recording_is_what_the_script_asks_for_today() -> None:
    """The grammars read from the records still send the requests the recordings were made by."""
    from tcr.corpora import ROOT
    from tcr.corpus import read_recording

    for case in DIALECTS:
        recording = read_recording(ROOT / "recorded" / f"{case.name}.msgpack")
        assert recording.header["request"] == dialect_request(case), case.name
        assert recording.labels["dialect"] == case.dialect
