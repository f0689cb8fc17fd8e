"""The recording reader on hostile files: nesting, mixed key types, and fuzzed
bundled recordings. Whatever a file holds, reading it (and decoding what was
read) gives a clean result or one ``CorpusError`` line."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
from corpus.fuzzing import clean_or_one_line_error, fuzz_scale, fuzz_settings
from helpers import slow
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import examples

from tcr.corpora import bundled
from tcr.corpus import MAX_NESTING, new_header, read_recording, write_recording
from tcr.errors import CorpusError
from tcr.stream import decode

HEADER = msgpack.packb({"tcr": 1, "id": "x", "kind": "sse"})
DEEP_META = HEADER + b"\x93\x00\xc4\x01a" + b"\x81\xa1a" * 900 + b"\x00"
MIXED_TRAILER_KEYS = HEADER + b"\x82\xa3end\x80\xc4\x01k\x02"


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = {"a": value}
    return value


def tcr(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcr.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (DEEP_META, r"bad\.msgpack: byte 20: frame 0: meta nests deeper than 100 levels"),
        (MIXED_TRAILER_KEYS, r"bad\.msgpack: byte 20: .*got a map \[b'k', 'end'\]"),
    ],
    ids=["deep-meta", "mixed-keys"],
)
def test_hostile_recording_is_one_corpus_error(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.msgpack"
    path.write_bytes(data)
    with pytest.raises(CorpusError, match=message):
        read_recording(path)


@pytest.mark.parametrize("where", ["header", "meta", "expect"])
def test_nesting_at_the_limit_is_read_and_one_deeper_is_refused(tmp_path: Path, where: str) -> None:
    def write(depth: int) -> Path:
        path = tmp_path / f"{where}-{depth}.msgpack"
        header = {"tcr": 1, "id": "x", "kind": "sse", "labels": {"origin": "handmade"}}
        meta, expect = None, None
        # the value sits one level inside the header, meta or expectation map
        if where == "header":
            header["labels"] = nested(depth - 1)
        elif where == "meta":
            meta = {"deep": nested(depth - 1)}
        else:
            expect = {"deep": nested(depth - 1)}
        body = msgpack.packb(header) + msgpack.packb([0, b"x", meta] if meta else [0, b"x"])
        body += msgpack.packb({"end": {"complete": True, "error": None, "frames": 1, "bytes": 1}})
        if expect is not None:
            body += msgpack.packb({"expect": expect})
        path.write_bytes(body)
        return path

    read_recording(write(MAX_NESTING))
    with pytest.raises(CorpusError, match=f"nests deeper than {MAX_NESTING}"):
        read_recording(write(MAX_NESTING + 1))


def test_the_writer_refuses_what_the_reader_would_refuse(tmp_path: Path) -> None:
    header = {"tcr": 1, "id": "x", "kind": "sse", "request": nested(MAX_NESTING)}
    with pytest.raises(CorpusError, match="nests deeper"):
        write_recording(tmp_path / "w.msgpack", header, [(0, b"x")])


# A process each: the fast loop runs show's, the whole suite every command's.
@pytest.mark.parametrize("command", ["show", slow("replay"), slow("bless")])
@pytest.mark.parametrize("data", [DEEP_META, MIXED_TRAILER_KEYS], ids=["deep-meta", "mixed-keys"])
def test_commands_say_one_line_and_exit_2(tmp_path: Path, command: str, data: bytes) -> None:
    (tmp_path / "bad.msgpack").write_bytes(data)
    result = tcr(command, "bad.msgpack", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    # show and bless stop with one line on stderr; replay reports the file in its table
    [line] = [line for line in (result.stderr + result.stdout).splitlines() if "corpus:" in line]
    assert "bad.msgpack: byte 20:" in line
    if command != "replay":
        assert result.stderr == line + "\n"


def test_serve_skips_a_file_with_mixed_trailer_keys(tmp_path: Path) -> None:
    from tcr.replay.serve import load_recordings

    (tmp_path / "bad.msgpack").write_bytes(MIXED_TRAILER_KEYS)
    good = tmp_path / "good.msgpack"
    write_recording(good, {"tcr": 1, "id": "g", "kind": "sse"}, [(0, b"data: [DONE]\n\n")])
    skipped: list[str] = []
    loaded = load_recordings([tmp_path], on_skipped=skipped.append)
    assert [path.name for path, _ in loaded] == ["good.msgpack"]
    assert len(skipped) == 1 and "bad.msgpack" in skipped[0]


# --- fuzzing every bundled recording ----------------------------------------------

BUNDLED = sorted(bundled())


def read_and_decode(path: Path) -> object:
    recording = read_recording(path)
    return decode(recording)


def cut_points(data: bytes, most: int) -> list[int]:
    """Offsets to cut ``data`` at: around each object boundary (at most ``most``
    boundaries, evenly spread) and in the middle of each object."""
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    bounds = [0]
    for _ in unpacker:
        bounds.append(unpacker.tell())
    step = max(1, len(bounds) // most)
    chosen = bounds[::step] + bounds[-2:]
    cuts = {b + d for b in chosen for d in (-2, -1, 0, 1, 2)}
    cuts |= {(a + b) // 2 for a, b in itertools.pairwise(chosen)}
    return sorted(c for c in cuts if 0 <= c <= len(data))


@pytest.mark.slow  # 190 files: the fast loop has the random truncations below
@pytest.mark.parametrize("source", BUNDLED, ids=lambda path: path.name)
def test_truncations_of_each_bundled_recording(tmp_path: Path, source: Path) -> None:
    data = source.read_bytes()
    path = tmp_path / "cut.msgpack"
    # 16 boundaries per file keep the default run to seconds, the dev profile's fewer the
    # fast loop; CI cuts at more
    for size in cut_points(data, most=examples(fuzz_settings(16).max_examples)):
        path.write_bytes(data[:size])
        clean_or_one_line_error(lambda: read_and_decode(path))


@fuzz_settings(100)
@given(source=st.sampled_from(BUNDLED), where=st.floats(0, 1))
def test_random_truncations_of_bundled_recordings(
    tmp_path: Path, source: Path, where: float
) -> None:
    data = source.read_bytes()
    path = tmp_path / "cut.msgpack"
    path.write_bytes(data[: int(where * len(data))])
    clean_or_one_line_error(lambda: read_and_decode(path))


@fuzz_settings(200)
@given(
    source=st.sampled_from(BUNDLED),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=4),
)
def test_random_byte_flips_of_bundled_recordings(
    tmp_path: Path, source: Path, flips: list[tuple[float, int]]
) -> None:
    data = bytearray(source.read_bytes())
    for where, value in flips:
        data[int(where * len(data))] = value
    path = tmp_path / "flipped.msgpack"
    path.write_bytes(bytes(data))
    clean_or_one_line_error(lambda: read_and_decode(path))


# --- every byte of a small recording of each kind ---------------------------------
# The fuzz tests above cut bundled recordings near object boundaries and flip bytes at
# random places; these visit every offset of a small recording that holds every kind
# of object (header, frames with and without meta, trailer, expectation).

SMALL_BODIES: dict[str, list[bytes | str]] = {
    "sse": [
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi \\ud83d"}}]}\n\n',
        b'data: {"choices":[{"index":0,"delta":{"content":"\\ude00 there"},'
        b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    ],
    "ndjson": [
        b'{"message":{"role":"assistant","content":"Hi "},"done":false}\n',
        b'{"message":{"role":"assistant","content":"there"},"done":true}\n',
    ],
    "chunks": ["Hi ", "th\u00e9re \U0001f600"],
}
# msgpack's type bytes of every family (fixint, fixmap, fixarray, fixstr, nil, the
# never-used 0xc1, bools, bin, ext, floats, ints, str, array, map with 32-bit lengths,
# negative fixint): each one read where another was written
TYPE_BYTES = bytes.fromhex(
    "00 7f 80 8f 90 9f a0 bf c0 c1 c2 c3 c4 c6 c7 ca cb cf d3 d4 d9 db dc dd de df e0 ff"
)


def small_recording(tmp_path: Path, kind: str) -> bytes:
    """The same bytes every run (290 to 446 of them)."""
    header = new_header(
        kind,
        id="small",
        created="2026-12-01T00:00:00+00:00",
        labels={"note": "every byte"},
        tools=["get_weather"],
    )
    first, second = SMALL_BODIES[kind]
    frames = [(0, first, {"read": 0}), (1_000, second)]
    path = write_recording(tmp_path / f"{kind}.msgpack", header, frames, expect={"text": "Hi"})
    return path.read_bytes()


def corruptions(offset: int, byte: int, *, every: bool) -> list[int]:
    """What the byte at ``offset`` is read as instead. ``every``: each bit flipped and
    every type byte (40,568 files over the three kinds); else four of them, a different
    four at each offset (4,529 files)."""
    flips = [byte ^ (1 << bit) for bit in range(8)]
    if every:
        return sorted(set(flips) | set(TYPE_BYTES) - {byte})
    types = (TYPE_BYTES[offset % len(TYPE_BYTES)], TYPE_BYTES[(7 * offset + 3) % len(TYPE_BYTES)])
    return sorted({byte ^ 0xFF, flips[offset % 8], *types} - {byte})


@pytest.mark.parametrize("kind", sorted(SMALL_BODIES))
def test_a_small_recording_cut_at_every_byte_reads_or_is_one_error(
    tmp_path: Path, kind: str
) -> None:
    data = small_recording(tmp_path, kind)
    path = tmp_path / "cut.msgpack"
    for size in range(len(data) + 1):
        path.write_bytes(data[:size])
        clean_or_one_line_error(lambda: read_and_decode(path))


@pytest.mark.parametrize("kind", sorted(SMALL_BODIES))
def test_a_small_recording_cut_in_its_body_keeps_every_whole_frame(
    tmp_path: Path, kind: str
) -> None:
    data = small_recording(tmp_path, kind)
    whole = read_recording(tmp_path / f"{kind}.msgpack")
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    bounds = []
    for _ in unpacker:
        bounds.append(unpacker.tell())
    header_end, trailer_end = bounds[0], bounds[-2]  # the last object is the expectation
    path = tmp_path / "cut.msgpack"
    for size in range(header_end, trailer_end):  # cut before its trailer ends: interrupted
        path.write_bytes(data[:size])
        recording = read_recording(path)
        kept = sum(1 for end in bounds[1:-2] if end <= size)
        assert (recording.frames, recording.complete) == (whole.frames[:kept], False), size


@pytest.mark.parametrize("kind", sorted(SMALL_BODIES))
def test_a_small_recording_with_any_byte_corrupted_reads_or_is_one_error(
    tmp_path: Path, kind: str
) -> None:
    data = small_recording(tmp_path, kind)
    path = tmp_path / "corrupt.msgpack"
    every = fuzz_scale() > 1  # CI: every bit flip and every type byte at each offset
    for offset, byte in enumerate(data):
        for value in corruptions(offset, byte, every=every):
            path.write_bytes(data[:offset] + bytes([value]) + data[offset + 1 :])
            clean_or_one_line_error(lambda: read_and_decode(path))


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("command", ["show", slow("replay"), slow("tui")])  # as above
def test_a_fifo_or_a_device_named_as_a_recording_is_one_line_not_a_hang(
    tmp_path: Path, kind: str, command: str
) -> None:
    """Opening a FIFO waits for a writer, and /dev/zero never ends: both are refused
    before they are read (``tcr show`` on a FIFO hung, issue 36)."""
    path = tmp_path / "x.msgpack"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-m", "tcr.cli", command, str(path)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "x.msgpack" in done.stderr, done.stderr
