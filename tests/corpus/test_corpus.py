"""The recording format v1 (ARCHITECTURE.md §3): round trips, crash safety, hostile input.

The fuzz tests state one invariant, as h11's do: a file reads as a recording, or
raises ``CorpusError``, never anything else.
"""

from __future__ import annotations

import contextlib
import random
import struct
import subprocess
import sys
import textwrap
import tracemalloc
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcr.corpus import (
    MAX_BLOB,
    Frame,
    Recording,
    RecordingReader,
    RecordingWriter,
    find_recordings,
    iter_recordings,
    new_header,
    read_recording,
    write_expectation,
    write_recording,
)
from tcr.errors import CorpusError, TcrError

SSE_FRAMES = [
    Frame(1_000, b'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n'),
    Frame(2_500, b'data: {"choices":[{"delta":{"content":"lo \xc3'),  # split UTF-8
    Frame(4_000, b'\xa9"}}]}\n\ndata: [DONE]\n\n', {"token_ids": [9906, 1917]}),
    Frame(9_000, b""),
]
CHUNK_FRAMES = [Frame(0, "<tool"), Frame(10, "_call>", {"id": 7}), Frame(20, "é\x00\n")]
EXPECTATION = {
    "text": "Hello ",
    "calls": [{"name": "get_weather", "arguments": '{"city": "Paris"}'}],
    "reasoning": "",
}


def sample_frames(kind: str) -> list[Frame]:
    if kind == "chunks":
        return CHUNK_FRAMES
    return SSE_FRAMES


def write_sample(path: Path, kind: str = "sse", **kwargs: Any) -> Path:
    header = new_header(kind, id="sample", tools=["get_weather"])
    return write_recording(path, header, sample_frames(kind), **kwargs)


def sample_bytes(tmp_path: Path, **kwargs: Any) -> bytes:
    return write_sample(tmp_path / "sample.msgpack", **kwargs).read_bytes()


def packb(obj: object) -> bytes:
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def header_bytes(kind: str = "sse") -> bytes:
    return packb(new_header(kind, id="h"))


def read_bytes(path: Path, data: bytes) -> Recording:
    path.write_bytes(data)
    return read_recording(path)


# --- round trips -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sse", "ndjson", "chunks"])
def test_round_trip_keeps_header_frames_and_meta(tmp_path: Path, kind: str) -> None:
    path = write_sample(tmp_path / "r.msgpack", kind)
    recording = read_recording(path)
    assert recording.frames == sample_frames(kind)
    assert recording.kind == kind
    assert recording.id == "sample"
    assert recording.tools == ["get_weather"]
    assert recording.header["tcr"] == 1
    assert recording.path == path


@pytest.mark.parametrize("kind", ["sse", "ndjson", "chunks"])
def test_round_trip_without_meta_reads_meta_as_none(tmp_path: Path, kind: str) -> None:
    frames = [Frame(f.t_ns, f.data) for f in sample_frames(kind)]
    path = write_recording(tmp_path / "r.msgpack", new_header(kind), frames)
    assert read_recording(path).frames == frames


def test_bytes_stay_bytes_and_str_stay_str(tmp_path: Path) -> None:
    sse = read_recording(write_recording(tmp_path / "a.msgpack", new_header("sse"), [(0, b"x")]))
    chunks = read_recording(
        write_recording(tmp_path / "b.msgpack", new_header("chunks"), [(0, "x")])
    )
    assert type(sse.frames[0].data) is bytes
    assert type(chunks.frames[0].data) is str


def test_tuples_are_accepted_as_frames(tmp_path: Path) -> None:
    path = write_recording(
        tmp_path / "r.msgpack", new_header("sse"), [(1, b"a"), (2, b"b", {"k": 1})]
    )
    assert read_recording(path).frames == [Frame(1, b"a"), Frame(2, b"b", {"k": 1})]


