"""A finding as a recording: the failing chunking as frames, the ground truth as expectation.

One recording per distinct finding; its labels name the finding's signature.

``tcr replay SAVED --detector X`` then fails the same way, and the file joins the
regression corpus once the bug is fixed. By default findings go to ``.tcr/found/``,
which ignores itself in git (``tcr._runtime.state``): no run's leftovers in a commit,
and nothing a test suite collects unless asked.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from tcr._runtime.state import keep_out_of_git
from tcr.corpus import Frame, new_header, write_recording

from .model import Finding

__all__ = ["commands", "save_case"]

FRAME_NS = 1_000_000  # frames 1 ms apart: arrival times are not what a fuzz case is about


def save_case(finding: Finding, directory: Path, *, seed: int, detector: str) -> Path:
    """Write the shrunk case under ``directory``; the name is a digest of the case and its
    signature (two findings may shrink to the same case: each keeps its own file)."""
    case = finding.case
    check = finding.check
    identity = json.dumps(
        [
            str(finding.signature),
            list(case.chunks),
            case.tools,
            case.truth and case.truth.expectation(),
            case.tool_specs,
        ],
        ensure_ascii=False,
        sort_keys=True,
    )
    digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
    labels = {
        "origin": "fuzz",
        "bug": check,
        "signature": str(finding.signature),
        "note": f"{finding.violation.message} ({case.origin})",
        "seed": seed,
        "detector": detector,
    }
    header = new_header(
        "chunks",
        id=f"fuzz-{check}-{digest}",
        source={"backend": "tcr fuzz"},
        # The request's tools with their schemas, so that a replay gives them to the
        # detector again (``Recording.tool_specs``); ``tools`` stays the names.
        request={} if case.tool_specs is None else {"tools": list(case.tool_specs)},
        tools=case.tools,
        labels=labels,
    )
    frames = [Frame(k * FRAME_NS, chunk) for k, chunk in enumerate(case.chunks)]
    expect = None if case.truth is None else case.truth.expectation()
    path = directory / f"{check}-{digest}.msgpack"
    keep_out_of_git(directory)
    return write_recording(path, header, frames, expect=expect)


def commands(
    path: Path,
    detector: str | None,
    claim_options: Sequence[str] = (),
    checks: Sequence[str] = (),
) -> tuple[str, str]:
    """The ``tcr replay`` and ``tcr tui`` lines that reproduce a saved failure.

    ``claim_options``: ``Claim.options()``, so the reproducer judges the same claim;
    ``checks``: the checks the run was asked for (``--check``), restated for replay.
    """
    shown = _shown_path(path)
    options = [*(["--detector", detector] if detector else []), *claim_options]
    asked = [arg for check in checks for arg in ("--check", check)]
    replay = shlex.join(["tcr", "replay", shown, "--rechunk", "original", *options, *asked])
    tui = shlex.join(["tcr", "tui", shown, *options])
    return replay, tui


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
