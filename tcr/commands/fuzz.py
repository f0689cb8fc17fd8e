"""``tcr fuzz``: generated messages and mutated recordings against every oracle."""

from __future__ import annotations

import re
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

from tcr._runtime.loading import load_detector
from tcr._runtime.state import STATE
from tcr.claims import EMPTY_TOOLS
from tcr.commands.options import (
    check_option,
    detector_option,
    fail,
    json_option,
    junit_option,
    pinned,
    policy_option,
    sarif_option,
    special_tokens_option,
    timeout_option,
    write_reports,
)
from tcr.detector.formats import FORMATS
from tcr.errors import EXIT_ERROR, TcrError

if TYPE_CHECKING:
    from tcr.fuzz import FuzzReport

PLAIN_EVERY = 5.0  # seconds between two progress lines when stderr is no terminal

EPILOG = (
    """\b
Dialects: """
    + ", ".join(f.id for f in FORMATS)
    + """
The detector is judged against its claim: the dialects it parses (--dialect,
else its tcr_claim attribute, else all; the reference is restricted to them).
Blocks are written in claimed dialects and other dialects' markup is mixed in
as text, which it must show unchanged.
The search goes on until the budget and reports every distinct finding once:
its signature (check/kind/dialect@shape), how many examples showed it, the
case shrunk keeping that signature, saved as a recording (one per finding),
and the tcr replay and tcr tui commands that reproduce it. -x stops at the
first finding, --max-findings N after N distinct ones. The same --seed gives
the same sequence of examples and the same findings.
--check NAME (repeatable) runs those checks only, as tcr replay's does;
without cost the cost probe does not run. With --budget the cost probe gets a
quarter of it at most: cut short, it says so and judges what it measured.
--shard K/N runs the K-th of N shares of that sequence (the N shards together
run it exactly once; --max-examples counts all of it); --jobs spreads a run
over processes and merges their findings by signature (with -x, the first
finding in any of them stops the others).
Exit codes: 0 no violation, 1 a violation was found, 2 a bad option, a detector
            that cannot be loaded, one that crashes, or a --junit or --sarif
            file that cannot be written (after the report).

\b
Examples:
  tcr fuzz                                     # the reference detector, 60 s
  tcr fuzz --detector mypkg.parser:make_detector --budget 5m
  tcr fuzz --detector tcr.detector.broken:per_chunk_markers --budget 30s --seed 3
  tcr fuzz --detector mypkg.parser:make_detector -x       # stop at the first finding
  tcr fuzz --detector mypkg.parser:make_detector --max-findings 5
  tcr fuzz --detector mypkg.parser:make_detector --check expected --check no_leak
  tcr fuzz --max-examples 20000 --seed 7 --dialect hermes --dialect think
  tcr fuzz --detector mypkg.hermes:make --dialect hermes --empty-tools text
  tcr fuzz --detector mypkg.engine:make --dialect kimi_k2 --special-tokens whole
  tcr fuzz --corpus corpora/recorded --save /tmp/found --junit fuzz.xml
  tcr fuzz --detector mypkg.parser:make_detector --json | jq '.findings[].signature'
  tcr fuzz --budget 10m --sarif fuzz.sarif     # GitHub code scanning, VS Code
  tcr fuzz --jobs 2 --budget 10m               # both cores of this machine
  tcr fuzz --max-examples 400000 --shard 2/4 --jobs 2  # CI machine 2 of 4
"""
)

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?")
_UNIT = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_budget(value: str) -> float:
    """``60s``, ``90``, ``1.5m``, ``2h`` → seconds."""
    match = _DURATION.fullmatch(value.strip())
    if match is None or float(match.group(1)) <= 0:
        raise TcrError(f"--budget {value!r}: expected a positive duration such as 60s, 5m or 1h")
    return float(match.group(1)) * _UNIT[match.group(2)]


