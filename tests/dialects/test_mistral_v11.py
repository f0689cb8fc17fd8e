"""Mistral v11+ compact: ``[TOOL_CALLS]NAME{…}``, one marker per call."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.detector.core import StreamDetector
from tcr.dialects import BodyError

OPEN = "[TOOL_CALLS]"
ADD = OPEN + 'add{"a": 3.5, "b": 4}'
MULTIPLY = OPEN + 'multiply{"a": 3, "b": 6}'
TWO = ADD + MULTIPLY  # the and vLLM's own example


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def parsed(body: str) -> list[tuple[str, object]]:
    return [(c.name, json.loads(c.arguments)) for c in parse_body("mistral_v11", body)]


def test_two_calls_each_after_its_marker_under_every_chunking() -> None:
    whole = run([TWO])
    assert whole == [
        ToolCall("add", '{"a": 3.5, "b": 4}', ADD, "mistral_v11"),
        ToolCall("multiply", '{"a": 3, "b": 6}', MULTIPLY, "mistral_v11"),
    ]
    for label, chunks in chunkings(TWO, randoms=50):
        assert run(chunks) == whole, label


def test_text_before_and_after_the_calls_is_shown() -> None:
    events = run(["Computing. " + TWO + " Done."])
    assert calls(events) == [("add", {"a": 3.5, "b": 4}), ("multiply", {"a": 3, "b": 6})]
    assert [e.text for e in events if isinstance(e, Text)] == ["Computing. ", " Done."]


def test_the_call_ends_at_the_brace_that_balances_its_arguments() -> None:
    value = {"query": "python {} vs dict()", "nested": {"deep": [{"x": "}"}]}}
    text = OPEN + "search" + json.dumps(value) + "} trailing"
    for label, chunks in chunkings(text, randoms=20):
        events = run(chunks)
        assert calls(events) == [("search", value)], label
        assert [e.text for e in events if isinstance(e, Text)] == ["} trailing"], label


def test_a_marker_inside_an_argument_string_is_content() -> None:
    value = f"say {OPEN}rm{{}} then stop"
    text = OPEN + "echo" + json.dumps({"text": value})
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value})], label


@pytest.mark.parametrize("name", ["server.tool", "shell-exec", "météo", "get_weather"])
def test_dotted_hyphenated_and_unicode_names_are_read(name: str) -> None:
    assert parsed(f'{name}{{"a": 1}}') == [(name, {"a": 1})]


def test_white_space_around_the_name_is_allowed() -> None:
    assert parsed(' get_time {"tz": "CET"}') == [("get_time", {"tz": "CET"})]


def test_empty_arguments_are_a_call_without_arguments() -> None:
    assert calls(run([OPEN + "now{}"])) == [("now", {})]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('get weather{"a": 1}', "malformed"),  # a name cannot hold white space
        ('get$weather{"a": 1}', "malformed"),  # nor characters OpenAI's names cannot have
        ('{"a": 1}', "malformed"),  # no name
        ("get_weather", "malformed"),  # no arguments
        ('f{"a": 1', "malformed"),
        ('f{"a": 1} and more', "malformed"),
    ],
)
def test_a_body_that_is_not_name_then_object_is_refused(body: str, reason: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("mistral_v11", body)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("text", "dialect_id"),
    [
        (OPEN + '[{"name": "f", "arguments": {}}]', "mistral"),
        (OPEN + 'f[ARGS]{"a": 1}', "mistral_v13"),
        (OPEN + 'f[CALL_ID]abc123XYZ[ARGS]{"a": 1}', "mistral_v13"),
    ],
)
def test_the_other_mistral_forms_are_their_own_dialects(text: str, dialect_id: str) -> None:
    (call,) = run([text])
    assert isinstance(call, ToolCall) and call.format == dialect_id


def test_a_detector_claiming_only_the_compact_form_reads_it() -> None:
    detector = StreamDetector(dialects=["mistral_v11"])
    events = [*detector.feed(TWO), *detector.finish()]
    assert [e.format for e in events if isinstance(e, ToolCall)] == ["mistral_v11"] * 2


@pytest.mark.parametrize("claim", [["mistral", "mistral_v13"], ["bracket_tool_calls"]])
def test_a_detector_claiming_only_the_other_forms_rejects_the_compact_form(
    claim: list[str],
) -> None:
    detector = StreamDetector(dialects=claim)
    (rejected,) = [*detector.feed(ADD), *detector.finish()]
    assert isinstance(rejected, Rejected) and rejected.reason == "malformed"
    assert rejected.content == 'add{"a": 3.5, "b": 4}'


def test_a_bad_name_is_rejected_showing_the_body() -> None:
    (rejected,) = run([OPEN + 'get$weather{"a": 1}'])
    assert isinstance(rejected, Rejected) and rejected.reason == "malformed"
    assert rejected.content == 'get$weather{"a": 1}'


def test_a_name_may_start_with_a_digit() -> None:
    """OpenAI allows ``^[a-zA-Z0-9_-]{1,64}$``; vLLM's mistral parser takes the text before
    the first ``{`` as the name."""
    (call,) = run([OPEN + '9lives{"a": 1}'])
    assert isinstance(call, ToolCall) and call.name == "9lives"


def test_arguments_cut_short_are_unterminated() -> None:
    (rejected,) = run([OPEN + 'add{"a": 3.'])
    assert isinstance(rejected, Rejected) and rejected.reason == "unterminated"
    assert rejected.content == 'add{"a": 3.'


def test_a_split_marker_is_held_then_released_as_text_at_the_end() -> None:
    assert run(["Hello [TOOL_", "CAL"]) == [Text("Hello [TOOL_CAL")]


def test_the_marker_inside_reasoning_opens_no_call() -> None:
    text = "<think>I will write " + ADD + "</think>" + MULTIPLY
    events = run([text])
    assert [e.text for e in events if isinstance(e, Reasoning)] == ["I will write " + ADD]
    assert calls(events) == [("multiply", {"a": 3, "b": 6})]


def test_an_undeclared_tool_is_rejected_and_the_declared_one_kept() -> None:
    events = run([TWO], tools=["multiply"])
    assert [type(e).__name__ for e in events] == ["Rejected", "ToolCall"]
    assert isinstance(events[0], Rejected) and events[0].reason == "undeclared"
