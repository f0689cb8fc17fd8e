"""Replay recordings through a detector under every rechunking, and shrink what fails.

``run()`` is what ``tcr replay`` calls. It never stops at a bad input: a corrupt
recording, a factory that raises or a detector that crashes is reported with
the path (and chunk index) and the run goes on with the next recording.
"""

from __future__ import annotations

import pickle
import shlex
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from tcr.corpus import iter_recordings, read_recording
from tcr.detector.loader import Factory, load_factory, make_detector
from tcr.detector.stdio import CommandFactory
from tcr.errors import TcrError
from tcr.minimize import minimize_splits, minimize_text
from tcr.oracle import CHECKS, TRACE_CHECKS, Verdict, Violation, check_trace, warm_cold_verdict
from tcr.rechunk import DEFAULT_STRATEGIES, Chunking, Strategy, parse_strategy, splits_spec
from tcr.stream import Decoded, decode, decode_bytes
from tcr.trace import Trace, describe_error, run_trace

from .model import Failure, InputError, Outcome, Report, display_path

__all__ = [
    "DEFAULT_TRANSPORT_STRATEGIES",
    "LAYERS",
    "check_chunks",
    "parse_shard",
    "run",
    "select_shard",
]

LAYERS = ("content", "transport")
DEFAULT_TRANSPORT_STRATEGIES = ("bytes:1", "bytes-random")
MINIMIZE_BUDGET = 4000  # predicate calls per failure: a bound, never reached in practice
Progress = Callable[[str, int, int], None]  # (recording, done so far, total)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything fixed for a whole run, validated before the first recording."""

    factory: Factory
    detector_spec: str | None
    detector_cmd: str | None  # a --detector-cmd harness, named so in reproducers
    strategies: tuple[Strategy, ...]
    runs: int
    seed: int
    tools: tuple[str, ...] | None
    checks: tuple[str, ...]
    layer: str
    exitfirst: bool
    minimize: bool


def run(
    paths: Iterable[str | Path] | None = None,
    *,
    strategies: Sequence[str] | None = None,
    runs: int = 20,
    seed: int = 0,
    detector: str | Factory | None = None,
    tools: Sequence[str] | None = None,
    checks: Collection[str] | None = None,
    layer: str = "content",
    exitfirst: bool = False,
    minimize: bool = True,
    on_progress: Progress | None = None,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
) -> Report:
    """Replay recordings (files or directories; None: the bundled corpora).

    ``shard=(k, n)`` replays the k-th of n deterministic shares of the sorted
    recordings (1 <= k <= n; the n shards cover every recording exactly once).
    ``jobs`` > 1 replays recordings in that many processes; the report is the
    same, in the same order. Raises ``TcrError`` only for unusable options (a
    bad strategy, an unknown check, a detector that cannot be loaded, a missing
    path); everything found while replaying goes into the ``Report``.
    """
    plan = _plan(strategies, runs, seed, detector, tools, checks, layer, exitfirst, minimize)
    if jobs < 1:
        raise TcrError(f"--jobs must be at least 1, not {jobs}")
    if paths is None:
        from tcr.corpora import bundled

        files = bundled()
    else:
        files = list(iter_recordings(list(paths)))
    files = select_shard(files, shard)
    report = Report()
    started = time.perf_counter()
    if jobs > 1 and len(files) > 1 and not exitfirst:
        _replay_in_processes(files, plan, report, jobs, on_progress)
    else:
        for done, path in enumerate(files):
            if on_progress is not None:
                on_progress(display_path(path), done, len(files))
            _replay_file(path, plan, report)
            if plan.exitfirst and (report.failures or report.errors):
                report.stopped_early = True
                break
    report.seconds = time.perf_counter() - started
    return report


def parse_shard(spec: str) -> tuple[int, int]:
    """``"2/3"`` → ``(2, 3)``; anything else is a ``TcrError`` naming the form."""
    k, sep, n = spec.partition("/")
    try:
        shard = (int(k), int(n))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise TcrError(f"--shard {spec!r}: expected K/N with 1 <= K <= N, e.g. 2/3")
    return shard


def select_shard(files: Sequence[Path], shard: tuple[int, int] | None) -> list[Path]:
    """Round-robin over the sorted recordings: deterministic and balanced."""
    ordered = sorted(files, key=lambda p: display_path(p))
    if shard is None:
        return ordered
    k, n = shard
    if not 1 <= k <= n:
        raise TcrError(f"shard {k}/{n}: expected 1 <= K <= N")
    return ordered[k - 1 :: n]


