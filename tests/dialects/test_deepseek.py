"""DeepSeek V3 and V3.1: calls in one ``<｜tool▁calls▁begin｜>`` section, told apart by the call."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from helpers import chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.detector.core import StreamDetector
from tcr.detector.formats import SHARING
from tcr.dialects import BodyError

OPEN = "<｜tool▁calls▁begin｜>"
CLOSE = "<｜tool▁calls▁end｜>"
BEGIN = "<｜tool▁call▁begin｜>"
SEP = "<｜tool▁sep｜>"
END = "<｜tool▁call▁end｜>"


def v3(name: str, arguments: str) -> str:
    return f"{BEGIN}function{SEP}{name}\n```json\n{arguments}\n```{END}"


def v31(name: str, arguments: str) -> str:
    return f"{BEGIN}{name}{SEP}{arguments}{END}"


Writer = Callable[[str, str], str]
SPELLINGS = [pytest.param("deepseek_v3", v3, id="v3"), pytest.param("deepseek_v31", v31, id="v31")]


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def two(call: Writer, between: str = "") -> str:
    return (
        "Checking both. "
        + OPEN
        + call("get_weather", '{"city": "Paris"}')
        + between
        + call("get_time", '{"tz": "CET"}')
        + CLOSE
        + " Done."
    )


def test_v3_and_v31_share_the_section_marker_v3_first() -> None:
    assert [d.id for d in SHARING[OPEN]] == ["deepseek_v3", "deepseek_v31"]


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_two_calls_in_one_section_under_every_chunking(dialect: str, call: Writer) -> None:
    text = two(call, "\n")
    whole = run([text])
    assert calls(whole) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert {e.format for e in whole if isinstance(e, ToolCall)} == {dialect}
    assert [e.text for e in whole if isinstance(e, Text)] == ["Checking both. ", " Done."]
    for label, chunks in chunkings(text, randoms=50):
        assert run(chunks) == whole, label


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_markers_inside_an_argument_string_are_content(dialect: str, call: Writer) -> None:
    value = f"say {END}{CLOSE}{BEGIN}x{SEP} then ```"
    text = OPEN + call("echo", json.dumps({"text": value})) + CLOSE
    for label, chunks in chunkings(text, randoms=20):
        events = run(chunks)
        assert calls(events) == [("echo", {"text": value})], label
        assert {e.format for e in events if isinstance(e, ToolCall)} == {dialect}


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_pretty_printed_arguments_are_read(dialect: str, call: Writer) -> None:
    arguments = json.dumps({"city": "Paris", "days": [1, 2]}, indent=2)
    assert [c.name for c in parse_body(dialect, call("get_weather", arguments))] == ["get_weather"]


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
@pytest.mark.parametrize("name", ["github.create_issue", "shell-exec", "météo"])
def test_dotted_hyphenated_and_unicode_names_are_kept_whole(
    dialect: str, call: Writer, name: str
) -> None:
    (parsed,) = parse_body(dialect, call(name, '{"a": 1}'))
    assert parsed.name == name


@pytest.mark.parametrize(
    ("dialect", "body", "reason"),
    [
        ("deepseek_v3", v3("", "{}"), "malformed"),  # no name
        ("deepseek_v3", v3("f", "[1]"), "not_a_call"),
        ("deepseek_v3", v3("f", '{"a": 1'), "malformed"),
        ("deepseek_v3", f"{BEGIN}tool{SEP}f\n```json\n{{}}\n```{END}", "malformed"),  # the type
        ("deepseek_v3", f"{BEGIN}function{SEP}f\n{{}}{END}", "malformed"),  # no fence
        ("deepseek_v3", f"{BEGIN}function{SEP}f\n```json\n{{}}{END}", "malformed"),  # unclosed
        ("deepseek_v31", v31("", "{}"), "malformed"),
        ("deepseek_v31", v31("f", "[1]"), "not_a_call"),
        ("deepseek_v31", v31("f", '{"a": 1'), "malformed"),
        ("deepseek_v31", f"{BEGIN}f{{}}{END}", "malformed"),  # no separator
        ("deepseek_v31", f"{BEGIN}f{SEP}{{}}", "malformed"),  # no call end
        ("deepseek_v31", v31("f", "{}") + " and more", "malformed"),
        ("deepseek_v31", '{"name": "f", "arguments": {}}', "malformed"),
    ],
)
def test_a_body_that_is_not_the_format_is_rejected(dialect: str, body: str, reason: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body(dialect, body)
    assert caught.value.reason == reason
    (rejected,) = [e for e in run([OPEN + body + CLOSE]) if isinstance(e, Rejected)]
    assert rejected.reason == reason and rejected.content == body


def test_a_v31_call_to_a_tool_named_function_is_v31() -> None:
    (call,) = run([OPEN + v31("function", '{"a": 1}') + CLOSE])
    assert isinstance(call, ToolCall) and call.format == "deepseek_v31" and call.name == "function"


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_a_detector_claiming_one_reads_it_and_rejects_the_other(dialect: str, call: Writer) -> None:
    other = v31 if call is v3 else v3
    detector = StreamDetector(dialects=[dialect])
    text = OPEN + call("f", "{}") + CLOSE + OPEN + other("g", "{}") + CLOSE
    events = [*detector.feed(text), *detector.finish()]
    assert [(type(e).__name__, e.format) for e in events if not isinstance(e, Text)] == [
        ("ToolCall", dialect),
        ("Rejected", dialect),
    ]


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_an_unclosed_section_with_complete_calls_is_still_the_calls(
    dialect: str, call: Writer
) -> None:
    assert calls(run([OPEN + call("f", '{"a": 1}')])) == [("f", {"a": 1})]


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_a_section_cut_inside_a_call_is_unterminated(dialect: str, call: Writer) -> None:
    text = OPEN + call("f", '{"a": 1}')[:-5]
    (rejected,) = run([text])
    assert isinstance(rejected, Rejected) and rejected.reason == "unterminated"
    assert rejected.content == text.removeprefix(OPEN)


def test_a_split_marker_is_held_then_released_as_text_at_the_end() -> None:
    assert run(["Hello <｜tool▁ca", "lls▁be"]) == [Text("Hello <｜tool▁calls▁be")]


def test_ascii_bars_are_not_the_marker() -> None:
    text = "<|tool▁calls▁begin|>" + v31("f", "{}") + "<|tool▁calls▁end|>"
    assert calls(run([text])) == []


def test_the_section_inside_reasoning_opens_no_call() -> None:
    text = f"<think>I will use {OPEN}</think>{OPEN}{v31('f', '{}')}{CLOSE}"
    events = run([text])
    assert [e.text for e in events if isinstance(e, Reasoning)] == ["I will use " + OPEN]
    assert calls(events) == [("f", {})]


@pytest.mark.parametrize(("dialect", "call"), SPELLINGS)
def test_an_undeclared_tool_rejects_the_section(dialect: str, call: Writer) -> None:
    (rejected,) = run([OPEN + call("rm", "{}") + CLOSE], tools=["get_weather"])
    assert isinstance(rejected, Rejected) and rejected.reason == "undeclared"
