"""From signatures to findings: one bug, one finding (ARCHITECTURE.md §7.4).

A signature says what one check saw, in one dialect. One bug usually trips
several checks at once, in every dialect it touches: a marker split across
chunks is missed (``invariance``), shows as text (``no_leak``) and loses the
call the recording expects (``expected``), each with its own signature, once per
dialect whose opening marker the detector fails to join. Reports count
*findings*, each the signatures of one *cause*:

- a failure that needs a split is caused by where the split falls: its cause
  is the shape alone (``split-in-opener``, ``split-in-closer``, …), whatever
  checks, kinds and dialects show it;
- a failure that needs no split (``whole``, a parsing bug) is caused by what the
  parser does with that text: its cause is the check and kind (``expected/missing
  ToolCall@whole``), in whichever dialects show it. Two parsing bugs of one
  dialect often show on the same recordings, so a whole failure of another
  check joins it only as a *symptom*: when every run that shows it shows this
  one too, in the same dialect (text lost at the end of the stream is
  ``conservation`` and, where the recording expects that text, ``expected``).

A finding shows one signature per dialect in full (the first of its checks to
fail, in check order), each with its own reproducer, and counts the rest. Pure:
this decides from the signatures alone, nothing is run again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from tcr._verdict import Check
from tcr.signature import PROXY_ONLY, UNSPLIT, WHOLE, Signature

__all__ = ["Cause", "Grouped", "cause", "group", "shrunk", "symptoms"]

_ORDER = {check.value: i for i, check in enumerate(Check)}
SHOWN_DIALECTS = 5  # a finding's dialects shown with a reproducer each; the rest counted


class _Signed(Protocol):
    @property
    def signature(self) -> Signature: ...


T = TypeVar("T", bound=_Signed)


@dataclass(frozen=True, slots=True)
class Cause:
    """A finding's name: the shape of a split (``split-in-opener``), or the check, kind and
    shape of a failure with none (``expected/missing ToolCall@whole``). Whether the split
    falls inside a special token (``Signature.proxy``) is not part of it: the same missed
    split is one bug whether the marker is one token or several, and the finding says in
    which dialects only a proxy makes it (``Grouped.name``)."""

    shape: str
    check: str = ""
    kind: str = ""

    def __str__(self) -> str:
        if not self.check:
            return self.shape
        return str(Signature(self.check, self.kind, "", self.shape))


# The checks of a detector's events: a split makes them fail together. A crash, a time
# limit or the cost of a detector is its own finding whatever the split.
_OF_EVENTS = frozenset(
    {Check.CONSERVATION, Check.INVARIANCE, Check.NO_LEAK, Check.HOLDBACK, Check.WARM_COLD}
    | {Check.EXPECTED}
)


def cause(found: Signature) -> Cause:
    if found.shape not in ("", WHOLE) and found.check in _OF_EVENTS:  # a split, or IN_STRING
        return Cause(found.shape)
    return Cause(found.shape, found.check, found.kind)


@dataclass(frozen=True, slots=True)
class Grouped(Generic[T]):
    """One finding: its cause and its signatures' items, in the order found."""

    cause: Cause
    items: tuple[T, ...]

    @property
    def shown(self) -> tuple[T, ...]:
        """One item per dialect, in the order the dialects were found, those a real engine's
        chunking shows first (not only when a proxy re-chunks): of a dialect's signatures, the
        first check's (conservation, invariance, … as ``Check`` lists them); at most
        ``SHOWN_DIALECTS`` of them (``rest`` counts the others)."""
        best: dict[str, T] = {}
        for item in self.items:
            dialect = item.signature.dialect
            if dialect not in best or _rank(item) < _rank(best[dialect]):
                best[dialect] = item
        return tuple(sorted(best.values(), key=lambda i: i.signature.proxy))[:SHOWN_DIALECTS]

    @property
    def name(self) -> str:
        """The finding as its heading names it: ``split-in-opener (invariance, no_leak,
        expected) in 17 dialects, 14 of them only when a proxy re-chunks``."""
        name = str(self.cause)
        if not self.cause.check:
            name += f" ({', '.join(self.checks)})"
        dialects = self.dialects
        if len(dialects) > 1:
            name += f" in {len(dialects)} dialects"
        elif dialects:
            name += f" in {dialects[0]}"
        proxied = {i.signature.dialect for i in self.items if i.signature.proxy}
        proxied -= {i.signature.dialect for i in self.items if not i.signature.proxy}
        if proxied and len(proxied) == len(set(i.signature.dialect for i in self.items)):
            name += f" ({PROXY_ONLY})"
        elif proxied:
            name += f", {len(proxied)} of them {PROXY_ONLY}"
        return name

    @property
    def first(self) -> T:
        return self.shown[0]

    def rest(self, noun: str) -> str:
        """The signatures not shown, counted by check: ``its 66 other signatures: no_leak 30,
        expected 36 (--json lists each)``; ``""`` when every one is shown."""
        shown = set(map(id, self.shown))
        rest = [i.signature.check for i in self.items if id(i) not in shown]
        if not rest:
            return ""
        counts = {
            c: rest.count(c) for c in sorted(set(rest), key=lambda c: _ORDER.get(c, len(_ORDER)))
        }
        many = f"{len(rest)} other signatures" if len(rest) > 1 else "other signature"
        by_check = ", ".join(f"{c} {n}" for c, n in counts.items())
        return f"its {many}: {by_check} ({noun} lists each)"

    @property
    def dialects(self) -> list[str]:
        return [d for d in dict.fromkeys(i.signature.dialect for i in self.items) if d]

    @property
    def checks(self) -> list[str]:
        """Its signatures' checks, in check order."""
        found = {i.signature.check: i.signature for i in self.items}
        return sorted(found, key=lambda c: _check_rank(found[c]))


