"""``run()``: generated and mutated cases against every oracle, until the budget.

The search runs as a sequence of Hypothesis runs ("batches") of at most
``BATCH`` examples, each with its own seed derived from ``seed``: the same
seed gives the same sequence of examples, and the budget only decides how far
along it a run gets. A batch that goes over the budget is stopped from inside
the test by a private ``BaseException``, which Hypothesis does not catch.

Every distinct finding is kept (ARCHITECTURE.md §7.4). A failing example whose
violations all have coarse keys (check, kind, dialect, and whether the unsplit
message shows it too: ``tcr.signature.coarse_key``) seen before only counts
toward them. One with a new key is a new finding:
Hypothesis shrinks it while it keeps that key (for ``SHRINK_SECONDS`` at most),
delta debugging cuts its split points to a 1-minimal set that keeps it too,
and the batch is run again from
its seed: its examples up to the finding are replayed without being counted
again (they fail only in known ways now) and the search goes on past it. So
the same seed gives the same findings. ``exitfirst`` stops at the first
finding, ``max_findings`` after that many; each is saved as a recording.

The budget bounds the whole run, its setup and shrinking included: no example
starts after it, and a finding is shrunk, by Hypothesis and then by delta debugging, until
``LATE`` times the budget at most (``_Search.hard_deadline``); past that it is
kept as far as it was shrunk, and the run ends within one detector run of it.

``shard`` runs one deterministic share of the batches and ``jobs`` spreads them
over processes (``.schedule`` says which batch runs where, ``.pool`` how the
workers share a stop flag); each worker shrinks its own findings and the
merged report keeps one per coarse key, with the counts added.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from tcr._runtime.pool import pickled_for_workers
from tcr._runtime.state import STATE
from tcr._verdict import INCONSISTENT, probed
from tcr.claims import Claim
from tcr.detector.loader import (
    REFERENCE,
    DetectorSpec,
    Factory,
    accepts_keyword,
    resolve_detector,
)
from tcr.errors import FactoryError, TcrError
from tcr.expectation import expectation_of
from tcr.judge import checks_of
from tcr.minimize import FLAKY, NotFailing, minimize_splits, minimize_text
from tcr.oracle import CHECKS, RECORDING_CHECKS, Check, Violation
from tcr.probes import PolicyReading, read_spec
from tcr.readings import read
from tcr.rechunk import split_tokens_mended
from tcr.shard import check_shard
from tcr.signature import (
    SHAPES,
    TIMEOUT,
    UNSPLIT,
    Signature,
    cuts_whole_token,
    key,
    shape,
    signature,
    special_markers,
    special_split,
    split_rank,
)
from tcr.snippet import regression_test
from tcr.time_limit import DEFAULT_TIMEOUT, check_timeout

from . import engine
from .check import CaseChecker, FactoryFailed
from .cost import SHARE, cost_findings
from .model import Case, Finding, FuzzReport
from .mutate import OPS_BYTES, Seed, decode_mutant, load_seeds
from .policy import policy_findings
from .pool import run_workers, shared
from .repertoire import Repertoire
from .save import commands, save_case
from .schedule import BATCH, Batch, batch_count, batches
from .source import Source
from .strategies import (
    CHUNK_BYTES,
    DEFAULT_MAX_PARTS,
    DEFAULT_MAX_SPLITS,
    EVERY_DIALECT,
    decode_chunking,
    decode_message,
    message_bytes,
    pick_from,
    tools_from,
)
from .truth import Truth

__all__ = ["BATCH", "DEFAULT_BUDGET_S", "DEFAULT_SAVE", "LATE", "SHRINK_SECONDS", "run"]

DEFAULT_SAVE = STATE / "found"  # git-ignored: see tcr._runtime.state
DEFAULT_BUDGET_S = 60.0
SHRINK_SECONDS = 60.0
LATE = 1.1  # a run with a budget ends by this many times it: shrinking may go past it
Progress = Callable[[FuzzReport], None]


class _OutOfTime(BaseException):
    """The budget (or the time to shrink) is spent: raised inside the test, so Hypothesis
    stops at once."""


class _Failed(engine.Interesting):
    """The case shows the signature key being shrunk: what Hypothesis shrinks."""


# --- what a batch draws ------------------------------------------------------------


GENERATED_BYTES = message_bytes(DEFAULT_MAX_PARTS) + CHUNK_BYTES
MUTATED_BYTES = 2 + OPS_BYTES + CHUNK_BYTES


def _generated_case(repertoire: Repertoire, data: bytes) -> Case:
    size = message_bytes(DEFAULT_MAX_PARTS)
    pick = partial(pick_from, repertoire.blocks)
    message = decode_message(data[:size], pick, tools_from, DEFAULT_MAX_PARTS, repertoire)
    chunking = decode_chunking(Source(data[size:]), message.text, DEFAULT_MAX_SPLITS)
    origin = "generated: " + (", ".join(message.parts) or "empty message")
    return Case(
        tuple(chunking.chunks),
        message.tools,
        message.truth,
        origin,
        message.tool_specs,
        message.dialects,
    )


def _mutated_case(seeds: Sequence[Seed], data: bytes) -> Case:
    return decode_mutant(data[2:], seeds[((data[0] << 8) | data[1]) % len(seeds)])


def _as_claimed(decode: Callable[[bytes], Case], claim: Claim) -> Callable[[bytes], Case]:
    """``decode``, its chunkings cut nowhere inside a claimed special token when the claim
    says they reach the detector whole (it sees token ids)."""
    if not claim.tokens_whole:
        return decode
    markers = claim.special_markers

    def whole(data: bytes) -> Case:
        case = decode(data)
        return replace(case, chunks=split_tokens_mended(case.chunks, markers))

    return whole


# --- one batch ------------------------------------------------------------------------


def _never() -> bool:
    return False


def _always() -> bool:
    return True


def _ignore(found: Signature) -> None:
    pass


class _Search:
    """Counts examples and signatures, watches the clock, and shrinks each new finding.

    While generating, ``target`` is ``None``; the first example with a signature
    key not in ``known`` makes it that key, and Hypothesis then shrinks the
    examples that show it. ``position`` counts a pass's examples, so that a
    batch run again after a finding counts only the examples past
    ``counted_upto``. In a worker process ``stopped`` says the run was stopped,
    and ``claim`` (with ``exitfirst``) stops the others at this one's finding.
    No example starts after ``deadline``, and no shrinking goes past
    ``hard_deadline`` (``LATE`` times the budget; both on ``time.perf_counter``).
    """

    def __init__(
        self,
        checker: CaseChecker,
        deadline: float,
        started: float,
        stopped: Callable[[], bool] = _never,
        claim: Callable[[], bool] = _always,
        hard_deadline: float = math.inf,
    ) -> None:
        self.checker = checker
        self.decode: Callable[[bytes], Case] = partial(_generated_case, EVERY_DIALECT)  # per batch
        self.deadline = deadline
        self.hard_deadline = hard_deadline
        self.started = started
        self.stopped = stopped
        self.claim = claim
        self.examples = 0  # examples of this batch counted so far
        self.counts: dict[Signature, int] = {}  # signature key -> examples that showed it
        self.known: set[Signature] = set()  # keys already found (and shrunk)
        self.target: Signature | None = None  # the key being shrunk
        self.position = 0  # examples of this pass of the batch
        self.counted_upto = 0  # examples of this batch already counted by an earlier pass
        self.found_at = 0  # ``position`` of the example that showed ``target``
        self.first_failure: float | None = None  # when ``target`` was found
        self.shrink_seconds = 0.0  # time spent shrinking, over the whole search
        self.original: Case | None = None
        self.best: tuple[Case, list[Violation]] | None = None
        # This batch's failing examples and their keys: a pass run again after a finding
        # replays them, and needs no detector run to see that they hold nothing new.
        self.replayed: dict[bytes, tuple[Signature, ...]] = {}
        # This pass's examples that showed ``target``: the one Hypothesis shrank to is kept.
        self.failing: dict[bytes, tuple[Case, list[Violation]]] = {}
        self.by_dialect: dict[str, int] = {}  # fresh generated examples per block dialect
        self.on_shrink: Callable[[Signature], None] = _ignore  # a new finding's shrinking starts

    def test(self, data: bytes) -> None:
        now = time.perf_counter()
        fresh = False
        if self.target is None:
            self.position += 1
            fresh = self.position > self.counted_upto
            # no example starts past the budget, nor one replayed past the hard deadline
            if (fresh and (now > self.deadline or self.stopped())) or now > self.hard_deadline:
                raise _OutOfTime
            self.examples += fresh
        elif self.first_failure is not None and (
            # over the time limit, each try could take the whole limit again: kept as found
            self.target.kind == TIMEOUT
            or now > min(self.first_failure + SHRINK_SECONDS, self.hard_deadline)
        ):
            raise _OutOfTime
        if not fresh and self.target is None:
            known = self.replayed.get(data)
            if known is not None and all(k in self.known for k in known):
                return
        case = self.decode(data)
        if fresh:
            for dialect in case.dialects:
                self.by_dialect[dialect] = self.by_dialect.get(dialect, 0) + 1
        # While shrinking only the finding's own check matters: the others are not run.
        only = None if self.target is None else [Check(self.target.check)]
        violations, coarse = self.checker.keyed(case, only)
        if fresh:
            self.replayed[data] = tuple(dict.fromkeys(coarse))
        if not violations:
            return
        keys = list(dict.fromkeys(coarse))
        if self.target is None:
            for found in keys if fresh else ():
                self.counts[found] = self.counts.get(found, 0) + 1
            new = next((k for k in keys if k not in self.known), None)
            if new is None:
                return
            if not self.claim():  # another worker's finding stopped the run (exitfirst)
                raise _OutOfTime
            self.target, self.found_at = new, self.position
            self.first_failure, self.original = time.perf_counter(), case
            self.on_shrink(new)
        elif self.target not in keys:
            return  # shrinking keeps the signature: another failure is not this finding
        if self.best is None or _size(case) < _size(self.best[0]):
            self.best = case, violations
        self.failing[data] = case, violations
        raise _Failed

    def late(self) -> bool:
        """Past the hard deadline: a finding is kept as far as it was shrunk."""
        return time.perf_counter() >= self.hard_deadline

    def until(self) -> float | None:
        """The hard deadline for the minimizer (``None``: no budget, no deadline)."""
        return None if self.hard_deadline == math.inf else self.hard_deadline

    def found(self, symptoms: Collection[Signature] = ()) -> None:
        """The finding is recorded: back to generating, past the example that showed it.
        ``symptoms`` (coarse keys) are its own other checks' failures: not findings again."""
        assert self.target is not None and self.first_failure is not None
        self.known.add(self.target)
        self.known.update(symptoms)
        self.counted_upto = max(self.counted_upto, self.found_at)
        self.shrink_seconds += time.perf_counter() - self.first_failure
        self.target, self.best, self.original, self.first_failure = None, None, None, None


