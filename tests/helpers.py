"""Shared helpers: run a detector over a chunking and every chunking we care about."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import strategies as st

from tcr.detector import Event, Rejected, Text, ToolCall
from tcr.detector.core import StreamDetector
from tcr.detector.events import merge_text


def slow(*values: object) -> object:
    """A parameter set in the whole suite only: the fast loop runs its siblings."""
    return pytest.param(*values, marks=pytest.mark.slow)


def run(chunks: Sequence[str], **kwargs: object) -> list[Event]:
    """Feed the chunks, finish, and merge adjacent Text (what chunk invariance compares)."""
    detector = StreamDetector(**kwargs)  # type: ignore[arg-type]
    events: list[Event] = []
    for chunk in chunks:
        events += detector.feed(chunk)
    events += detector.finish()
    return merge_text(events)


def chunkings(text: str, *, randoms: int = 200, seed: int = 0) -> Iterator[tuple[str, list[str]]]:
    """Whole, one character at a time, every 2-way split, and seeded random chunkings."""
    yield "whole", [text]
    yield "char", list(text)
    for k in range(1, len(text)):
        yield f"split@{k}", [text[:k], text[k:]]
    rng = random.Random(seed)
    for r in range(randoms):
        chunks, i = [], 0
        while i < len(text):
            n = rng.randint(1, 8)
            chunks.append(text[i : i + n])
            i += n
        yield f"random#{r}", chunks


def calls(events: Sequence[object]) -> list[tuple[str, object]]:
    """The calls among ``events``: each name with its parsed arguments."""
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]


def same_under_every_chunking(text: str, *, randoms: int = 20, **kwargs: object) -> list[Event]:
    """The events of ``text`` read whole, after checking that every chunking agrees."""
    whole = run([text], **kwargs)
    for label, chunks in chunkings(text, randoms=randoms):
        assert run(chunks, **kwargs) == whole, label
    return whole


def shown(events: Sequence[object]) -> str:
    """What a client is shown: the text, and the content of rejected blocks."""
    return "".join(
        e.text if isinstance(e, Text) else e.content
        for e in events
        if isinstance(e, Text | Rejected)
    )


def steps(detector: StreamDetector, chunks: Sequence[str]) -> list[object]:
    """What a detector shows after every chunk: the events, FSM state, held text, moves and
    block format, then what ``finish`` gives: two runs that agree here agree for the TUI."""
    seen: list[object] = []
    for chunk in chunks:
        events = detector.feed(chunk)
        state = detector.state
        seen.append((events, state.fsm, state.pending, state.moves, state.block_format))
    seen.append((detector.finish(), detector.state.moves))
    return seen


@st.composite
def cut(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> list[str]:
    """A text of ``texts`` cut at any set of points."""
    text = draw(texts)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=len(text))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def traced_peak(make: Callable[[], object]) -> int:
    """The most memory (bytes) Python held at once while ``make()`` ran, beyond before."""
    gc.collect()
    tracemalloc.start()
    try:
        make()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
