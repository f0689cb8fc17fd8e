"""``tcr replay``: recordings through a detector under every rechunking."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from tcr._runtime.loading import load_detector
from tcr._runtime.names import SafeOutput
from tcr.commands.options import (
    Choice,
    check_option,
    claim_options,
    claimed,
    detector_cmd_option,
    detector_option,
    fail,
    json_option,
    junit_option,
    parse_tools,
    pinned,
    policy_option,
    sarif_option,
    seed_option,
    timeout_option,
    tool_specs_option,
    tools_option,
    write_reports,
)
from tcr.detector.loader import DetectorSpec
from tcr.errors import EXIT_ERROR, TcrError
from tcr.rechunk import DEFAULT_STRATEGIES, STRATEGY_FORMS
from tcr.stdio import command_factory

if TYPE_CHECKING:
    from tcr.replay.model import Failure, Outcome

EPILOG = (
    """\b
Strategies: """
    + STRATEGY_FORMS
    + """
Exit codes: 0 every check passes, 1 a violation was found,
            2 an input could not be used (corrupt recording, detector that
              cannot be loaded, raises in its factory or crashes), or a
              --junit or --sarif file could not be written (after the report).

\b
Examples:
  tcr replay                                  # every bundled corpus
  tcr replay -v                               # every run in a table
  tcr replay --lf                             # only what failed last time
  tcr replay corpora/ --rechunk random --runs 200 --seed 7
  tcr replay rec.msgpack --rechunk exhaustive --rechunk boundary
  tcr replay rec.msgpack --detector mypkg.parser:make_detector --tools get_weather
  tcr replay rec.msgpack --detector mypkg.parser:make_detector --tool-specs tools.json
  tcr replay corpora/ --detector mypkg.parser:make_detector --dialect hermes --dialect think
  tcr replay corpora/ --dialect mistral --empty-tools text   # the reference, restricted
  tcr replay corpora/ --detector mypkg.parser:make_detector --policy undeclared=rejected
  tcr replay corpora/ --detector mypkg.engine:parser --special-tokens whole
  tcr replay rec.msgpack --rechunk splits:12,15 --check no_leak
  tcr replay rec.msgpack --detector mypkg.parser:make_detector --debug
  tcr replay corpora/ --detector-cmd './my-go-detector --stdio' --detector-timeout 2
  tcr replay corpora/ --detector-cmd './my-go-detector --stdio' --jobs 2
  tcr replay corpora/ --jobs 2 --shard 1/3     # this machine's third, on 2 cores
  tcr replay corpora/recorded --layer transport --rechunk bytes-random
  tcr replay corpora/ --json > report.json; tcr replay corpora/ --junit replay.xml
  tcr replay corpora/ --sarif replay.sarif     # GitHub code scanning, VS Code
