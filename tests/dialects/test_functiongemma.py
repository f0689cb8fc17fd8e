"""FunctionGemma: ``<start_function_call>call:NAME{key:<escape>v<escape>}<end_function_call>``."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run

from tcr.detector import Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

OPEN, CLOSE, Q = "<start_function_call>", "<end_function_call>", "<escape>"


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def test_two_calls_each_in_its_marker_pair_under_every_chunking() -> None:
    text = (
        f"Checking. {OPEN}call:get_weather{{city:{Q}Paris{Q},days:3}}{CLOSE}"
        f"{OPEN}call:get_time{{tz:{Q}CET{Q}}}{CLOSE} Done."
    )
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris", "days": 3}),
            ("get_time", {"tz": "CET"}),
        ], label
        assert [e.text for e in events if isinstance(e, Text)] == ["Checking. ", " Done."]


def test_a_quoted_number_stays_a_string_and_a_bare_one_is_a_number() -> None:
    body = f"call:run_sql{{query:{Q}75001{Q},limit:3,flags:[true,null],opts:{{deep:{Q}x{Q}}}}}"
    assert [(c.name, json.loads(c.arguments)) for c in parse_body("functiongemma", body)] == [
        ("run_sql", {"query": "75001", "limit": 3, "flags": [True, None], "opts": {"deep": "x"}})
    ]


def test_end_marker_inside_an_escaped_string_is_content() -> None:
    value = f"a}}{CLOSE} b"
    text = f"{OPEN}call:echo{{text:{Q}{value}{Q}}}{CLOSE}"
    for label, chunks in chunkings(text, randoms=20):
        assert calls(run(chunks)) == [("echo", {"text": value})], label


@pytest.mark.parametrize(
    "body",
    [
        "get_weather{city:<escape>Paris<escape>}",  # no call:
        "call:get_weather{city:<escape>Paris}",  # unterminated string
        "call:a{}call:b{}",  # two calls in one pair
        "call:get$weather{}",
    ],
)
def test_malformed_bodies_are_rejected(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("functiongemma", body)