@click.command(epilog=EPILOG)
@detector_option
@timeout_option
@click.option(
    "--budget",
    metavar="DURATION",
    help="Wall time of the whole run, shrinking included; it may end up to 10% late, never "
    "more (default 60s). The cost probe gets a quarter of it at most.",
)
@click.option("--max-examples", type=int, metavar="N", help="Stop searching after N examples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the search.")
@click.option(
    "--dialect",
    "dialects",
    multiple=True,
    metavar="ID",
    help="The detector parses this dialect (repeatable; default: its claim, else all, "
    "listed below). Calls are written in these; other markup is text for it.",
)
@click.option("--format", "formats", multiple=True, hidden=True)  # the older name of --dialect
@click.option(
    "--empty-tools",
    type=click.Choice(EMPTY_TOOLS),
    default=None,
    help="What tools=[] means to the detector: reject every call (policy 7) or parse "
    "nothing, all text (default: its claim, else reject).",
)
@special_tokens_option
@policy_option
@check_option
@click.option(
    "--corpus",
    "corpus",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Recordings to mutate, files or directories; repeatable (default: the bundled ones).",
)
@click.option(
    "--save",
    type=click.Path(path_type=Path),
    default=STATE / "found",
    show_default=True,
    help="Save the shrunk failure as a recording in this directory.",
)
@json_option
@junit_option
@sarif_option
@click.option("-x", "--exitfirst", is_flag=True, help="Stop at the first finding.")
@click.option(
    "--max-findings", type=int, metavar="N", help="Stop after N distinct findings (signatures)."
)
@click.option("--jobs", type=int, default=1, show_default=True, help="Search in N processes.")
@click.option(
    "--shard",
    metavar="K/N",
    default=None,
    help="Run the K-th of N deterministic shares of the search (for CI matrices).",
)
def fuzz(
    detector: str | None,
    timeout: float,
    budget: str | None,
    max_examples: int | None,
    seed: int,
    dialects: tuple[str, ...],
    formats: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
    policies: tuple[str, ...],
    checks: tuple[str, ...],
    corpus: tuple[Path, ...],
    save: Path,
    as_json: bool,
    junit: Path | None,
    sarif: Path | None,
    exitfirst: bool,
    max_findings: int | None,
    jobs: int,
    shard: str | None,
) -> None:
    """Fuzz a detector with generated messages (the dialects it claims, with their ground
    truth) and mutated recordings, under random chunkings, against every oracle."""
    from tcr.fuzz import run
    from tcr.fuzz.report import progress_line, render, to_json, write_junit, write_sarif
    from tcr.shard import parse_shard

    err = Console(stderr=True)
    try:
        budget_s = parse_budget(budget) if budget is not None else None
        shares = None if shard is None else parse_shard(shard)
        spinning = err.is_terminal and not as_json  # --json: stdout is the report alone
        with err.status("fuzzing", spinner="dots") if spinning else nullcontext() as status:
            started, shown = time.monotonic(), 0.0

            def progress(report: FuzzReport) -> None:
                nonlocal shown
                elapsed = time.monotonic() - started
                line = progress_line(report, elapsed)
                if status is not None:
                    status.update(escape(line))
                elif elapsed - shown >= PLAIN_EVERY:  # piped: a plain line now and then
                    click.echo(line, err=True)
                    shown = elapsed

            report = run(
                detector=load_detector(detector),
                budget_s=budget_s,
                max_examples=max_examples,
                seed=seed,
                dialects=[*dialects, *formats] or None,
                empty_tools=empty_tools,
                special_tokens=special_tokens,
                corpus=list(corpus) or None,
                save=save,
                on_progress=progress,
                shard=shares,
                jobs=jobs,
                timeout=timeout,
                exitfirst=exitfirst,
                max_findings=max_findings,
                policies=pinned(policies),
                checks=checks or None,
            )
    except TcrError as error:
        fail("fuzz", error)
    if as_json:
        click.echo(to_json(report))
    else:
        render(report, Console(soft_wrap=True))
    written = write_reports(
        "fuzz",
        (junit, lambda path: write_junit(report, path)),
        (sarif, lambda path: write_sarif(report, path)),
    )
    sys.exit(report.exit_code if written else EXIT_ERROR)
