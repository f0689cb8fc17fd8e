"""What a fuzz run checks (``Case``), what it found (``Finding``) and its ``FuzzReport``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tcr.claims import EVERYTHING, Claim
from tcr.cost import Cost
from tcr.dialects import DIALECTS
from tcr.errors import EXIT_OK
from tcr.oracle import CHECKS, Check, Violation
from tcr.rechunk import Chunking, splits_spec
from tcr.signature import Signature

from .truth import Truth

__all__ = ["Case", "Finding", "FuzzReport"]


@dataclass(frozen=True, slots=True)
class Case:
    """One chunked message for a detector, with its ground truth when it is known.

    ``truth`` is ``None`` after a mutation that breaks a block, or once shrinking
    cut a finding's text (``runner._shortest``): then only the oracles that need no
    truth judge it (conservation, invariance, no leak,
    holdback, warm equals cold, crash).
    """

    chunks: tuple[str, ...]
    tools: tuple[str, ...] | None
    truth: Truth | None
    origin: str  # "generated: prose, tools_tag/array" or "mutated PATH: …"
    # The request's OpenAI tools, given to a factory that takes them (tcr.tool_specs).
    tool_specs: tuple[dict[str, Any], ...] | None = None
    dialects: tuple[str, ...] = ()  # a generated message's block dialects (progress counts)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    @property
    def splits(self) -> tuple[int, ...]:
        return Chunking("splits", "case", self.chunks).splits

    @property
    def rechunk(self) -> str:
        """The ``--rechunk`` spec of this chunking: ``splits:…`` or ``whole``."""
        return splits_spec(self.splits) if len(self.chunks) > 1 else "whole"

    @property
    def unmarked(self) -> int:
        """Characters of the text that are no dialect's marker or body token: what shrinking
        can still cut. A finding keeps its dialect, so the markers of its blocks stay
        (a Kimi-K2 call's alone take 95 characters)."""
        return len(_markers().sub("", self.text))


@cache
def _markers() -> re.Pattern[str]:
    # Longer than one character: bare JSON's opener ``{`` is the body's own.
    every = {
        m
        for d in DIALECTS
        for m in (*d.opens, *d.closes, *d.tokens, *d.special_tokens)
        if len(m) > 1
    }
    return re.compile("|".join(re.escape(m) for m in sorted(every, key=len, reverse=True)))


@dataclass(frozen=True, slots=True)
class Finding:
    """One distinct failure of a run (one signature), shrunk, saved, and the commands that
    reproduce it."""

    violation: Violation  # the violation with this finding's signature, on the shrunk case
    violations: tuple[Violation, ...]  # it, then the shrunk case's others
    case: Case  # shrunk
    found_after: int  # examples run when it was found (this one included; by its job)
    seconds_to_find: float
    shrink_seconds: float
    original_length: int  # characters of the case as first found
    original_splits: int
    signature: Signature  # of its violation on the shrunk case
    count: int = 1  # examples that showed its signature key, over the whole search
    # the keys of its violations the unsplit case shows with a shape other than WHOLE
    # (tcr.judge.Judge.unsplit_shapes: IN_STRING, AT_END), and that shape
    shapes: tuple[tuple[Signature, str], ...] = ()
    saved: Path | None = None
    replay_command: str = ""
    tui_command: str = ""
    snippet: str = ""  # a pytest regression test that fails as this finding does

    @property
    def check(self) -> Check:
        return self.violation.check


@dataclass(slots=True)
class FuzzReport:
    detector: str  # package.module:factory
    seed: int
    budget_s: float | None
    max_examples: int | None
    formats: tuple[str, ...]  # the claimed dialects blocks were written in
    generated: int = 0  # examples run from generated messages
    mutated: int = 0  # examples run from mutated recordings
    seconds: float = 0.0  # the whole run, shrinking included
    search_seconds: float = 0.0  # until the first failure, or the end of the search
    recordings: int = 0  # recordings mutated
    skipped: list[str] = field(default_factory=list)  # recordings not mutated, and why
    findings: list[Finding] = field(default_factory=list)  # one per signature, in found order
    # "budget", "max_examples", "max_findings" or "failure" (-x: the first finding);
    # "stopped": by another job's finding; "checks": no check asked for judges a case
    stopped: str = ""
    shard: tuple[int, int] | None = None  # (k, n): the k-th of n shares of the search
    jobs: int = 1  # processes
    claim: Claim = EVERYTHING  # what the detector was judged against
    # the cost check's measurements (None: not run: shard 2 of 3, --check without cost)
    cost: Cost | None = None
    # Generated examples with a block in each dialect (a message may count for several).
    by_dialect: dict[str, int] = field(default_factory=dict)
    # While the run goes: "cost" (the cost probe), "generate", "mutate" or "shrink" (then
    # ``shrinking`` names the signature being shrunk); "" while processes search.
    phase: str = ""
    shrinking: str = ""
    checks: tuple[Check, ...] = CHECKS  # the checks run (--check; default: every one)

    @property
    def selected(self) -> tuple[Check, ...] | None:
        """The checks ``--check`` chose, when it chose fewer than every one."""
        return None if self.checks == CHECKS else self.checks

    @property
    def examples(self) -> int:
        return self.generated + self.mutated

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.search_seconds if self.search_seconds > 0 else 0.0

    @property
    def finding(self) -> Finding | None:
        """The first finding, if any."""
        return self.findings[0] if self.findings else None

    @property
    def exit_code(self) -> int:
        """0 no violation, 1 a violation, 2 the detector crashed (an unusable input, as replay)."""
        return max((f.check.exit_code for f in self.findings), default=EXIT_OK)
