"""``tcr matrix``: a conformance matrix of dialects by detectors, built by one command.

Each detector is judged against its own claim, as ``tcr replay`` and ``tcr fuzz``
judge it: its recordings replayed once, then for each dialect it claims a fuzz
run that writes blocks in that dialect only (``tcr.fuzz.run(writing=…)``),
mutating the recordings that hold one. A finding goes to the row of its
signature's dialect; one involving no dialect (text lost or leaked anywhere, a
crash on any input, the cost of a long message) to the row ``text``. A cell is
a pass, its findings with their reproducers, or "not claimed".
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcr.commands.options import (
    claimed,
    fail,
    seed_option,
    special_tokens_option,
    timeout_option,
)
from tcr.detector.loader import DetectorSpec
from tcr.dialects import DIALECTS
from tcr.errors import EXIT_OK, EXIT_VIOLATION, TcrError
from tcr.signature import PROXY_ONLY, Signature
from tcr.time_limit import DEFAULT_TIMEOUT, check_timeout

__all__ = ["TEXT", "Cell", "CellFinding", "Matrix", "build", "matrix"]

TEXT = "text"  # the row of findings that involve no dialect
NOT_CLAIMED = "not claimed"
DEFAULT_BUDGET = "5s"

EPILOG = """\b
Rows: every dialect (tcr dialects), or those given with --row, then "text"
(findings that involve no dialect). Columns: each --detector and --detector-cmd
in order (none: the reference), judged against its claim (--dialect names it
for a detector that declares none). A cell replays the recordings the
reference reads in that dialect and fuzzes generated and mutated messages in
it for --budget; it shows "pass", the findings with their reproducers, or
"not claimed".

\b
Exit status: 0 when every claimed cell passes; 1 when one has a finding;
2 bad input (unknown dialect, detector that cannot be loaded, bad budget).

\b
Examples:
  tcr matrix --detector mypkg.parsers:hermes --detector mypkg.parsers:qwen
  tcr matrix --detector mypkg.parsers:hermes --row hermes --budget 20s --html matrix.html