def _size(case: Case) -> tuple[int, int]:
    return len(case.text), len(case.chunks)


def _run_batch(
    size: int, search: _Search, seed: int, limit: int, on_finding: Callable[[], bool]
) -> None:
    """One batch: Hypothesis runs, the batch again after each finding until none is new.

    ``on_finding`` records ``search``'s finding and says whether the search goes on.
    """
    search.examples = search.counted_upto = 0
    search.replayed.clear()
    while True:
        search.position = 0
        search.failing.clear()
        try:
            shrunk = engine.search(search.test, size=size, seed=seed, limit=limit)
        except _OutOfTime:
            shrunk = None
        if shrunk is not None:  # Hypothesis's smallest, not ours (``_size``)
            search.best = search.failing[shrunk]
        if search.target is None or not on_finding():
            return


# --- the run ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    factory: Factory
    spec: str
    claim: Claim  # what the detector is judged against: generation, seeds and checks follow it
    seeds: list[Seed]
    timeout: float | None = None  # seconds per message run: see tcr.time_limit
    command: str | None = None  # the harness's command line: a --detector-cmd detector
    exitfirst: bool = False  # stop at the first finding
    max_findings: int | None = None  # stop after this many distinct findings
    writing: tuple[str, ...] | None = None  # blocks written in these claimed dialects only
    checks: tuple[Check, ...] = CHECKS  # the checks run (--check; default: every one)

    @property
    def searches(self) -> bool:
        """Whether any check asked for judges cases: cost alone (and policy's probes) need
        none; policy/inconsistent is told on cases, as replay tells it on recordings."""
        return any(c in RECORDING_CHECKS or c is Check.POLICY for c in self.checks)

    @property
    def repertoire(self) -> Repertoire:
        whole = Repertoire.of(self.claim)
        return whole if self.writing is None else whole.writing(self.writing)


