"""Judging chunkings of one message: the whole run, the chunked run, every oracle.

A ``Judge`` holds what is fixed for one message (the detector factory, its tools,
the expectation, the checks) and runs the whole, unsplit message once: every
chunking it then judges (``verdict``) is compared with that one run. This is the
one place that puts the oracles together; ``tcr.oracle.check_trace`` and
``tcr.warm_cold.warm_cold_verdict`` stay the layer below it.

Making a detector goes through ``tcr.detector.loader.make_detector``: a factory
that fails raises ``FactoryError``, and each caller says what that means to it.

**The claim** (ARCHITECTURE.md §5.7, ``tcr.claims``). A judge holds the detector to what it
claims to parse in this message (``Claim.parses(tools)``): ``no_leak`` looks for
those dialects' opening markers only, holdback's bound is their longest opener - 1,
and the expectation is restated for the claim. A recording's stored expectation was
made by the full reference (``expectation_for``, default ``EVERYTHING``); when the
claim parses something else here, the reference restricted to the claim
(``StreamDetector(tools, dialects=…, empty_tools=…, tool_specs=…)``) is run on the whole
text:

- the stored expectation is kept where the restricted reference agrees with it;
- else, if the full reference agrees with it (it is the reference's), the restricted
  reference's result replaces it, part for part: unclaimed markup must then be shown
  as text, unchanged, and a detector that swallows or rewrites it fails ``expected``;
- else (a user blessed another detector's output) it cannot be restated: ``expected``
  is skipped with ``NOT_RESTATED``, never guessed.

A message with no stored expectation gets none for any claim: the restricted
reference's choices beyond the claim (policy 12's stripped content, say) are not
the user's to answer for unless a recording says so. The skips that come from the
claim are in ``not_judged`` (check -> why), which replay counts once per run.

**Policies** (``tcr.policies``, ARCHITECTURE.md §5.8). The claim carries the choices the
detector is judged with (pinned, or read from probes by ``tcr.probes``): the reference's
reading (``tcr.readings``) applies them, so the restated expectation, what ``no_leak``
forgives, the spans conservation accounts for (``dropped``) and the blocks holdback counts
(``shown_blocks``) all follow them; ``holdback: closer`` raises the bound. When ``expected``
fails and the unsplit run shows what another choice of a read policy explains (and conserves
by it), the finding is ``policy/inconsistent`` instead: one choice on the probe, another here.

**Tool specs** (ARCHITECTURE.md §5.2, "Tool specs"). ``tool_specs``, the request's OpenAI
``tools`` list, goes to every detector whose factory takes it (``make_detector``), and
to the reference that restates an expectation. When the factory takes it, ``expected``
types the expected values of untyped bodies (Qwen3-Coder XML, GLM pairs) by those
schemas (``schemas``); when it does not, the detector was told no types, and either the
text or its JSON reading is right (``tcr.tool_specs.value_agrees``). Whether a call's
values are untyped is its dialect's; an expectation that does not say (a stored map)
learns it from the reference's run of the whole text, once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tcr._verdict import CHECKS, INCONSISTENT, TRACE_CHECKS, Check, Verdict
from tcr.claims import EVERYTHING, Claim
from tcr.detector.events import Detector, Event, Rejected, Text, ToolCall, merge_text
from tcr.detector.formats import (
    BY_ID,
    HOLDBACK_BOUND,
    MARKERS,
    NOTHING,
    Lexicon,
    lexicon,
    prefix_regex,
)
from tcr.detector.loader import Factory, accepts_keyword, make_detector
from tcr.errors import TcrError, did_you_mean
from tcr.expectation import Expectation, ExpectedCall, expectation_of
from tcr.oracle import (
    NO_MARKER,
    Schemas,
    Violation,
    arguments_differ,
    check_trace,
    conservation_with,
)
from tcr.policies import POLICIES, Policies
from tcr.readings import Reading, newline_openers, read, reads_alike
from tcr.signature import AT_END, IN_STRING, SEVERAL_BLOCKS, Signature, requoted, unquoted
from tcr.signature import key as signature_key
from tcr.streamed import Reference, streamed_verdict
from tcr.tool_specs import ToolSpecs, parameter_schemas, read_tool_specs
from tcr.trace import Trace, run_trace
from tcr.warm_cold import warm_cold_verdict

__all__ = [
    "NOT_RESTATED",
    "NO_MARKER",
    "SPANS",
    "TEXT_SPANS_ONLY",
    "Judge",
    "checks_of",
    "expectation_for_claim",
    "shows_alike",
]

# A detector's ``tcr_spans = "text"`` says that only its Text carries input spans, and
# that it may show a block it does not accept as text without the block's markers (a
# parser that returns "normal text", as tcr.adapters wraps one): conservation and
# holdback then judge only messages the reference reads as text alone.
SPANS = "tcr_spans"
TEXT_SPANS_ONLY = (
    "the detector reports spans for text only (tcr_spans) and the reference reads a block here"
)

NOT_RESTATED = (
    "the recording's expectation is not what the reference shows, "
    "so it cannot be restated for the claim"
)


def checks_of(checks: Collection[str] | None) -> tuple[Check, ...]:
    """Check names as ``Check``s in report order (``None``: every check)."""
    if checks is None:
        return CHECKS
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        hint = did_you_mean(unknown[0], CHECKS)
        raise TcrError(f"unknown check {unknown[0]!r}{hint}; known: {', '.join(CHECKS)}")
    return tuple(c for c in CHECKS if c in checks)


class Judge:
    """Every requested oracle on chunkings of one message, for one detector factory."""

    def __init__(
        self,
        factory: Factory,
        text: str,
        *,
        tools: Sequence[str] | None = None,
        expectation: Expectation | Mapping[str, Any] | None = None,
        checks: Collection[str] | None = None,
        bound: int | None = None,
        timeout: float | None = None,
        claim: Claim = EVERYTHING,
        expectation_for: Claim = EVERYTHING,
        tool_specs: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self.factory = factory
        self.text = text
        self.tools = tools
        specs = None if tool_specs is None else read_tool_specs(tool_specs)
        self.tool_specs: ToolSpecs | None = specs
        # What types the expected values of untyped bodies: the specs the detector gets.
        given = specs is not None and accepts_keyword(factory, "tool_specs")
        # typed_arguments other than "schema": the text or its JSON reading both agree
        given = given and claim.choice("typed_arguments") == "schema"
        self.schemas: Schemas | None = parameter_schemas(specs) if given else None
        self.claim = claim  # what the detector is judged against (module docstring)
        self.checks = checks_of(checks)
        self.trace_checks = tuple(c for c in self.checks if c in TRACE_CHECKS)
        if Check.POLICY in self.checks and Check.EXPECTED not in self.checks:
            # policy/inconsistent is told on a trace, from expected's failures (``_told``)
            self.trace_checks += (Check.POLICY,)
        lex = _lexicon(claim, tools)
        self.bound = _bound(lex, claim) if bound is None else bound
        self.leak = lex.opener_re  # the opening markers no_leak looks for
        self.not_judged: dict[str, str] = {}  # check -> why the claim leaves it unjudged
        if lex.opener_re is None:
            self.not_judged[Check.NO_LEAK] = NO_MARKER
        self.stored_expectation = Expectation.of(expectation)
        self.expectation = self.stored_expectation
        # policy/inconsistent is told from expected's failures (``_switched``)
        if Check.EXPECTED in self.checks or Check.POLICY in self.checks:
            restated = expectation_for_claim(
                self.stored_expectation,
                text,
                tools,
                claim,
                made_for=expectation_for,
                tool_specs=specs,
            )
            if isinstance(restated, str):
                self.expectation = None
                self.not_judged[Check.EXPECTED] = restated
            else:
                self.expectation = _with_dialects(restated, text, tools, claim, specs)
        self.timeout = timeout  # seconds per message run (tcr.time_limit); None: no limit
        self._whole: Trace | None = None
        self._whole_detector: Detector | None = None  # the detector that ran ``whole``
        self._text_spans_only = False  # the detector's tcr_spans (read when ``whole`` runs)
        self._reference: list[Event] | None = None
        self._reading: Reading | None = None
        self._switch: Violation | None = None
        self._switch_sought = False  # whether _switched looked already
        self._switch_drops = False  # the other choice drops input (lossy)
        self._reference_run: Reference | None = None  # the whole run, for streamed verdicts

    def detector(self) -> Detector:
        """A fresh detector for this message (``FactoryError`` when the factory fails)."""
        return make_detector(self.factory, self.tools, tool_specs=self.tool_specs)

    @property
    def whole(self) -> Trace:
        """The run of the unsplit message: the reference of every chunking (made once)."""
        if self._whole is None:
            text = self.text
            chunks = [text] if text else []
            detector = self.detector()
            self._text_spans_only = getattr(detector, SPANS, None) == "text"
            self._whole = run_trace(detector, chunks, states=False, timeout=self.timeout)
            self._whole_detector = detector
        return self._whole

    @property
    def reference(self) -> list[Event]:
        """The events of the reference restricted to the claim, reading with its policies,
        on the unsplit message (made once, when a check asks for them)."""
        if self._reference is None:
            self._reference = list(self.reading.events)
        return self._reference

    @property
    def reading(self) -> Reading:
        """The reference's reading of the unsplit message with the claim's policies
        (``tcr.readings``), made once."""
        if self._reading is None:
            claim = self.claim
            self._reading = read(
                self.text, self.tools, dialects=claim.dialects, policies=claim.policies
            )
        return self._reading

    @property
    def dropped(self) -> tuple[tuple[int, int], ...]:
        """The input spans a chosen lossy policy leaves unshown here (none when no chosen
        policy is lossy: no reading made)."""
        if not self.claim.policies.lossy():
            return ()
        return self.reading.dropped

    @property
    def shown_blocks(self) -> tuple[tuple[int, int], ...]:
        """The blocks a chosen policy shows as written here (none when no choice does: no
        reading made): holdback counts them as blocks."""
        policies = self.claim.policies
        verbatim = any(policies.choice(p) == "verbatim" for p in ("malformed", "unterminated"))
        if not verbatim and policies.choice("opener_newline") != "required":
            return ()
        return self.reading.shown_blocks

    def _shown_anyway(self) -> dict[str, int]:
        """The claimed markers the restricted reference shows (as text or a rejected
        block's content), per marker: a detector showing them too leaks nothing."""
        if self.leak is None:
            return {}
        pieces: list[str] = []
        for event in self.reference:
            shown = event.text if isinstance(event, Text) else getattr(event, "content", "")
            pieces.append(shown if isinstance(shown, str) else "")
        # as a client shows it, one after the other: text on both sides of a call may run
        # together (an adapter's calls come when they complete, after the text that follows)
        counts: dict[str, int] = {}
        for match in self.leak.finditer("".join(pieces)):
            counts[match.group()] = counts.get(match.group(), 0) + 1
        return counts

    def trace(self, chunks: Sequence[str], *, states: bool = False) -> Trace:
        """One chunking through a fresh detector."""
        return run_trace(self.detector(), chunks, states=states, timeout=self.timeout)

    def run(self, chunks: Sequence[str]) -> tuple[Detector, Trace]:
        """One chunking through a fresh detector, and that detector: ``warm_cold`` takes
        them as its cold run (on a large message, one run fewer held beside the others)."""
        detector = self.detector()
        return detector, run_trace(detector, chunks, states=False, timeout=self.timeout)

    def verdict(
        self,
        chunks: Sequence[str],
        *,
        checks: Collection[str] | None = None,
        streamed: bool = False,
    ) -> Verdict:
        """Every requested check on one chunking of the message (``checks``: a subset for
        this call).

        ``streamed``: judge the run as the detector makes it, keeping nothing per chunk,
        and trace it again, held, only when it fails (``tcr.streamed``): for a caller
        that judges large chunkings that mostly pass (``tcr replay``). The verdict is
        the same either way, for a detector that answers the same input the same way.
        """
        self.whole  # noqa: B018  (the reference first: a factory that fails, fails here)
        if streamed and not self.dropped and not self.shown_blocks:
            wanted, on_trace, spans_skipped = self._wanted(checks)
            passed = streamed_verdict(
                self.detector(),
                chunks,
                self._streamed_reference(),
                text=self.text,
                checks=on_trace,
                expectation=self.expectation,
                bound=self.bound,
                leak=self.leak,
                shown_anyway=self._shown_anyway,
                timeout=self.timeout,
            )
            if passed is not None:
                return self._told(passed, wanted, spans_skipped, chunks)
        return self.judge_trace(self.trace(chunks), checks=checks)

    def judge_trace(self, trace: Trace, *, checks: Collection[str] | None = None) -> Verdict:
        """Every requested check on a run the caller traced (the TUI traces step by step)."""
        wanted, on_trace, spans_skipped = self._wanted(checks)
        verdict = check_trace(
            trace,
            whole=self.whole,
            checks=on_trace,
            expectation=self.expectation,
            bound=self.bound,
            leak=self.leak,
            shown_anyway=self._shown_anyway,
            schemas=self.schemas,
            dialects=self.claim.dialects,
            dropped=self.dropped,
            blocks=self.shown_blocks,
            spaces=self.claim.choice("whitespace") != "kept",
        )
        return self._told(verdict, wanted, spans_skipped, trace.chunks)

    def unsplit_shapes(self, shown: Collection[Signature]) -> dict[Signature, str]:
        """Of ``shown`` (signature keys the whole run shows), those that a change of the
        message which keeps its meaning makes go away, with the shape that says what they
        need (``tcr.signature``):

        - ``IN_STRING``: the message with its claimed markers inside call values escaped
          (``tcr.signature.unquoted``: the same values, no marker);
        - ``AT_END``: the message with one more character after it, one that continues no
          marker (a space, else ``.`` or a newline): what was held back at the end is
          released mid-message;
        - ``SEVERAL_BLOCKS``: the message with one of its blocks (calls, rejected blocks)
          and none of the others, for each block in turn: each block alone is read
          right, together they are not (a second call landing on the first).

        A change is judged only where the restricted reference shows the changed message as
        it shows this one (its text, with rejected blocks' content, calls and reasoning;
        for ``AT_END`` its text one character longer; for a block alone, that block as it
        read it in the message), so that the expectation, changed alike, holds for both.
        A crash or a timeout is not run again.
        """
        left = {k for k in shown if k.check not in (Check.CRASH, Check.COST)}
        if not left or self.whole.crash is not None:
            return {}
        shapes: dict[Signature, str] = {}
        base = self  # each change is made to the message as the ones before changed it
        families: tuple[tuple[str, Callable[[Judge], Iterator[Judge]]], ...] = (
            (IN_STRING, lambda judge: _one(judge._unquoted())),
            (AT_END, lambda judge: _one(judge._continued())),
            (SEVERAL_BLOCKS, Judge._each_block_alone),
        )
        for shape, variants in families:
            gone, tried = set(left), []
            for other in variants(base):
                tried.append(other)
                still = other.judge_trace(other.whole, checks=self.trace_checks).violations
                gone -= {signature_key(v) for v in still}
                if not gone:
                    break
            shapes.update(dict.fromkeys(gone if tried else (), shape))
            left -= gone if tried else set()
            if not left:
                break
            if len(tried) == 1:  # a failure that needs two things needs them both gone
                base = tried[0]
        return shapes

    def _variant(self, text: str) -> Judge:
        """This judge on another text: the same detector, claim, checks and expectation."""
        other = copy.copy(self)
        other.text = text
        other._whole = other._whole_detector = other._reference = other._reference_run = None
        other._reading = None
        other._switch = None
        other._switch_sought = False
        return other

    def _alike(self, other: Judge) -> Judge | None:
        """``other`` (this message changed) judged against the reference's reading of it,
        where this one's expectation is the reference's reading of this one (in the parts it
        fixes); ``None`` when it is not: it cannot be changed alike."""
        expectation = self.expectation
        if expectation is None:
            return other
        before, after = _shows(self.reference), _shows(other.reference)
        fixed = [p for p in ("text", "calls", "reasoning") if getattr(expectation, p) is not None]
        if any(getattr(expectation, p) != getattr(before, p) for p in fixed):
            return None
        changed = {p: getattr(after, p) for p in fixed}
        other.expectation = replace(expectation, source=None, **changed)
        return other

    def _unquoted(self) -> Judge | None:
        escaped = unquoted(self.text, self.claim)
        if escaped == self.text:
            return None
        other = self._variant(escaped)
        before, after = _shows(self.reference), _shows(other.reference)
        if after == before:
            return other
        # A rejected block's content is shown as written, escapes and all: the change is
        # judged when that is all it changed, its expectation (the reference's) changed alike.
        if replace(after, text=requoted(after.text or "", self.claim)) != replace(
            before, text=requoted(before.text or "", self.claim)
        ):
            return None
        return self._alike(other)

    def _each_block_alone(self) -> Iterator[Judge]:
        """The message with one block kept, the others cut out, for each block in turn
        (none when it has fewer than two, or when they would run over ``_MOST_JUDGED``);
        it stops at one the reference reads otherwise alone than in the message."""
        events = self.reference
        blocks = [i for i, e in enumerate(events) if isinstance(e, (ToolCall, Rejected))]
        if len(blocks) < 2 or len(blocks) * len(self.text) > _MOST_JUDGED:
            return
        if any(event.raw is None for event in events):
            return
        for kept in blocks:
            cut = set(blocks) - {kept}
            text = "".join(e.raw or "" for i, e in enumerate(events) if i not in cut)
            other = self._variant(text)
            alone = [e for e in other.reference if isinstance(e, (ToolCall, Rejected))]
            if alone != [events[kept]]:
                return
            judged = self._alike(other)
            if judged is None:
                return
            yield judged

    def _continued(self) -> Judge | None:
        more = next((c for c in _MORE if not _continues(self.text + c)), None)
        if more is None:
            return None
        other = self._variant(self.text + more)
        shows = _shows(self.reference)
        if _shows(other.reference) != replace(shows, text=(shows.text or "") + more):
            return None  # the character would change more than the end of what is shown
        expectation = self.expectation
        if expectation is not None and expectation.text is not None:
            other.expectation = replace(expectation, text=expectation.text + more, source=None)
        return other

    def _wanted(
        self, checks: Collection[str] | None
    ) -> tuple[tuple[Check, ...], list[Check], dict[str, str]]:
        """The checks asked for, those judged on the trace, and the ones ``tcr_spans`` skips."""
        self.whole  # noqa: B018  (its run reads the detector's tcr_spans)
        wanted = self.checks if checks is None else checks_of(checks)
        on_trace = [c for c in wanted if c in TRACE_CHECKS]
        if Check.POLICY in wanted and Check.EXPECTED not in on_trace:
            on_trace.append(Check.EXPECTED)  # what policy/inconsistent is told from
        spans_skipped: dict[str, str] = {}
        if self._text_spans_only and any(not isinstance(e, Text) for e in self.reference):
            spans = (Check.CONSERVATION, Check.HOLDBACK)
            spans_skipped = {c: TEXT_SPANS_ONLY for c in on_trace if c in spans}
            on_trace = [c for c in on_trace if c not in spans]
        return wanted, on_trace, spans_skipped

    def _told(
        self,
        verdict: Verdict,
        wanted: Collection[Check],
        spans_skipped: dict[str, str],
        chunks: Sequence[str],
    ) -> Verdict:
        """A trace's verdict as the judge tells it: its skips, the claim, warm equals cold."""
        skipped = {**spans_skipped, **verdict.skipped}
        if Check.EXPECTED in self.not_judged and Check.EXPECTED in skipped:
            skipped = {**skipped, Check.EXPECTED: self.not_judged[Check.EXPECTED]}
        violations = self._claimed(verdict.violations)
        told_here = Check.POLICY in wanted or Check.EXPECTED in wanted
        if told_here and any(v.check is Check.EXPECTED for v in violations):
            switched = self._switched()
            if switched is not None:  # one policy's choice here, another on its probe
                # what the other choice explains: the shown result, and what it drops
                told = {Check.EXPECTED, Check.CONSERVATION}  # it conserves by that choice
                if self._switch_drops:
                    told.add(Check.HOLDBACK)
                kept = [v for v in violations if v.check not in told]
                violations = (*kept, switched)
        ran = verdict.ran
        if Check.EXPECTED not in wanted:  # run for policy/inconsistent alone
            violations = tuple(v for v in violations if v.check is not Check.EXPECTED)
            skipped.pop(Check.EXPECTED, None)
            ran = tuple(c for c in ran if c is not Check.EXPECTED)
        verdict = Verdict(violations, ran, skipped)
        if Check.WARM_COLD in wanted:
            verdict = verdict + self.warm_cold(chunks)
        return verdict

    def _switched(self) -> Violation | None:
        """``policy/inconsistent`` when the unsplit run shows what the reference reads with
        another, lossy choice of one policy read from the probes (``tcr.probes``): the
        detector made one choice on the probe and drops input here. (A lossless other
        choice is left to ``expected``, whose finding names the bug: a parser bug often
        reads like another choice in one message.) ``None`` otherwise, or when the
        policies were not read (pinned or default: ``expected`` tells)."""
        if self._switch_sought:
            return self._switch
        self._switch_sought = True
        policies = self.claim.policies
        whole = self.whole
        if not policies.read or whole.crash is not None or self.expectation is None:
            return None
        if not whole.has_raw:
            return None  # no spans to show the loss is exactly the choice's: expected tells
        shown = expectation_of(merge_text(whole.events))
        if _agrees(self.expectation, shown, self.schemas):
            return None  # the unsplit run is right: a chunking's failure is no choice
        current = expectation_of(self.reading.events)
        for policy in POLICIES:
            if policy.id not in _SWITCHABLE or policy.id in policies.pinned:
                continue
            made = policies.choice(policy.id)
            for choice in policy.choices:
                if choice.id == made or not choice.lossy:
                    continue  # a lossless other choice is told by expected: it names the bug
                other = policies.reading({policy.id: choice.id})
                if reads_alike(other, policies, self.tools):
                    continue
                events = read(self.text, self.tools, dialects=self.claim.dialects, policies=other)
                alternative = expectation_of(events.events)
                if alternative == current:
                    continue  # the choice changes nothing here
                if not _agrees(alternative, shown, self.schemas):
                    continue
                if conservation_with(whole, events.dropped):
                    continue  # it loses more than that choice drops: not the choice
                if not self._switched_too(other):
                    continue  # what follows the message changes it: a bug at its end
                self._switch = _inconsistent(policy.id, made, choice.id, self.text, events)
                self._switch_drops = bool(events.dropped)
                return self._switch
        return None

    def _switched_too(self, other: Policies) -> bool:
        """Whether the message with one more character after it (``_continued``) is still
        read by the detector as ``other`` reads it: a choice does not depend on what comes
        after a message, a bug that loses or holds its end does."""
        more = self._continued()
        if more is None:
            return True
        run = more.whole
        if run.crash is not None:
            return False
        events = read(more.text, self.tools, dialects=self.claim.dialects, policies=other)
        return _agrees(expectation_of(events.events), expectation_of(run.events), self.schemas)

    def _streamed_reference(self) -> Reference:
        """The whole run as every streamed run compares with it (made once)."""
        if self._reference_run is None:
            self._reference_run = Reference.of(
                self.whole,
                expectation=self.expectation,
                leak=self.leak,
                shown_anyway=self._shown_anyway,
                schemas=self.schemas,
            )
        return self._reference_run

    def _claimed(self, violations: Sequence[Violation]) -> tuple[Violation, ...]:
        """Violations whose dialect the claim does not parse here are about plain text.

        Unclaimed markup is text to this detector: text lost next to ``<|python_tag|>``
        is one finding with text lost anywhere else, not one per dialect nearby.
        """
        parsed = self.claim.parses(self.tools)
        if parsed is None:
            return tuple(violations)
        return tuple(
            replace(v, dialect="") if v.dialect and v.dialect not in parsed else v
            for v in violations
        )

    def warm_cold(
        self,
        chunks: Sequence[str],
        *,
        fresh_run: tuple[Detector, Trace] | None = None,
        streamed: bool = False,
    ) -> Verdict:
        """Warm equals cold on one chunking (it judges the factory, not a trace).

        ``fresh_run``: a fresh detector's run of ``chunks`` (``run``), the cold one. On
        the unsplit message, once ``whole`` has run, its run is the cold one.
        ``streamed``: hold no run unless a part disagrees (``warm_cold_verdict``)."""
        whole = self._whole
        if (
            fresh_run is None
            and whole is not None
            and len(chunks) == len(whole.chunks)
            and tuple(chunks) == whole.chunks
        ):
            assert self._whole_detector is not None
            fresh_run = self._whole_detector, whole
        return warm_cold_verdict(
            self.factory,
            chunks,
            tools=self.tools,
            timeout=self.timeout,
            tool_specs=self.tool_specs,
            fresh_run=fresh_run,
            streamed=streamed,
        )


# The policies a message may show another choice of than its probe did (policy/inconsistent):
# what a block becomes. Text around calls, held input and values' types are left to the
# checks themselves: a bug that loses text looks like a choice there too often.
_SWITCHABLE = ("malformed", "unterminated", "undeclared", "empty_tools", "arguments")


def _inconsistent(policy_id: str, made: str, here: str, text: str, reading: Reading) -> Violation:
    """The ``policy/inconsistent`` finding: ``here`` in this message, ``made`` on the probe."""
    dialect = next((e.format for e in reading.events if isinstance(e, ToolCall | Rejected)), "")
    message = (
        f"policy/inconsistent: {policy_id} {here} in this message, but {made} on its probe "
        f"(tcr replay --check policy shows the probe)"
    )
    return Violation(Check.POLICY, message, 0, 0, text[:80], kind=INCONSISTENT, dialect=dialect)


def _one(judge: Judge | None) -> Iterator[Judge]:
    if judge is not None:
        yield judge


def _shows(events: Sequence[Event]) -> Expectation:
    """What ``events`` show, as an expectation holds it (text with rejected blocks' content,
    calls, reasoning): what ``expected`` compares with. The other checks compare the
    detector with itself or with its input, never with the reference."""
    return expectation_of(events)


# The characters the blocks-alone variants of one message may run, all told (a block per
# variant: a recording with a hundred calls is not run a hundred times).
_MOST_JUDGED = 1_000_000

# What AT_END adds after a message: the first that does not continue a marker begun at its
# end (a space would continue "<|channel|>analysis" towards Harmony's opener).
_MORE = (" ", ".", "\n")
_PARTIAL = prefix_regex(m for m in MARKERS if len(m) > 1)


def _continues(text: str) -> bool:
    """Whether ``text`` ends, last character included, inside the beginning of a marker."""
    found = _PARTIAL.search(text[-HOLDBACK_BOUND - 1 :]) if _PARTIAL else None
    return found is not None and len(found.group()) > 1


def _bound(lex: Lexicon, claim: Claim) -> int:
    """The holdback bound: the longest opener - 1, or under ``holdback: closer`` the
    longest opener or closer - 1 (``tcr.policies``); under ``opener_newline: required``
    an opener's newline is part of it."""
    bounds = [lex.holdback_bound]
    if lex.ids and claim.choice("holdback") == "closer":
        bounds += [len(c) - 1 for i in lex.ids for c in BY_ID[i].closes]
    if lex.ids and claim.choice("opener_newline") == "required":
        bounds += [len(o) for o in newline_openers(lex.ids)]
    return max(bounds)


def _lexicon(claim: Claim, tools: Sequence[str] | None) -> Lexicon:
    parsed = claim.parses(tools)
    return NOTHING if parsed is not None and not parsed else lexicon(parsed)


def expectation_for_claim(
    stored: Expectation | None,
    text: str,
    tools: Sequence[str] | None,
    claim: Claim,
    *,
    made_for: Claim = EVERYTHING,
    tool_specs: ToolSpecs | None = None,
) -> Expectation | str | None:
    """``stored`` (made by the reference claiming ``made_for``) restated for ``claim``.

    The expectation to judge against, or why there is none (``NOT_RESTATED``); the
    rules are in the module docstring. Costs two runs of the reference at most, and
    none when both claims parse the same in a message offering ``tools``. The
    reference gets ``tool_specs``, and its values are compared typed by them.
    """
    if stored is None or (
        claim.parses(tools) == made_for.parses(tools)
        and reads_alike(claim.policies, made_for.policies, tools)
    ):
        return stored
    schemas = parameter_schemas(tool_specs) if tool_specs is not None else None
    restricted = _reference(text, tools, claim, tool_specs)
    if _agrees(stored, restricted, schemas):
        return stored
    if not _agrees(stored, _reference(text, tools, made_for, tool_specs), schemas):
        return NOT_RESTATED
    return Expectation(
        restricted.text if stored.text is not None else None,
        restricted.calls if stored.calls is not None else None,
        restricted.reasoning if stored.reasoning is not None else None,
    )


def _reference(
    text: str, tools: Sequence[str] | None, claim: Claim, tool_specs: ToolSpecs | None = None
) -> Expectation:
    reading = read(
        text, tools, dialects=claim.dialects, policies=claim.policies, tool_specs=tool_specs
    )
    return expectation_of(reading.events)


def shows_alike(stored: Expectation, shown: Expectation) -> bool:
    """Whether ``shown`` (a run's) matches every part ``stored`` fixes, values compared
    as ``expected`` compares them without schemas."""
    return _agrees(stored, shown)


def _agrees(stored: Expectation, shown: Expectation, schemas: Schemas | None = None) -> bool:
    """Whether ``shown`` (the reference's run) matches every part ``stored`` fixes."""
    for part in ("text", "reasoning"):
        if getattr(stored, part) is not None and getattr(stored, part) != getattr(shown, part):
            return False
    if stored.calls is None:
        return True
    assert shown.calls is not None
    if len(stored.calls) != len(shown.calls):
        return False
    return all(
        want.name == got.name
        and arguments_differ(index, _as_event(got), _dialected(want, got), schemas) is None
        for index, (want, got) in enumerate(zip(stored.calls, shown.calls, strict=True))
    )


def _as_event(call: ExpectedCall) -> ToolCall:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return ToolCall(call.name, arguments, "", call.dialect or "")


def _dialected(want: ExpectedCall, shown: ExpectedCall) -> ExpectedCall:
    return want if want.dialect else replace(want, dialect=shown.dialect)


def _with_dialects(
    expectation: Expectation | None,
    text: str,
    tools: Sequence[str] | None,
    claim: Claim,
    tool_specs: ToolSpecs | None,
) -> Expectation | None:
    """``expectation`` with the dialect of each call it does not name, from the reference's
    run of ``text`` (a call it places elsewhere, or to another tool, stays unnamed)."""
    if expectation is None or not expectation.calls:
        return expectation
    if all(call.dialect for call in expectation.calls):
        return expectation
    shown = _reference(text, tools, claim, tool_specs).calls or ()
    calls = tuple(
        _dialected(want, shown[index])
        if index < len(shown) and shown[index].name == want.name
        else want
        for index, want in enumerate(expectation.calls)
    )
    return replace(expectation, calls=calls)
