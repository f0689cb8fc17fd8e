"""GigaChat 3: one JSON call after ``function call<|role_sep|>``, closed by the message's end."""

from __future__ import annotations

import json

import pytest
from helpers import calls, chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

HEADER = "function call<|role_sep|>\n"
OPEN = "<|message_sep|>" + HEADER
INLINE = "<|function_call|>"


def call(name: str, arguments: object, opener: str = OPEN, end: str = "</s>") -> str:
    return f"{opener}{json.dumps({'name': name, 'arguments': arguments})}{end}"


@pytest.mark.parametrize("opener", [OPEN, HEADER, INLINE])
def test_each_opener_after_text_is_one_call_under_every_chunking(opener: str) -> None:
    text = "Let me check." + call("get_weather", {"city": "Paris"}, opener)
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [("get_weather", {"city": "Paris"})], label
        assert [e.text for e in events if isinstance(e, Text)] == ["Let me check."], label


def test_the_end_of_the_message_closes_a_call_without_its_end_token() -> None:
    text = call("get_time", {"tz": "CET"}, HEADER, end="")
    for label, chunks in chunkings(text, randoms=10):
        events = run(chunks)
        assert calls(events) == [("get_time", {"tz": "CET"})], label
        assert not any(isinstance(e, (Text, Rejected)) for e in events), label


def test_the_end_token_inside_an_argument_string_is_content() -> None:
    text = call("echo", {"text": "ends with </s> here"})
    for label, chunks in chunkings(text, randoms=10):
        assert calls(run(chunks)) == [("echo", {"text": "ends with </s> here"})], label


def test_the_markers_are_kept_whole_in_the_call_s_raw() -> None:
    text = "Sure." + call("f", {}, end="")
    (call_event,) = [e for e in run(list(text)) if isinstance(e, ToolCall)]
    assert call_event.raw == call("f", {}, end="") and call_event.format == "gigachat3"


def test_the_header_inside_reasoning_opens_nothing() -> None:
    text = f"<think>write {HEADER} then JSON</think>" + call("now", {}, HEADER)
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"write {HEADER} then JSON"]
    assert calls(events) == [("now", {})]


@pytest.mark.parametrize(
    "text",
    [
        "A function call is one JSON object.",
        "Separate messages with <|message_sep|> tokens.",
        "function call<|role_sep|> without the newline",
    ],
)
def test_near_misses_of_the_header_stay_text(text: str) -> None:
    assert run(list(text)) == [Text(text)]


def test_values_keep_their_json_types() -> None:
    body = json.dumps({"name": "f", "arguments": {"zip": "75001", "days": 3, "on": True}})
    assert [json.loads(c.arguments) for c in parse_body("gigachat3", body)] == [
        {"zip": "75001", "days": 3, "on": True}
    ]


@pytest.mark.parametrize(
    "body", ['{"name": "f", "arguments": {', "get_weather(city='Paris')", '{"arguments": {}}']
)
def test_a_body_that_is_not_a_json_call_is_rejected(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("gigachat3", body)
    events = run(list(OPEN + body + "</s>"))
    assert len([e for e in events if isinstance(e, Rejected)]) == 1 and calls(events) == []
