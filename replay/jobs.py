"""``tcr replay --jobs N``: a run split into tasks for N processes, merged into one report.

One recording can be most of a corpus's work (a 1 MB block replayed at 20 random
chunkings), so a pool of whole recordings would leave the other processes idle.
``split_tasks`` is the one place that decides the split: a recording whose
estimated cost is a small share of the run is one task; a larger one is one task
per strategy, and a random strategy's runs are cut into ranges. The tasks are
handed out largest first, so the last to finish are small.

A task finds failures but does not shrink them. Once every task of a recording is
back, its parts are merged as one process replaying in order would have built them
(counts added, the first failing chunking per signature key kept, stopping at a
detector error) and only the kept failures are shrunk, each as a task of its own. The
report is the one ``--jobs 1`` gives, in the same order.

Each worker unpickles the plan once; a ``--detector-cmd`` factory then starts one
harness process per worker, on first use, and stops it when the worker exits.
"""

from __future__ import annotations

import math
import multiprocessing.util
import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from tcr._runtime.pool import pickled_for_workers, pool_context, process_pool
from tcr.oracle import CHECKS, Violation
from tcr.rechunk import Chunking, Strategy
from tcr.stdio import CommandFactory

from .engine import Found, Plan, Replay, load
from .model import Failure, InputError, Outcome, Report, display_path

__all__ = ["Task", "replay_in_processes", "split_tasks"]

Progress = Callable[[str, int, int], None]  # (recording, done so far, total)

TASKS_PER_JOB = 8  # a task is at most ~1/8 of a process's share, so the tail is short
# Cost of one chunking ~ characters + STEP_COST x chunks: a feed, its trace step and
# its checks cost about as much as 12 characters of input (reference detector, 1 MB:
# `char` 3.3 s against 0.8 s for one `random:8` run).
STEP_COST = 12
TOKEN = 4  # characters per recorded chunk, for `original` (its chunk count is not known yet)
BOUNDARY_SPLITS = 16  # chunkings of `boundary`, likewise a guess before decoding


@dataclass(frozen=True, slots=True)
class Task:
    """Part of one recording's replay: all of it, one slot, or a range of a slot's runs."""

    path: Path
    slot: int | None = None  # index into Plan.slots; None: every slot
    runs: tuple[int, int] | None = None  # runs first..last-1 of a random strategy
    cost: float = field(default=0.0, compare=False)  # estimated, to schedule largest first


