"""A ``FuzzReport`` for people (rich text), for tools (JSON, the same schema as
``tcr replay --json``'s: docs/reference/report.schema.json) and for CI (JUnit XML, SARIF
for code scanning)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from tcr import sarif
from tcr._runtime import junit
from tcr._runtime.names import safe_data
from tcr._runtime.report_files import write_sarif_log
from tcr._verdict import probed
from tcr.claims import Claim
from tcr.findings import Grouped, group, shrunk
from tcr.oracle import Check, Violation
from tcr.signature import PROXY_NOTE, WHOLE, Signature, signature

from .cost import SHARE
from .model import Finding, FuzzReport
from .truth import Truth

__all__ = [
    "describe_truth",
    "progress_line",
    "render",
    "sarif_results",
    "to_dict",
    "to_json",
    "to_sarif",
    "write_junit",
    "write_sarif",
]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def describe_truth(truth: Truth | None) -> str:
    """One line: what a correct detector makes of the case."""
    if truth is None:
        return (
            "unknown (a mutation broke a block, or shrinking cut the text: only the oracles "
            "that need none ran)"
        )
    calls = ", ".join(
        f"{c.name}({json.dumps(dict(c.arguments), ensure_ascii=False)})" for c in truth.calls
    )
    return f"text {truth.text!r}, calls [{calls}], reasoning {truth.reasoning!r}"


def progress_line(report: FuzzReport, elapsed: float) -> str:
    """How the run goes, in one line: ``fuzzing (generate): 12,345 examples in 14 s,
    46 s left, 2 findings; hermes 9,000, qwen3_coder 3,000`` (``elapsed``: seconds since
    the run started). Shrinking names the signature being shrunk."""
    phase = " ".join(p for p in (report.phase, report.shrinking) if p)
    examples = f"{report.examples:,}"
    if report.budget_s is None and report.max_examples is not None:
        examples += f" of {report.max_examples:,}"
    parts = [f"{examples} examples in {elapsed:.0f} s"]
    if report.budget_s is not None:
        parts.append(f"{max(report.budget_s - elapsed, 0.0):.0f} s left")
    parts.append(_plural(len(findings(report)), "finding"))
    line = f"fuzzing ({phase}): " if phase else "fuzzing: "
    line += ", ".join(parts)
    counts = report.by_dialect
    order = [
        *(d for d in report.formats if d in counts),
        *(d for d in counts if d not in report.formats),
    ]
    if order:
        line += "; " + ", ".join(f"{d} {counts[d]:,}" for d in order)
    return line


def findings(report: FuzzReport) -> list[Grouped[Finding]]:
    """The report's signatures as distinct findings (``tcr.findings``): what one shrunk case
    showed besides its own signature are its symptoms."""
    runs = [{_signed(v, f, report.claim) for v in f.violations} for f in report.findings]
    return group(report.findings, runs)


def _signed(violation: Violation, finding: Finding, claim: Claim) -> Signature:
    found = signature(violation, finding.case.chunks, claim=claim)
    shape = dict(finding.shapes).get(found.key)
    # an unsplit shape of the shrunk case (its chunking found nothing more telling), or a
    # failure of its unsplit run alone (an invariance finding's symptom: runner._finding)
    return replace(found, shape=shape) if shape and WHOLE in (found.shape, shape) else found


def render(report: FuzzReport, console: Console) -> None:
    """The summary line, then each distinct finding once: its signature, how many examples
    showed it, and the shrunk case with the commands that reproduce it."""
    limits = []
    if report.budget_s is not None:
        limits.append(f"budget {report.budget_s:g} s")
    if report.max_examples is not None:
        limits.append(f"at most {_plural(report.max_examples, 'example')}")
    limits += _scale_out(report)
    if report.selected is not None:  # as --check chose them
        limits.append(f"checks {', '.join(report.selected)}")
    mutating = f"mutating {_plural(report.recordings, 'recording')}"
    if report.skipped:  # on the same line: a recording left out is no news in every run
        mutating += f" [dim](not: {escape('; '.join(report.skipped))})[/]"
    console.print(escape(report.claim.judged_line), soft_wrap=True, highlight=False)
    console.print(
        f"[bold]tcr fuzz[/] {escape(report.detector)}, seed {report.seed}, {', '.join(limits)}; "
        f"{mutating}",
        highlight=False,
        soft_wrap=True,
    )
    rate = f"{report.examples_per_second:,.0f} examples/s"
    console.print(
        f"{_plural(report.examples, 'example')} ({report.generated:,} generated, "
        f"{report.mutated:,} mutated) in {report.search_seconds:.1f} s, {rate}",
        highlight=False,
    )
    if report.cost is not None:
        console.print(f"cost: {escape(_cost_line(report))}", highlight=False)
    if not report.findings:
        console.print("[green]no violation[/]")
        return
    causes = findings(report)
    n, signatures = len(causes), len(report.findings)
    count = _plural(n, "distinct finding")
    if signatures > n:
        count += f" ({_plural(signatures, 'signature')})"
    why = {"failure": " (stopped at the first, -x)", "max_findings": " (stopped: --max-findings)"}
    console.print(f"[bold red]{count}[/]{why.get(report.stopped, '')}", highlight=False)
    for finding in causes:
        _render_cause(finding, console)


def _cost_line(report: FuzzReport) -> str:
    """The cost check's growth, or why it did not judge; cut short: its share of the
    budget named (``tcr.fuzz.cost.SHARE``)."""
    assert report.cost is not None
    line = report.cost.summary()
    if report.cost.cut is not None and report.budget_s is not None:
        line += f" (its share of the budget, {report.budget_s * SHARE:.2g} s, was spent)"
    return line


def _render_cause(finding: Grouped[Finding], console: Console) -> None:
    """A finding: the first dialect's signature in full; each other dialect's in one line,
    with the command that replays its saved recording; how many examples showed it."""
    first, *others = finding.shown
    if len(finding.items) > 1:
        name = finding.name
        examples = sum(f.count for f in finding.items)
        console.print(
            f"\n[bold red]{escape(name)}[/]: {_plural(len(finding.items), 'signature')}, "
            f"{_plural(examples, 'example')}",
            highlight=False,
            soft_wrap=True,
        )
    _render_finding(first, console)
    if others:
        console.print("  in the other dialects:", highlight=False)
    for other in others:
        shown = f"{other.signature.dialect or 'no dialect told'} ({other.signature.label})"
        command = other.replay_command or repr(list(other.case.chunks))
        console.print(f"    {escape(shown)}: {escape(command)}", soft_wrap=True, highlight=False)
    rest = finding.rest("--sarif")
    if rest:
        console.print(f"  {escape(rest)}", soft_wrap=True, highlight=False)


def _scale_out(report: FuzzReport) -> list[str]:
    """``shard 2/3`` and ``2 jobs``, when the run used them."""
    words = []
    if report.shard is not None:
        words.append(f"shard {report.shard[0]}/{report.shard[1]}")
    if report.jobs > 1:
        words.append(f"{report.jobs} jobs")
    return words


def _render_finding(finding: Finding, console: Console) -> None:
    case, v = finding.case, finding.violation
    if probed(v.check, v.kind):  # probe messages, once per run: nothing shrunk or saved
        probe = "the probe message" if v.check is Check.COST else "the policy probes"
        console.print(
            f"\n[bold red]{escape(str(finding.signature))}[/]: {probe}, once per run",
            highlight=False,
        )
        console.print(f"[bold red]{v.check}[/]: {escape(v.message)}", highlight=False)
        console.print("  reproduce with:", highlight=False)
        console.print(f"    {escape(finding.replay_command)}", soft_wrap=True, highlight=False)
        return
    console.print(
        f"\n[bold red]{escape(finding.signature.label)}[/]: "
        f"{_plural(finding.count, 'example')} showed it",
        highlight=False,
    )
    console.print(
        f"[bold red]{v.check}[/] violated after {_plural(finding.found_after, 'example')} "
        f"({finding.seconds_to_find:.2f} s); shrunk in {finding.shrink_seconds:.2f} s "
        f"{shrunk(finding.original_length, len(case.text), 'character')} and "
        f"{shrunk(finding.original_splits, len(case.splits), 'split point')}",
        highlight=False,
    )
    console.print(f"  {escape(v.message)}", highlight=False)
    where = v.where
    console.print(f"  at {where}: {escape(v.excerpt)}", highlight=False)
    for other in finding.violations[1:]:
        console.print(f"  also {escape(str(other))}", highlight=False)
    console.print(f"  case: {escape(case.origin)}", highlight=False)
    tools = "any name" if case.tools is None else ", ".join(case.tools) or "none"
    console.print(f"  tools declared: {escape(tools)}", highlight=False)
    console.print(f"  chunks: {escape(repr(list(case.chunks)))}", soft_wrap=True, highlight=False)
    console.print(f"  ground truth: {escape(describe_truth(case.truth))}", soft_wrap=True)
    if finding.saved is not None:
        console.print(f"  saved as {escape(str(finding.saved))}; reproduce with:", highlight=False)
        console.print(f"    {escape(finding.replay_command)}", soft_wrap=True, highlight=False)
        console.print("  step through it:", highlight=False)
        console.print(f"    {escape(finding.tui_command)}", soft_wrap=True, highlight=False)
    if finding.snippet:
        console.print("  pin it as a regression test:", highlight=False)
        for line in finding.snippet.rstrip().splitlines():
            console.print(f"    {escape(line)}", soft_wrap=True, highlight=False)


def to_json(report: FuzzReport) -> str:
    return json.dumps(safe_data(to_dict(report)), indent=2, ensure_ascii=False)


def to_dict(report: FuzzReport) -> dict[str, Any]:
    """The report as JSON data: the keys ``tcr replay --json`` has where they mean the same
    (exit code, claim, policies, findings with signature, cause and reproducer, cost),
    then the search's own (examples, seed, the shrunk case of each finding)."""
    causes = {f.signature: str(g.cause) for g in findings(report) for f in g.items}
    cost = report.cost
    return {
        "exit_code": report.exit_code,
        "seconds": round(report.seconds, 6),
        "judged_against": report.claim.judged_line,
        "claim": report.claim.to_map(),
        "policies": report.claim.policies.to_map(),
        "detector": report.detector,
        "seed": report.seed,
        "budget_s": report.budget_s,
        "max_examples": report.max_examples,
        "checks": list(report.checks),
        "shard": None if report.shard is None else list(report.shard),
        "jobs": report.jobs,
        "stopped": report.stopped,
        "examples": report.examples,
        "generated": report.generated,
        "mutated": report.mutated,
        "search_seconds": round(report.search_seconds, 6),
        "recordings": report.recordings,
        "skipped": list(report.skipped),
        "by_dialect": dict(report.by_dialect),
        "findings": [_finding_dict(f, causes[f.signature]) for f in report.findings],
        "cost": None
        if cost is None
        else {
            "summary": cost.summary(),
            "skipped": cost.skipped or None,
            "cut": cost.cut,
            "measured": [g.to_dict() for g in cost.measured],
        },
    }


