"""One bug, one finding: how many findings a detector with one known bug gets.

    python benchmarks/bench_precision.py [--examples N] [--seeds K] [--disagreeing]

Precision, as issue 12 asks for it: a finding is a *cause* (``tcr.findings``), and a
detector with exactly one bug should get exactly one. Measured for the streaming
Hermes parser of ``tests/parsers`` (through ``tcr.adapters``, claiming ``hermes``)
with each of its bugs switched on alone and with all of them at once, and for every
single-bug detector of ``tcr.detector.broken`` (claiming everything): one fuzz run
per seed (``--examples`` each) and one replay of the bundled
recordings under 1 MB, with the default strategies. Counts, not times: the machine's
load changes nothing here but how long the script takes.

``--disagreeing`` measures instead the correct parsers of ``tests/parsers`` whose
choices differ from the reference's (``tests/adapters/test_disagreeing_parsers.py``),
each claiming only its dialect, alone (no finding wanted: its choices are read, not
reported) and with each of its bugs switched on alone, with the choices tcr read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "tests"))

from _results import write_section
from parsers import qwen3_coder, strict, trimming, undeclared
from parsers.hermes import Bug
from parsers.shapes import CLAIM, hermes_factory

from tcr.claims import Claim
from tcr.corpora import bundled
from tcr.detector.broken import BROKEN
from tcr.detector.loader import DetectorSpec, resolve_detector
from tcr.fuzz import run as fuzz
from tcr.fuzz.report import findings
from tcr.probes import read_spec
from tcr.replay import run as replay

SMALL = [p for p in bundled() if p.stat().st_size < 1_000_000]
# the correct parsers that choose differently, their dialect and their bugs
DISAGREEING = [
    (undeclared, "hermes", tuple(Bug)),
    (strict, "hermes", tuple(Bug)),
    (trimming, "hermes", tuple(Bug)),
    (qwen3_coder, "qwen3_coder", qwen3_coder.BUGS),
]


def _causes(spec: DetectorSpec, seeds: Sequence[int], examples: int) -> tuple[int, list[int], str]:
    replayed = [g.name for g in replay(SMALL, detector=spec).causes]
    fuzzed: list[int] = []
    names: dict[str, None] = dict.fromkeys(replayed)
    for seed in seeds:
        report = fuzz(detector=spec, max_examples=examples, seed=seed, save=None)
        grouped = findings(report)
        fuzzed.append(len(grouped))
        names.update(dict.fromkeys(g.name for g in grouped))
    return len(replayed), fuzzed, "; ".join(names)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--disagreeing", action="store_true", help="the parsers that choose differently, alone"
    )
    args = parser.parse_args(argv)
    seeds = range(args.seeds)
    if args.disagreeing:
        disagreeing(seeds, args.examples)
        return
    rows: list[tuple[str, int, int, list[int], str]] = []
    subjects = [(f"parsers.hermes `{bug.value}`", 1, _hermes((bug,))) for bug in Bug]
    subjects.append(("parsers.hermes, every bug at once", len(Bug), _hermes(tuple(Bug))))
    for name, factory in BROKEN.items():
        subjects.append((f"broken `{name}`", 1, resolve_detector(factory)))
    for label, bugs, spec in subjects:
        replayed, fuzzed, names = _causes(spec, seeds, args.examples)
        rows.append((label, bugs, replayed, fuzzed, names))
        print(label, bugs, replayed, fuzzed, names, flush=True)
    exact = sum(1 for _, bugs, r, f, _ in rows if r <= bugs and all(n == bugs for n in f))
    lines = [
        f"Findings (causes, `tcr.findings`) per detector: replay of the {len(SMALL)} bundled",
        f"recordings under 1 MB, and fuzz runs of {args.examples:,} examples with seeds "
        f"{', '.join(map(str, seeds))}. Target: as many findings as bugs.",
        "",
        "| detector | bugs | replay | fuzz, per seed | the findings |",
        "|---|---:|---:|---|---|",
    ]
    for label, bugs, replayed, fuzzed, names in rows:
        shown = names.replace("|", "\\|")
        lines.append(f"| {label} | {bugs} | {replayed} | {', '.join(map(str, fuzzed))} | {shown} |")
    lines += [
        "",
        f"As many findings as bugs in replay (or fewer: not every bug shows in the bundled "
        f"recordings) and in every fuzz run: **{exact} of {len(rows)}** detectors.",
    ]
    write_section("Precision: findings per bug (bench_precision.py)", "\n".join(lines))


def disagreeing(seeds: Sequence[int], examples: int) -> None:
    rows: list[str] = []
    exact = 0
    for module, dialect, bugs in DISAGREEING:
        name = module.__name__.removeprefix("parsers.")
        subjects = [(f"parsers.{name}", 0, "factory")]
        subjects += [(f"parsers.{name} `{bug.value}`", 1, bug.value) for bug in bugs]
        for label, count, attribute in subjects:
            spec = resolve_detector(f"{module.__name__}:{attribute}", dialects=[dialect])
            judged, _ = read_spec(spec)
            choices = judged.claim.judged_line.partition("; ")[2]
            replayed, fuzzed, names = _causes(spec, seeds, examples)
            exact += replayed <= count and all(n == count for n in fuzzed)
            print(label, count, replayed, fuzzed, names, flush=True)
            shown = (names or "none").replace("|", "\\|")
            rows.append(
                f"| {label} | {choices} | {count} | {replayed} | "
                f"{', '.join(map(str, fuzzed))} | {shown} |"
            )
    lines = [
        "Correct parsers whose choices differ from the reference's (tests/parsers), each",
        "claiming only its dialect, alone and with one bug switched on: the choices tcr read",
        f"from its probes, then findings in a replay of the {len(SMALL)} bundled recordings",
        f"under 1 MB and in fuzz runs of {examples:,} examples with seeds "
        f"{', '.join(map(str, seeds))}. Target: as many findings as bugs (none alone).",
        "",
        "| parser | choices read | bugs | replay | fuzz, per seed | the findings |",
        "|---|---|---:|---:|---|---|",
        *rows,
        "",
        f"As many findings as bugs: **{exact} of {len(rows)}**.",
    ]
    write_section(
        "Precision: parsers that choose differently (bench_precision.py --disagreeing)",
        "\n".join(lines),
    )


def _hermes(bugs: tuple[Bug, ...]) -> DetectorSpec:
    return DetectorSpec(hermes_factory(bugs=bugs), claim=Claim.of(CLAIM))


if __name__ == "__main__":
    main()
