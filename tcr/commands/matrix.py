"""``tcr matrix``: a conformance matrix of dialects by detectors, built by one command.

Each detector is judged against its own claim, as ``tcr replay`` and ``tcr fuzz``
judge it: its recordings replayed once, then for each dialect it claims a fuzz
run that writes blocks in that dialect only (``tcr.fuzz.run(writing=…)``),
mutating the recordings that hold one. A finding goes to the row of its
signature's dialect; one involving no dialect (text lost or leaked anywhere, a
crash on any input, the cost of a long message) to the row ``text``. A cell is
a pass, its findings with their reproducers, or "not claimed".

A cell counts findings as ``tcr replay`` and ``tcr fuzz`` do: the signatures of one
cause (``tcr.findings``) are one finding, grouped over the whole replay or fuzz run
(so a symptom joins its cause) and then placed in the rows of the cause's dialects;
its signatures told in no dialect go with it (to the first of those rows), or to
``text`` when it has no dialect at all. The same cause found by replay and by fuzz
is one finding of the cell, shown with replay's reproducer (a recording, not a
generated case), as replay shows it for that dialect.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcr._runtime.loading import load_detector
from tcr._runtime.names import SafeOutput, safe_text
from tcr.commands.matrix_cells import (
    NOT_CLAIMED,
    TEXT,
    Cell,
    CellFinding,
    Matrix,
    Sighting,
    plural,
)
from tcr.commands.options import (
    claimed,
    fail,
    pinned,
    policy_option,
    seed_option,
    special_tokens_option,
    timeout_option,
)
from tcr.detector.loader import DetectorSpec
from tcr.dialects import DIALECTS
from tcr.errors import TcrError
from tcr.findings import Cause
from tcr.probes import read_spec
from tcr.signature import Signature
from tcr.time_limit import DEFAULT_TIMEOUT, check_timeout

__all__ = ["TEXT", "Cell", "CellFinding", "Matrix", "Sighting", "build", "matrix"]

DIALECT_IDS = frozenset(d.id for d in DIALECTS)
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
    from tcr.fuzz.report import findings as fuzz_findings
    from tcr.replay import run as replay

    timeout = check_timeout(timeout)
    started = time.perf_counter()
    # each detector's choices first: its cells are judged with them (tcr.probes)
    detectors = [read_spec(spec, timeout=timeout)[0] for spec in detectors]
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
        judged=[spec.claim.judged_line for spec in detectors],
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
        # none to replay (no recording holds a chosen row's dialect): fuzz alone fills the cells
        causes = replay(replayed, detector=spec, timeout=timeout).causes if replayed else []
        for finding in causes:
            sightings = [
                Sighting(group.signature, "replay", len(group.failures), group.first[1].reproducer)
                for group in finding.items
            ]
            _place(result, name, finding.cause, sightings)
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
            for grouped in fuzz_findings(found):
                # a fuzz run writes this row's dialect: a signature told in none is its
                sightings = [
                    Sighting(_in(f.signature, row), "fuzz", f.count, f.replay_command)
                    for f in grouped.items
                ]
                _place(result, name, grouped.cause, sightings)
    result.seconds = time.perf_counter() - started
    return result


def _in(signature: Signature, dialect: str) -> Signature:
    return signature if signature.dialect else replace(signature, dialect=dialect)


def _place(matrix: Matrix, column: str, cause: Cause, sightings: Sequence[Sighting]) -> None:
    """A finding into the rows of its dialects; its signatures told in no dialect (or in one
    with no row) go with it to the first of them, or to ``text`` when it has none."""
    rows: dict[str, list[Sighting]] = {}
    elsewhere: list[Sighting] = []
    for sighting in sightings:
        dialect = sighting.signature.dialect
        if dialect and (dialect, column) in matrix.cells:
            rows.setdefault(dialect, []).append(sighting)
        elif dialect not in DIALECT_IDS:  # a row left out by --row is no other row's
            elsewhere.append(sighting)
    if elsewhere:
        rows.setdefault(next(iter(rows), TEXT), []).extend(elsewhere)
    for row, shown in rows.items():
        if (row, column) in matrix.cells:
            matrix.cells[row, column].add(cause, shown)


# --- the terminal ----------------------------------------------------------------------


def _shown(cell: Cell) -> str:
    if cell.state == NOT_CLAIMED:
        return "[dim]not claimed[/]"
    counts = f"{cell.recordings} rec" + (f", {cell.examples:,} gen" if cell.examples else "")
    if not cell.findings:
        return f"[green]pass[/] [dim]{counts}[/]"
    first = escape(cell.findings[0].label)
    more = f" +{len(cell.findings) - 1}" if len(cell.findings) > 1 else ""
    return f"[red]{plural(len(cell.findings), 'finding')}[/]: {first}{more}"


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
                f"  {escape(finding.label)} ({escape(finding.counts)})",
                soft_wrap=True,
                highlight=False,
            )
            console.print(f"    {escape(finding.reproducer)}", soft_wrap=True, highlight=False)
    console.print(_summary(matrix), highlight=False)


def _summary(matrix: Matrix) -> str:
    """The last line: ``2 rows, 2 detectors: 4 claimed cells, 2 with findings (2 findings,
    1 cause) in 198.0 s``."""
    failing = sum(bool(c.findings) for c in matrix.cells.values())
    claimed_cells = sum(c.state != NOT_CLAIMED for c in matrix.cells.values())
    found = plural(matrix.findings, "finding")
    if matrix.causes != matrix.findings:  # one cause in several rows
        found += f", {plural(matrix.causes, 'cause')}"
    return (
        f"{plural(len(matrix.rows), 'row')}, {plural(len(matrix.columns), 'detector')}: "
        f"{plural(claimed_cells, 'claimed cell')}, {failing} with findings ({found}) in "
        f"{matrix.seconds:.1f} s"
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
@policy_option
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
    policies: tuple[str, ...],
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
        with _Specs(
            detectors, commands, claimed(dialects), special_tokens, pinned(policies)
        ) as specs:
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
    render(built, Console(soft_wrap=True, file=SafeOutput(sys.stdout)))  # type: ignore[arg-type]
    if html is not None:
        try:
            html.write_text(safe_text(page(built)), encoding="utf-8")
        except OSError as error:
            fail("matrix", TcrError(f"--html {html}: {error.strerror or error}"))
    sys.exit(built.exit_code)


def _paths(given: Sequence[Path]) -> list[Path]:
    if not given:
        from tcr.corpora import bundled

        return bundled()
    from tcr.corpus import find_recordings

    return find_recordings(list(given))


class _Specs:
    """``--detector`` and ``--detector-cmd`` loaded, harnesses stopped on leaving."""

    def __init__(
        self,
        detectors: Sequence[str],
        commands: Sequence[str],
        dialects: list[str] | None,
        special_tokens: str | None = None,
        policies: dict[str, str] | None = None,
    ) -> None:
        self.detectors, self.commands, self.dialects = detectors, commands, dialects
        self.special_tokens, self.policies = special_tokens, policies
        self.stack = ExitStack()

    def __enter__(self) -> list[DetectorSpec]:
        from tcr.stdio import command_factory

        tokens = self.special_tokens
        pinned = self.policies
        specs = [
            load_detector(d, dialects=self.dialects, special_tokens=tokens, policies=pinned)
            for d in self.detectors
        ]
        try:
            for command in self.commands:
                factory = self.stack.enter_context(command_factory(command, timeout=5.0))
                harness = DetectorSpec(factory, command=command)
                specs.append(
                    harness.claiming(self.dialects, special_tokens=tokens, policies=pinned)
                )
        except BaseException:
            self.stack.close()
            raise
        return specs or [
            load_detector(None, dialects=self.dialects, special_tokens=tokens, policies=pinned)
        ]

    def __exit__(self, *exc: object) -> None:
        self.stack.close()
