"""A ``tcr show`` summary for CI: JUnit XML (a test case per check) and SARIF.

Both read the :class:`ShowSummary` :func:`tcr.replay.show.summarize` returns, so
they report what ``tcr show`` printed: the checks of one chunking of one recording.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcr import sarif
from tcr._runtime import junit
from tcr._runtime.names import shell_join
from tcr._runtime.report_files import write_sarif_log
from tcr.oracle import CHECKS

from .show_summary import ShowSummary

__all__ = ["command_line", "sarif_results", "to_sarif", "write_junit", "write_sarif"]


def command_line(
    path: str | Path,
    *,
    rechunk: str = "original",
    detector: str | None = None,
    tools: str | None = None,
    seed: int = 0,
    claim: Sequence[str] = (),
) -> str:
    """The ``tcr show`` line that shows the same chunking again (``claim``: its options)."""
    args = ["tcr", "show", str(path), "--rechunk", rechunk]
    if seed:
        args += ["--seed", str(seed)]
    if detector is not None:
        args += ["--detector", detector]
    if tools is not None:
        args += ["--tools", tools]
    return shell_join([*args, *claim])  # exact when pasted, one valid UTF-8 line


def sarif_results(summary: ShowSummary, *, command: str | None = None) -> list[sarif.Result]:
    """One result per violation, or one ``input`` result for a body that does not decode."""
    path = summary.path
    recording = str(summary.header.get("id") or path)
    error = summary.decode_error
    if error is not None or summary.content is None or summary.verdict is None:
        return [sarif.Result("input", str(error), path, ("show", recording, "input"))]
    label = summary.content["label"]
    spec = summary.detector["spec"] if summary.detector is not None else None
    reproduce = f" Reproduce with: {command}" if command else ""
    results = []
    for v in summary.verdict.violations:
        where = f" ({v.where}: {v.excerpt})" if v.excerpt else ""
        results.append(
            sarif.Result(
                v.check,
                f"{v.check} fails on {path} under {label}: {v.message}{where}.{reproduce}",
                path,
                ("show", recording, v.check, summary.content["rechunk"]),
                chunk=v.chunk,
                offset=v.offset,
                properties={
                    "recording": recording,
                    "chunking": label,
                    "detector": spec,
                    "excerpt": v.excerpt,
                    **({"reproducer": command} if command else {}),
                },
            )
        )
    return results


def to_sarif(
    summary: ShowSummary, *, command: str | None = None, root: Path | None = None
) -> dict[str, Any]:
    """The summary's verdict as a SARIF 2.1.0 log (``command``: the line that reproduces it)."""
    return sarif.to_sarif(
        sarif_results(summary, command=command),
        root=(Path.cwd() if root is None else root).resolve(),
        exit_code=summary.exit_code,
    )


def write_sarif(summary: ShowSummary, path: str | Path, *, command: str | None = None) -> None:
    """Write the verdict as SARIF 2.1.0 (GitHub code scanning, the VS Code SARIF viewer)."""
    log = to_sarif(summary, command=command)
    write_sarif_log(path, log)


def write_junit(summary: ShowSummary, path: str | Path) -> None:
    """One test case per check (passed, failed, skipped with why); a crash is an error.

    A body that does not decode is one errored test case: no check ran.
    """
    recording = summary.path
    verdict = summary.verdict
    cases: list[junit.Case] = []
    if summary.decode_error is not None or verdict is None:
        error = str(summary.decode_error)
        cases.append(
            junit.Case(
                recording, "decode", outcome=junit.Outcome.ERROR, message=error, kind="input"
            )
        )
    else:
        for check in CHECKS:
            found = [v for v in verdict.violations if v.check == check]
            if found:
                cases.append(
                    junit.Case(
                        recording,
                        check,
                        outcome=junit.Outcome.ERROR if check.is_error else junit.Outcome.FAILURE,
                        message=f"{check}: {found[0].message}",
                        kind=check,
                        text="\n".join(str(v) for v in found),
                    )
                )
            elif check in verdict.ran:
                cases.append(junit.Case(recording, check))
            elif check in verdict.skipped:
                why = verdict.skipped[check]
                cases.append(
                    junit.Case(recording, check, outcome=junit.Outcome.SKIPPED, message=why)
                )
    properties = []
    if summary.content is not None and summary.detector is not None:  # a body that decodes
        properties = [("rechunk", summary.content["label"]), ("detector", summary.detector["spec"])]
    junit.write_suite(path, "tcr show", cases, properties=properties)
