"""``RecordingWriter.frames`` (several reads, one write) writes exactly what ``frame`` does."""

from __future__ import annotations

from pathlib import Path

from tcr.corpus import RecordingWriter, new_header, read_recording

READS = [b"data: 1\n\n", b"data: 2\n\n", b"", b"\x00\xff" * 40_000]


def test_batched_frames_are_byte_identical_to_frame_by_frame(tmp_path: Path) -> None:
    header = new_header("sse", id="same", created="2026-01-01T00:00:00Z")
    with RecordingWriter(tmp_path / "one.msgpack", header) as one:
        for data in READS:
            one.frame(7, data)
    with RecordingWriter(tmp_path / "batch.msgpack", header) as batch:
        batch.frames(7, READS)
    assert (tmp_path / "batch.msgpack").read_bytes() == (tmp_path / "one.msgpack").read_bytes()
    recording = read_recording(tmp_path / "batch.msgpack")
    assert recording.complete and [f.data for f in recording.frames] == READS


def test_large_reads_take_the_checked_path(tmp_path: Path) -> None:
    big = b"x" * (5 << 20)
    with RecordingWriter(tmp_path / "big.msgpack", new_header("ndjson")) as writer:
        writer.frames(1, [b"{}\n", big])
    assert [len(f.data) for f in read_recording(tmp_path / "big.msgpack").frames] == [3, len(big)]