def test_trailer_counts_frames_and_bytes(tmp_path: Path) -> None:
    recording = read_recording(write_sample(tmp_path / "r.msgpack", "chunks"))
    assert recording.end == {
        "complete": True,
        "error": None,
        "frames": 3,
        "bytes": sum(len(f.data.encode()) for f in CHUNK_FRAMES if isinstance(f.data, str)),
    }
    assert recording.complete
    assert recording.incomplete_reason is None


def test_expectation_round_trip(tmp_path: Path) -> None:
    recording = read_recording(write_sample(tmp_path / "r.msgpack", expect=EXPECTATION))
    assert recording.expect == EXPECTATION
    assert recording.complete


def test_recording_without_expectation_reads_expect_as_none(tmp_path: Path) -> None:
    assert read_recording(write_sample(tmp_path / "r.msgpack")).expect is None


def test_closed_as_incomplete_reports_its_error(tmp_path: Path) -> None:
    recording = read_recording(
        write_sample(tmp_path / "r.msgpack", complete=False, error="backend reset the stream")
    )
    assert not recording.complete
    assert recording.incomplete_reason == "backend reset the stream"


def test_new_header_fills_defaults() -> None:
    header = new_header("ndjson", created=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert header["tcr"] == 1
    assert len(header["id"]) == 32
    assert header["created"] == "2025-01-02T03:04:05.000000Z"
    assert header["source"] == {"endpoint": None, "backend": None, "model": None}
    assert header["response"] == {"status": None, "headers": {}}
    assert header["tools"] is None
    assert header["labels"]["origin"] == "handmade"


def test_new_header_stores_created_in_utc() -> None:
    paris = timezone(timedelta(hours=1))
    header = new_header("sse", created=datetime(2025, 1, 2, 4, 0, tzinfo=paris))
    assert header["created"] == "2025-01-02T03:00:00.000000Z"


def test_new_header_keeps_empty_tool_list_distinct_from_none() -> None:
    assert new_header("sse", tools=[])["tools"] == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "websocket"},
        {"kind": "sse", "labels": {"origin": "scraped"}},
        {"kind": "sse", "created": datetime(2025, 1, 1)},  # naive: which zone?
        {"kind": "sse", "created": "yesterday"},
        {"kind": "sse", "tools": ["ok", 3]},
    ],
)
def test_new_header_refuses_bad_fields(kwargs: dict[str, Any]) -> None:
    with pytest.raises(CorpusError):
        new_header(**kwargs)


# --- writing -----------------------------------------------------------------


def test_writer_creates_parent_directories(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "deep" / "er" / "r.msgpack")
    assert read_recording(path).complete


def test_file_is_readable_while_writer_is_open(tmp_path: Path) -> None:
    path = tmp_path / "live.msgpack"
    with RecordingWriter(path, new_header("sse")) as writer:
        for frame in SSE_FRAMES:
            writer.frame(frame.t_ns, frame.data, frame.meta)
            seen = read_recording(path)
            assert seen.frames == SSE_FRAMES[: writer.frame_count]
            assert not seen.complete
            assert seen.incomplete_reason == "interrupted: no trailer"
    assert read_recording(path).complete


