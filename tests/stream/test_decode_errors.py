"""Bad input raises DecodeError naming what and where, and nothing else ever escapes."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr import DecodeError, TcrError
from tcr.stream import Decoded, StreamDecoder, decode_bytes


def test_malformed_json_names_the_event_and_its_bytes() -> None:
    body = b'data: {"choices":[]}\n\ndata: {"choices": [oops]}\n\n'

    with pytest.raises(DecodeError, match=r"SSE event 1 \(body bytes 22-48\): invalid JSON"):
        decode_bytes("sse", [body])


def test_malformed_json_message_shows_an_excerpt() -> None:
    with pytest.raises(DecodeError, match=r"'\{\"choices\": \[oops'"):
        decode_bytes("sse", [b'data: {"choices": [oops\n\n'])


def test_malformed_ndjson_line_names_the_line_and_its_bytes() -> None:
    body = b'{"done":false}\n{"done":\n'

    with pytest.raises(DecodeError, match=r"NDJSON line 1 \(body bytes 15-24\): invalid JSON"):
        decode_bytes("ndjson", [body])


def test_non_object_json_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"SSE event 0 .*expected a JSON object, got array"):
        decode_bytes("sse", [b"data: [1, 2]\n\n"])


def test_wrong_field_type_names_the_field_path() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":7}}]}\n\n'

    with pytest.raises(DecodeError, match=r"choices\[0\]\.delta\.content should be a string"):
        decode_bytes("sse", [body])


def test_wrong_tool_call_field_type_names_the_field_path() -> None:
    body = b'data: {"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}\n\n'

    with pytest.raises(DecodeError, match=r"tool_calls\[0\]\.index should be an integer"):
        decode_bytes("sse", [body])


def test_choices_that_is_not_an_array_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"field choices should be an array, got object"):
        decode_bytes("sse", [b'data: {"choices":{}}\n\n'])


def test_unrecognised_first_payload_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"unrecognised payload \(keys: object, type\)"):
        decode_bytes("sse", [b'data: {"type":"ping","object":"x"}\n\n'])


def test_deeply_nested_json_is_a_decode_error() -> None:
    body = b"data: " + b"[" * 100_000 + b"\n\n"

    with pytest.raises(DecodeError, match="SSE event 0"):
        decode_bytes("sse", [body])


def test_huge_integer_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="invalid JSON"):
        decode_bytes("sse", [b'data: {"n": ' + b"9" * 5000 + b"}\n\n"])


def test_ndjson_final_line_with_a_bad_shape_is_still_an_error() -> None:
    with pytest.raises(DecodeError, match="NDJSON line 0"):
        decode_bytes("ndjson", [b'{"message": "not an object", "done": true}'])


def test_unknown_kind_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="unknown stream kind 'xml'"):
        StreamDecoder("xml")


def test_read_of_the_wrong_type_is_a_decode_error() -> None:
    decoder = StreamDecoder("sse")

    with pytest.raises(DecodeError, match="read 0: expected bytes or str, got int"):
        decoder.feed(7)  # type: ignore[arg-type]


def test_decode_error_is_a_tcr_error() -> None:
    assert issubclass(DecodeError, TcrError)


# -- fuzz: parse, or raise the one permitted error, never anything else ---------

PIECES = [
    b"data: ",
    b"event: error\n",
    b"error: ",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"[DONE]",
    b'{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}',
    b'{"content":"a","stop":true}',
    b'{"message":{"content":"a","tool_calls":[{"function":{"arguments":{}}}]},"done":true}',
    b'{"error":{"message":"x"}}',
    b'{"choices":',
    b"null",
    b"7",
    b'"s"',
    b"[",
    b"{",
    b"}",
    b'"',
    b"\xf0\x9f\x98",
    b"\xff",
]

bodies = st.lists(st.sampled_from(PIECES) | st.binary(max_size=4), max_size=30).map(b"".join)


def outcome(kind: str, reads: list[bytes]) -> Decoded | str:
    try:
        return decode_bytes(kind, reads)
    except TcrError as exc:
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=300)
@given(kind=st.sampled_from(["sse", "ndjson", "chunks"]), body=st.binary(max_size=200))
def test_random_bytes_raise_nothing_but_tcr_error(kind: str, body: bytes) -> None:
    outcome(kind, [body])


@settings(max_examples=400)
@given(kind=st.sampled_from(["sse", "ndjson"]), body=bodies, data=st.data())
@pytest.mark.slow
def test_any_body_decodes_the_same_at_any_split(
    kind: str, body: bytes, data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=5)))
    bounds = [0, *cuts, len(body)]
    reads = [body[a:b] for a, b in pairwise(bounds)]

    assert outcome(kind, reads) == outcome(kind, [body])
