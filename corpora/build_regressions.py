"""Build the bundled regression corpus: one recording per bug in the seeds
(ARCHITECTURE.md §15) and per policy.

Each row of :data:`CASES` is one failure that shipped somewhere (ADR 0018 and
the two pull requests of ARCHITECTURE.md §15: ``_seed_cases``), one policy of
ARCHITECTURE.md §5.6 (``_policy_cases``) or one dialect's own case (``_format_cases``
reads them from ``tcr.dialects``), written down as the stream a real backend sends: the chunk
sequence split the way that backend's tokenizer or detokenizer split it, framed
by ``_wire`` exactly as that backend frames it, with what the reference detector
must produce as the expectation.

Run ``python -m tcr.corpora.build_regressions [OUTDIR]`` after editing a table
(OUTDIR defaults to ``regressions/`` beside this file). Ids, timings and
``created`` are fixed, so a rebuild is byte-identical: the test suite rebuilds
into a temporary folder and compares bytes, so the tables and the bundled
files never drift apart.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcr.corpus import new_header, write_recording

from ._cases import Case, Expect, call
from ._format_cases import FORMAT_CASES
from ._policy_cases import POLICY_CASES
from ._seed_cases import SEED_CASES
from ._wire import CREATED, Exchange, encode

__all__ = [
    "CASES",
    "DEFAULT_OUTDIR",
    "FORMAT_CASES",
    "POLICY_CASES",
    "SEED_CASES",
    "Case",
    "Expect",
    "build",
    "call",
    "main",
    "write_case",
]

DEFAULT_OUTDIR = Path(__file__).resolve().parent / "regressions"

#: The whole table: the seeds' failures (ARCHITECTURE.md §15), then policies 1-13, then
#: the dialects' own cases.
CASES: tuple[Case, ...] = SEED_CASES + POLICY_CASES + FORMAT_CASES


def _check(cases: Sequence[Case]) -> None:
    for label, values in (("file", [c.file for c in cases]), ("bug", [c.bug for c in cases])):
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise ValueError(f"regression table: repeated {label} {repeated}")
    for case in cases:
        if not case.file.endswith(".msgpack") or "/" in case.file:
            raise ValueError(f"regression table: {case.file!r} is not a plain *.msgpack name")
        if not case.chunks or not all(case.chunks):
            raise ValueError(f"regression table: {case.file} has an empty chunk")


def _messages(case: Case) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if case.system is not None:
        messages.append({"role": "system", "content": case.system})
    messages.append({"role": "user", "content": case.ask})
    return messages


def write_case(case: Case, outdir: Path) -> Path:
    """Write one case as ``outdir / case.file``; its id is derived from the file name."""
    offered = case.tools if case.offered is None else case.offered
    exchange = Exchange(_messages(case), offered or None, case.extra, case.finish)
    encoded = encode(case.file, case.via, case.chunks, exchange)
    header = new_header(
        encoded.kind,
        id="regressions/" + case.file.removesuffix(".msgpack"),
        source=encoded.source,
        request=encoded.request,
        response=encoded.response,
        tools=case.tools,
        labels={"dialect": case.dialect, "origin": "handmade", "bug": case.bug, "note": case.note},
        created=CREATED,
    )
    return write_recording(outdir / case.file, header, encoded.frames, expect=case.expect.as_map())


def build(outdir: Path = DEFAULT_OUTDIR, cases: Sequence[Case] = CASES) -> list[Path]:
    """Write every case into ``outdir`` (created if missing); returns the paths written."""
    _check(cases)
    outdir.mkdir(parents=True, exist_ok=True)
    return [write_case(case, outdir) for case in cases]


_USAGE = f"""usage: python -m tcr.corpora.build_regressions [OUTDIR]

Write the bundled regression recordings into OUTDIR (default: {DEFAULT_OUTDIR}).

examples:
  python -m tcr.corpora.build_regressions
  python -m tcr.corpora.build_regressions /tmp/regressions && tcr replay /tmp/regressions
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(_USAGE, end="")
        return 0
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(_USAGE, end="", file=sys.stderr)
        return 2
    outdir = Path(args[0]) if args else DEFAULT_OUTDIR
    written = build(outdir)
    print(f"wrote {len(written)} recordings to {outdir}")
    names = {case.file for case in CASES}
    stale = sorted(p.name for p in outdir.glob("*.msgpack") if p.name not in names)
    if stale:
        print(f"not in the table (delete them if renamed): {', '.join(stale)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
