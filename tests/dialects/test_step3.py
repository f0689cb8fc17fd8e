"""Step-3: ``function<｜tool_sep｜><steptml:invoke>`` calls in a ``<｜tool_calls_begin｜>`` section."""

from __future__ import annotations

import pytest
from helpers import calls, chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

OPEN, CLOSE = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
BEGIN, SEP, END = "<｜tool_call_begin｜>", "<｜tool_sep｜>", "<｜tool_call_end｜>"
SPECS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


def call(name: str, **params: str) -> str:
    written = "".join(
        f'<steptml:parameter name="{k}">{v}</steptml:parameter>\n' for k, v in params.items()
    )
    return f'{BEGIN}function{SEP}<steptml:invoke name="{name}">\n{written}</steptml:invoke>{END}\n'


def section(*calls: str) -> str:
    return OPEN + "\n" + "".join(calls) + CLOSE


def test_two_calls_in_one_section_under_every_chunking() -> None:
    text = (
        "Both. " + section(call("get_weather", city="Paris"), call("get_time", tz="CET")) + " Done."
    )
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [
            ("get_weather", {"city": "Paris"}),
            ("get_time", {"tz": "CET"}),
        ], label
        assert [e.text for e in events if isinstance(e, Text)] == ["Both. ", " Done."], label
        assert {e.format for e in events if isinstance(e, ToolCall)} == {"step3"}


def test_values_are_text_that_the_schema_types() -> None:
    text = section(call("get_weather", city="75001", days="3"))
    assert calls(run([text])) == [("get_weather", {"city": "75001", "days": "3"})]
    assert calls(run([text], tool_specs=SPECS)) == [("get_weather", {"city": "75001", "days": 3})]


def test_white_space_around_a_value_is_stripped() -> None:
    """vLLM's ``Step3ToolParser._parse_steptml_invoke`` and SGLang's ``Step3Detector`` read
    ``value.strip()``: not Qwen3-Coder's one trimmed newline."""
    text = section(call("f", v="\n\n  x \n"))
    assert calls(run([text])) == [("f", {"v": "x"})]


def test_a_value_with_angle_brackets_and_closing_tags_is_read_whole() -> None:
    value = f"if a < b: x = '</steptml:parameter>' {END}"
    for label, chunks in chunkings(section(call("run", code=value)), randoms=10):
        assert calls(run(chunks)) == [("run", {"code": value})], label


def test_deepseeks_markers_with_word_breaks_do_not_open_a_step3_section() -> None:
    text = section(call("now")).replace("_", "\u2581")  # <｜tool▁calls▁begin｜>…
    events = run(list(text))
    assert "step3" not in {e.format for e in events if isinstance(e, ToolCall | Rejected)}
    assert calls(events) == []


def test_markers_inside_reasoning_open_nothing() -> None:
    text = f"<think>maybe {OPEN}{BEGIN}</think>" + section(call("now"))
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"maybe {OPEN}{BEGIN}"]
    assert calls(events) == [("now", {})]


def test_an_unclosed_section_whose_calls_are_complete_is_a_call() -> None:
    assert calls(run([section(call("now")).removesuffix(CLOSE)])) == [("now", {})]


@pytest.mark.parametrize(
    "body",
    [
        call("get_weather", city="Paris").replace("function", "tool"),  # the type word
        call("get_weather", city="Paris").replace(SEP, ""),
        call("get_weather", city="Paris").replace(END, ""),
        call("", city="Paris"),
        '<steptml:parameter name="city">Paris</steptml:parameter>',  # no invoke
        "\n",
        f'{BEGIN}function{SEP}{{"name": "get_weather"}}{END}',  # DeepSeek JSON after the sep
    ],
)
def test_a_section_that_is_not_step3_calls_is_rejected(body: str) -> None:
    with pytest.raises(BodyError):
        parse_body("step3", body)
    events = run(list(OPEN + body + CLOSE))
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["malformed"]
    assert calls(events) == []
