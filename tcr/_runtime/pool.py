"""What the process pools of ``tcr replay --jobs`` and ``tcr fuzz --jobs`` share.

Workers are started by a fork server, never by forking the caller: the CLI runs
Rich refresh threads while a pool starts, and a fork copies a lock another
thread holds as held forever (Python 3.12 warns; 3.14 no longer forks by
default). The server starts with the first pool of the process and imports the
worker's module (about 0.2 s, once); a pool of two is then up in about 20 ms,
where spawn takes 0.15 to 0.3 s for every pool, importing tcr in each worker.

A worker sees the caller as it is when the pool starts: its ``sys.path`` and
working directory (multiprocessing passes them) and its environment (passed
here: the server's copy dates from the first pool of the process). A detector
factory reaches the workers by reference, so it must be importable by name, and
a worker imports the caller's script as a module: its work must sit under
``if __name__ == "__main__":``.

``process_pool`` stops a pool the same way for every way its caller's block
ends: pending tasks are cancelled on an error or Ctrl-C (only the running ones
finish), and a worker that dies is one ``TcrError``, not a traceback.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

from tcr.errors import TcrError

__all__ = ["pickled_for_workers", "pool_context", "process_pool"]

# Not every platform has a fork server (Windows); spawn is the same, slower.
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def pool_context(worker_module: str) -> BaseContext:
    """The context of tcr's pools; its fork server, once started, has ``worker_module`` imported.

    The server starts with the first pool of the process, so a second pool of
    another module (in a test session) imports that module in each worker.
    """
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        context.set_forkserver_preload([worker_module])
    return context


def pickled_for_workers(value: object) -> bytes:
    """``value`` pickled for the workers, which get a detector factory by reference."""
    try:
        return pickle.dumps(value)
    except Exception:
        raise TcrError(
            "--jobs needs a detector factory importable by name (package.module:factory), "
            "not a local function or lambda"
        ) from None


@contextmanager
def process_pool(
    workers: int,
    *,
    context: BaseContext,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` processes (``context`` from ``pool_context``), shut down at the end.

    Any exception in the block, Ctrl-C included, cancels the tasks not yet
    started and is raised once the running ones are done; a worker that dies
    (an exit in a detector, an out-of-memory kill, a crash in native code) is a
    ``TcrError`` saying how.
    """
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(dict(os.environ), initializer, initargs),
    )
    try:
        yield pool
    except BrokenProcessPool:
        workers_started = _processes(pool)
        pool.shutdown(wait=True, cancel_futures=True)  # every worker waited for: exit codes known
        how = _how_one_died(workers_started)
        raise TcrError(
            f"a --jobs worker process died{how}: the detector ended it (os._exit, a crash in "
            "native code) or it was killed (out of memory?); run without --jobs to see where"
        ) from None
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _start_worker(
    environment: dict[str, str],
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    os.environ.clear()
    os.environ.update(environment)
    if initializer is not None:
        initializer(*initargs)


def _processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    # For the message only: the pool says neither which worker died nor how, and
    # keeps its processes in a private attribute (CPython: a dict by pid).
    try:
        return list((getattr(pool, "_processes", None) or {}).values())
    except Exception:
        return []


def _how_one_died(processes: list[BaseProcess]) -> str:
    """`` (exit code 3)``, `` (killed by SIGKILL)``, or ``""`` if no process tells."""
    for code in (process.exitcode for process in processes):
        # None: still running; SIGTERM: ended by the pool once another had died.
        if code is None or code in (0, -signal.SIGTERM):
            continue
        if code > 0:
            return f" (exit code {code})"
        try:
            return f" (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f" (killed by signal {-code})"
    return ""
