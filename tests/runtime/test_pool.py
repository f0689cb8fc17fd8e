"""The process pools of --jobs: workers see the caller as it is when the pool starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tcr._runtime.pool import pool_context, process_pool
from tcr.detector.loader import load_factory


def test_workers_see_the_environment_of_the_caller_when_the_pool_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context = pool_context("tcr._runtime.pool")
    with process_pool(1, context=context) as pool:  # the fork server, if any, starts now
        assert pool.submit(os.getenv, "TCR_POOL_TEST").result() is None
    monkeypatch.setenv("TCR_POOL_TEST", "set later")
    with process_pool(1, context=context) as pool:
        assert pool.submit(os.getenv, "TCR_POOL_TEST").result() == "set later"


def test_workers_import_by_name_from_the_callers_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pool_test_detectors.py").write_text("def factory(tools=None):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # after the fork server started, if it did
    with process_pool(1, context=pool_context("tcr._runtime.pool")) as pool:
        loaded = pool.submit(load_factory, "pool_test_detectors:factory").result()
    assert loaded.__module__ == "pool_test_detectors"
