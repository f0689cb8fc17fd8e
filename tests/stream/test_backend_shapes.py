"""llama.cpp /completion, Ollama NDJSON and engine chunks, and telling them apart."""

from __future__ import annotations

import pytest

from tcr.stream import Delta, NativeCall, decode_bytes, decode_chunks, detect_framing

# Hand-written in the shape of llama-server POST /completion
# {"prompt": "The capital of France is", "stream": true, "n_predict": 3}.
LLAMACPP_COMPLETION = (
    b'data: {"index":0,"content":" Paris","tokens":[7042],"stop":false,"id_slot":-1,'
    b'"tokens_predicted":1,"tokens_evaluated":6}\n\n'
    b'data: {"index":0,"content":".","tokens":[30],"stop":false,"id_slot":-1,'
    b'"tokens_predicted":2,"tokens_evaluated":6}\n\n'
    b'data: {"index":0,"content":" It","tokens":[657],"stop":false,"id_slot":-1,'
    b'"tokens_predicted":3,"tokens_evaluated":6}\n\n'
    b'data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,'
    b'"model":"SmolLM2-135M-Instruct.Q4_1.gguf","tokens_predicted":3,"tokens_evaluated":6,'
    b'"generation_settings":{"n_predict":3,"seed":4294967295,"temperature":0.0},'
    b'"prompt":"The capital of France is","has_new_line":false,"truncated":false,'
    b'"stop_type":"limit","stopping_word":"","tokens_cached":8,'
    b'"timings":{"prompt_n":6,"prompt_ms":21.3,"predicted_n":3,"predicted_ms":18.9}}\n\n'
)

# Hand-written in the shape of ollama POST /api/chat with "tools", model qwen3:
# thinking, then a native call sent whole, then the done line.
OLLAMA_CHAT_TOOL_CALL = (
    b'{"model":"qwen3:0.6b","created_at":"2025-06-01T10:00:00.1Z","message":'
    b'{"role":"assistant","content":"","thinking":"The user wants"},"done":false}\n'
    b'{"model":"qwen3:0.6b","created_at":"2025-06-01T10:00:00.2Z","message":'
    b'{"role":"assistant","content":"","thinking":" the weather."},"done":false}\n'
    b'{"model":"qwen3:0.6b","created_at":"2025-06-01T10:00:00.3Z","message":'
    b'{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather",'
    b'"arguments":{"city":"Paris","unit":"celsius"}}}]},"done":false}\n'
    b'{"model":"qwen3:0.6b","created_at":"2025-06-01T10:00:00.4Z","message":'
    b'{"role":"assistant","content":""},"done_reason":"stop","done":true,'
    b'"total_duration":412000000,"load_duration":21000000,"prompt_eval_count":140,'
    b'"prompt_eval_duration":90000000,"eval_count":31,"eval_duration":280000000}\n'
)

OLLAMA_GENERATE = (
    b'{"model":"llama3.2","created_at":"2025-06-01T10:00:00Z","response":"Hi","done":false}\n'
    b'{"model":"llama3.2","created_at":"2025-06-01T10:00:01Z","response":" there","done":false}\n'
    b'{"model":"llama3.2","created_at":"2025-06-01T10:00:02Z","response":"","done":true,'
    b'"done_reason":"stop"}\n'
)


def test_llamacpp_completion_content_is_the_content_sequence() -> None:
    result = decode_bytes("sse", [LLAMACPP_COMPLETION])

    assert result.framing == "llamacpp"
    assert result.content == [" Paris", ".", " It"]


def test_llamacpp_stop_true_sets_done_and_stop_type_is_the_finish_reason() -> None:
    result = decode_bytes("sse", [LLAMACPP_COMPLETION])

    assert result.done is True
    assert result.finish_reason == "limit"
    assert result.deltas[-1] == Delta(content="", finish_reason="limit", done=True)


def test_ollama_chat_content_and_thinking_are_separated() -> None:
    body = (
        b'{"message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}\n'
        b'{"message":{"role":"assistant","content":"Hi"},"done":false}\n'
        b'{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}\n'
    )
    result = decode_bytes("ndjson", [body])

    assert result.framing == "ollama"
    assert result.content == ["Hi"]
    assert result.reasoning == ["hmm"]
    assert result.done is True
    assert result.finish_reason == "stop"


