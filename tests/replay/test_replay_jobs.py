"""tcr replay --jobs: a run split into tasks gives the report of one process, in its order."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.corpus import Frame, new_header, write_recording
from tcr.detector import Event
from tcr.detector.core import StreamDetector
from tcr.errors import EXIT_ERROR, EXIT_VIOLATION
from tcr.replay import Report, run
from tcr.replay.jobs import split_tasks
from tcr.replay.runner import _plan
from tcr.stdio import command_factory

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
REFERENCE_CMD = shlex.join([sys.executable, "-m", "tcr.stdio", "tcr.detector.core:StreamDetector"])
FEW = [
    ROOT / "recorded" / "tool_call_tag_json.msgpack",
    ROOT / "recorded" / "tool_call_tag_two_calls.msgpack",
    ROOT / "recorded" / "think_then_call.msgpack",
    ROOT / "regressions" / "preamble_before_call.msgpack",
]

# The reference detector behind the protocol, as another language's harness would be;
# it notes its pid so the test can see it is gone, and misbehaves at chunk 2 if told.
HARNESS = """
import os, sys, time
from pathlib import Path
from tcr.detector.core import StreamDetector
from tcr.stdio import serve

pids, mode = Path(sys.argv[1]), sys.argv[2]
(pids / str(os.getpid())).touch()


class Misbehaving(StreamDetector):
    def feed(self, chunk):
        self.fed = getattr(self, "fed", 0) + 1
        if self.fed == 3 and mode == "crash":
            print("panic: index out of range", file=sys.stderr, flush=True)
            os._exit(3)
        if self.fed == 3 and mode == "hang":
            time.sleep(60)
        return super().feed(chunk)


serve(Misbehaving, sys.stdin.buffer, sys.stdout.buffer)
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """One recording far larger than the others, so the split cuts its random runs."""
    folder = tmp_path / "corpus"
    text = "".join(f"Step {i}: let me check. {CALL} Done.\n" for i in range(80))
    chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
    write_recording(
        folder / "large.msgpack",
        new_header("chunks", tools=["get_weather"]),
        [Frame(i, c) for i, c in enumerate(chunks)],
    )
    for name, pieces in [("small.msgpack", ["Hi <tool", "_call>{}", "</tool_call>"])]:
        write_recording(
            folder / name, new_header("chunks"), [Frame(i, c) for i, c in enumerate(pieces)]
        )
    write_recording(folder / "plain.msgpack", new_header("chunks"), [Frame(0, "no call here")])
    return folder


def same(report: Report) -> dict[str, Any]:
    """The report without its timings."""
    data = report.to_dict()
    del data["seconds"]
    for outcome in [*data["outcomes"], *([data["policy"]] if data["policy"] else [])]:
        del outcome["seconds"]
    if data["cost"] is not None:  # measured on the clock: its ratios are no timings, its times are
        del data["cost"]["seconds"], data["cost"]["measured"]
    return data


def test_a_large_recordings_random_runs_are_split_into_ranges_covering_each_once(
    corpus: Path,
) -> None:
    files = sorted(corpus.glob("*.msgpack"))
    plan = _plan(None, 8, 0, None, None, None, "content", False, True)
    tasks = split_tasks(files, plan, 2)
    large = [t for t in tasks if t.path.name == "large.msgpack"]
    assert all(t.slot is not None for t in large)
    random_slot = next(i for i, s in enumerate(plan.slots) if s is not None and s.repeated)
    ranges = [t.runs for t in large if t.slot == random_slot]
    assert len(ranges) > 1
    covered = [run for first, last in filter(None, ranges) for run in range(first, last)]
    assert covered == list(range(8))
    assert [t.slot for t in tasks if t.path.name == "plain.msgpack"] == [None]  # one task


@pytest.mark.slow
def test_split_run_gives_the_same_failures_shrunk_the_same_way(corpus: Path) -> None:
    options: dict[str, Any] = {"runs": 8, "detector": "tcr.detector.broken:per_chunk_markers"}
    one = run([corpus], **options)
    two = run([corpus], jobs=2, **options)
    assert same(two) == same(one)
    assert one.exit_code == EXIT_VIOLATION
    large = [o for o in one.outcomes if o.path.endswith("large.msgpack") and o.failures]
    assert any(o.strategy == "random:8" and o.failing_runs > 1 for o in large)


def test_split_run_gives_the_same_crashes_and_input_errors(corpus: Path) -> None:
    (corpus / "broken.msgpack").write_bytes(b"\x81\xa3tcr\x01garbage")
    options: dict[str, Any] = {"runs": 6, "detector": "crashing_detectors:feed_raises"}
    one = run([corpus], **options)
    two = run([corpus], jobs=2, **options)
    assert same(two) == same(one)
    assert one.exit_code == EXIT_ERROR and len(one.errors) == 1
    # it raises at a <tool_call>: the two recordings with one crash in every chunking
    assert [(Path(o.path).name, o.strategy, f.violation.check) for o, f in one.failures] == [
        (name, strategy, "crash")
        for name in ("large.msgpack", "small.msgpack")
        for strategy in ("original", "whole", "char", "random:8", "tokens")
    ]


