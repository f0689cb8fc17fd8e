"""Pythonic call lists (``pythonic``, ``llama4_pythonic``) and xLAM's JSON array (``xlam``).

All three open with ``[`` at message start; the first item says whose the list is, and a
``[`` that can begin no call is text at once (policy 8).
"""

from __future__ import annotations

import json

import helpers
import pytest
from helpers import run, shown

from tcr.detector import Rejected, ToolCall
from tcr.detector.bodies import parse_body
from tcr.detector.events import Event
from tcr.dialects import BodyError

OPEN, CLOSE = "<|python_start|>", "<|python_end|>"


def calls(events: list[Event]) -> list[tuple[str, str, object]]:
    return [(e.format, e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def same_under_every_chunking(text: str, **kwargs: object) -> list[Event]:
    return helpers.same_under_every_chunking(text, randoms=30, **kwargs)


# --- the body parser -------------------------------------------------------------------


def test_literals_of_every_kind_and_both_quote_styles() -> None:
    body = (
        "[search(q='it\\'s \"here\"', n=-3, r=2.5e-3, ok=True, none=None, "
        'tags=["a", \'b\'], opts={"deep": {"x": [1, {}]}}, u="\\u00e9t\\xe9 ü")]'
    )
    (call,) = parse_body("pythonic", body)
    assert (call.name, json.loads(call.arguments)) == (
        "search",
        {
            "q": 'it\'s "here"',
            "n": -3,
            "r": 0.0025,
            "ok": True,
            "none": None,
            "tags": ["a", "b"],
            "opts": {"deep": {"x": [1, {}]}},
            "u": "été ü",
        },
    )


def test_several_calls_over_several_lines_and_a_call_without_arguments() -> None:
    body = '[\n  get_weather(city="Paris"),\n  get_time()\n]'
    assert [(c.name, json.loads(c.arguments)) for c in parse_body("pythonic", body)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]


@pytest.mark.parametrize(
    "body",
    [
        "[get_weather(city=paris)]",  # a variable
        "[get_weather(city='a' + 'b')]",  # an expression
        "[get_weather(city=lookup())]",  # a call inside an argument
        "[get_weather('Paris')]",  # a positional argument (vLLM drops it silently)
        "[get_weather(**kw)]",
        "[server.tool(x=1)]",  # an attribute, not a name
        "[get_weather(p=(1, 2))]",  # a tuple has no JSON form
        "[get_weather(p={1: 'a'})]",  # nor a non-string key
        "[get_weather(p=b'x')]",
        "[get_weather(p=1e999)]",  # infinity
        "[get_weather(a=1, a=2)]",  # a repeated keyword is a syntax error
        "[get_weather(city='Paris')",  # unbalanced
        "[get_weather, f(x=1)]",
        "[]",
        "[1, 2]",
    ],
)
def test_anything_but_a_list_of_calls_with_literal_keywords_is_refused(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("pythonic", body)


# --- through the detector --------------------------------------------------------------


def test_two_calls_then_text_under_every_chunking() -> None:
    text = "[get_weather(city='Paris'), get_time(tz=\"CET\")]\nChecking both."
    events = same_under_every_chunking(text)
    assert calls(events) == [
        ("pythonic", "get_weather", {"city": "Paris"}),
        ("pythonic", "get_time", {"tz": "CET"}),
    ]
    assert shown(events) == "\nChecking both."


def test_brackets_quotes_and_markers_inside_strings_do_not_end_the_list() -> None:
    text = "[echo(a='x)]\\'y', b=\"<tool_call>]\", c='[TOOL_CALLS]')]"
    events = same_under_every_chunking(text)
    assert calls(events) == [
        ("pythonic", "echo", {"a": "x)]'y", "b": "<tool_call>]", "c": "[TOOL_CALLS]"})
    ]


def test_white_space_may_come_first_but_a_preamble_makes_the_list_text() -> None:
    assert calls(same_under_every_chunking("\n  [f(x=1)]")) == [("pythonic", "f", {"x": 1})]
    events = same_under_every_chunking("Sure. [f(x=1)]")
    assert calls(events) == []
    assert shown(events) == "Sure. [f(x=1)]"


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("[1] Knuth wrote it (and it's long).", "[1"),
        ("[Paris](https://example.org) is nice.", "[Paris]"),
        ('["a", "b"] are the names.', '["'),
        ("[ ] empty", "[ ]"),
    ],
)
def test_a_bracket_that_can_begin_no_call_is_text_at_once(text: str, raw: str) -> None:
    events = same_under_every_chunking(text)
    assert shown(events) == text
    assert [e.raw for e in events if isinstance(e, Rejected)] == [raw]
    # Released as soon as it is certain: the rest streams while the message goes on.
    detector_events = run([text[: len(raw)]])
    assert shown(detector_events) == raw


def test_a_list_that_is_not_calls_is_shown_verbatim() -> None:
    text = "[get_weather(city=my_city)] is what I would call."
    events = same_under_every_chunking(text)
    assert calls(events) == []
    assert shown(events) == text
    assert {e.reason for e in events if isinstance(e, Rejected)} == {"not_a_call"}


def test_an_undeclared_name_is_rejected() -> None:
    events = same_under_every_chunking("[delete_all(force=True)]", tools=["get_weather"])
    assert [(e.reason, e.content) for e in events if isinstance(e, Rejected)] == [
        ("undeclared", "[delete_all(force=True)]")
    ]


# --- xLAM and the shared "[" -----------------------------------------------------------


def test_a_json_array_of_calls_is_xlams_and_a_name_first_list_pythonics() -> None:
    xlam = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert calls(same_under_every_chunking(xlam)) == [("xlam", "get_weather", {"city": "Paris"})]
    assert calls(same_under_every_chunking("[get_weather(city='Paris')]")) == [
        ("pythonic", "get_weather", {"city": "Paris"})
    ]


def test_a_json_answer_array_is_shown_verbatim() -> None:
    text = '[{"name": "Widget", "price": 3}]'
    events = same_under_every_chunking(text)
    assert calls(events) == []
    assert shown(events) == text


def test_tool_calls_at_message_start_is_mistrals_not_a_list() -> None:
    text = '[TOOL_CALLS][{"name": "f", "arguments": {}}]'
    assert calls(same_under_every_chunking(text)) == [("mistral", "f", {})]
    # A tool named like the marker's first word is still a call list.
    assert calls(same_under_every_chunking("[TOOL_CALLS(x=1)]")) == [
        ("pythonic", "TOOL_CALLS", {"x": 1})
    ]


def test_a_detector_claiming_one_bracket_dialect_reads_the_others_lists_as_text() -> None:
    xlam = '[{"name": "f", "arguments": {}}]'
    events = same_under_every_chunking(xlam, dialects=["pythonic"])
    assert calls(events) == []
    assert shown(events) == xlam
    events = same_under_every_chunking("[f(x=1)]", dialects=["xlam"])
    assert calls(events) == []
    assert shown(events) == "[f(x=1)]"


@pytest.mark.parametrize(
    "body",
    [
        '[{"name": "f"}]',  # no arguments
        '[{"name": "f", "arguments": "{}"}]',  # arguments as a string
        '{"name": "f", "arguments": {}}',  # not an array
        "[]",
    ],
)
def test_xlam_refuses_anything_but_an_array_of_name_and_arguments_objects(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("xlam", body)


# --- Llama 4 ---------------------------------------------------------------------------


def test_llama4_list_between_its_tokens_then_text() -> None:
    text = f"{OPEN}[get_weather(city='Paris'), get_time()]{CLOSE} Done."
    events = same_under_every_chunking(text)
    assert calls(events) == [
        ("llama4_pythonic", "get_weather", {"city": "Paris"}),
        ("llama4_pythonic", "get_time", {}),
    ]
    assert shown(events) == " Done."


def test_llama4_end_token_in_a_string_is_content_and_the_end_of_message_closes() -> None:
    text = f"{OPEN}[note(text='ends with {CLOSE}')]"
    assert calls(same_under_every_chunking(text)) == [
        ("llama4_pythonic", "note", {"text": f"ends with {CLOSE}"})
    ]


def test_llama4_start_token_after_a_preamble_is_text() -> None:
    text = f"Here: {OPEN}[f()]{CLOSE}"
    events = same_under_every_chunking(text)
    assert calls(events) == []
    assert shown(events) == text


def test_llama4_malformed_list_is_shown_without_its_tokens() -> None:
    events = same_under_every_chunking(f"{OPEN}[f(x=y)]{CLOSE}")
    assert [(e.reason, e.content) for e in events if isinstance(e, Rejected)] == [
        ("not_a_call", "[f(x=y)]")
    ]
