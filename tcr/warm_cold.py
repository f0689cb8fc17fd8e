"""Warm equals cold: a reused or format-seeded detector emits what a fresh one emits.

This oracle judges a detector factory, not a trace (ARCHITECTURE.md §7.2): it runs one
message through a fresh detector, then through one reused after ``reset()`` and
one seeded with the format the fresh one identified, and reports for each the first
event where it departs from the fresh run. A part that cannot run (no ``reset()``,
no format to seed with) is skipped with its reason, as ``check_trace`` skips checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tcr._verdict import Check, Verdict, Violation, agrees, first_difference, violation
from tcr.detector.events import Detector
from tcr.detector.formats import FORMATS
from tcr.detector.loader import Factory, accepts_keyword, make_detector
from tcr.errors import FactoryError
from tcr.rechunk import joined
from tcr.time_limit import interrupted_by_user, message_time_limit
from tcr.trace import Placed, Trace, describe_error, merged_events, run_trace, stream_steps

__all__ = ["Factory", "check_warm_cold", "warm_cold_verdict"]


def check_warm_cold(
    factory: Factory, chunks: Sequence[str], *, tools: Sequence[str] | None = None
) -> list[Violation]:
    """A reused (``reset()``) and a format-seeded detector emit what a fresh one emits."""
    return list(warm_cold_verdict(factory, chunks, tools=tools).violations)


def warm_cold_verdict(
    factory: Factory,
    chunks: Sequence[str],
    *,
    tools: Sequence[str] | None = None,
    timeout: float | None = None,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    fresh_run: tuple[Detector, Trace] | None = None,
    streamed: bool = False,
) -> Verdict:
    """``check_warm_cold`` with the reasons for parts it could not run.

    ``skipped`` holds ``"warm_cold"`` when nothing could run, else
    ``"warm_cold.reset"`` or ``"warm_cold.seed"`` for the part that could not.
    A factory that fails to make the fresh or the reused detector raises
    ``FactoryError`` (``tcr.detector.loader.make_detector``). ``timeout`` limits
    each run of the message (``tcr.time_limit``); over it, a run is a finding.
    ``fresh_run``: a fresh detector of the factory already run over ``chunks``, and
    its trace (a judge's run of the whole message), so that it is not run again.
    ``streamed``: hold no run, only the fresh run's merged events, and judge it again
    held only when a part does not agree (``_streamed``); the verdict is the same.
    """
    if streamed and fresh_run is None:
        passed = _streamed(factory, chunks, tools, timeout, tool_specs)
        if passed is not None:
            return passed
    if fresh_run is None:
        fresh = make_detector(factory, tools, tool_specs=tool_specs)
        cold = run_trace(fresh, chunks, states=False, timeout=timeout)
    else:
        fresh, cold = fresh_run
    if cold.crash is not None:
        return Verdict((), (), {Check.WARM_COLD: "a fresh detector crashed (see the crash check)"})
    reference = cold.merged()
    found: list[Violation] = []
    skipped: dict[str, str] = {}

    reused = make_detector(factory, tools, tool_specs=tool_specs)
    reset = getattr(reused, "reset", None)
    if callable(reset):
        found += _reset_part(reused, reset, cold, reference, timeout)
    else:
        skipped["warm_cold.reset"] = "detector has no reset()"

    if _seedable(fresh, factory, skipped):
        learned = getattr(fresh, "format", None)
        found += _seed_part(factory, tools, tool_specs, learned, cold, reference, timeout)
    return _verdict(found, skipped)


def _seedable(fresh: Detector, factory: Factory, skipped: dict[str, str]) -> bool:
    """Whether a detector can be seeded with the format ``fresh`` learned; if not, why
    goes into ``skipped``."""
    learned = getattr(fresh, "format", None)
    if not hasattr(fresh, "format"):
        skipped["warm_cold.seed"] = "detector exposes no format"
    elif learned is None:
        skipped["warm_cold.seed"] = "no format identified in this message"
    elif not accepts_keyword(factory, "format"):
        skipped["warm_cold.seed"] = "the factory takes no format keyword"
    return "warm_cold.seed" not in skipped


def _verdict(found: list[Violation], skipped: dict[str, str]) -> Verdict:
    if len(skipped) == 2:
        reasons = "; ".join(f"{key.split('.')[1]}: {why}" for key, why in skipped.items())
        return Verdict((), (), {Check.WARM_COLD: reasons})
    return Verdict(tuple(found), (Check.WARM_COLD,), skipped)


def _streamed(
    factory: Factory,
    chunks: Sequence[str],
    tools: Sequence[str] | None,
    timeout: float | None,
    tool_specs: Sequence[Mapping[str, Any]] | None,
) -> Verdict | None:
    """The verdict when every part agrees with the fresh run, held as its merged events
    only (a held run of a recording's content is a ``Text`` per chunk); else ``None``:
    the held parts then say what differs. The same detectors are made, in order."""
    fresh = make_detector(factory, tools, tool_specs=tool_specs)
    reference = merged_events(fresh, chunks, timeout=timeout)
    if reference is None:
        return None
    skipped: dict[str, str] = {}
    reused = make_detector(factory, tools, tool_specs=tool_specs)
    reset = getattr(reused, "reset", None)
    if callable(reset):
        try:
            for _ in stream_steps(reused, chunks, timeout=timeout):  # a finished message
                pass
            _interrupt(reused, reset, chunks, joined(chunks, ""), timeout)
        except BaseException as error:  # the held part says what it raised
            if interrupted_by_user(error):  # only Ctrl-C stops tcr
                raise
            return None
        if not agrees(reused, chunks, reference, timeout):
            return None
    else:
        skipped["warm_cold.reset"] = "detector has no reset()"
    if _seedable(fresh, factory, skipped):
        learned = getattr(fresh, "format", None)
        try:
            seeded = make_detector(factory, tools, tool_specs=tool_specs, format=learned)
        except FactoryError:
            return None
        if not agrees(seeded, chunks, reference, timeout):
            return None
    return _verdict([], skipped)


def _reset_part(
    reused: Detector,
    reset: Callable[[], object],
    cold: Trace,
    reference: Sequence[Placed],
    timeout: float | None,
) -> list[Violation]:
    # finish() already empties a correct detector's buffers, so only a message cut
    # short without finish() shows a reset() that forgets one: cut once inside the
    # first block and once inside its opening marker, where the buffers are full.
    cuts = _interruptions(cold.input)
    label = (
        "after reset(), a detector reused after a finished message and messages cut "
        f"short at offsets {', '.join(str(c) for c in cuts)}"
    )
    try:
        run_trace(reused, cold.chunks, states=False, timeout=timeout)
        _interrupt(reused, reset, cold.chunks, cold.input, timeout)
    except BaseException as error:  # SystemExit too: a detector failure is a finding
        if interrupted_by_user(error):  # only Ctrl-C stops tcr
            raise
        message = f"a reused detector raised {describe_error(error)} before its last message"
        kind = f"reused: raised {type(error).__name__}"
        return [violation(Check.WARM_COLD, message, cold.input, None, None, kind=kind)]
    warm = run_trace(reused, cold.chunks, states=False, timeout=timeout)
    return _compare(warm, reference, label, "reused")


def _seed_part(
    factory: Factory,
    tools: Sequence[str] | None,
    tool_specs: Sequence[Mapping[str, Any]] | None,
    learned: object,
    cold: Trace,
    reference: Sequence[Placed],
    timeout: float | None,
) -> list[Violation]:
    label = f"a detector seeded with format={learned!r}"
    try:
        seeded = make_detector(factory, tools, tool_specs=tool_specs, format=learned)
    except FactoryError as error:  # the factory takes format= but not this one: a finding
        message = f"{label} could not be made: {error}"
        return [violation(Check.WARM_COLD, message, cold.input, 0, 0, kind="seeded: not made")]
    warm = run_trace(seeded, cold.chunks, states=False, timeout=timeout)
    return _compare(warm, reference, label, "seeded")


def _compare(warm: Trace, reference: Sequence[Placed], label: str, part: str) -> list[Violation]:
    """The first difference from the fresh run; its kind says which part (reused, seeded)."""
    if warm.crash is not None:
        message = f"{label} raised {warm.crash.error} (a fresh one does not)"
        kind = f"{part}: raised {warm.crash.error.partition(':')[0]}"
        return [
            violation(
                Check.WARM_COLD, message, warm.input, warm.crash.index, warm.crash.offset, kind=kind
            )
        ]
    mine = warm.merged()
    found = first_difference(warm, mine, reference, Check.WARM_COLD, "a fresh detector")
    if found is None:
        return []
    return [replace(found, message=f"{label}: {found.message}", kind=f"{part}: {found.kind}")]


def _interrupt(
    reused: Detector,
    reset: Callable[[], object],
    chunks: Sequence[str],
    text: str,
    timeout: float | None,
) -> None:
    """Feed the messages cut short (``_interruptions``), each after ``reset()``, then reset."""
    cuts = _interruptions(text)
    with message_time_limit(timeout, len(chunks) * len(cuts)):  # chunks fed, at most
        for cut in cuts:
            reset()
            for chunk in _truncate(chunks, cut):
                reused.feed(chunk)
        reset()


def _interruptions(text: str) -> list[int]:
    """Where to cut a message short: inside its first block, then inside its marker."""
    first = len(text) - len(text.lstrip())  # bare_json opens only here (policy 3)
    hits: list[tuple[int, str]] = []
    for fmt in FORMATS:
        for marker in fmt.opens:
            at = text.find(marker) if fmt.anywhere else first
            if at >= 0 and text.startswith(marker, at):
                hits.append((at, marker))
    if not hits:
        return [len(text)]
    start, marker = min(hits)
    return [min(start + len(marker) + 1, len(text)), start + 1]


def _truncate(chunks: Sequence[str], cut: int) -> Iterator[str]:
    length = 0
    for chunk in chunks:
        if length >= cut:
            break
        yield chunk[: cut - length]
        length += len(chunk)
