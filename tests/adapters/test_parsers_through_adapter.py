"""The test Hermes parser through tcr.adapters: correct, it passes; each injected bug is caught.

Only Hermes inputs: until detectors can claim dialects (issue 12, item 1), tcr
expects every dialect of the reference from every detector, so a Hermes-only
parser would be charged for Gemma, Mistral or Qwen3-Coder recordings it never
claimed to read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from parsers.hermes import Bug
from parsers.shapes import SHAPES, hermes_factory

from tcr.corpora import ROOT
from tcr.corpus import read_recording
from tcr.judge import TEXT_SPANS_ONLY, Judge
from tcr.oracle import Check
from tcr.rechunk import parse_strategy
from tcr.replay import run
from tcr.stream import decode


@dataclass(frozen=True, slots=True)
class Message:
    text: str
    tools: list[str] | None
    expect: dict[str, Any]


def recorded(name: str) -> Message:
    recording = read_recording(ROOT / name)
    assert recording.expect is not None
    return Message(decode(recording).text, recording.tools, recording.expect)


def weather(**arguments: object) -> dict[str, object]:
    return {"name": "get_weather", "arguments": arguments}


MESSAGES = {
    "json": recorded("recorded/tool_call_tag_json.msgpack"),
    "two_calls": recorded("recorded/tool_call_tag_two_calls.msgpack"),
    "arguments_first": recorded("regressions/format_tool_call_tag_json.msgpack"),
    "cut_off_marker": Message(
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_call>\nOne more: <tool_",
        None,
        {"text": "Checking.\n\nOne more: <tool_", "calls": [weather(city="Paris")]},
    ),
    "braces_in_strings": Message(
        '<tool_call>{"name": "search", "arguments": {"q": "a \\"}\\" b {"}}</tool_call>',
        None,
        {"text": "", "calls": [{"name": "search", "arguments": {"q": 'a "}" b {'}}]},
    ),
    "no_call": Message("Is 2 < 3? Yes, and 3 <", None, {"text": "Is 2 < 3? Yes, and 3 <"}),
}


def judge(message: Message, shape: str = "sglang", bugs: tuple[Bug, ...] = ()) -> Judge:
    factory = hermes_factory(shape, bugs)
    return Judge(factory, message.text, tools=message.tools, expectation=message.expect)


def chunkings(text: str, strategies: tuple[str, ...]) -> Iterator[tuple[str, list[str]]]:
    for strategy in strategies:
        for chunking in parse_strategy(strategy).chunkings(text, runs=20, seed=0):
            yield chunking.label, list(chunking.chunks)


@pytest.mark.parametrize("name", MESSAGES)
def test_correct_parser_passes_whole_char_every_split_and_random(name: str) -> None:
    message = MESSAGES[name]
    judged = judge(message)
    strategies = ("whole", "char", "exhaustive", "random:8")
    failures = {
        label: [str(v) for v in judged.verdict(chunks).violations]
        for label, chunks in chunkings(message.text, strategies)
    }
    assert {label: found for label, found in failures.items() if found} == {}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", MESSAGES)
def test_correct_parser_passes_in_every_result_shape(shape: str, name: str) -> None:
    message = MESSAGES[name]
    judged = judge(message, shape)
    for label, chunks in chunkings(message.text, ("whole", "char", "random:8")):
        assert judged.verdict(chunks).violations == (), label


def test_a_run_with_calls_skips_the_span_checks_and_judges_the_rest() -> None:
    verdict = judge(MESSAGES["two_calls"]).verdict(list(MESSAGES["two_calls"].text))
    assert verdict.ran == (Check.INVARIANCE, Check.NO_LEAK, Check.EXPECTED, Check.CRASH)
    assert verdict.skipped[Check.CONSERVATION] == TEXT_SPANS_ONLY


def test_a_text_only_run_keeps_conservation_and_holdback() -> None:
    verdict = judge(MESSAGES["no_call"]).verdict(list(MESSAGES["no_call"].text))
    assert {Check.CONSERVATION, Check.HOLDBACK} <= set(verdict.ran)


def checks_found(bug: Bug, name: str, chunks: list[str] | None = None) -> list[tuple[Check, str]]:
    message = MESSAGES[name]
    verdict = judge(message, bugs=(bug,)).verdict(chunks or list(message.text))
    return [(v.check, v.message) for v in verdict.violations]


# Each call's name went out and its arguments do not parse: the client gets two unusable
# calls, not fewer calls (a merge, below).
REJECTED_BOTH = (
    "call 0 (get_weather) came out as Rejected(malformed, ''): 0 calls and 2 rejected, expected 2"
)


def test_arguments_dropped_with_the_name_are_caught_by_expected_when_they_share_a_chunk() -> None:
    text = MESSAGES["two_calls"].text
    # Only the arguments' closing brace is left to send at the close: no call parses.
    assert checks_found(Bug.ARGUMENTS_WITH_NAME_DROPPED, "two_calls", [text]) == [
        (Check.EXPECTED, REJECTED_BOTH)
    ]


def test_arguments_dropped_with_the_name_are_caught_by_expected_one_character_at_a_time() -> None:
    # The name goes out with the arguments' first character, "{": no call parses either way.
    assert checks_found(Bug.ARGUMENTS_WITH_NAME_DROPPED, "two_calls") == [
        (Check.EXPECTED, REJECTED_BOTH)
    ]


def test_text_swallowed_at_flush_is_lost_for_conservation_in_a_message_without_a_call() -> None:
    assert checks_found(Bug.FLUSH_SWALLOWED, "no_call") == [
        (Check.CONSERVATION, "lost 1 character at end: finish() never emitted '<'"),
        (Check.EXPECTED, "shown text differs at character 21: got '', expected '<'"),
    ]


def test_text_swallowed_at_flush_after_a_call_is_caught_by_expected_only() -> None:
    assert checks_found(Bug.FLUSH_SWALLOWED, "cut_off_marker") == [
        (Check.EXPECTED, "shown text differs at character 21: got '', expected '<tool_'")
    ]


def test_a_reused_index_merges_two_calls_and_expected_misses_both() -> None:
    assert checks_found(Bug.INDEX_REUSED, "two_calls") == [
        (Check.EXPECTED, "call 0 (get_weather) is missing: 0 calls, expected 2")
    ]


def test_a_marker_split_across_chunks_leaks_and_is_caught_by_no_leak() -> None:
    found = checks_found(Bug.PER_CHUNK_MARKER, "json")
    assert [check for check, _ in found] == [
        Check.INVARIANCE,
        Check.NO_LEAK,
        Check.EXPECTED,
        Check.EXPECTED,
    ]
    assert found[1] == (Check.NO_LEAK, "Text shows the opening marker '<tool_call>'")


def test_a_marker_in_one_chunk_hides_the_per_chunk_bug() -> None:
    assert checks_found(Bug.PER_CHUNK_MARKER, "json", [MESSAGES["json"].text]) == []


HERMES_RECORDINGS = [
    ROOT / "recorded/tool_call_tag_json.msgpack",
    ROOT / "recorded/tool_call_tag_two_calls.msgpack",
    ROOT / "regressions/format_tool_call_tag_json.msgpack",
]


def test_replay_of_the_hermes_recordings_finds_nothing_in_the_correct_parser() -> None:
    report = run(HERMES_RECORDINGS, detector=hermes_factory())
    assert (report.exit_code, report.failures) == (0, [])


@pytest.mark.parametrize(
    ("bug", "checks"),
    [
        (Bug.ARGUMENTS_WITH_NAME_DROPPED, {Check.EXPECTED}),
        (Bug.INDEX_REUSED, {Check.EXPECTED}),
        (Bug.PER_CHUNK_MARKER, {Check.EXPECTED, Check.INVARIANCE, Check.NO_LEAK}),
        # The recordings end in plain text, so nothing is held at the end to swallow.
        (Bug.FLUSH_SWALLOWED, set()),
    ],
)
def test_replay_of_the_hermes_recordings_reports_each_bug(bug: Bug, checks: set[Check]) -> None:
    report = run(HERMES_RECORDINGS, detector=hermes_factory(bugs=(bug,)))
    assert {failure.violation.check for _, failure in report.failures} == checks


@pytest.mark.parametrize("body", ['"name":"","":{}', '"name":" "', '"name":"search","":{}'])
def test_a_blank_name_or_arguments_missing_beside_other_keys_is_no_call(body: str) -> None:
    # found by `tcr fuzz --detector parsers.shapes:correct_hermes --budget 60s` (seeds 0,
    # 1): the parser took {"name": ""} for a call, and {"name": "search", "": {}} for one
    # without arguments, where the reference shows the block's body; and the text around a
    # block its adapter rejected at the end ran together into "<tool_call>"
    from tcr.replay import check_chunks

    text = f"<tool_call<tool_call>{{{body}}}</tool_call>>"
    for chunks in ([text], list(text)):
        verdict = check_chunks(
            chunks,
            detector="parsers.shapes:correct_hermes",
            tools=["search"],
            dialects=["hermes"],
            empty_tools="text",
        )
        assert verdict.ok, verdict.violations


def test_text_on_both_sides_of_a_call_may_run_together_as_the_reference_shows_it() -> None:
    # found by `tcr fuzz --detector parsers.shapes:correct_hermes --budget 60s` (seeds 1,
    # 2): the adapter completes a call at the end, after the text that follows it, so
    # "<tool_call" before the block and ">" after it run together; the reference shows
    # the same characters to a client, one after the other: no leak
    from tcr.replay import check_chunks

    text = '<tool_call<tool_call>{"name":"s","arguments":{}}</tool_call>>'
    for chunks in ([text], list(text)):
        verdict = check_chunks(
            chunks,
            detector="parsers.shapes:correct_hermes",
            dialects=["hermes"],
            empty_tools="text",
        )
        assert verdict.ok, verdict.violations
