"""OpenAI chat-completion chunks over SSE: deltas, [DONE], errors, native tool calls."""

from __future__ import annotations

import json

from tcr.stream import Decoded, Delta, NativeCall, ToolCallFragment, decode_bytes


def sse(*payloads: object) -> bytes:
    """An SSE body with one ``data:`` event per payload (str payloads verbatim)."""
    return b"".join(
        b"data: " + (p if isinstance(p, str) else json.dumps(p)).encode() + b"\n\n"
        for p in payloads
    )


def chunk(delta: dict[str, object], finish_reason: str | None = None) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def call(index: int, **fields: object) -> dict[str, object]:
    """One ``tool_calls`` fragment: ``id`` at top level, ``name``/``arguments`` in function."""
    fragment: dict[str, object] = {"index": index}
    if "id" in fields:
        fragment["id"] = fields.pop("id")
        fragment["type"] = "function"
    fragment["function"] = fields
    return fragment


def decode(*payloads: object) -> Decoded:
    return decode_bytes("sse", [sse(*payloads)])


def test_content_deltas_become_the_content_chunk_sequence() -> None:
    result = decode(chunk({"content": "Hel"}), chunk({"content": "lo"}), "[DONE]")

    assert result.content == ["Hel", "lo"]
    assert result.text == "Hello"
    assert result.framing == "openai"


def test_role_only_first_chunk_adds_no_content() -> None:
    result = decode(chunk({"role": "assistant", "content": ""}), chunk({"content": "Hi"}))

    assert result.content == ["Hi"]
    assert result.deltas[0] == Delta(role="assistant", content="")


def test_null_content_adds_no_content() -> None:
    assert decode(chunk({"role": "assistant", "content": None})).content == []


def test_reasoning_content_goes_to_the_reasoning_channel() -> None:
    result = decode(chunk({"reasoning_content": "Let me"}), chunk({"reasoning_content": " see"}))

    assert result.reasoning == ["Let me", " see"]
    assert result.reasoning_text == "Let me see"
    assert result.content == []


def test_reasoning_field_is_read_when_reasoning_content_is_absent() -> None:
    assert decode(chunk({"reasoning": "hmm"})).reasoning == ["hmm"]


def test_finish_reason_is_the_last_one_given() -> None:
    result = decode(chunk({"content": "a"}), chunk({}, finish_reason="stop"), "[DONE]")

    assert result.finish_reason == "stop"


def test_done_marker_sets_done() -> None:
    assert decode(chunk({"content": "a"}), "[DONE]").done is True


def test_stream_without_done_marker_is_not_done() -> None:
    result = decode(chunk({"content": "a"}, finish_reason="stop"))

    assert result.done is False
    assert result.finish_reason == "stop"


def test_usage_only_chunk_with_empty_choices_is_an_empty_delta() -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    result = decode(chunk({"content": "a"}), usage, "[DONE]")

    assert result.content == ["a"]
    assert result.deltas[1] == Delta()


def test_chunk_for_another_choice_is_ignored() -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "other"}}]}

    assert decode(chunk({"content": "a"}), other).content == ["a"]


def test_error_object_is_surfaced_as_an_error() -> None:
    error = {"error": {"message": "Rate limit reached", "type": "requests", "code": 429}}
    result = decode(chunk({"content": "a"}), error)

    assert result.errors == ["Rate limit reached"]
    assert result.deltas[-1] == Delta(error="Rate limit reached")
    assert result.content == ["a"]


def test_error_event_type_is_surfaced_as_an_error() -> None:
    body = sse(chunk({"content": "a"})) + b'event: error\ndata: {"message": "overloaded"}\n\n'

    assert decode_bytes("sse", [body]).errors == ["overloaded"]


def test_error_event_with_plain_text_data_is_surfaced_verbatim() -> None:
    body = b"event: error\ndata: upstream went away\n\n"

    assert decode_bytes("sse", [body]).errors == ["upstream went away"]


def test_llamacpp_error_field_is_surfaced_as_an_error() -> None:
    # llama.cpp's server writes "error: {...}"; a spec client drops that field.
    body = sse(chunk({"content": "a"})) + (
        b'error: {"code":500,"message":"context shift is disabled","type":"server_error"}\n\n'
    )

    assert decode_bytes("sse", [body]).errors == ["context shift is disabled"]


def test_keep_alive_comments_and_empty_data_events_are_skipped() -> None:
    body = b": ping\n\ndata:\n\n" + sse(chunk({"content": "a"}))

    assert decode_bytes("sse", [body]).content == ["a"]


def test_tool_call_fragments_assemble_into_one_call() -> None:
    result = decode(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [call(0, id="call_1", name="get_weather", arguments="")]}),
        chunk({"tool_calls": [call(0, arguments='{"ci')]}),
        chunk({"tool_calls": [call(0, arguments='ty": "Pa')]}),
        chunk({"tool_calls": [call(0, arguments='ris"}')]}),
        chunk({}, finish_reason="tool_calls"),
        "[DONE]",
    )

    assert result.calls == [NativeCall(0, "call_1", "get_weather", '{"city": "Paris"}')]
    assert result.finish_reason == "tool_calls"
    assert result.content == []


def test_interleaved_tool_call_indices_assemble_separately() -> None:
    result = decode(
        chunk({"tool_calls": [call(0, id="a", name="f", arguments='{"x"')]}),
        chunk({"tool_calls": [call(1, id="b", name="g", arguments='{"y"')]}),
        chunk({"tool_calls": [call(0, arguments=": 1}"), call(1, arguments=": 2")]}),
        chunk({"tool_calls": [call(1, arguments="}")]}),
    )

    assert result.calls == [
        NativeCall(0, "a", "f", '{"x": 1}'),
        NativeCall(1, "b", "g", '{"y": 2}'),
    ]


def test_tool_call_id_and_name_repeated_on_every_fragment_are_not_concatenated() -> None:
    result = decode(
        chunk({"tool_calls": [call(0, id="c", name="f", arguments='{"a"')]}),
        chunk({"tool_calls": [call(0, id="c", name="f", arguments=":1}")]}),
    )

    assert result.calls == [NativeCall(0, "c", "f", '{"a":1}')]


def test_tool_call_without_index_takes_its_array_position() -> None:
    fragments = [
        {"id": "a", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "function": {"name": "g", "arguments": "{}"}},
    ]

    assert decode(chunk({"tool_calls": fragments})).calls == [
        NativeCall(0, "a", "f", "{}"),
        NativeCall(1, "b", "g", "{}"),
    ]


def test_tool_call_arguments_sent_as_an_object_become_json_text() -> None:
    fragment = {"index": 0, "function": {"name": "f", "arguments": {"city": "Zürich"}}}

    assert decode(chunk({"tool_calls": [fragment]})).calls[0].arguments == '{"city":"Zürich"}'


def test_tool_call_fragments_are_kept_on_the_deltas() -> None:
    result = decode(chunk({"tool_calls": [call(0, id="c", name="f", arguments="{")]}))

    assert result.deltas[0].tool_calls == (ToolCallFragment(0, "c", "f", "{"),)


def test_content_after_tool_calls_is_still_content() -> None:
    result = decode(
        chunk({"tool_calls": [call(0, id="c", name="f", arguments="{}")]}),
        chunk({"content": "done"}),
    )

    assert result.content == ["done"]
    assert len(result.calls) == 1
