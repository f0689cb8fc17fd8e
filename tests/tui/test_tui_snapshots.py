"""How the main screen looks at a failing step, pinned as SVG (pytest-textual-snapshot).

Update after a deliberate change with ``pytest tests/tui --snapshot-update`` and look
at the new SVGs; they depend on the pinned Textual version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tui_helpers import DROPS_PENDING, END_IN_PREFIX, PER_CHUNK_MARKERS, SPLIT_MARKER

from tcr.tui import DebuggerApp, make_app

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


async def at_first_violation(pilot: Any) -> None:
    app: DebuggerApp = pilot.app
    await app.wait_for_verdict(timeout=60)
    await pilot.press("v")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
def test_split_marker_leaking_through_a_per_chunk_matcher(
    snap_compare: Callable[..., bool], size: tuple[int, int]
) -> None:
    """per_chunk_markers on the llama-server stream: the first violation is the step that
    shows the marker's "<" as text."""
    app = make_app(SPLIT_MARKER, detector=PER_CHUNK_MARKERS)
    assert snap_compare(app, terminal_size=size, run_before=at_first_violation)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
def test_held_prefix_lost_at_finish(
    snap_compare: Callable[..., bool], size: tuple[int, int]
) -> None:
    """drops_pending_at_finish: the finish() step where "<tool_c" is never emitted."""
    app = make_app(END_IN_PREFIX, detector=DROPS_PENDING)
    assert snap_compare(app, terminal_size=size, run_before=at_first_violation)


@pytest.mark.slow
def test_a_passing_run_mid_block(snap_compare: Callable[..., bool]) -> None:
    """The reference detector inside the call block, with its buffers."""

    async def mid_block(pilot: Any) -> None:
        await pilot.app.wait_for_verdict(timeout=60)
        await pilot.press(*"nnnnnnnnnnnn")
        await pilot.pause()

    assert snap_compare(make_app(SPLIT_MARKER), terminal_size=(80, 24), run_before=mid_block)
