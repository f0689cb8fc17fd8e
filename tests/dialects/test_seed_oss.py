"""Seed-OSS's ``<seed:tool_call>`` blocks, read whole, per character and at every split."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.dialects import BodyError, dialect

D = dialect("seed_oss")
OPEN, CLOSE = "<seed:tool_call>", "</seed:tool_call>"
WEATHER = (
    f"{OPEN}\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
    f"<parameter=days>3</parameter>\n</function>\n{CLOSE}"
)
PARALLEL = (
    f"Both.\n{OPEN}\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
    f"</function>\n<function=get_time>\n<parameter=tz>Europe/Paris</parameter>\n"
    f"</function>\n{CLOSE}\nDone."
)
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


def run(chunks: list[str], tools: tuple[str, ...] | None = None, specs: Any = None) -> list[Event]:
    detector = StreamDetector(tools=tools, tool_specs=specs)
    events: list[Event] = []
    for chunk in chunks:
        events += detector.feed(chunk)
    return events + detector.finish()


def meaning(events: list[Event]) -> tuple[str, list[tuple[str, Any]], list[str]]:
    shown = "".join(
        e.text if isinstance(e, Text) else e.content
        for e in events
        if isinstance(e, Text | Rejected)
    )
    calls = [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]
    rejected = [e.reason for e in events if isinstance(e, Rejected)]
    return shown, calls, rejected


def test_one_function_is_one_call_with_text_values() -> None:
    assert meaning(run([WEATHER])) == ("", [("get_weather", {"city": "Paris", "days": "3"})], [])


def test_the_tool_schema_types_the_values() -> None:
    _, calls, _ = meaning(run([WEATHER], specs=SPECS))
    assert calls == [("get_weather", {"city": "Paris", "days": 3})]


def test_several_functions_in_one_block_are_parallel_calls() -> None:
    shown, calls, _ = meaning(run([PARALLEL]))
    assert shown == "Both.\n\nDone."
    assert calls == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]


def test_one_block_per_call_is_as_good() -> None:
    text = WEATHER + "\n" + WEATHER
    assert [c for c, _ in meaning(run(list(text)))[1]] == ["get_weather", "get_weather"]


def test_the_calls_carry_the_dialect_not_qwen3_coder_s() -> None:
    events = [e for e in run([PARALLEL]) if isinstance(e, ToolCall)]
    assert {e.format for e in events} == {"seed_oss"}


@pytest.mark.parametrize("text", [WEATHER, PARALLEL], ids=["one", "parallel"])
def test_every_split_point_and_every_character_give_the_whole_result(text: str) -> None:
    whole = meaning(run([text]))
    assert meaning(run(list(text))) == whole
    for cut in range(1, len(text)):
        assert meaning(run([text[:cut], text[cut:]])) == whole, cut


def test_a_value_that_mentions_the_closing_tags_is_read_whole() -> None:
    text = f"{OPEN}<function=f><parameter=v>a </parameter> b </function> c</parameter></function>{CLOSE}"
    assert meaning(run([text]))[1] == [("f", {"v": "a </parameter> b </function> c"})]


def test_exactly_one_newline_is_trimmed_at_each_end_of_a_value() -> None:
    text = f"{OPEN}<function=f><parameter=v>\n\n  x  \n</parameter></function>{CLOSE}"
    assert meaning(run([text]))[1] == [("f", {"v": "\n  x  "})]


@pytest.mark.parametrize(
    "body",
    [
        "\n",
        "<parameter=city>Paris</parameter>",  # no <function=…> names the tool
        "<function=>\n</function>",
        "<function=get weather>\n</function>",
        "<function=get_weather>\n<parameter=city>Paris</parameter>",  # no </function>
        '{"name": "get_weather", "arguments": {}}',  # Hermes JSON in Seed's tags
    ],
)
def test_a_body_that_is_not_functions_is_rejected_as_malformed_and_shown(body: str) -> None:
    shown, calls, rejected = meaning(run([f"{OPEN}{body}{CLOSE}"]))
    assert (shown, calls, rejected) == (body, [], ["malformed"])


def test_the_parser_raises_only_body_errors() -> None:
    assert D.parse is not None
    with pytest.raises(BodyError):
        D.parse("<function=f><parameter=>1</parameter></function>")


def test_an_undeclared_tool_is_rejected() -> None:
    _, calls, rejected = meaning(run([WEATHER], tools=("get_time",)))
    assert (calls, rejected) == ([], ["undeclared"])


def test_an_unclosed_block_whose_functions_are_complete_is_a_call() -> None:
    assert meaning(run([WEATHER.removesuffix(CLOSE)]))[1] == [
        ("get_weather", {"city": "Paris", "days": "3"})
    ]


def test_an_unclosed_block_cut_inside_a_function_is_unterminated() -> None:
    shown, calls, rejected = meaning(run([WEATHER[:50]]))
    assert (shown, calls, rejected) == (WEATHER[len(OPEN) : 50], [], ["unterminated"])


def test_a_bare_function_outside_the_tags_stays_text() -> None:
    # vLLM's and SGLang's parsers fall back to <function=…> without the tags; the
    # block markers are what make it a call here.
    text = "<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>"
    assert meaning(run(list(text))) == (text, [], [])


def test_the_opening_tag_inside_reasoning_opens_nothing() -> None:
    text = f"<think>I will write {OPEN} next.</think>{WEATHER}"
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"I will write {OPEN} next."]
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1
