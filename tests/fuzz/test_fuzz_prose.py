"""Near-miss prose: every registered dialect's markup cut short or altered, which must stay text.

The near misses are read off the ``Dialect`` records (``tcr.fuzz.prose.near_misses``),
so a family added to the registry contributes its own without a hand-written list.
"""

from __future__ import annotations

import dataclasses

from helpers import chunkings, run

from tcr.detector import Text
from tcr.dialects import DIALECTS, Dialect
from tcr.fuzz.prose import NEAR_MISSES, near_misses


def _opening_on(marker: str) -> Dialect:
    return next(d for d in DIALECTS if marker in d.opens)


def test_every_registered_dialect_contributes_near_misses() -> None:
    none = [d.id for d in DIALECTS if not near_misses(d)]
    unlisted = {d.id: set(near_misses(d)) - set(NEAR_MISSES) for d in DIALECTS}
    assert not none, f"dialects contributing no near miss: {none}"
    assert not any(unlisted.values()), {k: v for k, v in unlisted.items() if v}


def test_no_near_miss_holds_an_opening_marker_of_two_characters_or_more() -> None:
    openers = {m for d in DIALECTS for m in d.opens if len(m) > 1}
    assert not [(nm, m) for nm in NEAR_MISSES for m in openers if m in nm]


def test_opening_markers_cut_short_are_near_misses() -> None:
    assert "[TOOL_CALLS" in near_misses(_opening_on("[TOOL_CALLS]"))
    assert "functools" in near_misses(_opening_on("functools["))
    assert "<tool_call" in near_misses(_opening_on("<tool_call>"))


def test_deepseek_markers_with_ascii_bars_are_near_misses() -> None:
    deepseek = _opening_on("<｜tool▁calls▁begin｜>")
    assert "<|tool_calls_begin|>" in near_misses(deepseek)


def test_ascii_markers_with_full_width_bars_are_near_misses() -> None:
    assert "<｜python▁tag｜>" in near_misses(_opening_on("<|python_tag|>"))


def test_a_new_dialect_gets_near_misses_from_its_record_alone() -> None:
    made_up = dataclasses.replace(
        DIALECTS[0], id="made_up", opens=("<|made_up_call|>",), closes=("<|made_up_end|>",)
    )
    own = near_misses(made_up)
    assert {"<|made_up_call|", "<|Made_up_call|>", "<|made_up_end|>"} <= set(own)


def chunkings_not_shown_as_text(near_miss: str) -> list[str]:
    """The chunkings (whole, per character, every split) under which the reference shows
    ``near_miss`` mid answer as anything but the text it is."""
    text = f"Hi {near_miss} ok."
    return [label for label, chunks in chunkings(text, randoms=0) if run(chunks) != [Text(text)]]


def test_a_near_miss_mid_answer_is_text_to_the_reference_under_every_chunking() -> None:
    assert "<tool_call" in NEAR_MISSES
    assert chunkings_not_shown_as_text("<tool_call") == []


def test_every_near_miss_mid_answer_is_text_to_the_reference_under_every_chunking() -> None:
    failures = {nm: labels for nm in NEAR_MISSES if (labels := chunkings_not_shown_as_text(nm))}
    assert not failures, f"{len(failures)} of {len(NEAR_MISSES)} near misses: {failures}"