def _finding_dict(finding: Finding, cause: str) -> dict[str, Any]:
    v, case = finding.violation, finding.case
    probe = probed(v.check, v.kind)  # the probe messages: nothing shrunk or saved
    return {
        "signature": str(finding.signature),
        "check": v.check,
        "kind": v.kind,
        "dialect": v.dialect,
        "shape": finding.signature.shape,
        "proxy_only": finding.signature.proxy,
        "cause": cause,
        "message": v.message,
        "chunk": v.chunk,
        "offset": v.offset,
        "excerpt": v.excerpt,
        "also": [str(other) for other in finding.violations[1:]],
        "reproducer": finding.replay_command,
        "tui": finding.tui_command or None,
        "snippet": finding.snippet or None,
        "saved": None if finding.saved is None else str(finding.saved),
        "examples": finding.count,
        "found_after": finding.found_after,
        "seconds_to_find": round(finding.seconds_to_find, 6),
        "shrink_seconds": round(finding.shrink_seconds, 6),
        "original_length": finding.original_length,
        "original_splits": finding.original_splits,
        "case": None
        if probe
        else {
            "origin": case.origin,
            "chunks": list(case.chunks),
            "tools": None if case.tools is None else list(case.tools),
            "ground_truth": describe_truth(case.truth),
        },
    }


