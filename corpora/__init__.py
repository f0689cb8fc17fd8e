"""Bundled msgpack corpora, shipped as package data.

``regressions/`` holds one handmade recording per failure described in the
seeds (ARCHITECTURE.md §15) and per policy (§5.6), each with the expectation the
reference detector meets; ``python -m tcr.corpora.build_regressions`` rebuilds it from
its table. ``tcr replay`` with no paths replays :func:`bundled`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT", "bundled"]

#: The folder of the bundled corpora (inside the installed package, or the source tree).
ROOT: Path = Path(__file__).resolve().parent


def bundled() -> list[Path]:
    """Every bundled recording under :data:`ROOT`, subfolders included, sorted by path."""
    found = (path for path in ROOT.rglob("*.msgpack") if path.is_file())
    return sorted(found, key=lambda path: path.relative_to(ROOT).parts)
