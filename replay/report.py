"""A replay ``Report`` for people (a rich table), for machines (JSON) and for CI (JUnit XML,
SARIF for code-scanning views)."""

from __future__ import annotations

import enum
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcr import sarif
from tcr._runtime import junit
from tcr._runtime.names import safe_data
from tcr._runtime.report_files import write_sarif_log
from tcr._verdict import probed
from tcr.claims import Claim
from tcr.corpora import ROOT
from tcr.findings import Grouped, shrunk
from tcr.oracle import CHECKS, Check
from tcr.signature import PROXY_NOTE, PROXY_ONLY, TIMEOUT

from .model import Failure, FindingGroup, Outcome, Report

__all__ = [
    "Level",
    "Mark",
    "found_count",
    "render",
    "sarif_results",
    "short_path",
    "summary",
    "to_json",
    "to_sarif",
    "write_junit",
    "write_sarif",
]


class Level(enum.IntEnum):
    """How much of a report people are shown, as pytest's ``-q``/``-v`` choose."""

    QUIET = -1  # the failures and the summary line
    NORMAL = 0  # a line of marks per folder of recordings, then the failures and the summary
    VERBOSE = 1  # the table (recording x strategy), then the failures and the summary

    @classmethod
    def of(cls, verbose: int, quiet: int) -> Level:
        """``-v`` and ``-q`` counted against each other, as pytest does."""
        return cls(max(cls.QUIET, min(cls.VERBOSE, verbose - quiet)))


class Mark(enum.StrEnum):
    """What one recording x strategy run came to, in one character (pytest's marks)."""

    PASS = "."
    FAIL = "F"
    SKIPPED = "s"  # no check could be judged
    ERROR = "E"  # the detector crashed, or the recording could not be read

    @classmethod
    def of(cls, outcome: Outcome) -> Mark:
        if outcome.error or any(f.violation.check.is_error for f in outcome.failures):
            return cls.ERROR
        if outcome.failures:
            return cls.FAIL
        return cls.PASS if outcome.checks else cls.SKIPPED


MARK_STYLES = {
    Mark.PASS: "green",
    Mark.FAIL: "bold red",
    Mark.SKIPPED: "yellow",
    Mark.ERROR: "bold red",
}


def render(report: Report, console: Console, *, level: Level = Level.NORMAL) -> None:
    """The runs (``Level.NORMAL``: a line of marks per folder; ``VERBOSE``: the table), then
    each distinct finding (signature) once, in full with its reproducer, and where else it
    showed, then one summary line."""
    console.print(escape(report.claim.judged_line), soft_wrap=True, highlight=False)
    if report.selection is not None and level is not Level.QUIET:
        console.print(escape(report.selection), soft_wrap=True, highlight=False)
    if level is Level.VERBOSE:
        _render_table(report, console)
    elif level is Level.NORMAL:
        _render_marks(report, console)
    for error in report.errors:
        message = error.message if error.path in error.message else f"{error.path}: {error.message}"
        console.print(f"[bold red]error[/] {escape(message)}", soft_wrap=True, highlight=False)
    # The same bug usually turns up under several strategies, recordings, checks and
    # dialects: each distinct finding is shown once, in full, with where else it showed.
    for finding in report.causes:
        _render_finding(console, finding)
    if level is not Level.QUIET:
        console.print()
        for (check, why), count in report.not_judged.items():
            console.print(f"{_plural(count, 'recording')}: {check} not judged ({escape(why)})")
    console.print(summary(report), soft_wrap=True, highlight=False)