@pytest.mark.process
def test_killed_writer_leaves_readable_incomplete_recording(tmp_path: Path) -> None:
    path = tmp_path / "killed.msgpack"
    script = textwrap.dedent(
        """
        import os, sys
        from tcr.corpus import RecordingWriter, new_header
        writer = RecordingWriter(sys.argv[1], new_header("sse", id="killed"))
        for i in range(50):
            writer.frame(i * 1000, b"data: %d\\n\\n" % i)
        os._exit(0)  # no close, no trailer, no interpreter shutdown
        """
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    recording = read_recording(path)
    assert recording.id == "killed"
    assert [f.data for f in recording.frames] == [b"data: %d\n\n" % i for i in range(50)]
    assert recording.end is None
    assert not recording.complete


def test_exception_in_with_block_closes_as_incomplete_with_its_message(tmp_path: Path) -> None:
    path = tmp_path / "r.msgpack"
    with pytest.raises(ConnectionError), RecordingWriter(path, new_header("sse")) as writer:
        writer.frame(0, b"data: a\n\n")
        raise ConnectionError("peer closed\nconnection")
    recording = read_recording(path)
    assert recording.frames == [Frame(0, b"data: a\n\n")]
    assert recording.incomplete_reason == "ConnectionError: peer closed"


def test_close_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "r.msgpack"
    writer = RecordingWriter(path, new_header("sse"))
    writer.close()
    size = path.stat().st_size
    writer.close(complete=False, error="late")
    assert path.stat().st_size == size
    assert read_recording(path).complete


def test_frame_after_close_is_refused(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path / "r.msgpack", new_header("sse"))
    writer.close()
    with pytest.raises(CorpusError, match="after close"):
        writer.frame(0, b"x")


@pytest.mark.parametrize(("kind", "data"), [("sse", "text"), ("ndjson", "{}"), ("chunks", b"x")])
def test_writer_refuses_data_that_does_not_fit_the_kind(
    tmp_path: Path, kind: str, data: bytes | str
) -> None:
    with (
        RecordingWriter(tmp_path / "r.msgpack", new_header(kind)) as writer,
        pytest.raises(CorpusError, match=f"a '{kind}' recording stores"),
    ):
        writer.frame(0, data)


@pytest.mark.parametrize(
    ("t_ns", "meta"), [(-1, None), (True, None), (1.5, None), (0, ["not", "a", "map"])]
)
def test_writer_refuses_bad_frame_fields(tmp_path: Path, t_ns: Any, meta: Any) -> None:
    with (
        RecordingWriter(tmp_path / "r.msgpack", new_header("sse")) as writer,
        pytest.raises(CorpusError, match="frame 0"),
    ):
        writer.frame(t_ns, b"x", meta)


def test_writer_refuses_values_msgpack_cannot_store(tmp_path: Path) -> None:
    with (
        RecordingWriter(tmp_path / "r.msgpack", new_header("sse")) as writer,
        pytest.raises(CorpusError, match="cannot store frame 0"),
    ):
        writer.frame(0, b"x", {"when": datetime.now(UTC)})


def test_writer_refuses_a_frame_the_reader_could_not_read(tmp_path: Path) -> None:
    with (
        RecordingWriter(tmp_path / "r.msgpack", new_header("sse")) as writer,
        pytest.raises(CorpusError, match="max_bin_len"),
    ):
        writer.frame(0, b"x" * (MAX_BLOB + 1))


def test_writer_refuses_invalid_header(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="invalid header"):
        RecordingWriter(tmp_path / "r.msgpack", {"tcr": 1, "id": "x", "kind": "grpc"})
    assert not (tmp_path / "r.msgpack").exists()


# --- expectations ------------------------------------------------------------


def test_writer_expect_before_close_is_written_after_the_trailer(tmp_path: Path) -> None:
    path = tmp_path / "r.msgpack"
    with RecordingWriter(path, new_header("sse")) as writer:
        writer.expect(EXPECTATION)
        writer.frame(0, b"data: x\n\n")
    recording = read_recording(path)
    assert recording.expect == EXPECTATION
    assert recording.frames == [Frame(0, b"data: x\n\n")]


def test_writer_expect_after_close_appends_it(tmp_path: Path) -> None:
    path = tmp_path / "r.msgpack"
    writer = RecordingWriter(path, new_header("sse"))
    writer.close()
    writer.expect(EXPECTATION)
    assert read_recording(path).expect == EXPECTATION


def test_write_expectation_replaces_an_earlier_one(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "r.msgpack", expect=EXPECTATION)
    write_expectation(path, {"text": "blessed again", "calls": []})
    recording = read_recording(path)
    assert recording.expect == {"text": "blessed again", "calls": []}
    assert recording.frames == SSE_FRAMES
    assert recording.complete


def test_write_expectation_mends_a_cut_short_expectation(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "r.msgpack", expect=EXPECTATION)
    path.write_bytes(path.read_bytes()[:-3])
    write_expectation(path, EXPECTATION)
    assert read_recording(path).expect == EXPECTATION


def test_write_expectation_on_interrupted_recording_keeps_it_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "r.msgpack"
    path.write_bytes(sample_bytes(tmp_path)[:-40])  # cut inside the last frames
    before = read_recording(path)
    write_expectation(path, EXPECTATION)
    after = read_recording(path)
    assert after.frames == before.frames
    assert after.expect == EXPECTATION
    assert not after.complete
    assert after.incomplete_reason == "interrupted: no trailer"


@pytest.mark.parametrize(
    "expectation", [{"text": 1}, {"calls": "f()"}, {"calls": ["f"]}, {"reasoning": None}]
)
def test_malformed_expectation_is_refused(tmp_path: Path, expectation: Any) -> None:
    path = write_sample(tmp_path / "r.msgpack")
    with pytest.raises(CorpusError, match="expectation"):
        write_expectation(path, expectation)


# --- reading malformed files ---------------------------------------------------


def test_missing_file_is_a_corpus_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"nowhere\.msgpack: cannot open"):
        read_recording(tmp_path / "nowhere.msgpack")


