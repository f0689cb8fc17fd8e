"""The SSE encoder: what it writes decodes to what it was given, in either server's key order."""

from __future__ import annotations

import json

import pytest

from tcr.stream import decode_bytes
from tcr.stream.encode import (
    SSE_DONE,
    ChunkOrder,
    chat_chunk,
    compact_json,
    completion_chunk,
    sse_event,
)


def test_an_event_is_compact_json_with_utf8_left_raw() -> None:
    assert (
        sse_event({"content": "é <b>", "n": [1, 2]})
        == 'data: {"content":"é <b>","n":[1,2]}\n\n'.encode()
    )
    assert compact_json({"a": None}) == '{"a":null}'


@pytest.mark.parametrize("order", list(ChunkOrder))
def test_chat_chunks_decode_to_their_deltas_in_either_order(order: ChunkOrder) -> None:
    def event(delta: dict[str, object], finish: str | None = None) -> bytes:
        return sse_event(chat_chunk(delta, finish, chunk_id="c", model="m", created=1, order=order))

    body = [
        event({"role": "assistant", "content": None}),
        event({"content": "Hel"}),
        event({"content": "lo"}),
        event({}, "stop"),
        SSE_DONE,
    ]
    decoded = decode_bytes("sse", body)
    assert decoded.framing == "openai"
    assert "".join(decoded.content) == "Hello"
    assert decoded.finish_reason == "stop" and decoded.done


def test_openai_order_puts_choices_last_and_llama_server_order_puts_object_last() -> None:
    common = {"chunk_id": "c", "model": "m", "created": 1, "system_fingerprint": "b1"}
    openai = chat_chunk({"content": "x"}, **common)
    llama = chat_chunk({"content": "x"}, **common, order=ChunkOrder.LLAMA_SERVER)
    assert list(openai) == ["id", "object", "created", "model", "system_fingerprint", "choices"]
    assert list(llama) == ["choices", "created", "id", "model", "system_fingerprint", "object"]
    assert list(openai["choices"][0]) == ["index", "delta", "finish_reason"]
    assert list(llama["choices"][0]) == ["finish_reason", "index", "delta"]
    assert json.loads(compact_json(openai)) == json.loads(compact_json(llama))


def test_a_chunk_without_a_fingerprint_has_no_such_key() -> None:
    assert "system_fingerprint" not in chat_chunk({}, chunk_id="c", model="m", created=0)


def test_completion_events_decode_to_content_and_stop() -> None:
    body = [
        sse_event(completion_chunk("Hel")),
        sse_event(completion_chunk("lo")),
        sse_event(completion_chunk("", stop=True, stop_type="limit", model="m")),
    ]
    decoded = decode_bytes("sse", body)
    assert decoded.framing == "llamacpp"
    assert "".join(decoded.content) == "Hello"
    assert decoded.done
    assert completion_chunk("") == {"content": "", "stop": False}
