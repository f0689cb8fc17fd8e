"""Whatever a harness prints, the client reads events or raises ``DetectorProcessError``
(a crash finding at its chunk), never anything else: the stdio surface's property test."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tcr.detector import Event
from tcr.stdio import DetectorProcessError
from tcr.stdio.client import ProcessDetector, _parse

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
event_like = st.dictionaries(
    st.sampled_from(["type", "text", "name", "arguments", "raw", "format", "content", "reason"]),
    st.sampled_from(["text", "tool_call", "reasoning", "rejected"]) | json_values,
    max_size=8,
)
answers = st.one_of(
    st.binary(max_size=200),
    st.builds(lambda v: json.dumps(v).encode(), json_values),
    st.builds(lambda es: json.dumps({"events": es}).encode(), st.lists(event_like, max_size=4)),
)


class _Owner:
    """What a ``ProcessDetector`` asks of its factory when an answer is garbage."""

    def __init__(self) -> None:
        self.failed = 0

    def _fail(self) -> None:
        self.failed += 1


def read(line: bytes) -> list[Event]:
    detector = ProcessDetector(_Owner())  # type: ignore[arg-type]
    response: dict[str, Any] = _parse(line)
    return detector._events(response)


@given(answers)
def test_any_answer_is_events_or_a_detector_process_error(line: bytes) -> None:
    try:
        events = read(line)
    except DetectorProcessError:
        return
    assert isinstance(events, list)
