"""The central property: any re-chunking of any text gives the same events, and every byte is accounted for."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.detector import HOLDBACK_BOUND, Event
from tcr.detector.core import StreamDetector
from tcr.detector.events import merge_text as merge
from tcr.detector.formats import FORMATS, MARKERS

PIECES = sorted(
    {*MARKERS}
    | {m[: len(m) // 2] for f in FORMATS for m in f.opens}
    | {'{"name": "f", "arguments": {"a": 1}}', '"', "\\", "}", "{", "]", "[", ":", ",", ";"}
    | {
        '"name"',
        '"arguments"',
        '"x"',
        "call:f{",
        '<|"|>',
        "[ARGS]",
        "<function=f>",
        "\n",
        " ",
        "é😀漢",
    }
    | {"Hello ", "<tool_result>", "<tools do not", "```js\n"}
)

texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=24).map("".join)


def feed_all(detector: StreamDetector, chunks: list[str]) -> list[Event]:
    events: list[Event] = []
    received = 0
    emitted = 0
    for chunk in chunks:
        new = detector.feed(chunk)
        received += len(chunk)
        emitted += sum(len(e.raw or "") for e in new)
        events += new
        assert emitted <= received
        assert len(detector.state.pending) <= HOLDBACK_BOUND
    return events + detector.finish()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True) if b > a]


@settings(max_examples=400, deadline=None)
@given(
    text=texts,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    tools=st.sampled_from([None, [], ["f"]]),
    max_block=st.sampled_from([1 << 20, 40]),
)
@pytest.mark.slow
def test_any_chunking_gives_the_events_of_the_whole_text(
    text: str, cuts: list[int], tools: list[str] | None, max_block: int
) -> None:
    whole = merge(feed_all(StreamDetector(tools=tools, max_block=max_block), [text]))
    chunked = merge(feed_all(StreamDetector(tools=tools, max_block=max_block), split(text, cuts)))
    assert chunked == whole
    assert "".join(e.raw or "" for e in whole) == text


@settings(max_examples=200, deadline=None)
@given(text=texts)
@pytest.mark.slow
def test_one_character_at_a_time_gives_the_events_of_the_whole_text(text: str) -> None:
    assert merge(feed_all(StreamDetector(), list(text))) == merge(
        feed_all(StreamDetector(), [text])
    )