def test_ollama_tool_calls_arrive_whole_with_object_arguments() -> None:
    result = decode_bytes("ndjson", [OLLAMA_CHAT_TOOL_CALL])

    assert result.calls == [NativeCall(0, None, "get_weather", '{"city":"Paris","unit":"celsius"}')]
    assert result.reasoning_text == "The user wants the weather."
    assert result.content == []
    assert result.done is True


def test_ollama_tool_calls_in_separate_lines_are_separate_calls() -> None:
    body = (
        b'{"message":{"content":"","tool_calls":[{"function":{"index":0,"name":"f",'
        b'"arguments":{}}}]},"done":false}\n'
        b'{"message":{"content":"","tool_calls":[{"id":"call_9","function":{"index":0,'
        b'"name":"g","arguments":{"a":1}}}]},"done":true}\n'
    )

    assert decode_bytes("ndjson", [body]).calls == [
        NativeCall(0, None, "f", "{}"),
        NativeCall(1, "call_9", "g", '{"a":1}'),
    ]


def test_ollama_generate_response_is_content() -> None:
    result = decode_bytes("ndjson", [OLLAMA_GENERATE])

    assert result.content == ["Hi", " there"]
    assert result.done is True


def test_ollama_error_line_is_surfaced_as_an_error() -> None:
    body = b'{"message":{"content":"a"},"done":false}\n{"error":"model runner crashed"}\n'

    assert decode_bytes("ndjson", [body]).errors == ["model runner crashed"]


def test_openai_chunks_over_ndjson_are_recognised() -> None:
    body = b'{"choices":[{"index":0,"delta":{"content":"a"}}]}\n'

    assert decode_bytes("ndjson", [body]).framing == "openai"


def test_ndjson_final_line_without_line_feed_is_read_when_it_parses() -> None:
    body = b'{"message":{"content":"a"},"done":false}\n{"message":{"content":"b"},"done":true}'
    result = decode_bytes("ndjson", [body])

    assert result.content == ["a", "b"]
    assert result.unfinished is None


def test_ndjson_final_line_cut_mid_json_is_reported_unfinished() -> None:
    body = b'{"message":{"content":"a"},"done":false}\n{"message":{"conte'
    result = decode_bytes("ndjson", [body])

    assert result.content == ["a"]
    assert result.unfinished == '{"message":{"conte'


def test_sse_event_cut_before_its_blank_line_is_reported_unfinished() -> None:
    body = b'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"con'
    result = decode_bytes("sse", [body])

    assert result.content == ["a"]
    assert result.unfinished == '{"choices":[{"delta":{"con'


def test_complete_sse_event_without_blank_line_is_unfinished_not_content() -> None:
    # What a spec client (and openai-python) does: never dispatched.
    body = b'data: {"choices":[{"delta":{"content":"a"}}]}\n'
    result = decode_bytes("sse", [body])

    assert result.content == []
    assert result.unfinished == '{"choices":[{"delta":{"content":"a"}}]}'


def test_engine_chunks_are_the_content_sequence() -> None:
    result = decode_chunks(["<", "t", "", "oo"])

    assert result.framing == "chunks"
    assert result.content == ["<", "t", "oo"]
    assert result.done is False


def test_engine_chunks_as_bytes_decode_a_split_character_once() -> None:
    emoji = "😀".encode()
    result = decode_bytes("chunks", [b"a" + emoji[:2], emoji[2:] + b"b", b"\xe6"])

    assert result.content == ["a", "😀b", "\ufffd"]


@pytest.mark.parametrize(
    ("payload", "framing"),
    [
        ({"choices": []}, "openai"),
        ({"content": "x", "stop": False}, "llamacpp"),
        ({"message": {"content": "x"}, "done": False}, "ollama"),
        ({"response": "x", "done": False}, "ollama"),
        ({"object": "ping"}, None),
    ],
)
def test_framing_is_detected_from_the_payload_shape(
    payload: dict[str, object], framing: str | None
) -> None:
    assert detect_framing(payload) == framing


def test_empty_body_has_the_kinds_default_framing() -> None:
    assert decode_bytes("sse", []).framing == "openai"
    assert decode_bytes("ndjson", [b""]).framing == "ollama"