def run(
    *,
    detector: str | Factory | DetectorSpec | None = None,
    budget_s: float | None = None,
    max_examples: int | None = None,
    seed: int = 0,
    dialects: Collection[str] | None = None,
    empty_tools: str | None = None,
    claim: Claim | None = None,
    formats: Collection[str] | None = None,
    special_tokens: str | None = None,
    corpus: Sequence[str | Path] | None = None,
    save: str | Path | None = DEFAULT_SAVE,
    on_progress: Progress | None = None,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
    timeout: float | None = DEFAULT_TIMEOUT,
    exitfirst: bool = False,
    max_findings: int | None = None,
    writing: Collection[str] | None = None,
    policies: Mapping[str, str] | None = None,
    checks: Collection[str] | None = None,
) -> FuzzReport:
    """Fuzz a detector with generated messages and mutated recordings; every distinct finding.

    The detector is judged against its claim (``tcr.claims``): ``dialects`` (``--dialect``;
    ``formats`` is its older name), ``empty_tools`` and ``special_tokens`` put over
    ``claim``, else over the claim the detector or its factory declares. Blocks are
    written in claimed dialects,
    unclaimed markup is mixed in as text, recordings are mutated only when they can be
    labelled for the claim, and no leak and holdback look at claimed markers only. The
    reference detector is restricted to the claim (``StreamDetector(dialects=…)``).

    ``budget_s`` bounds the whole run in wall seconds, setup and shrinking included (it may end
    up to ``LATE`` times it; the cost probe counts in it, and gets ``SHARE`` of it at most:
    ``tcr.fuzz.cost``), ``max_examples`` the search in
    examples (at least one of them; default: 60 s). The search goes on after a finding:
    ``exitfirst`` stops it at the first, ``max_findings`` after that many
    distinct ones. ``corpus``: recordings to mutate (files or directories;
    default the bundled corpora, ``[]`` none). ``save``: where each finding is
    saved as a recording (``None``: not saved). ``shard=(k, n)`` runs the k-th of
    n deterministic shares of the search (1 <= k <= n; ``max_examples`` counts
    the whole search, so the n shards together run it exactly once). ``jobs`` > 1
    spreads the search over that many processes: the counts are summed, the
    budget is the wall time of the run, findings are merged by coarse key and
    (``exitfirst``) the first finding stops every worker. ``writing``: the claimed
    dialects generated blocks are written in (default: every claimed one; the
    detector is still judged against its whole claim). As with
    ``tcr.replay.run``, the workers are fresh processes that import the detector
    factory by name. ``timeout``: CPU seconds one run of one message may take in an
    in-process detector (default as ``tcr fuzz``'s; None: no limit; a ``--detector-cmd``
    harness has its own limit per answer instead). ``checks`` (``--check``): the checks
    run, as ``tcr.replay.run`` takes them (default, or empty: every one); without ``cost``
    the cost probe does not run, without ``policy`` the policy probes still read the
    choices every case is judged with but report nothing. Raises ``TcrError`` for unusable
    options and a worker that dies; a detector that crashes or goes over the time
    limit is a finding (check ``crash``).
    """
    started = time.perf_counter()  # the budget counts the setup and the cost probe too
    if budget_s is not None and budget_s <= 0:
        raise TcrError(f"budget must be positive, not {budget_s} s")
    if max_examples is not None and max_examples < 1:
        raise TcrError(f"max examples must be at least 1, not {max_examples}")
    if max_findings is not None and max_findings < 1:
        raise TcrError(f"--max-findings must be at least 1, not {max_findings}")
    if jobs < 1:
        raise TcrError(f"jobs must be at least 1, not {jobs}")
    if shard is not None:
        check_shard(shard)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    if formats is not None and dialects is not None:
        raise TcrError("formats is the older name of dialects: give one of them")
    chosen = dialects if dialects is not None else formats
    selected = checks_of(checks or None)  # none given: every check (as replay)
    plan, skipped, reading = _plan(
        detector, claim, chosen, (empty_tools, special_tokens), corpus, policies, timeout
    )
    plan = replace(
        plan,
        # in-process only: an alarm while a harness's client waits on its pipe would lose
        # its place in it, and the harness has its own limit per answer
        timeout=check_timeout(timeout) if plan.command is None else None,
        exitfirst=exitfirst,
        max_findings=1 if exitfirst else max_findings,
        writing=_writing(writing, plan.claim),
        checks=selected,
    )
    report = FuzzReport(
        plan.spec,
        seed,
        budget_s,
        max_examples,
        plan.repertoire.blocks,
        skipped=skipped,
        shard=shard,
        jobs=jobs,
        claim=plan.claim,
        checks=selected,
    )
    report.recordings = len(plan.seeds)
    if jobs > 1:
        pickled_for_workers(plan.factory)
    count = batch_count(max_examples, shard)
    workers = jobs if count is None else max(1, min(jobs, count))  # no idle worker
    try:
        if shard is None or shard[0] == 1:  # once per run: the first shard's
            found = policy_findings(reading, plan.spec) if Check.POLICY in selected else []
            if Check.COST in selected:
                report.phase = "cost"
                if on_progress is not None:
                    on_progress(report)
                share = _deadline(started, budget_s, SHARE)  # never: no budget
                report.cost, costly = cost_findings(
                    plan.factory,
                    plan.spec,
                    plan.claim,
                    plan.timeout,
                    None if share == math.inf else share,
                )
                found += costly
            report.findings = found[: plan.max_findings]
            if plan.max_findings is not None and len(report.findings) >= plan.max_findings:
                report.stopped = "failure" if plan.exitfirst else "max_findings"
                report.seconds = time.perf_counter() - started
                return report
        if not plan.searches:  # --check cost (or policy's probes) alone: no case to judge
            report.stopped = "checks"
            report.seconds = time.perf_counter() - started
        elif workers > 1:
            _search_in_processes(report, plan, workers, save, on_progress, started)
        else:
            _search(report, plan, save, on_progress, started)
    except FactoryError as error:  # the cost probe's factory failed
        raise TcrError(str(error)) from None
    except FactoryFailed as error:
        raise TcrError(str(error)) from None  # it names the factory
    return report