def test_empty_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="byte 0: empty file"):
        read_bytes(tmp_path / "e.msgpack", b"")


def test_file_cut_inside_the_header_is_not_a_recording(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a tcr recording"):
        read_bytes(tmp_path / "h.msgpack", header_bytes()[:20])


@pytest.mark.parametrize("first", [[1, b"x"], "tcr", {"id": "x", "kind": "sse"}, {"tcr": "1"}])
def test_first_object_that_is_not_a_header_is_not_a_recording(
    tmp_path: Path, first: object
) -> None:
    with pytest.raises(CorpusError, match="byte 0: not a tcr recording"):
        read_bytes(tmp_path / "h.msgpack", packb(first))


def test_newer_format_version_is_refused_by_name(tmp_path: Path) -> None:
    header = {**new_header("sse"), "tcr": 2}
    with pytest.raises(CorpusError) as caught:
        read_bytes(tmp_path / "v2.msgpack", packb(header) + b"\x00\x01\x02")
    assert str(caught.value) == (
        f"corpus: {tmp_path / 'v2.msgpack'}: byte 0: recording was written by a newer tcr "
        "(format 2); this tcr reads format 1: upgrade tcr"
    )


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="header 'kind' is 'grpc'"):
        read_bytes(tmp_path / "k.msgpack", packb({**new_header("sse"), "kind": "grpc"}))


@pytest.mark.parametrize(
    "frame", [[0], [0, b"x", None, 4], [-5, b"x"], [b"0", b"x"], [False, b"x"], [0, b"x", 3]]
)
def test_frame_of_wrong_shape_names_path_byte_and_frame(tmp_path: Path, frame: object) -> None:
    good = packb([0, b"ok"])
    data = header_bytes() + good + packb(frame)
    with pytest.raises(CorpusError) as caught:
        read_bytes(tmp_path / "broken.msgpack", data)
    message = str(caught.value)
    assert message.startswith(f"corpus: {tmp_path / 'broken.msgpack'}: byte ")
    assert f"byte {len(header_bytes()) + len(good)}: frame 1" in message


@pytest.mark.parametrize(("kind", "data"), [("sse", "text"), ("chunks", b"bytes")])
def test_frame_data_that_does_not_fit_the_kind_is_refused(
    tmp_path: Path, kind: str, data: object
) -> None:
    with pytest.raises(CorpusError, match=f"frame 0: data is .*, but a '{kind}' recording"):
        read_bytes(tmp_path / "d.msgpack", header_bytes(kind) + packb([0, data]))


def test_object_that_is_neither_frame_nor_trailer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="neither a frame nor the trailer"):
        read_bytes(tmp_path / "o.msgpack", header_bytes() + packb("hello"))


