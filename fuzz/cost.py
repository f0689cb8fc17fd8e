"""The cost check in a fuzz run: once per run, before the search, within its budget.

``tcr.cost`` times the detector on its probe message (``time.process_time``: a fuzzed
detector runs in this process); each violation becomes a ``Finding`` seen once
(``count`` 1) whose reproducer is ``tcr replay --check cost …``. Nothing is saved: the
probe is rebuilt from the claim, and a recording would not show a cost.

With a budget the probe gets ``SHARE`` of it at most, on the wall clock (the budget's):
past that it is cut short (``Cost.cut``) and judged on what it measured. A quarter: a
linear detector's probe takes well under a second, a quadratic one's a few (its runs
are capped), so a quarter of a minute is ample for both, and the search keeps at least
three quarters, shrinking included, of any budget, however slow the detector.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from tcr.claims import Claim
from tcr.cost import KIND, SHAPE, Cost, measure_cost, reproducer
from tcr.detector.loader import REFERENCE, Factory
from tcr.oracle import Check, Violation
from tcr.signature import Signature
from tcr.time_limit import message_time_limit

from .model import Case, Finding

__all__ = ["SHARE", "cost_findings"]

SHARE = 0.25  # of the budget, at most, for the cost probe (module docstring)


def cost_findings(
    factory: Factory,
    spec: str,
    claim: Claim,
    timeout: float | None,
    deadline: float | None = None,
) -> tuple[Cost, list[Finding]]:
    """The cost check on the fuzzed detector (``spec``: how it was named) and its findings.

    ``deadline`` (``time.perf_counter``): when its share of the budget is spent (``None``:
    no budget, it runs to the end)."""
    started = time.perf_counter()
    cost = measure_cost(
        factory,
        claim=claim,
        clock=time.process_time,
        limit=_limit(timeout),
        deadline=deadline,
        wall=time.perf_counter,
    )
    seconds = time.perf_counter() - started
    detector = [] if spec == REFERENCE else ["--detector", spec]
    return cost, [
        _finding(v, seconds, reproducer(detector, claim, v.dialect)) for v in cost.violations
    ]


def _limit(timeout: float | None) -> Callable[[], AbstractContextManager[Any]]:
    if timeout is None:
        return nullcontext
    return lambda: message_time_limit(timeout)


def _finding(violation: Violation, seconds: float, command: str) -> Finding:
    return Finding(
        violation=violation,
        violations=(violation,),
        case=Case((), None, None, "the cost probe (tcr.cost), fed in chunks of 8"),
        found_after=0,
        seconds_to_find=seconds,
        shrink_seconds=0.0,
        original_length=0,
        original_splits=0,
        signature=Signature(str(Check.COST), KIND, violation.dialect, SHAPE),
        count=1,
        replay_command=command,
    )
