"""InternLM2: a JSON ``{name, parameters}`` call between ``<|action_start|><|plugin|>`` and
``<|action_end|>``."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run, shown

from tcr.claims import Claim
from tcr.detector import Rejected, Text, ToolCall
from tcr.dialects import dialect
from tcr.rechunk import split_tokens_mended

OPEN = "<|action_start|><|plugin|>"
SPACED = "<|action_start|> <|plugin|>"
CLOSE = "<|action_end|>"
PARIS = '{"name": "get_weather", "parameters": {"city": "Paris"}}'


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


@pytest.mark.parametrize("opener", [OPEN, SPACED])
def test_an_action_after_a_sentence_under_every_chunking(opener: str) -> None:
    text = f"I will check.{opener}\n{PARIS}{CLOSE}\n"
    whole = run([text])
    assert whole == [
        Text("I will check."),
        ToolCall("get_weather", '{"city": "Paris"}', f"{opener}\n{PARIS}{CLOSE}", "internlm"),
        Text("\n"),
    ]
    for label, chunks in chunkings(text, randoms=50):
        assert run(chunks) == whole, label


@pytest.mark.parametrize("token", ["<|action_start|>", "<|plugin|>", CLOSE])
def test_each_token_of_the_markers_is_kept_whole_when_special_tokens_are(token: str) -> None:
    """InternLM2's ``<|action_start|>``, ``<|plugin|>`` and ``<|action_end|>`` are each one
    special token (vLLM's internlm parser turns ``skip_special_tokens`` off to see them), so
    ``--special-tokens whole`` never cuts inside one; between the two opener tokens it may."""
    assert token in dialect("internlm").special_tokens
    text = f"Sure.{OPEN}\n{PARIS}{CLOSE}"
    cut = text.index(token) + 3
    markers = Claim(dialects=frozenset({"internlm"})).special_markers
    assert any(token in chunk for chunk in split_tokens_mended([text[:cut], text[cut:]], markers))
    between = text.index("<|plugin|>")
    assert split_tokens_mended([text[:between], text[between:]], markers) == (
        text[:between],
        text[between:],
    )


def test_the_two_tokens_of_the_opener_may_arrive_as_two_chunks() -> None:
    chunks = ["Sure.", "<|action_start|>", "<|plugin|>", "\n", PARIS, CLOSE]
    assert calls(run(chunks)) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_the_arguments_may_be_under_parameters_or_arguments(key: str) -> None:
    text = f'{OPEN}\n{{"name": "f", "{key}": {{"a": [1, {{"b": null}}]}}}}{CLOSE}'
    assert calls(run([text])) == [("f", {"a": [1, {"b": None}]})]


def test_a_call_without_parameters_has_empty_arguments() -> None:
    assert calls(run([f'{OPEN}\n{{"name": "get_time"}}{CLOSE}'])) == [("get_time", {})]


def test_two_actions_in_one_message_are_two_calls() -> None:
    second = '{"name": "get_time", "parameters": {"tz": "CET"}}'
    text = f"A.{OPEN}\n{PARIS}{CLOSE}\n{OPEN}\n{second}{CLOSE}"
    events = run([text])
    assert calls(events) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert shown(events) == "A.\n"


def test_the_closing_marker_inside_a_string_is_content() -> None:
    value = f"type {CLOSE} then {OPEN}"
    text = f'{OPEN}\n{{"name": "echo", "parameters": {{"text": {json.dumps(value)}}}}}{CLOSE}'
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value})], label


def test_an_interpreter_action_is_no_call_and_stays_text() -> None:
    text = "Computing.<|action_start|><|interpreter|>\n```python\nprint(1)\n```<|action_end|>"
    for label, chunks in chunkings(text, randoms=20):
        assert run(chunks) == [Text(text)], label


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('\n{"parameters": {"city": "Paris"}}', "not_a_call"),
        ('\n{"answer": 42}', "not_a_call"),
        ('\n{"name": "f", "parameters": {"a": 1}', "malformed"),
        ("\nget_weather(city='Paris')", "malformed"),
    ],
)
def test_a_body_that_is_no_call_is_rejected_without_its_markers(body: str, reason: str) -> None:
    (rejected,) = run([f"{OPEN}{body}{CLOSE}"])
    assert isinstance(rejected, Rejected) and rejected.reason == reason
    assert rejected.content == body


def test_an_undeclared_tool_is_rejected() -> None:
    (rejected,) = run([f"{OPEN}\n{PARIS}{CLOSE}"], tools=["get_time"])
    assert isinstance(rejected, Rejected) and rejected.reason == "undeclared"


def test_an_unclosed_action_with_a_complete_call_is_still_the_call() -> None:
    assert calls(run([f"{OPEN}\n{PARIS}"])) == [("get_weather", {"city": "Paris"})]
