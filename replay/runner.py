"""Replay recordings through a detector under every rechunking, and shrink what fails.

``run()`` is what ``tcr replay`` calls. It never stops at a bad input: a corrupt
recording, a factory that raises or a detector that crashes is reported with
the path (and chunk index) and the run goes on with the next recording.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tcr.corpus import find_recordings
from tcr.detector.loader import DetectorSpec, Factory, resolve_detector, unbound_factory
from tcr.errors import TcrError
from tcr.expectation import Expectation
from tcr.judge import Judge, checks_of
from tcr.oracle import RECORDING_CHECKS, TRACE_CHECKS, Check, Verdict
from tcr.probes import read_spec
from tcr.rechunk import DEFAULT_STRATEGIES, parse_strategy
from tcr.shard import check_shard, parse_shard
from tcr.time_limit import DEFAULT_TIMEOUT, check_timeout
from tcr.tool_specs import ToolSpecs, read_tool_specs

from .cost import cost_outcome
from .engine import Plan, load
from .jobs import Progress, replay_in_processes, split_tasks
from .lastfailed import LastFailed
from .model import InputError, Outcome, Report, display_path
from .policy import policy_outcome

__all__ = [
    "DEFAULT_TRANSPORT_STRATEGIES",
    "LAYERS",
    "check_chunks",
    "parse_shard",
    "run",
    "select_shard",
]

LAYERS = ("content", "transport")
DEFAULT_TRANSPORT_STRATEGIES = ("bytes:1", "bytes-random")


def run(
    paths: Iterable[str | Path] | None = None,
    *,
    strategies: Sequence[str] | None = None,
    runs: int = 20,
    seed: int = 0,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    checks: Collection[str] | None = None,
    layer: str = "content",
    exitfirst: bool = False,
    minimize: bool = True,
    on_progress: Progress | None = None,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
    timeout: float | None = DEFAULT_TIMEOUT,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
    tool_specs: Sequence[Mapping[str, Any]] | str | Path | None = None,
    last_failed: LastFailed | None = None,
    policies: Mapping[str, str] | None = None,
) -> Report:
    """Replay recordings (files or directories; None: the bundled corpora).

    ``shard=(k, n)`` replays the k-th of n deterministic shares of the sorted
    recordings (1 <= k <= n; the n shards cover every recording exactly once).
    ``timeout``: CPU seconds one run of one message may take in an in-process
    detector (default as ``tcr replay``'s; None: no limit); a run over it is a ``crash``
    finding at its chunk. A ``--detector-cmd`` harness has ``--detector-timeout`` instead.
    ``jobs`` > 1 replays in that many processes (a large recording's strategies and
    random runs spread over them too); the report is the same, in the same order.
    The workers are fresh processes: they import the detector factory by name, and
    a calling script as a module (keep its work under ``if __name__ == "__main__":``).
    ``dialects``/``empty_tools``/``special_tokens`` state the detector's claim over the one
    it declares (``tcr.claims``; a factory that takes them gets them); the report names it.
    ``policies`` (``--policy``): choices pinned (``tcr.policies``); the others are read
    from probe messages first (``tcr.probes``), and the report's first line says which.
    ``tool_specs``: the OpenAI ``tools`` list given to a factory that takes it, for
    every recording (default: each recording's own, ``Recording.tool_specs``), or a
    JSON file holding it (``--tool-specs FILE``: a list, or ``{"tools": [...]}``).
    ``last_failed`` (``--lf``): replay only the recordings that failed last time, or all of
    them when none did (``Report.selection`` says which).
    Raises ``TcrError`` only for unusable options (a bad strategy, an unknown
    check, a detector that cannot be loaded, a missing path); everything found
    while replaying goes into the ``Report``.
    """
    # the recordings first: a path that holds none fails before the detector runs
    if paths is None:
        from tcr.corpora import bundled

        files = bundled()
    else:
        files = find_recordings(list(paths))  # none found: one line, exit 2
    chosen = resolve_detector(
        detector,
        dialects=dialects,
        empty_tools=empty_tools,
        special_tokens=special_tokens,
        policies=policies,
    )
    probes: Outcome | None = None
    if layer == "content":
        # the choices first: every recording is judged with them (tcr.probes); the row
        # is the first shard's, and only when the policy check is asked for
        chosen, probes, _ = policy_outcome(chosen, timeout)
        asked = checks is None or Check.POLICY in checks
        if not asked or (shard is not None and shard[0] != 1):
            probes = None
    plan = _plan(strategies, runs, seed, chosen, tools, checks, layer, exitfirst, minimize, timeout)
    if isinstance(tool_specs, str | Path):
        plan = replace(
            plan, tool_specs=load_tool_specs(tool_specs), tool_specs_file=str(tool_specs)
        )
    elif tool_specs is not None:
        plan = replace(plan, tool_specs=read_tool_specs(tool_specs, "tool_specs"))
    if jobs < 1:
        raise TcrError(f"--jobs must be at least 1, not {jobs}")
    selection = None
    if last_failed is not None:
        files, selection = last_failed.select(files)
    files = select_shard(files, shard)
    report = Report(claim=plan.detector.claim, selection=selection, policy=probes)
    started = time.perf_counter()
    # policy: its probes, and policy/inconsistent told on the recordings too
    if not any(c in RECORDING_CHECKS or c is Check.POLICY for c in plan.checks):
        files = []  # --check cost alone: no recording needs replaying
    tasks = split_tasks(files, plan, jobs) if jobs > 1 and not exitfirst else []
    if len(tasks) > 1:
        _stop_idle_harness(plan.detector)
        replay_in_processes(tasks, plan, report, jobs, on_progress)
    else:
        for done, path in enumerate(files):
            if on_progress is not None:
                on_progress(display_path(path), done, len(files))
            _replay_file(path, plan, report)
            if plan.exitfirst and (report.failures or report.errors):
                report.stopped_early = True
                break
    if _runs_cost(plan, shard) and not report.stopped_early:
        report.cost, report.cost_measured = cost_outcome(plan.detector, plan.timeout)
    report.seconds = time.perf_counter() - started
    return report


def _runs_cost(plan: Plan, shard: tuple[int, int] | None) -> bool:
    """The cost check judges the detector, once per run: in the first shard of a sharded one
    (the others would repeat it), never on the transport layer (it judges the decoders)."""
    first = shard is None or shard[0] == 1
    return Check.COST in plan.checks and plan.layer == "content" and first


def load_tool_specs(path: str | Path) -> ToolSpecs:
    """The OpenAI ``tools`` list in a JSON file (or under its ``"tools"`` key), validated."""
    where = f"--tool-specs {path}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise TcrError(f"{where}: cannot read: {error.strerror or error}") from None
    except (ValueError, RecursionError) as error:
        raise TcrError(f"{where}: not JSON: {error}") from None
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    return read_tool_specs(data, where)


def select_shard(files: Sequence[Path], shard: tuple[int, int] | None) -> list[Path]:
    """Round-robin over the sorted recordings: deterministic and balanced."""
    ordered = sorted(files, key=lambda p: display_path(p))
    if shard is None:
        return ordered
    k, n = check_shard(shard)
    return ordered[k - 1 :: n]


def check_chunks(
    chunks: Sequence[str],
    *,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    checks: Collection[str] = TRACE_CHECKS,
    expectation: Expectation | Mapping[str, Any] | None = None,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    policies: Mapping[str, str] | None = None,
) -> Verdict:
    """Check one chunking against the whole run: what a pinned regression test calls.

    ``dialects``/``empty_tools``/``special_tokens``/``policies``: the claim to judge
    against, as ``run`` takes them; the choices not pinned are read from the probes.
    ``tool_specs``: the request's OpenAI ``tools`` list, for a factory that takes it;
    expected values of untyped bodies are then typed by it (``tcr.judge``).
    """
    chosen = resolve_detector(
        detector,
        dialects=dialects,
        empty_tools=empty_tools,
        special_tokens=special_tokens,
        policies=policies,
    )
    chosen, _ = read_spec(chosen)
    judge = Judge(
        chosen.factory,
        "".join(chunks),
        tools=tools,
        expectation=expectation,
        checks=checks,
        claim=chosen.claim,
        tool_specs=tool_specs,
    )
    return judge.verdict(chunks)


def _plan(
    strategies: Sequence[str] | None,
    runs: int,
    seed: int,
    detector: str | Factory | DetectorSpec | None,
    tools: Sequence[str] | None,
    checks: Collection[str] | None,
    layer: str,
    exitfirst: bool,
    minimize: bool,
    timeout: float | None = None,
) -> Plan:
    if layer not in LAYERS:
        raise TcrError(f"layer {layer!r}: expected one of {', '.join(LAYERS)}")
    if strategies is None or not strategies:
        strategies = DEFAULT_TRANSPORT_STRATEGIES if layer == "transport" else DEFAULT_STRATEGIES
    parsed = tuple(parse_strategy(spec) for spec in strategies)
    if layer == "content" and any(s.transport for s in parsed):
        bad = next(s.spec for s in parsed if s.transport)
        raise TcrError(f"rechunk strategy {bad!r} re-splits transport bytes: add --layer transport")
    if runs < 1:
        raise TcrError(f"--runs must be at least 1, not {runs}")
    chosen = checks_of(checks or None)  # none given: every check
    chosen_detector = resolve_detector(detector)
    return Plan(
        detector=chosen_detector,
        strategies=parsed,
        runs=runs,
        seed=seed,
        tools=None if tools is None else tuple(tools),
        checks=chosen,
        layer=layer,
        exitfirst=exitfirst,
        minimize=minimize,
        timeout=_in_process(check_timeout(timeout), chosen_detector),
    )


def _in_process(timeout: float | None, detector: DetectorSpec) -> float | None:
    """The limit for this detector: none for a ``--detector-cmd`` harness, which has its own
    per answer (an alarm while its client waits on the pipe would lose its place in it)."""
    return None if detector.command is not None else timeout


def _stop_idle_harness(detector: DetectorSpec) -> None:
    """A ``--detector-cmd`` harness started here to read its claim idles while the workers
    run their own: stop it (``CommandFactory.close``; a later detector starts another)."""
    if detector.command is not None:
        close = getattr(unbound_factory(detector.factory), "close", None)
        if callable(close):
            close()


def _replay_file(path: Path, plan: Plan, report: Report) -> None:
    replay = load(path, plan)
    if isinstance(replay, InputError):
        report.errors.append(replay)
        return
    for slot in range(len(plan.slots)):
        outcome, found = replay.outcome(slot)
        started = time.perf_counter()
        outcome.failures += [replay.shrink(chunking, violation) for chunking, violation, _ in found]
        outcome.seconds += time.perf_counter() - started
        report.outcomes.append(outcome)
        if plan.exitfirst and not outcome.ok:
            return
