"""Golden expectations: bless what a detector emits now, review what changed since.

A recording's expectation (ARCHITECTURE.md §3) is what the user must be shown: the
text, the calls with parsed arguments, and the reasoning. ``expected`` (the
oracle) compares every replay against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcr.corpus import find_recordings, read_recording, write_expectation
from tcr.detector.loader import DetectorSpec, Factory, resolve_detector
from tcr.errors import TcrError
from tcr.expectation import expectation_of
from tcr.judge import Judge
from tcr.stream import decode

from .expect_diff import expectation_diff

__all__ = ["Change", "bless", "changes", "expectation_of", "render_diff"]


@dataclass(frozen=True, slots=True)
class Change:
    """A recording whose stored expectation differs from what the detector emits now."""

    path: Path
    stored: dict[str, Any] | None
    current: dict[str, Any]


def _current(path: Path, factory: Factory, tools: Sequence[str] | None) -> dict[str, Any]:
    recording = read_recording(path)
    text = decode(recording).text
    declared = tools if tools is not None else recording.tools
    # The request's tools go to a factory that takes them: the reference then types
    # untyped values by their schemas, and the expectation holds them typed.
    trace = Judge(factory, text, tools=declared, tool_specs=recording.tool_specs).whole
    if trace.crash is not None:
        raise TcrError(f"{path}: the detector raised {trace.crash.error}: nothing to bless")
    return expectation_of(trace.events).to_map()


def bless(
    paths: Iterable[str | Path],
    *,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
) -> list[Change]:
    """Store the detector's current result as each recording's expectation.

    ``dialects``/``empty_tools``/``special_tokens``: the claim, as ``tcr.replay.run`` takes
    it (a factory that takes them, such as the reference, is restricted by them).
    """
    factory = resolve_detector(
        detector, dialects=dialects, empty_tools=empty_tools, special_tokens=special_tokens
    ).factory
    blessed = []
    for path in find_recordings(list(paths)):
        current = _current(path, factory, tools)
        stored = read_recording(path).expect
        write_expectation(path, current)
        blessed.append(Change(path, stored, current))
    return blessed


def changes(
    paths: Iterable[str | Path],
    *,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
) -> list[Change]:
    """Recordings whose stored expectation is missing or differs from the current result."""
    factory = resolve_detector(
        detector, dialects=dialects, empty_tools=empty_tools, special_tokens=special_tokens
    ).factory
    found = []
    for path in find_recordings(list(paths)):
        current = _current(path, factory, tools)
        stored = read_recording(path).expect
        if stored != current:
            found.append(Change(path, stored, current))
    return found


def render_diff(change: Change) -> str:
    """What changed from the stored to the current expectation: a word-level diff of the
    text and reasoning, a structural one of the calls (``expect_diff``)."""
    return "\n".join(expectation_diff(change.stored, change.current))
