"""``tee``: engine chunks pass through unchanged and are recorded as they pass."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tcr.corpus import read_recording
from tcr.recorder import tee
from tcr.stream import decode

CHUNKS = [
    "Let me check. ",
    "<",
    "t",
    "oo",
    "l",
    "_",
    "c",
    "al",
    "l",
    ">",
    '{"name": "f"}',
    "</tool_call>",
]


def texts(path: Path) -> list[str]:
    return [str(frame.data) for frame in read_recording(path).frames]


def test_sync_str_chunks_pass_unchanged_and_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    assert list(tee(iter(CHUNKS), path)) == CHUNKS
    recording = read_recording(path)
    assert recording.kind == "chunks" and recording.complete
    assert texts(path) == CHUNKS
    assert decode(recording).content == CHUNKS
    times = [frame.t_ns for frame in recording.frames]
    assert times == sorted(times)


def test_async_str_chunks_pass_unchanged_and_are_recorded(tmp_path: Path) -> None:
    async def engine() -> AsyncIterator[str]:
        for chunk in CHUNKS:
            await asyncio.sleep(0)
            yield chunk

    async def consume() -> list[str]:
        return [chunk async for chunk in tee(engine(), tmp_path / "t.msgpack")]

    assert asyncio.run(consume()) == CHUNKS
    assert texts(tmp_path / "t.msgpack") == CHUNKS
    assert read_recording(tmp_path / "t.msgpack").complete


def test_bytes_chunks_pass_unchanged_and_record_the_text_they_decode_to(tmp_path: Path) -> None:
    raw = "Grüße, 世界 🌍".encode()
    pieces = [raw[i : i + 3] for i in range(0, len(raw), 3)]  # splits characters
    assert list(tee(pieces, tmp_path / "b.msgpack")) == pieces
    assert "".join(texts(tmp_path / "b.msgpack")) == raw.decode()


def test_async_bytes_chunks(tmp_path: Path) -> None:
    raw = "naïve".encode()

    async def engine() -> AsyncIterator[bytes]:
        for i in range(len(raw)):
            yield raw[i : i + 1]

    async def consume() -> list[bytes]:
        return [chunk async for chunk in tee(engine(), tmp_path / "b.msgpack")]

    assert b"".join(asyncio.run(consume())) == raw
    assert "".join(texts(tmp_path / "b.msgpack")) == "naïve"


def test_metadata_fills_the_header(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    list(tee(CHUNKS, path, tools=["f"], model="qwen3", dialect="hermes", note="engine"))
    header = read_recording(path).header
    assert header["tools"] == ["f"]
    assert header["source"]["model"] == "qwen3"
    assert header["labels"] == {
        "dialect": "hermes",
        "origin": "recorded",
        "note": "engine",
        "bug": None,
    }


def test_a_directory_gets_a_new_file(tmp_path: Path) -> None:
    list(tee(CHUNKS, tmp_path))
    [path] = tmp_path.glob("*.msgpack")
    assert texts(path) == CHUNKS


def test_the_file_is_created_when_iteration_starts(tmp_path: Path) -> None:
    wrapped = tee(CHUNKS, tmp_path / "t.msgpack")
    assert not (tmp_path / "t.msgpack").exists()
    next(wrapped)
    assert (tmp_path / "t.msgpack").exists()


def test_an_exception_mid_stream_closes_incomplete_and_is_reraised(tmp_path: Path) -> None:
    def engine() -> Iterator[str]:
        yield "one "
        yield "two "
        raise RuntimeError("engine crashed")

    received = []
    with pytest.raises(RuntimeError, match="engine crashed"):
        for chunk in tee(engine(), tmp_path / "t.msgpack"):
            received.append(chunk)
    recording = read_recording(tmp_path / "t.msgpack")
    assert received == texts(tmp_path / "t.msgpack") == ["one ", "two "]
    assert recording.incomplete_reason == "the source raised RuntimeError: engine crashed"


def test_an_async_exception_mid_stream_closes_incomplete_and_is_reraised(tmp_path: Path) -> None:
    async def engine() -> AsyncIterator[str]:
        yield "one "
        raise ValueError("bad token")

    async def consume() -> None:
        async for _ in tee(engine(), tmp_path / "t.msgpack"):
            pass

    with pytest.raises(ValueError, match="bad token"):
        asyncio.run(consume())
    recording = read_recording(tmp_path / "t.msgpack")
    assert texts(tmp_path / "t.msgpack") == ["one "]
    assert recording.incomplete_reason == "the source raised ValueError: bad token"


def test_a_consumer_that_stops_early_leaves_an_incomplete_recording(tmp_path: Path) -> None:
    wrapped = tee(CHUNKS, tmp_path / "t.msgpack")
    assert next(wrapped) == CHUNKS[0]
    wrapped.close()
    recording = read_recording(tmp_path / "t.msgpack")
    assert recording.incomplete_reason == "interrupted: the consumer stopped reading"
    assert texts(tmp_path / "t.msgpack") == CHUNKS[:1]


def test_cancelling_an_async_consumer_marks_it_interrupted(tmp_path: Path) -> None:
    async def engine() -> AsyncIterator[str]:
        while True:
            yield "x"
            await asyncio.sleep(0.001)

    async def main() -> None:
        async def consume() -> None:
            async for _ in tee(engine(), tmp_path / "t.msgpack"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        task.cancel("shutdown")
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert read_recording(tmp_path / "t.msgpack").incomplete_reason == "interrupted: shutdown"


def test_chunks_that_are_not_text_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="str or bytes chunks, not int"):
        list(tee([1, 2], tmp_path / "t.msgpack"))  # type: ignore[type-var]
