"""Which recordings failed last time (``tcr replay --lf``), remembered as pytest's cache does:
``.tcr/lastfailed.json`` in the working directory, in a folder git ignores."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tcr._runtime.state import STATE, ignored_folder

from .model import Report

__all__ = ["CACHE_DIR", "LastFailed", "cache_folder", "remember"]

CACHE_DIR = str(STATE)  # under the working directory; TCR_CACHE_DIR names another
FILE = "lastfailed.json"


def cache_folder() -> Path:
    return Path(os.environ.get("TCR_CACHE_DIR") or CACHE_DIR)


@dataclass(frozen=True, slots=True)
class LastFailed:
    """The recordings (resolved paths) that failed or could not be read when last replayed."""

    paths: frozenset[str] = frozenset()

    @classmethod
    def read(cls, folder: Path | None = None) -> LastFailed:
        """What was remembered; nothing when there is no file or it cannot be read."""
        try:
            data = json.loads(((folder or cache_folder()) / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, list):
            return cls()
        return cls(frozenset(p for p in data if isinstance(p, str)))

    def select(self, files: Sequence[Path]) -> tuple[list[Path], str]:
        """The files that failed last time, or all when none did; and one line saying which."""
        failed = [path for path in files if _key(path) in self.paths]
        if not failed:
            return list(files), f"no recording failed last time: replaying all {len(files)}"
        return failed, f"replaying the {len(failed)} of {len(files)} that failed last time"

    def after(self, report: Report) -> LastFailed:
        """Updated by a run: what it replayed is forgotten, then what failed in it added; the
        recordings it did not replay keep what was known (as pytest's cache does)."""
        replayed = {_key(o.path) for o in report.outcomes} | {_key(e.path) for e in report.errors}
        failed = {_key(o.path) for o in report.outcomes if not o.ok}
        failed |= {_key(e.path) for e in report.errors}
        return LastFailed(frozenset((self.paths - replayed) | failed))

    def write(self, folder: Path | None = None) -> None:
        """Write it atomically, creating the folder with a ``.gitignore`` of ``*``."""
        folder = ignored_folder(folder or cache_folder())
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{FILE}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(sorted(self.paths), out, indent=1)
            os.replace(temporary, folder / FILE)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def remember(report: Report, folder: Path | None = None) -> str | None:
    """Remember the recordings that failed in ``report``; best effort: None when written, else
    one line saying why not (a read-only directory must not fail a replay)."""
    folder = folder or cache_folder()
    try:
        LastFailed.read(folder).after(report).write(folder)
    except OSError as error:
        return f"cannot remember the failed recordings in {folder}: {error.strerror or error}"
    return None


def _key(path: str | Path) -> str:
    return str(Path(path).resolve())
