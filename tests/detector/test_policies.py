"""The policies of ARCHITECTURE.md §5.6, one behaviour per test."""

from __future__ import annotations

import itertools

import pytest
from helpers import chunkings, run

from tcr.detector import HOLDBACK_BOUND, Reasoning, Rejected, Text, ToolCall, format_for_model
from tcr.detector.core import StreamDetector
from tcr.detector.machine import FSM, TRANSITIONS

CALL = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'


def test_holdback_never_exceeds_longest_marker_minus_one() -> None:
    text = (
        "a <|python_ta <tool_cal ```json\n [TOOL_CALL <think <|tool_cal <|tool_calls_section_begi "
        "<minimax:tool_cal <|start|>assistant<|channel|>commentary to=functions b"
    )
    detector = StreamDetector()
    for ch in text:
        detector.feed(ch)
        assert len(detector.state.pending) <= HOLDBACK_BOUND
    # Harmony's later call message is the longest opening marker.
    assert len("<|start|>assistant<|channel|>commentary to=functions.") - 1 == HOLDBACK_BOUND


def test_plain_text_is_emitted_at_once() -> None:
    detector = StreamDetector()
    assert detector.feed("Hello, ") == [Text("Hello, ")]
    assert detector.feed("world") == [Text("world")]


def test_distinctive_marker_opens_after_a_preamble() -> None:
    assert [type(e) for e in run(["Sure thing. " + CALL])] == [Text, ToolCall]


def test_bare_json_opens_only_at_message_start() -> None:
    text = 'Answer: {"name": "f", "arguments": {}}'
    assert run([text]) == [Text(text)]


def test_bare_json_after_leading_white_space_still_opens() -> None:
    events = run(["\n  ", '{"name": "f", "arguments": {}}'])
    assert events == [
        Text("\n  "),
        ToolCall("f", "{}", '{"name": "f", "arguments": {}}', "bare_json"),
    ]


def test_braces_inside_strings_do_not_count() -> None:
    text = '{"name": "f", "arguments": {"s": "}}}{"}} tail'
    events = run(list(text))
    assert events[0] == ToolCall("f", '{"s": "}}}{"}', text[:-5], "bare_json")
    assert events[1] == Text(" tail")


def test_closed_block_that_does_not_parse_is_malformed() -> None:
    raw = "<tool_call>{not json}</tool_call>"
    assert run([raw]) == [Rejected(raw, "{not json}", "hermes", "malformed")]


def test_no_tools_list_accepts_any_name() -> None:
    assert isinstance(run([CALL], tools=None)[0], ToolCall)


def test_tools_list_rejects_undeclared_names() -> None:
    assert run([CALL], tools=["g"])[0].reason == "undeclared"  # type: ignore[union-attr]
    assert isinstance(run([CALL], tools=["f"])[0], ToolCall)


def test_empty_tools_list_rejects_every_call() -> None:
    assert run([CALL], tools=[])[0].reason == "undeclared"  # type: ignore[union-attr]


def test_several_blocks_with_text_between_and_after() -> None:
    text = f"a {CALL} b <think>t</think> c {CALL} d"
    events = run([text])
    assert [type(e) for e in events] == [Text, ToolCall, Text, Reasoning, Text, ToolCall, Text]
    assert [e.text for e in events if isinstance(e, Text)] == ["a ", " b ", " c ", " d"]


def test_seeded_detector_emits_what_a_cold_one_emits() -> None:
    text = f"x {CALL} y"
    for fmt in ["hermes", "fenced_json", "native", None]:
        for _, chunks in chunkings(text, randoms=10):
            assert run(chunks, format=fmt) == run(chunks)


def test_a_different_format_later_is_redetected() -> None:
    detector = StreamDetector(format="fenced_json")
    events = detector.feed("[TOOL_CALLS]f[ARGS]{}") + detector.finish()
    assert events[0] == ToolCall("f", "{}", "[TOOL_CALLS]f[ARGS]{}", "mistral_v13")
    assert detector.format == "mistral_v13"


def test_reset_keeps_the_learned_format_and_clears_the_message() -> None:
    detector = StreamDetector()
    detector.feed(CALL + " <tool")
    detector.reset()
    assert detector.format == "hermes"
    assert detector.state.pending == "" and detector.state.fsm is FSM.PRINTING
    assert detector.finish() == []