def _rank(item: _Signed) -> int:
    return _check_rank(item.signature)


def _check_rank(found: Signature) -> int:
    return _ORDER.get(found.check, len(_ORDER))


def symptoms(runs: Sequence[Collection[Signature]]) -> dict[Signature, Signature]:
    """Each signature that is a symptom, mapped to the one it is a symptom of (which may be
    one itself: ``group`` follows the chain).

    A symptom shows only where its primary does: a signature of an earlier check, in the
    same shape and dialect (or any, when the symptom's could not be told), shown by every
    run that shows it. Two more:

    - a symptom told in no dialect may show with any of one cause's signatures (an
      undeclared call dropped loses its text in each dialect; the missing text it expects
      is told in none);
    - a chunking whose events differ from the whole run's (``invariance``) where the whole
      run itself fails, in that dialect: the chunked run may be the right one (two calls
      merged only when one chunk completes both), so it is the whole run's finding.

    ``runs`` are the signatures each run showed (a recording under its strategies, a fuzz
    case), in the order found.
    """
    seen: dict[Signature, set[int]] = {}
    for index, run in enumerate(runs):
        for found in run:
            seen.setdefault(found, set()).add(index)
    ordered = sorted(seen, key=_check_rank)
    folded: dict[Signature, Signature] = {}
    for found in ordered:
        primary = _primary(found, ordered, seen)
        if primary is not None:
            folded[found] = primary
    return folded


def _primary(
    found: Signature, ordered: Sequence[Signature], seen: Mapping[Signature, set[int]]
) -> Signature | None:
    rows = seen[found]
    earlier = [
        other
        for other in ordered
        if _check_rank(other) < _check_rank(found)
        and found.dialect in ("", other.dialect)
        and other.shape == found.shape
    ]
    primary = next((other for other in earlier if rows <= seen[other]), None)
    if primary is None and not found.dialect:
        covered: dict[Cause, set[int]] = {}
        first: dict[Cause, Signature] = {}
        for other in earlier:
            covered.setdefault(cause(other), set()).update(seen[other])
            first.setdefault(cause(other), other)
        primary = next((first[c] for c, rows_of in covered.items() if rows <= rows_of), None)
    if primary is None and found.check == Check.INVARIANCE and found.shape not in ("", *UNSPLIT):
        primary = next(
            (
                other
                for other in ordered
                if other.shape in UNSPLIT
                and other.check in _OF_EVENTS - {Check.INVARIANCE}
                and found.dialect in ("", other.dialect)
                and rows <= seen[other]
            ),
            None,
        )
    return primary


def group(items: Sequence[T], runs: Sequence[Collection[Signature]] = ()) -> list[Grouped[T]]:
    """``items`` (one per signature, in the order found) as findings, in the order each
    cause was first found; with ``runs`` (as for ``symptoms``), a symptom joins the finding
    of the signature it is a symptom of."""
    folded = symptoms(runs)
    named = {item.signature for item in items}
    causes: dict[Cause, list[T]] = {}
    for item in items:
        found = item.signature
        # a symptom's primary may be one itself (a leak of a chunking that differs from a
        # wrong whole run); no cycle: each step is to an earlier check, or split to whole
        while folded.get(found) in named:
            found = folded[found]
        primary = folded.get(found)
        if primary is not None and _unsplit_behind(found, primary):
            found = primary  # no finding of its own shows it: this one does
        causes.setdefault(cause(found), []).append(item)
    return [Grouped(c, tuple(found)) for c, found in causes.items()]


def _unsplit_behind(found: Signature, primary: Signature) -> bool:
    """Whether ``found`` is a chunking that differs from an unsplit run failing as
    ``primary``: the whole run's finding, whether or not that failure was found alone."""
    return (
        found.check == Check.INVARIANCE and found.shape not in UNSPLIT and primary.shape in UNSPLIT
    )


def shrunk(before: int, after: int, unit: str) -> str:
    """``from 40 to 12 characters``; a count that did not go down is told as it is (a
    shorter text may need a split point more to fail the same way)."""
    if after < before:
        return f"from {before} to {_counted(after, unit)}"
    if after == before:
        return f"keeping its {_counted(after, unit)}"
    return f"to {_counted(after, unit)} (the case as found had {before})"


def _counted(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