def summary(report: Report) -> str:
    """The report's last line: what was replayed, how long it took, and what was found, by
    check and by distinct signature (rich markup)."""
    strategies = len({o.strategy for o in report.outcomes})
    ran = f"{_plural(report.recordings, 'recording')}, {_plural(strategies, 'strategy')}"
    if report.cost is not None:
        ran += " and the cost probe"
    ran += f", {_count(report.chars)} characters in {_seconds(report.seconds)}"
    errors = len(report.errors) + sum(1 for o in report.rows if o.error)
    failures = report.failures
    found = [_plural(errors, "error")] if errors else []
    if failures:
        by_check = Counter(f.violation.check for _, f in failures)
        order = sorted(by_check, key=lambda check: (-by_check[check], CHECKS.index(check)))
        found.append(
            f"{found_count(len(report.causes), len(report.findings), len(failures))}: "
            + ", ".join(f"{check} {by_check[check]}" for check in order)
        )
    verdict = ", ".join(found) if found else "all checks pass"
    style = "red" if found else "green"
    stopped = " (stopped at the first failure)" if report.stopped_early else ""
    return f"{escape(ran)}: [{style}]{escape(verdict)}[/]{stopped}"


def found_count(findings: int, signatures: int, failures: int) -> str:
    """``1 finding``, or ``1 finding (3 signatures, 12 failures)`` when one bug showed as more
    signatures (checks, dialects) or failures (recordings x strategies, examples)."""
    more = [
        _plural(n, word)
        for n, word, fewer in (
            (signatures, "signature", findings),
            (failures, "failure", signatures),
        )
        if n > fewer
    ]
    return _plural(findings, "finding") + (f" ({', '.join(more)})" if more else "")


def _count(n: int) -> str:
    """A count of characters as people read it: 950, 12.3k, 25.6M."""
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def _render_marks(report: Report, console: Console) -> None:
    """One line per folder of recordings (wrapped, as pytest does a file's tests), each
    recording a group of marks, one per strategy; a folder whose every run passed shows
    its group once with how many (``recorded/ ...... (56 recordings)``), so a passing run stays a
    few lines however many recordings it holds; the cost probe its own line."""
    folders: dict[str, dict[str, list[Mark]]] = {}
    marks = [(o.path, Mark.of(o)) for o in report.outcomes]
    for path, mark in [*marks, *((e.path, Mark.ERROR) for e in report.errors)]:
        shown = short_path(path)
        folder = shown.rpartition("/")[0] + "/" if "/" in shown else "./"
        folders.setdefault(folder, {}).setdefault(shown, []).append(mark)
    for folder, recordings in folders.items():
        label = next(iter(recordings)) if len(recordings) == 1 else folder
        groups = [marks for _, marks in sorted(recordings.items())]
        if len(groups) > 1 and all(g == groups[0] for g in groups) and _passed(groups[0]):
            _print_marks(console, label, groups[:1], f" ({len(groups)} recordings)")
        else:
            _print_marks(console, label, groups)
    if report.policy is not None:
        _print_marks(console, report.policy.path, [[Mark.of(report.policy)]])
    if report.cost is not None:
        note = ""
        if report.cost_measured is not None and report.cost.checks:
            note = f" [dim]({escape(report.cost_measured.summary())})[/]"
        _print_marks(console, report.cost.path, [[Mark.of(report.cost)]], note)


def _passed(marks: list[Mark]) -> bool:
    return all(m is Mark.PASS for m in marks)


def _print_marks(console: Console, label: str, groups: list[list[Mark]], note: str = "") -> None:
    """``label`` and the groups of marks, wrapped between groups to the console's width."""
    indent = len(label) + 1
    width = max(console.width, indent + 10)
    lines: list[list[list[Mark]]] = [[]]
    used = indent
    for group in groups:
        if lines[-1] and used + 1 + len(group) > width:
            lines.append([])
            used = indent
        used += len(group) + (1 if lines[-1] else 0)
        lines[-1].append(group)
    for i, line in enumerate(lines):
        head = escape(label) if i == 0 else " " * (indent - 1)
        marks = " ".join("".join(f"[{MARK_STYLES[m]}]{m}[/]" for m in g) for g in line)
        tail = note if i == len(lines) - 1 else ""
        console.print(f"{head} {marks}{tail}", soft_wrap=True, highlight=False)


