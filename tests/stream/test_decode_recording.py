"""decode(recording): realistic recorded streams, frames, and errors that name the recording."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

import pytest

from tcr import DecodeError
from tcr.stream import NativeCall, decode, decode_bytes


@dataclass
class Frame:
    """Stands in for tcr.corpus.Frame."""

    t_ns: int
    data: bytes | str
    meta: dict[str, object] | None = None


@dataclass
class Recording:
    """Stands in for tcr.corpus.Recording (only what decode() reads)."""

    kind: str
    frames: list[Frame]
    header: dict[str, object] = field(default_factory=lambda: {"id": "rec-1"})


def frames_of(body: bytes, *cuts: int) -> list[Frame]:
    bounds = [0, *cuts, len(body)]
    return [Frame(t_ns=i * 1000, data=body[a:b]) for i, (a, b) in enumerate(pairwise(bounds))]


# Hand-written in the exact shape of llama-server's /v1/chat/completions stream
# (field order, metadata, final usage/timings chunk, [DONE]) for SmolLM2 under a
# GBNF grammar that makes it write Hermes markup: the server streams the markup
# as content, split the way the tokenizer splits it (<tool_call> arrives as
# <,t,oo,l,_,c,al,l,>; ARCHITECTURE.md §9).
LLAMA_SERVER_TOOL_CALL_AS_CONTENT = (
    b'data: {"choices":[{"finish_reason":null,"index":0,'
    b'"delta":{"role":"assistant","content":null}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"<"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"t"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"oo"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"l"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"_"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"c"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"al"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"l"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":">"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\n"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"{\\""}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"name"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\":"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" \\""}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"get"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"_weather"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\","}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" \\""}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"arguments"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\":"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" {\\""}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"city"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\":"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" \\""}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Paris"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\"}}"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\\n"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"</"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"tool"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"_call"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":">"}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}]'
    b',"created":1748772000,"id":"chatcmpl-Xb9v3kQ2","model":"SmolLM2-135M-Instruct",'
    b'"system_fingerprint":"b5558-5e1c3aed","object":"chat.completion.chunk",'
    b'"usage":{"completion_tokens":31,"prompt_tokens":120,"total_tokens":151},'
    b'"timings":{"prompt_n":120,"prompt_ms":80.5,"predicted_n":31,"predicted_ms":190.2}}'
    b"\n\n"
    b"data: [DONE]\n\n"
)


# Same shape, server started with a Hermes --chat-template-file: llama-server
# parses the model's <tool_call> itself and streams native tool_calls deltas
# (id and name once, then argument pieces).
LLAMA_SERVER_NATIVE_TOOL_CALL = (
    b'data: {"choices":[{"finish_reason":null,"index":0,'
    b'"delta":{"role":"assistant","content":null}}],"created":1748772100,'
    b'"id":"chatcmpl-q1","model":"SmolLM2-135M-Instruct","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"id":"Kl7mPq2RtY9x","type":"function","function":{"name":"get_weather","arguments":"{\\""}}'
    b']}}],"created":1748772100,"id":"chatcmpl-q1","model":"SmolLM2-135M-Instruct",'
    b'"object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"function":{"arguments":"city\\":"}}]}}],"created":1748772100,"id":"chatcmpl-q1",'
    b'"model":"SmolLM2-135M-Instruct","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"function":{"arguments":" \\"Par"}}]}}],"created":1748772100,"id":"chatcmpl-q1",'
    b'"model":"SmolLM2-135M-Instruct","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"function":{"arguments":"is\\"}"}}]}}],"created":1748772100,"id":"chatcmpl-q1",'
    b'"model":"SmolLM2-135M-Instruct","object":"chat.completion.chunk"}\n\n'
    b'data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],'
    b'"created":1748772100,"id":"chatcmpl-q1","model":"SmolLM2-135M-Instruct",'
    b'"object":"chat.completion.chunk","usage":{"completion_tokens":19,"prompt_tokens":210,'
    b'"total_tokens":229}}\n\n'
    b"data: [DONE]\n\n"
)

TOOL_CALL_MARKUP = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def test_markup_streamed_as_content_keeps_the_tokenizer_split() -> None:
    result = decode(Recording("sse", frames_of(LLAMA_SERVER_TOOL_CALL_AS_CONTENT)))

    assert result.content[:9] == ["<", "t", "oo", "l", "_", "c", "al", "l", ">"]
    assert result.text == TOOL_CALL_MARKUP
    assert result.calls == []
    assert result.finish_reason == "stop"
    assert result.done is True


def test_native_tool_call_deltas_assemble_into_one_call() -> None:
    result = decode(Recording("sse", frames_of(LLAMA_SERVER_NATIVE_TOOL_CALL)))

    assert result.calls == [
        NativeCall(0, "Kl7mPq2RtY9x", "get_weather", '{"city": "Paris"}'),
    ]
    assert result.content == []
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    "body",
    [LLAMA_SERVER_TOOL_CALL_AS_CONTENT, LLAMA_SERVER_NATIVE_TOOL_CALL],
    ids=["markup", "native"],
)
@pytest.mark.slow
def test_recorded_body_decodes_the_same_at_every_split_point(body: bytes) -> None:
    whole = decode_bytes("sse", [body])

    for cut in range(len(body) + 1):
        assert decode_bytes("sse", [body[:cut], body[cut:]]) == whole, cut


@pytest.mark.parametrize("size", [1, 2, 3, 97, 100_000])
def test_recorded_body_decodes_the_same_at_fragment_sizes(size: int) -> None:
    body = LLAMA_SERVER_TOOL_CALL_AS_CONTENT
    reads = [body[i : i + size] for i in range(0, len(body), size)]

    assert decode_bytes("sse", reads) == decode_bytes("sse", [body])


def test_frames_as_recorded_decode_like_the_joined_body() -> None:
    body = LLAMA_SERVER_NATIVE_TOOL_CALL
    recording = Recording("sse", frames_of(body, 10, 250, 251, 600))

    assert decode(recording) == decode_bytes("sse", [body])


def test_sse_frames_given_as_text_are_decoded_as_utf8() -> None:
    recording = Recording("sse", [Frame(0, 'data: {"choices":[{"delta":{"content":"é"}}]}\n\n')])

    assert decode(recording).content == ["é"]


def test_chunks_recording_is_its_chunk_sequence() -> None:
    chunks = ["<", "t", "oo", "l", "_", "c", "al", "l", ">"]
    recording = Recording("chunks", [Frame(i, c, {"token": i}) for i, c in enumerate(chunks)])

    result = decode(recording)

    assert result.content == chunks
    assert result.framing == "chunks"


def test_chunks_recording_with_byte_frames_decodes_utf8_across_frames() -> None:
    recording = Recording("chunks", [Frame(0, b"\xe6\xbc"), Frame(1, b"\xa2\xe5\xad\x97")])

    assert decode(recording).content == ["漢字"]


def test_decode_error_names_the_recording_and_the_frame() -> None:
    body = b'data: {"choices":[]}\n\ndata: {"choices": [oops]}\n\n'
    recording = Recording("sse", frames_of(body, 30))

    with pytest.raises(
        DecodeError, match=r"^recording 'rec-1', frame 1: SSE event 1 \(body bytes 22-48\)"
    ):
        decode(recording)


def test_decode_error_names_the_path_when_the_recording_has_one() -> None:
    @dataclass
    class FileRecording(Recording):
        path: str = "corpora/x.msgpack"

    with pytest.raises(DecodeError, match=r"^corpora/x\.msgpack, frame 0: SSE event 0"):
        decode(FileRecording("sse", [Frame(0, b"data: nope\n\n")]))


def test_unknown_recording_kind_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"^recording 'rec-1': unknown stream kind 'xml'"):
        decode(Recording("xml", []))


def test_frame_data_of_the_wrong_type_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"frame 0: read 0: expected bytes or str, got int"):
        decode(Recording("sse", [Frame(0, 7)]))  # type: ignore[arg-type]


def test_interrupted_recording_reports_its_unfinished_event() -> None:
    body = LLAMA_SERVER_NATIVE_TOOL_CALL[:700]
    result = decode(Recording("sse", frames_of(body)))

    assert result.done is False
    assert result.unfinished is not None
    assert result.unfinished.startswith('{"choices"')