def _replay_in_processes(
    files: Sequence[Path], plan: _Plan, report: Report, jobs: int, on_progress: Progress | None
) -> None:
    # Each worker replays one recording and sends back its part of the report;
    # the parts are merged in the order of the files, so output does not depend
    # on which process finished first.
    try:
        pickle.dumps(plan)
    except Exception:
        raise TcrError(
            "--jobs needs a detector factory importable by name (package.module:factory), "
            "not a local function or lambda"
        ) from None
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_replay_one, path, plan) for path in files]
        for done, future in enumerate(futures):
            if on_progress is not None:
                on_progress(display_path(files[done]), done, len(files))
            part = future.result()
            report.outcomes += part.outcomes
            report.errors += part.errors


def _replay_one(path: Path, plan: _Plan) -> Report:
    part = Report()
    _replay_file(path, plan, part)
    return part


def check_chunks(
    chunks: Sequence[str],
    *,
    detector: str | Factory | None = None,
    tools: Sequence[str] | None = None,
    checks: Collection[str] = TRACE_CHECKS,
    expectation: Mapping[str, Any] | None = None,
) -> Verdict:
    """Check one chunking against the whole run: what a pinned regression test calls."""
    factory = load_factory(detector) if detector is None or isinstance(detector, str) else detector
    text = "".join(chunks)
    whole = run_trace(make_detector(factory, tools), [text] if text else [], states=False)
    trace = run_trace(make_detector(factory, tools), chunks, states=False)
    return check_trace(trace, whole=whole, checks=checks, expectation=expectation)


def _plan(
    strategies: Sequence[str] | None,
    runs: int,
    seed: int,
    detector: str | Factory | None,
    tools: Sequence[str] | None,
    checks: Collection[str] | None,
    layer: str,
    exitfirst: bool,
    minimize: bool,
) -> _Plan:
    if layer not in LAYERS:
        raise TcrError(f"layer {layer!r}: expected one of {', '.join(LAYERS)}")
    if strategies is None or not strategies:
        strategies = DEFAULT_TRANSPORT_STRATEGIES if layer == "transport" else DEFAULT_STRATEGIES
    parsed = tuple(parse_strategy(spec) for spec in strategies)
    if layer == "content" and any(s.transport for s in parsed):
        bad = next(s.spec for s in parsed if s.transport)
        raise TcrError(f"rechunk strategy {bad!r} re-splits transport bytes: add --layer transport")
    if runs < 1:
        raise TcrError(f"--runs must be at least 1, not {runs}")
    chosen = tuple(CHECKS) if checks is None or not checks else tuple(checks)
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown:
        raise TcrError(f"unknown check {unknown[0]!r}; known: {', '.join(CHECKS)}")
    command: str | None = None
    if isinstance(detector, str) or detector is None:
        factory, spec = load_factory(detector), detector
    elif isinstance(detector, CommandFactory):
        factory, spec, command = detector, None, detector.command
    else:
        factory, spec = detector, getattr(detector, "__module__", "?") + ":" + detector.__qualname__
    return _Plan(
        factory=factory,
        detector_spec=spec,
        detector_cmd=command,
        strategies=parsed,
        runs=runs,
        seed=seed,
        tools=None if tools is None else tuple(tools),
        checks=chosen,
        layer=layer,
        exitfirst=exitfirst,
        minimize=minimize,
    )


def _replay_file(path: Path, plan: _Plan, report: Report) -> None:
    shown = display_path(path)
    try:
        recording = read_recording(path)
        decoded = decode(recording)
    except TcrError as error:
        report.errors.append(InputError(shown, str(error)))
        return
    tools = plan.tools if plan.tools is not None else recording.tools
    incomplete = None if recording.complete else recording.incomplete_reason
    if plan.layer == "transport":
        body = b"".join(f.data for f in recording.frames if isinstance(f.data, bytes))
        for strategy in plan.strategies:
            outcome = Outcome(shown, recording.id, strategy.spec, incomplete=incomplete)
            report.outcomes.append(outcome)
            _transport(outcome, strategy, recording.kind, body, decoded, plan)
        return
    text = decoded.text
    try:
        whole = run_trace(make_detector(plan.factory, tools), [text] if text else [], states=False)
    except Exception as error:  # the factory itself raised: nothing to replay
        report.errors.append(InputError(shown, f"detector factory raised {describe_error(error)}"))
        return
    replay = _Replay(shown, plan, tools, text, whole, recording.expect)
    for strategy in plan.strategies:
        outcome = Outcome(shown, recording.id, strategy.spec, incomplete=incomplete)
        report.outcomes.append(outcome)
        chunkings = strategy.chunkings(
            text, original=decoded.content, runs=plan.runs, seed=plan.seed
        )
        replay.strategy(outcome, chunkings)
        if plan.exitfirst and not outcome.ok:
            return
    if "warm_cold" in plan.checks:
        outcome = Outcome(shown, recording.id, "warm-cold", incomplete=incomplete)
        report.outcomes.append(outcome)
        replay.warm_cold(outcome, decoded.content)


