"""What a replay found: one ``Outcome`` per recording x strategy, gathered in a ``Report``,
which also groups the failures by signature across the run (``Report.findings``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcr.claims import EVERYTHING, Claim
from tcr.cost import Cost
from tcr.errors import EXIT_ERROR, EXIT_OK
from tcr.findings import Grouped, group
from tcr.oracle import Check, Violation
from tcr.signature import Signature

__all__ = ["Failure", "FindingGroup", "InputError", "Outcome", "Report"]


@dataclass(frozen=True, slots=True)
class Failure:
    """One failing chunking, shrunk, with what it takes to reproduce it."""

    violation: Violation  # as found on the minimal chunking
    label: str  # the chunking that first failed, e.g. "random:8#13"
    splits: tuple[int, ...]  # minimal split points of the recorded text
    original_splits: int  # split points of the chunking that first failed
    chunks: tuple[str, ...]  # shortest failing input found (text-only recordings), else the splits
    reproducer: str  # one shell line
    snippet: str  # a pytest test that pins it
    signature: Signature  # what it is: both the reproducer and the snippet show it

    @classmethod
    def of_probe(cls, violation: Violation, reproducer: str, signature: Signature) -> Failure:
        """A probe's finding (cost, policy): one unsplit run, nothing shrunk, no snippet."""
        return cls(violation, signature.shape, (), 0, (), reproducer, "", signature)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.violation.check,
            "signature": str(self.signature),
            "kind": self.violation.kind,
            "dialect": self.violation.dialect,
            "shape": self.signature.shape,
            "proxy_only": self.signature.proxy,  # the minimal chunking cuts a special token
            "message": self.violation.message,
            "chunk": self.violation.chunk,
            "offset": self.violation.offset,
            "excerpt": self.violation.excerpt,
            "label": self.label,
            "splits": list(self.splits),
            "original_splits": self.original_splits,
            "chunks": list(self.chunks),
            "reproducer": self.reproducer,
            "snippet": self.snippet,
        }


@dataclass(frozen=True, slots=True)
class InputError:
    """A recording (or the detector) that could not be used at all."""

    path: str
    message: str  # one line, naming what and where


@dataclass(slots=True)
class Outcome:
    """One recording replayed under one strategy."""

    path: str
    recording: str  # the recording's id
    strategy: str
    runs: int = 0  # chunkings replayed
    chars: int = 0  # content characters fed, over all runs
    failing_runs: int = 0
    failures: list[Failure] = field(default_factory=list)  # one per failing check, shrunk
    checks: tuple[Check, ...] = ()  # the checks that ran
    skipped: dict[str, str] = field(default_factory=dict)  # check -> why not
    # check -> why not, for the checks the detector's claim leaves unjudged (also in skipped)
    not_judged: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # a detector crash, one line, with the chunk index
    seconds: float = 0.0
    incomplete: str | None = None  # the recording was cut short: why

    @property
    def ok(self) -> bool:
        return not self.failures and self.error is None

    @property
    def failed_checks(self) -> list[Check]:
        return sorted({f.violation.check for f in self.failures})

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "recording": self.recording,
            "strategy": self.strategy,
            "ok": self.ok,
            "runs": self.runs,
            "chars": self.chars,
            "failing_runs": self.failing_runs,
            "checks": list(self.checks),
            "skipped": dict(self.skipped),
            "not_judged": dict(self.not_judged),
            "error": self.error,
            "incomplete": self.incomplete,
            "seconds": round(self.seconds, 6),
            "failures": [f.to_dict() for f in self.failures],
        }


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """One distinct finding of a run: every failure with its signature, first found first."""

    signature: Signature
    failures: tuple[tuple[Outcome, Failure], ...]

    @property
    def first(self) -> tuple[Outcome, Failure]:
        return self.failures[0]

    @property
    def recordings(self) -> int:
        return len({o.path for o, _ in self.failures})

    @property
    def strategies(self) -> int:
        return len({o.strategy for o, _ in self.failures})

    def to_dict(self) -> dict[str, Any]:
        outcome, failure = self.first
        return {
            "signature": str(self.signature),
            "check": self.signature.check,
            "kind": self.signature.kind,
            "dialect": self.signature.dialect,
            "shape": self.signature.shape,
            "proxy_only": self.signature.proxy,
            "failures": len(self.failures),
            "recordings": self.recordings,
            "strategies": self.strategies,
            "first": {"path": outcome.path, "strategy": outcome.strategy},
            "reproducer": failure.reproducer,
        }


