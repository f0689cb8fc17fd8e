"""A replay ``Report`` for people (a rich table), for machines (JSON) and for CI (JUnit XML,
SARIF for code-scanning views)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcr import sarif
from tcr._runtime import junit
from tcr._runtime.report_files import write_sarif_log
from tcr.oracle import Check
from tcr.signature import TIMEOUT

from .model import Failure, FindingGroup, Outcome, Report

__all__ = [
    "render",
    "sarif_results",
    "to_json",
    "to_sarif",
    "write_junit",
    "write_sarif",
]


def render(report: Report, console: Console) -> None:
    """The summary table (recording x strategy), then each distinct finding (signature) once,
    in full with its reproducer, and where else it showed."""
    table = Table(title="tcr replay", title_justify="left", show_lines=False)
    table.add_column("recording", overflow="fold")
    table.add_column("strategy")
    table.add_column("runs", justify="right")
    table.add_column("chars", justify="right")
    table.add_column("result")
    table.add_column("time", justify="right")
    for o in report.rows:
        if o.error:
            result = f"[bold red]ERROR[/] {escape(o.error)}"
        elif o.failures:
            result = f"[bold red]FAIL[/] {', '.join(o.failed_checks)} ({o.failing_runs}/{o.runs})"
        elif not o.checks:
            result = "[yellow]skipped[/] " + escape("; ".join(o.skipped.values()))
        else:
            result = "[green]pass[/]"
        if o is report.cost and report.cost_measured is not None and o.checks:
            result += f" [dim]({escape(report.cost_measured.summary())})[/]"
        if o.incomplete:
            result += " [dim](incomplete recording)[/]"
        table.add_row(
            escape(o.path), o.strategy, str(o.runs), f"{o.chars:,}", result, f"{o.seconds:.2f}s"
        )
    console.print(table)
    for error in report.errors:
        message = error.message if error.path in error.message else f"{error.path}: {error.message}"
        console.print(f"[bold red]error[/] {escape(message)}", soft_wrap=True, highlight=False)
    # The same finding usually turns up under several strategies and recordings: each
    # distinct signature is shown once, in full, with where else it showed.
    findings = report.findings
    for group in findings:
        _render_group(console, group)
    verdict = {0: "[green]all checks pass[/]", 1: "[red]violations found[/]"}.get(
        report.exit_code, "[red]some inputs could not be replayed[/]"
    )
    n = report.recordings
    distinct = f", {_plural(len(findings), 'distinct finding')}" if findings else ""
    console.print(f"\njudged against the claim: {escape(str(report.claim))}", highlight=False)
    for (check, why), count in report.not_judged.items():
        plural = "s" if count != 1 else ""
        console.print(f"{count} recording{plural}: {check} not judged ({escape(why)})")
    console.print(
        f"{n} recording{'s' if n != 1 else ''}, {len(report.outcomes)} strategy runs, "
        f"{report.chars:,} characters in {report.seconds:.2f}s{distinct}: {verdict}"
        + (" (stopped at the first failure)" if report.stopped_early else "")
    )


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


ALSO_SHOWN = 4  # other places a finding showed, listed by name; the rest are counted


def _render_group(console: Console, group: FindingGroup) -> None:
    outcome, failure = group.first
    console.print()
    where = f"{_plural(group.recordings, 'recording')}, {_plural(group.strategies, 'strategy')}"
    if group.signature.check == Check.COST:
        where = "the probe message, once per run"
    console.print(f"[bold red]{escape(str(group.signature))}[/]: {where}", highlight=False)
    _render_failure(console, outcome, failure)
    others: dict[str, list[str]] = {}
    for o, _ in group.failures[1:]:
        others.setdefault(o.path, []).append(o.strategy)
    lines = [f"{path} under {', '.join(s)}" for path, s in others.items()]
    if lines:
        more = len(lines) - ALSO_SHOWN
        shown = lines[:ALSO_SHOWN]
        shown += [f"and {_plural(more, 'more recording')}"] if more > 0 else []
        console.print("  also: " + escape("; ".join(shown)), soft_wrap=True, highlight=False)


def _render_failure(console: Console, outcome: Outcome, failure: Failure) -> None:
    v = failure.violation
    under = outcome.strategy
    if failure.label != outcome.strategy:
        under += f" ({failure.label})"
    console.print(
        f"[bold red]{v.check}[/] in {escape(outcome.path)} under {escape(under)}: "
        f"{escape(v.message)}"
    )
    if v.excerpt:
        where = f"chunk {v.chunk}, offset {v.offset}"
        console.print(f"  at {where}: {escape(v.excerpt)}", highlight=False)
    if v.check is Check.COST:  # a probe message, not a recording: nothing to shrink
        console.print("  reproduce with:")
    elif failure.signature.kind == TIMEOUT:
        console.print("  not shrunk (each try could take the whole time limit); reproduce with:")
    else:
        console.print(
            f"  shrunk from {failure.original_splits} to {len(failure.splits)} split points; "
            "reproduce with:"
        )
    console.print(f"    {escape(failure.reproducer)}", soft_wrap=True, highlight=False)
    if failure.snippet:
        console.print("  pin it as a regression test:")
        for line in failure.snippet.rstrip().splitlines():
            console.print(f"    {escape(line)}", soft_wrap=True, highlight=False)


def to_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)


def write_junit(report: Report, path: str | Path) -> None:
    """One test case per recording x strategy; unusable inputs are errored test cases."""
    cases = [_junit_case(o) for o in report.rows]
    cases += [
        junit.Case(e.path, "read", outcome=junit.Outcome.ERROR, message=e.message, kind="input")
        for e in report.errors
    ]
    junit.write_suite(path, "tcr replay", cases, seconds=report.seconds)


def _junit_case(o: Outcome) -> junit.Case:
    case = junit.Case(o.path, o.strategy, o.seconds)
    if o.error:
        return replace(case, outcome=junit.Outcome.ERROR, message=o.error, kind="detector")
    if o.failures:
        first = o.failures[0].violation
        details = "\n\n".join(
            f"{f.signature}: {f.violation}\nreproduce: {f.reproducer}" for f in o.failures
        )
        return replace(
            case,
            outcome=junit.Outcome.FAILURE,
            message=f"{first.check}: {first.message}",
            kind=first.check,
            text=details,
        )
    if not o.checks:
        return replace(case, outcome=junit.Outcome.SKIPPED, message="; ".join(o.skipped.values()))
    return case


def sarif_results(report: Report) -> list[sarif.Result]:
    """One result per failure (per recording x strategy x check), crash and unusable input."""
    results = []
    for outcome in report.rows:
        if outcome.error:
            results.append(
                sarif.Result(
                    Check.CRASH,
                    f"the detector could not be run on {outcome.path} under {outcome.strategy}: "
                    f"{outcome.error}",
                    _location(report, outcome),
                    ("replay", outcome.recording, Check.CRASH, outcome.strategy),
                    properties={"recording": outcome.recording, "strategy": outcome.strategy},
                )
            )
        results += [
            _failure_result(outcome, failure, _location(report, outcome))
            for failure in outcome.failures
        ]
    for error in report.errors:
        message = error.message if error.path in error.message else f"{error.path}: {error.message}"
        results.append(sarif.Result("input", message, error.path, ("replay", error.path, "input")))
    return results


def _location(report: Report, outcome: Outcome) -> str | None:
    """The recording a result is about; the cost check's row is about none."""
    return None if outcome is report.cost else outcome.path


