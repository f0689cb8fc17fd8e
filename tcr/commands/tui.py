"""``tcr tui FILE``: step a detector through one recording, chunk by chunk."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tcr._runtime.loading import load_detector
from tcr.commands.options import (
    claim_options,
    claimed,
    detector_option,
    fail,
    parse_tools,
    seed_option,
    timeout_option,
    tools_option,
)
from tcr.errors import TcrError

__all__ = ["tui"]

EPILOG = """\b
Keys: n/p step, ]/[ state change, v first violation, g/G start/end,
r next rechunking, / search, d diff, b breakpoint, c/C continue forward/back,
? help, q quit.

\b
Exit status: 0 when quit; 2 bad input (unreadable file, body that does not
decode, bad strategy, detector that cannot be loaded or whose factory raises)
or no terminal to draw on (tcr show FILE prints the same steps as text).

\b
Examples:
  tcr tui rec.msgpack
  tcr tui rec.msgpack --detector tcr.detector.broken:per_chunk_markers --at-first-violation
  tcr tui rec.msgpack --rechunk splits:12,40 --rechunk char   # what a replay failure names
  tcr tui rec.msgpack --rechunk random:4 --seed 7 --rechunk fixed:16
  tcr tui rec.msgpack --detector mypkg.parser:make_detector --tools get_weather
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--rechunk",
    "strategies",
    multiple=True,
    metavar="STRATEGY",
    help="A chunking to step through; repeatable: r cycles through them "
    "(default: original, then char). Strategies that make one chunking: original, "
    "whole, char, fixed:N, random[:MAX] (run 0 of --seed), splits:A,B,...",
)
@detector_option
@tools_option
@claim_options
@seed_option
@timeout_option
@click.option(
    "--at-first-violation",
    is_flag=True,
    help="Open at the first step an oracle flags (once the oracles have run).",
)
def tui(
    file: Path,
    strategies: tuple[str, ...],
    detector: str | None,
    tools: str | None,
    dialects: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
    seed: int,
    timeout: float,
    at_first_violation: bool,
) -> None:
    """Step a detector through one recording: the stream with its chunk boundaries,
    one row per feed() with the state before and after and the events emitted, the
    detector's buffers, the oracles' verdict and what the user was shown."""
    from tcr.tui import make_app  # Textual is loaded only when the debugger runs

    try:
        app = make_app(
            file,
            detector=load_detector(
                detector,
                dialects=claimed(dialects),
                empty_tools=empty_tools,
                special_tokens=special_tokens,
            ),
            rechunk=list(strategies) or None,
            tools=parse_tools(tools),
            seed=seed,
            start_at_first_violation=at_first_violation,
            timeout=timeout,
        )
    except TcrError as error:
        fail("tui", error)
    if not _on_a_terminal():
        message = "stdout is not a terminal; tcr show FILE prints the same steps as text"
        fail("tui", TcrError(message))
    app.run()


def _on_a_terminal() -> bool:
    """Whether the debugger has a terminal to draw on (stdin and stdout both are one)."""
    return sys.stdout.isatty() and sys.stdin.isatty()
