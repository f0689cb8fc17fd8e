"""Tool specs reach detectors: ``make_detector`` passes them to factories that take
``tool_specs``, and the reference types untyped values by them (ARCHITECTURE.md §5.2)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tcr.detector.core import StreamDetector
from tcr.detector.events import ToolCall
from tcr.detector.loader import make_detector

SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "verbose": {"type": "boolean"},
                    "filters": {"type": "object"},
                },
            },
        },
    }
]
GLM = (
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>3</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
    "<arg_key>verbose</arg_key>\n<arg_value>true</arg_value>\n"
    "<arg_key>unit</arg_key>\n<arg_value>12</arg_value>\n</tool_call>"
)
QWEN = (
    "<tool_call>\n<function=get_weather>\n<parameter=days>\n7\n</parameter>\n"
    '<parameter=filters>\n{"sky": "clear"}\n</parameter>\n</function>\n</tool_call>'
)
HERMES = '<tool_call>{"name": "get_weather", "arguments": {"days": "3"}}</tool_call>'


class _Seen:
    def __init__(self, **keywords: object) -> None:
        self.keywords = keywords

    def feed(self, chunk: str) -> list[Any]:
        return []

    def finish(self) -> list[Any]:
        return []


def _names_only(tools: Sequence[str] | None = None) -> _Seen:
    return _Seen(tools=tools)


def _with_specs(tools: Sequence[str] | None = None, tool_specs: object = None) -> _Seen:
    return _Seen(tools=tools, tool_specs=tool_specs)


def _arguments(detector: StreamDetector, text: str) -> list[object]:
    events = [*detector.feed(text), *detector.finish()]
    return [json.loads(e.arguments) for e in events if isinstance(e, ToolCall)]


def test_make_detector_passes_specs_to_a_factory_that_takes_them() -> None:
    made = make_detector(_with_specs, ["get_weather"], tool_specs=SPECS)
    # the specs as read once: a tuple of the same objects, checked again by no one
    assert made.keywords == {"tools": ["get_weather"], "tool_specs": tuple(SPECS)}  # type: ignore[attr-defined]


def test_make_detector_gives_a_factory_without_the_keyword_the_names_only() -> None:
    made = make_detector(_names_only, ["get_weather"], tool_specs=SPECS)
    assert made.keywords == {"tools": ["get_weather"]}  # type: ignore[attr-defined]


def test_make_detector_passes_no_specs_when_there_are_none() -> None:
    made = make_detector(_with_specs, None)
    assert made.keywords == {"tools": None, "tool_specs": None}  # type: ignore[attr-defined]


def test_the_reference_types_glm_values_by_the_schema() -> None:
    (arguments,) = _arguments(StreamDetector(tool_specs=SPECS), GLM)
    # city is a string, days an integer, verbose a boolean; unit is not in the schema
    assert arguments == {"city": "3", "days": 3, "verbose": True, "unit": "12"}


def test_the_reference_types_qwen3_coder_values_by_the_schema() -> None:
    (arguments,) = _arguments(StreamDetector(tool_specs=SPECS), QWEN)
    assert arguments == {"days": 7, "filters": {"sky": "clear"}}


def test_without_specs_the_reference_keeps_untyped_values_as_text() -> None:
    (arguments,) = _arguments(StreamDetector(), GLM)
    assert arguments == {"city": "3", "days": "3", "verbose": "true", "unit": "12"}


def test_json_bodies_keep_their_json_types_whatever_the_schema_says() -> None:
    (arguments,) = _arguments(StreamDetector(tool_specs=SPECS), HERMES)
    assert arguments == {"days": "3"}
