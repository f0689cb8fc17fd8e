"""MiniMax M2's ``<minimax:tool_call>`` blocks, read whole, per character and at every split."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.dialects import BodyError, dialect

D = dialect("minimax_m2")
OPEN, CLOSE = "<minimax:tool_call>", "</minimax:tool_call>"
WEATHER = (
    f'{OPEN}\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
    f'<parameter name="days">3</parameter>\n</invoke>\n{CLOSE}'
)
PARALLEL = (
    f'Both.\n{OPEN}\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
    f'</invoke>\n<invoke name="get_time">\n<parameter name="tz">Europe/Paris</parameter>\n'
    f"</invoke>\n{CLOSE}\nDone."
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


def test_one_invoke_is_one_call_with_text_values() -> None:
    assert meaning(run([WEATHER])) == ("", [("get_weather", {"city": "Paris", "days": "3"})], [])


def test_the_tool_schema_types_the_values() -> None:
    _, calls, _ = meaning(run([WEATHER], specs=SPECS))
    assert calls == [("get_weather", {"city": "Paris", "days": 3})]


def test_several_invokes_in_one_block_are_parallel_calls() -> None:
    shown, calls, _ = meaning(run([PARALLEL]))
    assert shown == "Both.\n\nDone."
    assert calls == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]


def test_the_calls_carry_the_dialect_and_the_first_the_raw_block() -> None:
    events = [e for e in run([PARALLEL]) if isinstance(e, ToolCall)]
    assert {e.format for e in events} == {"minimax_m2"}
    assert events[0].raw.startswith(OPEN) and events[0].raw.endswith(CLOSE)
    assert events[1].raw == ""


@pytest.mark.parametrize("text", [WEATHER, PARALLEL], ids=["one", "parallel"])
def test_every_split_point_and_every_character_give_the_whole_result(text: str) -> None:
    whole = meaning(run([text]))
    assert meaning(run(list(text))) == whole
    for cut in range(1, len(text)):
        assert meaning(run([text[:cut], text[cut:]])) == whole, cut


def test_a_value_that_mentions_the_closing_tags_is_read_whole() -> None:
    text = (
        f'{OPEN}<invoke name="write_file"><parameter name="content">'
        "a </parameter> b </invoke> c</parameter></invoke>"
        f"{CLOSE}"
    )
    assert meaning(run([text]))[1] == [("write_file", {"content": "a </parameter> b </invoke> c"})]


def test_exactly_one_newline_is_trimmed_at_each_end_of_a_value() -> None:
    text = f'{OPEN}<invoke name="f"><parameter name="v">\n\n  x  \n</parameter></invoke>{CLOSE}'
    assert meaning(run([text]))[1] == [("f", {"v": "\n  x  "})]


def test_an_invoke_without_parameters_has_no_arguments() -> None:
    assert meaning(run([f'{OPEN}<invoke name="now">\n</invoke>{CLOSE}']))[1] == [("now", {})]


@pytest.mark.parametrize(
    "body",
    [
        "\n",
        '<parameter name="city">Paris</parameter>',  # no <invoke> names the tool
        '<invoke name="">\n</invoke>',
        "<invoke name=get_weather>\n</invoke>",  # the name is quoted
        '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>',  # no </invoke>
        'Let me see. <invoke name="f">\n</invoke>',
    ],
)
def test_a_body_that_is_not_invokes_is_rejected_as_malformed_and_shown(body: str) -> None:
    shown, calls, rejected = meaning(run([f"{OPEN}{body}{CLOSE}"]))
    assert (shown, calls, rejected) == (body, [], ["malformed"])


def test_the_parser_raises_only_body_errors() -> None:
    assert D.parse is not None
    with pytest.raises(BodyError):
        D.parse('<invoke name="f"><parameter name="">1</parameter></invoke>')


def test_an_undeclared_tool_is_rejected() -> None:
    _, calls, rejected = meaning(run([WEATHER], tools=("get_time",)))
    assert (calls, rejected) == ([], ["undeclared"])


def test_an_unclosed_block_whose_invokes_are_complete_is_a_call() -> None:
    text = WEATHER.removesuffix(CLOSE)
    assert meaning(run([text]))[1] == [("get_weather", {"city": "Paris", "days": "3"})]


def test_an_unclosed_block_cut_inside_an_invoke_is_unterminated() -> None:
    shown, calls, rejected = meaning(run([WEATHER[:60]]))
    assert (shown, calls, rejected) == (WEATHER[len(OPEN) : 60], [], ["unterminated"])


def test_the_opening_tag_inside_reasoning_opens_nothing() -> None:
    text = f"<think>I will write {OPEN} next.</think>{WEATHER}"
    events = run(list(text))
    assert [e.text for e in events if isinstance(e, Reasoning)] == [f"I will write {OPEN} next."]
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1


def test_a_near_miss_of_the_tag_stays_text() -> None:
    text = '<minimax:tool_calls> <invoke name="f"></invoke>'
    assert meaning(run(list(text))) == (text, [], [])
