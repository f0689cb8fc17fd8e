"""The suite's layout and its markers.

The folders mirror the repository (ARCHITECTURE.md §1):

    tests/core/      tcr/'s own modules: oracle, judge, trace, rechunk, minimize,
                     warm-cold and the CLI
    tests/corpus/    tcr/corpus: the recording format, reader and writer, hostile files
    tests/detector/  tcr/detector: the reference detector and its policies
    tests/dialects/  tcr/dialects: every registered dialect has every part
    tests/stdio/     tcr/stdio: detectors in other processes
    tests/runtime/   tcr/_runtime: process pools
    tests/adapters/  tcr/adapters: incremental-call parsers as detectors
    tests/parsers/   not tests: incremental Hermes parsers in engines' shapes, used above
    tests/stream/    tcr/stream: SSE, NDJSON and chunk decoding
    tests/recorder/  recorder/ (tcr.recorder)
    tests/replay/    replay/ (tcr.replay): replay, jobs, show, bless, reports, serve,
                     playback and the pytest plugin
    tests/fuzz/      fuzz/ (tcr.fuzz)
    tests/tui/       tui/ (tcr.tui), with its SVG snapshots in __snapshots__
    tests/corpora/   corpora/ (tcr.corpora): the bundled recordings themselves
    tests/live/      against a real llama-server
    tests/scripts/   scripts/: the llama-server launcher
    tests/           project-wide checks (lint and types, packaging, the README) and
                     the helpers the folders share: helpers, hypothesis_profiles, toy_detectors,
                     crashing_detectors, messages, sarif_checks, data/

Helpers are imported by module name: pyproject puts tests/ and scripts/ on sys.path,
and pytest's default import mode puts each test module's own folder there too (so
tests/recorder imports record_upstreams and tests/tui imports tui_helpers). Test
module names are therefore unique across folders; only tests/stream is a package.

Markers (registered in pyproject.toml):

    live     needs a real llama-server: tests/live, and any test using the llama
             or llama_native fixture (marked here)
    slow     takes seconds, counting all its cases (over about 1 s on this shared
             2-core machine): fuzz searches, harness processes, Textual Pilot runs,
             property tests over large inputs; marked here for large recordings and
             whole modules, else at the test
    process  starts a subprocess, a process pool or a server on a port; marked here
             for the fixtures and modules that do, else at the test

The cost check (tcr.cost) times the detector once per tcr.replay.run() and
tcr.fuzz.run(). Tests about something else get it measured as linear at once
(``_cost_not_timed`` below): hundreds of runs would each spend ~0.4 s of CPU on the
probe, and no test's verdict should hang on the machine's load. The cost tests
(modules named ``test_*cost*``) measure for real, on a virtual or the real clock.

Hypothesis settings profiles (tests/hypothesis_profiles.py): ``dev``, the default, runs
at most a few examples per property test; ``ci`` (``TCR_HYPOTHESIS_PROFILE=ci``, as
``.ci/run`` sets) runs what each test asks for.

The suite runs in parallel under pytest-xdist (``-n auto``): each worker is its own
process with its own temporary folders and working directory, and the tests reach
servers on free ports only; tests/live starts its llama-server once per worker.

The fast loop while developing is ``python -m pytest -n auto -m "not live and not slow"``;
``python -m pytest -n auto`` runs everything, and CI runs that with the ``ci`` profile.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path


def _cache_bytecode(root: Path) -> None:
    """Where the environment forbids bytecode (``PYTHONDONTWRITEBYTECODE``, as on our CI
    machine), every worker and every ``tcr`` subprocess the tests start compiled the same
    few hundred modules again, pytest's rewritten test modules with them: about 8 s of CPU
    per process to collect the suite. Bytecode is then written under .pytest_cache/, never
    beside the sources, for this process and its children."""
    if not sys.flags.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = str(root / ".pytest_cache" / "pycache")
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_cache_bytecode(Path(__file__).parent.parent)

import hypothesis_profiles  # noqa: E402  (after the bytecode cache: it imports tcr)
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

TESTS = Path(__file__).parent

# A fixture that starts a server or a process makes every test using it one that does.
FIXTURE_MARKS: Mapping[str, tuple[str, ...]] = {
    "llama": ("live", "process"),
    "llama_native": ("live", "process"),
    "upstream": ("process",),  # tests/recorder: an aiohttp LLM server on a free port
}

# Modules about a process feature, by path under tests/: every test gets the marks,
# even the odd one that fails before it would start a process.
MODULE_MARKS: Mapping[str, tuple[str, ...]] = {
    "live": ("live", "process"),
    "test_quality.py": ("slow", "process"),  # ruff, mypy and the import checks
    "runtime/test_pool.py": ("process",),
    "stdio/test_stdio_detector.py": ("slow", "process"),  # a harness process per detector
    "stdio/test_stdio_claims.py": ("process",),  # a harness process per claim read
    "recorder/test_record_crash.py": ("slow", "process"),  # tcr record killed by signals
    "replay/test_pytest_plugin.py": ("slow", "process"),  # pytest in a subprocess
    "replay/test_replay_jobs.py": ("process",),
    "replay/test_serve.py": ("process",),
    "replay/test_matrix_browser.py": ("slow", "process"),  # the page in a headless Chromium
    "tui/test_tui_tmux.py": ("slow", "process"),
}

# The 2 MB policy_13_block_too_long recording: every check on it takes seconds.
LARGE_RECORDING_BYTES = 200_000

try:
    PROFILE = hypothesis_profiles.chosen()
except ValueError as error:
    raise pytest.UsageError(str(error)) from None
settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = [name for name in MODULE_MARKS if not (TESTS / name).exists()]
    if missing:  # a moved or renamed module would silently lose its marks
        raise pytest.UsageError(f"tests/conftest.py marks modules that do not exist: {missing}")
    for item in items:
        for mark in _marks(item):
            item.add_marker(mark)
        if PROFILE == "dev":
            hypothesis_profiles.fewer_examples(getattr(item, "obj", None))


def _marks(item: pytest.Item) -> set[str]:
    marks = set(_module_marks(item.path))
    for fixture in getattr(item, "fixturenames", ()):
        marks.update(FIXTURE_MARKS.get(fixture, ()))
    if _has_a_large_recording(item):
        marks.add("slow")
    return marks


# Cached per module and per recording: ten thousand items share a few hundred of each,
# and collection is what every run of the fast loop pays first.
@functools.cache
def _module_marks(path: Path) -> frozenset[str]:
    if not path.is_relative_to(TESTS):  # e.g. the recordings of --tcr-corpus
        return frozenset()
    where = path.relative_to(TESTS)
    return frozenset(
        mark
        for name, names in MODULE_MARKS.items()
        if where == Path(name) or Path(name) in where.parents
        for mark in names
    )


def _has_a_large_recording(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(
        isinstance(value, Path) and value.suffix == ".msgpack" and _is_large(value)
        for value in params
    )


@functools.cache
def _is_large(recording: Path) -> bool:
    return recording.stat().st_size > LARGE_RECORDING_BYTES


@pytest.fixture(autouse=True)
def _cache_elsewhere(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tcr replay`` remembers what failed (``--lf``) in ``.tcr/`` of the working directory:
    in the tests, in a folder of their own, not in the checkout (processes inherit it)."""
    monkeypatch.setenv("TCR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "tcr-cache"))


@pytest.fixture(autouse=True)
def _cost_not_timed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost probe answered as linear, outside the cost tests (module docstring)."""
    if "cost" in request.node.path.name:
        return
    from tcr.cost import EVERY, Cost, Growth
    from tcr.fuzz import cost as fuzz_cost
    from tcr.replay import cost as replay_cost

    linear = Cost((), (Growth(EVERY, 2048, 8192, (0.02, 0.08), 1.0),))
    monkeypatch.setattr(replay_cost, "measure_cost", lambda factory, **kwargs: linear)
    monkeypatch.setattr(fuzz_cost, "measure_cost", lambda factory, **kwargs: linear)
