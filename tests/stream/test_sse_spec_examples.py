"""The examples of the WHATWG spec, as tests.

https://html.spec.whatwg.org/multipage/server-sent-events.html — the examples
in "Authoring notes" / "Event stream interpretation" (§9.2.5 and §9.2.6), each with
the outcome the spec's prose gives for it.
"""

from __future__ import annotations

from tcr.stream import SSEDecoder, SSEEvent


def decode_all(body: bytes) -> tuple[list[SSEEvent], list[SSEEvent]]:
    decoder = SSEDecoder()
    return decoder.feed(body), decoder.finish()


def test_stock_ticker_data_lines_join_with_line_feed() -> None:
    events, tail = decode_all(b"data: YHOO\ndata: +2\ndata: 10\n\n")

    assert events == [SSEEvent(data="YHOO\n+2\n10")]
    assert tail == []


def test_comment_block_fires_nothing_and_multiline_data_is_one_event() -> None:
    body = (
        b": this is a test stream\n\n"
        b"data: some text\n\n"
        b"data: another message\n"
        b"data: with two lines\n\n"
    )

    events, _ = decode_all(body)

    assert events == [
        SSEEvent(data="some text"),
        SSEEvent(data="another message\nwith two lines"),
    ]


def test_id_sets_last_event_id_and_bare_id_resets_it() -> None:
    body = (
        b": test stream\n\n"
        b"data: first event\nid: 1\n\n"
        b"data:second event\nid\n\n"
        b"data:  third event\n\n"
    )

    events, _ = decode_all(body)

    assert events == [
        SSEEvent(data="first event", id="1"),
        SSEEvent(data="second event", id=""),
        SSEEvent(data=" third event", id=""),  # only one space is stripped
    ]


def test_empty_data_lines_give_empty_string_and_single_newline() -> None:
    events, tail = decode_all(b"data\n\ndata\ndata\n\ndata:")

    assert events == [SSEEvent(data=""), SSEEvent(data="\n")]
    # The spec discards the last block (no blank line); tcr reports it.
    assert tail == [SSEEvent(data="", complete=False)]


def test_space_after_colon_is_optional() -> None:
    events, _ = decode_all(b"data:test\n\ndata: test\n\n")

    assert events == [SSEEvent(data="test"), SSEEvent(data="test")]
    assert events[0] == events[1]


def test_event_field_sets_the_type_of_one_event() -> None:
    body = (
        b"event: add\ndata: 73857293\n\n"
        b"event: remove\ndata: 2153\n\n"
        b"event: add\ndata: 113411\n\n"
        b"data: plain\n\n"
    )

    events, _ = decode_all(body)

    assert [(e.event, e.data) for e in events] == [
        ("add", "73857293"),
        ("remove", "2153"),
        ("add", "113411"),
        ("message", "plain"),
    ]