def split_tasks(files: Sequence[Path], plan: Plan, jobs: int) -> list[Task]:
    """The run as tasks, in report order (each recording's tasks in slot and run order)."""
    costs = {path: [_cost(slot, _size(path), plan.runs) for slot in plan.slots] for path in files}
    target = sum(map(sum, costs.values())) / (jobs * TASKS_PER_JOB)
    tasks: list[Task] = []
    for path in files:
        if sum(costs[path]) <= target:
            tasks.append(Task(path, cost=sum(costs[path])))
            continue
        for slot, (strategy, cost) in enumerate(zip(plan.slots, costs[path], strict=True)):
            pieces = 1
            if strategy is not None and strategy.repeated:
                pieces = min(plan.runs, math.ceil(cost / target))
            if pieces == 1:
                tasks.append(Task(path, slot, cost=cost))
                continue
            bounds = [plan.runs * i // pieces for i in range(pieces + 1)]
            for first, last in pairwise(bounds):
                share = cost * (last - first) / plan.runs
                tasks.append(Task(path, slot, (first, last), cost=share))
    return tasks


def _size(path: Path) -> int:
    # Bytes on disk: for sse and ndjson recordings more than their content, so a
    # small recording may look larger than it is, never a large one smaller.
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the task reports why it cannot be read


def _cost(strategy: Strategy | None, size: int, runs: int) -> float:
    """Estimated work of one slot on a recording of ``size`` bytes."""
    chunkings: float
    chunk: float
    if strategy is None:  # warm-cold: the recorded chunking, three times
        chunkings, chunk = 3, TOKEN
    elif strategy.repeated:
        chunkings, chunk = runs, (strategy.size + 1) / 2
    elif strategy.kind in ("exhaustive", "bytes-exhaustive"):
        chunkings, chunk = size, size / 2
    elif strategy.kind == "boundary":
        chunkings, chunk = BOUNDARY_SPLITS, size / 2
    elif strategy.kind == "original":
        chunkings, chunk = 1, TOKEN
    elif strategy.kind in ("char", "fixed", "bytes"):
        chunkings, chunk = 1, max(strategy.size, 1)
    else:  # whole, splits:
        chunkings, chunk = 1, size
    return chunkings * size * (1 + STEP_COST / max(chunk, 1))


def replay_in_processes(
    tasks: Sequence[Task], plan: Plan, report: Report, jobs: int, on_progress: Progress | None
) -> None:
    """Replay ``tasks`` (from ``split_tasks``) in ``jobs`` processes into ``report``.

    ``on_progress`` counts tasks, not recordings: the largest recording is started
    first and done only near the end. An exception while the results come in, from
    ``on_progress`` or Ctrl-C, cancels the tasks not yet started; a worker that
    dies is a ``TcrError``.
    """
    payload = pickled_for_workers(plan)
    by_file: dict[Path, list[Task]] = {}
    for task in tasks:
        by_file.setdefault(task.path, []).append(task)
    parts: dict[Task, list[_Part] | InputError] = {}
    merged: dict[Path, list[_Merged] | InputError] = {}
    with process_pool(
        jobs, context=pool_context(__name__), initializer=_start_worker, initargs=(payload,)
    ) as pool:
        largest_first = sorted(tasks, key=lambda t: t.cost, reverse=True)
        futures = {pool.submit(_replay_task, task): task for task in largest_first}
        for done, future in enumerate(as_completed(futures), 1):
            path = futures[future].path
            parts[futures[future]] = future.result()
            if on_progress is not None:
                on_progress(display_path(path), done, len(tasks))
            if any(task not in parts for task in by_file[path]):
                continue
            result = _merge([parts.pop(task) for task in by_file[path]])
            if not isinstance(result, InputError):
                for item in result:  # shrink what the merged report keeps, in parallel
                    item.shrinking = [
                        pool.submit(_shrink_task, path, c, v) for c, v, _ in item.found
                    ]
            merged[path] = result
        for path in by_file:
            result = merged[path]
            if isinstance(result, InputError):
                report.errors.append(result)
                continue
            for item in result:
                for shrunk in item.shrinking:
                    failure, seconds = shrunk.result()
                    item.outcome.failures.append(failure)
                    item.outcome.seconds += seconds
                report.outcomes.append(item.outcome)


# -- merging -----------------------------------------------------------------------

_Part = tuple[int, Outcome, list[Found]]  # (slot, outcome, failures found) from one task


@dataclass(slots=True)
class _Merged:
    """One slot of a recording, its parts merged; its failures being shrunk."""

    outcome: Outcome
    found: list[Found]
    shrinking: list[Future[tuple[Failure, float]]] = field(default_factory=list)


def _merge(results: Sequence[list[_Part] | InputError]) -> list[_Merged] | InputError:
    """One recording's task results, in task order, as one process would have replayed it."""
    merged: dict[int, _Merged] = {}
    for result in results:
        if isinstance(result, InputError):
            return result  # every task of it reads the same file: one error, as with --jobs 1
        for slot, outcome, found in result:
            if slot in merged:
                _add(merged[slot], outcome, found)
            else:
                merged[slot] = _Merged(outcome, found)
    return list(merged.values())


def _add(into: _Merged, outcome: Outcome, found: list[Found]) -> None:
    """Runs of the same strategy that came after ``into``'s, as if replayed in one loop."""
    total = into.outcome
    if total.error is not None:  # the loop stopped at a detector error: later runs never ran
        return
    total.runs += outcome.runs
    total.chars += outcome.chars
    total.failing_runs += outcome.failing_runs
    total.seconds += outcome.seconds
    total.error = outcome.error
    failed = {f.violation.check for f in total.failures}
    total.failures += [f for f in outcome.failures if f.violation.check not in failed]
    kept = {coarse for _, _, coarse in into.found}
    into.found += [f for f in found if f[2] not in kept]
    ran = {*total.checks, *outcome.checks}
    total.checks = tuple(
        dict.fromkeys(c for c in (*CHECKS, *total.checks, *outcome.checks) if c in ran)
    )
    total.skipped.update(outcome.skipped)
    for check in ran:
        total.skipped.pop(check, None)


# -- in a worker process -------------------------------------------------------------

_plan: Plan | None = None
# The last recording read: a large recording's tasks are handed out one after another
# (largest first), so a worker reads, decodes and runs it whole once, not once per task.
_loaded: tuple[Path, Replay | InputError] | None = None


def _start_worker(payload: bytes) -> None:
    global _plan
    _plan = pickle.loads(payload)
    factory = _plan.detector.factory
    if isinstance(factory, CommandFactory):
        # One harness per worker: stopped (and waited for) as the worker exits, no orphans.
        multiprocessing.util.Finalize(factory, factory.close, exitpriority=10)


def _replay_of(path: Path) -> Replay | InputError:
    global _loaded
    assert _plan is not None, "a replay task outside a worker started by replay_in_processes"
    if _loaded is None or _loaded[0] != path:
        _loaded = (path, load(path, _plan))
    return _loaded[1]


def _replay_task(task: Task) -> list[_Part] | InputError:
    replay = _replay_of(task.path)
    if isinstance(replay, InputError):
        return replay
    slots = range(len(replay.plan.slots)) if task.slot is None else [task.slot]
    return [(slot, *replay.outcome(slot, task.runs)) for slot in slots]


def _shrink_task(
    path: Path, chunking: Chunking[str], violation: Violation
) -> tuple[Failure, float]:
    started = time.perf_counter()
    replay = _replay_of(path)
    assert not isinstance(replay, InputError), "a failure found in a recording that cannot be read"
    return replay.shrink(chunking, violation), time.perf_counter() - started