def short_path(path: str) -> str:
    """A recording's path as the marks show it: as the report has it when relative (to the
    working directory), a bundled one outside it relative to the bundled corpora
    (``regressions/…``, not a site-packages path), any other as it is."""
    if not Path(path).is_absolute():
        return path
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path


def print_table(console: Console, table: Table) -> None:
    """``table``, piped at its natural width: the guessed one (80, or a terminal's on
    stdin) folds paths and names across lines."""
    guessed = console.width
    if not console.is_terminal:
        natural = console.measure(table, options=console.options.update_width(10_000)).maximum
        console.width = max(guessed, natural)
    console.print(table)
    console.width = guessed


def _render_table(report: Report, console: Console) -> None:
    """Every run in a row: recording, strategy, runs, characters, result, time."""
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
            escape(short_path(o.path)),
            o.strategy,
            str(o.runs),
            f"{o.chars:,}",
            result,
            f"{o.seconds:.2f}s",
        )
    print_table(console, table)


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


ALSO_SHOWN = 4  # other places a finding showed, listed by name; the rest are counted


def _render_finding(console: Console, finding: Grouped[FindingGroup]) -> None:
    """A finding: its first failure in full; the same cause in each other dialect, one line
    with its reproducer; where else it showed."""
    first, *others = finding.shown
    outcome, failure = first.first
    console.print()
    console.print(f"[bold red]{escape(_heading(finding))}[/]", soft_wrap=True, highlight=False)
    # under a cause's heading, the case shown is named by its own signature
    _render_failure(
        console, outcome, failure, first.signature.label if len(finding.items) > 1 else ""
    )
    if others:
        console.print("  in the other dialects:")
        for group in others:
            f = group.first[1]
            shown = f"{group.signature.dialect or 'no dialect told'} ({group.signature.check})"
            shown += f" {PROXY_ONLY}" if group.signature.proxy else ""
            console.print(
                f"    {escape(shown)}: {escape(f.reproducer)}", soft_wrap=True, highlight=False
            )
    rest = finding.rest("--json")
    if rest:
        console.print(f"  {escape(rest)}", soft_wrap=True, highlight=False)
    places: dict[str, list[str]] = {}
    for o, _ in first.failures[1:]:
        places.setdefault(short_path(o.path), []).append(o.strategy)
    lines = [f"{path} under {', '.join(s)}" for path, s in places.items()]
    if lines:
        more = len(lines) - ALSO_SHOWN
        shown_lines = lines[:ALSO_SHOWN]
        shown_lines += [f"and {_plural(more, 'more recording')}"] if more > 0 else []
        console.print("  also: " + escape("; ".join(shown_lines)), soft_wrap=True, highlight=False)


def _heading(finding: Grouped[FindingGroup]) -> str:
    """``no_leak/<tool_call>/hermes@split-in-opener: 2 recordings, 3 strategies`` for one
    signature; for more, the cause, its checks and dialects, and the failures by check."""
    groups = finding.items
    if groups[0].signature.check == Check.COST:
        return f"{groups[0].signature.label}: the probe message, once per run"
    if probed(groups[0].signature.check, groups[0].signature.kind):
        return f"{groups[0].signature.label}: the policy probes, once per run"
    recordings = len({o.path for g in groups for o, _ in g.failures})
    strategies = len({o.strategy for g in groups for o, _ in g.failures})
    where = f"{_plural(recordings, 'recording')}, {_plural(strategies, 'strategy')}"
    if len(groups) == 1:
        return f"{groups[0].signature.label}: {where}"
    return f"{finding.name}: {where}"


