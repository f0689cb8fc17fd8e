"""One recording replayed outcome by outcome: the work behind ``tcr replay``, in any process.

A ``Plan`` is everything fixed for a run. ``load()`` reads and decodes a recording
once and runs it whole; ``Replay.outcome(slot)`` replays one of the plan's slots
(a strategy, or warm-cold), or only a range of a random strategy's runs, and
returns the failing chunkings as found; ``Replay.shrink`` turns each into a
``Failure``. Finding and shrinking are apart so that ``--jobs`` (``jobs.py``) can
find in several processes and shrink only the failures the merged report keeps:
the first chunking to show each signature key (check, kind, dialect: see
``tcr.signature``), as one process replaying in order keeps.

Shrinking keeps the signature (ARCHITECTURE.md §7.4): every chunking the search
tries must show a violation with the same key, so a failure that needs a split
never shrinks to ``whole``, and the shortest text for the pytest snippet must also
keep the shape of the minimal chunking.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

from tcr._runtime.names import shell_join
from tcr._verdict import INCONSISTENT
from tcr.corpus import Frame, Recording, RecordingReader, read_recording
from tcr.detector.loader import DetectorSpec
from tcr.errors import DecodeError, FactoryError, TcrError
from tcr.expectation import Expectation
from tcr.judge import Judge
from tcr.minimize import FLAKY, NotFailing, minimize_splits, minimize_text
from tcr.oracle import CHECKS, Check, Violation
from tcr.rechunk import Chunking, Cuts, Strategy, splits_spec
from tcr.signature import (
    TIMEOUT,
    UNSPLIT,
    WHOLE,
    Signature,
    coarse_key,
    cuts_whole_token,
    key,
    shaped,
    signature,
    special_markers,
    split_rank,
)
from tcr.snippet import regression_test
from tcr.stream import Decoded, decode, decode_bytes
from tcr.tool_specs import ToolSpecs

from .model import Failure, InputError, Outcome, display_path

__all__ = ["Found", "Plan", "Replay", "load"]

MINIMIZE_BUDGET = 4000  # predicate calls per failure: a bound, never reached in practice

# A failing chunking, not shrunk yet, and the violation's coarse key (tcr.signature.coarse_key).
Found = tuple[Chunking[str], Violation, Signature]


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything fixed for a whole run, validated before the first recording."""

    detector: DetectorSpec
    strategies: tuple[Strategy, ...]
    runs: int
    seed: int
    tools: tuple[str, ...] | None
    checks: tuple[Check, ...]
    layer: str
    exitfirst: bool
    minimize: bool
    timeout: float | None = None  # seconds per message run: see tcr.time_limit
    tool_specs: ToolSpecs | None = None  # given for every recording (None: each one's own)
    tool_specs_file: str | None = None  # where they were read (--tool-specs), for reproducers

    @property
    def slots(self) -> tuple[Strategy | None, ...]:
        """What each outcome of a recording replays, in report order (``None``: warm-cold)."""
        warm_cold = self.layer == "content" and Check.WARM_COLD in self.checks
        return (*self.strategies, *((None,) if warm_cold else ()))


def load(path: Path, plan: Plan) -> Replay | InputError:
    """A recording read, decoded and (content layer) run whole; or why it cannot be replayed."""
    shown = display_path(path)
    try:
        if plan.layer == "transport":  # re-splits the raw body: keep every frame
            recording = read_recording(path)
            decoded = decode(recording)
        else:
            recording, decoded = _read_content(path)
        told = (Check.EXPECTED, Check.POLICY)  # policy/inconsistent is told from expected
        expect = recording.expect if any(c in plan.checks for c in told) else None
        expectation = Expectation.of(expect)
        specs = plan.tool_specs if plan.tool_specs is not None else recording.tool_specs
    except TcrError as error:
        return InputError(shown, str(error))
    tools = plan.tools if plan.tools is not None else recording.tools
    content = decoded.content
    judge = Judge(
        plan.detector.factory,
        decoded.text,
        tools=tools,
        expectation=expectation,
        checks=plan.checks,
        timeout=plan.timeout,
        claim=plan.detector.claim,
        tool_specs=specs,
    )
    if plan.layer == "content":
        try:
            judge.whole  # noqa: B018  (run once here: every chunking is compared with it)
        except FactoryError as error:  # the factory itself failed: nothing to replay
            return InputError(shown, str(error))
    if plan.layer == "content":  # the chunks as cut offsets into the text: see Cuts
        decoded = replace(decoded, content=[])  # (its text is the judge's)
        return Replay(shown, plan, recording, decoded, judge, Cuts.of(judge.text, content))
    return Replay(shown, plan, recording, decoded, judge, decoded.content)