def write_junit(report: FuzzReport, path: str | Path) -> None:
    """One test case for generated messages and one for mutated recordings."""
    by_kind: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_kind.setdefault(_kind(finding), []).append(finding)
    kinds = [("generated", report.generated)]
    if report.recordings:
        kinds.append(("mutated", report.mutated))
    if report.cost is not None:
        kinds.append(("cost probe", 1))
    if "policy probes" in by_kind:
        kinds.append(("policy probes", 1))
    properties: list[tuple[str, str]] = [("judged_against", report.claim.judged_line)]
    if report.shard is not None:
        properties.append(("shard", "{}/{}".format(*report.shard)))
    if report.shard is not None or report.jobs > 1:
        properties.append(("jobs", str(report.jobs)))
    if report.selected is not None:
        properties.append(("checks", ",".join(report.selected)))
    if report.cost is not None and report.cost.cut is not None:
        properties.append(("cost_probe", report.cost.cut_short))
    classname = f"tcr fuzz {report.detector} seed {report.seed}"
    if report.shard is not None:  # CI matrices: one class per shard
        classname += " shard {}/{}".format(*report.shard)
    cases = []
    for kind, examples in kinds:
        name = kind if kind.endswith(("probe", "probes")) else f"{kind} ({examples} examples)"
        case = junit.Case(classname, name, report.search_seconds)
        if kind == "cost probe" and report.cost is not None and report.cost.skipped:
            case = replace(case, outcome=junit.Outcome.SKIPPED, message=report.cost.skipped)
        found = by_kind.get(kind)
        if found:
            first = found[0]
            errors = any(f.check.is_error for f in found)
            more = f" (and {_plural(len(found) - 1, 'other finding')})" if len(found) > 1 else ""
            case = replace(
                case,
                outcome=junit.Outcome.ERROR if errors else junit.Outcome.FAILURE,
                message=f"{first.signature.label}: {first.violation.message}{more}",
                kind=first.check,
                text="\n\n".join(_junit_details(f) for f in found),
            )
        cases.append(case)
    junit.write_suite(path, "tcr fuzz", cases, seconds=report.seconds, properties=properties)


