"""The step debugger's model, without Textual: a session over one recording.

A :class:`Session` holds what does not change while debugging (the content, the
detector factory, the rechunking strategies to cycle through) and one
:class:`~tcr.tui.run.Run` per strategy, traced incrementally. The oracles judge
a finished run (``Session.analyse_trace``, pure, safe to call in a worker
thread); ``Run.apply`` attaches the verdict so each violation flags the step it
names. Navigation lives in :mod:`tcr.tui.navigation`, the reference for the
diff in :mod:`tcr.tui.diff`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcr.detector.events import Detector
from tcr.detector.loader import DetectorSpec, Factory, make_detector, resolve_detector
from tcr.errors import TcrError
from tcr.judge import Judge
from tcr.oracle import TRACE_CHECKS, Verdict
from tcr.probes import read_spec
from tcr.time_limit import DEFAULT_TIMEOUT, check_timeout
from tcr.trace import Trace

from .diff import Reference, reference_for
from .run import Move, Run, StateView, StepView, moves_between, state_label, triggers
from .source import Source, check_strategy, chunking, load_source, source_from_chunks

__all__ = [
    "DEFAULT_STRATEGIES",
    "Move",
    "Run",
    "Session",
    "Source",
    "StateView",
    "StepView",
    "check_strategy",
    "load_source",
    "moves_between",
    "open_session",
    "source_from_chunks",
    "state_label",
    "triggers",
]

DEFAULT_STRATEGIES: tuple[str, ...] = ("original", "char")


@dataclass
class Session:
    """One source, one detector factory, strategies to cycle through and their runs."""

    source: Source
    detector: DetectorSpec
    strategies: tuple[str, ...]
    seed: int = 0
    timeout: float | None = DEFAULT_TIMEOUT  # seconds per message run: see tcr.time_limit
    current: int = 0
    _runs: dict[str, Run] = field(default_factory=dict)
    _judge: Judge | None = None
    _reference: Reference | None = None

    def new_detector(self) -> Detector:
        """A fresh detector (``FactoryError`` when the factory fails: nothing to step through)."""
        return make_detector(
            self.detector.factory, self.source.tools, tool_specs=self.source.tool_specs
        )

    @property
    def run(self) -> Run:
        """The run of the current strategy (made on first use, then kept)."""
        spec = self.strategies[self.current]
        found = self._runs.get(spec)
        if found is None:
            made = chunking(spec, self.source, self.seed, self.detector.claim)
            found = Run(self, spec, made)
            self._runs[spec] = found
        return found

    def cycle(self) -> Run:
        """Switch to the next strategy (wrapping around) and return its run."""
        self.current = (self.current + 1) % len(self.strategies)
        return self.run

    @property
    def expectation(self) -> Mapping[str, Any] | None:
        return self.source.expect

    def judge(self) -> Judge:
        """The oracles for this source (made once the whole text is read)."""
        if self._judge is None:
            self.source.load_all()
            self._judge = Judge(
                self.detector.factory,
                self.source.text,
                tools=self.source.tools,
                expectation=self.expectation,
                checks=TRACE_CHECKS,  # warm equals cold judges the factory, not a run to step
                claim=self.detector.claim,
                tool_specs=self.source.tool_specs,
                timeout=self.timeout,  # armed on the main thread only (tcr.time_limit)
            )
        return self._judge

    def whole(self) -> Trace:
        """The run of the unsplit text: the oracles' reference (made once)."""
        return self.judge().whole

    def analyse(self, run: Run) -> Verdict:
        """Every trace oracle on a run (traced to the end first)."""
        return self.analyse_trace(run.trace())

    def analyse_trace(self, trace: Trace) -> Verdict:
        """Every trace oracle, against the whole run and the expectation.

        Pure (no Textual) and reads only the finished trace: the app calls it in a
        worker thread and applies the verdict on its own thread (``Run.apply``).
        """
        return self.judge().judge_trace(trace)

    @property
    def cached_reference(self) -> Reference | None:
        """The reference once ``reference()`` has made it (never computes it)."""
        return self._reference

    def reference(self) -> Reference | None:
        """What should have been shown: the expectation's text, else the whole run."""
        if self._reference is None:
            expectation = self.judge().expectation  # restated for the detector's claim
            expect = None if expectation is None else expectation.to_map()
            self._reference = reference_for(expect, self.whole())
        return self._reference


def open_session(
    path: str | Path | None = None,
    *,
    chunks: Sequence[str] | None = None,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    rechunk: str | Sequence[str] | None = None,
    seed: int = 0,
    read_for: float | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> Session:
    """Validate everything up front (bad input raises ``TcrError``) and build a session.

    ``chunks`` replaces the recorded chunking: when they add up to the recorded
    text they become the first strategy (as ``splits:…``) and the expectation
    still applies; otherwise they are the text under test. ``read_for``: seconds
    to read the recording before returning (None: all of it); the rest is read
    as the debugger needs it. Reading goes on to the end when the first strategy
    is not ``original`` or a ``splits:`` strategy must be checked against the text.
    ``timeout``: seconds a run of the message may take, as in ``tcr replay`` (None: no
    limit); longer ends it on a timed-out crash row.
    """
    timeout = check_timeout(timeout)
    # judged with its choices (tcr.probes), read under the same limit: a hang stops the probes
    chosen, _ = read_spec(resolve_detector(detector), timeout=timeout)
    if path is None and chunks is None:
        raise TcrError("nothing to open: give a recording or chunks")
    specs = [rechunk] if isinstance(rechunk, str) else list(rechunk or ())
    specs = [check_strategy(item) for item in specs or DEFAULT_STRATEGIES]
    if path is not None:
        whole_text = chunks is not None or specs[0] != "original"
        whole_text = whole_text or any(item.startswith("splits:") for item in specs)
        source = load_source(path, tools=tools, seconds=None if whole_text else read_for)
        if chunks is not None:
            given = [c for c in chunks if c]
            if "".join(given) == source.text:
                specs.insert(0, _splits_of(given))
            else:
                source = source_from_chunks(given, label=source.label, tools=source.tools)
                specs.insert(0, "original")
    else:
        assert chunks is not None
        source = source_from_chunks(chunks, tools=tools)
    canonical: list[str] = []
    for item in specs:
        checked = check_strategy(item, source.text if source.done else None)
        if checked not in canonical:
            canonical.append(checked)
    session = Session(source, chosen, tuple(canonical), seed, timeout)
    session.run  # noqa: B018  (makes the first detector now: a factory that raises is bad input)
    return session


def _splits_of(chunks: Sequence[str]) -> str:
    offsets: list[int] = []
    position = 0
    for chunk in chunks[:-1]:
        position += len(chunk)
        offsets.append(position)
    return "splits:" + ",".join(map(str, offsets)) if offsets else "whole"
