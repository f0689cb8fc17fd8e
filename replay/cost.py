"""The cost check in a replay: once per run, on the probe message, not per recording.

``tcr.cost`` measures; this module gives it the clock and the time limit that fit
the detector and turns what it found into the report's cost row (an ``Outcome``
whose failures carry the reproducer ``tcr replay --check cost …``). A detector in
this process is timed on its CPU time (``time.process_time``: other processes on
a shared machine do not count); a ``--detector-cmd`` one on the wall clock, since
its work is done in another process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

from tcr.claims import EVERYTHING
from tcr.cost import KIND, SHAPE, Cost, measure_cost
from tcr.cost import reproducer as cost_reproducer
from tcr.detector.loader import DetectorSpec
from tcr.errors import FactoryError
from tcr.oracle import Check, Violation
from tcr.signature import Signature
from tcr.time_limit import message_time_limit

from .model import Failure, Outcome

__all__ = ["PROBE", "cost_outcome", "reproducer"]

PROBE = "(cost probe)"  # what the cost row names instead of a recording


def cost_outcome(detector: DetectorSpec, timeout: float | None = None) -> tuple[Outcome, Cost]:
    """The cost check on ``detector`` as a report row, and the measurements behind it.

    ``timeout``: seconds one probe run may take (None: no limit; a ``--detector-cmd``
    process has its own per-answer limit, so the caller gives None for one).
    """
    clock = time.process_time if detector.command is None else time.perf_counter
    outcome = Outcome(PROBE, "probe", SHAPE)
    started = time.perf_counter()
    try:
        cost = measure_cost(
            detector.factory, claim=detector.claim, clock=clock, limit=_limit(timeout)
        )
    except FactoryError as error:
        outcome.error = str(error)
        outcome.seconds = time.perf_counter() - started
        return outcome, Cost(skipped=str(error))
    outcome.seconds = time.perf_counter() - started
    verdict = cost.verdict
    outcome.runs = 1 if verdict.ran else 0
    outcome.chars = sum(g.small + g.large for g in cost.measured)  # each size once
    outcome.checks, outcome.skipped = verdict.ran, dict(verdict.skipped)
    outcome.failing_runs = 1 if verdict.violations else 0
    outcome.failures = [_failure(detector, v) for v in verdict.violations]
    return outcome, cost


def _limit(timeout: float | None) -> Callable[[], AbstractContextManager[Any]]:
    """The per-message time limit around each probe run (``tcr.time_limit``)."""
    if timeout is None:
        return nullcontext
    return lambda: message_time_limit(timeout)


def _failure(detector: DetectorSpec, violation: Violation) -> Failure:
    # no snippet: a timing is no assertion for a test suite (ARCHITECTURE.md §17)
    signature = Signature(str(Check.COST), KIND, violation.dialect, SHAPE)
    return Failure.of_probe(violation, reproducer(detector, violation.dialect), signature)


def reproducer(detector: DetectorSpec, dialect: str = "") -> str:
    """``tcr replay --check cost`` for this detector (``tcr.cost.reproducer``)."""
    return cost_reproducer(replace(detector, claim=EVERYTHING).options(), detector.claim, dialect)