def _render_failure(
    console: Console, outcome: Outcome, failure: Failure, signature: str = ""
) -> None:
    """The failure's case: its check (or ``signature``, when a heading names its cause),
    where and under which chunking, its message and excerpt, and how to reproduce it."""
    v = failure.violation
    under = outcome.strategy
    if failure.label != outcome.strategy:
        under += f" ({failure.label})"
    console.print(
        f"[bold red]{escape(signature or v.check)}[/] in {escape(short_path(outcome.path))} "
        f"under {escape(under)}: "
        f"{escape(v.message)}",
        soft_wrap=True,
    )
    if v.excerpt:
        where = v.where
        console.print(f"  at {where}: {escape(v.excerpt)}", highlight=False)
    if probed(v.check, v.kind):  # a probe message, not a recording: nothing to shrink
        console.print("  reproduce with:")
    else:
        console.print(f"  {_shrink_told(failure)}; reproduce with:")
    console.print(f"    {escape(failure.reproducer)}", soft_wrap=True, highlight=False)
    if failure.snippet:
        console.print("  pin it as a regression test:")
        for line in failure.snippet.rstrip().splitlines():
            console.print(f"    {escape(line)}", soft_wrap=True, highlight=False)


def _shrink_told(failure: Failure) -> str:
    """``shrunk from 5 to 1 split point`` (``tcr.findings.shrunk``), or why it was not."""
    if failure.signature.kind == TIMEOUT:
        return "not shrunk (each try could take the whole time limit)"
    return f"shrunk {shrunk(failure.original_splits, len(failure.splits), 'split point')}"


def to_json(report: Report) -> str:
    return json.dumps(safe_data(report.to_dict()), indent=2, ensure_ascii=False)


def write_junit(report: Report, path: str | Path) -> None:
    """One test case per recording x strategy; unusable inputs are errored test cases."""
    cases = [_junit_case(o) for o in report.rows]
    cases += [
        junit.Case(e.path, "read", outcome=junit.Outcome.ERROR, message=e.message, kind="input")
        for e in report.errors
    ]
    junit.write_suite(
        path,
        "tcr replay",
        cases,
        seconds=report.seconds,
        properties=[("judged_against", report.claim.judged_line)],
    )


def _junit_case(o: Outcome) -> junit.Case:
    case = junit.Case(o.path, o.strategy, o.seconds)
    if o.error:
        return replace(case, outcome=junit.Outcome.ERROR, message=o.error, kind="detector")
    if o.failures:
        first = o.failures[0].violation
        details = "\n\n".join(
            f"{f.signature.label}: {f.violation}\nreproduce: {f.reproducer}" for f in o.failures
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
    """The recording a result is about; the cost check's and the policy probes' rows are
    about none."""
    return None if outcome is report.cost or outcome is report.policy else outcome.path


def _failure_result(outcome: Outcome, failure: Failure, path: str | None) -> sarif.Result:
    v = failure.violation
    under = outcome.strategy
    if failure.label != outcome.strategy:
        under += f" ({failure.label})"
    where = f" ({v.where}: {v.excerpt})" if v.excerpt else ""
    proxy = f" {PROXY_NOTE}" if failure.signature.proxy else ""
    shrink = _shrink_told(failure)
    message = (
        f"{v.check} fails on {outcome.path} under {under}: {v.message}{where}.{proxy} "
        f"{shrink[:1].upper()}{shrink[1:]}; reproduce with: {failure.reproducer}"
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
            "proxyOnly": failure.signature.proxy,
            "splits": list(failure.splits),
            "excerpt": v.excerpt,
            "reproducer": failure.reproducer,
            "snippet": failure.snippet,
        },
    )


def to_sarif(report: Report, *, root: Path | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log; relative paths are taken from ``root`` (default: cwd)."""
    root = (Path.cwd() if root is None else root).resolve()
    return sarif.to_sarif(
        sarif_results(report),
        root=root,
        exit_code=report.exit_code,
        properties=judged_properties(report.claim),
    )


def judged_properties(claim: Claim) -> dict[str, Any]:
    """The claim and the policies as judged, for a SARIF run's properties."""
    policies = claim.policies
    return {
        "judgedAgainst": claim.judged_line,
        "policies": policies.as_dict(),
        "pinnedPolicies": sorted(policies.pinned),
    }


def write_sarif(report: Report, path: str | Path) -> None:
    """Write the report as SARIF 2.1.0 (GitHub code scanning, the VS Code SARIF viewer)."""
    write_sarif_log(path, to_sarif(report))