def _writing(writing: Collection[str] | None, claim: Claim) -> tuple[str, ...] | None:
    """``writing`` checked against the claim: claimed dialect ids, at least one."""
    if writing is None:
        return None
    if isinstance(writing, str):
        raise TcrError(f"writing: a collection of dialect ids, not the string {writing!r}")
    claimed = Repertoire.of(claim).blocks
    unclaimed = sorted(set(writing) - set(claimed))
    if unclaimed or not writing:
        why = f"{', '.join(unclaimed)} not claimed" if unclaimed else "no dialect named"
        raise TcrError(f"writing: {why}; the claim writes {', '.join(claimed)}")
    return tuple(d for d in claimed if d in writing)


def _search(
    report: FuzzReport,
    plan: _Plan,
    save: str | Path | None,
    on_progress: Progress | None,
    run_started: float,
) -> None:
    started = time.perf_counter()
    checker = CaseChecker(plan.factory, plan.timeout, plan.claim, plan.checks)
    deadline = _deadline(run_started, report.budget_s)
    hard = _deadline(run_started, report.budget_s, LATE)
    search = _Search(checker, deadline, started, hard_deadline=hard)
    _run_batches(
        report,
        plan,
        search,
        batches(report.seed, report.max_examples, shard=report.shard),
        on_progress,
    )
    report.findings = [_saved(f, report, plan, save) for f in report.findings]
    report.seconds = time.perf_counter() - run_started


