"""Chunking equivalence: how the body is split into reads never changes the events.

Every 2-way and 3-way split point, fixed fragment sizes (1, 2, 3, 97, 100000),
and random bodies and splits checked against a deliberately naive reference
that decodes the whole body at once and follows the spec line by line.
"""

from __future__ import annotations

import re
from itertools import combinations_with_replacement, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.stream import SSEDecoder, SSEEvent

# CRLF, lone CR and LF line ends, a BOM, comments, a retry, an id, 2-, 3- and
# 4-byte UTF-8 characters, and an unfinished event at the end.
STREAM = (
    b"\xef\xbb\xbf: hello\r\n"
    b"\r\n"
    b"event: greeting\r\n"
    b"data: caf\xc3\xa9\r\n"
    b"data: \xf0\x9f\x98\x80\r\n"
    b"id: 7\r\n"
    b"\r\n"
    b"data:\xe6\xbc\xa2\xe5\xad\x97\r"
    b"retry: 1500\r"
    b"\r"
    b": keep-alive\n"
    b"data: last\n"
    b"\n"
    b"data: tail \xf0\x9f\x98\x80"
)

EXPECTED = [
    SSEEvent(event="greeting", data="café\n😀", id="7"),
    SSEEvent(data="漢字", id="7", retry=1500),
    SSEEvent(data="last", id="7"),
    SSEEvent(data="tail 😀", id="7", complete=False),
]

Positioned = list[tuple[SSEEvent, int, int]]


def decode_reads(reads: list[bytes]) -> Positioned:
    decoder = SSEDecoder()
    events = [event for read in reads for event in decoder.feed(read)]
    return [(e, e.start, e.end) for e in events + decoder.finish()]


def split_at(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in pairwise(bounds)]


WHOLE = decode_reads([STREAM])


def test_whole_stream_decodes_to_the_expected_events() -> None:
    assert [event for event, _, _ in WHOLE] == EXPECTED


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_every_two_way_split_decodes_like_the_whole(cut: int) -> None:
    assert decode_reads(split_at(STREAM, [cut])) == WHOLE


def test_every_three_way_split_decodes_like_the_whole() -> None:
    for cuts in combinations_with_replacement(range(len(STREAM) + 1), 2):
        assert decode_reads(split_at(STREAM, list(cuts))) == WHOLE, cuts


@pytest.mark.parametrize("size", [1, 2, 3, 97, 100_000])
def test_fixed_fragment_sizes_decode_like_the_whole(size: int) -> None:
    reads = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]

    assert decode_reads(reads) == WHOLE


def test_large_body_in_one_byte_reads_decodes_like_the_whole() -> None:
    body = b"".join(b"data: %d \xe2\x82\xac\r\n\r" % i for i in range(2000)) + b"\n"
    whole = decode_reads([body])

    assert len(whole) == 2000
    assert decode_reads([body[i : i + 1] for i in range(len(body))]) == whole


def test_long_line_in_small_reads_decodes_like_the_whole() -> None:
    body = b"data: " + b"x" * 200_000 + b"\n\n"

    assert decode_reads([body[i : i + 3] for i in range(0, len(body), 3)]) == [
        (SSEEvent(data="x" * 200_000), 0, len(body) - 1)
    ]


# -- the naive reference ------------------------------------------------------


def reference(body: bytes) -> list[SSEEvent]:
    """The spec's processing model over the whole decoded body, nothing clever."""
    text = body.decode("utf-8", "replace").removeprefix("\ufeff")
    *lines, tail = re.split(r"\r\n|\r|\n", text)
    if tail:
        lines.append(tail)
    events: list[SSEEvent] = []
    data: list[str] = []
    extra: list[tuple[str, str]] = []
    event_type, last_id, retry = "", None, None
    for line in lines:
        if line == "":
            if data:
                events.append(
                    SSEEvent(
                        event_type or "message", "\n".join(data), last_id, retry, True, tuple(extra)
                    )
                )
            data, extra, event_type, retry = [], [], "", None
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            value = value[1:] if value.startswith(" ") else value
        else:
            name, value = line, ""
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry":
            if re.fullmatch("[0-9]+", value):
                retry = int(value)
        elif name not in ("event", "id"):
            extra.append((name, value))
    if data:
        events.append(
            SSEEvent(event_type or "message", "\n".join(data), last_id, retry, False, tuple(extra))
        )
    return events


PIECES = [
    b"data",
    b"data:",
    b"data: ",
    b"event: e",
    b"id: 1",
    b"id",
    b"retry: 20",
    b"retry: x",
    b":",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xc3\xa9",
    b"\xf0\x9f\x98\x80",
    b"\xe6\xbc",
    b"\xff",
]

bodies = st.lists(st.sampled_from(PIECES) | st.binary(max_size=3), max_size=40).map(b"".join)


@settings(max_examples=300)
@given(body=bodies, data=st.data())
@pytest.mark.slow
def test_any_body_at_any_split_matches_the_reference(body: bytes, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    events = [event for event, _, _ in decode_reads(split_at(body, cuts))]

    assert events == reference(body)
