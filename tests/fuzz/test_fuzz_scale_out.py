"""``tcr fuzz --shard K/N`` and ``--jobs N``: one search, split over machines and processes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import islice
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.commands.fuzz import fuzz
from tcr.corpora import ROOT
from tcr.detector.broken import BROKEN
from tcr.detector.core import StreamDetector
from tcr.errors import TcrError
from tcr.fuzz import FuzzReport, run
from tcr.fuzz.schedule import BATCH, MUTATION_EVERY, Batch, batch_count, batches
from tcr.replay import run as replay

REGRESSIONS = [ROOT / "regressions"]
SIZES = [1, BATCH - 1, BATCH, BATCH + 1, 7 * BATCH + 3, 40 * BATCH]


def by_index(found: list[Batch]) -> list[Batch]:
    return sorted(found, key=lambda batch: batch.index)


# --- the schedule ----------------------------------------------------------------------


def test_the_whole_search_is_full_batches_then_a_short_one() -> None:
    whole = list(batches(5, 2 * BATCH + 100))
    assert [b.index for b in whole] == [0, 1, 2]
    assert [b.limit for b in whole] == [BATCH, BATCH, 100]
    assert [b.mutates for b in whole] == [i % MUTATION_EVERY == 1 for i in range(3)]
    assert len({b.seed for b in whole}) == 3


def test_batch_seeds_follow_the_run_seed() -> None:
    assert {b.seed for b in batches(1, 3 * BATCH)}.isdisjoint(b.seed for b in batches(2, 3 * BATCH))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("max_examples", SIZES)
def test_shards_together_run_exactly_the_batches_of_the_whole_search(
    max_examples: int, n: int
) -> None:
    whole = list(batches(5, max_examples))
    shards = [list(batches(5, max_examples, shard=(k, n))) for k in range(1, n + 1)]
    assert by_index([b for shard in shards for b in shard]) == whole  # each batch once
    assert sum(b.limit for shard in shards for b in shard) == max_examples
    assert [batch_count(max_examples, (k, n)) for k in range(1, n + 1)] == [len(s) for s in shards]


@pytest.mark.parametrize("jobs", [1, 2, 3, 5])
@pytest.mark.parametrize("shard", [None, (1, 1), (2, 3), (3, 4)])
@pytest.mark.parametrize("max_examples", SIZES)
def test_jobs_deal_out_a_shards_batches_exactly_once(
    max_examples: int, shard: tuple[int, int] | None, jobs: int
) -> None:
    mine = list(batches(5, max_examples, shard=shard))
    dealt = [
        b for w in range(jobs) for b in batches(5, max_examples, shard=shard, jobs=jobs, worker=w)
    ]
    assert by_index(dealt) == mine


def test_without_max_examples_every_shard_is_endless() -> None:
    first = [b.index for b in islice(batches(0, None, shard=(2, 3)), 4)]
    assert first == [1, 4, 7, 10]
    second_worker = [b.index for b in islice(batches(0, None, shard=(2, 3), jobs=2, worker=1), 3)]
    assert second_worker == [4, 10, 16]
    assert batch_count(None, (2, 3)) is None


@pytest.mark.parametrize("shard", [(0, 3), (4, 3), (1, 0), (-1, 2)])
def test_a_bad_shard_is_a_tcr_error(shard: tuple[int, int]) -> None:
    with pytest.raises(TcrError, match="shard"):
        run(max_examples=50, shard=shard, save=None)


# --- shards, end to end ---------------------------------------------------------------------


@pytest.mark.slow
def test_shards_of_a_run_add_up_to_the_whole_run() -> None:
    total = 3 * BATCH
    whole = run(max_examples=total, seed=3, corpus=REGRESSIONS, save=None)
    parts = [
        run(max_examples=total, seed=3, corpus=REGRESSIONS, save=None, shard=(k, 3))
        for k in (1, 2, 3)
    ]
    assert [p.examples for p in parts] == [BATCH, BATCH, BATCH]
    assert sum(p.generated for p in parts) == whole.generated
    assert sum(p.mutated for p in parts) == whole.mutated
    assert all(p.finding is None and p.stopped == "max_examples" for p in parts)
    assert [p.shard for p in parts] == [(1, 3), (2, 3), (3, 3)]


def summary(report: FuzzReport) -> tuple[object, ...]:
    f = report.finding
    assert f is not None
    return f.check, f.case.chunks, f.case.tools, f.case.truth, f.found_after, f.case.origin


@pytest.mark.slow
def test_the_first_shard_starts_where_the_whole_search_starts() -> None:
    detector = BROKEN["duplicates_flushed_prefix"]
    whole = run(detector=detector, max_examples=2000, seed=7, save=None, exitfirst=True)
    first = run(
        detector=detector, max_examples=2000, seed=7, save=None, shard=(1, 4), exitfirst=True
    )
    assert summary(first) == summary(whole)  # found in batch 0, which shard 1 runs first


def test_a_shard_with_no_batch_runs_nothing() -> None:
    report = run(max_examples=BATCH, shard=(2, 3), save=None)
    assert (report.examples, report.stopped, report.exit_code) == (0, "max_examples", 0)


# --- jobs -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.process
def test_jobs_find_a_broken_detector_and_save_it_once(tmp_path: Path) -> None:
    spec = "tcr.detector.broken:per_chunk_markers"  # the unsplit policy probes pass it
    report = run(detector=spec, max_examples=100_000, seed=0, save=tmp_path, jobs=2, exitfirst=True)
    finding = report.finding
    assert finding is not None and finding.saved is not None
    assert (report.stopped, report.exit_code, report.jobs) == ("failure", 1, 2)
    assert report.examples < 100_000  # the first failure stopped both workers
    assert list(tmp_path.iterdir()) == [finding.saved]
    assert f"--detector {spec}" in finding.replay_command

    replayed = replay([finding.saved], strategies=["original"], detector=spec)
    assert finding.check in {f.violation.check for _, f in replayed.failures}
    assert replayed.exit_code == 1


@pytest.mark.slow
@pytest.mark.process
def test_jobs_without_a_bug_run_every_example_once() -> None:
    total = 3 * BATCH + 17  # four batches, the last one short, the second one mutating
    alone = run(max_examples=total, seed=3, corpus=REGRESSIONS, save=None)
    together = run(max_examples=total, seed=3, corpus=REGRESSIONS, save=None, jobs=2)
    assert together.finding is None and together.stopped == "max_examples"
    assert together.examples == total
    assert (together.generated, together.mutated) == (alone.generated, alone.mutated)


@pytest.mark.slow
@pytest.mark.process
def test_jobs_and_a_shard_run_the_shards_batches() -> None:
    total = 6 * BATCH
    alone = run(max_examples=total, seed=1, corpus=REGRESSIONS, save=None, shard=(2, 3))
    together = run(max_examples=total, seed=1, corpus=REGRESSIONS, save=None, shard=(2, 3), jobs=2)
    assert (together.generated, together.mutated) == (alone.generated, alone.mutated)
    assert together.examples == 2 * BATCH  # batches 1 and 4


def _local_factory() -> object:
    def make(tools: list[str] | None = None) -> StreamDetector:
        return StreamDetector(tools=tools)

    return make


@pytest.mark.parametrize("factory", [_local_factory(), lambda tools=None: StreamDetector()])
def test_a_factory_that_cannot_be_sent_to_a_worker_is_a_tcr_error(factory: object) -> None:
    with pytest.raises(TcrError, match="importable by name"):
        run(detector=factory, max_examples=50, save=None, jobs=2)  # type: ignore[arg-type]


@pytest.mark.process
@pytest.mark.slow
def test_a_factory_that_raises_in_the_workers_is_a_tcr_error() -> None:
    with pytest.raises(TcrError, match="factory_raises raised"):
        run(detector="crashing_detectors:factory_raises", max_examples=1000, save=None, jobs=2)


@pytest.mark.slow
@pytest.mark.process
def test_a_detector_that_crashes_in_a_worker_is_a_crash_finding() -> None:
    report = run(
        detector="crashing_detectors:feed_raises",
        max_examples=1000,
        save=None,
        jobs=2,
        exitfirst=True,
    )
    assert report.finding is not None and report.finding.check == "crash"
    assert report.exit_code == 2


@pytest.mark.slow
@pytest.mark.process
def test_a_worker_that_dies_is_a_tcr_error_saying_so() -> None:
    with pytest.raises(TcrError, match=r"worker process died \(exit code 3\)"):
        run(detector="crashing_detectors:feed_exits", max_examples=100_000, save=None, jobs=2)


# --- the command ------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(fuzz, list(args), prog_name="tcr fuzz")
    return result.exit_code, result.output


@pytest.mark.slow
@pytest.mark.process
def test_the_report_names_the_shard_and_the_jobs(tmp_path: Path) -> None:
    junit = tmp_path / "fuzz.xml"
    corpus = str(REGRESSIONS[0])
    code, out = invoke(
        *("--max-examples", str(4 * BATCH), "--seed", "2", "--corpus", corpus),
        *("--shard", "1/2", "--jobs", "2", "--junit", str(junit)),
    )
    assert code == 0, out
    assert "shard 1/2, 2 jobs" in out and f"{2 * BATCH} examples" in out
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {
        "judged_against": "judged against: every dialect; every choice as the reference's "
        "(tcr policies)",
        "shard": "1/2",
        "jobs": "2",
    }
    assert all(c.get("classname", "").endswith(" shard 1/2") for c in suite.iter("testcase"))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--shard", "0/3"], "--shard '0/3'"),
        (["--shard", "4/3"], "--shard '4/3'"),
        (["--shard", "1/0"], "--shard"),
        (["--shard", "two"], "K/N"),
        (["--shard", "1-3"], "K/N"),
        (["--jobs", "0"], "jobs must be at least 1"),
        (["--jobs", "-2"], "jobs must be at least 1"),
        (["--jobs", "2", "--detector", "no.such.module:factory"], "cannot import"),
    ],
)
def test_bad_scale_out_options_exit_2_with_one_line(args: list[str], words: str) -> None:
    code, out = invoke("--max-examples", "50", *args)
    assert code == 2
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tcr fuzz: ") and words in lines[0], out
