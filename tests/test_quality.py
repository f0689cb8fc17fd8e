"""Lint, format and type checks are part of the test run: clean is the normal state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGE_FOLDERS = ("recorder", "replay", "fuzz", "tui", "corpora")


# ruff comes with the test extra: a missing install step fails here, not for a user.
def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_check_is_clean() -> None:
    done = _run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean() -> None:
    done = _run("ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    # The subpackages live in top-level folders mapped into tcr by setuptools,
    # which mypy cannot follow: check a tree laid out as installed instead.
    package = tmp_path / "tcr"
    package.mkdir()
    for item in (ROOT / "tcr").iterdir():
        if item.name != "__pycache__":
            (package / item.name).symlink_to(item)
    for folder in SUBPACKAGE_FOLDERS:
        (package / folder).symlink_to(ROOT / folder)
    config = str(ROOT / "pyproject.toml")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", config, "--no-incremental", "-p", "tcr"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
