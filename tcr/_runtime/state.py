"""tcr's own folder in the working directory, ``.tcr/``, kept out of version control.

As ``.pytest_cache/`` and ``.hypothesis/`` are: what a run leaves for the next one
(fuzz findings, the last failures) lives there, and the folder ignores itself
(a ``.gitignore`` holding ``*``), so that nothing tcr writes lands in a commit or
in the test suite's corpora by accident.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATE", "ignored_folder", "keep_out_of_git"]

STATE = Path(".tcr")
_IGNORE = "# Created by tcr: everything here is a run's leftovers.\n*\n"


def ignored_folder(folder: Path) -> Path:
    """``folder``, made if need be, holding a ``.gitignore`` of ``*`` unless it has one."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE, encoding="utf-8")
    return folder


def keep_out_of_git(path: Path) -> None:
    """If ``path`` is ``.tcr`` or inside it, make that folder and its ``.gitignore``."""
    for folder in (path, *path.parents):
        if folder.name == STATE.name:
            ignored_folder(folder)
            return
