"""Tool specs (``tcr.tool_specs``): reading an OpenAI ``tools`` list, typing untyped values
by schema as the engines do, and typed comparison (ARCHITECTURE.md §5.2, "Tool specs")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.detector.core import StreamDetector
from tcr.detector.events import Rejected, ToolCall
from tcr.errors import TcrError
from tcr.tool_specs import (
    MAX_SCHEMA_NESTING,
    read_tool_specs,
    same_json,
    spec_names,
    typed_value,
    value_agrees,
)

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}


def test_an_openai_tools_list_reads_as_given() -> None:
    assert read_tool_specs([WEATHER]) == (WEATHER,)


def test_a_bare_function_object_is_wrapped_with_an_empty_schema() -> None:
    (spec,) = read_tool_specs([{"name": "ping"}])
    assert spec == {
        "type": "function",
        "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
    }


def test_spec_names_are_what_tools_gets() -> None:
    assert spec_names(read_tool_specs([WEATHER, {"name": "ping"}])) == ["get_weather", "ping"]


def test_where_tools_and_specs_disagree_the_names_in_tools_are_what_is_declared() -> None:
    """A spec declares nothing: the reference rejects a call to a tool only the specs name
    (docs/how-to/test-your-parser.md, "Tools with schemas")."""
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"days": "3"}}\n</tool_call>'
    specs = read_tool_specs([WEATHER])
    (rejected,) = StreamDetector(["get_time"], tool_specs=specs).feed(call)
    assert isinstance(rejected, Rejected) and rejected.reason == "undeclared"
    (accepted,) = StreamDetector(["get_weather"], tool_specs=specs).feed(call)
    assert isinstance(accepted, ToolCall)


@pytest.mark.parametrize(
    ("specs", "where"),
    [
        ({"name": "f"}, "expected a list"),
        (["f"], "tools[0]: expected a tool object"),
        ([{"type": "function", "function": {"parameters": {}}}], "tools[0].function: a function"),
        ([{"function": "f"}], "tools[0].function: expected an object"),
        ([{"name": "f", "parameters": []}], "tools[0].parameters: expected a JSON schema"),
        (
            [{"name": "f", "parameters": {"properties": {"a": "int"}}}],
            "tools[0].parameters.properties.a",
        ),
        ([{"name": "f"}, {"name": "f"}], "tools[1]: the tool 'f' is declared twice"),
        ([{"name": "f", "parameters": {"default": b"x"}}], "bytes is not a JSON value"),
        ([{"type": "retrieval", "function": {"name": "f"}}], "'type' is 'retrieval'"),
    ],
)
def test_a_malformed_spec_is_one_error_naming_where(specs: object, where: str) -> None:
    with pytest.raises(TcrError, match="tools") as raised:
        read_tool_specs(specs, "tools")
    assert where in str(raised.value)


def test_absurd_nesting_is_refused_without_recursing() -> None:
    schema: dict[str, Any] = {}
    for _ in range(100_000):
        schema = {"items": schema}
    with pytest.raises(TcrError, match=f"nests deeper than {MAX_SCHEMA_NESTING}"):
        read_tool_specs([{"name": "f", "parameters": schema}])


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.binary(max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_json | st.fixed_dictionaries({"name": _json, "parameters": _json}), max_size=3))
def test_reading_specs_gives_a_clean_result_or_one_tcr_error(specs: list[Any]) -> None:
    try:
        read = read_tool_specs(specs)
    except TcrError:
        return
    assert read == read_tool_specs(list(read))  # normalised: reads back the same


@pytest.mark.parametrize(
    ("text", "schema", "typed"),
    [
        ("3", {"type": "integer"}, 3),
        ("3", {"type": "string"}, "3"),
        ("2.5", {"type": "number"}, 2.5),
        ("4.0", {"type": "number"}, 4),
        ("true", {"type": "boolean"}, True),
        ("False", {"type": "boolean"}, False),
        ('{"a": [1]}', {"type": "object"}, {"a": [1]}),
        ("{'a': 1}", {"type": "object"}, {"a": 1}),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("null", {"type": "integer"}, None),
        ("null", {"type": "string"}, "null"),
        ("None", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("7", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, 7),
        ("7", {"type": ["integer", "null"]}, 7),
        ("three", {"type": "integer"}, "three"),
        ("yes", {"type": "boolean"}, False),
        ("[broken", {"type": "array"}, "[broken"),
        ("3", {"description": "no type"}, "3"),
    ],
)
def test_a_text_value_is_typed_by_its_schema_as_vllm_types_it(
    text: str, schema: dict[str, Any], typed: object
) -> None:
    assert same_json(typed_value(text, schema), typed)


def test_a_boolean_is_no_number_in_typed_comparison() -> None:
    assert not same_json(True, 1)
    assert same_json(3, 3.0)
    assert not same_json({"a": True}, {"a": 1})


def test_with_a_schema_the_text_must_come_out_typed() -> None:
    assert value_agrees(3, "3", {"type": "integer"})
    assert not value_agrees("3", "3", {"type": "integer"})
    assert value_agrees("3", "3", {"type": "string"})
    assert not value_agrees(3, "3", {"type": "string"})


def test_an_expectation_already_typed_is_compared_as_it_is() -> None:
    assert value_agrees(3, 3, {"type": "integer"})
    assert not value_agrees("3", 3, {"type": "integer"})


def test_without_a_schema_the_text_and_its_reading_are_both_right() -> None:
    assert value_agrees("3", "3", None)
    assert value_agrees(3, "3", None)
    assert value_agrees("3", 3, None)
    assert not value_agrees(4, "3", None)


def test_a_text_its_schema_cannot_read_is_judged_without_the_schema() -> None:
    # "true" for an integer: vLLM's Qwen3-Coder parser keeps the text, its GLM parser
    # reads true: neither is blamed.
    assert value_agrees("true", "true", {"type": "integer"})
    assert value_agrees(True, "true", {"type": "integer"})