def _search_in_processes(
    report: FuzzReport,
    plan: _Plan,
    workers: int,
    save: str | Path | None,
    on_progress: Progress | None,
    run_started: float,
) -> None:
    started, wall_started = time.perf_counter(), time.time()
    spent = started - run_started  # on the cost probe: the workers' budget is what is left
    report.phase = ""  # the workers' phases are their own

    def progress(generated: int, mutated: int) -> None:
        report.generated, report.mutated = generated, mutated
        report.search_seconds = time.perf_counter() - started
        if on_progress is not None:
            on_progress(report)

    work = (plan, report, workers, wall_started, spent)
    parts = run_workers(_work, [work] * workers, on_counts=progress)
    report.generated = sum(part.generated for part in parts)
    report.mutated = sum(part.mutated for part in parts)
    for part in parts:
        for dialect, n in part.by_dialect.items():
            report.by_dialect[dialect] = report.by_dialect.get(dialect, 0) + n
    report.search_seconds = max(part.search_seconds for part in parts)
    stops = [p.stopped for p in parts]
    report.stopped = next(
        (why for why in ("failure", "max_findings", "budget") if why in stops), "max_examples"
    )
    merged = [*report.findings, *merge_findings([part.findings for part in parts])]
    if plan.max_findings is not None:
        merged = merged[: plan.max_findings]
    report.findings = [_saved(f, report, plan, save) for f in merged]
    report.seconds = time.perf_counter() - run_started


def merge_findings(parts: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The workers' findings, one per coarse key (the first worker's), counts added."""
    merged: dict[Signature, Finding] = {}
    for findings in parts:
        for finding in findings:
            coarse = finding.signature.coarse
            same = merged.get(coarse)
            if same is None:
                merged[coarse] = finding
            else:
                merged[coarse] = replace(same, count=same.count + finding.count)
    return list(merged.values())


def _work(
    worker: int, plan: _Plan, whole: FuzzReport, workers: int, wall_started: float, spent: float
) -> FuzzReport:
    """One worker process's part of the search, findings shrunk (not saved)."""
    state = shared()
    # the search's start on this process's clock; the budget is the wall time of the whole
    # run, ``spent`` of it already on the cost probe
    started = time.perf_counter() - (time.time() - wall_started)
    part = FuzzReport(
        whole.detector,
        whole.seed,
        whole.budget_s,
        whole.max_examples,
        whole.formats,
        shard=whole.shard,
        claim=whole.claim,
    )
    checker = CaseChecker(plan.factory, plan.timeout, plan.claim, plan.checks)
    # Only --exitfirst lets one worker's finding stop the others.
    claim = state.claim if plan.exitfirst else _always
    deadline = _deadline(started - spent, whole.budget_s)
    hard = _deadline(started - spent, whole.budget_s, LATE)
    search = _Search(checker, deadline, started, state.stopped, claim, hard)
    schedule = batches(
        whole.seed, whole.max_examples, shard=whole.shard, jobs=workers, worker=worker
    )

    def progress(report: FuzzReport) -> None:
        state.count(worker, report.generated, report.mutated)

    _run_batches(part, plan, search, schedule, progress)
    state.count(worker, part.generated, part.mutated)
    return part


