"""The ``Dialect`` record: everything tcr knows about one tool-call dialect (ARCHITECTURE.md §5.4).

A dialect module builds one record; the detector's FSM table, its body parsers
and lexer, the fuzz writers, the regression cases and the recording grammars
are all read from these records, so a dialect lives in one place. Pure data
and pure functions: no Hypothesis, no I/O, no upper folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Protocol, TypeVar

from tcr.dialects._calls import ParsedCall

__all__ = [
    "FENCE",
    "FENCE_DONE_RE",
    "FENCE_MAYBE_RE",
    "BodyLexer",
    "Call",
    "Choices",
    "Closing",
    "Dialect",
    "Draws",
    "Engines",
    "Example",
    "Grammar",
    "Head",
    "Kind",
    "Model",
    "RegressionCase",
    "Rendered",
    "Tools",
    "Variant",
]

T = TypeVar("T")


class Closing(Enum):
    """How a block ends."""

    MARKER = "marker"  # the first closing marker outside a string of the body
    BALANCED = "balanced"  # the bracket that balances the body's first one
    FENCED = "fenced"  # BALANCED, then an optional ``` fence (with a little white space)


# After a FENCED block's balancing bracket: a little white space, then the fence.
FENCE = "```"
_FENCE_MAX_SPACE = 8
FENCE_DONE_RE = re.compile(rf"[ \t\r\n]{{0,{_FENCE_MAX_SPACE}}}{FENCE}")
FENCE_MAYBE_RE = re.compile(rf"[ \t\r\n]{{0,{_FENCE_MAX_SPACE}}}`{{0,2}}")


class Kind(StrEnum):
    CALL = "call"
    REASONING = "reasoning"


class BodyLexer(Enum):
    """How the lexer reads a block body to find its end (policy 4)."""

    UNDECIDED = "undecided"  # body is white space so far
    PLAIN = "plain"  # first closing marker wins (prose, XML-ish bodies, reasoning)
    JSON = "json"  # closing marker only outside JSON strings
    QUOTED = "quoted"  # closing marker only outside strings of the dialect's own quote token
    BEFORE_BRACE = "before_brace"  # a name and its tags before the {…} that balances
    BALANCED = "balanced"  # ends at the bracket balancing the first one
    # Python literals: strings in either quote with backslash escapes; with
    # ``Closing.BALANCED`` it ends at the balancing bracket, else at a closing marker
    # outside a string (pythonic call lists; JSON reads the same way under it).
    PYTHON = "python"


@dataclass(frozen=True, slots=True)
class Head:
    """How every call body of a dialect begins, so that one that cannot be a call is
    settled early (policy 8: a ``[`` that opens a prose list is released, not held).

    ``viable``'s greedy match at the body's start is the longest prefix a call body can
    begin with; once ``done`` matches there, the body is a call as far as the head goes.
    A head still undecided after ``most`` characters is no call's (names are short).
    """

    viable: re.Pattern[str]
    done: re.Pattern[str]
    most: int = 128

    def verdict(self, body: str) -> int | None:
        """``None`` while ``body`` may still begin a call (or does); else how long the
        longest prefix of ``body`` is that still might."""
        if self.done.match(body):
            return None
        m = self.viable.match(body)
        reach = min(0 if m is None else m.end(), self.most)
        return None if reach >= len(body) else reach


@dataclass(frozen=True, slots=True)
class Call:
    """One call a correct detector emits: its name and its parsed arguments.

    ``dialect``: the dialect its block is written in (a renderer sets it), which says
    whether the values carry JSON types or are text typed by the tool's schema; calls
    that differ only in it are equal.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict, hash=False)
    dialect: str = field(default="", compare=False)

    def as_map(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments)}


Tools = tuple[str, ...] | None
JsonStyle = tuple[bool, int]  # (ensure_ascii, spacing: 0 compact, 1 json.dumps, 2 indented)


