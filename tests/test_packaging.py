"""Both install modes give one import package ``tcr`` and a working ``tcr`` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = [
    "tcr.recorder",
    "tcr.replay",
    "tcr.fuzz",
    "tcr.tui",
    "tcr.tui.widgets",
    "tcr.corpora",
]


def _venv(tmp_path: Path) -> Path:
    env_dir = tmp_path / "venv"
    # No system site packages: an editable tcr installed there would hide a
    # package or data file missing from this install. pip's cache makes it quick.
    venv.EnvBuilder(with_pip=True).create(env_dir)
    return env_dir / "bin"


def _run(cmd: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _check_installed(bin_dir: Path, elsewhere: Path) -> None:
    code = (
        "import tcr, importlib, importlib.resources as res, tcr.corpora;"
        f"[importlib.import_module(m) for m in {SUBPACKAGES!r}];"
        "assert res.files('tcr.tui').joinpath('tcr.tcss').is_file(), 'no stylesheet';"
        "assert len(tcr.corpora.bundled()) > 40, 'no bundled corpora';"
        "print(tcr.__file__)"
    )
    where = _run([str(bin_dir / "python"), "-c", code], elsewhere)
    assert "tcr" in where
    assert "Usage: tcr" in _run([str(bin_dir / "tcr"), "--help"], elsewhere)
    assert "tcr, version" in _run([str(bin_dir / "tcr"), "--version"], elsewhere)


@pytest.mark.slow
@pytest.mark.process
def test_pip_install_into_a_fresh_virtual_environment(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".git", "*.egg-info", "build", ".venv", "__pycache__"),
    )
    bin_dir = _venv(tmp_path)
    _run([str(bin_dir / "pip"), "install", "-q", str(source)], tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _check_installed(bin_dir, elsewhere)
    # A regular install copies the package: it must not point back at the source tree.
    location = _run(
        [str(bin_dir / "python"), "-c", "import tcr.replay; print(tcr.replay.__file__)"], elsewhere
    )
    assert "site-packages" in location


@pytest.mark.slow
@pytest.mark.process
def test_pip_install_editable(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".git", "*.egg-info", "build", ".venv", "__pycache__"),
    )
    bin_dir = _venv(tmp_path)
    _run([str(bin_dir / "pip"), "install", "-q", "-e", str(source)], tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _check_installed(bin_dir, elsewhere)
    location = _run(
        [str(bin_dir / "python"), "-c", "import tcr.replay; print(tcr.replay.__file__)"], elsewhere
    )
    assert location.strip() == str(source / "replay" / "__init__.py")


def test_version_matches_the_project_metadata() -> None:
    import tcr

    assert tcr.__version__ != "0.0.0+unknown"
    assert sys.version_info >= (3, 11)


def test_every_package_folder_is_listed_in_pyproject() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {folder: name for name, folder in config["package-dir"].items()}
    found = set()
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts and rel.parts[0] in roots:
            found.add(".".join([roots[rel.parts[0]], *rel.parts[1:]]))
    assert found == listed
