"""corpora/recorded: real llama-server streams (scripts/record_corpus.py made them)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tcr.corpora
import tcr.dialects
from tcr.corpus import read_recording
from tcr.replay import run
from tcr.stream import decode

RECORDED = sorted((tcr.corpora.ROOT / "recorded").glob("*.msgpack"))
DIALECTS = [p for p in RECORDED if not p.name.startswith("native_")]
NATIVE = [p for p in RECORDED if p.name.startswith("native_")]
# Dialects whose grammar is written but not yet recorded from a real llama-server
# (scripts/record_corpus.py); each leaves this set when its recording lands.
NOT_YET_RECORDED = frozenset(
    {
        "kimi_k2",
        "internlm",
        "minimax_m2",
        "seed_oss",
        "seed_think",
        "mistral_v11",
        "deepseek_v3",
        "deepseek_v31",
    }
)


def test_there_is_a_recording_per_dialect_and_native_ones() -> None:
    dialects = {str(read_recording(p).labels["dialect"]) for p in RECORDED}
    registered = {d.id for d in tcr.dialects.DIALECTS}
    assert dialects == (registered - NOT_YET_RECORDED) | {"native"}
    assert registered >= NOT_YET_RECORDED
    assert not dialects & NOT_YET_RECORDED, "recorded now: drop it from NOT_YET_RECORDED"


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recording_is_a_complete_real_llama_server_stream(path: Path) -> None:
    recording = read_recording(path)
    assert recording.complete and recording.kind == "sse"
    assert recording.labels["origin"] == "recorded"
    assert recording.header["response"]["status"] == 200
    times = [f.t_ns for f in recording.frames]
    assert times == sorted(times) and len(times) > 5


@pytest.mark.parametrize("path", DIALECTS, ids=lambda p: p.stem)
def test_markers_arrive_split_the_way_the_tokenizer_split_them(path: Path) -> None:
    chunks = decode(read_recording(path)).content
    assert max(len(c) for c in chunks) < 20  # token-sized pieces, not whole markers
    assert read_recording(path).expect is not None


@pytest.mark.parametrize("path", NATIVE, ids=lambda p: p.stem)
def test_native_tool_calls_are_assembled_from_their_deltas(path: Path) -> None:
    decoded = decode(read_recording(path))
    assert [(c.name, c.arguments) for c in decoded.calls] == [("get_weather", '{"city": "Paris"}')]
    assert decoded.finish_reason == "tool_calls"


def test_reference_detector_passes_every_check_on_every_recording() -> None:
    report = run(RECORDED, runs=30, seed=3)
    assert report.exit_code == 0, report.to_dict()


@pytest.mark.slow
def test_transport_resplitting_never_changes_what_decodes() -> None:
    report = run(RECORDED, layer="transport", runs=10)
    assert report.exit_code == 0, report.to_dict()


def test_the_recorded_chunking_alone_catches_a_per_chunk_marker_detector() -> None:
    report = run(
        DIALECTS, strategies=["original"], detector="tcr.detector.broken:per_chunk_markers"
    )
    failing = {
        (Path(o.path).stem, o.strategy, tuple(o.failed_checks)) for o in report.outcomes if not o.ok
    }
    # The tokenizer split every marker, so every recording with one fails. The two
    # bare_json ones (bare_json, json_answer) open with a plain "{", which comes whole.
    marked = {
        "bracket_tool_calls_args", "bracket_tool_calls_array", "fenced_json", "gemma_special",
        "python_tag", "think_then_call", "tool_call_tag_glm", "tool_call_tag_json",
        "tool_call_tag_qwen3_coder", "tool_call_tag_two_calls", "tools_tag",
        "jamba", "granite", "granite_20b_fc", "phi4_mini_json",
        "functiongemma", "command_r7b", "command_r7b_think_then_call",
    }  # fmt: skip
    assert failing == {(stem, "original", ("expected", "invariance", "no_leak")) for stem in marked}
