"""Surrogates in JSON strings: ``"\\ud83d"`` in one event and ``"\\ude00"`` in the
next is legal JSON, and real engines send an emoji that way. The decoder
rejoins the pair; a surrogate that never finds its partner becomes U+FFFD, so
nothing downstream meets a string it cannot encode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tcr.corpus import new_header, write_recording
from tcr.stream import Decoded, StreamDecoder, ToolCallFragment, decode_bytes, decode_chunks

EMOJI = "\U0001f600"
HIGH, LOW = "\ud83d", "\ude00"


def openai_event(delta: dict[str, object]) -> bytes:
    payload = json.dumps({"choices": [{"index": 0, "delta": delta}]})  # ASCII: \ud83d escapes
    return f"data: {payload}\n\n".encode()


def ollama_line(content: str, *, done: bool = False) -> bytes:
    payload = {"message": {"role": "assistant", "content": content}, "done": done}
    return json.dumps(payload).encode() + b"\n"


def assert_encodable(decoded: Decoded) -> None:
    for delta in decoded.deltas:
        for field in (delta.content, delta.reasoning, delta.error, delta.finish_reason):
            (field or "").encode("utf-8")
        for fragment in delta.tool_calls:
            f"{fragment.id}{fragment.name}{fragment.arguments}".encode()
    for call in decoded.calls:
        f"{call.id}{call.name}{call.arguments}".encode()


def test_a_pair_split_across_two_sse_events_is_rejoined() -> None:
    body = openai_event({"content": f"hi {HIGH}"}) + openai_event({"content": f"{LOW} there"})
    decoded = decode_bytes("sse", [body + b"data: [DONE]\n\n"])
    assert decoded.text == f"hi {EMOJI} there"
    assert decoded.content == ["hi ", f"{EMOJI} there"]
    assert_encodable(decoded)


def test_a_pair_split_across_two_ndjson_lines_is_rejoined() -> None:
    body = ollama_line(f"hi {HIGH}") + ollama_line(f"{LOW} there") + ollama_line("", done=True)
    decoded = decode_bytes("ndjson", [body])
    assert decoded.text == f"hi {EMOJI} there"


def test_an_event_holding_only_the_high_half_adds_no_chunk() -> None:
    body = openai_event({"content": HIGH}) + openai_event({"content": LOW})
    assert decode_bytes("sse", [body]).content == [EMOJI]


def test_a_high_surrogate_at_the_end_of_the_stream_becomes_a_replacement_character() -> None:
    decoded = decode_bytes("sse", [openai_event({"content": f"hi {HIGH}"})])
    assert decoded.content == ["hi ", "\ufffd"]
    assert_encodable(decoded)


def test_a_high_surrogate_followed_by_no_low_one_becomes_a_replacement_character() -> None:
    body = openai_event({"content": f"a{HIGH}"}) + openai_event({"content": "b"})
    assert decode_bytes("sse", [body]).text == "a\ufffdb"


def test_a_lone_low_surrogate_becomes_a_replacement_character() -> None:
    decoded = decode_bytes("sse", [openai_event({"content": f"{LOW}x"})])
    assert decoded.text == "\ufffdx"


def test_reasoning_pairs_are_rejoined_apart_from_content() -> None:
    body = (
        openai_event({"reasoning_content": HIGH})
        + openai_event({"content": "c"})
        + openai_event({"reasoning_content": LOW})
    )
    decoded = decode_bytes("sse", [body])
    assert decoded.reasoning_text == EMOJI and decoded.text == "c"


def test_tool_call_arguments_split_inside_a_pair_are_rejoined() -> None:
    first = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": f'{{"a":"{HIGH}'}}
    second = {"index": 0, "function": {"arguments": f'{LOW}"}}'}}
    body = openai_event({"tool_calls": [first]}) + openai_event({"tool_calls": [second]})
    decoded = decode_bytes("sse", [body])
    [call] = decoded.calls
    assert call.arguments == f'{{"a":"{EMOJI}"}}'
    assert_encodable(decoded)


def test_lone_surrogates_in_names_ids_and_errors_are_replaced() -> None:
    call = {"index": 0, "id": HIGH, "function": {"name": LOW, "arguments": "{}"}}
    body = openai_event({"tool_calls": [call]}) + b'data: {"error": "\\ud83d"}\n\n'
    decoded = decode_bytes("sse", [body])
    assert decoded.calls[0].id == "\ufffd" and decoded.calls[0].name == "\ufffd"
    assert decoded.errors == ["\ufffd"]
    assert decoded.deltas[0].tool_calls == (
        ToolCallFragment(index=0, id="\ufffd", name="\ufffd", arguments="{}"),
    )


def test_engine_chunks_split_inside_a_pair_are_rejoined() -> None:
    assert decode_chunks(["a", HIGH, LOW, "b"]).content == ["a", EMOJI, "b"]


def test_feed_returns_the_repaired_deltas() -> None:
    decoder = StreamDecoder("sse")
    [first] = decoder.feed(openai_event({"content": f"hi {HIGH}"}))
    [second] = decoder.feed(openai_event({"content": f"{LOW}!"}))
    assert (first.content, second.content) == ("hi ", f"{EMOJI}!")


@pytest.mark.parametrize("as_json", [False, True])
def test_show_prints_a_split_emoji(tmp_path: Path, as_json: bool) -> None:
    body = openai_event({"content": f"hi {HIGH}"}) + openai_event({"content": f"{LOW} there"})
    path = tmp_path / "emoji.msgpack"
    write_recording(path, new_header("sse"), [(0, body), (1, openai_event({"content": HIGH}))])
    result = subprocess.run(
        [sys.executable, "-m", "tcr.cli", "show", str(path), *(["--json"] if as_json else [])],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"hi {EMOJI} there\ufffd" in (
        json.loads(result.stdout)["content"]["text"] if as_json else result.stdout
    )