@dataclass(frozen=True, slots=True)
class _FramesOnce:
    """A recording whose frames are read off the file as they are decoded."""

    header: dict[str, Any]
    frames: Iterator[Frame]
    path: Path

    @property
    def kind(self) -> str:
        return str(self.header["kind"])


def _read_content(path: Path) -> tuple[Recording, Decoded]:
    """The recording without its frames, and its content: one pass, no frame kept.

    The content layer needs only the content, so the frames (the whole body) and a
    delta per event are not held. A file that is corrupt further on is reported as
    such even when decoding failed first, as reading it whole before decoding did.
    """
    with RecordingReader(path) as reader:
        frames = reader.frames()
        try:
            decoded = decode(_FramesOnce(reader.header, frames, reader.path), keep_deltas=False)
        except DecodeError:
            for _ in frames:  # the rest of the file: a corrupt recording is the error to report
                pass
            raise
        return Recording(reader.header, [], reader.end, reader.expect, reader.path), decoded


class Replay:
    """One recording, replayed slot after slot.

    On the content layer ``recording.frames`` is empty, and ``decoded.deltas`` and
    ``decoded.content`` too (``load``): only the transport layer re-reads the body, and
    the recorded chunks are ``content``, cut from the text as they are read.
    """

    def __init__(
        self,
        path: str,
        plan: Plan,
        recording: Recording,
        decoded: Decoded,
        judge: Judge,
        content: Sequence[str],
    ) -> None:
        self.path = path
        self.plan = plan
        self.recording = recording
        self.decoded = decoded
        self.content = content  # the recorded content chunks (``decoded.content``'s)
        self.text = judge.text
        self.judge = judge
        self.tools = judge.tools
        self.expect = judge.expectation
        self._unsplit: set[Signature] | None = None  # the keys the whole run shows, once known
        self._shapes: dict[Signature, str] | None = None  # of them, those not WHOLE

    def outcome(
        self, slot: int, runs: tuple[int, int] | None = None
    ) -> tuple[Outcome, list[Found]]:
        """Replay the plan's ``slot``; ``runs=(first, last)``: only those runs of a random one.

        The failures found are the first chunking to show each signature key, in
        order; content failures come back unshrunk (``shrink``), transport ones final.
        """
        strategy = self.plan.slots[slot]
        recording = self.recording
        incomplete = None if recording.complete else recording.incomplete_reason
        name = "warm-cold" if strategy is None else strategy.spec
        outcome = Outcome(self.path, recording.id, name, incomplete=incomplete)
        if strategy is not None and self.plan.layer == "content":  # what the claim leaves out
            not_judged = self.judge.not_judged.items()
            outcome.not_judged = {c: why for c, why in not_judged if c in self.judge.trace_checks}
        if strategy is None:
            return outcome, self._warm_cold(outcome)
        first, last = runs or (0, self.plan.runs)
        if self.plan.layer == "transport":
            self._transport(outcome, strategy, first, last)
            return outcome, []
        chunkings = strategy.chunkings(
            self.text,
            original=self.content,
            runs=last,
            seed=self.plan.seed,
            start=first,
            claim=self.judge.claim,
        )
        return outcome, self._strategy(outcome, chunkings)

    def _strategy(self, outcome: Outcome, chunkings: Iterable[Chunking[str]]) -> list[Found]:
        started = time.perf_counter()
        found: list[Found] = []
        seen: set[Signature] = set()  # coarse keys: a parsing and a chunking bug stay two
        ran: set[str] = set()
        for chunking in chunkings:
            try:  # warm_cold is a slot of its own: see _warm_cold
                verdict = self.judge.verdict(
                    chunking.chunks, checks=self.judge.trace_checks, streamed=True
                )
            except FactoryError as error:
                outcome.error = str(error)
                break
            outcome.runs += 1
            outcome.chars += len(self.text)
            ran.update(verdict.ran)
            outcome.skipped.update(verdict.skipped)
            if not verdict.violations:
                continue
            outcome.failing_runs += 1
            unsplit, shapes = self.unsplit_keys(), self.unsplit_shapes()
            for violation in verdict.violations:
                coarse = coarse_key(violation, unsplit, shapes)
                if coarse not in seen:
                    seen.add(coarse)
                    found.append((chunking, violation, coarse))
            # Over the time limit once: each further run could take the whole limit again
            # (a slow harness cost 130 limits, issue 36), as each shrinking step could.
            if self.plan.exitfirst or any(v.kind == TIMEOUT for v in verdict.violations):
                break
        outcome.checks = tuple(c for c in CHECKS if c in ran)
        for check in ran:
            outcome.skipped.pop(check, None)
        outcome.seconds = time.perf_counter() - started
        return found

    def _warm_cold(self, outcome: Outcome) -> list[Found]:
        started = time.perf_counter()
        chunks = self.content
        try:
            verdict = self.judge.warm_cold(chunks, streamed=True)
        except FactoryError as error:
            outcome.error = str(error)
            return []
        outcome.runs, outcome.chars = 1, len(self.text)
        outcome.checks = verdict.ran
        outcome.skipped.update(verdict.skipped)
        outcome.seconds = time.perf_counter() - started
        if not verdict.violations:
            return []
        outcome.failing_runs = 1
        original = Chunking("original", "original", tuple(chunks))
        distinct = {key(v): v for v in reversed(verdict.violations)}  # the first of each
        # Warm-cold judges the text, not its chunking: its failures are whole.
        return [(original, v, key(v).coarse) for v in verdict.violations if distinct[key(v)] is v]

    def unsplit_keys(self) -> set[Signature]:
        """The signature keys the whole run shows, judged once per recording."""
        if self._unsplit is None:
            whole = self.judge.judge_trace(self.judge.whole, checks=self.judge.trace_checks)
            self._unsplit = {key(v) for v in whole.violations}
        return self._unsplit

    def unsplit_shapes(self) -> dict[Signature, str]:
        """Those of ``unsplit_keys`` whose shape is not ``whole`` (``Judge.unsplit_shapes``:
        a marker in a string, the end of the message), judged once per recording."""
        if self._shapes is None:
            self._shapes = self.judge.unsplit_shapes(self.unsplit_keys())
        return self._shapes

    def _signature(self, violation: Violation, chunks: Sequence[str]) -> Signature:
        """``violation``'s signature on ``chunks``, unsplit ones with the shape they need."""
        found = signature(violation, chunks, claim=self.judge.claim)
        shape = self.unsplit_shapes().get(found.key) if found.shape == WHOLE else None
        return replace(found, shape=shape) if shape else found

    # -- shrinking ---------------------------------------------------------------

    def fails(self, target: Signature) -> Callable[[Sequence[str]], bool]:
        """Same text, another chunking: does it still show the signature key ``target``?"""
        return lambda chunks: self.violation_on(chunks, target) is not None

    def fails_shorter(self, target: Signature) -> Callable[[Sequence[str]], bool]:
        """Another text: the whole run is redone for it (no expectation applies). It must
        show ``target`` (key and shape): the snippet fails as the reproducer does."""

        unsplit = replace(target, shape=WHOLE) if target.shape in UNSPLIT else target

        def fails(chunks: Sequence[str]) -> bool:
            if shaped(target, chunks, claim=self.judge.claim) != unsplit:  # shape and proxy
                return False
            if cuts_whole_token(chunks, self.judge.claim):  # never given such a chunking
                return False
            judge = Judge(
                self.judge.factory,
                "".join(chunks),
                tools=self.tools,
                checks=(Check(target.check),),
                timeout=self.judge.timeout,
                claim=self.judge.claim,
                tool_specs=self.judge.tool_specs,
            )
            if not any(key(v) == target.key for v in judge.verdict(chunks).violations):
                return False
            if target.shape not in UNSPLIT:  # a split
                return True
            # unsplit: what it needs (a marker in a string, the end) is the shorter text's too
            return judge.unsplit_shapes({target.key}).get(target.key, WHOLE) == target.shape

        return fails

    def shrink(self, chunking: Chunking[str], violation: Violation) -> Failure:
        target = key(violation)
        chunks: Sequence[str] = chunking.chunks
        if violation.kind == TIMEOUT:
            return self._over_time(chunking, violation)
        if self.plan.minimize and len(chunks) > 1:
            markers = special_markers(target.dialect, self.judge.claim)
            try:
                chunks = minimize_splits(
                    chunks,
                    self.fails(target),
                    budget=MINIMIZE_BUDGET,
                    keep_whole=markers,
                    rank=partial(split_rank, claim=self.judge.claim),
                )
            except NotFailing:  # it failed a moment ago: the detector answers at random
                flaky = replace(violation, message=f"{violation.message} ({FLAKY})")
                return self._failure(chunking, flaky, chunking.chunks, chunking.chunks)
        violation = self.violation_on(chunks, target) or violation
        found = self._signature(violation, chunks)
        shortest: Sequence[str] = chunks
        # The reproducer keeps the recorded text; the pytest snippet needs only the
        # content, so it gets the shortest text that still fails with the same signature.
        if self.plan.minimize and violation.check not in (Check.EXPECTED, Check.WARM_COLD):
            try:
                shortest = minimize_text(chunks, self.fails_shorter(found), budget=MINIMIZE_BUDGET)
            except ValueError:  # fails only on the whole text (e.g. needs the recorded context)
                shortest = chunks
        return self._failure(chunking, violation, chunks, shortest)

    def _failure(
        self,
        chunking: Chunking[str],
        violation: Violation,
        chunks: Sequence[str],
        shortest: Sequence[str],
    ) -> Failure:
        splits = Chunking("splits", "min", tuple(chunks)).splits
        found = self._signature(violation, chunks)
        return Failure(
            violation=violation,
            label=chunking.label,
            splits=splits,
            original_splits=len(chunking.chunks) - 1,
            chunks=tuple(shortest),
            reproducer=self.reproducer(splits, violation.check),
            snippet=self.snippet(shortest, found),
            signature=found,
        )

    def _over_time(self, chunking: Chunking[str], violation: Violation) -> Failure:
        """A message over the time limit is shown as found: each shrinking step could take
        the whole limit again. The reproducer names its strategy (seeded: the same chunkings),
        and no snippet pins a chunking that may hold a million chunks."""
        found = signature(violation, chunking.chunks, claim=self.judge.claim)
        cmd = ["tcr", "replay", self.path, "--rechunk", chunking.strategy, *self.options()]
        return Failure(
            violation=violation,
            label=chunking.label,
            splits=chunking.splits,
            original_splits=len(chunking.chunks) - 1,
            chunks=(),
            reproducer=shell_join([*cmd, "--check", violation.check]),
            snippet="",
            signature=found,
        )

    def violation_on(self, chunks: Sequence[str], target: Signature) -> Violation | None:
        """The violation of ``chunks`` with the signature key ``target``, if any."""
        check = Check(target.check)
        if check is Check.WARM_COLD:
            found = self.judge.warm_cold(list(chunks)).violations
        else:
            found = self.judge.verdict(chunks, checks=(check,)).violations
        return next((v for v in found if key(v) == target.key), None)

    def options(self) -> list[str]:
        args = self.plan.detector.options()
        if self.plan.tools is not None:
            args += ["--tools", ",".join(self.plan.tools)]
        if self.plan.tool_specs_file is not None:
            args += ["--tool-specs", self.plan.tool_specs_file]
        return args

    def reproducer(self, splits: Sequence[int], check: Check) -> str:
        spec = splits_spec(splits) if splits else "whole"
        cmd = ["tcr", "replay", self.path, "--rechunk", spec, *self.options(), "--check", check]
        return shell_join(cmd)

    def snippet(self, chunks: Sequence[str], found: Signature) -> str:
        check = Check(found.check)
        given = self.judge.tool_specs is not None and self.judge.schemas is not None
        # policy/inconsistent is told from expected: its snippet needs the expectation too
        told = check is Check.EXPECTED or (check is Check.POLICY and found.kind == INCONSISTENT)
        expect = self.expect if told else None
        return regression_test(
            chunks,
            check=str(check),
            found=found.label,
            origin=f"tcr replay from {self.path}",
            detector=self.plan.detector.spec,
            command=self.plan.detector.command,
            tools=self.tools,
            claim=self.judge.claim,
            tool_specs=self.judge.tool_specs if given else None,
            expectation=None if expect is None else expect.to_map(),
        )

    # -- transport layer ---------------------------------------------------------------

    def _transport(self, outcome: Outcome, strategy: Strategy, first: int, last: int) -> None:
        """Re-split the raw body bytes: decoding must not change (ARCHITECTURE.md §6)."""
        started = time.perf_counter()
        kind = self.recording.kind
        if kind == "chunks":
            outcome.skipped[Check.TRANSPORT] = "an engine chunks recording has no transport bytes"
            return
        outcome.checks = (Check.TRANSPORT,)
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
                what = f"{differs} differs"
            except TcrError as error:
                message = f"decoding failed under {chunking.label}: {error}"
                what = "decoding failed"
            if not message:
                continue
            outcome.failing_runs += 1
            if not outcome.failures:
                spec = splits_spec(chunking.splits) if chunking.splits else "whole"
                cmd = ["tcr", "replay", outcome.path, "--layer", "transport", "--rechunk", spec]
                violation = Violation(Check.TRANSPORT, message, None, None, "", what)
                outcome.failures.append(
                    Failure(
                        violation,
                        chunking.label,
                        chunking.splits,
                        len(chunking.splits),
                        (),
                        shell_join(cmd),
                        "",
                        Signature(Check.TRANSPORT, what, shape=_byte_shape(chunking.splits)),
                    )
                )
            if plan.exitfirst:
                break
        outcome.seconds = time.perf_counter() - started


def _byte_shape(splits: Sequence[int]) -> str:
    """Transport splits cut bytes, not markup: only whether one is needed is told apart."""
    return "split-in-bytes" if splits else WHOLE


def _decoded_fields(decoded: Decoded) -> dict[str, object]:
    return {f.name: getattr(decoded, f.name) for f in fields(decoded)}
