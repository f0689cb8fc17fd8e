"""Near-miss prose: every registered dialect's markup cut short or altered, which must stay text.

The near misses are read off the ``Dialect`` records (``tcr.fuzz.prose.near_misses``),
so a family added to the registry contributes its own without a hand-written list.
"""

from __future__ import annotations

import dataclasses

import pytest
from helpers import chunkings, run

from tcr.detector import Text
from tcr.dialects import DIALECTS, Dialect
from tcr.fuzz.prose import NEAR_MISSES, near_misses


def _opening_on(marker: str) -> Dialect:
    return next(d for d in DIALECTS if marker in d.opens)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.id)
def test_every_registered_dialect_contributes_near_misses(dialect: Dialect) -> None:
    own = near_misses(dialect)
    assert own, f"{dialect.id} contributes no near miss"
    assert set(own) <= set(NEAR_MISSES)


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


@pytest.mark.parametrize("near_miss", NEAR_MISSES)
def test_a_near_miss_mid_answer_is_text_to_the_reference_under_every_chunking(
    near_miss: str,
) -> None:
    text = f"Hi {near_miss} ok."
    for label, chunks in chunkings(text, randoms=0):
        assert run(chunks) == [Text(text)], (near_miss, label)
