"""DeepSeek V3.2 DSML: ``<｜DSML｜invoke>`` calls whose ``string`` attribute types each value."""

from __future__ import annotations

import json

import pytest
from helpers import calls, chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

D = "｜DSML｜"
OPEN, CLOSE = f"<{D}function_calls>", f"</{D}function_calls>"


def param(key: str, value: str, string: str = "true") -> str:
    return f'<{D}parameter name="{key}" string="{string}">{value}</{D}parameter>\n'


def invoke(name: str, *params: str) -> str:
    return f'<{D}invoke name="{name}">\n{"".join(params)}</{D}invoke>\n'


def block(*invokes: str) -> str:
    return OPEN + "\n" + "".join(invokes) + CLOSE


def test_two_invokes_in_one_block_under_every_chunking() -> None:
    text = (
        "Both.\n\n"
        + block(
            invoke("get_weather", param("city", "Paris")), invoke("get_time", param("tz", "CET"))
        )
        + " Done."
    )
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris"}),
            ("get_time", {"tz": "CET"}),
        ], label
        assert [e.text for e in events if isinstance(e, Text)] == ["Both.\n\n", " Done."], label
        assert {e.format for e in events if isinstance(e, ToolCall)} == {"deepseek_v32"}


def test_string_true_is_verbatim_text_and_string_false_is_json() -> None:
    body = invoke(
        "f",
        param("zip", "75001"),
        param("code", "  x = 1\n"),
        param("days", "3", "false"),
        param("opts", '{"deep": [true, null]}', "false"),
        param("name", '"Paris"', "false"),
    )
    assert [(c.name, json.loads(c.arguments)) for c in parse_body("deepseek_v32", body)] == [
        (
            "f",
            {
                "zip": "75001",
                "code": "  x = 1\n",
                "days": 3,
                "opts": {"deep": [True, None]},
                "name": "Paris",
            },
        )
    ]


def test_typed_values_need_no_schema() -> None:
    specs = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"days": {"type": "string"}}}}}]  # fmt: skip
    text = block(invoke("f", param("days", "3", "false")))
    assert calls(run([text], tool_specs=specs)) == calls(run([text])) == [("f", {"days": 3})]


def test_a_value_that_mentions_the_closing_tags_is_read_whole() -> None:
    value = f"ends with </{D}parameter> and </{D}invoke> here"
    for label, chunks in chunkings(block(invoke("echo", param("text", value))), randoms=10):
        assert calls(run(chunks)) == [("echo", {"text": value})], label


def test_tags_without_dsml_stay_text() -> None:
    text = '<function_calls>\n<invoke name="f">\n</invoke>\n</function_calls>'
    assert run(list(text)) == [Text(text)]


def test_the_opening_tag_inside_reasoning_opens_nothing() -> None:
    text = f"<think>write {OPEN} now</think>" + block(invoke("now"))
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"write {OPEN} now"]
    assert calls(events) == [("now", {})]


@pytest.mark.parametrize(
    "body",
    [
        invoke("f", param("days", "three", "false")),  # not JSON
        invoke("f", param("days", "3", "maybe")),
        invoke("f", f'<{D}parameter name="days">3</{D}parameter>\n'),  # no string attribute
        invoke("f", param("", "x")),
        invoke(""),
        param("city", "Paris"),  # no invoke
        "\n",
        '{"name": "f", "arguments": {}}',  # SGLang's JSON fallback
    ],
)
def test_a_block_that_is_not_dsml_invokes_is_rejected(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("deepseek_v32", body)
    events = run(list(OPEN + body + CLOSE))
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["malformed"]
    assert calls(events) == []