"""


@dataclass(frozen=True, slots=True)
class CellFinding:
    """One distinct finding in a cell: its signature, how often it showed, how to rerun it."""

    signature: str
    count: int
    found_by: str  # "replay" or "fuzz"
    reproducer: str
    proxy_only: bool = False  # its shrunk chunking cuts a special token (tcr.signature)

    @property
    def label(self) -> str:
        """The signature as a person reads it: ``Signature.label``."""
        return f"{self.signature} ({PROXY_ONLY})" if self.proxy_only else self.signature


@dataclass(slots=True)
class Cell:
    state: str  # "pass", "fail" or NOT_CLAIMED
    recordings: int = 0  # recordings replayed in this row
    examples: int = 0  # fuzz examples written in this row's dialect
    findings: list[CellFinding] = field(default_factory=list)

    def add(self, finding: CellFinding) -> None:
        """Keep one per signature: a second report of it adds to the count."""
        for index, seen in enumerate(self.findings):
            if (seen.signature, seen.proxy_only) == (finding.signature, finding.proxy_only):
                self.findings[index] = replace(seen, count=seen.count + finding.count)
                return
        self.findings.append(finding)
        self.state = "fail"


@dataclass(slots=True)
class Matrix:
    rows: list[str]
    columns: list[str]  # detector names
    claims: list[str]  # each column's claim, as tcr prints it
    recordings: dict[str, int]  # row -> recordings the reference reads in it
    cells: dict[tuple[str, str], Cell]
    budget_s: float
    seed: int
    seconds: float = 0.0

    def cell(self, row: str, column: str) -> Cell:
        return self.cells[row, column]

    @property
    def findings(self) -> int:
        return sum(len(c.findings) for c in self.cells.values())

    @property
    def exit_code(self) -> int:
        return EXIT_VIOLATION if self.findings else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "columns": [
                {"detector": d, "claim": c} for d, c in zip(self.columns, self.claims, strict=True)
            ],
            "recordings": self.recordings,
            "budget_s": self.budget_s,
            "seed": self.seed,
            "cells": [
                {
                    "row": row,
                    "detector": column,
                    "state": cell.state,
                    "recordings": cell.recordings,
                    "examples": cell.examples,
                    "findings": [
                        {
                            "signature": f.signature,
                            "proxy_only": f.proxy_only,
                            "count": f.count,
                            "found_by": f.found_by,
                            "reproducer": f.reproducer,
                        }
                        for f in cell.findings
                    ],
                }
                for (row, column), cell in self.cells.items()
            ],
        }


def _name(spec: DetectorSpec) -> str:
    return spec.spec or spec.command or "reference"


def _rows(wanted: Sequence[str] | None) -> list[str]:
    known = [d.id for d in DIALECTS]
    if not wanted:
        return [*known, TEXT]
    from tcr.detector.formats import claimed as check_ids

    check_ids(wanted)  # an unknown id: TcrError naming the known ones
    return [d for d in known if d in wanted]


def _dialects_read(paths: Sequence[Path]) -> dict[Path, set[str]]:
    """Which dialects the reference reads in each recording (its blocks' formats)."""
    from tcr.corpus import read_recording
    from tcr.detector.core import StreamDetector
    from tcr.stream import decode

    found: dict[Path, set[str]] = {}
    for path in paths:
        try:
            recording = read_recording(path)
            text = decode(recording).text
        except TcrError:
            found[path] = set()  # replay reports it as unreadable
            continue
        detector = StreamDetector(recording.tools)
        events = [*detector.feed(text), *detector.finish()]
        found[path] = {f for e in events if isinstance(f := getattr(e, "format", ""), str) and f}
    return found


def build(
    detectors: Sequence[DetectorSpec],
    paths: Sequence[Path],
    *,
    rows: Sequence[str] | None = None,
    budget_s: float = 5.0,
    seed: int = 0,
    save: Path | None = None,
    on_cell: Any = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> Matrix:
    """Replay and fuzz each detector, cell by cell (``on_cell(row, column)`` before each).

    ``timeout``: CPU seconds an in-process detector may take over one message, as in
    ``tcr replay`` (None: no limit); longer is a ``crash/timeout`` finding.
    """
    from tcr.fuzz import run as fuzz
    from tcr.replay import run as replay

    timeout = check_timeout(timeout)
    started = time.perf_counter()
    chosen = _rows(rows)
    read = _dialects_read(paths)
    recordings = {row: sum(row in d for d in read.values()) for row in chosen if row != TEXT}
    recordings[TEXT] = len(paths) if TEXT in chosen else 0
    names = [_name(spec) for spec in detectors]
    result = Matrix(
        chosen,
        names,
        [str(spec.claim) for spec in detectors],
        recordings,
        {},
        budget_s,
        seed,
    )
    for spec, name in zip(detectors, names, strict=True):
        parsed = spec.claim.dialects
        for row in chosen:
            claims = row == TEXT or parsed is None or row in parsed
            result.cells[row, name] = Cell(
                "pass" if claims else NOT_CLAIMED,
                recordings=recordings.get(row, 0) if claims else 0,
            )
        if on_cell is not None:
            on_cell("replay", name)
        # The recordings that hold a row's dialect (every one when the text row is shown).
        replayed = [p for p in paths if TEXT in chosen or read[p] & set(chosen)]
        report = replay(replayed, detector=spec, timeout=timeout)
        for group in report.findings:
            _place(result, name, group.signature.dialect, "replay", group.first[1].reproducer,
                   group.signature, len(group.failures))  # fmt: skip
        for row in chosen:
            if row == TEXT or result.cells[row, name].state == NOT_CLAIMED:
                continue
            if on_cell is not None:
                on_cell(row, name)
            mutated = [p for p in paths if row in read[p]]
            found = fuzz(
                detector=spec, budget_s=budget_s, seed=seed, corpus=mutated, save=save,
                writing=[row], timeout=timeout,
            )  # fmt: skip
            result.cells[row, name].examples += found.examples
            for finding in found.findings:
                reproducer = finding.replay_command
                _place(result, name, finding.signature.dialect or row, "fuzz", reproducer,
                       finding.signature, finding.count)  # fmt: skip
    result.seconds = time.perf_counter() - started
    return result


def _place(
    matrix: Matrix,
    column: str,
    dialect: str,
    found_by: str,
    reproducer: str,
    signature: Signature,
    count: int,
) -> None:
    row = dialect if (dialect, column) in matrix.cells else TEXT
    if (row, column) not in matrix.cells:  # a row left out by --row
        return
    found = CellFinding(str(signature), count, found_by, reproducer, signature.proxy)
    matrix.cells[row, column].add(found)


# --- the terminal ----------------------------------------------------------------------


def _shown(cell: Cell) -> str:
    if cell.state == NOT_CLAIMED:
        return "[dim]not claimed[/]"
    counts = f"{cell.recordings} rec" + (f", {cell.examples:,} gen" if cell.examples else "")
    if not cell.findings:
        return f"[green]pass[/] [dim]{counts}[/]"
    first = escape(cell.findings[0].label)
    more = f" +{len(cell.findings) - 1}" if len(cell.findings) > 1 else ""
    return f"[red]{len(cell.findings)} finding{'s' * (len(cell.findings) != 1)}[/]: {first}{more}"


def render(matrix: Matrix, console: Console) -> None:
    """The table, then every failing cell's findings with their reproducers, then a summary."""
    from tcr.replay.report import print_table

    table = Table(title="tcr matrix", title_justify="left")
    table.add_column("dialect")
    table.add_column("recordings", justify="right")
    for name, claim in zip(matrix.columns, matrix.claims, strict=True):
        table.add_column(f"{escape(name)}\n[dim]{escape(claim)}[/]", overflow="fold")
    for row in matrix.rows:
        cells = [_shown(matrix.cell(row, column)) for column in matrix.columns]
        table.add_row(row, str(matrix.recordings.get(row, 0)), *cells)
    print_table(console, table)
    for (row, column), cell in matrix.cells.items():
        if not cell.findings:
            continue
        console.print()
        console.print(f"[bold red]{escape(row)}[/] in [bold]{escape(column)}[/]", highlight=False)
        for finding in cell.findings:
            console.print(
                f"  {escape(finding.label)} ({finding.found_by}, {finding.count} times)",
                highlight=False,
            )
            console.print(f"    {escape(finding.reproducer)}", soft_wrap=True, highlight=False)
    failing = sum(bool(c.findings) for c in matrix.cells.values())
    claimed_cells = sum(c.state != NOT_CLAIMED for c in matrix.cells.values())
    console.print(
        f"{len(matrix.rows)} rows, {len(matrix.columns)} detectors: {claimed_cells} claimed "
        f"cells, {failing} with findings ({matrix.findings} in all) in {matrix.seconds:.1f} s",
        highlight=False,
    )


# --- the command -----------------------------------------------------------------------


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--detector",
    "detectors",
    multiple=True,
    metavar="PKG.MOD:FACTORY",
    help="A detector factory: one column each, repeatable (none: the reference).",
)
@click.option(
    "--detector-cmd",
    "commands",
    multiple=True,
    metavar="CMD",
    help="A detector in another process (the JSON-lines protocol): one column each.",
)
@click.option(
    "--dialect",
    "dialects",
    multiple=True,
    metavar="ID",
    help="The claim of every detector that declares none (repeatable).",
)
@special_tokens_option
@click.option(
    "--row", "rows", multiple=True, metavar="ID", help="Only these dialects' rows (repeatable)."
)
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    metavar="DURATION",
    help="Fuzz time per claimed cell (e.g. 5s, 1m).",
)
@seed_option
@timeout_option
@click.option(
    "--html",
    "html",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write the matrix as one self-contained page (sortable; a cell opens to "
    "its reproducers).",
)
@click.option(
    "--save",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    metavar="DIR",
    help="Where fuzz findings are saved as recordings [default: .tcr/found].",
)
def matrix(
    paths: tuple[Path, ...],
    detectors: tuple[str, ...],
    commands: tuple[str, ...],
    dialects: tuple[str, ...],
    special_tokens: str | None,
    rows: tuple[str, ...],
    budget: str,
    seed: int,
    timeout: float,
    html: Path | None,
    save: Path | None,
) -> None:
    """A conformance matrix: each dialect by each detector, replayed and fuzzed against the
    detector's claim, in a terminal table and (--html) one page."""
    from tcr.commands.fuzz import parse_budget
    from tcr.commands.matrix_page import page
    from tcr.fuzz.runner import DEFAULT_SAVE

    err = Console(stderr=True)
    try:
        budget_s = parse_budget(budget)
        files = _paths(paths)
        with _Specs(detectors, commands, claimed(dialects), special_tokens) as specs:
            status = err.status("matrix", spinner="dots") if err.is_terminal else nullcontext()
            with status as shown:

                def on_cell(row: str, column: str) -> None:
                    if shown is not None:
                        shown.update(f"matrix: {column}: {row}")

                built = build(
                    specs,
                    files,
                    rows=list(rows) or None,
                    budget_s=budget_s,
                    seed=seed,
                    save=save or DEFAULT_SAVE,
                    on_cell=on_cell,
                    timeout=timeout,
                )
    except TcrError as error:
        fail("matrix", error)
    render(built, Console(soft_wrap=True))
    if html is not None:
        try:
            html.write_text(page(built), encoding="utf-8")
        except OSError as error:
            fail("matrix", TcrError(f"--html {html}: {error.strerror or error}"))
    sys.exit(built.exit_code)


def _paths(given: Sequence[Path]) -> list[Path]:
    if not given:
        from tcr.corpora import bundled

        return bundled()
    from tcr.corpus import iter_recordings

    return list(iter_recordings(list(given)))


class _Specs:
    """``--detector`` and ``--detector-cmd`` loaded, harnesses stopped on leaving."""

    def __init__(
        self,
        detectors: Sequence[str],
        commands: Sequence[str],
        dialects: list[str] | None,
        special_tokens: str | None = None,
    ) -> None:
        self.detectors, self.commands, self.dialects = detectors, commands, dialects
        self.special_tokens = special_tokens
        self.stack = ExitStack()

    def __enter__(self) -> list[DetectorSpec]:
        from tcr.stdio import command_factory

        tokens = self.special_tokens
        specs = [
            DetectorSpec.load(d, dialects=self.dialects, special_tokens=tokens)
            for d in self.detectors
        ]
        try:
            for command in self.commands:
                factory = self.stack.enter_context(command_factory(command, timeout=5.0))
                harness = DetectorSpec(factory, command=command)
                specs.append(harness.claiming(self.dialects, special_tokens=tokens))
        except BaseException:
            self.stack.close()
            raise
        return specs or [DetectorSpec.load(None, dialects=self.dialects, special_tokens=tokens)]

    def __exit__(self, *exc: object) -> None:
        self.stack.close()
