"""Seed-OSS's ``<seed:think>`` reasoning: read like ``<think>``, and calls inside it stay text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector

CALL = (
    "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
    "</function>\n</seed:tool_call>"
)
REFLECT = (
    "<seed:cot_budget_reflect>I have used 31 tokens, and there are 481 tokens remaining for "
    "use.</seed:cot_budget_reflect>"
)
MESSAGE = f"<seed:think>I'll write {CALL} next.{REFLECT}</seed:think>\nChecking.\n{CALL}"


def run(chunks: list[str], dialects: list[str] | None = None) -> list[Event]:
    detector = StreamDetector(dialects=dialects)
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
    return shown, calls, [e.text for e in events if isinstance(e, Reasoning)]


def test_reasoning_then_a_call() -> None:
    shown, calls, reasoning = meaning(run([MESSAGE]))
    assert shown == "\nChecking.\n"
    assert calls == [("get_weather", {"city": "Paris"})]
    assert reasoning == [f"I'll write {CALL} next.{REFLECT}"]


def test_the_reasoning_carries_its_own_dialect() -> None:
    (event,) = [e for e in run([MESSAGE]) if isinstance(e, Reasoning)]
    assert event.format == "seed_think"
    assert event.raw.startswith("<seed:think>") and event.raw.endswith("</seed:think>")


def test_every_split_point_and_every_character_give_the_whole_result() -> None:
    whole = meaning(run([MESSAGE]))
    assert meaning(run(list(MESSAGE))) == whole
    for cut in range(1, len(MESSAGE)):
        assert meaning(run([MESSAGE[:cut], MESSAGE[cut:]])) == whole, cut


def test_think_s_closing_tag_does_not_end_it_nor_its_closing_tag_think() -> None:
    text = "<seed:think>a </think> b</seed:think><think>c </seed:think> d</think>"
    assert meaning(run(list(text)))[2] == ["a </think> b", "c </seed:think> d"]


def test_reasoning_left_open_at_the_end_is_still_reasoning() -> None:
    assert meaning(run(["<seed:think>still thinking"]))[2] == ["still thinking"]


@pytest.mark.parametrize("claim", [["seed_oss"], ["seed_oss", "think"]])
def test_a_detector_that_leaves_seed_think_out_shows_it_as_text(claim: list[str]) -> None:
    text = "<seed:think>short</seed:think>ok"
    assert meaning(run(list(text), claim)) == (text, [], [])
