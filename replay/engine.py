"""One recording replayed outcome by outcome: the work behind ``tcr replay``, in any process.

A ``Plan`` is everything fixed for a run. ``load()`` reads and decodes a recording
once and runs it whole; ``Replay.outcome(slot)`` replays one of the plan's slots
(a strategy, or warm-cold), or only a range of a random strategy's runs, and
returns the failing chunkings as found; ``Replay.shrink`` turns each into a
``Failure``. Finding and shrinking are apart so that ``--jobs`` (``jobs.py``) can
find in several processes and shrink only the failures the merged report keeps:
the first chunking to fail each check, as one process replaying in order keeps.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from tcr.corpus import Recording, read_recording
from tcr.detector.loader import Factory, make_detector
from tcr.errors import TcrError
from tcr.minimize import minimize_splits, minimize_text
from tcr.oracle import CHECKS, TRACE_CHECKS, Violation, check_trace, warm_cold_verdict
from tcr.rechunk import Chunking, Strategy, splits_spec
from tcr.stream import Decoded, decode, decode_bytes
from tcr.trace import Trace, describe_error, run_trace

from .model import Failure, InputError, Outcome, display_path

__all__ = ["Found", "Plan", "Replay", "load"]

MINIMIZE_BUDGET = 4000  # predicate calls per failure: a bound, never reached in practice

Found = tuple[Chunking[str], Violation]  # a failing chunking, not shrunk yet


@dataclass(frozen=True, slots=True)
class Plan:
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

    @property
    def slots(self) -> tuple[Strategy | None, ...]:
        """What each outcome of a recording replays, in report order (``None``: warm-cold)."""
        warm_cold = self.layer == "content" and "warm_cold" in self.checks
        return (*self.strategies, *((None,) if warm_cold else ()))


def load(path: Path, plan: Plan) -> Replay | InputError:
    """A recording read, decoded and (content layer) run whole; or why it cannot be replayed."""
    shown = display_path(path)
    try:
        recording = read_recording(path)
        decoded = decode(recording)
    except TcrError as error:
        return InputError(shown, str(error))
    tools = plan.tools if plan.tools is not None else recording.tools
    whole = None
    if plan.layer == "content":
        text = decoded.text
        try:
            detector = make_detector(plan.factory, tools)
            whole = run_trace(detector, [text] if text else [], states=False)
        except Exception as error:  # the factory itself raised: nothing to replay
            return InputError(shown, f"detector factory raised {describe_error(error)}")
    return Replay(shown, plan, recording, decoded, tools, whole)


class Replay:
    """One recording, replayed slot after slot."""

    def __init__(
        self,
        path: str,
        plan: Plan,
        recording: Recording,
        decoded: Decoded,
        tools: Sequence[str] | None,
        whole: Trace | None,
    ) -> None:
        self.path = path
        self.plan = plan
        self.recording = recording
        self.decoded = decoded
        self.text = decoded.text
        self.tools = tools
        self.whole = whole
        expect: Mapping[str, Any] | None = recording.expect
        self.expect = expect if "expected" in plan.checks else None
        self.trace_checks = tuple(c for c in plan.checks if c in TRACE_CHECKS)

    def outcome(
        self, slot: int, runs: tuple[int, int] | None = None
    ) -> tuple[Outcome, list[Found]]:
        """Replay the plan's ``slot``; ``runs=(first, last)``: only those runs of a random one.

        The failures found are the first chunking to fail each check, in order;
        content failures come back unshrunk (``shrink``), transport ones final.
        """
        strategy = self.plan.slots[slot]
        recording = self.recording
        incomplete = None if recording.complete else recording.incomplete_reason
        name = "warm-cold" if strategy is None else strategy.spec
        outcome = Outcome(self.path, recording.id, name, incomplete=incomplete)
        if strategy is None:
            return outcome, self._warm_cold(outcome)
        first, last = runs or (0, self.plan.runs)
        if self.plan.layer == "transport":
            self._transport(outcome, strategy, first, last)
            return outcome, []
        chunkings = strategy.chunkings(
            self.text,
            original=self.decoded.content,
            runs=last,
            seed=self.plan.seed,
            start=first,
        )
        return outcome, self._strategy(outcome, chunkings)

    def new(self) -> Any:
        return make_detector(self.plan.factory, self.tools)

    def _strategy(self, outcome: Outcome, chunkings: Iterable[Chunking[str]]) -> list[Found]:
        started = time.perf_counter()
        found: list[Found] = []
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
                    found.append((chunking, violation))
            if self.plan.exitfirst:
                break
        outcome.checks = tuple(c for c in CHECKS if c in ran)
        for check in ran:
            outcome.skipped.pop(check, None)
        outcome.seconds = time.perf_counter() - started
        return found

    def _warm_cold(self, outcome: Outcome) -> list[Found]:
        started = time.perf_counter()
        chunks = self.decoded.content
        try:
            verdict = warm_cold_verdict(self.plan.factory, chunks, tools=self.tools)
        except TcrError as error:
            outcome.error = str(error)
            return []
        outcome.runs, outcome.chars = 1, len(self.text)
        outcome.checks = verdict.ran
        outcome.skipped.update(verdict.skipped)
        outcome.seconds = time.perf_counter() - started
        if not verdict.violations:
            return []
        outcome.failing_runs = 1
        return [(Chunking("original", "original", tuple(chunks)), verdict.violations[0])]

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
            imports = "from tcr.stdio import command_factory\n" + imports
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

    # -- transport layer ---------------------------------------------------------------

    def _transport(self, outcome: Outcome, strategy: Strategy, first: int, last: int) -> None:
        """Re-split the raw body bytes: decoding must not change (DESIGN §6)."""
        started = time.perf_counter()
        kind = self.recording.kind
        if kind == "chunks":
            outcome.skipped["transport"] = "an engine chunks recording has no transport bytes"
            return
        outcome.checks = ("transport",)
        body = b"".join(f.data for f in self.recording.frames if isinstance(f.data, bytes))
        want = _decoded_fields(self.decoded)
        plan = self.plan
        for chunking in strategy.chunkings(body, runs=last, seed=plan.seed, start=first):
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
