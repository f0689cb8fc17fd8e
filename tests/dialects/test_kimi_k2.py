"""Kimi K2: ``functions.NAME:N`` calls with JSON arguments in one tool-calls section."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

OPEN = "<|tool_calls_section_begin|>"
CLOSE = "<|tool_calls_section_end|>"
BEGIN = "<|tool_call_begin|>"
ARGUMENT = "<|tool_call_argument_begin|>"
END = "<|tool_call_end|>"


def call_text(call_id: str, arguments: str) -> str:
    return f"{BEGIN}{call_id}{ARGUMENT}{arguments}{END}"


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def parsed(body: str) -> list[tuple[str, object]]:
    return [(c.name, json.loads(c.arguments)) for c in parse_body("kimi_k2", body)]


TWO = (
    "Checking both. "
    + OPEN
    + call_text("functions.get_weather:0", '{"city": "Paris"}')
    + call_text("functions.get_time:1", '{"tz": "CET"}')
    + CLOSE
    + " Done."
)


def test_two_parallel_calls_in_one_section_under_every_chunking() -> None:
    whole = run([TWO])
    section = TWO.removeprefix("Checking both. ").removesuffix(" Done.")
    assert whole == [
        Text("Checking both. "),
        ToolCall("get_weather", '{"city": "Paris"}', section, "kimi_k2"),  # the raw: once
        ToolCall("get_time", '{"tz": "CET"}', "", "kimi_k2"),
        Text(" Done."),
    ]
    for label, chunks in chunkings(TWO, randoms=50):
        assert run(chunks) == whole, label


def test_the_calls_keep_their_order_and_the_text_around_them() -> None:
    events = run([TWO])
    assert calls(events) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    shown = "".join(e.text for e in events if isinstance(e, Text))
    assert shown == "Checking both.  Done."
    assert {e.format for e in events if isinstance(e, ToolCall)} == {"kimi_k2"}


def test_the_index_is_not_part_of_the_name_and_the_prefix_may_be_missing() -> None:
    body = call_text("functions.search:7", "{}") + call_text("get_time:8", '{"tz": "UTC"}')
    assert parsed(body) == [("search", {}), ("get_time", {"tz": "UTC"})]


@pytest.mark.parametrize("name", ["github.create_issue", "shell-exec", "météo"])
def test_dotted_hyphenated_and_unicode_names_are_kept_whole(name: str) -> None:
    assert parsed(call_text(f"functions.{name}:0", '{"a": 1}')) == [(name, {"a": 1})]


def test_white_space_between_the_tokens_is_allowed() -> None:
    body = f'\n{BEGIN} functions.f:0 {ARGUMENT}\n{{\n  "a": [1, 2]\n}}\n{END}\n'
    assert parsed(body) == [("f", {"a": [1, 2]})]


def test_markers_inside_an_argument_string_are_content() -> None:
    value = f"say {END}{CLOSE}{BEGIN} then stop"
    text = OPEN + call_text("functions.echo:0", json.dumps({"text": value})) + CLOSE
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value})], label


def test_the_singular_section_markers_open_and_close_too() -> None:
    text = "<|tool_call_section_begin|>" + call_text("functions.f:0", "{}")
    text += "<|tool_call_section_end|>"
    assert calls(run([text])) == [("f", {})]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (call_text("functions.get_weather", '{"city": "Paris"}'), "malformed"),  # no :N
        (call_text("functions.:0", "{}"), "malformed"),  # no name
        (call_text("functions.f:x", "{}"), "malformed"),  # the index is no number
        (call_text("functions.f:0", '{"a": 1'), "malformed"),
        (call_text("functions.f:0", "[1]"), "not_a_call"),
        (f"{BEGIN}functions.f:0{{}}{END}", "malformed"),  # no argument marker
        (f"{BEGIN}functions.f:0{ARGUMENT}{{}}", "malformed"),  # no call end
        ('{"name": "f", "arguments": {}}', "malformed"),  # JSON is not this format
        (call_text("functions.f:0", "{}") + " and more", "malformed"),
    ],
)
def test_a_body_that_is_not_the_format_is_rejected(body: str, reason: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("kimi_k2", body)
    assert caught.value.reason == reason
    (rejected,) = [e for e in run([OPEN + body + CLOSE]) if isinstance(e, Rejected)]
    assert rejected.reason == reason and rejected.content == body


def test_an_unclosed_section_with_complete_calls_is_still_the_calls() -> None:
    text = OPEN + call_text("functions.f:0", '{"a": 1}')
    assert calls(run([text])) == [("f", {"a": 1})]


def test_a_section_cut_inside_a_call_is_unterminated() -> None:
    text = OPEN + call_text("functions.f:0", '{"a": 1}')[:-5]
    (rejected,) = run([text])
    assert isinstance(rejected, Rejected) and rejected.reason == "unterminated"
    assert rejected.content == text.removeprefix(OPEN)


def test_a_split_section_marker_is_held_then_released_as_text_at_the_end() -> None:
    assert run(["Hello <|tool_calls_sec", "tion_be"]) == [Text("Hello <|tool_calls_section_be")]


def test_the_section_inside_reasoning_opens_no_call() -> None:
    text = "<think>I will use " + OPEN + "</think>" + OPEN + call_text("f:0", "{}") + CLOSE
    events = run([text])
    assert [e.text for e in events if isinstance(e, Reasoning)] == ["I will use " + OPEN]
    assert calls(events) == [("f", {})]


def test_an_undeclared_tool_rejects_the_section() -> None:
    (rejected,) = run([OPEN + call_text("functions.rm:0", "{}") + CLOSE], tools=["get_weather"])
    assert isinstance(rejected, Rejected) and rejected.reason == "undeclared"
