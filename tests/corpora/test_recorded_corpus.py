"""corpora/recorded: real llama-server streams (scripts/record_corpus.py made them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis_profiles import examples

import tcr.corpora
import tcr.dialects
from tcr.corpus import read_recording
from tcr.detector.formats import lexicon
from tcr.replay import run
from tcr.stream import decode

RECORDED = sorted((tcr.corpora.ROOT / "recorded").glob("*.msgpack"))
DIALECTS = [p for p in RECORDED if not p.name.startswith("native_")]
NATIVE = [p for p in RECORDED if p.name.startswith("native_")]
# Dialects whose grammar is written but not yet recorded from a real llama-server
# (scripts/record_corpus.py --dialect ID); each leaves this set when its recording lands.
NOT_YET_RECORDED: frozenset[str] = frozenset()


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
    # Each template's parser writes the arguments its own way ({"city":"Paris"} from XML).
    calls = [(c.name, json.loads(c.arguments)) for c in decoded.calls]
    assert calls == [("get_weather", {"city": "Paris"})]
    assert decoded.finish_reason == "tool_calls"


def test_reference_detector_passes_every_check_on_every_recording() -> None:
    report = run(RECORDED, runs=examples(30), seed=3)
    assert report.exit_code == 0, report.to_dict()


@pytest.mark.slow
def test_transport_resplitting_never_changes_what_decodes() -> None:
    report = run(RECORDED, layer="transport", runs=10)
    assert report.exit_code == 0, report.to_dict()


def test_the_recorded_chunking_alone_catches_a_per_chunk_marker_detector() -> None:
    report = run(
        DIALECTS,
        strategies=["original"],
        detector="tcr.detector.broken:per_chunk_markers",
        minimize=False,  # which checks fail, not where: nothing to shrink
    )
    failing = {
        (Path(o.path).stem, o.strategy, tuple(o.failed_checks)) for o in report.outcomes if not o.ok
    }
    # The tokenizer split every marker, so every recording with one fails; those of a
    # dialect opening on a plain "{" (bare_json, json_answer) get it whole.
    expected = {
        (p.stem, "original", checks) for p in DIALECTS if (checks := _fails_with(_dialect(p)))
    }
    assert failing == expected


def _fails_with(d: tcr.dialects.Dialect) -> tuple[str, ...]:
    """The checks a per-chunk marker matcher fails on a recording of ``d``."""
    if d.anywhere:
        return ("expected", "invariance", "no_leak") if min(map(len, d.opens)) > 1 else ()
    # At message start a first character that may begin a longer marker is held: the
    # "<" of "<|python_start|>", the "[" of "[TOOL_CALLS]" before a pythonic "[f(…)]".
    # Such a marker is no distinctive one, so no_leak does not look for it.
    held = lexicon().start_hold_re
    return ("expected", "invariance") if held and held.match(d.opens[0][0]) else ()


def _dialect(path: Path) -> tcr.dialects.Dialect:
    return tcr.dialects.dialect(str(read_recording(path).labels["dialect"]))