def _deadline(started: float, budget_s: float | None, late: float = 1.0) -> float:
    """When ``late`` times the budget is spent (none: never)."""
    return started + budget_s * late if budget_s is not None else math.inf


def _run_batches(
    report: FuzzReport,
    plan: _Plan,
    search: _Search,
    schedule: Iterable[Batch],
    on_progress: Progress | None,
) -> None:
    """Run the batches until they end, the budget, enough findings, or another worker's stop.

    Each finding goes into ``report.findings`` as it is shrunk; the counts of
    their signatures are filled in at the end.
    """
    report.stopped = "max_examples"  # also when there is no batch (a shard of a short search)

    mutating = False  # the batch being run

    def on_shrink(found: Signature) -> None:
        if on_progress is None:
            return
        so_far = replace(report, phase="shrink", shrinking=str(found))  # this batch counted too
        so_far.by_dialect = dict(search.by_dialect)
        if mutating:
            so_far.mutated += search.examples
        else:
            so_far.generated += search.examples
        on_progress(so_far)

    search.on_shrink = on_shrink

    def on_finding() -> bool:
        finding = _finding(search, search.checker, report)
        report.findings.append(finding)
        # past the hard deadline no example is drawn again: no symptom to tell apart
        search.found(() if search.late() else _symptoms(finding, search.checker))
        if plan.max_findings is not None and len(report.findings) >= plan.max_findings:
            report.stopped = "failure" if plan.exitfirst else "max_findings"
            return False
        return True

    try:
        for batch, last in _with_last(schedule):
            mutating = bool(plan.seeds) and batch.mutates
            report.phase, report.shrinking = ("mutate" if mutating else "generate"), ""
            if mutating:
                search.decode = _as_claimed(partial(_mutated_case, plan.seeds), plan.claim)
            else:
                search.decode = _as_claimed(partial(_generated_case, plan.repertoire), plan.claim)
            _run_batch(
                MUTATED_BYTES if mutating else GENERATED_BYTES,
                search,
                batch.seed,
                batch.limit,
                on_finding,
            )
            if mutating:
                report.mutated += search.examples
            else:
                report.generated += search.examples
            report.search_seconds = time.perf_counter() - search.started - search.shrink_seconds
            report.by_dialect = dict(search.by_dialect)
            report.phase, report.shrinking = ("mutate" if mutating else "generate"), ""
            if report.stopped in ("failure", "max_findings"):
                return
            if search.stopped():
                report.stopped = "stopped"
                return
            if last and search.examples >= batch.limit:
                return  # every example of the schedule ran
            if time.perf_counter() >= search.deadline:
                report.stopped = "budget"
                return
            if on_progress is not None and not last:
                on_progress(report)
    finally:
        report.findings = [
            replace(f, count=search.counts.get(f.signature.coarse, f.count))
            for f in report.findings
        ]


def _with_last(schedule: Iterable[Batch]) -> Iterator[tuple[Batch, bool]]:
    """Each batch, and whether it is the last one."""
    pending = iter(schedule)
    batch = next(pending, None)
    while batch is not None:
        following = next(pending, None)
        yield batch, following is None
        batch = following


