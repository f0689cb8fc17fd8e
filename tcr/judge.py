"""Judging chunkings of one message: the whole run, the chunked run, every oracle.

A ``Judge`` holds what is fixed for one message (the detector factory, its tools,
the expectation, the checks) and runs the whole, unsplit message once: every
chunking it then judges (``verdict``) is compared with that one run. This is the
one place that puts the oracles together; ``tcr.oracle.check_trace`` and
``tcr.warm_cold.warm_cold_verdict`` stay the layer below it.

Making a detector goes through ``tcr.detector.loader.make_detector``: a factory
that fails raises ``FactoryError``, and each caller says what that means to it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from tcr._verdict import CHECKS, TRACE_CHECKS, Check, Verdict
from tcr.claims import Claim
from tcr.detector.events import Detector
from tcr.detector.formats import HOLDBACK_BOUND, OPENER_RE, lexicon
from tcr.detector.loader import Factory, make_detector
from tcr.errors import TcrError, did_you_mean
from tcr.expectation import Expectation
from tcr.oracle import check_trace
from tcr.trace import Trace, run_trace
from tcr.warm_cold import warm_cold_verdict

__all__ = ["Judge", "checks_of"]


def checks_of(checks: Collection[str] | None) -> tuple[Check, ...]:
    """Check names as ``Check``s in report order (``None``: every check)."""
    if checks is None:
        return CHECKS
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        hint = did_you_mean(unknown[0], CHECKS)
        raise TcrError(f"unknown check {unknown[0]!r}{hint}; known: {', '.join(CHECKS)}")
    return tuple(c for c in CHECKS if c in checks)


class Judge:
    """Every requested oracle on chunkings of one message, for one detector factory."""

    def __init__(
        self,
        factory: Factory,
        text: str,
        *,
        tools: Sequence[str] | None = None,
        expectation: Expectation | Mapping[str, Any] | None = None,
        checks: Collection[str] | None = None,
        bound: int | None = None,
        timeout: float | None = None,
        claim: Claim | None = None,
    ) -> None:
        self.factory = factory
        self.text = text
        self.tools = tools
        self.expectation = Expectation.of(expectation)
        self.checks = checks_of(checks)
        self.trace_checks = tuple(c for c in self.checks if c in TRACE_CHECKS)
        # The claim's markers: no_leak looks for claimed openers only, holdback allows the
        # longest claimed one - 1 (DESIGN §5); with tools=[] meaning "text" nothing opens.
        self.claim = claim
        self.markers: re.Pattern[str] | None = OPENER_RE
        self.bound = HOLDBACK_BOUND if bound is None else bound
        if claim is not None:
            lex = lexicon(claim.dialects)
            parses = tools is None or len(tools) > 0 or claim.empty_tools != "text"
            self.markers = lex.opener_re if parses else None
            self.bound = lex.holdback_bound if bound is None else bound
        self.timeout = timeout  # seconds per message run (tcr.time_limit); None: no limit
        self._whole: Trace | None = None

    def detector(self) -> Detector:
        """A fresh detector for this message (``FactoryError`` when the factory fails)."""
        return make_detector(self.factory, self.tools)

    @property
    def whole(self) -> Trace:
        """The run of the unsplit message: the reference of every chunking (made once)."""
        if self._whole is None:
            text = self.text
            chunks = [text] if text else []
            self._whole = run_trace(self.detector(), chunks, states=False, timeout=self.timeout)
        return self._whole

    def trace(self, chunks: Sequence[str], *, states: bool = False) -> Trace:
        """One chunking through a fresh detector."""
        return run_trace(self.detector(), chunks, states=states, timeout=self.timeout)

    def verdict(self, chunks: Sequence[str], *, checks: Collection[str] | None = None) -> Verdict:
        """Every requested check on one chunking (``checks``: a subset for this call)."""
        self.whole  # noqa: B018  (the reference first: a factory that fails, fails here)
        return self.judge_trace(self.trace(chunks), checks=checks)

    def judge_trace(self, trace: Trace, *, checks: Collection[str] | None = None) -> Verdict:
        """Every requested check on a run the caller traced (the TUI traces step by step)."""
        wanted = self.checks if checks is None else checks_of(checks)
        on_trace = self.trace_checks if checks is None else [c for c in wanted if c in TRACE_CHECKS]
        verdict = check_trace(
            trace,
            whole=self.whole,
            checks=on_trace,
            expectation=self.expectation,
            bound=self.bound,
            markers=self.markers,
        )
        if Check.WARM_COLD in wanted:
            verdict = verdict + self.warm_cold(trace.chunks)
        return verdict

    def warm_cold(self, chunks: Sequence[str]) -> Verdict:
        """Warm equals cold on one chunking (it judges the factory, not a trace)."""
        return warm_cold_verdict(self.factory, chunks, tools=self.tools, timeout=self.timeout)