@dataclass(slots=True)
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    seconds: float = 0.0
    stopped_early: bool = False  # -x: stopped at the first failure
    claim: Claim = EVERYTHING  # what the detector was judged against
    # The cost check's row (``--check cost``; once per run, not per recording: replay/cost.py)
    # and its measurements; None when it did not run.
    cost: Outcome | None = None
    cost_measured: Cost | None = None
    selection: str | None = None  # --lf: which recordings were chosen, in one line
    # The policy probes' row (once per run, like cost: replay/policy.py); None when not run.
    policy: Outcome | None = None

    @property
    def recordings(self) -> int:
        return len({o.path for o in self.outcomes})

    @property
    def not_judged(self) -> dict[tuple[str, str], int]:
        """(check, why) -> how many recordings the claim left that check unjudged in."""
        paths: dict[tuple[str, str], set[str]] = {}
        for outcome in self.outcomes:
            for check, why in outcome.not_judged.items():
                paths.setdefault((check, why), set()).add(outcome.path)
        return {key: len(found) for key, found in paths.items()}

    @property
    def chars(self) -> int:
        return sum(o.chars for o in self.outcomes)

    @property
    def rows(self) -> list[Outcome]:
        """Every row of the report: the policy probes', recording x strategy, then the cost
        check's."""
        probes = [self.policy] if self.policy is not None else []
        return [*probes, *self.outcomes, *([self.cost] if self.cost is not None else [])]

    @property
    def failures(self) -> list[tuple[Outcome, Failure]]:
        return [(o, f) for o in self.rows for f in o.failures]

    @property
    def findings(self) -> list[FindingGroup]:
        """The failures grouped by signature, in the order each was first found."""
        groups: dict[Signature, list[tuple[Outcome, Failure]]] = {}
        for outcome, failure in self.failures:
            groups.setdefault(failure.signature, []).append((outcome, failure))
        return [FindingGroup(sig, tuple(group)) for sig, group in groups.items()]

    @property
    def causes(self) -> list[Grouped[FindingGroup]]:
        """The distinct findings: the signatures grouped by cause across checks and dialects
        (``tcr.findings``); what the text report shows."""
        # A recording's strategies together are one run: its whole run failing is what an
        # invariance failure of another strategy is compared with (tcr.findings.symptoms).
        runs: dict[str, set[Signature]] = {}
        for outcome, failure in self.failures:
            runs.setdefault(outcome.path, set()).add(failure.signature)
        return group(self.findings, list(runs.values()))

    @property
    def exit_code(self) -> int:
        """2 when an input could not be used (or the detector crashed), else 1 on a violation."""
        if self.errors or any(o.error for o in self.rows):
            return EXIT_ERROR
        # a crash is an error: a plug-in that raises is unusable input (and is reported)
        return max((f.violation.check.exit_code for _, f in self.failures), default=EXIT_OK)

    def to_dict(self) -> dict[str, Any]:
        causes = {g.signature: str(f.cause) for f in self.causes for g in f.items}
        return {
            "exit_code": self.exit_code,
            "recordings": self.recordings,
            "chars": self.chars,
            "seconds": round(self.seconds, 6),
            "stopped_early": self.stopped_early,
            "judged_against": self.claim.judged_line,
            "claim": self.claim.to_map(),
            "policies": self.claim.policies.to_map(),
            "not_judged": [
                {"check": check, "reason": why, "recordings": count}
                for (check, why), count in self.not_judged.items()
            ],
            "errors": [{"path": e.path, "message": e.message} for e in self.errors],
            "findings": [{**g.to_dict(), "cause": causes[g.signature]} for g in self.findings],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "cost": None if self.cost is None else self._cost_dict(self.cost),
            "policy": None if self.policy is None else self.policy.to_dict(),
        }

    def _cost_dict(self, row: Outcome) -> dict[str, Any]:
        measured = self.cost_measured.measured if self.cost_measured is not None else ()
        return {
            **row.to_dict(),
            "measured": [g.to_dict() for g in measured],
        }


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
