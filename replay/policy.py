"""The policy probes in a replay: once per run, before the recordings (``tcr.probes``).

The detector's choices are read from probe messages and the run is judged with them
(the report's first line says which); a probe whose output no choice explains, or
that breaks a pinned choice, is a finding on this row, the probe its reproducer.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import replace

from tcr.detector.loader import DetectorSpec
from tcr.oracle import Check, Violation
from tcr.policies import Policies
from tcr.probes import PolicyReading, read_spec
from tcr.signature import Signature

from .model import Failure, Outcome

__all__ = ["PROBES", "policy_outcome"]

PROBES = "(policy probes)"  # what the policy row names instead of a recording
SHAPE = "whole"  # every probe runs unsplit


def policy_outcome(
    detector: DetectorSpec, timeout: float | None = None
) -> tuple[DetectorSpec, Outcome, PolicyReading]:
    """``detector`` with its policies read, the report's row for the probes, the reading."""
    started = time.perf_counter()
    judged, reading = read_spec(detector, timeout=timeout)
    outcome = Outcome(PROBES, "probe", SHAPE)
    outcome.seconds = time.perf_counter() - started
    outcome.runs = 1 if reading.probes else 0
    outcome.checks = (Check.POLICY,) if reading.probes else ()
    if not reading.probes:
        outcome.skipped = {Check.POLICY: "no probe message for the claimed dialects"}
    outcome.failing_runs = 1 if reading.violations else 0
    outcome.failures = [_failure(judged, v) for v in reading.violations]
    return judged, outcome, reading


def _failure(detector: DetectorSpec, violation: Violation) -> Failure:
    signature = Signature(str(Check.POLICY), violation.kind, violation.dialect, SHAPE)
    return Failure.of_probe(violation, reproducer(detector), signature)


def reproducer(detector: DetectorSpec) -> str:
    """``tcr replay --check policy`` for this detector, its claim restated with the pinned
    choices only (the reproducer reads the others again, as this run did)."""
    claim = detector.claim
    pinned = claim.with_policies(Policies.of(claim.policies.pinned_map()))
    options = replace(detector, claim=pinned).options()
    return shlex.join(["tcr", "replay", "--check", "policy", *options])
