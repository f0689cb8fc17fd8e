"""The cost check: time per character that grows with the message (ARCHITECTURE.md §7.2).

Policy 4 says finding a closing marker costs O(1) amortised per character; the
seeds' bug found it by re-joining the whole block buffer on every chunk, and a
parser that re-parses its whole buffer per chunk got through 31k of 1.06M
characters in 8 s. Such a detector is correct on every short recording and
unusable on a long one, so no event oracle sees it: only its time does.

The check measures a ratio within one run, never an absolute time (the machine
is shared and noisy). A deterministic *probe* message is built from the claim
with the dialect records' pure renderers: plain text plus, per claimed dialect,
a call whose string argument is long (a reasoning dialect: long reasoning), so a
whole-buffer rescan and a per-block re-join both show. It is fed in chunks of
``CHUNK`` characters at a size ``n`` and at ``4n``, and

    growth = (t(4n) / 4n) / (t(n) / n)

is about 1 for a linear detector (less when a fixed cost per message
dominates) and about 4 for a quadratic one. ``n`` doubles from ``START`` until a
run takes ``MIN_SECONDS`` of the clock; each size is timed as the minimum of
``REPEATS`` runs (noise only ever adds time). A growth in the grey zone between
``LINEAR`` and ``THRESHOLD`` is measured again at 4n and 16n (a cheap quadratic
term needs a longer message to dominate); one at ``THRESHOLD`` or more is
measured again, its runs pooled with the first measurement's, so one slow moment
never becomes a finding. Runs at n and 4n alternate and the fastest of each size
is kept, never the lower of two ratios: noise only adds time to a run, but a
slow stretch during the runs at n *lowers* a ratio, and on a loaded machine the
lower-ratio rule hid a quadratic detector (3.1x measured as 2.0). A run at 4n
stops once it has taken ``CAP`` times what a linear detector would take; its
growth is then reported as "at least" what was measured up to there, which
bounds the cost of probing a truly quadratic detector.

When the probe of every claimed dialect grows, the parts are probed alone at the
same size (a part not clearly linear is measured again, pooled, before it
counts; plain text that grows is judged as the probe of every part was, runs as
long and confirmed, before it takes the dialect away): plain text (a whole-buffer
rescan: no dialect), else each claimed dialect, so a finding's ``dialect`` names
the one whose blocks cost more as they grow. When no part grows alone but the text
is linear and one dialect is claimed, the growth comes with that dialect's blocks,
and the finding names it. Its signature is ``cost/superlinear/DIALECT@fixed:8``.

A run with a budget gives the check a share of it (``deadline``, on the ``wall``
clock: the budget is wall time). When it is spent the measurement stops where it is,
and the check is *cut short* (``Cost.cut``: the longest probe message it had begun):
its rules are kept, so only what was measured and confirmed before the cut counts. A
growth not yet confirmed is no finding (the check is then skipped, saying so); one
confirmed before the parts were all told apart is a finding named as far as they were
(no dialect when plain text was not yet judged linear).

Pure: the clock is injected (``time.process_time`` for a detector in this
process, ``time.perf_counter`` for one in another process, whose work this
process's CPU time does not see), and so is the per-message time limit
(``limit``, a context manager per run). The cyclic garbage collector is paused
while a run is timed, as ``timeit`` does, so that a collection of garbage left
by the caller is not charged to a run.
"""

from __future__ import annotations

import gc
import math
import shlex
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from tcr._verdict import Check, Verdict, Violation
from tcr.claims import EVERYTHING, Claim
from tcr.detector.loader import Factory, make_detector
from tcr.dialects import BY_ID, DIALECTS, Dialect, Rendered
from tcr.dialects._record import JsonStyle
from tcr.errors import FactoryError
from tcr.time_limit import interrupted_by_user

__all__ = [
    "CHUNK",
    "KIND",
    "SHAPE",
    "Cost",
    "Growth",
    "Settings",
    "measure_cost",
    "probe",
    "reproducer",
]

CHUNK = 8  # characters per feed: small, as tokens are, so per-chunk work adds up
KIND = "superlinear"  # a finding's kind (tcr.signature)
SHAPE = f"fixed:{CHUNK}"  # a finding's shape: the chunking the probe is fed in (tcr.rechunk)
TEXT = "text"  # the probe part that is plain text
EVERY = "every claimed dialect"  # the probe of all parts together
_CLOCK_EVERY = 16  # chunks between readings of the clock inside a run (for the cap)