class _Replay:
    """One recording's content, replayed strategy after strategy."""

    def __init__(
        self,
        path: str,
        plan: _Plan,
        tools: Sequence[str] | None,
        text: str,
        whole: Trace,
        expect: Mapping[str, Any] | None,
    ) -> None:
        self.path = path
        self.plan = plan
        self.tools = tools
        self.text = text
        self.whole = whole
        self.expect = expect if "expected" in plan.checks else None
        self.trace_checks = tuple(c for c in plan.checks if c in TRACE_CHECKS)

    def new(self) -> Any:
        return make_detector(self.plan.factory, self.tools)

    def strategy(self, outcome: Outcome, chunkings: Iterable[Chunking[str]]) -> None:
        started = time.perf_counter()
        seen: set[str] = set()
        ran: set[str] = set()
        for chunking in chunkings:
            try:
                trace = run_trace(self.new(), chunking.chunks, states=False)
            except Exception as error:
                outcome.error = f"detector factory raised {describe_error(error)}"
                break
            verdict = check_trace(
                trace, whole=self.whole, checks=self.trace_checks, expectation=self.expect
            )
            outcome.runs += 1
            outcome.chars += len(self.text)
            ran.update(verdict.ran)
            outcome.skipped.update(verdict.skipped)
            if not verdict.violations:
                continue
            outcome.failing_runs += 1
            for violation in verdict.violations:
                if violation.check not in seen:
                    seen.add(violation.check)
                    outcome.failures.append(self.shrink(chunking, violation))
            if self.plan.exitfirst:
                break
        outcome.checks = tuple(c for c in CHECKS if c in ran)
        for check in ran:
            outcome.skipped.pop(check, None)
        outcome.seconds = time.perf_counter() - started

    def warm_cold(self, outcome: Outcome, chunks: Sequence[str]) -> None:
        started = time.perf_counter()
        try:
            verdict = warm_cold_verdict(self.plan.factory, chunks, tools=self.tools)
        except TcrError as error:
            outcome.error = str(error)
            return
        outcome.runs, outcome.chars = 1, len(self.text)
        outcome.checks = verdict.ran
        outcome.skipped.update(verdict.skipped)
        if verdict.violations:
            outcome.failing_runs = 1
            label = "original"
            chunking = Chunking("original", label, tuple(chunks))
            outcome.failures.append(self.shrink(chunking, verdict.violations[0]))
        outcome.seconds = time.perf_counter() - started

    # -- shrinking ---------------------------------------------------------------

    def fails(self, check: str) -> Callable[[Sequence[str]], bool]:
        """Same text, another chunking: does ``check`` still fail?"""
        if check == "warm_cold":
            return lambda chunks: bool(
                warm_cold_verdict(self.plan.factory, list(chunks), tools=self.tools).violations
            )

        def fails(chunks: Sequence[str]) -> bool:
            trace = run_trace(self.new(), chunks, states=False)
            verdict = check_trace(trace, whole=self.whole, checks=(check,), expectation=self.expect)
            return any(v.check == check for v in verdict.violations)

        return fails

    def fails_shorter(self, check: str) -> Callable[[Sequence[str]], bool]:
        """Another text: the whole run is redone for it (no expectation applies)."""

        def fails(chunks: Sequence[str]) -> bool:
            text = "".join(chunks)
            whole = run_trace(self.new(), [text] if text else [], states=False)
            trace = run_trace(self.new(), chunks, states=False)
            verdict = check_trace(trace, whole=whole, checks=(check,))
            return any(v.check == check for v in verdict.violations)

        return fails

    def shrink(self, chunking: Chunking[str], violation: Violation) -> Failure:
        check = violation.check
        chunks: Sequence[str] = chunking.chunks
        if self.plan.minimize and len(chunks) > 1:
            chunks = minimize_splits(chunks, self.fails(check), budget=MINIMIZE_BUDGET)
        splits = Chunking("splits", "min", tuple(chunks)).splits
        violation = self.violation_on(chunks, check) or violation
        shortest: Sequence[str] = chunks
        # The reproducer keeps the recorded text; the pytest snippet needs only the
        # content, so it gets the shortest text that still fails the same check.
        if self.plan.minimize and check not in ("expected", "warm_cold"):
            try:
                shortest = minimize_text(chunks, self.fails_shorter(check), budget=MINIMIZE_BUDGET)
            except ValueError:  # fails only on the whole text (e.g. needs the recorded context)
                shortest = chunks
        return Failure(
            violation=violation,
            label=chunking.label,
            splits=splits,
            original_splits=len(chunking.chunks) - 1,
            chunks=tuple(shortest),
            reproducer=self.reproducer(splits, check),
            snippet=self.snippet(shortest, check),
        )

    def violation_on(self, chunks: Sequence[str], check: str) -> Violation | None:
        if check == "warm_cold":
            found = warm_cold_verdict(self.plan.factory, list(chunks), tools=self.tools).violations
        else:
            trace = run_trace(self.new(), chunks, states=False)
            found = check_trace(
                trace, whole=self.whole, checks=(check,), expectation=self.expect
            ).violations
        return next((v for v in found if v.check == check), None)

    def options(self) -> list[str]:
        args: list[str] = []
        if self.plan.detector_spec:
            args += ["--detector", self.plan.detector_spec]
        if self.plan.detector_cmd:
            args += ["--detector-cmd", self.plan.detector_cmd]
        if self.plan.tools is not None:
            args += ["--tools", ",".join(self.plan.tools)]
        return args

    def reproducer(self, splits: Sequence[int], check: str) -> str:
        spec = splits_spec(splits) if splits else "whole"
        cmd = ["tcr", "replay", self.path, "--rechunk", spec, *self.options(), "--check", check]
        return shlex.join(cmd)

    def snippet(self, chunks: Sequence[str], check: str) -> str:
        name = "test_" + "".join(c if c.isalnum() else "_" for c in f"{check}_regression")
        detector = f", detector={self.plan.detector_spec!r}" if self.plan.detector_spec else ""
        imports = "from tcr.replay import check_chunks\n"
        if self.plan.detector_cmd:
            detector = f", detector=command_factory({self.plan.detector_cmd!r})"
            imports = "from tcr.detector.stdio import command_factory\n" + imports
        tools = "" if self.tools is None else f", tools={list(self.tools)!r}"
        expect = ""
        if check == "expected" and self.expect is not None:
            expect = f", expectation={dict(self.expect)!r}"
        return (
            f"{imports}\n\n"
            f"def {name}() -> None:\n"
            f"    # shrunk by tcr replay from {self.path}\n"
            f"    chunks = {list(chunks)!r}\n"
            f"    verdict = check_chunks(chunks{detector}{tools}, checks=[{check!r}]{expect})\n"
            "    assert verdict.ok, verdict.violations\n"
        )