def _failure_result(outcome: Outcome, failure: Failure, path: str | None) -> sarif.Result:
    v = failure.violation
    under = outcome.strategy
    if failure.label != outcome.strategy:
        under += f" ({failure.label})"
    where = f" (chunk {v.chunk}, offset {v.offset}: {v.excerpt})" if v.excerpt else ""
    message = (
        f"{v.check} fails on {outcome.path} under {under}: {v.message}{where}. Shrunk from "
        f"{failure.original_splits} to {len(failure.splits)} split points; reproduce with: "
        f"{failure.reproducer}"
    )
    if path is None:  # the cost check: the probe, no recording
        message = f"{v.check} fails: {v.message}. Reproduce with: {failure.reproducer}"
    return sarif.Result(
        v.check,
        message,
        path,
        (
            "replay",
            outcome.recording,
            v.check,
            outcome.strategy,
            *([v.dialect] if not path else []),
        ),
        chunk=v.chunk,
        offset=v.offset,
        properties={
            "recording": outcome.recording,
            "strategy": outcome.strategy,
            "chunking": failure.label,
            "signature": str(failure.signature),
            "splits": list(failure.splits),
            "excerpt": v.excerpt,
            "reproducer": failure.reproducer,
            "snippet": failure.snippet,
        },
    )


def to_sarif(report: Report, *, root: Path | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log; relative paths are taken from ``root`` (default: cwd)."""
    root = (Path.cwd() if root is None else root).resolve()
    return sarif.to_sarif(sarif_results(report), root=root, exit_code=report.exit_code)


def write_sarif(report: Report, path: str | Path) -> None:
    """Write the report as SARIF 2.1.0 (GitHub code scanning, the VS Code SARIF viewer)."""
    write_sarif_log(path, to_sarif(report))
