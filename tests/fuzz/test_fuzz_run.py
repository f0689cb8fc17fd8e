"""``tcr.fuzz.run``: every deliberately broken detector is found and shrunk; the reference survives."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from crashing_detectors import hangs_on_a_call

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.corpus import read_recording
from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event
from tcr.errors import TcrError
from tcr.fuzz import FuzzReport, run, runner
from tcr.fuzz.check import CaseChecker
from tcr.fuzz.model import Case
from tcr.minimize import FLAKY
from tcr.oracle import Check, Violation
from tcr.replay import run as replay
from tcr.signature import Signature

SEEDS = (0, 1)
REGRESSIONS = [ROOT / "regressions"]  # the handmade corpus: its expectations are the contract


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.slow
def test_every_broken_detector_is_found_and_shrunk_small(name: str, seed: int) -> None:
    # examples, not seconds: a budget would cut shrinking short on a slow machine
    report = run(detector=BROKEN[name], max_examples=5000, seed=seed, save=None, exitfirst=True)
    finding = report.finding
    assert finding is not None, f"{name} survived {report.examples} examples"
    # Shrinking keeps the finding's signature, its dialect included, so the markers of its
    # blocks stay: 100 characters besides them.
    assert finding.case.unmarked <= 100, finding.case.text
    assert len(finding.case.splits) <= 3, finding.case.chunks
    assert report.exit_code == 1


@pytest.mark.slow
def test_reference_detector_survives() -> None:
    report = run(max_examples=1500, seed=3, corpus=REGRESSIONS, save=None)
    assert report.finding is None, report.finding
    assert (report.examples, report.stopped, report.exit_code) == (1500, "max_examples", 0)
    assert report.generated and report.mutated  # both kinds of batch ran
    assert len(report.skipped) == 1
    assert report.skipped[0].endswith(
        "policy_13_block_too_long.msgpack: 1,060,000 characters, over 20,000"
    )


def summary(report: FuzzReport) -> tuple[object, ...]:
    f = report.finding
    assert f is not None
    return f.check, f.case.chunks, f.case.tools, f.case.truth, f.found_after, f.case.origin


@pytest.mark.slow
def test_the_same_seed_gives_the_same_run() -> None:
    first, second = (
        run(
            detector=BROKEN["merges_calls_in_one_chunk"],
            max_examples=2000,
            seed=7,
            save=None,
            max_findings=3,
        )
        for _ in range(2)
    )
    assert summary(first) == summary(second)
    assert [(f.signature, f.count, f.case) for f in first.findings] == [
        (f.signature, f.count, f.case) for f in second.findings
    ]
    a, b = (run(max_examples=300, seed=s, corpus=REGRESSIONS, save=None) for s in (5, 5))
    assert (a.generated, a.mutated, a.stopped) == (b.generated, b.mutated, b.stopped)


@pytest.mark.slow
def test_another_seed_gives_another_search() -> None:
    detector = BROKEN["merges_calls_in_one_chunk"]
    found = {
        summary(run(detector=detector, max_examples=3000, seed=s, save=None, exitfirst=True))[4]
        for s in (1, 2, 3)
    }
    assert len(found) > 1  # the example that first fails differs


class _Clock:
    """The search's clock (its ``time`` module), moved on only by checking an example."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def time(self) -> float:  # the wall clock a worker process starts from
        return self.now


def test_a_budget_stops_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, keyed = _Clock(), CaseChecker.keyed

    def check_in_an_eighth_of_a_second(
        checker: CaseChecker, case: Case, checks: Collection[Check] | None = None
    ) -> tuple[list[Violation], list[Signature]]:
        clock.now += 0.125
        return keyed(checker, case, checks)

    monkeypatch.setattr(runner, "time", clock)
    monkeypatch.setattr(CaseChecker, "keyed", check_in_an_eighth_of_a_second)
    report = run(budget_s=0.5, seed=1, corpus=REGRESSIONS, save=None)
    assert report.stopped == "budget" and report.finding is None
    # examples start at 0, 1/8, 2/8, 3/8 and 4/8 s: the fifth starts on the deadline, not past it
    assert (report.examples, report.search_seconds) == (5, 0.625)