def _plan(
    detector: str | Factory | DetectorSpec | None,
    claim: Claim | None,
    dialects: Collection[str] | None,
    choices: tuple[str | None, str | None],  # empty_tools, special_tokens
    corpus: Sequence[str | Path] | None,
    policies: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[_Plan, list[str], PolicyReading]:
    empty_tools, special_tokens = choices
    if claim is not None:  # given whole, its parts stand for the options not given
        if dialects is None and claim.dialects is not None:
            dialects = sorted(claim.dialects)
        if empty_tools is None and "empty_tools" in claim.policies.pinned:
            empty_tools = claim.empty_tools
        special_tokens = claim.special_tokens if special_tokens is None else special_tokens
        policies = {**claim.policies.pinned_map(), **(policies or {})}
    spec = resolve_detector(
        detector,
        dialects=None if dialects is None else list(dialects),
        empty_tools=empty_tools,
        special_tokens=special_tokens,
        policies=policies,
    )
    # The choices first: every case is judged with them. The probes run under the
    # per-message limit (in-process only, as the cases do): a detector that hangs must
    # not hang the run before its first case.
    probe_limit = None if spec.command is not None else check_timeout(timeout)
    spec, reading = read_spec(spec, timeout=probe_limit)
    if corpus is None:
        from tcr.corpora import bundled

        paths = bundled()
    else:
        from tcr.corpus import iter_recordings

        paths = list(iter_recordings([Path(p) for p in corpus]))
    seeds, skipped = load_seeds(paths, claim=spec.claim)
    plan = _Plan(spec.factory, spec.name, spec.claim, seeds, command=spec.command)
    return plan, skipped, reading


def _finding(search: _Search, checker: CaseChecker, report: FuzzReport) -> Finding:
    """The new finding as Hypothesis shrank it, its split points then cut to a 1-minimal set,
    every step keeping its signature key. Past the hard deadline no step starts, and a
    step under way stops there: the finding is kept as far as it was shrunk, and is not
    judged again for its symptoms."""
    assert search.best is not None and search.original is not None
    assert search.first_failure is not None
    case, violations = search.best
    target = search.target or key(violations[0]).coarse

    def fails(chunks: Sequence[str]) -> bool:  # the same text: its unsplit run stays as it was
        found = checker.check(replace(case, chunks=tuple(chunks)), [Check(target.check)])
        return any(key(v) == target.key for v in found)

    flaky = False
    markers = special_markers(target.dialect, checker.claim)
    settle = partial(
        minimize_splits,
        deadline=search.until(),
        clock=time.perf_counter,  # the search's clock (a test may stand in for it)
        keep_whole=markers,
        rank=partial(split_rank, claim=checker.claim),
    )
    # Over the time limit, each try could take the whole limit again: shown as found.
    if len(case.chunks) > 1 and target.kind != TIMEOUT and not search.late():
        try:
            case = replace(case, chunks=tuple(settle(case.chunks, fails, budget=2000)))
        except NotFailing:  # it failed a moment ago: the detector answers at random
            flaky = True
    if not flaky and target.check not in _KEEPS_TEXT and target.kind != TIMEOUT:
        shorter = None if search.late() else _shortest(case, checker, target, markers, search)
        if shorter is not None:
            case = shorter
            # settled again in the shorter text, as replaying the saved case will settle it
            if not search.late():
                with contextlib.suppress(NotFailing):
                    case = replace(case, chunks=tuple(settle(case.chunks, fails, budget=500)))
    shapes: tuple[tuple[Signature, str], ...] = ()
    if not flaky and target.kind != TIMEOUT and not search.late():
        # every check judges the shrunk case: the others it fails are its symptoms
        read = _read(case, checker.claim)
        judged, coarse = checker.keyed(read)
        violations = judged or violations
        shapes = tuple((k.key, k.shape) for k in coarse if k.shape in UNSPLIT[1:])
        if target.check == Check.INVARIANCE and len(case.chunks) > 1:
            # where the chunking differs from a wrong unsplit run it may be the right one:
            # the unsplit run's failures are its symptoms too (tcr.findings)
            shown = {key(v) for v in violations}
            unsplit, coarse = checker.keyed(replace(read, chunks=(read.text,)))
            more = [(v, k) for v, k in zip(unsplit, coarse, strict=True) if key(v) not in shown]
            violations = [*violations, *(v for v, _ in more)]
            shapes += tuple((k.key, k.shape) for _, k in more)
            # A failure the chunking shows as the unsplit run does needs no split: it is
            # named by the unsplit run's shape (both runs accept a broken call, say, and
            # differ only in what they make of its arguments).
            named = {k for k, _ in shapes}
            shapes += tuple(
                (k.key, k.shape)
                for v, k in zip(unsplit, coarse, strict=True)
                if key(v) in shown and k.key not in named and k.key != target.key
            )
    violation = next((v for v in violations if key(v) == target.key), violations[0])
    if flaky:
        violation = replace(violation, message=f"{violation.message} ({FLAKY})")
    others = tuple(v for v in violations if v is not violation and key(v) != target.key)
    found = signature(violation, case.chunks, claim=checker.claim)
    if target.shape in UNSPLIT:  # the unsplit run showed it: so it is, shrunk or not (timeout)
        found = replace(found, shape=target.shape)
    return Finding(
        violation=violation,
        violations=(violation, *others),
        case=case,
        found_after=report.examples + search.examples,
        seconds_to_find=search.first_failure - search.started,
        shrink_seconds=time.perf_counter() - search.first_failure,
        original_length=len(search.original.text),
        original_splits=len(search.original.chunks) - 1,
        signature=found,
        count=search.counts.get(target, 1),
        shapes=shapes,
    )


def _read(case: Case, claim: Claim) -> Case:
    """``case``, or, where it has no truth (a mutation broke a block, shrinking cut its
    text), the case with the reading of the reference restricted to ``claim`` as its truth.
    Only to tell a finding's symptoms, never to find one (the reference is under test too):
    a call left unterminated that a detector accepts fails ``expected`` unsplit, and a
    chunking that rejects it is that run's symptom (``tcr.findings``), not a finding that
    blames the split."""
    if case.truth is not None:
        return case
    # read with the claim's choices (tools=[] may mean parse or drop, which the reference
    # detector itself does not take)
    reading = read(
        case.text,
        case.tools,
        dialects=claim.dialects,
        policies=claim.policies,
        tool_specs=case.tool_specs,
    )
    return replace(case, truth=Truth.from_expectation(expectation_of(reading.events).to_map()))


def _symptoms(finding: Finding, checker: CaseChecker) -> list[Signature]:
    """The coarse keys of the other checks that the shrunk case of a chunk-dependent finding
    fails in its dialect: one minimal chunking makes them all fail (``tcr.findings``)."""
    if finding.signature.shape in UNSPLIT or len(finding.violations) < 2:
        return []
    _, coarse = checker.keyed(finding.case)
    return [
        k
        for k in coarse
        if k.shape not in UNSPLIT
        and k.dialect == finding.signature.dialect
        and k.check != finding.check
    ]


# Checks whose verdict the text alone does not settle: expected needs the ground truth
# of the text as generated, and warm-cold runs on a sample of cases chosen by their text.
_KEEPS_TEXT = (Check.EXPECTED, Check.WARM_COLD)


def _shortest(
    case: Case, checker: CaseChecker, target: Signature, markers: tuple[str, ...], search: _Search
) -> Case | None:
    """The case cut to its shortest text that still shows ``target`` (ddmin over characters,
    then split points, until ``search``'s hard deadline), or ``None`` when nothing could be cut.

    Hypothesis shrinks the bytes a message is drawn from, and cannot always drop a part
    of a message without changing the finding; deleting characters can. The ground truth
    is of the text as generated, so a cut case has none (no check it needs is the target).
    A split never moves to a more telling place than it settled in: cutting the preamble
    a split falls in down to nothing would move it onto the marker after it, and make one
    bug two findings (cutting the marker a split sits next to, so that it falls in text,
    is fine).
    """
    bare = replace(case, truth=None)
    only = [Check(target.check)]

    proxy = bool(special_split(case.chunks, markers))
    settled = shape(case.chunks, checker.claim) if target.shape not in UNSPLIT else ""
    telling = SHAPES.index(settled) if settled else 0

    def fails(chunks: Sequence[str]) -> bool:  # another text: its unsplit run must agree too
        if bool(special_split(chunks, markers)) != proxy:  # a cut it did not need, or lost
            return False
        if settled and SHAPES.index(shape(chunks, checker.claim)) < telling:  # more telling
            return False
        if cuts_whole_token(chunks, checker.claim):  # characters deleted around a token
            return False
        return target in checker.keyed(replace(bare, chunks=tuple(chunks)), only)[1]

    try:
        chunks = minimize_text(
            case.chunks, fails, budget=2000, deadline=search.until(), clock=time.perf_counter
        )
    except NotFailing:  # it needs the truth after all, or the detector answers at random
        return None
    return replace(bare, chunks=tuple(chunks)) if len("".join(chunks)) < len(case.text) else None


def _saved(finding: Finding, report: FuzzReport, plan: _Plan, save: str | Path | None) -> Finding:
    if probed(finding.check, finding.violation.kind):  # a probe, rebuilt by its reproducer
        return finding
    finding = replace(finding, snippet=_snippet(finding, plan))
    if save is None:
        return finding
    path = save_case(finding, Path(save), seed=report.seed, detector=plan.spec)
    detector = None if plan.spec == REFERENCE else plan.spec
    # the checks asked for, restated, but the cost probe's: a recording does not show it
    asked = [] if plan.checks == CHECKS else [c for c in plan.checks if c is not Check.COST]
    replay, tui = commands(path, detector, plan.claim.options(), asked)
    return replace(finding, saved=path, replay_command=replay, tui_command=tui)


def _snippet(finding: Finding, plan: _Plan) -> str:
    """The shrunk case as a pytest regression test (``tcr.snippet``)."""
    case, check = finding.case, finding.check
    # policy/inconsistent is told from expected: its snippet needs the truth too
    told = check is Check.EXPECTED or (
        check is Check.POLICY and finding.violation.kind == INCONSISTENT
    )
    expected = told and case.truth is not None
    return regression_test(
        case.chunks,
        check=str(check),
        found=finding.signature.label,
        origin="tcr fuzz",
        detector=None if plan.spec == REFERENCE else plan.spec,
        tools=case.tools,
        claim=plan.claim,
        tool_specs=case.tool_specs if accepts_keyword(plan.factory, "tool_specs") else None,
        expectation=case.truth.expected().to_map() if expected and case.truth else None,
    )
