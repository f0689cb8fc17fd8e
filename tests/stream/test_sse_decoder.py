"""SSEDecoder edge cases, one rule of the WHATWG processing model each."""

from __future__ import annotations

import pytest

from tcr.stream import SSEDecoder, SSEEvent

BOM = b"\xef\xbb\xbf"


def decode_reads(*reads: bytes, keep_unknown_fields: bool = False) -> list[SSEEvent]:
    decoder = SSEDecoder(keep_unknown_fields=keep_unknown_fields)
    events = [event for read in reads for event in decoder.feed(read)]
    return events + decoder.finish()


def test_crlf_split_across_reads_is_one_line_end() -> None:
    assert decode_reads(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SSEEvent(data="a"),
        SSEEvent(data="b"),
    ]


def test_trailing_cr_dispatches_without_waiting_for_the_next_read() -> None:
    decoder = SSEDecoder()

    assert decoder.feed(b"data: a\r\r") == [SSEEvent(data="a")]
    assert decoder.feed(b"\ndata: b\n\n") == [SSEEvent(data="b")]


def test_lone_cr_ends_a_line() -> None:
    assert decode_reads(b"data: a\rdata: b\r\r") == [SSEEvent(data="a\nb")]


def test_cr_then_lf_in_separate_reads_after_empty_read() -> None:
    assert decode_reads(b"data: a\r", b"", b"\n\n") == [SSEEvent(data="a")]


def test_bom_at_stream_start_is_stripped() -> None:
    assert decode_reads(BOM + b"data: a\n\n") == [SSEEvent(data="a")]


def test_bom_split_across_reads_is_stripped() -> None:
    assert decode_reads(BOM[:1], BOM[1:2], BOM[2:] + b"data: a\n\n") == [SSEEvent(data="a")]


def test_bom_after_stream_start_is_part_of_the_field_name() -> None:
    # "\ufeffdata" is an unknown field, so the block has no data.
    assert decode_reads(b"data: a\n\n" + BOM + b"data: b\n\n") == [SSEEvent(data="a")]


def test_second_bom_at_stream_start_is_kept() -> None:
    assert decode_reads(BOM + BOM + b"data: a\n\n") == []


def test_bom_inside_data_is_kept() -> None:
    assert decode_reads(b"data: " + BOM + b"a\n\n") == [SSEEvent(data="\ufeffa")]


def test_comment_lines_are_ignored() -> None:
    assert decode_reads(b": ping\ndata: a\n:\n\n") == [SSEEvent(data="a")]


def test_field_without_colon_has_empty_value() -> None:
    assert decode_reads(b"data\n\n") == [SSEEvent(data="")]


def test_only_one_leading_space_is_stripped() -> None:
    assert decode_reads(b"data:   a \n\n") == [SSEEvent(data="  a ")]


def test_value_keeps_later_colons() -> None:
    assert decode_reads(b"data: a: b:c\n\n") == [SSEEvent(data="a: b:c")]


def test_block_without_data_is_not_dispatched() -> None:
    assert decode_reads(b"event: ping\nid: 3\n\n") == []


def test_event_type_resets_after_each_dispatch() -> None:
    events = decode_reads(b"event: add\ndata: 1\n\ndata: 2\n\n")

    assert [e.event for e in events] == ["add", "message"]


def test_event_type_of_an_undispatched_block_does_not_leak() -> None:
    assert decode_reads(b"event: add\n\ndata: 1\n\n") == [SSEEvent(data="1")]


def test_empty_event_field_means_message() -> None:
    assert decode_reads(b"event:\ndata: 1\n\n") == [SSEEvent(event="message", data="1")]


def test_id_persists_across_events() -> None:
    events = decode_reads(b"id: 5\ndata: a\n\ndata: b\n\n")

    assert [e.id for e in events] == ["5", "5"]


def test_id_without_any_id_field_is_none() -> None:
    assert decode_reads(b"data: a\n\n")[0].id is None


def test_id_containing_nul_is_ignored() -> None:
    events = decode_reads(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")

    assert [e.id for e in events] == ["1", "1"]


def test_id_in_an_undispatched_block_still_sets_last_event_id() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"id: 9\n\ndata: a\n\n")

    assert events == [SSEEvent(data="a", id="9")]
    assert decoder.last_event_id == "9"


def test_retry_with_ascii_digits_is_set() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"retry: 1500\ndata: a\n\ndata: b\n\n")

    assert [e.retry for e in events] == [1500, None]
    assert decoder.retry == 1500


@pytest.mark.parametrize("value", [b"", b"15s", b"-1", b"1.5", b" 15", b"\xd9\xa1\xd9\xa2"])
def test_retry_that_is_not_all_ascii_digits_is_ignored(value: bytes) -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"retry: " + value + b"\ndata: a\n\n")

    assert events == [SSEEvent(data="a")]
    assert decoder.retry is None


def test_unknown_fields_are_ignored() -> None:
    assert decode_reads(b"foo: bar\ndata: a\n\n") == [SSEEvent(data="a", extra=(("foo", "bar"),))]


def test_unknown_field_only_block_is_dropped_by_default() -> None:
    assert decode_reads(b'error: {"message": "boom"}\n\n') == []


def test_unknown_field_only_block_is_kept_when_asked() -> None:
    events = decode_reads(b'error: {"message": "boom"}\n\n', keep_unknown_fields=True)

    assert events == [SSEEvent(data="", extra=(("error", '{"message": "boom"}'),))]


def test_unfinished_event_is_reported_at_finish() -> None:
    decoder = SSEDecoder()

    assert decoder.feed(b"data: a\n\ndata: b\n") == [SSEEvent(data="a")]
    assert decoder.finish() == [SSEEvent(data="b", complete=False)]


def test_final_line_without_line_end_is_read_at_finish() -> None:
    assert decode_reads(b"data: a\n\ndata: partial") == [
        SSEEvent(data="a"),
        SSEEvent(data="partial", complete=False),
    ]


def test_finish_after_complete_stream_returns_nothing() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n")

    assert decoder.finish() == []


def test_trailing_comment_is_not_an_unfinished_event() -> None:
    assert decode_reads(b"data: a\n\n: bye") == [SSEEvent(data="a")]


def test_character_split_across_reads_is_not_mangled() -> None:
    emoji = "😀".encode()

    assert decode_reads(b"data: " + emoji[:1], emoji[1:3], emoji[3:] + b"\n\n") == [
        SSEEvent(data="😀")
    ]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert decode_reads(b"data: a\xffb\xe6\xbc\n\n") == [SSEEvent(data="a\ufffdb\ufffd")]


def test_truncated_sequence_before_line_end_is_one_replacement() -> None:
    assert decode_reads(b"data: \xf0\x9f", b"\n\n") == [SSEEvent(data="\ufffd")]


def test_event_offsets_name_its_bytes() -> None:
    body = b": hi\n\ndata: a\r\nid: 1\r\n\r\ndata: b"
    events = decode_reads(body)

    assert [(e.start, e.end) for e in events] == [(6, 22), (24, 31)]
    assert body[6:22] == b"data: a\r\nid: 1\r\n"


def test_offsets_do_not_take_part_in_equality() -> None:
    assert SSEEvent(data="a", start=0, end=5) == SSEEvent(data="a", start=9, end=20)


def test_feed_after_finish_is_a_usage_error() -> None:
    decoder = SSEDecoder()
    decoder.finish()

    with pytest.raises(RuntimeError):
        decoder.feed(b"data: a\n\n")


def test_bytes_received_counts_every_byte() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\r")
    decoder.feed(b"\n\n")

    assert decoder.bytes_received == 10