def test_reused_detector_emits_what_a_fresh_one_emits() -> None:
    detector = StreamDetector()
    for _ in range(3):
        events = [*detector.feed('{"name": "f", "arguments": {}}'), *detector.finish()]
        assert events == run(['{"name": "f", "arguments": {}}'])
        detector.reset()


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("<tool_call>{bad}</tool_call>", "{bad}"),
        ("<|tool_call>call:f{x:1<tool_call|>", "call:f{x:1"),
        ("<tools>[1, 2]</tools>", "[1, 2]"),
        ("[TOOL_CALLS][1]", "[1]"),
    ],
)
def test_rejected_content_strips_the_format_markers(raw: str, shown: str) -> None:
    events = run([raw])
    assert isinstance(events[0], Rejected)
    assert events[0].content == shown
    assert events[0].raw == raw


def test_block_longer_than_max_block_is_rejected_and_printing_resumes() -> None:
    text = "<tool_call>" + "x" * 100 + "</tool_call> after"
    whole = run([text], max_block=50)
    assert whole[0] == Rejected(
        text[:50], "x" * 39, "glm47", "too_long"
    )  # a name with no newline: 4.7's
    assert whole[1:] == [Text(text[50:])]
    for label, chunks in chunkings(text, randoms=30):
        assert run(chunks, max_block=50) == whole, label


def test_block_that_closes_exactly_at_max_block_is_accepted() -> None:
    assert isinstance(run([CALL], max_block=len(CALL))[0], ToolCall)
    assert run([CALL], max_block=len(CALL) - 1)[0].reason == "too_long"  # type: ignore[union-attr]


def test_state_machine_moves_only_along_the_transition_table() -> None:
    detector = StreamDetector()
    seen = [detector.state.fsm]
    for ch in f"hi <tool{CALL} <x":
        detector.feed(ch)
        seen.append(detector.state.fsm)
    for before, after in itertools.pairwise(seen):
        assert before == after or after in TRANSITIONS[before].values()
    assert set(seen) == set(FSM)


@pytest.mark.parametrize(
    ("chunks", "moves"),
    [
        (["plain"], ()),
        (["a <tool"], ("prefix",)),
        (["a <tool", "s are"], ("flush",)),
        (["a <tool", "_call>{"], ("open",)),
        (["a " + CALL + " b"], ("open", "close")),
        ([CALL + " <think"], ("open", "close", "prefix")),
        (["<tool_call>{", '"name": "f"'], ()),
        (['{"answer": 42'], ("open", "release")),
        (["<tool_call>{" + "x" * 80], ("open", "too_long")),
        (["a <tool", "FINISH"], ("flush",)),
        (["<tool_call>{", "FINISH"], ("close",)),
    ],
)
def test_state_names_the_moves_the_last_step_made(
    chunks: list[str], moves: tuple[str, ...]
) -> None:
    """The triggers of the state changes of the last feed() or finish(), in order:
    what the step debugger shows as the transition taken (one of several the table allows)."""
    detector = StreamDetector(max_block=64)
    for chunk in chunks:
        if chunk == "FINISH":
            detector.finish()
        else:
            detector.feed(chunk)
    assert detector.state.moves == moves


def test_state_shows_the_block_being_read() -> None:
    detector = StreamDetector()
    detector.feed('pre <tool_call>{"name": "f"')
    state = detector.state
    assert (state.fsm, state.block_format, state.block) == (
        FSM.IN_BLOCK,
        "hermes",
        '<tool_call>{"name": "f"',
    )
    detector.feed(', "arguments": {}}</tool_')
    assert state.block == '<tool_call>{"name": "f"'  # an old snapshot does not change
    assert detector.state.block.endswith("</tool_")


@pytest.mark.parametrize(
    ("model", "fmt"),
    [
        ("gemma-4-27b-it", "gemma4"),
        ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
        ("mistral-small-24b", "mistral"),
        ("Meta-Llama-3.1-8B-Instruct", "python_tag"),
        ("SmolLM2-135M-Instruct", None),
    ],
)
def test_format_for_model_uses_the_seed_table(model: str, fmt: str | None) -> None:
    assert format_for_model(model) == fmt


def test_unknown_seed_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        StreamDetector(format="nope")