def _kind(finding: Finding) -> str:
    """Which JUnit case a finding belongs to."""
    if finding.check is Check.COST:
        return "cost probe"
    if probed(finding.check, finding.violation.kind):
        return "policy probes"
    return "mutated" if finding.case.origin.startswith("mutated") else "generated"


def _junit_details(finding: Finding) -> str:
    return "\n".join(
        [
            f"{finding.signature.label} ({_plural(finding.count, 'example')})",
            str(finding.violation),
            f"case: {finding.case.origin}",
            f"chunks: {list(finding.case.chunks)!r}",
            f"ground truth: {describe_truth(finding.case.truth)}",
            f"saved: {finding.saved}",
            f"reproduce: {finding.replay_command}",
            f"step through: {finding.tui_command}",
        ]
    )


def sarif_results(report: FuzzReport) -> list[sarif.Result]:
    """One result per finding, located at its saved recording."""
    return [_sarif_result(report, finding) for finding in report.findings]


def _sarif_result(report: FuzzReport, finding: Finding) -> sarif.Result:
    case, v = finding.case, finding.violation
    kind = "mutated" if case.origin.startswith("mutated") else "generated"
    where = f" ({v.where}: {v.excerpt})" if v.excerpt else ""
    message = (
        f"{v.check} fails on a {kind} case that tcr fuzz found after "
        f"{_plural(finding.found_after, 'example')} (seed {report.seed}): {v.message}{where}. "
    )
    if finding.signature.proxy:
        message += f"{PROXY_NOTE} "
    if probed(v.check, v.kind):
        message = f"{v.check} fails (tcr fuzz, seed {report.seed}): {v.message}. "
        message += f"Reproduce with: {finding.replay_command}"
    elif finding.saved is not None:
        message += f"Saved as {finding.saved}; reproduce with: {finding.replay_command}"
    else:
        message += f"Chunks: {list(case.chunks)!r}"
    properties: dict[str, Any] = {
        "detector": report.detector,
        "seed": report.seed,
        "case": case.origin,
        "chunks": list(case.chunks),
        "ground_truth": describe_truth(case.truth),
        "also": [str(other) for other in finding.violations[1:]],
        "signature": str(finding.signature),
        "proxyOnly": finding.signature.proxy,
        "count": finding.count,
    }
    if finding.saved is not None:
        properties |= {"reproducer": finding.replay_command, "step_through": finding.tui_command}
    elif probed(v.check, v.kind):
        properties |= {"reproducer": finding.replay_command}
    return sarif.Result(
        v.check,
        message,
        None if finding.saved is None else str(finding.saved),
        ("fuzz", report.detector, v.check, _identity(finding)),
        chunk=v.chunk,
        offset=v.offset,
        properties=properties,
    )


def _identity(finding: Finding) -> str:
    """What names a finding from run to run: its case, or for cost (no case) its dialect."""
    if finding.check is Check.COST:
        return f"probe {finding.violation.dialect}"
    if probed(finding.check, finding.violation.kind):
        return f"probe {finding.violation.kind} {finding.violation.dialect}"
    return json.dumps(list(finding.case.chunks), ensure_ascii=False)


def to_sarif(report: FuzzReport, *, root: Path | None = None) -> dict[str, Any]:
    """The run as a SARIF 2.1.0 log: a result per finding; recordings left out as notes."""
    properties: dict[str, Any] = {
        "detector": report.detector,
        "seed": report.seed,
        "examples": report.examples,
        "jobs": report.jobs,
        "judgedAgainst": report.claim.judged_line,
        "policies": report.claim.policies.as_dict(),
        "pinnedPolicies": sorted(report.claim.policies.pinned),
    }
    if report.shard is not None:
        properties["shard"] = "{}/{}".format(*report.shard)
    if report.selected is not None:
        properties["checks"] = list(report.selected)
    notes = [f"not mutated: {line}" for line in report.skipped]
    if report.cost is not None and report.cost.cut is not None:
        properties["costProbe"] = report.cost.cut_short
        notes.append(_cost_line(report))
    return sarif.to_sarif(
        sarif_results(report),
        root=(Path.cwd() if root is None else root).resolve(),
        exit_code=report.exit_code,
        notes=notes,
        properties=properties,
    )


def write_sarif(report: FuzzReport, path: str | Path) -> None:
    """Write the run as SARIF 2.1.0 (GitHub code scanning, the VS Code SARIF viewer)."""
    write_sarif_log(path, to_sarif(report))
