"""xLAM: the JSON array of calls, bare at message start (``xlam``) or in a code fence (``xlam_fenced``).

vLLM's ``xlam`` parser reads both; the fenced one sits anywhere in the message and
its fence is markup. ``fenced_json`` opens on a fenced *object*: the two never share a
block, and each, claimed alone, reads the other's fence as text. Every case is read
whole, one character at a time and at every split point.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from helpers import run, same_under_every_chunking, shown

from tcr.detector import Event, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.detector.core import StreamDetector
from tcr.dialects import BodyError

PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
TIME = '{"name": "get_time", "arguments": {"tz": "CET"}}'
FENCE = "```"


def calls(events: Sequence[Event]) -> list[tuple[str, object, str]]:
    return [(e.name, json.loads(e.arguments), e.format) for e in events if isinstance(e, ToolCall)]


def test_a_fenced_array_after_a_preamble_is_xlam_calls() -> None:
    text = f"Sure:\n{FENCE}json\n[{PARIS}, {TIME}]\n{FENCE}\nDone."
    events = same_under_every_chunking(text)
    assert calls(events) == [
        ("get_weather", {"city": "Paris"}, "xlam_fenced"),
        ("get_time", {"tz": "CET"}, "xlam_fenced"),
    ]
    assert shown(events) == "Sure:\n\nDone."


def test_a_fence_without_a_language_opens_the_array_too() -> None:
    events = same_under_every_chunking(f"{FENCE}\n[{PARIS}]\n{FENCE}")
    assert calls(events) == [("get_weather", {"city": "Paris"}, "xlam_fenced")]
    assert shown(events) == ""


def test_the_end_of_the_message_may_stand_for_the_closing_fence() -> None:
    events = same_under_every_chunking(f"{FENCE}json\n[{PARIS}]")
    assert calls(events) == [("get_weather", {"city": "Paris"}, "xlam_fenced")]


def test_a_fence_and_a_bracket_inside_an_argument_do_not_close_the_array() -> None:
    value = f"]\\n{FENCE} and {FENCE}json\\n["
    text = f'{FENCE}json\n[{{"name": "echo", "arguments": {{"text": "{value}"}}}}]\n{FENCE}'
    events = same_under_every_chunking(text)
    assert calls(events) == [("echo", {"text": json.loads(f'"{value}"')}, "xlam_fenced")]
    assert shown(events) == ""


def test_a_fenced_list_of_numbers_is_shown_verbatim_and_released_at_its_first_number() -> None:
    text = f"Primes:\n{FENCE}json\n[2, 3, 5]\n{FENCE}"
    events = same_under_every_chunking(text)
    assert not calls(events)
    assert shown(events) == text
    fed = f"Primes:\n{FENCE}json\n[2"
    assert shown(StreamDetector().feed(fed)) == fed  # before the end of the message


def test_a_fenced_json_array_that_is_no_call_is_content_verbatim() -> None:
    answer = '[{"name": "Widget", "price": 3}]'
    text = f"{FENCE}json\n{answer}\n{FENCE}"
    events = same_under_every_chunking(text)
    assert not calls(events)
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["not_a_call"]
    assert shown(events) == text


def test_a_fenced_array_naming_an_undeclared_tool_is_rejected() -> None:
    events = run([f"{FENCE}json\n[{PARIS}]\n{FENCE}"], tools=("get_time",))
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["undeclared"]


def test_a_fenced_object_is_still_fenced_jsons() -> None:
    events = same_under_every_chunking(f"{FENCE}json\n{PARIS}\n{FENCE}")
    assert calls(events) == [("get_weather", {"city": "Paris"}, "fenced_json")]


def test_a_fenced_object_then_a_fenced_array_are_two_dialects_in_one_message() -> None:
    text = f"{FENCE}json\n{PARIS}\n{FENCE}\nand\n{FENCE}json\n[{TIME}]\n{FENCE}"
    events = same_under_every_chunking(text)
    assert [c[2] for c in calls(events)] == ["fenced_json", "xlam_fenced"]
    assert shown(events) == "\nand\n"


def test_the_bare_array_at_message_start_is_still_xlams() -> None:
    events = same_under_every_chunking(f"[{PARIS}]")
    assert calls(events) == [("get_weather", {"city": "Paris"}, "xlam")]


def test_fenced_json_claimed_alone_reads_a_fenced_array_as_text() -> None:
    text = f"Sure:\n{FENCE}json\n[{PARIS}]\n{FENCE}"
    events = same_under_every_chunking(text, dialects=["fenced_json"])
    assert events == [Text(text)]


def test_xlam_claimed_alone_reads_a_fenced_object_as_text() -> None:
    text = f"Sure:\n{FENCE}json\n{PARIS}\n{FENCE}"
    events = same_under_every_chunking(text, dialects=["xlam", "xlam_fenced"])
    assert events == [Text(text)]


def test_the_bare_array_claimed_alone_reads_the_fenced_one_as_text() -> None:
    text = f"{FENCE}json\n[{PARIS}]\n{FENCE}"
    assert same_under_every_chunking(text, dialects=["xlam"]) == [Text(text)]


@pytest.mark.parametrize(
    "body",
    [
        PARIS,  # an object, not an array
        "[]",
        '[{"name": "get_weather", "parameters": {"city": "Paris"}}]',
        '[{"name": "f", "arguments": "{}"}]',
    ],
)
def test_xlam_fenced_reads_only_arrays_of_name_and_arguments(body: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("xlam_fenced", body)
    assert caught.value.reason == "not_a_call"
