"""NDJSONDecoder: body bytes to lines, whatever the reads."""

from __future__ import annotations

import pytest

from tcr.stream import NDJSONDecoder, NDJSONLine


def decode_reads(*reads: bytes) -> list[NDJSONLine]:
    decoder = NDJSONDecoder()
    lines = [line for read in reads for line in decoder.feed(read)]
    return lines + decoder.finish()


def texts(lines: list[NDJSONLine]) -> list[str]:
    return [line.text for line in lines]


def test_lines_end_at_line_feed() -> None:
    assert texts(decode_reads(b'{"a":1}\n{"b":2}\n')) == ['{"a":1}', '{"b":2}']


def test_line_split_across_reads_is_joined() -> None:
    assert texts(decode_reads(b'{"a"', b":1", b"}\n")) == ['{"a":1}']


def test_crlf_ends_a_line() -> None:
    assert texts(decode_reads(b'{"a":1}\r\n{"b":2}\r\n')) == ['{"a":1}', '{"b":2}']


def test_crlf_split_across_reads_ends_a_line() -> None:
    assert texts(decode_reads(b'{"a":1}\r', b'\n{"b":2}\r', b"\n")) == ['{"a":1}', '{"b":2}']


def test_lone_cr_is_not_a_line_end() -> None:
    assert texts(decode_reads(b'{"a":\r1}\n')) == ['{"a":\r1}']


def test_blank_lines_are_ignored() -> None:
    assert texts(decode_reads(b'\n\n{"a":1}\n \t\r\n\n')) == ['{"a":1}']


def test_final_line_without_line_feed_is_reported_at_finish() -> None:
    decoder = NDJSONDecoder()

    assert texts(decoder.feed(b'{"a":1}\n{"b":')) == ['{"a":1}']
    assert decoder.finish() == [NDJSONLine('{"b":', start=8, end=13, complete=False)]


def test_character_split_across_reads_is_not_mangled() -> None:
    assert texts(decode_reads(b'{"t":"\xe6', b"\xbc\xa2", b'"}\n')) == ['{"t":"漢"}']


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert texts(decode_reads(b'{"t":"\xff"}\n')) == ['{"t":"\ufffd"}']


def test_bom_at_body_start_is_stripped() -> None:
    assert texts(decode_reads(b'\xef\xbb\xbf{"a":1}\n')) == ['{"a":1}']


def test_line_offsets_name_its_bytes() -> None:
    body = b'{"a":1}\r\n\n{"b":2}\n'
    lines = decode_reads(body)

    assert [(line.start, line.end) for line in lines] == [(0, 9), (10, 18)]
    assert body[10:18] == b'{"b":2}\n'


@pytest.mark.parametrize("size", [1, 2, 3, 97, 100_000])
def test_fragment_sizes_decode_like_the_whole(size: int) -> None:
    body = b'{"t":"caf\xc3\xa9 \xf0\x9f\x98\x80"}\r\n\n{"t":"\xe6\xbc\xa2"}\n{"t":"tail"}'
    reads = [body[i : i + size] for i in range(0, len(body), size)]

    assert decode_reads(*reads) == decode_reads(body)


def test_every_two_way_split_decodes_like_the_whole() -> None:
    body = b'{"t":"caf\xc3\xa9"}\r\n\n{"t":"\xf0\x9f\x98\x80"}\n{"t":"x"}'
    whole = decode_reads(body)

    for cut in range(len(body) + 1):
        assert decode_reads(body[:cut], body[cut:]) == whole, cut