Clock = Callable[[], float]
Limit = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True, slots=True)
class Settings:
    """How the check measures; the defaults are what the commands use."""

    chunk: int = CHUNK
    start: int = 2048  # characters of the first probe
    largest: int = 1 << 18  # n never goes past it (the 4n run: 1 MB of text)
    min_seconds: float = 0.02  # a run at n takes at least this long to be timed
    repeats: int = 3  # runs per size; the minimum is taken
    linear: float = 1.4  # growth below it: linear, nothing more to look at
    threshold: float = 2.0  # growth at or above it: a finding, once confirmed
    cap: float = 3.0  # a 4n run stops at this many times the linear prediction


DEFAULT = Settings()


@dataclass(frozen=True, slots=True)
class Growth:
    """One measurement: time per character at ``small`` and ``large`` characters."""

    probe: str  # a dialect id, TEXT or EVERY
    small: int  # characters of the probe at n
    large: int  # characters of the probe at 4n
    seconds: tuple[float, float]  # the fastest run at each size (the large one maybe cut)
    ratio: float  # (t(large) / large) / (t(small) / small)
    at_least: bool = False  # the large run was cut at the cap: the growth is at least ratio

    def grew(self, settings: Settings = DEFAULT) -> bool:
        return self.ratio >= settings.threshold

    def to_dict(self) -> dict[str, Any]:
        """For a JSON report (``tcr replay --json``, ``tcr fuzz --json``)."""
        return {
            "probe": self.probe,
            "small": self.small,
            "large": self.large,
            "seconds": [round(t, 6) for t in self.seconds],
            "growth": round(self.ratio, 3),
            "at_least": self.at_least,
        }

    def describe(self, chunk: int = CHUNK) -> str:
        """``time per character grew 3.8x from 16,384 to 65,536 characters (hermes probe,
        chunks of 8)``."""
        bound = "at least " if self.at_least else ""
        return (
            f"time per character grew {bound}{self.ratio:.1f}x from {self.small:,} to "
            f"{self.large:,} characters ({self.probe} probe, chunks of {chunk})"
        )


@dataclass(frozen=True, slots=True)
class Cost:
    """What the cost check found for one detector: its violations and the measurements."""

    violations: tuple[Violation, ...] = ()
    measured: tuple[Growth, ...] = ()  # every measurement, in the order taken
    skipped: str = ""  # why the check could not judge ("": it did)
    # characters of the longest probe message begun when its share of the time ran out
    # (None: not cut short)
    cut: int | None = None

    @property
    def cut_short(self) -> str:
        """``cost probe cut short at 16,384 characters``, or "" when it was not."""
        return "" if self.cut is None else f"cost probe cut short at {self.cut:,} characters"

    @property
    def growth(self) -> Growth | None:
        """The measurement of the probe of every claimed part (the first taken)."""
        return next((g for g in self.measured if g.probe == EVERY), None)

    @property
    def verdict(self) -> Verdict:
        if self.skipped:
            return Verdict((), (), {Check.COST: self.skipped})
        return Verdict(self.violations, (Check.COST,))

    def summary(self) -> str:
        """One line for a report row: the growth of the probe of every claimed part."""
        if self.skipped:
            return self.skipped
        growth = self.growth
        if growth is None:
            return self.cut_short
        bound = "at least " if growth.at_least else ""
        measured = (
            f"growth {bound}{growth.ratio:.1f}x from {growth.small:,} to {growth.large:,} "
            "characters"
        )
        return f"{measured}; {self.cut_short}" if self.cut_short else measured


# --- the probe -------------------------------------------------------------------------

_WORDS = "The quick brown fox jumps over the lazy dog, then naps in the warm sun. "