"""
)


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--rechunk",
    "strategies",
    multiple=True,
    metavar="STRATEGY",
    help="Rechunking strategy; repeatable (default: " + ", ".join(DEFAULT_STRATEGIES) + ").",
)
@click.option("--runs", type=int, default=20, show_default=True, help="Runs of random strategies.")
@seed_option
@detector_option
@detector_cmd_option
@timeout_option
@tools_option
@tool_specs_option
@claim_options
@policy_option
@check_option
@click.option(
    "--layer",
    type=Choice(["content", "transport"]),
    default="content",
    show_default=True,
    help="content: rechunk the decoded text; transport: re-split the raw body bytes.",
)
@json_option
@junit_option
@sarif_option
@click.option("-v", "--verbose", count=True, help="Show every recording x strategy run in a table.")
@click.option("-q", "--quiet", count=True, help="Show only the failures and the summary line.")
@click.option(
    "--lf",
    "--last-failed",
    "last_failed",
    is_flag=True,
    help="Replay only the recordings that failed last time (all when none did); "
    "tcr remembers them in .tcr/ in the working directory.",
)
@click.option("-x", "--exitfirst", is_flag=True, help="Stop at the first failure.")
@click.option("--no-minimize", is_flag=True, help="Report failing chunkings without shrinking.")
@click.option(
    "--debug", is_flag=True, help="Open the step debugger (tcr tui) at the first failure."
)
@click.option("--jobs", type=int, default=1, show_default=True, help="Replay in N processes.")
@click.option(
    "--shard",
    metavar="K/N",
    default=None,
    help="Replay the K-th of N deterministic shares of the recordings (for CI matrices).",
)
def replay(
    paths: tuple[Path, ...],
    strategies: tuple[str, ...],
    runs: int,
    seed: int,
    detector: str | None,
    detector_cmd: str | None,
    detector_timeout: float,
    timeout: float,
    tools: str | None,
    tool_specs: Path | None,
    dialects: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
    policies: tuple[str, ...],
    checks: tuple[str, ...],
    layer: str,
    as_json: bool,
    junit: Path | None,
    sarif: Path | None,
    verbose: int,
    quiet: int,
    last_failed: bool,
    exitfirst: bool,
    no_minimize: bool,
    debug: bool,
    jobs: int,
    shard: str | None,
) -> None:
    """Replay recordings (files or directories; none: the bundled corpora) through a
    detector under every rechunking, check every oracle, and shrink each failure to a
    minimal reproducer."""
    from tcr.replay import run
    from tcr.replay.lastfailed import LastFailed, remember
    from tcr.replay.progress import ReplayProgress
    from tcr.replay.report import Level, render, to_json, write_junit, write_sarif
    from tcr.replay.runner import parse_shard

    try:
        with (
            _detector(
                detector,
                detector_cmd,
                detector_timeout,
                claimed(dialects),
                (empty_tools, special_tokens),
            ) as chosen,
            ReplayProgress(sys.stderr, enabled=not as_json) as advance,
        ):
            report = run(
                list(paths) or None,
                strategies=strategies or None,
                runs=runs,
                seed=seed,
                detector=chosen,
                tools=parse_tools(tools),
                tool_specs=tool_specs,
                checks=checks or None,
                layer=layer,
                exitfirst=exitfirst,
                minimize=not no_minimize,
                on_progress=advance,
                shard=None if shard is None else parse_shard(shard),
                jobs=jobs,
                last_failed=LastFailed.read() if last_failed else None,
                timeout=timeout,  # in-process only: the run drops it for a --detector-cmd
                policies=pinned(policies),
            )
    except TcrError as error:
        fail("replay", error)
    not_remembered = remember(report)
    if as_json:
        click.echo(to_json(report))
    else:
        stdout = SafeOutput(sys.stdout)  # a file name's undecodable byte as \xNN
        console = Console(soft_wrap=False, file=stdout)  # type: ignore[arg-type]
        render(report, console, level=Level.of(verbose, quiet))
    written = write_reports(
        "replay",
        (junit, lambda path: write_junit(report, path)),
        (sarif, lambda path: write_sarif(report, path)),
    )
    if not_remembered:
        click.echo(f"tcr replay: {not_remembered}", err=True)
    probes = (report.cost, report.policy)
    replayed = [(o, f) for o, f in report.failures if all(o is not p for p in probes)]
    if debug and replayed and detector_cmd is None:
        _debug(replayed[0], chosen, parse_tools(tools), timeout)
    sys.exit(report.exit_code if written else EXIT_ERROR)


@contextmanager
def _detector(
    spec: str | None,
    command: str | None,
    timeout: float,
    dialects: list[str] | None,
    choices: tuple[str | None, str | None],  # --empty-tools, --special-tokens
) -> Iterator[DetectorSpec]:
    """``--detector`` loaded, or ``--detector-cmd`` as one harness (one per ``--jobs`` worker),
    with its claim resolved (the harness says its own in its answer to ``new``)."""
    empty_tools, special_tokens = choices
    if command is None:
        yield load_detector(
            spec, dialects=dialects, empty_tools=empty_tools, special_tokens=special_tokens
        )
        return
    if spec is not None:
        raise TcrError("--detector and --detector-cmd exclude each other: give one")
    with command_factory(command, timeout=timeout) as factory:
        harness = DetectorSpec(factory, command=command)
        yield harness.claiming(dialects, empty_tools, special_tokens)


def _debug(
    found: tuple[Outcome, Failure],
    detector: DetectorSpec,
    tools: list[str] | None,
    timeout: float,
) -> None:
    """Step through the first failure's shrunk chunking of the recorded text."""
    from tcr.rechunk import splits_spec
    from tcr.tui import open_at_failure

    outcome, failure = found
    spec = splits_spec(failure.splits) if failure.splits else "whole"
    try:
        open_at_failure(
            outcome.path, detector=detector, tools=tools, chunks_or_strategy=spec, timeout=timeout
        )
    except TcrError as error:
        fail("replay", error)