# -- transport layer -----------------------------------------------------------------


def _transport(
    outcome: Outcome, strategy: Strategy, kind: str, body: bytes, reference: Decoded, plan: _Plan
) -> None:
    """Re-split the raw body bytes: decoding must not change (DESIGN §6)."""
    started = time.perf_counter()
    if kind == "chunks":
        outcome.skipped["transport"] = "an engine chunks recording has no transport bytes"
        return
    outcome.checks = ("transport",)
    want = _decoded_fields(reference)
    for chunking in strategy.chunkings(body, runs=plan.runs, seed=plan.seed):
        outcome.runs += 1
        outcome.chars += len(body)
        try:
            got = _decoded_fields(decode_bytes(kind, chunking.chunks))
            differs = next((k for k in want if got[k] != want[k]), None)
            message = (
                f"decoding changed under {chunking.label}: {differs} differs" if differs else ""
            )
        except TcrError as error:
            message = f"decoding failed under {chunking.label}: {error}"
        if not message:
            continue
        outcome.failing_runs += 1
        if not outcome.failures:
            spec = splits_spec(chunking.splits) if chunking.splits else "whole"
            cmd = ["tcr", "replay", outcome.path, "--layer", "transport", "--rechunk", spec]
            violation = Violation("transport", message, None, None, "")
            outcome.failures.append(
                Failure(
                    violation,
                    chunking.label,
                    chunking.splits,
                    len(chunking.splits),
                    (),
                    shlex.join(cmd),
                    "",
                )
            )
        if plan.exitfirst:
            break
    outcome.seconds = time.perf_counter() - started


def _decoded_fields(decoded: Decoded) -> dict[str, object]:
    return {f.name: getattr(decoded, f.name) for f in fields(decoded)}
