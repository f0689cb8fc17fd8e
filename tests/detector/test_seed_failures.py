"""The bugs described in ARCHITECTURE.md §15, as tests: each one once shipped somewhere."""

from __future__ import annotations

import json

from helpers import chunkings, run

from tcr.detector import Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def test_marker_split_as_the_mlx_engine_sent_it_still_opens_the_block() -> None:
    # Observed live: <tool, _, c, all> (PR #879, ARCHITECTURE.md §15.2).
    chunks = [
        "<tool",
        "_",
        "c",
        "all>",
        '{"name": "get_weather", ',
        '"arguments": {}}',
        "</tool_call>",
    ]
    assert run(chunks) == [ToolCall("get_weather", "{}", "".join(chunks), "hermes")]


def test_marker_split_as_llama_server_tokenizes_it_still_opens_the_block() -> None:
    chunks = [
        "<",
        "t",
        "oo",
        "l",
        "_",
        "c",
        "al",
        "l",
        ">",
        '{"name": "f", "arguments": {}}',
        "</",
        "tool",
        "_call",
        ">",
    ]
    assert run(chunks) == [ToolCall("f", "{}", "".join(chunks), "hermes")]


def test_false_start_tool_result_is_flushed_as_text_and_nothing_is_lost() -> None:
    text = "<tool_result>42</tool_result>"
    for label, chunks in chunkings(text):
        assert run(chunks) == [Text(text)], label


def test_tools_prefix_followed_by_do_not_is_flushed_as_text() -> None:
    # ADR 0018 (ARCHITECTURE.md §15.1): "<tools followed by do not".
    chunks = ["I use <tools", " do not", " need."]
    assert run(chunks) == [Text("I use <tools do not need.")]


def test_false_start_is_released_as_soon_as_it_cannot_be_a_marker() -> None:
    detector = StreamDetector()
    detector.feed("ok ")
    assert detector.feed("<tool") == []
    assert detector.state.pending == "<tool"
    assert detector.feed("_r") == [Text("<tool_r")]
    assert detector.state.pending == ""


def test_preamble_sentence_does_not_settle_the_decision() -> None:
    # PR #879 (ARCHITECTURE.md §15.2): "I'll check that." then the call came back as raw markup.
    text = f"I'll check that. {CALL}"
    for label, chunks in chunkings(text, randoms=50):
        events = run(chunks)
        assert [type(e) for e in events] == [Text, ToolCall], label


def test_reasoning_that_mentions_the_marker_does_not_open_a_call() -> None:
    text = f"<think>Maybe I should emit <tool_call> here.</think>{CALL}"
    for label, chunks in chunkings(text, randoms=50):
        events = run(chunks)
        assert [type(e) for e in events] == [Reasoning, ToolCall], label
        assert isinstance(events[0], Reasoning) and "<tool_call>" in events[0].text


def test_json_answer_is_content_and_released_before_the_end() -> None:
    # PR #2262 (ARCHITECTURE.md §15.3): a {-prefixed answer was buffered forever as a maybe-call.
    detector = StreamDetector(tools=["get_weather"])
    shown: list[str] = []
    for chunk in ['{"temperature"', ": 21,", ' "unit": "C"', "}"]:
        for ev in detector.feed(chunk):
            shown.append(ev.content if isinstance(ev, Rejected) else ev.text)  # type: ignore[union-attr]
    assert "".join(shown) == '{"temperature": 21, "unit": "C"}'  # all out before finish()
    assert detector.finish() == []


def test_json_answer_is_rejected_as_not_a_call_and_shown_verbatim() -> None:
    text = '{"temperature": 21, "unit": "C"}'
    events = run([text])
    assert isinstance(events[0], Rejected) and events[0].reason == "not_a_call"
    assert "".join(e.content if isinstance(e, Rejected) else e.text for e in events) == text  # type: ignore[union-attr]


def test_undeclared_tool_name_is_shown_as_content() -> None:
    events = run([CALL], tools=["search"])
    assert events == [
        Rejected(
            CALL,
            '{"name": "get_weather", "arguments": {"city": "Paris"}}',
            "hermes",
            "undeclared",
        )
    ]


def test_undeclared_bare_json_name_is_released_as_soon_as_the_name_is_read() -> None:
    detector = StreamDetector(tools=["search"])
    events = detector.feed('{"name": "print", "arguments"')
    assert events[0] == Rejected('{"name": "print"', '{"name": "print"', "bare_json", "undeclared")
    assert events[1:] == [Text(', "arguments"')]


def test_stream_ending_inside_a_marker_prefix_swallows_nothing() -> None:
    for tail in ["<", "<tool", "<tool_call", "<|python_ta", "```json\n", "[TOOL_CALL"]:
        text = "Answer: 42 " + tail
        for label, chunks in chunkings(text, randoms=20):
            assert run(chunks) == [Text(text)], (tail, label)


def test_stream_ending_inside_an_unterminated_block_swallows_nothing() -> None:
    text = 'Sure. <tool_call>{"name": "get_weather", "arguments": {"ci'
    events = run(list(text))
    assert events == [
        Text("Sure. "),
        Rejected(text[6:], '{"name": "get_weather", "arguments": {"ci', "hermes", "unterminated"),
    ]


def test_unclosed_block_whose_body_is_a_complete_call_becomes_a_call() -> None:
    # Several families close a call by ending the message (PR #879, ARCHITECTURE.md §15.2).
    text = '<tool_call>{"name": "f", "arguments": {}}'
    assert run(list(text)) == [ToolCall("f", "{}", text, "hermes")]


def test_two_calls_in_one_chunk_are_two_calls() -> None:
    second = CALL.replace("get_weather", "get_time")
    events = run([CALL + second])
    assert [(e.name, e.raw) for e in events if isinstance(e, ToolCall)] == [
        ("get_weather", CALL),
        ("get_time", second),
    ]


def test_closing_marker_inside_a_json_string_does_not_close_the_block() -> None:
    text = '<tool_call>{"name": "echo", "arguments": {"s": "a </tool_call> b"}}</tool_call>'
    for label, chunks in chunkings(text, randoms=50):
        events = run(chunks)
        assert len(events) == 1 and isinstance(events[0], ToolCall), label
        assert json.loads(events[0].arguments) == {"s": "a </tool_call> b"}


def test_escaped_quote_split_across_chunks_stays_inside_the_string() -> None:
    text = (
        '<tool_call>{"name": "echo", "arguments": {"s": "say \\"</tool_call>\\" ok"}}</tool_call>'
    )
    for k in range(len(text)):
        events = run([text[:k], text[k:]])
        assert len(events) == 1 and isinstance(events[0], ToolCall), k


def test_unterminated_block_keeps_a_closing_marker_that_sat_in_a_string() -> None:
    text = '<tool_call>{"name": "echo", "arguments": {"s": "</tool_call>'
    events = run(list(text))
    assert events == [Rejected(text, text[len("<tool_call>") :], "hermes", "unterminated")]
