"""Lint, format, type and layering checks are part of the test run: clean is the normal state."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


# The subpackages live in top-level folders mapped into tcr by setuptools, which
# neither mypy nor import-linter can follow: they check a tree laid out as installed.
def _symlinked_tree(tmp_path: Path) -> Path:
    package = tmp_path / "tcr"
    package.mkdir()
    for item in (ROOT / "tcr").iterdir():
        if item.name != "__pycache__":
            (package / item.name).symlink_to(item)
    for folder in SUBPACKAGE_FOLDERS:
        (package / folder).symlink_to(ROOT / folder)
    return tmp_path


def _copied_tree(tmp_path: Path) -> Path:
    """A copy, for tests that edit modules to break a contract."""
    skip = shutil.ignore_patterns("__pycache__", "*.msgpack")
    shutil.copytree(ROOT / "tcr", tmp_path / "tcr", ignore=skip)
    for folder in SUBPACKAGE_FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / "tcr" / folder, ignore=skip)
    return tmp_path


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    config = str(ROOT / "pyproject.toml")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", config, "--no-incremental", "-p", "tcr"],
        cwd=_symlinked_tree(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    # lint-imports puts its working directory first on sys.path, so it reads the
    # tree, not the installed package; no cache, as a copied tree is edited in place.
    lint_imports = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [
            sys.executable,
            "-c",
            lint_imports,
            "--config",
            str(ROOT / "pyproject.toml"),
            "--no-cache",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_import_contracts_are_kept(tmp_path: Path) -> None:
    done = _lint_imports(_symlinked_tree(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("tcr/shard.py", "import subprocess", "tcr.shard -> subprocess"),
        ("tcr/rechunk.py", "import socket", "tcr.rechunk -> socket"),
        ("tcr/detector/core.py", "import threading", "tcr.detector.core -> threading"),
        ("tcr/oracle.py", "import tcr.replay", "tcr.oracle -> tcr.replay"),
        ("tcr/stream/sse.py", "from tcr.stdio import serve", "tcr.stream.sse -> tcr.stdio"),
        ("tcr/trace.py", "import tcr._runtime.pool", "tcr.trace -> tcr._runtime.pool"),
    ],
)
def test_import_contracts_fail_when_a_pure_module_does_io_or_imports_upward(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    tree = _copied_tree(tmp_path)
    with (tree / module).open("a", encoding="utf-8") as source:
        source.write(f"\n{line}\n")
    done = _lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in done.stdout
    assert "The pure core opens no sockets" in done.stdout


def test_import_contracts_fail_when_an_adapter_imports_a_command(tmp_path: Path) -> None:
    tree = _copied_tree(tmp_path)
    with (tree / "tcr" / "replay" / "show.py").open("a", encoding="utf-8") as source:
        source.write("\nimport tcr.commands.replay\n")
    done = _lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Imports go down" in done.stdout
    assert "tcr.replay.show -> tcr.commands.replay" in done.stdout
