"""Every dialect: a realistic message streamed under every chunking yields exactly the expected events."""

from __future__ import annotations

import json

import pytest
from helpers import chunkings, run
from messages import CASES

from tcr.detector import Reasoning, Text, ToolCall
from tcr.dialects import BY_ID, Kind


def shape(events: list[object]) -> list[object]:
    """Compare on meaning: Text by text, calls by name and parsed arguments, reasoning by text."""
    out: list[object] = []
    for ev in events:
        if isinstance(ev, str):
            out.append(ev)
        elif isinstance(ev, Text):
            out.append(ev.text)
        elif isinstance(ev, ToolCall):
            out.append(("call", ev.name, json.loads(ev.arguments)))
        elif isinstance(ev, Reasoning):
            out.append(("reasoning", ev.text))
        else:
            out.append(ev)
    return out


@pytest.mark.parametrize("case", CASES)
@pytest.mark.slow
def test_realistic_message_yields_expected_events_under_every_chunking(case: str) -> None:
    text, expected = CASES[case]
    want = shape(expected)
    whole = run([text])
    assert shape(whole) == want
    for label, chunks in chunkings(text):
        assert run(chunks) == whole, f"{case}: {label}"


@pytest.mark.parametrize("case", CASES)
def test_raw_spans_concatenate_to_the_input(case: str) -> None:
    text, _ = CASES[case]
    events = run(list(text))
    assert "".join(ev.raw or "" for ev in events) == text


@pytest.mark.parametrize(
    "case", [c for c in CASES if BY_ID[c.split("/")[0]].kind != Kind.REASONING]
)
def test_call_format_is_learned(case: str) -> None:
    from tcr.detector.core import StreamDetector

    text, _ = CASES[case]
    detector = StreamDetector()
    for ch in text:
        detector.feed(ch)
    detector.finish()
    assert detector.format == case.split("/")[0]
