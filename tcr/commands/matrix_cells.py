"""The cells of ``tcr matrix``: what a cell holds, and the matrix of them.

A cell's findings are counted as ``tcr replay`` and ``tcr fuzz`` count theirs: one per
cause (``tcr.findings``), each the signatures (``Sighting``) replay and fuzz showed of
it in that row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tcr.errors import EXIT_OK, EXIT_VIOLATION
from tcr.findings import Cause, Grouped
from tcr.signature import PROXY_ONLY, Signature

__all__ = ["NOT_CLAIMED", "TEXT", "Cell", "CellFinding", "Matrix", "Sighting", "plural"]

TEXT = "text"  # the row of findings that involve no dialect
NOT_CLAIMED = "not claimed"


@dataclass(frozen=True, slots=True)
class Sighting:
    """One signature of a finding, as replay or fuzz showed it."""

    signature: Signature
    found_by: str  # "replay" or "fuzz"
    count: int  # replay: its failures (recording x strategy); fuzz: the examples that showed it
    reproducer: str


@dataclass(frozen=True, slots=True)
class CellFinding:
    """One finding of a cell: the signatures of one cause in its row (``tcr.findings``), how
    often they showed and how to rerun it."""

    cause: Cause
    sightings: tuple[Sighting, ...]

    @property
    def shown(self) -> Sighting:
        """The one shown with its reproducer: replay's when replay found it, the first check's
        (``Grouped.first``, as replay's report picks a dialect's)."""
        replayed = tuple(s for s in self.sightings if s.found_by == "replay")
        return Grouped(self.cause, replayed or self.sightings).first

    @property
    def signature(self) -> str:
        return str(self.shown.signature)

    @property
    def reproducer(self) -> str:
        return self.shown.reproducer

    @property
    def signatures(self) -> int:
        """Distinct signatures (a special token cut or not is one: ``tcr.findings.Cause``)."""
        return len({str(s.signature) for s in self.sightings})

    @property
    def proxy_only(self) -> bool:
        """Every signature of it needs a special token cut (``tcr.signature``)."""
        return all(s.signature.proxy for s in self.sightings)

    @property
    def label(self) -> str:
        """As replay's heading names it: the signature when it is one, else the cause with
        its checks (``Grouped.name``)."""
        if self.signatures == 1:
            only = str(self.sightings[0].signature)
            return f"{only} ({PROXY_ONLY})" if self.proxy_only else only
        return Grouped(self.cause, self.sightings).name

    @property
    def failures(self) -> int:
        return sum(s.count for s in self.sightings if s.found_by == "replay")

    @property
    def examples(self) -> int:
        return sum(s.count for s in self.sightings if s.found_by == "fuzz")

    @property
    def found_by(self) -> str:
        """``replay``, ``fuzz`` or ``replay and fuzz``."""
        return " and ".join(dict.fromkeys(s.found_by for s in self.sightings))

    @property
    def counts(self) -> str:
        """``replay: 29 failures, fuzz: 1 example; 3 signatures``."""
        counted = [
            f"{by}: {plural(n, unit)}"
            for by, n, unit in (
                ("replay", self.failures, "failure"),
                ("fuzz", self.examples, "example"),
            )
            if by in self.found_by
        ]
        more = f"; {plural(self.signatures, 'signature')}" if self.signatures > 1 else ""
        return ", ".join(counted) + more

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": str(self.cause),
            "label": self.label,
            "signature": self.signature,
            "proxy_only": self.proxy_only,
            "found_by": self.found_by,
            "failures": self.failures,
            "examples": self.examples,
            "reproducer": self.reproducer,
            "signatures": [
                {
                    "signature": str(s.signature),
                    "proxy_only": s.signature.proxy,
                    "found_by": s.found_by,
                    "count": s.count,
                    "reproducer": s.reproducer,
                }
                for s in self.sightings
            ],
        }


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@dataclass(slots=True)
class Cell:
    state: str  # "pass", "fail" or NOT_CLAIMED
    recordings: int = 0  # recordings replayed in this row
    examples: int = 0  # fuzz examples written in this row's dialect
    findings: list[CellFinding] = field(default_factory=list)

    def add(self, cause: Cause, sightings: Sequence[Sighting]) -> None:
        """Keep one finding per cause: more of its signatures join it."""
        for index, seen in enumerate(self.findings):
            if seen.cause == cause:
                self.findings[index] = replace(seen, sightings=(*seen.sightings, *sightings))
                return
        self.findings.append(CellFinding(cause, tuple(sightings)))
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
    judged: list[str] = field(default_factory=list)  # each column's policy line (tcr.probes)

    def cell(self, row: str, column: str) -> Cell:
        return self.cells[row, column]

    @property
    def findings(self) -> int:
        """The findings the cells show (one cause in two dialects: one in each row)."""
        return sum(len(c.findings) for c in self.cells.values())

    @property
    def causes(self) -> int:
        """Distinct causes, each detector's counted once however many rows show it."""
        return len({(column, f.cause) for (_, column), c in self.cells.items() for f in c.findings})

    @property
    def exit_code(self) -> int:
        return EXIT_VIOLATION if self.findings else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "columns": [
                {"detector": d, "claim": c, "judged_against": j}
                for d, c, j in zip(
                    self.columns,
                    self.claims,
                    self.judged or [""] * len(self.columns),
                    strict=True,
                )
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
                    "findings": [f.to_dict() for f in cell.findings],
                }
                for (row, column), cell in self.cells.items()
            ],
        }
