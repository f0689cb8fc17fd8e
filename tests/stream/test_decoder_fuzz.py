"""The SSE and NDJSON decoders on generated hostile bodies: payloads with lone
and split surrogates, invalid UTF-8, garbage lines, and arbitrary read splits.

Property: the body decodes to a result whose every string can be encoded, or
raises a ``TcrError`` whose message is one line; and the split into reads
changes neither outcome."""

from __future__ import annotations

import itertools
import json

import pytest
from corpus.fuzzing import clean_or_one_line_error, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from tcr.errors import TcrError
from tcr.stream import Decoded, decode_bytes, decode_chunks

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXTS = st.text(st.one_of(st.characters(), SURROGATES), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXTS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def openai_payloads(draw: st.DrawFn) -> bytes:
    delta = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "content": TEXTS,
                "reasoning_content": TEXTS,
                "role": TEXTS,
                "tool_calls": st.lists(
                    st.fixed_dictionaries(
                        {"index": st.integers(0, 2)},
                        optional={
                            "id": TEXTS,
                            "function": st.fixed_dictionaries(
                                {}, optional={"name": TEXTS, "arguments": TEXTS}
                            ),
                        },
                    ),
                    max_size=2,
                ),
            },
        )
    )
    choice = {"index": 0, "delta": delta, "finish_reason": draw(st.none() | TEXTS)}
    return json.dumps({"choices": [choice]}).encode()  # ASCII: lone surrogates as \udXXX


@st.composite
def ollama_payloads(draw: st.DrawFn) -> bytes:
    message = {"role": "assistant", "content": draw(TEXTS)}
    return json.dumps({"message": message, "done": draw(st.booleans())}).encode()


ODD_PAYLOADS = st.one_of(
    st.binary(max_size=20),  # invalid UTF-8, stray line breaks, anything
    st.builds(lambda v: json.dumps(v).encode(), JSON_VALUES),
    st.sampled_from([b"[DONE]", b'{"error": "\\ud800"}', b"{", b"[" * 200, b"\xff\xfe"]),
)


def sse_bodies(payloads: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    events = st.builds(
        lambda payload, extra, end: b"data: " + payload + extra + end,
        payloads,
        st.sampled_from([b"", b"\nevent: error", b"\nerror: \xff", b"\nid: 1"]),
        st.sampled_from([b"\n\n", b"\r\n\r\n", b"\r\r", b"\n"]),
    )
    return st.lists(events, max_size=6).map(b"".join)


def ndjson_bodies(payloads: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    lines = st.builds(lambda p, end: p + end, payloads, st.sampled_from([b"\n", b"\r\n", b""]))
    return st.lists(lines, max_size=6).map(b"".join)


def reads(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(body), *(cut % (len(body) + 1) for cut in cuts)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


def assert_encodable(decoded: Decoded) -> None:
    texts = [*decoded.content, *decoded.reasoning, *decoded.errors, decoded.unfinished or ""]
    texts += [f"{c.id}{c.name}{c.arguments}" for c in decoded.calls]
    for delta in decoded.deltas:
        texts += [delta.role or "", delta.finish_reason or ""]
        texts += [f"{f.id}{f.name}{f.arguments}" for f in delta.tool_calls]
    for text in texts:
        text.encode("utf-8")


def outcome(kind: str, parts: list[bytes]) -> Decoded | str:
    result = clean_or_one_line_error(lambda: decode_bytes(kind, parts))
    if isinstance(result, TcrError):
        return str(result)
    assert_encodable(result)
    return result


def check(kind: str, body: bytes, cuts: list[int]) -> None:
    whole = outcome(kind, [body])
    assert outcome(kind, reads(body, cuts)) == whole
    assert outcome(kind, [body[i : i + 1] for i in range(len(body))]) == whole


CUTS = st.lists(st.integers(min_value=0), max_size=8)


@pytest.mark.slow
@fuzz_settings(200)
@given(body=sse_bodies(openai_payloads() | ODD_PAYLOADS), cuts=CUTS)
def test_sse_bodies_decode_the_same_however_split(body: bytes, cuts: list[int]) -> None:
    check("sse", body, cuts)


@pytest.mark.slow
@fuzz_settings(200)
@given(body=ndjson_bodies(ollama_payloads() | openai_payloads() | ODD_PAYLOADS), cuts=CUTS)
def test_ndjson_bodies_decode_the_same_however_split(body: bytes, cuts: list[int]) -> None:
    check("ndjson", body, cuts)


@pytest.mark.slow
@fuzz_settings(200)
@given(body=st.binary(max_size=300), cuts=CUTS)
def test_arbitrary_bytes_as_sse_or_ndjson(body: bytes, cuts: list[int]) -> None:
    check("sse", body, cuts)
    check("ndjson", body, cuts)


def test_an_unrecognised_payload_names_its_keys_on_one_printable_line() -> None:
    body = b'data: {"a\\nb\\ud800": 1}\n\n'
    message = outcome("sse", [body])
    assert isinstance(message, str) and "keys: 'a\\nb\\ud800'" in message


@pytest.mark.slow
@fuzz_settings(200)
@given(chunks=st.lists(TEXTS, max_size=8))
def test_engine_chunks_with_surrogates_are_always_encodable(chunks: list[str]) -> None:
    decoded = decode_chunks(chunks)
    assert_encodable(decoded)
    assert "".join(decoded.content) == "".join(chunks).encode("utf-16-le", "surrogatepass").decode(
        "utf-16-le", "replace"
    )