def test_expectation_before_the_trailer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="a frame or the trailer"):
        read_bytes(tmp_path / "x.msgpack", header_bytes() + packb({"expect": EXPECTATION}))


def test_trailer_that_miscounts_frames_is_refused(tmp_path: Path) -> None:
    end = {"end": {"complete": True, "error": None, "frames": 2, "bytes": 1}}
    with pytest.raises(CorpusError, match="frames were lost or added"):
        read_bytes(tmp_path / "t.msgpack", header_bytes() + packb([0, b"x"]) + packb(end))


def test_object_after_the_trailer_other_than_an_expectation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="may follow the trailer"):
        read_bytes(tmp_path / "t.msgpack", sample_bytes(tmp_path) + packb([0, b"late frame"]))


def test_object_after_the_expectation_is_refused(tmp_path: Path) -> None:
    data = sample_bytes(tmp_path, expect=EXPECTATION) + packb({"expect": EXPECTATION})
    with pytest.raises(CorpusError, match="unexpected data after the expectation"):
        read_bytes(tmp_path / "t.msgpack", data)


def test_cut_short_expectation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="expectation is cut short"):
        read_bytes(tmp_path / "t.msgpack", sample_bytes(tmp_path, expect=EXPECTATION)[:-2])


def test_extension_types_are_refused(tmp_path: Path) -> None:
    data = header_bytes() + packb([0, b"x", {"t": msgpack.ExtType(1, b"ab")}])
    with pytest.raises(CorpusError, match="max_ext_len"):
        read_bytes(tmp_path / "ext.msgpack", data)


def test_invalid_utf8_in_a_str_is_refused(tmp_path: Path) -> None:
    data = header_bytes("chunks") + b"\x92\x00\xa2\xff\xfe"
    with pytest.raises(CorpusError, match="corrupt msgpack"):
        read_bytes(tmp_path / "u.msgpack", data)


# --- interrupted recordings and truncation ------------------------------------


@pytest.mark.slow
def test_truncation_at_every_offset_reads_a_prefix_or_raises_corpus_error(tmp_path: Path) -> None:
    data = sample_bytes(tmp_path, expect=EXPECTATION)
    path = tmp_path / "cut.msgpack"
    outcomes = set()
    for size in range(len(data) + 1):
        try:
            recording = read_bytes(path, data[:size])
        except CorpusError:
            outcomes.add("error")
            continue
        assert recording.frames == SSE_FRAMES[: len(recording.frames)]
        if recording.end is None:
            outcomes.add("incomplete")
            assert not recording.complete
        else:
            outcomes.add("complete")
            assert recording.frames == SSE_FRAMES
    assert outcomes == {"error", "incomplete", "complete"}


def test_cut_inside_a_frame_reads_the_frames_before_it(tmp_path: Path) -> None:
    data = header_bytes() + packb([0, b"one"]) + packb([1, b"two"])
    recording = read_bytes(tmp_path / "c.msgpack", data[:-2])
    assert recording.frames == [Frame(0, b"one")]
    assert recording.incomplete_reason == "interrupted: no trailer"


def test_cut_inside_the_trailer_reads_as_interrupted(tmp_path: Path) -> None:
    data = sample_bytes(tmp_path)
    recording = read_bytes(tmp_path / "c.msgpack", data[:-5])
    assert recording.frames == SSE_FRAMES
    assert recording.end is None


# --- hostile input -------------------------------------------------------------


