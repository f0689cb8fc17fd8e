"""The broken detectors of the newer families' shapes (issue 13): each is the reference with
one bug, which bites where its docstring says and nowhere else."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from helpers import run

from tcr.detector import Event, Rejected, Text, ToolCall
from tcr.detector.broken import BROKEN
from tcr.detector.events import merge_text
from tcr.dialects._deepseek import BEGIN, END, OPEN, SEP
from tcr.dialects.kimi_k2 import OPEN as KIMI_OPEN

MISTRAL_V11 = '[TOOL_CALLS]get_weather{"city": "Paris"}'
KIMI = (
    f"{KIMI_OPEN}<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{{}}"
    "<|tool_call_end|><|tool_calls_section_end|>"
)
DEEPSEEK = f'{OPEN}{BEGIN}function{SEP}f\n```json\n{{"a": 1}}\n```{END}<｜tool▁calls▁end｜>'


def broken(name: str, chunks: Sequence[str], **kwargs: object) -> list[Event]:
    detector = BROKEN[name](**kwargs)
    events: list[Event] = []
    for chunk in chunks:
        events += detector.feed(chunk)
    return merge_text(events + detector.finish())


def splits(text: str) -> list[list[str]]:
    return [[text[:k], text[k:]] for k in range(1, len(text))]


# --- name_at_chunk_edge: Mistral v11's NAME{ read where the first chunk ends ------------


def test_a_name_split_across_chunks_is_cut_short() -> None:
    chunks = ["Hi [TOOL_CALLS]get", '_weather{"city": "Paris"}', " ok"]
    assert broken("name_at_chunk_edge", chunks) == [
        Text("Hi "),
        ToolCall("get", '{"city": "Paris"}', MISTRAL_V11, "mistral_v11"),
        Text(" ok"),
    ]
    assert run(chunks)[1] == ToolCall(
        "get_weather", '{"city": "Paris"}', MISTRAL_V11, "mistral_v11"
    )


def test_a_name_whole_before_the_first_boundary_is_right() -> None:
    text = f"Hi {MISTRAL_V11} ok"
    for chunks in [[text], ["Hi [TOOL_CALLS]", "get_weather{", '"city": "Paris"} ok']]:
        assert broken("name_at_chunk_edge", chunks) == run(chunks)


def test_only_the_call_whose_name_was_split_is_renamed() -> None:
    chunks = ["[TOOL_CALLS]get_we", 'ather{"city": "Paris"}[TOOL_CALLS]add{"a": 1}']
    calls = [e.name for e in broken("name_at_chunk_edge", chunks) if isinstance(e, ToolCall)]
    assert calls == ["get_we", "add"]


def test_a_rejected_block_leaves_no_name_for_the_next() -> None:
    chunks = ["[TOOL_CALLS]bad$", '{"a": 1}[TOOL_CALLS]add{"a": 1}']
    assert broken("name_at_chunk_edge", chunks) == run(chunks)
    assert isinstance(run(chunks)[0], Rejected)


def test_other_dialects_names_are_untouched() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    for chunks in splits(text):
        assert broken("name_at_chunk_edge", chunks) == run(chunks)


# --- holds_special_prefix: a held start of a long special token goes nowhere -------------


def test_a_held_start_is_lost_when_the_text_goes_on_otherwise() -> None:
    assert broken("holds_special_prefix", ["Since 3 <", " 5, yes."]) == [Text("Since 3  5, yes.")]
    assert run(["Since 3 <", " 5, yes."]) == [Text("Since 3 < 5, yes.")]


def test_a_held_start_is_lost_at_the_end() -> None:
    assert broken("holds_special_prefix", ["Done <|tool_calls"]) == [Text("Done ")]


def test_a_held_start_that_becomes_the_token_opens_the_block() -> None:
    for chunks in splits(KIMI):
        assert broken("holds_special_prefix", chunks) == run(chunks)


def test_a_held_prefix_of_a_short_marker_only_is_released() -> None:
    # "[TOOL_CALLS" is 12 characters, under LONG_TOKEN: held and shown as the reference shows it
    chunks = ["See [TOOL_CALL", "] and more"]
    assert (
        broken("holds_special_prefix", chunks) == run(chunks) == [Text("See [TOOL_CALL] and more")]
    )


# --- bytewise_partial_marker: DeepSeek's marker cut by bytes, counted in characters ------


def test_a_full_width_marker_split_past_its_first_19_bytes_leaks() -> None:
    leaks = []
    for k in range(1, len(OPEN)):
        chunks = ["Sure. " + DEEPSEEK[:k], DEEPSEEK[k:]]
        if broken("bytewise_partial_marker", chunks) != run(chunks):
            leaks.append(k)
    # <｜tool▁calls▁ is 13 characters in 19 bytes; every longer prefix is cut off by the check
    assert len(OPEN[:13].encode()) == 19 < len(OPEN[:14].encode())
    assert leaks == list(range(14, len(OPEN)))
    shown = broken("bytewise_partial_marker", ["Sure. " + OPEN[:18], DEEPSEEK[18:]])[0]
    assert isinstance(shown, Text) and shown.text.startswith("Sure. " + OPEN[:18])


@pytest.mark.parametrize("text", [KIMI, f"Hi {MISTRAL_V11}", "plain <b>text</b> [TOOL"])
def test_ascii_markers_split_anywhere_are_the_references(text: str) -> None:
    for chunks in splits(text):
        assert broken("bytewise_partial_marker", chunks) == run(chunks)


@pytest.mark.parametrize(
    "name", ["name_at_chunk_edge", "holds_special_prefix", "bytewise_partial_marker"]
)
def test_each_is_restricted_by_a_claim_as_the_reference_is(name: str) -> None:
    text = f"Hi {MISTRAL_V11} and {KIMI}"
    assert broken(name, [text], dialects=["hermes"]) == run([text], dialects=["hermes"])
    assert BROKEN[name](dialects=["kimi_k2"]).tcr_claim.dialects == frozenset({"kimi_k2"})
