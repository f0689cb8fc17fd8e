"""What a replay keeps in memory: the content, not the body or a delta per event."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from replay.engine import Plan, load
from replay.model import InputError
from replay.runner import _plan
from tcr.corpus import new_header, read_recording
from tcr.errors import CorpusError
from tcr.stream import decode

REGRESSIONS = Path(__file__).parents[2] / "corpora" / "regressions"


def plan_for(layer: str) -> Plan:
    return _plan(None, 2, 0, None, None, None, layer, False, True)


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.msgpack"))[:6], ids=lambda p: p.stem)
def test_the_content_layer_keeps_neither_frames_nor_deltas(path: Path) -> None:
    replay = load(path, plan_for("content"))
    assert not isinstance(replay, InputError)
    whole = read_recording(path)
    assert replay.recording.frames == []
    assert replay.decoded.deltas == [] == replay.decoded.content
    # the recorded chunks are offsets into the text the judge holds, read back the same
    assert replay.content == decode(whole).content
    assert list(replay.content) == decode(whole).content
    assert replay.content[-1] == decode(whole).content[-1]
    assert replay.text is replay.judge.text
    assert (replay.recording.header, replay.recording.end) == (whole.header, whole.end)
    assert replay.recording.expect == whole.expect


def test_the_transport_layer_keeps_the_body() -> None:
    path = sorted(REGRESSIONS.glob("*.msgpack"))[0]
    replay = load(path, plan_for("transport"))
    assert not isinstance(replay, InputError)
    assert replay.recording.frames == read_recording(path).frames


def test_a_file_corrupt_after_a_bad_frame_is_reported_as_corrupt(tmp_path: Path) -> None:
    # Read whole, then decoded, a file was reported for its corruption first: so it stays.
    path = tmp_path / "bad.msgpack"
    bad_frame = msgpack.packb([0, b"data: {not json}\n\n"])
    path.write_bytes(msgpack.packb(new_header("sse")) + bad_frame)
    undecodable = load(path, plan_for("content"))
    assert isinstance(undecodable, InputError) and "frame 0" in undecodable.message
    path.write_bytes(path.read_bytes() + msgpack.packb(5))  # neither a frame nor the trailer
    broken = load(path, plan_for("content"))
    with pytest.raises(CorpusError) as reading:
        read_recording(path)
    assert isinstance(broken, InputError) and broken.message == str(reading.value)
