"""The policy probes in a fuzz run: read before the search, their findings first.

``tcr.probes`` reads the detector's choices (every case is then judged with them);
a probe whose output no choice explains, or that breaks a pinned choice, becomes a
``Finding`` seen once, whose reproducer is ``tcr replay --check policy …``. Nothing is
saved: the probes are rebuilt from the claim.
"""

from __future__ import annotations

import shlex

from tcr.detector.loader import REFERENCE
from tcr.oracle import Check, Violation
from tcr.policies import Policies
from tcr.probes import PolicyReading
from tcr.signature import Signature

from .model import Case, Finding

__all__ = ["policy_findings"]


def policy_findings(reading: PolicyReading, spec: str) -> list[Finding]:
    """The reading's findings (``spec``: how the detector was named)."""
    claim = reading.claim
    pinned = claim.with_policies(Policies.of(claim.policies.pinned_map()))
    detector = [] if spec == REFERENCE else ["--detector", spec]
    command = shlex.join(["tcr", "replay", "--check", "policy", *detector, *pinned.options()])
    return [_finding(v, command) for v in reading.violations]


def _finding(violation: Violation, command: str) -> Finding:
    return Finding(
        violation=violation,
        violations=(violation,),
        case=Case((), None, None, f"the policy probe {violation.excerpt}"),
        found_after=0,
        seconds_to_find=0.0,
        shrink_seconds=0.0,
        original_length=0,
        original_splits=0,
        signature=Signature(str(Check.POLICY), violation.kind, violation.dialect, "whole"),
        count=1,
        replay_command=command,
    )
