"""The FSM's dialect table, built from the registry in ``tcr.dialects`` (ARCHITECTURE.md §5.3).

The state machine in ``tcr.detector.core`` reads this table and nothing else
about dialects; adding one is adding its module to ``tcr.dialects``. The TUI and
the docs read the same records. ``FORMATS``/``Format`` are the names ARCHITECTURE.md §5.3
and older callers use for the same records.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from tcr.dialects import BY_ID, DIALECTS, Closing, Dialect

__all__ = [
    "AT_START_OPENERS",
    "BY_ID",
    "DISTINCTIVE_OPENERS",
    "FORMATS",
    "HOLDBACK_BOUND",
    "MARKERS",
    "MODEL_SEEDS",
    "OPENER_RE",
    "SHARING",
    "Closing",
    "Format",
    "alternation",
    "format_for_model",
]

Format = Dialect
FORMATS: tuple[Dialect, ...] = DIALECTS


def _sharing() -> dict[str, tuple[Dialect, ...]]:
    """Opening marker -> the dialects that open on it, in registry order."""
    groups: dict[str, tuple[Dialect, ...]] = {}
    for d in DIALECTS:
        for marker in d.opens:
            groups[marker] = (*groups.get(marker, ()), d)
    for marker, group in groups.items():
        # One block is read before its body says whose it is: the lexer must not care.
        shapes = {
            (d.closes, d.closing, d.anywhere, d.keep, d.kind, d.first_lexer, d.quote) for d in group
        }
        if len(shapes) > 1:
            raise ValueError(f"dialects opening on {marker!r} disagree on how a block closes")
    return groups


SHARING: dict[str, tuple[Dialect, ...]] = _sharing()
DISTINCTIVE_OPENERS: tuple[str, ...] = tuple(m for m, g in SHARING.items() if g[0].anywhere)
# Policy 3: markers that open a block only while all content so far is white space.
AT_START_OPENERS: tuple[str, ...] = tuple(m for m, g in SHARING.items() if not g[0].anywhere)
MARKERS: tuple[str, ...] = tuple(sorted({m for d in DIALECTS for m in (*d.opens, *d.closes)}))

# Policy 2: outside a block at most (longest opening marker - 1) characters are held.
HOLDBACK_BOUND: int = max(len(m) for m in SHARING) - 1


def alternation(tokens: Iterable[str]) -> re.Pattern[str]:
    """A regex matching any of ``tokens``, longest first so the longer wins at one position."""
    return re.compile("|".join(re.escape(t) for t in sorted(set(tokens), key=len, reverse=True)))


# Policy 3: where a block may open anywhere.
OPENER_RE: re.Pattern[str] = alternation(DISTINCTIVE_OPENERS)

# ADR 0018's model-name seed table (ARCHITECTURE.md §15.1): the first matching pattern
# wins. A seed is a hint only; a seeded detector emits exactly what a cold one emits
# (policy 11).
MODEL_SEEDS: tuple[tuple[str, str], ...] = tuple(
    (pattern, d.id) for d in DIALECTS for pattern in d.model_seeds
)


def format_for_model(name: str) -> str | None:
    """The dialect a model of this name usually writes, or ``None`` if unknown."""
    base = name.strip().lower().rsplit("/", 1)[-1]
    for pattern, dialect_id in MODEL_SEEDS:
        if fnmatch.fnmatchcase(base, pattern):
            return dialect_id
    return None
