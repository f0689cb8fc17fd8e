"""Reading a detector's policies from probe messages (ARCHITECTURE.md §5.8).

Before judging, tcr runs the detector on a fixed set of probe messages, a few per
policy and claimed dialect (one parser may choose differently per dialect), each
unsplit, and reads which legitimate choice (``tcr.policies``) its output matches:
what it shows (text with rejected blocks' content, calls, reasoning) equals the
reference's reading of the probe with that choice (``tcr.readings``). Once per run,
as the cost probe is, and in a few milliseconds: the reference's readings of the
probes are made once per process.

- A probe whose output no choice explains is a finding named for the policy
  (``policy/undeclared``), the probe its reproducer; one per policy (the first probe's:
  the other dialects' would only echo it).
- A pinned policy is enforced, not read: a probe output that is not the pinned
  choice is a finding too.
- Probes of different dialects that agree on no one choice: the first dialect's
  choice is the run's, and the others' probes are findings (one parser, one choice
  per policy, as the report line shows it).

A dialect whose plain example the detector misreads whole is probed one character at a
time: a bug that shows unsplit (the replay finds it) hides no choice.

``holdback`` is read from one split probe (a closer's beginning at a chunk's end:
whether it is held); ``typed_arguments`` from a name/value call whose value reads ``42``
under a string schema and an integer one, compared exactly; ``long_block`` from one call
padded past the reference's 1 MiB bound, in one claimed dialect (Hermes when claimed).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from tcr._verdict import Check, Violation
from tcr.claims import Claim
from tcr.detector.core import DEFAULT_MAX_BLOCK
from tcr.detector.events import Event, Rejected, Text, ToolCall, merge_text
from tcr.detector.loader import DetectorSpec, Factory, make_detector
from tcr.dialects import BY_ID as BY_DIALECT
from tcr.dialects import DIALECTS, Closing, Dialect, Kind
from tcr.errors import FactoryError
from tcr.expectation import Expectation, expectation_of
from tcr.judge import shows_alike
from tcr.policies import BY_ID, Policies
from tcr.readings import read
from tcr.tool_specs import read_tool_specs
from tcr.trace import run_trace

__all__ = [
    "KIND",
    "PolicyReading",
    "Probe",
    "control_probe",
    "probes_for",
    "read_policies",
    "read_spec",
]

KIND = "policy"  # the check name of a probe finding (Check.POLICY)
UNKNOWN_TOOL = "probe_undeclared_tool"  # a name no probe calls


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe message: the policy it reads, the dialect it is written in, its input.

    ``chunks``: how it is fed (one chunk, but the holdback probe's two)."""

    policy: str
    dialect: str
    chunks: tuple[str, ...]
    tools: tuple[str, ...] | None = None
    specs: str | None = None  # the request's OpenAI tools list, as JSON text

    @property
    def tool_specs(self) -> list[dict[str, object]] | None:
        return None if self.specs is None else json.loads(self.specs)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def reproducer(self) -> str:
        """The probe as ``tcr show`` would need it: the text and the tools, as JSON."""
        return json.dumps({"text": self.text, "tools": self.tools}, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class PolicyReading:
    """What the probes read: the claim's policies with the read choices, and the findings."""

    claim: Claim
    violations: tuple[Violation, ...] = ()
    probes: int = 0  # how many probe messages ran
    # policy id -> the first probe that read its choice (a report names it)
    read_by: tuple[tuple[str, Probe], ...] = field(default=(), compare=False)


def read_policies(factory: Factory, claim: Claim, *, timeout: float | None = None) -> PolicyReading:
    """The claim with the choices the detector makes on the probes (module docstring).

    A factory that fails raises ``FactoryError`` (the caller reports it as it reports a
    recording's); a probe on which the detector crashes reads nothing (a replay finds
    the crash)."""
    pinned = claim.policies.pinned
    chosen: dict[str, str] = {}
    found: list[Violation] = []
    read_by: dict[str, Probe] = {}
    # dialect -> how its probes are fed: whole, or by character when only that reads the
    # plain example right (a bug that shows unsplit hides no choice); None: neither does
    feeding: dict[str, bool | None] = {}
    told: set[str] = set()  # the policies a finding names already: one each, the first probe
    ran = 0
    try:
        for probe in sorted(probes_for(claim.dialects), key=_read_order):
            nothing_parsed = probe.tools == () and claim.empty_tools == "text"
            if nothing_parsed and probe.policy != "empty_tools":
                continue  # the probe reads no other policy
            policy = BY_ID[probe.policy]
            if policy.id == "holdback" and len(probe.chunks) > 1:
                # the split probe: a closer's beginning held in text; one vote for closer is
                # enough (the message-end probe, read below, votes the same way)
                if policy.id in pinned or chosen.get(policy.id) == "closer":
                    continue
                ran += 1
                if _holdback_choice(factory, probe, claim, timeout) == "closer":
                    chosen[policy.id] = "closer"
                    read_by[policy.id] = probe
                continue
            if probe.dialect not in feeding:
                feeding[probe.dialect] = _control_feeding(factory, probe.dialect, claim, timeout)
            by_char = feeding[probe.dialect]
            if by_char is None:
                continue  # it misreads the dialect's plain call: a bug the replay finds, no policy
            if by_char and policy.id == "long_block":
                continue  # a million feeds: the reference's choice stands
            shown = _shown(factory, probe, timeout, by_char=by_char)
            ran += 1
            if shown is None:
                continue
            coupled = _coupled(policy.id)
            if coupled is not None and coupled not in chosen and coupled not in pinned:
                # read together: either changes what the other's probe shows
                options = [{coupled: c.id} for c in BY_ID[coupled].choices]
            else:
                options = [{}]
            matches = [
                c.id
                for c in policy.choices
                if any(_explains(probe, claim, {**chosen, **o}, c.id, shown) for o in options)
            ]
            if policy.id in pinned or policy.id in chosen:
                want = claim.choice(policy.id) if policy.id in pinned else chosen[policy.id]
                if want not in matches and policy.id not in told:
                    pin = policy.id in pinned
                    found.append(_finding(probe, want, matches, shown, pin, by_char=by_char))
                    told.add(policy.id)
                continue
            if not matches:
                if policy.id not in told:
                    found.append(_finding(probe, None, matches, shown, False, by_char=by_char))
                    told.add(policy.id)
                continue
            chosen[policy.id] = policy.default if policy.default in matches else matches[0]
            read_by[policy.id] = probe
    except _Hung:  # the rest read nothing: the run reports the timeout
        pass
    policies = claim.policies.reading(chosen)
    return PolicyReading(claim.with_policies(policies), tuple(found), ran, tuple(read_by.items()))


def _control_feeding(
    factory: Factory, dialect_id: str, claim: Claim, timeout: float | None
) -> bool | None:
    """How the dialect's probes are fed: ``False`` (whole) when the detector reads the
    dialect's plain example that way, ``True`` (by character) when only that way, ``None``
    when neither: then its probes read nothing."""
    for by_char in (False, True):
        if _reads_control(factory, dialect_id, claim, timeout, by_char=by_char):
            return by_char
    return None


def _reads_control(
    factory: Factory, dialect_id: str, claim: Claim, timeout: float | None, *, by_char: bool
) -> bool:
    """Whether the detector reads the dialect's plain example (declared-free, closed) as the
    reference does, with some choice of the policies that change the text around a call:
    only then is what it does on the dialect's probes about a policy."""
    control = control_probe(dialect_id)
    shown = _shown(factory, control, timeout, by_char=by_char)
    if shown is None:
        return False
    return any(
        shows_alike(
            _expected(
                control, claim.dialects, Policies.of({"trailing_text": t.id, "whitespace": w.id})
            ),
            shown,
        )
        for t in BY_ID["trailing_text"].choices
        for w in BY_ID["whitespace"].choices
    )


def control_probe(dialect_id: str) -> Probe:
    """The dialect's plain example, closed, between two sentences: a detector that does
    not read it as the reference does has a bug there, and its probes read no policy."""
    d = BY_DIALECT[dialect_id]
    return Probe(
        "control", dialect_id, ((_BEFORE if d.anywhere else "") + d.example.block + _AFTER,)
    )


class _Hung(Exception):
    """A probe went over the per-message time limit: no further probe is run, since each
    would take the whole limit again (the run reports the timeout on its own cases)."""


def _shown(
    factory: Factory, probe: Probe, timeout: float | None, *, by_char: bool = False
) -> Expectation | None:
    """What the detector shows on the probe, fed as its chunks or one character at a time
    (``None``: it crashed)."""
    detector = make_detector(factory, probe.tools, tool_specs=probe.tool_specs)
    chunks = list(probe.text) if by_char else list(probe.chunks)
    trace = run_trace(detector, chunks, states=False, timeout=timeout)
    if trace.crash is not None:
        if trace.crash.timed_out:
            raise _Hung
        return None
    return expectation_of(trace.events)


def _explains(
    probe: Probe, claim: Claim, chosen: Mapping[str, str], choice: str, shown: Expectation
) -> bool:
    policies = _with(claim, chosen, probe.policy, choice)
    expected = _expected(probe, claim.dialects, policies)
    if probe.policy == "typed_arguments":
        return expected == shown  # the values' types are the question: compared exactly
    return shows_alike(expected, shown)


def _with(claim: Claim, chosen: Mapping[str, str], policy_id: str, choice: str) -> Policies:
    """The claim's pinned choices, those read so far, and ``choice`` for ``policy_id``: a
    probe reads one policy with the others as known (``_ORDER``: the ones a later probe
    depends on are read first)."""
    known = {**chosen, **claim.policies.pinned_map()}
    known.pop(policy_id, None)
    return Policies.of({**known, policy_id: choice})


@functools.cache
def _expected(probe: Probe, dialects: frozenset[str] | None, policies: Policies) -> Expectation:
    specs = None if probe.specs is None else read_tool_specs(probe.tool_specs)
    return expectation_of(
        read(probe.text, probe.tools, dialects=dialects, policies=policies, tool_specs=specs).events
    )


def _finding(
    probe: Probe,
    want: str | None,
    matches: Sequence[str],
    shown: Expectation,
    pinned: bool,
    *,
    by_char: bool,
) -> Violation:
    """A probe output that no (or not the wanted) choice explains, as a violation."""
    did = _said(shown) + (" (fed one character at a time)" if by_char else "")
    if want is None:
        message = f"policy/{probe.policy}: {did}, which no choice of {probe.policy} explains"
    elif pinned:
        made = f" (it reads as {', '.join(matches)})" if matches else ""
        message = f"policy/{probe.policy}: {did}, not the pinned choice {want}{made}"
    else:
        made = f"; here it reads as {', '.join(matches)}" if matches else ""
        message = f"policy/{probe.policy}: {did}, not {want} as in another dialect's probe{made}"
    return Violation(
        Check.POLICY,
        message,
        0,
        0,
        probe.reproducer(),
        kind=probe.policy,
        dialect=probe.dialect,
    )


def _said(shown: Expectation) -> str:
    calls = ", ".join(c.name for c in shown.calls or ()) or "no call"
    text = shown.text or ""
    return f"showed {text[:60]!r} and {calls}"


def _holdback_choice(
    factory: Factory, probe: Probe, claim: Claim, timeout: float | None
) -> str | None:
    """``closer`` when the detector holds a closing marker's beginning at the end of the
    first chunk of plain text, ``opener`` when it holds no more than an opener's."""
    try:
        detector = make_detector(factory, probe.tools)
    except FactoryError:
        raise
    trace = run_trace(detector, list(probe.chunks), states=False, timeout=timeout)
    if trace.crash is not None or not trace.steps:
        return None
    first = trace.steps[0]
    shown = sum(len(e.raw if e.raw is not None else _text(e)) for e in first.events)
    held = len(probe.chunks[0]) - shown
    closer = probe.chunks[0].rsplit(" ", 1)[-1]
    return "closer" if held >= len(closer) > 0 else "opener"


def _text(event: Event) -> str:
    return event.text if isinstance(event, Text) else ""


# --- the probe messages ----------------------------------------------------------

_BEFORE, _AFTER = "Checking.\n", "\nDone."


@functools.cache
def probes_for(dialects: frozenset[str] | None) -> tuple[Probe, ...]:
    """The probe messages for a claim's dialects, each checked to tell its policy's
    choices apart on the reference (a probe that cannot is left out)."""
    found: list[Probe] = []
    for dialect in DIALECTS:
        if dialect.kind is not Kind.CALL or (dialects is not None and dialect.id not in dialects):
            continue
        kept: set[tuple[str, int]] = set()  # one probe per policy, chunk count and dialect
        for probe in _candidates(dialect):
            kind = (probe.policy, len(probe.chunks))
            if kind not in kept and _tells_apart(probe, dialects):
                found.append(probe)
                kept.add(kind)
    # 1 MiB: read in one dialect, Hermes if claimed (the most common), else the first it fits
    claimed = [d for d in DIALECTS if any(p.dialect == d.id for p in found)]
    for dialect in sorted(claimed, key=lambda d: d.id != "hermes"):
        long = [p for p in _long_probes(dialect) if _tells_apart(p, dialects)]
        if long:
            return (*found, *long)
    return tuple(found)


def _candidates(d: Dialect) -> list[Probe]:
    block = d.example.block
    names = [c.name for c in d.example.calls]
    if not names:
        return []
    before = _BEFORE if d.anywhere else ""
    out = [
        Probe("undeclared", d.id, (before + block + _AFTER,), (UNKNOWN_TOOL,)),
        Probe("empty_tools", d.id, (before + block + _AFTER,), ()),
        Probe("whitespace", d.id, ("\n" + block + "\n " + _AFTER[1:],)),
        Probe("trailing_text", d.id, (before + block + _AFTER,)),
    ]
    opener = next((o for o in d.opens if block.startswith(o)), None)
    if opener is not None and block.startswith(opener + "\n"):
        bare = opener + block[len(opener) + 1 :]
        out.append(Probe("opener_newline", d.id, (before + bare + _AFTER,)))
    closer = next((c for c in d.closes if block.endswith(c)), None)
    if closer is not None and not d.closed_by_end:
        out.append(Probe("unterminated", d.id, (before + block[: -len(closer)],)))
        if len(closer) > 3:  # the message ends inside its closer: held, then dropped?
            out.append(Probe("holdback", d.id, (before + block[:-3],)))
            if d.reads_cut_closer:  # or, where the reference reads calls there: are they?
                out.append(Probe("cut_closer", d.id, (before + block[:-3],)))
    out += _argument_probes(d, before)
    if d.schema_typed:
        out += _typed_probes(d, before)
    out += [Probe(f"{d.id}.{v.id}", d.id, (v.probe,)) for v in d.variants]
    if d.closing is Closing.MARKER and opener is not None and closer is not None:
        body = block[len(opener) : -len(closer)]
        out += [
            Probe("malformed", d.id, (before + opener + broken + closer + _AFTER,))
            for broken in (body[: len(body) // 2], "{}", '{"x": 1}', "not a call", "")
        ]
        if d.anywhere:
            out.append(Probe("holdback", d.id, ("Note " + closer[:-1], "x and more.")))
    return out


def _typed_probes(d: Dialect, before: str) -> list[Probe]:
    """A name/value call whose first value reads ``42``, declared a string, then an
    integer: typed by schema, by look or not at all, the three read it apart."""
    first = d.example.calls[0]
    key, value = next(iter(first.arguments.items()))
    block = d.example.block
    if not isinstance(value, str) or value not in block:
        return []
    block = block.replace(value, "42", 1)
    names = tuple(dict.fromkeys(c.name for c in d.example.calls))
    probes = []
    for kind in ("string", "integer"):
        specs = [
            {
                "type": "function",
                "function": {
                    "name": c.name,
                    "parameters": {
                        "type": "object",
                        "properties": {
                            k: {"type": kind if (c is first and k == key) else "string"}
                            for k in c.arguments
                        },
                    },
                },
            }
            for c in d.example.calls
        ]
        text = (before + block + _AFTER,)
        probes.append(Probe("typed_arguments", d.id, text, names, json.dumps(specs)))
    return probes


def _long_probes(d: Dialect) -> list[Probe]:
    """The dialect's example with its first string value padded past the reference's
    bound on a block (``long_block``): released, it is text; held, a call. One dialect's
    probe reads it for the run, since it is the probes' only long message."""
    value = next(
        (v for c in d.example.calls for v in c.arguments.values() if isinstance(v, str)), None
    )
    block = d.example.block
    if not value or value not in block or d.closed_by_end:
        return []
    padded = block.replace(value, value + " ." * (DEFAULT_MAX_BLOCK // 2), 1)
    return [Probe("long_block", d.id, ((_BEFORE if d.anywhere else "") + padded + _AFTER,))]


def _argument_probes(d: Dialect, before: str) -> list[Probe]:
    """The example with its first call's JSON rewritten in the lenient shapes (``arguments``:
    the other of ``arguments``/``parameters``, the arguments as a JSON string, the nested
    OpenAI shape), in every dialect whose example writes that call as one JSON object
    (Hermes' body, an item of Mistral's array, ...)."""
    block = d.example.block
    first = d.example.calls[0]
    key = next(
        (
            k
            for k in ("arguments", "parameters")
            if json.dumps({"name": first.name, k: first.arguments}) in block
        ),
        None,
    )
    if key is None:
        return []
    plain = json.dumps({"name": first.name, key: first.arguments})
    other = "parameters" if key == "arguments" else "arguments"
    shapes = [
        {"name": first.name, other: first.arguments},
        {"name": first.name, key: json.dumps(first.arguments)},
        {"type": "function", "function": {"name": first.name, "arguments": first.arguments}},
    ]
    return [
        Probe("arguments", d.id, (before + block.replace(plain, json.dumps(s), 1) + _AFTER,))
        for s in shapes
    ]


def _tells_apart(probe: Probe, dialects: frozenset[str] | None) -> bool:
    """Whether the reference reads the probe as its policy's choices differ on it: the
    reference's own choice reads a block there, and some other choice reads otherwise."""
    policy = BY_ID[probe.policy]
    if policy.id == "holdback" and len(probe.chunks) > 1:
        return True
    readings = {
        c.id: _expected(probe, dialects, Policies.of({policy.id: c.id})) for c in policy.choices
    }
    default = readings[policy.default]
    specs = None if probe.specs is None else read_tool_specs(probe.tool_specs)
    reference = read(probe.text, probe.tools, dialects=dialects, tool_specs=specs).events
    if not _reads_block(reference, policy.id):
        return False
    return any(r != default for r in readings.values())


def _reads_block(events: Sequence[Event], policy_id: str) -> bool:
    """Whether the reference reads the probe as its policy is about."""
    events = merge_text(events)
    if policy_id == "malformed":
        return any(isinstance(e, Rejected) and e.reason == "malformed" for e in events)
    if policy_id == "arguments":
        return any(isinstance(e, ToolCall | Rejected) for e in events)
    if policy_id == "long_block":
        return any(isinstance(e, Rejected) and e.reason == "too_long" for e in events)
    if policy_id == "holdback":  # a block left open at the end, rejected
        return any(isinstance(e, Rejected) for e in events)
    if policy_id in ("undeclared", "empty_tools"):
        return any(isinstance(e, Rejected) and e.reason == "undeclared" for e in events)
    return any(isinstance(e, ToolCall) for e in events)


# The order policies are read in: a whitespace probe shows text after its call, so it is
# read once trailing_text is known; a malformed block's probe, once arguments are.
_ORDER = (
    "trailing_text",
    "whitespace",
    "empty_tools",
    "undeclared",
    "arguments",
    "malformed",
    "unterminated",
    "cut_closer",
    "long_block",
    "opener_newline",
    "typed_arguments",
    "holdback",
)


def _read_order(probe: Probe) -> int:
    """Where a probe's policy is read: a dialect's variants first (a form the parser does
    not read is text in every other probe of it), then ``_ORDER``."""
    return _ORDER.index(probe.policy) if probe.policy in _ORDER else -1


def _coupled(policy_id: str) -> str | None:
    """The policy read together with ``policy_id`` (``_COUPLED``); a variant's probe has
    white space or text around its call, so each is read with ``whitespace``."""
    return _COUPLED.get(policy_id, "whitespace" if "." in policy_id else None)


# Policies read together: the first's probe is explained by any choice of the second
# (not read yet): both change the text around a call, or what a block it rejects shows.
_COUPLED = {"trailing_text": "whitespace", "arguments": "malformed"}


def read_spec(
    spec: DetectorSpec, *, timeout: float | None = None
) -> tuple[DetectorSpec, PolicyReading]:
    """``spec`` judged with the policies its detector makes on the probes, and the reading.

    A factory that fails reads nothing (the run reports the failure where it makes a
    detector): the spec is judged with its claim's choices. Read once per factory and
    claim in a process (a pytest run judges many items with one detector)."""
    # a factory named by --detector is made again per run (bound to its claim's parts):
    # its name says which it is; a factory object (a closure, a lambda) is itself
    named = spec.spec is not None and "<" not in spec.spec
    try:
        key: object = (spec.spec if named else spec.factory, spec.command, spec.claim, timeout)
        hash(key)
    except TypeError:
        key = None
    reading = _READ.get(key) if key is not None else None
    if reading is None:
        try:
            reading = read_policies(spec.factory, spec.claim, timeout=timeout)
        except FactoryError:
            return spec, PolicyReading(spec.claim)
        if key is not None:
            if len(_READ) >= _READ_MOST:
                _READ.clear()
            _READ[key] = reading
    return replace(spec, claim=reading.claim), reading


_READ: dict[object, PolicyReading] = {}
_READ_MOST = 64
