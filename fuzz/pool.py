"""A search spread over processes on this machine (``tcr fuzz --jobs N``).

Each worker runs its part of the search and returns its part of the report. The
workers share a stop flag and their example counts. The first worker to find a
failure claims the flag; the others stop at their next example, so the failure
is shrunk by the worker that found it and saved and printed once. The counts
feed the progress line while the workers run.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, wait
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from tcr._runtime.pool import pool_context, process_pool

__all__ = ["Shared", "run_workers", "shared"]

T = TypeVar("T")
PROGRESS_EVERY = 0.5  # seconds between two progress reports


class Shared:
    """What the processes of one run share: the stop flag and each worker's counts."""

    def __init__(self, context: BaseContext, workers: int) -> None:
        self._stop = context.Value(ctypes.c_bool, False)
        self._counts = context.Array(ctypes.c_longlong, 2 * workers)

    def stopped(self) -> bool:
        return bool(self._stop.value)

    def claim(self) -> bool:
        """Stop the others; ``False`` if the run was stopped already (a failure came first)."""
        with self._stop.get_lock():
            if self._stop.value:
                return False
            self._stop.value = True
            return True

    def stop(self) -> None:
        self._stop.value = True

    def count(self, worker: int, generated: int, mutated: int) -> None:
        self._counts[2 * worker : 2 * worker + 2] = [generated, mutated]

    def totals(self) -> tuple[int, int]:
        counts = self._counts[:]
        return sum(counts[0::2]), sum(counts[1::2])


_shared: Shared | None = None  # in a worker process


def _initialize(state: Shared) -> None:
    global _shared
    _shared = state


def shared() -> Shared:
    """The run's shared state, in a worker process."""
    if _shared is None:
        raise RuntimeError("not in a worker process of tcr.fuzz.pool.run_workers")
    return _shared


def run_workers(
    work: Callable[..., T],
    args: Sequence[tuple[Any, ...]],
    *,
    on_counts: Callable[[int, int], None] | None = None,
) -> list[T]:
    """``work(worker, *args[worker])``, each in a process of its own; the results in worker order.

    An exception in a worker stops the others, and is raised here once they have
    stopped; a worker that dies is a ``TcrError``. ``on_counts(generated, mutated)``
    reports the workers' counts so far.
    """
    context = pool_context(work.__module__)
    state = Shared(context, len(args))
    with process_pool(
        len(args), context=context, initializer=_initialize, initargs=(state,)
    ) as pool:
        futures = [pool.submit(work, worker, *a) for worker, a in enumerate(args)]
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=PROGRESS_EVERY, return_when=FIRST_EXCEPTION)
                if any(future.exception() is not None for future in done):
                    break
                if on_counts is not None:
                    on_counts(*state.totals())
        finally:  # an error here or in a worker, or Ctrl-C: the others stop too
            state.stop()
        return [future.result() for future in futures]
