"""LongCat-Flash: one JSON call per ``<longcat_tool_call>`` block."""

from __future__ import annotations

import json

import pytest
from helpers import calls, chunkings, run

from tcr.detector import Reasoning, Rejected, Text
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

OPEN, CLOSE = "<longcat_tool_call>", "</longcat_tool_call>"


def block(name: str, arguments: object, space: str = "\n") -> str:
    return f"{OPEN}{space}{json.dumps({'name': name, 'arguments': arguments})}{space}{CLOSE}"


def test_consecutive_blocks_are_two_calls_under_every_chunking() -> None:
    text = "Both.\n" + block("get_weather", {"city": "Paris"}) + block("get_time", {}, "") + " ok"
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [("get_weather", {"city": "Paris"}), ("get_time", {})], label
        assert [e.text for e in events if isinstance(e, Text)] == ["Both.\n", " ok"], label


def test_the_closing_tag_inside_an_argument_string_is_content() -> None:
    text = block("echo", {"text": f"ends with {CLOSE} here"})
    for label, chunks in chunkings(text, randoms=10):
        assert calls(run(chunks)) == [("echo", {"text": f"ends with {CLOSE} here"})], label


def test_values_keep_their_json_types() -> None:
    body = json.dumps({"name": "f", "arguments": {"zip": "75001", "days": 3, "on": True}})
    assert [json.loads(c.arguments) for c in parse_body("longcat", body)] == [
        {"zip": "75001", "days": 3, "on": True}
    ]


def test_the_opening_tag_inside_reasoning_opens_nothing() -> None:
    text = f"<think>use {OPEN} now</think>" + block("now", {})
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"use {OPEN} now"]
    assert calls(events) == [("now", {})]


def test_a_near_miss_of_the_tag_stays_text() -> None:
    text = '<longcat_tool_calls>{"name": "f", "arguments": {}}</longcat_tool_calls>'
    assert run(list(text)) == [Text(text)]


@pytest.mark.parametrize(
    "body",
    ['{"name": "f", "arguments": {', "get_weather(city='Paris')", '{"arguments": {}}'],
)
def test_a_block_that_is_not_a_json_call_is_rejected(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("longcat", body)
    events = run(list(OPEN + body + CLOSE))
    assert len([e for e in events if isinstance(e, Rejected)]) == 1 and calls(events) == []
