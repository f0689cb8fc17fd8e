"""Harmony (gpt-oss): call messages ``to=functions.NAME`` and the ``analysis`` channel."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import parse_body
from tcr.dialects import BodyError

START = "<|start|>assistant"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
CONSTRAIN = "<|constrain|>"
END = "<|end|>"
CALL = "<|call|>"
ANALYSIS = f"{CHANNEL}analysis{MESSAGE}"


def call_message(name: str, arguments: str, *, later: bool = True, closer: str = CALL) -> str:
    start = START if later else ""
    return f"{start}{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{arguments}{closer}"


def calls(events: list[object]) -> list[tuple[str, object]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def reasoning(events: list[object]) -> list[str]:
    return [e.text for e in events if isinstance(e, Reasoning)]


def shown(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


def parsed(body: str) -> list[tuple[str, object]]:
    return [(c.name, json.loads(c.arguments)) for c in parse_body("harmony", body)]


TURN = (
    ANALYSIS
    + "Need weather and time. Call both."
    + END
    + call_message("get_weather", '{"city": "Paris"}')
    + call_message("get_time", '{"tz": "CET"}')
)


def test_analysis_then_two_call_messages_under_every_chunking() -> None:
    whole = run([TURN])
    assert reasoning(whole) == ["Need weather and time. Call both."]
    assert calls(whole) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert shown(whole) == ""
    assert {e.format for e in whole if isinstance(e, ToolCall)} == {"harmony"}
    for label, chunks in chunkings(TURN, randoms=50):
        assert run(chunks) == whole, label


def test_each_call_message_is_one_block_with_its_own_start() -> None:
    whole = run([TURN])
    raws = [e.raw for e in whole if isinstance(e, ToolCall)]
    assert raws == [
        call_message("get_weather", '{"city": "Paris"}'),
        call_message("get_time", '{"tz": "CET"}'),
    ]


@pytest.mark.parametrize(
    "header",
    [
        f"{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}",
        f"{CHANNEL}commentary to=functions.f{CONSTRAIN}json{MESSAGE}",  # no space
        f"{CHANNEL}commentary to=functions.f json{MESSAGE}",  # a bare content type
        f"{CHANNEL}commentary to=functions.f{MESSAGE}",  # none: JSON assumed (vLLM)
        f"{CHANNEL}analysis to=functions.f {CONSTRAIN}json{MESSAGE}",  # llama.cpp: analysis too
        f"{START} to=functions.f{CHANNEL}commentary json{MESSAGE}",  # recipient in the role
        f"{START} to=functions.f{CHANNEL}commentary {CONSTRAIN}json{MESSAGE}",
        f"{START}{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}",
        f"{START}{CHANNEL}analysis to=functions.f{MESSAGE}",
    ],
)
def test_every_header_the_engines_accept_is_a_call(header: str) -> None:
    text = f'{header}{{"a": [1, {{"b": null}}]}}{CALL}'
    for label, chunks in chunkings(text, randoms=10):
        assert run(chunks) == [ToolCall("f", '{"a": [1, {"b": null}]}', text, "harmony")], label


@pytest.mark.parametrize("closer", [CALL, END, ""])
def test_a_call_ends_on_call_on_end_or_with_the_stream(closer: str) -> None:
    # <|call|> is a stop token: llama-server and vLLM often end the stream on the JSON.
    text = call_message("f", '{"a": 1}', later=False, closer=closer)
    assert calls(run([text])) == [("f", {"a": 1})]


@pytest.mark.parametrize("name", ["github.create_issue", "shell-exec", "météo"])
def test_dotted_hyphenated_and_unicode_names_are_kept_whole(name: str) -> None:
    assert parsed(f"{name}{MESSAGE}{{}}") == [(name, {})]


def test_markers_inside_an_argument_string_are_content() -> None:
    value = f"write {CALL} or {END}, then {START}{CHANNEL}final{MESSAGE}"
    text = call_message("echo", json.dumps({"text": value})) + " after"
    for label, chunks in chunkings(text, randoms=20):
        events = run(chunks)
        assert calls(events) == [("echo", {"text": value})], label
        assert shown(events) == " after", label


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (f'f {CONSTRAIN}json{{"a": 1}}', "malformed"),  # no <|message|>
        (f"{MESSAGE}{{}}", "malformed"),  # no name
        (f"f {CONSTRAIN}python{MESSAGE}print(1)", "malformed"),  # not JSON
        (f'f{MESSAGE}{{"a": 1', "malformed"),
        (f"f{MESSAGE}[1]", "not_a_call"),
        (f"f{MESSAGE}{{}} and more", "malformed"),
        (f"f{MESSAGE}", "malformed"),  # no arguments
    ],
)
def test_a_body_that_is_not_a_call_is_rejected(body: str, reason: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body("harmony", body)
    assert caught.value.reason == reason
    opener = f"{CHANNEL}commentary to=functions."
    (rejected,) = [e for e in run([opener + body + CALL]) if isinstance(e, Rejected)]
    assert rejected.reason == reason and rejected.content == body


@pytest.mark.parametrize("recipient", ["python", "browser.search", "assistant"])
def test_a_message_to_no_function_is_text(recipient: str) -> None:
    # Built-in tools are no functions (vLLM, llama.cpp and SGLang all trigger on
    # " to=functions."); gpt-oss-20b writes a stray "to=assistant" header before its analysis.
    text = f"{CHANNEL}commentary to={recipient}{MESSAGE}print(1){CALL}"
    assert run([text]) == [Text(text)]


def test_the_stray_commentary_header_leaves_the_analysis_reasoning() -> None:
    stray = f"{CHANNEL}commentary to=assistant"
    events = run([stray + ANALYSIS + "Plan." + END + call_message("f", "{}")])
    assert shown(events) == stray and reasoning(events) == ["Plan."]
    assert calls(events) == [("f", {})]


def test_markers_inside_the_analysis_never_open_a_call() -> None:
    plan = f"I will write {CHANNEL}commentary to=functions.rm {CONSTRAIN}json{MESSAGE}{{}}{CALL}"
    text = ANALYSIS + plan + END + call_message("f", "{}")
    for label, chunks in chunkings(text, randoms=20):
        events = run(chunks)
        assert reasoning(events) == [plan], label
        assert calls(events) == [("f", {})], label


def test_a_later_analysis_message_is_reasoning_too() -> None:
    text = call_message("f", "{}", later=False) + START + ANALYSIS + "Now answer." + END
    events = run([text])
    assert calls(events) == [("f", {})] and reasoning(events) == ["Now answer."]


def test_final_text_is_shown_with_its_header() -> None:
    # tcr's events carry no span for framing shown nowhere: the final header stays text.
    final = f"{START}{CHANNEL}final{MESSAGE}It is sunny.<|return|>"
    events = run([ANALYSIS + "Easy." + END + final])
    assert reasoning(events) == ["Easy."] and shown(events) == final and calls(events) == []


def test_a_split_header_is_held_then_released_as_text_at_the_end() -> None:
    assert run(["Hi ", START, CHANNEL + "comm"]) == [Text(f"Hi {START}{CHANNEL}comm")]


def test_an_undeclared_function_is_rejected() -> None:
    (rejected,) = run([call_message("rm", "{}", later=False)], tools=["get_weather"])
    assert isinstance(rejected, Rejected) and rejected.reason == "undeclared"


def test_a_claim_of_hermes_alone_reads_harmony_as_text() -> None:
    events = run([TURN], dialects=["hermes"])
    assert events == [Text(TURN)]
