"""Every oracle on one case, the way ``tcr replay`` judges a recording (ARCHITECTURE.md §7.3).

The case's chunking is checked against the whole run (conservation, chunk
invariance, no leak, holdback, crash), against its ground truth when it has
one (expected), and the detector factory for warm equals cold. No leak and
holdback follow the detector's claim (``Judge(claim=…)``): its markers only.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection

from tcr.claims import EVERYTHING, Claim
from tcr.detector.loader import Factory
from tcr.errors import FactoryError
from tcr.judge import Judge
from tcr.oracle import CHECKS, TRACE_CHECKS, Check, Violation
from tcr.policies import NONE, Policies
from tcr.signature import Signature, coarse_key, key

from .model import Case

__all__ = ["CaseChecker", "FactoryFailed"]


class FactoryFailed(BaseException):
    """The detector factory itself raised: no case can be judged, so the run stops.

    A ``BaseException``, so that Hypothesis does not take it for a failing case.
    """


# Warm equals cold probes the factory's memory (reset(), a seeded format), not
# the text: it runs on a deterministic third of the cases (by the text, so a
# shrunk case keeps being judged the same way) and costs four to five detector
# runs, more than every other oracle together. That keeps the fuzzer above
# 1,000 examples/s; `tcr replay` still runs it on every recording.
_WARM_COLD_EVERY = 3


def _samples_warm_cold(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8", "surrogatepass")) % _WARM_COLD_EVERY == 0


class CaseChecker:
    """Judges cases for one detector factory; one detector per message (ARCHITECTURE.md §5.2)."""

    def __init__(
        self,
        factory: Factory,
        timeout: float | None = None,
        claim: Claim | None = None,
        checks: Collection[Check] = CHECKS,
    ) -> None:
        self.factory = factory
        self.checks = tuple(checks)  # the checks asked for (--check): what "every" means
        self.timeout = timeout  # seconds per message run: see tcr.time_limit
        self.claim = claim or EVERYTHING  # what it speaks: no_leak and holdback follow it
        # The ground truth is written by the contract, with the reference's choices (but
        # tools=[] as text, which the repertoire writes): restated for the claim's
        # policies by the judge (tcr.readings).
        truth_policies = (
            Policies.of({"empty_tools": "text"}) if self.claim.empty_tools == "text" else NONE
        )
        self.truth_claim = self.claim.with_policies(truth_policies)

    def check(self, case: Case, checks: Collection[Check] | None = None) -> list[Violation]:
        """Every violation of every oracle asked for (``checks``: of those only), in the
        order of ``tcr.oracle.CHECKS``."""
        return self.keyed(case, checks)[0]

    def keyed(
        self, case: Case, checks: Collection[Check] | None = None
    ) -> tuple[list[Violation], list[Signature]]:
        """``check``, and each violation's coarse key (``tcr.signature.coarse_key``): ``whole``
        when the unsplit run shows the same key. The unsplit run is made anyway (the checks
        compare against it), so only its oracles run again. Warm-cold judges the text, not
        the chunking: ``whole``."""
        text = case.text
        wanted = self.checks if checks is None else checks
        judge = Judge(
            self.factory,
            text,
            tools=case.tools,
            expectation=None if case.truth is None else case.truth.expected(),
            # policy/inconsistent is told on the trace, from expected (tcr.judge)
            checks=[c for c in (*TRACE_CHECKS, Check.POLICY) if c in wanted],
            timeout=self.timeout,
            claim=self.claim,
            expectation_for=self.truth_claim,  # the ground truth is made for the claim
            tool_specs=case.tool_specs,  # schemas agreeing with the truth: values compared typed
        )
        shapes: dict[Signature, str] = {}
        try:
            whole = judge.whole
            # One chunk is the whole run: judged against itself, it is run once.
            trace = whole if len(case.chunks) <= 1 else judge.trace(case.chunks)
            found = list(judge.judge_trace(trace).violations)
            unsplit: set[Signature] = set()
            if found:
                unsplit.update(
                    key(v)
                    for v in (found if trace is whole else judge.judge_trace(whole).violations)
                )
                shapes = judge.unsplit_shapes(unsplit)
            warm_cold = Check.WARM_COLD in wanted and _samples_warm_cold(text)
            if trace.crash is None and warm_cold:  # not in TRACE_CHECKS
                cold = judge.warm_cold([text] if text else []).violations
                found += cold
                unsplit.update(key(v) for v in cold)
        except FactoryError as error:
            raise FactoryFailed(str(error)) from error
        found.sort(key=lambda v: CHECKS.index(v.check))
        return found, [coarse_key(v, unsplit, shapes) for v in found]