def _filler(size: int) -> str:
    """``size`` characters of prose holding no marker of any dialect."""
    return (_WORDS * (size // len(_WORDS) + 1))[: max(size, 0)]


class _Always:
    """``tcr.dialects.Choices`` answering every choice with its first option."""

    def below(self, n: int) -> int:
        return 0

    def choice(self, options: Sequence[Any]) -> Any:
        return options[0]

    def flag(self) -> bool:
        return False

    def count(self, most: int) -> int:
        return 1


@dataclass(frozen=True, slots=True)
class _LongCall:
    """``tcr.dialects.Draws``: one well-formed call whose string argument is ``size`` long."""

    size: int
    tail: _Always = field(default_factory=_Always)

    def variant(self, options: Sequence[str]) -> str:
        return options[0]

    def flavor(self, options: Sequence[str]) -> str:
        return "call" if "call" in options else options[0]

    def count(self, most: int) -> int:
        return 1

    def name(self, k: int) -> str:
        return "write_file"

    def style(self) -> JsonStyle:
        return False, 1

    def option(self, k: int, options: Sequence[Any]) -> Any:
        return options[0]

    def arguments(self, *, markup: bool = True) -> dict[str, Any]:
        return {"content": _filler(self.size)}

    def string(self, *, markup: bool = True) -> str:
        return _filler(self.size)

    def json_style(self) -> JsonStyle:
        return False, 1

    def prose(self) -> str:
        return _filler(self.size)


def _block(dialect: Dialect, size: int) -> str:
    """A block of the dialect about ``size`` characters long: its argument takes the rest."""

    def written(length: int) -> str:
        rendered: Rendered = dialect.render(_LongCall(length), None)
        return rendered.opener + rendered.body + rendered.closer

    overhead = len(written(0))
    return written(max(size - overhead, 0))


def probe(size: int, part: str | None = None, claim: Claim = EVERYTHING) -> str:
    """The probe message of about ``size`` characters, deterministic.

    ``part``: ``TEXT`` (plain text only), a dialect id (that dialect's block
    alone), or ``None``: plain text and a block per claimed dialect, equal shares,
    a dialect that opens only at message start (bare JSON) first.
    """
    if part == TEXT:
        return _filler(size)
    if part is not None:
        return _block(BY_ID[part], size)
    dialects = _claimed(claim)
    share = size // (len(dialects) + 1)
    first = [_block(d, share) for d in dialects if not d.anywhere]
    rest = [_block(d, share - 2) for d in dialects if d.anywhere]
    return "".join(first) + _filler(share) + "".join(f"\n{b}\n" for b in rest)


def _claimed(claim: Claim) -> list[Dialect]:
    parsed = claim.parses(None)
    return [d for d in DIALECTS if parsed is None or d.id in parsed]


# --- measuring -------------------------------------------------------------------------


class _Raised(Exception):
    """The detector raised on the probe: the check cannot judge it (the others will)."""


class _CutShort(Exception):
    """The check's share of the time is spent: the measurement stops where it is."""


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Run:
    seconds: float
    fed: int  # characters fed before the run ended or was cut
    cut: bool


@dataclass(slots=True)
class _Pool:
    """The fastest runs so far of one part at one size: at n, and at 4n per character."""

    small: float = math.inf
    large: _Run | None = None

    def timed_small(self, seconds: float) -> None:
        self.small = min(self.small, seconds)

    def timed_large(self, run: _Run) -> None:
        if self.large is None or run.seconds / run.fed < self.large.seconds / self.large.fed:
            self.large = run

    def per_small(self, length: int) -> float:
        return max(self.small, 1e-9) / length

    def ratio(self, length: int) -> float:
        assert self.large is not None
        return (self.large.seconds / max(self.large.fed, 1)) / self.per_small(length)


class _Meter:
    """Runs probes through fresh detectors on the injected clock."""

    def __init__(
        self,
        factory: Factory,
        clock: Clock,
        limit: Limit,
        settings: Settings,
        claim: Claim,
        deadline: tuple[Clock, float] | None = None,
    ) -> None:
        self.factory = factory
        self.clock = clock
        self.limit = limit
        self.settings = settings
        self.claim = claim
        self.deadline = deadline  # (wall clock, when the share is spent on it)
        self.measured: list[Growth] = []
        self.pools: dict[tuple[str | None, int], _Pool] = {}
        self.longest = 0  # characters of the longest probe message begun
        # The violations what has been measured and confirmed so far shows: the verdict
        # when the share is spent before the check is done.
        self.shown: tuple[Violation, ...] = ()

    def spent(self) -> bool:
        return self.deadline is not None and self.deadline[0]() >= self.deadline[1]

    def text(self, part: str | None, size: int) -> str:
        return probe(size, part, self.claim)

    def run(self, text: str, cap: float | None = None) -> _Run:
        """One message through a fresh detector; ``cap``: stop after that many seconds."""
        step = self.settings.chunk
        if self.spent():
            raise _CutShort
        self.longest = max(self.longest, len(text))
        detector = make_detector(self.factory, None)  # FactoryError: the caller's to report
        clock = self.clock
        # the share of the time, read with the clock (every run alike); never: no deadline
        spent = self.spent if self.deadline is not None else _never
        collecting = gc.isenabled()
        gc.collect()
        gc.disable()
        try:
            with self.limit():
                start = clock()
                # Sliced as it is fed: a list of every chunk made first would be fresh memory,
                # touched for the first time inside the timed run, more of it at 4n than at n.
                # Every run, capped or not, reads the clock as often per character, so that
                # reading it (a system call for CPU time) costs every run alike.
                limit = math.inf if cap is None else cap
                every = step * _CLOCK_EVERY
                for fed in range(step, len(text) + step, step):
                    detector.feed(text[fed - step : fed])
                    if fed % every == 0:
                        if clock() - start > limit and fed < len(text):
                            return _Run(clock() - start, fed, True)
                        if spent() and fed < len(text):
                            raise _CutShort
                detector.finish()
                return _Run(clock() - start, len(text), False)
        except (FactoryError, _CutShort):
            raise
        except GeneratorExit:
            raise
        except BaseException as error:
            if interrupted_by_user(error):  # only Ctrl-C stops tcr
                raise
            raise _Raised(f"{type(error).__name__}: {error}".rstrip(": ")) from None
        finally:
            if collecting:
                gc.enable()

    def growth(self, part: str | None, size: int, *, repeats: int | None = None) -> Growth:
        """Time per character at ``size`` and at ``4 * size``: the fastest runs of each.

        The runs at the two sizes alternate (two at n first), so a slow stretch of the
        machine lands on both sizes rather than on one; and every run of ``part`` at
        ``size`` is pooled with those of earlier calls, so measuring again refines the
        minima instead of replacing them. Noise only ever adds time to a run, so each
        size's fastest run is its best estimate; a ratio has no such bound (a slow run at
        n lowers it), which is why the minima are pooled, never the ratios. A run at 4n
        that already shows less than ``linear`` settles it: more runs can only lower it.
        """
        s = self.settings
        tries = s.repeats if repeats is None else repeats
        small, large = self.text(part, size), self.text(part, 4 * size)
        pool = self.pools.setdefault((part, size), _Pool())
        pool.timed_small(self.run(small).seconds)
        for _ in range(tries):
            pool.timed_small(self.run(small).seconds)
            pool.timed_large(self.run(large, s.cap * pool.per_small(len(small)) * len(large)))
            if pool.ratio(len(small)) < s.linear:
                break  # clearly linear: the minimum of more runs can only be lower
        assert pool.large is not None
        found = Growth(
            TEXT if part == TEXT else part or EVERY,
            len(small),
            len(large),
            (pool.small, pool.large.seconds),
            pool.ratio(len(small)),
            pool.large.cut,
        )
        self.measured.append(found)
        return found

    def calibrated(self, part: str | None, start: int, seconds: float) -> int:
        """The smallest size (doubling from ``start``) whose run takes ``seconds``."""
        largest = self.settings.largest
        size = start
        while size < largest and self.run(self.text(part, size)).seconds < seconds:
            size *= 2
        return min(size, largest)

    def judged(self, part: str | None, size: int) -> Growth:
        """The growth of ``part`` from ``size``: looked at further in the grey zone, and a
        high one measured again (its runs pooled with the first's) before it counts."""
        s = self.settings
        found = self.growth(part, size)
        while s.linear <= found.ratio < s.threshold and 4 * size <= s.largest:
            size *= 4
            found = self.growth(part, size)
        if found.grew(s):
            found = self.growth(part, size)
        return found


def measure_cost(
    factory: Factory,
    *,
    claim: Claim = EVERYTHING,
    clock: Clock,
    limit: Limit = nullcontext,
    settings: Settings = DEFAULT,
    deadline: float | None = None,
    wall: Clock | None = None,
) -> Cost:
    """The cost check on detectors made by ``factory`` (called with ``tools=None``).

    ``claim``: what the detector parses (the probe writes calls in those dialects
    only). ``clock``: seconds, monotonic (module docstring). ``limit``: a context
    manager per run, the per-message time limit (``tcr.time_limit``); what it
    raises, like any exception of the detector, skips the check with the reason
    (the event checks report a detector that raises). A factory that fails raises
    ``FactoryError``. ``deadline``: when, on ``wall`` (default ``clock``), the check's
    share of the time is spent: it stops there, cut short (module docstring; ``None``:
    it runs to the end).
    """
    until = None if deadline is None else (clock if wall is None else wall, deadline)
    meter = _Meter(factory, clock, limit, settings, claim, until)
    try:
        violations = _violations(meter)
    except _Raised as error:
        return Cost((), tuple(meter.measured), f"the detector raised on the probe: {error}")
    except _CutShort:
        cut = Cost(meter.shown, tuple(meter.measured), cut=meter.longest)
        return cut if meter.shown else replace(cut, skipped=_unconfirmed(cut, settings))
    return Cost(violations, tuple(meter.measured))


def _unconfirmed(cut: Cost, settings: Settings) -> str:
    """Why a check cut short judged nothing: where it was cut, and the growth it was
    looking at further, if its last measurement was not clearly linear (a block-quadratic
    detector's growth, diluted in the probe of many dialects, needs long probes)."""
    last = cut.measured[-1] if cut.measured else None
    if last is None or last.ratio < settings.linear:
        return cut.cut_short
    return (
        f"{cut.cut_short}, a growth of {last.ratio:.1f}x ({last.probe} probe, from "
        f"{last.small:,} to {last.large:,} characters) not confirmed: tcr replay --check "
        "cost measures it to the end"
    )


def _violations(meter: _Meter) -> tuple[Violation, ...]:
    s = meter.settings
    every = meter.judged(None, meter.calibrated(None, s.start, s.min_seconds))
    if not every.grew(s):
        return ()
    # Confirmed: a finding even if the share is spent before the parts are told apart, of
    # no dialect until plain text is judged linear (it would take the dialect away).
    meter.shown = (_violation(every, "", s),)
    # Which part grows, each alone, from the length it has in the probe of every part (its
    # quadratic share is the same there) and a quarter of the time: the probe of every
    # part was confirmed, this only tells the parts apart. Plain text (the whole buffer
    # re-scanned) names no dialect, and then every dialect would grow with it.
    parts = [TEXT, *(d.id for d in _claimed(meter.claim))]
    start = max(s.start, every.small // len(parts))
    grew: list[Growth] = []
    for part in parts:
        size = meter.calibrated(part, start, s.min_seconds / 4)
        found = meter.growth(part, size, repeats=min(s.repeats, 2))
        if found.ratio >= s.linear:  # not clearly linear: measured again, pooled, to tell
            found = meter.growth(part, size, repeats=min(s.repeats, 2))
        if found.grew(s) and part == TEXT:
            # Text that grows takes the dialect away from the finding: measured again with
            # every repeat, pooled, then judged as the probe of every part was (runs as
            # long, confirmed), so that a slow stretch during these short runs does not.
            found = meter.growth(part, size)
            if found.grew(s):
                found = meter.judged(part, meter.calibrated(part, size, s.min_seconds))
        if found.grew(s) and part == TEXT:
            return (_violation(found, "", s),)
        if found.grew(s):
            grew.append(found)
        # what the parts told so far show, should the share be spent before the rest are
        if grew:
            meter.shown = tuple(_violation(g, g.probe, s) for g in grew)
        elif len(parts) == 2:  # text judged linear, one dialect claimed: the growth is its
            meter.shown = (_violation(every, parts[1], s),)
    if not grew:
        # Only the parts together grow. With one dialect claimed the text alone did not, so
        # the growth comes with that dialect's blocks (cut short by a slow moment while they
        # were probed alone, or costly only after text); with more, no dialect is named.
        claimed = parts[1:]
        return (_violation(every, claimed[0] if len(claimed) == 1 else "", s),)
    return tuple(_violation(g, g.probe, meter.settings) for g in grew)


def _violation(growth: Growth, dialect: str, settings: Settings) -> Violation:
    return Violation(Check.COST, growth.describe(settings.chunk), None, None, "", KIND, dialect)


def reproducer(detector: Sequence[str], claim: Claim, dialect: str = "") -> str:
    """The command that measures again: ``tcr replay --check cost`` with the options that
    choose ``detector`` (without its claim) and the claim, narrowed to ``dialect`` for a
    dialect's finding (its probe alone, a shorter run showing the same signature)."""
    if dialect:  # the rest of the claim stays: special tokens whole, pinned choices
        claim = replace(claim, dialects=frozenset({dialect}))
    return shlex.join(["tcr", "replay", "--check", str(Check.COST), *detector, *claim.options()])