def test_the_budget_counts_the_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the policies and loading the corpus take from the budget: with a quarter
    of a second of setup, a half-second budget checks three examples, not five."""
    clock, keyed, plan = _Clock(), CaseChecker.keyed, runner._plan

    def check_in_an_eighth_of_a_second(
        checker: CaseChecker, case: Case, checks: Collection[Check] | None = None
    ) -> tuple[list[Violation], list[Signature]]:
        clock.now += 0.125
        return keyed(checker, case, checks)

    def slow_setup(*args: Any) -> Any:
        clock.now += 0.25
        return plan(*args)

    monkeypatch.setattr(runner, "time", clock)
    monkeypatch.setattr(CaseChecker, "keyed", check_in_an_eighth_of_a_second)
    monkeypatch.setattr(runner, "_plan", slow_setup)
    report = run(budget_s=0.5, seed=1, corpus=REGRESSIONS, save=None)
    assert report.stopped == "budget" and report.examples == 3
    assert report.seconds == 0.625


class _InTurn:
    """``--jobs``'s workers run one after another in this process, on the test's clock."""

    def stopped(self) -> bool:
        return False

    def claim(self) -> bool:
        return True

    def count(self, worker: int, generated: int, mutated: int) -> None:
        pass

    @staticmethod
    def run_workers(
        work: Callable[..., FuzzReport], args: Sequence[tuple[Any, ...]], **kwargs: Any
    ) -> list[FuzzReport]:
        return [work(worker, *arguments) for worker, arguments in enumerate(args)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_budget_bounds_shrinking_too(monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """A slow detector's finding is shrunk until 10% past the budget, no later (Hypothesis's
    shrinking and delta debugging both): the run ends at most one check after it, with the
    finding as far as it was shrunk. Unbounded, this run ended at 44 s."""
    clock, keyed = _Clock(), CaseChecker.keyed
    check_seconds = 0.125

    def slow_check(
        checker: CaseChecker, case: Case, checks: Collection[Check] | None = None
    ) -> tuple[list[Violation], list[Signature]]:
        clock.now += check_seconds
        return keyed(checker, case, checks)

    monkeypatch.setattr(runner, "time", clock)
    monkeypatch.setattr(CaseChecker, "keyed", slow_check)
    monkeypatch.setattr(runner, "run_workers", _InTurn.run_workers)
    monkeypatch.setattr(runner, "shared", _InTurn)
    detector = BROKEN["per_chunk_markers"]
    report = run(detector=detector, budget_s=2, seed=0, corpus=[], save=None, jobs=jobs)
    assert report.seconds <= 2 * 1.1 + check_seconds
    assert report.stopped == "budget"
    finding = report.finding
    assert finding is not None and finding.signature.shape == "split-in-opener"


@pytest.mark.slow
def test_saved_failure_replays_and_fails_the_same_way(tmp_path: Path) -> None:
    # a bug only a split shows: the policy probes (unsplit, unsaved) find nothing first
    spec = "tcr.detector.broken:per_chunk_markers"
    report = run(detector=spec, max_examples=5000, seed=0, save=tmp_path, exitfirst=True)
    finding = report.finding
    assert finding is not None and finding.saved is not None
    recording = read_recording(finding.saved)
    assert [f.data for f in recording.frames] == list(finding.case.chunks)
    assert recording.tools == (None if finding.case.tools is None else list(finding.case.tools))
    # A conservation finding needs no ground truth: its text was cut further, so it has none.
    truth = finding.case.truth
    assert recording.expect == (None if truth is None else truth.expectation())
    labels = recording.labels
    assert (labels["origin"], labels["bug"], labels["seed"], labels["detector"]) == (
        "fuzz",
        finding.check,
        0,
        spec,
    )
    assert finding.saved.name.startswith(finding.check + "-")
    assert finding.replay_command.startswith(f"tcr replay {finding.saved}")
    assert f"--detector {spec}" in finding.replay_command
    assert finding.tui_command.startswith(f"tcr tui {finding.saved}")

    replayed = replay([finding.saved], strategies=["original"], detector=spec)
    assert finding.signature in {f.signature for _, f in replayed.failures}
    assert replayed.exit_code == 1
    assert replay([finding.saved], strategies=["original"]).exit_code == 0  # the reference


@pytest.mark.slow
def test_saving_twice_writes_one_file_named_after_the_case(tmp_path: Path) -> None:
    for _ in range(2):
        run(
            detector=BROKEN["per_chunk_markers"],  # the unsplit policy probes pass it
            max_examples=500,
            seed=2,
            save=tmp_path,
            exitfirst=True,
        )
    assert len(list(tmp_path.iterdir())) == 1


@pytest.mark.slow
def test_a_failure_found_by_mutation_keeps_what_it_can(tmp_path: Path) -> None:
    report = run(
        detector=BROKEN["per_chunk_markers"],
        max_examples=500,
        formats=["hermes"],
        corpus=[ROOT / "regressions" / "split_marker_mlx.msgpack"],
        save=tmp_path,
        exitfirst=True,
    )
    assert report.finding is not None
    assert report.recordings == 1


@pytest.mark.slow
def test_a_crashing_detector_is_a_crash_finding_with_exit_code_2() -> None:
    report = run(
        detector="crashing_detectors:feed_raises", max_examples=200, save=None, exitfirst=True
    )
    assert report.finding is not None and report.finding.check == "crash"
    assert report.exit_code == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"budget_s": 0}, "budget"),
        ({"max_examples": 0}, "max examples"),
        ({"formats": ["klingon"]}, "unknown dialect 'klingon'; known: gemma4, hermes"),
        ({"dialects": ["klingon"]}, "unknown dialect 'klingon'; known: gemma4, hermes"),
        ({"dialects": []}, "names no dialect"),
        ({"dialects": ["hermes"], "formats": ["hermes"]}, "older name"),
        ({"empty_tools": "maybe"}, "empty_tools is 'maybe'; known: reject, text"),
        ({"detector": "claimed_detectors:wrong_claim"}, "wrong_claim.tcr_claim: dialects must be"),
        ({"detector": "no.such.module:factory"}, "cannot import"),
        ({"detector": "crashing_detectors:factory_raises"}, "factory_raises raised"),
    ],
)
def test_unusable_options_raise_tcr_error(options: dict[str, object], message: str) -> None:
    with pytest.raises(TcrError, match=message):
        run(save=None, **{"max_examples": 50, **options})  # type: ignore[arg-type]


class _ForgetfulReset(StreamDetector):
    """reset() forgets to clear a held marker prefix: only warm-equals-cold sees it."""

    def reset(self) -> None:
        pending = getattr(self, "_pending", "")
        super().reset()
        self._pending = pending


def forgetful_reset(tools: list[str] | None = None) -> StreamDetector:
    return _ForgetfulReset(tools=tools)


@pytest.mark.slow
def test_warm_equals_cold_bugs_are_found_although_it_runs_on_a_sample_of_cases() -> None:
    report = run(
        detector=forgetful_reset, max_examples=3000, seed=0, corpus=[], save=None, exitfirst=True
    )
    assert report.finding is not None
    assert report.finding.violation.check == "warm_cold"


def test_a_case_over_the_time_limit_is_a_crash_finding() -> None:
    case = Case(("hi <tool_", "call>", '{"name": "f"}</tool_call>'), None, None, "test")
    (violation,) = CaseChecker(hangs_on_a_call, timeout=0.2).check(case)
    assert violation.check == "crash"
    assert violation.message == "the detector took longer than 0.2 s in feed() of chunk 1"


def test_a_timeout_finding_is_not_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each try of a shrink could take the whole limit again: the case is kept as found.
    monkeypatch.setattr(runner, "SHRINK_SECONDS", 3600.0)
    hung: list[str] = []

    class Hangs(StreamDetector):
        def feed(self, chunk: str) -> list[Event]:
            if "<tool_call>" in self.state.pending + chunk:
                hung.append(chunk)
                time.sleep(30)
            return super().feed(chunk)

    report = run(
        detector=Hangs,
        max_examples=200,
        seed=0,
        corpus=[],
        save=None,
        timeout=0.05,
        exitfirst=True,
    )
    (finding,) = report.findings
    assert (finding.signature.check, finding.signature.kind) == ("crash", "timeout")
    assert len(finding.case.text) == finding.original_length
    # the policy probe that hung (no further probe is run), the runs of the case that
    # found it, and no try of a shrink
    assert len(hung) <= 3


def test_fuzz_timeout_must_be_positive() -> None:
    with pytest.raises(TcrError, match="--timeout must be a positive number of seconds, not -1"):
        run(save=None, max_examples=1, timeout=-1)
    result = CliRunner().invoke(main, ["fuzz", "--max-examples", "1", "--timeout", "0"])
    assert result.exit_code == 2
    assert "--timeout must be a positive number of seconds, not 0" in result.output


def test_a_finding_that_does_not_fail_again_is_kept_unshrunk_and_called_flaky() -> None:
    # What a detector with global state leaves: a failure Hypothesis saw, not failing now.
    case = Case(("hi ", "there"), None, None, "test")
    seen = Violation("crash", "the detector raised RuntimeError: only sometimes", 1, 3, "")
    search = runner._Search(CaseChecker(StreamDetector), time.perf_counter() + 60, 0.0)
    search.best, search.original, search.first_failure = (case, [seen]), case, 0.0
    report = FuzzReport("flaky", 0, None, 1, ())
    finding = runner._finding(search, search.checker, report)
    assert finding.case == case
    assert finding.violation.message == f"{seen.message} ({FLAKY})"


def test_unmarked_counts_what_is_no_dialects_marker() -> None:
    kimi = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
    )
    case = Case(("Hi ", kimi, "<tool_call>x</tool_call>"), None, None, "generated: test")
    assert case.unmarked == len("Hi functions.f:0{}x")