@pytest.mark.slow
def test_a_single_large_recording_is_replayed_in_several_processes(corpus: Path) -> None:
    large = corpus / "large.msgpack"
    options: dict[str, Any] = {"runs": 4, "detector": "tcr.detector.broken:per_chunk_markers"}
    assert same(run([large], jobs=2, **options)) == same(run([large], **options))


# -- --detector-cmd with --jobs ------------------------------------------------------


def harness(tmp_path: Path, mode: str = "serve") -> tuple[str, Path]:
    script, pids = tmp_path / "harness.py", tmp_path / "pids"
    script.write_text(textwrap.dedent(HARNESS))
    pids.mkdir()
    return shlex.join([sys.executable, str(script), str(pids), mode]), pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # a zombie (exited, never waited for) still counts
    except ProcessLookupError:
        return False
    return True


def replay_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["replay", *args, "--json"])
    data = json.loads(result.output)
    del data["seconds"]
    for outcome in [*data["outcomes"], *([data["policy"]] if data["policy"] else [])]:
        del outcome["seconds"]
    if data.get("cost"):
        del data["cost"]["seconds"]  # the cost probe's time, like the outcomes'
    return result.exit_code, data


@pytest.mark.slow
def test_detector_cmd_gives_the_same_report_with_two_jobs() -> None:
    args = [*map(str, FEW), "--runs", "3", "--detector-cmd", REFERENCE_CMD]
    code, one = replay_json(*args)
    assert (code, one["exit_code"]) == (0, 0), one
    assert replay_json(*args, "--jobs", "2") == (code, one)


@pytest.mark.slow
def test_each_worker_stops_its_harness_when_the_run_ends(tmp_path: Path) -> None:
    command, pids = harness(tmp_path)
    with command_factory(command) as factory:
        report = run(FEW, detector=factory, runs=3, jobs=2)
        started = [int(p.name) for p in pids.iterdir()]
        assert report.exit_code == 0, report.to_dict()
        # one to read the harness's claim, stopped before the workers start one each;
        # not one per task
        assert 1 <= len(started) <= 3
        assert not any(alive(pid) for pid in started)


@pytest.mark.parametrize(
    ("mode", "message"),
    [("crash", "exited with code 3: panic: index out of range"), ("hang", "within 1 s")],
)
@pytest.mark.slow
def test_harness_crash_or_hang_names_the_recording_and_chunk_with_two_jobs(
    mode: str, message: str, tmp_path: Path
) -> None:
    command, pids = harness(tmp_path, mode)
    # The harness starting is not counted: its first answer has START_UP (30 s).
    with command_factory(command, timeout=1) as factory:
        options: dict[str, Any] = {"strategies": ["original"], "checks": ["crash"]}
        report = run(FEW[:2], detector=factory, minimize=False, jobs=2, **options)
    crashes = [(o, f) for o, f in report.failures if f.violation.check == "crash"]
    assert sorted(Path(o.path).name for o, _ in crashes) == sorted(p.name for p in FEW[:2])
    assert [f.violation.chunk for _, f in crashes] == [2, 2]
    assert all(message in f.violation.message for _, f in crashes)
    assert report.exit_code == EXIT_ERROR
    assert not any(alive(int(p.name)) for p in pids.iterdir())


# -- stopping early --------------------------------------------------------------------


class _NotesWhatItReplays(StreamDetector):
    """Notes each text it is fed in ./replayed (a worker starts in the caller's directory)."""

    def feed(self, chunk: str) -> list[Event]:
        if Path("replayed").is_dir():
            (Path("replayed") / chunk).touch()
            time.sleep(0.05)  # a task outlasts the parent's reaction to the first result
        return super().feed(chunk)


def notes_what_it_replays(tools: list[str] | None = None) -> StreamDetector:
    return _NotesWhatItReplays(tools=tools)


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, RuntimeError])
@pytest.mark.slow
def test_an_interruption_while_collecting_cancels_the_tasks_not_yet_started(
    interruption: type[BaseException], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(40):  # alike and small: one task each
        name = f"recording-{i:02}"
        write_recording(tmp_path / f"{name}.msgpack", new_header("chunks"), [Frame(0, name)])
    monkeypatch.chdir(tmp_path)
    Path("replayed").mkdir()

    def interrupt(path: str, done: int, total: int) -> None:
        raise interruption

    with pytest.raises(interruption):
        run(
            [tmp_path],
            detector=f"{__name__}:notes_what_it_replays",
            strategies=["original"],
            jobs=2,
            on_progress=interrupt,
        )
    # the recordings only: the policy probes ran the detector too, before any task
    replayed = len([p for p in Path("replayed").iterdir() if p.name.startswith("recording-")])
    assert 1 <= replayed < 20  # the running tasks and the few already queued to a worker


def test_a_worker_that_dies_is_one_line_and_exit_code_2() -> None:
    detector = "crashing_detectors:feed_exits"  # os._exit(3) in feed
    result = CliRunner().invoke(
        main, ["replay", *map(str, FEW), "--jobs", "2", "--detector", detector]
    )
    assert result.exit_code == EXIT_ERROR
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith("tcr replay: a --jobs worker process died (exit code 3)")
    assert "run without --jobs" in result.output
