"""StreamDecoder, the incremental core that decode() loops around (a step debugger's view)."""

from __future__ import annotations

import json
import sys

import pytest

from tcr.stream import Delta, StreamDecoder

EVENT_A = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
EVENT_B = b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n'


def test_feed_returns_the_deltas_that_read_completed() -> None:
    decoder = StreamDecoder("sse")

    assert decoder.feed(EVENT_A + EVENT_B[:10]) == [Delta(content="a")]
    assert decoder.feed(EVENT_B[10:]) == [Delta(content="b")]
    assert decoder.feed(b"data: [DONE]\n\n") == [Delta(done=True)]


def test_framing_is_unknown_until_the_first_payload() -> None:
    decoder = StreamDecoder("sse")

    assert decoder.framing is None
    decoder.feed(EVENT_A)
    assert decoder.framing == "openai"


def test_result_is_a_snapshot_that_later_reads_do_not_change() -> None:
    decoder = StreamDecoder("sse")
    decoder.feed(EVENT_A)
    snapshot = decoder.result()
    decoder.feed(EVENT_B)

    assert snapshot.content == ["a"]
    assert decoder.result().content == ["a", "b"]


def test_result_before_finish_has_no_unfinished_tail() -> None:
    decoder = StreamDecoder("sse")
    decoder.feed(EVENT_A + b"data: {")

    assert decoder.result().unfinished is None
    assert decoder.finish() == []
    assert decoder.result().unfinished == "{"


def test_error_event_without_data_still_reports_an_error() -> None:
    decoder = StreamDecoder("sse")

    assert decoder.feed(b"event: error\ndata:\n\n") == [Delta(error="error event without data")]


# --- the content as the decoder holds it (one string, not a string per chunk) -------

CHUNKS = ["The", " weather", "", " in", " Paris", " \U0001f600", "\n", "é"]


def content_event(text: str) -> bytes:
    return b"data: " + json.dumps({"choices": [{"delta": {"content": text}}]}).encode() + b"\n\n"


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 1024])
def test_content_is_the_same_chunks_whatever_the_batch_they_are_joined_in(
    monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(sys.modules["tcr.stream.decode"], "_BATCH", batch)
    decoder = StreamDecoder("sse")
    for chunk in CHUNKS * 3:
        decoder.feed(content_event(chunk))
    decoder.finish()
    content = decoder.result().content
    nonempty = [chunk for chunk in CHUNKS * 3 if chunk]

    assert content == nonempty and list(content) == nonempty and len(content) == len(nonempty)
    assert [content[i] for i in range(-len(nonempty), len(nonempty))] == nonempty * 2
    assert decoder.result().text == "".join(nonempty)


@pytest.mark.parametrize("batch", [1, 2, 1024])
def test_each_result_keeps_its_chunks_while_the_decoder_reads_on(
    monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(sys.modules["tcr.stream.decode"], "_BATCH", batch)
    decoder = StreamDecoder("sse")
    snapshots = []
    for chunk in CHUNKS:
        decoder.feed(content_event(chunk))
        snapshots.append(decoder.result())
        snapshots.append(decoder.result())  # twice: both share what they hold

    for index, snapshot in enumerate(snapshots):
        seen = [chunk for chunk in CHUNKS[: index // 2 + 1] if chunk]
        assert (snapshot.content, snapshot.text) == (seen, "".join(seen))


def test_content_past_four_giga_characters_is_placed_with_wide_offsets() -> None:
    # 4 bytes a chunk hold an offset below 2**32; the builder widens them past it
    # (as tcr.rechunk.Cuts does), without writing 4 G characters here
    builder = sys.modules["tcr.stream.decode"]._PiecesBuilder()
    builder.append("ab")
    builder._length = 2**32 - 3
    builder.append("cd")
    builder.append("ef")
    pieces = builder.pieces()

    assert pieces._ends.tolist() == [2, 2**32 - 1, 2**32 + 1]
    assert pieces._ends.typecode == "q"