@pytest.mark.parametrize(
    "evil",
    [
        b"\xc6\xff\xff\xff\xff",  # bin32 claiming 4 GiB
        b"\xdb\xff\xff\xff\xff" + b"a" * 100,  # str32 claiming 4 GiB
        b"\x93\x00\xc6\xff\xff\xff\xff",  # inside a frame
        b"\x93\x00\xc4\x01x\x81\xa1k\xdd\xff\xff\xff\xff",  # array32 of 4G items in meta
        b"\xdf\xff\xff\xff\xff",  # map32 of 4G pairs
    ],
)
def test_hostile_length_prefix_is_refused_quickly_without_allocating(
    tmp_path: Path, evil: bytes
) -> None:
    path = tmp_path / "evil.msgpack"
    path.write_bytes(header_bytes() + evil)
    tracemalloc.start()
    try:
        with pytest.raises(CorpusError, match=r"evil\.msgpack: byte \d+: .*(limit|exceeds max_)"):
            read_recording(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # refused before allocating (no timed assertion: the machine is shared)


def test_hostile_length_prefix_as_the_whole_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"byte 0: bin declares 4294967295 bytes"):
        read_bytes(tmp_path / "evil.msgpack", b"\xc6\xff\xff\xff\xff")


def test_deeply_nested_array_headers_are_refused(tmp_path: Path) -> None:
    evil = header_bytes() + b"\x93\x00\xc4\x01x" + b"\xdd\x00\x03\xff\xff" * 5000
    with pytest.raises(CorpusError, match="byte"):
        read_bytes(tmp_path / "nest.msgpack", evil)


def test_object_larger_than_the_buffer_limit_is_refused(tmp_path: Path) -> None:
    blob = b"\xc6" + struct.pack(">I", 12 << 20) + b"x" * (12 << 20)  # each within max_bin_len
    evil = header_bytes() + b"\x93\x00\xc4\x01x\x83" + b"".join(packb(key) + blob for key in "abc")
    with pytest.raises(CorpusError, match=r"larger than the \d+-byte limit"):
        read_bytes(tmp_path / "big.msgpack", evil)


@pytest.mark.slow
def test_random_byte_strings_raise_only_corpus_error(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / "random.msgpack"
    for _ in range(1000):
        data = rng.randbytes(rng.randrange(0, 200))
        with contextlib.suppress(CorpusError):
            read_bytes(path, data)


@pytest.mark.slow
def test_random_tails_after_a_valid_header_raise_only_corpus_error(tmp_path: Path) -> None:
    rng = random.Random(5678)
    path = tmp_path / "random.msgpack"
    header = header_bytes()
    for _ in range(1000):
        with contextlib.suppress(CorpusError):
            read_bytes(path, header + rng.randbytes(rng.randrange(0, 200)))


@pytest.fixture(scope="module")
def fuzz_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "fuzz.msgpack"


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
@pytest.mark.slow
def test_any_bytes_read_or_raise_corpus_error(fuzz_path: Path, data: bytes) -> None:
    with contextlib.suppress(CorpusError):
        read_bytes(fuzz_path, data)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=st.binary(max_size=400))
@pytest.mark.slow
def test_any_bytes_after_a_valid_header_read_or_raise_corpus_error(
    fuzz_path: Path, tail: bytes
) -> None:
    with contextlib.suppress(CorpusError):
        read_bytes(fuzz_path, header_bytes() + tail)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0), value=st.integers(min_value=0, max_value=255))
@pytest.mark.slow
def test_any_corrupted_byte_reads_or_raises_corpus_error(
    fuzz_path: Path, position: int, value: int
) -> None:
    original = bytearray(
        write_sample(fuzz_path.with_name("orig.msgpack"), expect=EXPECTATION).read_bytes()
    )
    original[position % len(original)] = value
    with contextlib.suppress(CorpusError):
        read_bytes(fuzz_path, bytes(original))


def test_corpus_error_is_a_tcr_error() -> None:
    assert issubclass(CorpusError, TcrError)


# --- streaming ---------------------------------------------------------------


@pytest.fixture
def large_recording(tmp_path: Path) -> Path:
    chunk = b'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n' * 20
    frames = (Frame(i, chunk) for i in range(8000))  # about 8 MB
    return write_recording(tmp_path / "large.msgpack", new_header("sse"), frames)


def test_reader_reads_the_first_frame_without_reading_the_file(large_recording: Path) -> None:
    with RecordingReader(large_recording) as reader:
        first = next(iter(reader.frames()))
        position = reader._file.tell()  # how far the OS file has been read
    assert first.t_ns == 0
    assert position < 1 << 20 < large_recording.stat().st_size


