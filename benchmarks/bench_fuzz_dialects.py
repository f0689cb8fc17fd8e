"""Fuzzing every dialect against the reference: ``tcr fuzz --dialect ID --budget 30s`` per id.

    python benchmarks/bench_fuzz_dialects.py [--dialect ID ...] [--budget 30s] [--seed N]

Target (issue 13): for each registered dialect, the reference restricted to it
(``StreamDetector(dialects=[ID])``) fuzzed for the budget, seed 0, the bundled
recordings mutated as ``tcr fuzz`` does by default, finds nothing. A finding is
a bug in the reference or in a generator, never noise: the search is seeded and
its oracles compare content, not time (the cost check measures CPU time).

Runs one dialect after another in this process (``--dialect`` repeatable,
default every id of ``tcr.dialects.DIALECTS``). Its rows are merged into the
table already in RESULTS.md: a dialect run again replaces its row, the others
stay, so the families added later can be measured on their own and join the table.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import RESULTS, write_section

from tcr.commands.fuzz import parse_budget
from tcr.dialects import DIALECTS
from tcr.fuzz import run

TITLE = "Fuzzing every dialect against the reference"
HEAD = (
    "| dialect | examples | generated | mutated | violations | seconds | examples/s | load |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
)
_ROW_RE = re.compile(r"^\| `(?P<id>[^`]+)` \|")


@dataclass(frozen=True, slots=True)
class Row:
    """One dialect's run, as its table row shows it."""

    dialect: str
    examples: int
    generated: int
    mutated: int
    violations: tuple[str, ...]  # the findings' signatures
    seconds: float
    load: float  # the 1-minute load average when the run started

    def line(self) -> str:
        found = "0" if not self.violations else "**" + ", ".join(self.violations) + "**"
        rate = self.examples / self.seconds if self.seconds else 0.0
        return (
            f"| `{self.dialect}` | {self.examples:,} | {self.generated:,} | {self.mutated:,} | "
            f"{found} | {self.seconds:.1f} | {rate:,.0f} | {self.load:.1f} |"
        )


def fuzz(dialect: str, budget_s: float, seed: int) -> Row:
    """``tcr fuzz --dialect DIALECT --budget BUDGET --seed SEED`` with nothing saved."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    report = run(dialects=[dialect], budget_s=budget_s, seed=seed, save=None)
    return Row(
        dialect,
        report.examples,
        report.generated,
        report.mutated,
        tuple(str(f.signature) for f in report.findings),
        time.perf_counter() - started,
        load,
    )


def kept_rows() -> dict[str, str]:
    """The rows of the table already in RESULTS.md, by dialect id."""
    text = RESULTS.read_text() if RESULTS.exists() else ""
    section = re.search(rf"^## {re.escape(TITLE)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if section is None:
        return {}
    return {
        m["id"]: line
        for line in section.group(1).splitlines()
        if (m := _ROW_RE.match(line)) is not None
    }


def merged(rows: dict[str, str]) -> list[str]:
    """The rows in registry order, then ids the registry here does not know (another branch's)."""
    order = [d.id for d in DIALECTS]
    known = [rows[i] for i in order if i in rows]
    return known + [line for i, line in sorted(rows.items()) if i not in order]


def section(rows: dict[str, str], budget_s: float, seed: int) -> str:
    clean = sum(1 for line in rows.values() if line.split("|")[5].strip() == "0")
    return "\n".join(
        [
            f"`tcr fuzz --dialect ID --budget {budget_s:g}s --seed {seed}` for each registered "
            "dialect: the reference restricted to it, blocks written in it, other dialects' "
            "markup mixed in as text, the bundled recordings mutated. Written by "
            "`python benchmarks/bench_fuzz_dialects.py [--dialect ID ...]`, which replaces the "
            "rows of the dialects it runs and keeps the others. Seconds are the whole run (the "
            "cost probe, the search, any shrinking); load is the 1-minute load average as it "
            f"started, on {os.cpu_count()} cores.",
            "",
            *HEAD,
            *merged(rows),
            "",
            f"Target: no violation for any dialect: **{clean} of {len(rows)} clean**"
            f"{'' if clean == len(rows) else ' (NOT met)'}.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dialect",
        action="append",
        metavar="ID",
        help="a dialect id (repeatable; default every registered one)",
    )
    parser.add_argument(
        "--budget", type=parse_budget, default=30.0, help="per dialect, as tcr fuzz's (30s)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dry-run", action="store_true", help="print, leave RESULTS.md alone")
    opts = parser.parse_args()
    ids = opts.dialect or [d.id for d in DIALECTS]
    rows = kept_rows()
    for dialect in ids:
        row = fuzz(dialect, opts.budget, opts.seed)
        rows[dialect] = row.line()
        print(row.line(), flush=True)
        if not opts.dry_run:  # written as it goes: a long run stopped early keeps its rows
            write_section(TITLE, section(rows, opts.budget, opts.seed))


if __name__ == "__main__":
    main()
