"""Every oracle on one case, the way ``tcr replay`` judges a recording (DESIGN §7).

The case's chunking is checked against the whole run (conservation, chunk
invariance, no leak, holdback, crash), against its ground truth when it has
one (expected), and the detector factory for warm equals cold.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Sequence
from typing import Any

from tcr.detector.events import Detector
from tcr.detector.loader import Factory, accepts_keyword
from tcr.errors import TcrError
from tcr.oracle import CHECKS, TRACE_CHECKS, Violation, check_trace, warm_cold_verdict
from tcr.trace import describe_error, run_trace

from .model import Case

__all__ = ["CaseChecker", "FactoryFailed"]


class FactoryFailed(BaseException):
    """The detector factory itself raised: no case can be judged, so the run stops.

    A ``BaseException``, so that Hypothesis does not take it for a failing case.
    """


def _signed(factory: Factory) -> Factory:
    """``factory`` with its signature computed once.

    The warm-equals-cold oracle asks a factory's signature which keywords it takes,
    several times per case; ``inspect`` honours ``__signature__`` at once.
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to cache: ask the factory itself
        return factory

    def signed(*args: Any, **kwargs: Any) -> Detector:
        return factory(*args, **kwargs)

    signed.__signature__ = signature  # type: ignore[attr-defined]
    return signed


# Warm equals cold probes the factory's memory (reset(), a seeded format), not
# the text: it runs on a deterministic third of the cases (by the text, so a
# shrunk case keeps being judged the same way) and costs four to five detector
# runs, more than every other oracle together. That keeps the fuzzer above
# 1,000 examples/s; `tcr replay` still runs it on every recording.
_WARM_COLD_EVERY = 3


def _samples_warm_cold(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8", "surrogatepass")) % _WARM_COLD_EVERY == 0


class CaseChecker:
    """Judges cases for one detector factory; one detector per message (DESIGN §5)."""

    def __init__(self, factory: Factory) -> None:
        self.factory = _signed(factory)
        self._takes_tools = accepts_keyword(factory, "tools")

    def new(self, tools: Sequence[str] | None) -> Detector:
        try:
            if self._takes_tools:
                return self.factory(tools=None if tools is None else list(tools))
            return self.factory()
        except Exception as error:
            raise FactoryFailed(f"detector factory raised {describe_error(error)}") from error

    def check(self, case: Case) -> list[Violation]:
        """Every violation of every oracle, in the order of ``tcr.oracle.CHECKS``."""
        text = case.text
        whole = run_trace(self.new(case.tools), [text] if text else [], states=False)
        if len(case.chunks) > 1:
            trace = run_trace(self.new(case.tools), case.chunks, states=False)
        else:
            trace = whole
        expectation = None if case.truth is None else case.truth.expectation()
        verdict = check_trace(trace, whole=whole, checks=TRACE_CHECKS, expectation=expectation)
        found = list(verdict.violations)
        if trace.crash is None and _samples_warm_cold(text):
            try:
                warm = warm_cold_verdict(self.factory, [text] if text else [], tools=case.tools)
            except TcrError as error:  # the factory raised when asked for a second detector
                raise FactoryFailed(str(error)) from error
            found += warm.violations
        return sorted(found, key=lambda v: CHECKS.index(v.check))