class Choices(Protocol):
    """A stream of choices (``tcr.fuzz.source.Source`` reads them from drawn bytes)."""

    def below(self, n: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def flag(self) -> bool: ...

    def count(self, most: int) -> int: ...


class Draws(Protocol):
    """What a renderer asks for; ``tcr.fuzz`` answers from drawn bytes.

    The head choices (variant, flavor, count, names, style, options) sit at fixed
    offsets so that shrinking one keeps the others; ``tail`` and the value
    drawers read arguments call after call.
    """

    @property
    def tail(self) -> Choices: ...

    def variant(self, options: Sequence[str]) -> str: ...

    def flavor(self, options: Sequence[str]) -> str: ...

    def count(self, most: int) -> int: ...

    def name(self, k: int) -> str: ...

    def style(self) -> JsonStyle: ...

    def option(self, k: int, options: Sequence[T]) -> T: ...

    def arguments(self, *, markup: bool = True) -> dict[str, Any]: ...

    def string(self, *, markup: bool = True) -> str: ...

    def json_style(self) -> JsonStyle: ...

    def prose(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Rendered:
    """A block as a renderer wrote it, with the verdict ARCHITECTURE.md §5 asks for.

    ``raw == opener + body + closer``; ``opener`` is the marker as policy 12 strips
    it (a kept ``{`` stays in the body). ``shown_closer`` is the part of ``closer``
    a rejection still shows. ``fragile`` lists body spans ``(start, end)`` that
    cannot parse while cut short.
    """

    dialect: str
    variant: str
    opener: str
    body: str
    closer: str = ""
    shown_closer: str = ""
    calls: tuple[Call, ...] = ()
    accepted: bool = False
    fragile: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Example:
    """A realistic message: text, the dialect's block(s), text; and the calls in the block.

    A reasoning dialect's block holds reasoning, not calls.
    """

    before: str
    block: str
    after: str
    calls: tuple[Call, ...] = ()

    @property
    def text(self) -> str:
        return self.before + self.block + self.after


@dataclass(frozen=True, slots=True)
class Grammar:
    """A GBNF request that forces the dialect from ``llama-server`` (scripts/dialects.py).

    ``expect`` reads the expectation off the model's output with a regular
    expression, independently of tcr's detector.
    """

    name: str  # recording file stem
    note: str
    prompt: str
    root: str  # the GBNF ``root`` rule; the shared rules are added by the script
    expect: Callable[[str], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Model:
    """The backend that streamed a regression case, as its family module describes it.

    ``engine`` is ``"llama-server"`` (OpenAI-style SSE chat), ``"ollama"`` (NDJSON) or an
    in-process engine whose chunk sequence is recorded (``"vllm"``, ``"sglang"``);
    ``special_tokens`` are the tokens its tokenizer keeps whole (each arrives as one chunk).
    """

    engine: str
    name: str
    special_tokens: tuple[str, ...] = ()
    ms_per_chunk: float = 22.0


@dataclass(frozen=True, slots=True)
class RegressionCase:
    """A realistic message in the dialect, pinned as a bundled regression recording.

    ``model`` is the backend that wrote it: a ``Model``, or the name of one that
    ``tcr.corpora`` knows (how it frames its stream, which tokens its tokenizer keeps
    whole). ``shown``,
    ``calls`` and ``reasoning`` are what a correct detector makes of ``text``.
    """

    file: str
    bug: str
    note: str
    model: str | Model
    ask: str
    text: str
    tools: tuple[str, ...] | None
    shown: str = ""
    calls: tuple[Call, ...] = ()
    reasoning: str = ""
    system: str | None = None
    offered: tuple[str, ...] | None = None  # tools in the request, when not the declared ones
    extra: tuple[tuple[str, Any], ...] = ()  # more request fields


Parser = Callable[[str], list[ParsedCall]]
Renderer = Callable[[Draws, Tools], Rendered]


def _any_body(body: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Variant:
    """A form of a dialect that the reference reads and some engines' parsers do not: to
    those it is text (``tcr.policies`` makes each a policy, ``<dialect>.<id>``: read | text).

    ``matches(raw, before)``: whether a block the reference read, written ``raw`` after the
    message's text ``before`` it, is in this form. ``probe``: a message holding one call in
    this form. ``reads`` and ``skips``: the engines that read it and do not, each as
    ``(engine, where in its source)``."""

    id: str
    what: str  # one line
    matches: Callable[[str, str], bool]
    probe: str
    reads: tuple[tuple[str, str], ...]
    skips: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Engines:
    """The names the serving engines give their parser of a dialect, so a claim can be
    written from any of them (docs/dialect-sources.md, §4): vLLM's and SGLang's
    ``--tool-call-parser`` names (a reasoning dialect: their reasoning parser names), and
    llama.cpp's ``common_chat_format`` name where it has one (``COMMON_CHAT_FORMAT_`` left
    off; llama.cpp derives most formats from the chat template and names few)."""

    vllm: tuple[str, ...] = ()
    sglang: tuple[str, ...] = ()
    llamacpp: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every name, each once, vLLM's first."""
        return tuple(dict.fromkeys((*self.vllm, *self.sglang, *self.llamacpp)))

    def shown(self, most: int = 3) -> str:
        """The names for a line of a screen: the first ``most``, then how many more."""
        names = self.names
        if not names:
            return "no engine parser"
        more = f" +{len(names) - most}" if len(names) > most else ""
        return ", ".join(names[:most]) + more

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "vllm": list(self.vllm),
            "sglang": list(self.sglang),
            "llama.cpp": list(self.llamacpp),
        }


@dataclass(frozen=True, slots=True)
class Dialect:
    """One dialect: its markers, how its blocks are read, written, forced and pinned.

    Dialects that share an opening marker (``<tool_call>``: hermes, qwen3_coder,
    glm45) must agree on closing; which one a block is comes from its body
    (``owns``), in registry order, the first of them when none owns it.
    """

    id: str
    summary: str
    opens: tuple[str, ...]
    closes: tuple[str, ...]
    closing: Closing
    parse: Parser | None  # None: not a call dialect (reasoning)
    render: Renderer
    example: Example
    grammars: tuple[Grammar, ...]
    cases: tuple[RegressionCase, ...]
    engines: Engines = Engines()  # each serving engine's name for its parser of it
    special_tokens: frozenset[str] = frozenset()  # markers that are one token to the model
    anywhere: bool = True  # False: only while all content so far is white space
    kind: Kind = Kind.CALL
    keep: int = 0  # trailing characters of the opening marker that belong to the body
    closed_by_end: bool = False  # end of message is a normal close, not "unterminated"
    # A message that ends inside the closing marker, after a whole body, still holds the
    # body's calls: the engines have them before the closer (its cut-off prefix is no part
    # of the body). False: such a block is unterminated, as any other.
    reads_cut_closer: bool = False
    # The opener also starts plain JSON answers: JSON that is not call-shaped is
    # "not_a_call", shown verbatim, and released as soon as it is certain (policy 8).
    answer_like: bool = False
    first_lexer: BodyLexer = BodyLexer.UNDECIDED  # the lexer a body starts in
    lexer_by_first: tuple[tuple[str, BodyLexer], ...] = ()  # first body character -> lexer
    lexer_otherwise: BodyLexer = BodyLexer.PLAIN
    quote: str = ""  # the QUOTED lexer's string delimiter (a token, no escapes)
    owns: Callable[[str], bool] = _any_body  # this block body is this dialect's
    head: Head | None = None  # how its call bodies begin (an answer_like opener's early verdict)
    model_seeds: tuple[str, ...] = ()  # model-name patterns that usually write it
    tokens: tuple[str, ...] = ()  # body tokens where chunk boundaries matter
    markup: tuple[str, ...] = ()  # marker text fuzz puts inside argument strings
    variants: tuple[Variant, ...] = ()  # forms some engines' parsers do not read
    # Its bodies carry no JSON types: every value is text, which parsers type by the
    # tool's schema (ARCHITECTURE.md §5.2, "Tool specs"; ``tcr.tool_specs``).
    schema_typed: bool = False

    @property
    def parser_names(self) -> tuple[str, ...]:
        """Every engine's name for its parser of this dialect (``Engines.names``)."""
        return self.engines.names

    def lexer_for(self, first: str) -> BodyLexer | None:
        """The body lexer a body starting with ``first`` needs, if this dialect names one."""
        for chars, lexer in self.lexer_by_first:
            if first in chars:
                return lexer
        return None
