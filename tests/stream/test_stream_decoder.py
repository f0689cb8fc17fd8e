"""StreamDecoder, the incremental core that decode() loops around (a step debugger's view)."""

from __future__ import annotations

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