def test_reader_meets_garbage_only_when_it_reaches_it(tmp_path: Path) -> None:
    path = tmp_path / "g.msgpack"
    frames = [Frame(i, b"x" * 1000) for i in range(200)]
    good = write_recording(path, new_header("sse"), frames).read_bytes()
    path.write_bytes(good[:-30] + b"\xc1" * 30)  # 0xc1 is never valid msgpack
    with RecordingReader(path) as reader:
        stream = reader.frames()
        assert [next(stream) for _ in range(150)] == frames[:150]
        with pytest.raises(CorpusError, match="corrupt msgpack"):
            list(stream)


def test_end_and_expect_are_set_once_frames_are_exhausted(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "r.msgpack", expect=EXPECTATION)
    with RecordingReader(path) as reader:
        assert reader.header["id"] == "sample"
        stream = reader.frames()
        next(stream)
        assert reader.end is None
        list(stream)
        assert reader.end is not None and reader.end["complete"]
        assert reader.expect == EXPECTATION


def test_frames_can_be_iterated_again(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "r.msgpack")
    with RecordingReader(path) as reader:
        assert list(reader) == list(reader.frames()) == SSE_FRAMES


def test_closed_reader_refuses_to_iterate(tmp_path: Path) -> None:
    reader = RecordingReader(write_sample(tmp_path / "r.msgpack"))
    reader.close()
    with pytest.raises(CorpusError, match="closed"):
        list(reader.frames())


# --- corpora -------------------------------------------------------------------


def test_iter_recordings_walks_a_tree_in_sorted_order(tmp_path: Path) -> None:
    for name in ["b/z.msgpack", "a.msgpack", "b/a/y.msgpack", "c.json", "b/notes.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_recordings([tmp_path])]
    assert found == ["a.msgpack", "b/a/y.msgpack", "b/z.msgpack"]


def test_iter_recordings_yields_a_single_file_whatever_its_name(tmp_path: Path) -> None:
    path = tmp_path / "capture.bin"
    path.write_bytes(b"")
    assert list(iter_recordings([path])) == [path]
    assert list(iter_recordings(str(path))) == [path]


def test_iter_recordings_yields_each_file_once(tmp_path: Path) -> None:
    path = write_sample(tmp_path / "r.msgpack")
    assert list(iter_recordings([tmp_path, path])) == [path]


def test_iter_recordings_names_a_missing_path_before_yielding(tmp_path: Path) -> None:
    write_sample(tmp_path / "r.msgpack")
    paths = iter_recordings([tmp_path, tmp_path / "typo"])
    with pytest.raises(CorpusError, match="typo: no such file or directory"):
        next(paths)


def test_iter_recordings_of_an_empty_directory_yields_nothing(tmp_path: Path) -> None:
    assert list(iter_recordings([tmp_path])) == []


def test_a_second_writer_of_one_path_is_refused_and_the_first_stays_readable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "same.msgpack"
    with RecordingWriter(path, new_header(kind="chunks")) as first:
        first.frame(1, "kept")
        with pytest.raises(CorpusError, match="another writer has it open") as refused:
            RecordingWriter(path, new_header(kind="chunks"))
        assert "\n" not in str(refused.value)
        first.frame(2, " whole")
    recording = read_recording(path)
    assert recording.complete and [f.data for f in recording.frames] == ["kept", " whole"]
    with RecordingWriter(path, new_header(kind="chunks")):  # closed: free to be replaced
        pass


def test_finding_no_recording_is_one_error_naming_where(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no recording here")
    with pytest.raises(CorpusError, match=f"corpus: {tmp_path}: no recording"):
        find_recordings(tmp_path)
    write_recording(tmp_path / "a.msgpack", new_header(kind="chunks"), [])
    assert find_recordings([tmp_path]) == [tmp_path / "a.msgpack"]
