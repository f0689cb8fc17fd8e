"""The JSON-array dialects: Jamba / Hunyuan ``<tool_calls>``, Granite, Granite-20B-FC, Phi-4-mini.

Their engine parsers read only ``{"name", "arguments"}`` objects (Phi-4-mini also
``"parameters"``); each is checked whole and at every chunking.
"""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run, shown

from tcr.detector import Rejected, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
TIME = '{"name": "get_time", "arguments": {"tz": "CET"}}'


def calls(events: list[object]) -> list[tuple[str, object, str]]:
    return [(e.name, json.loads(e.arguments), e.format) for e in events if isinstance(e, ToolCall)]


# --- jamba ------------------------------------------------------------------------------


def test_jamba_two_calls_in_one_array_under_every_chunking() -> None:
    text = f"Checking. <tool_calls>[{PARIS}, {TIME}]</tool_calls> Done."
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris"}, "jamba"),
            ("get_time", {"tz": "CET"}, "jamba"),
        ], label
        assert shown(events) == "Checking.  Done.", label


def test_jamba_closing_tag_inside_an_argument_string_does_not_close() -> None:
    value = "end with </tool_calls> here"
    text = f'<tool_calls>[{{"name": "echo", "arguments": {{"text": "{value}"}}}}]</tool_calls>'
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value}, "jamba")], label


def test_jamba_tag_is_not_read_as_hermes_tool_call() -> None:
    events = run(list(f"<tool_calls>\n[{PARIS}]\n</tool_calls>"))
    assert calls(events) == [("get_weather", {"city": "Paris"}, "jamba")]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (PARIS, "not_a_call"),  # an object, not an array
        ("[]", "not_a_call"),
        ('[{"name": "get_weather", "parameters": {"city": "Paris"}}]', "not_a_call"),
        ('[{"name": "f", "arguments": "{\\"a\\": 1}"}]', "not_a_call"),  # a string
        ('[{"type": "function", "function": {"name": "f", "arguments": {}}}]', "not_a_call"),
        ('[{"name": "f", "arguments": {}', "malformed"),
    ],
)
def test_jamba_reads_only_arrays_of_name_and_arguments(body: str, reason: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("jamba", body)
    assert caught.value.reason == reason


def test_jamba_block_with_an_undeclared_name_is_rejected() -> None:
    events = run([f"<tool_calls>[{PARIS}]</tool_calls>"], tools=("get_time",))
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["undeclared"]


# --- granite ----------------------------------------------------------------------------


def test_granite_array_ends_at_its_balancing_bracket_under_every_chunking() -> None:
    text = f'<|tool_call|>[{PARIS}, {{"name": "search", "arguments": {{"q": "a]["}}}}] after'
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris"}, "granite"),
            ("search", {"q": "a]["}, "granite"),
        ], label
        assert shown(events) == " after", label


def test_granite_token_after_a_preamble_opens_a_call() -> None:
    events = run(["Looking it up. ", f"<|tool_call|> [{PARIS}]"])
    assert calls(events) == [("get_weather", {"city": "Paris"}, "granite")]
    assert shown(events) == "Looking it up. "


def test_granite_token_is_not_gemma_tool_call() -> None:
    # Gemma 4 opens on <|tool_call> (no second bar): the two part at character 12.
    events = run(list(f"<|tool_call|>[{TIME}]"))
    assert calls(events) == [("get_time", {"tz": "CET"}, "granite")]


def test_granite_single_object_is_not_a_call_list() -> None:
    events = run([f"<|tool_call|>{PARIS}"])
    assert not calls(events)
    assert [e.format for e in events if isinstance(e, Rejected)] == ["granite"]


# --- granite_20b_fc ---------------------------------------------------------------------


def test_granite_20b_fc_one_call_per_marker_under_every_chunking() -> None:
    text = f"<function_call> {PARIS} <function_call> {TIME}"
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris"}, "granite_20b_fc"),
            ("get_time", {"tz": "CET"}, "granite_20b_fc"),
        ], label
        assert shown(events) == " ", label


def test_granite_20b_fc_marker_and_brace_inside_a_string_are_content() -> None:
    value = "} <function_call> {"
    text = f'<function_call> {{"name": "echo", "arguments": {{"text": "{value}"}}}}'
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value}, "granite_20b_fc")], label


def test_granite_20b_fc_reads_one_object_not_an_array() -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("granite_20b_fc", f"[{PARIS}]")
    assert caught.value.reason == "not_a_call"


# --- phi4_mini_json ---------------------------------------------------------------------


def test_phi4_array_ends_at_its_balancing_bracket_not_the_first() -> None:
    call = '{"name": "tag", "parameters": {"tags": ["a", "b]"], "n": [[1]]}}'
    text = f"Tagging. functools[{call}, {PARIS}] Done."
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("tag", {"tags": ["a", "b]"], "n": [[1]]}, "phi4_mini_json"),
            ("get_weather", {"city": "Paris"}, "phi4_mini_json"),
        ], label
        assert shown(events) == "Tagging.  Done.", label


@pytest.mark.parametrize(
    "prose",
    [
        "import functools\nfunctools.cache [1]",
        "functools [not a call]",
        "see functools.partial[int] in the docs",
        "functool[1]",
    ],
)
def test_phi4_word_without_its_bracket_is_text(prose: str) -> None:
    for label, chunks in chunkings(prose, randoms=10):
        assert shown(run(chunks)) == prose, label


# --- command_r7b ------------------------------------------------------------------------

R7B_CALL = '{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}'


def test_command_r7b_array_of_tool_name_and_parameters_under_every_chunking() -> None:
    text = f"<|START_ACTION|>[\n    {R7B_CALL}\n]<|END_ACTION|> ok"
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [("get_weather", {"city": "Paris"}, "command_r7b")], label
        assert shown(events) == " ok", label


def test_command_r7b_reads_no_name_and_arguments_objects() -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("command_r7b", f"[{PARIS}]")
    assert caught.value.reason == "not_a_call"
