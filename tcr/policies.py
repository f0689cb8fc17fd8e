"""Policies: the choices where correct parsers differ on purpose (ARCHITECTURE.md §5.8).

A policy is a question every streaming tool-call parser answers (what is a block that
opens and closes but holds no call shown as?), and its choices are the answers engines
give on purpose. None is a bug: tcr reads which choice a detector makes from probe
messages (``tcr.probes``), shows the choices once at the top of every report, and
judges ``expected`` against the reference reading with those choices
(``tcr.readings``). A claim may pin a choice instead (``--policy ID=CHOICE``,
``tcr_claim = {"policies": {...}}``): a pinned choice is enforced, not read.

The registry is data, as a dialect is (``tcr/dialects/hermes.py``): each ``Policy``
holds its question, its choices, and the reference's choice (its default); each
``Choice`` its meaning, whether it loses input (``lossy``: shown as ``(lossy)`` in
every report, so it is never silent) and the engines that make it, each with the
source it was read in. ``Policies`` is the set of choices one detector is judged with.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tcr.dialects import DIALECTS, Dialect, Variant
from tcr.errors import TcrError, did_you_mean

__all__ = [
    "BY_ID",
    "DEFAULTS",
    "POLICIES",
    "REFERENCE",
    "Choice",
    "Engine",
    "Policies",
    "Policy",
    "parse_policy_options",
    "policy",
]


@dataclass(frozen=True, slots=True)
class Engine:
    """An engine parser that makes a choice, and where that was read (file and function)."""

    name: str  # "vLLM hermes", "SGLang base", "llama.cpp"
    source: str  # the file and function, as docs/dialect-sources.md cites them


@dataclass(frozen=True, slots=True)
class Choice:
    """One legitimate answer to a policy's question."""

    id: str
    meaning: str  # one line
    engines: tuple[Engine, ...]
    lossy: bool = False  # input the user never sees: marked ``(lossy)`` in every report
    aliases: tuple[str, ...] = ()  # other spellings a user may write (``reject``)
    shown: str = ""  # how the report line says it, when not ``"<policy> <choice>"``


@dataclass(frozen=True, slots=True)
class Policy:
    """A question correct parsers answer differently, and its legitimate answers."""

    id: str
    question: str  # one line
    choices: tuple[Choice, ...]
    default: str  # the reference's choice (``tcr.detector.core.StreamDetector``)
    probed: bool = True  # whether tcr reads it from probe messages (else: default or pinned)

    def choice(self, value: str, *, where: str = "policy") -> Choice:
        """The choice ``value`` names (its id or an alias); else a one-line ``TcrError``."""
        for c in self.choices:
            if value == c.id or value in c.aliases:
                return c
        known = [c.id for c in self.choices]
        hint = did_you_mean(value, [*known, *(a for c in self.choices for a in c.aliases)])
        raise TcrError(
            f"{where}: {self.id} has no choice {value!r}{hint}; known: {', '.join(known)}"
        )

    @property
    def reference(self) -> Choice:
        return self.choice(self.default)


class _Source(enum.StrEnum):
    """The engine sources the registry cites: vLLM 0.34, SGLang 0.5.23 and llama.cpp b11434
    as released (paths as in their repositories; SGLang's under ``python/``)."""

    VLLM_HERMES = "vllm/tool_parsers/hermes_tool_parser.py"
    VLLM_INTERNLM = "vllm/tool_parsers/internlm2_tool_parser.py"
    VLLM_QWEN3_CODER = "vllm/tool_parsers/qwen3coder_tool_parser.py"
    VLLM_LLAMA = "vllm/parser/llama_json.py"
    VLLM_ENGINE = "vllm/parser/engine/parser_engine.py"
    VLLM_ENGINE_LEXER = "vllm/parser/engine/incremental_lexer.py"
    VLLM_ENGINE_CONFIG = "vllm/parser/engine/parser_engine_config.py"
    VLLM_GLM47 = "vllm/parser/glm47_moe.py"
    VLLM_STREAM = "vllm/entrypoints/openai/chat_completion/stream_processor.py"
    VLLM_SERVING = "vllm/entrypoints/openai/serving_chat.py (before the vllm/parser layer)"
    SGLANG_BASE = "sglang/srt/function_call/base_format_detector.py"
    SGLANG_HERMES = "sglang/srt/function_call/hermes_detector.py"
    SGLANG_QWEN25 = "sglang/srt/function_call/qwen25_detector.py"
    SGLANG_PARSER = "sglang/srt/function_call/function_call_parser.py"
    SGLANG_MINIMAX = "sglang/srt/function_call/minimax_m2.py"
    SGLANG_MINIMAX_M3 = "sglang/srt/function_call/minimax_m3.py"
    SGLANG_GLM4 = "sglang/srt/function_call/glm4_moe_detector.py"
    SGLANG_QWEN3_CODER = "sglang/srt/function_call/qwen3_coder_detector.py"
    SGLANG_PYTHONIC = "sglang/srt/function_call/pythonic_detector.py"
    LLAMA_CPP = "common/chat.cpp"
    LLAMA_CPP_AUTO = "common/chat-auto-parser-generator.cpp"
    LLAMA_CPP_QWEN3_CODER = "common/parsers/qwen3-coder.cpp"


def _engine(name: str, source: _Source, where: str) -> Engine:
    return Engine(name, f"{source.value} ({where})")


_REFERENCE = Engine("tcr reference", "tcr/detector/core.py (ARCHITECTURE.md §5.6)")

_CHOICES: tuple[Policy, ...] = (
    Policy(
        "malformed",
        "A block that opens and closes but holds no valid call: what is shown?",
        (
            Choice(
                "shown",
                "its body is shown without the markers (a Rejected(malformed) event or text)",
                (
                    _REFERENCE,
                    _engine(
                        "SGLang minimax-m2",
                        _Source.SGLANG_MINIMAX,
                        "an invalid function name: normal += self._buf, the opener already removed",
                    ),
                ),
                aliases=("rejected", "reject"),
            ),
            Choice(
                "verbatim",
                "the block is shown as written, markers and all, as text",
                (
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "extract_tool_calls: "
                        "except Exception -> content=model_output (non-streaming)",
                    ),
                    _engine(
                        "SGLang hermes",
                        _Source.SGLANG_HERMES,
                        "detect_and_parse: except Exception -> normal_text=text (non-streaming)",
                    ),
                ),
                aliases=("text",),
            ),
            Choice(
                "dropped",
                "the block is not shown at all",
                (
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE,
                        "_accept_tool_name: "
                        "a slot with no name is never emitted; TOOL_PREAMBLE text discarded",
                    ),
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "parse_streaming_increment: "
                        "MalformedJSON -> StreamingParseResult(), the buffer held for good",
                    ),
                ),
                lossy=True,
                aliases=("drop",),
            ),
        ),
        default="shown",
    ),
    Policy(
        "unterminated",
        "A block still open when the message ends: what is it?",
        (
            Choice(
                "completed",
                "a call when its body parses, else shown without its markers",
                (
                    _REFERENCE,
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "'Valid JSON without closing "
                        "tag = complete body'; non-streaming regex '<tool_call>(.*)'",
                    ),
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "is_current_complete = "
                        "_is_complete_json(...): the JSON, not the closer, completes a call",
                    ),
                    _engine(
                        "llama.cpp",
                        _Source.LLAMA_CPP,
                        "common_chat_peg_parse: the lenient final parse completes what was parsed",
                    ),
                ),
                aliases=("complete",),
            ),
            Choice(
                "rejected",
                "always shown without its markers, never a call",
                (
                    _engine(
                        "SGLang minimax-m2",
                        _Source.SGLANG_MINIMAX,
                        "a call's JSON is closed only at </invoke>: an open one is never sent",
                    ),
                ),
                aliases=("reject", "shown"),
            ),
            Choice(
                "verbatim",
                "shown as written, markers and all, as text",
                (
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "extract_tool_calls: a body "
                        "that does not parse returns content=model_output (non-streaming)",
                    ),
                ),
                aliases=("text",),
            ),
            Choice(
                "dropped",
                "not shown at all",
                (
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "finish() returns nothing: a truncated call held in the buffer is lost",
                    ),
                ),
                lossy=True,
                aliases=("drop",),
            ),
        ),
        default="completed",
    ),
    Policy(
        "cut_closer",
        "A message that ends inside a block's closer ('</tool_'), in the dialects whose "
        "engines read the calls before it (Qwen3-Coder, MiniMax-M2): are they calls?",
        (
            Choice(
                "read",
                "the calls written before the cut closer are calls",
                (
                    _REFERENCE,
                    _engine(
                        "vLLM qwen3_coder",
                        _Source.VLLM_QWEN3_CODER,
                        "tool_call_regex '<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$'",
                    ),
                    _engine(
                        "SGLang qwen3_coder",
                        _Source.SGLANG_QWEN3_CODER,
                        "a call is complete at </function>, before the block's closer",
                    ),
                ),
            ),
            Choice(
                "unterminated",
                "the block is unterminated, as any other: its body, cut closer and all, is "
                "no call (the unterminated choice says how it is shown)",
                (
                    Engine(
                        "tcr reference",
                        "tcr/dialects/hermes.py: the Hermes block cut inside its closer",
                    ),
                ),
            ),
        ),
        default="read",
    ),
    Policy(
        "undeclared",
        "A call to a tool the request did not declare: what is it?",
        (
            Choice(
                "rejected",
                "shown without its markers as Rejected(undeclared), no call",
                (
                    _REFERENCE,
                    _engine(
                        "SGLang minimax-m2",
                        _Source.SGLANG_MINIMAX,
                        "an unknown name: the buffer shown as normal text, opener removed",
                    ),
                ),
                aliases=("reject",),
            ),
            Choice(
                "accepted",
                "a call like any other (names are not checked)",
                (
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE_CONFIG,
                        "validate_tool_names = False",
                    ),
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "the name is sent as soon as the regex finds it; request.tools unread",
                    ),
                    _engine(
                        "SGLang qwen3_coder",
                        _Source.SGLANG_QWEN3_CODER,
                        "streaming: the name is sent unchecked",
                    ),
                ),
                aliases=("accept",),
            ),
            Choice(
                "dropped",
                "neither a call nor shown",
                (
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "'Invalid tool name - reset state'; parse_base_json 'Skip unknown tools'",
                    ),
                    _engine("vLLM glm45/glm47", _Source.VLLM_GLM47, "validate_tool_names=True"),
                ),
                lossy=True,
                aliases=("drop",),
            ),
        ),
        default="rejected",
    ),
    Policy(
        "empty_tools",
        "tools=[] (no tool offered): what is markup that calls one?",
        (
            Choice(
                "reject",
                "every call is shown without its markers as Rejected(undeclared)",
                (_REFERENCE,),
                aliases=("rejected",),
                shown="tools=[] reject",
            ),
            Choice(
                "text",
                "no parser runs: all markup is text",
                (
                    _engine(
                        "SGLang",
                        _Source.SGLANG_PARSER,
                        "parse_stream_chunk: not self.tools -> chunk_text, []",
                    ),
                    _engine(
                        "llama.cpp",
                        _Source.LLAMA_CPP_AUTO,
                        "no tools: the content-only parser p.content(p.rest())",
                    ),
                    _engine(
                        "vLLM (older)",
                        _Source.VLLM_SERVING,
                        "the tool parser streams only when request.tools is set",
                    ),
                ),
                shown="tools=[] text",
            ),
            Choice(
                "parse",
                "calls are parsed as if any tool were declared",
                (
                    _engine(
                        "SGLang minimax-m3",
                        _Source.SGLANG_MINIMAX_M3,
                        "parses_without_tools() -> True",
                    ),
                ),
                aliases=("parsed", "accept"),
                shown="tools=[] parse",
            ),
            Choice(
                "drop",
                "the parser runs and drops every call",
                (
                    _engine(
                        "vLLM 0.34",
                        _Source.VLLM_STREAM,
                        "ChatStreamProcessor.step: "
                        "delta.tool_calls = [] when the request has no tools",
                    ),
                ),
                lossy=True,
                aliases=("dropped",),
                shown="tools=[] drop",
            ),
        ),
        default="reject",
    ),
    Policy(
        "arguments",
        "What may a JSON call body carry besides its dialect's own arguments object?",
        (
            Choice(
                "lenient",
                "also 'parameters' or 'arguments' (whichever is not its own), a JSON string "
                "holding an object, '' or missing as {}",
                (
                    _REFERENCE,
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "parse_base_json: act.get('parameters') or act.get('arguments', {})",
                    ),
                    _engine(
                        "vLLM llama3_json",
                        _Source.VLLM_LLAMA,
                        "the 'arguments' member, else 'parameters'",
                    ),
                ),
            ),
            Choice(
                "strict",
                "only the dialect's own key ('arguments' for Hermes) holding a JSON object",
                (
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "extract_tool_calls: "
                        "function_call['arguments'], a KeyError read as no call",
                    ),
                    _engine("llama.cpp", _Source.LLAMA_CPP_AUTO, "only the template's args_field"),
                ),
            ),
        ),
        default="lenient",
    ),
    Policy(
        "long_block",
        "A block longer than 1 MiB (the reference's bound): is it given up or read whole?",
        (
            Choice(
                "released",
                "past 1 MiB it is rejected (too_long) and what follows is text (policy 13)",
                (_REFERENCE,),
                aliases=("bounded",),
                shown="long blocks released at 1 MiB",
            ),
            Choice(
                "held",
                "buffered to its end whatever its length, then read as any block",
                (
                    _engine(
                        "SGLang base",
                        _Source.SGLANG_BASE,
                        "parse_streaming_increment: self._buffer += new_text, unbounded",
                    ),
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "extract_tool_calls_streaming reads current_text, the whole output",
                    ),
                ),
                aliases=("unbounded",),
                shown="long blocks held",
            ),
        ),
        default="released",
    ),
    Policy(
        "holdback",
        "What may be held back at the end of a chunk?",
        (
            Choice(
                "opener",
                "only a possible opening marker's beginning (policy 2)",
                (
                    _REFERENCE,
                    _engine(
                        "llama.cpp",
                        _Source.LLAMA_CPP,
                        "a partial opener is the until(opener) rule's NEED_MORE_INPUT",
                    ),
                ),
            ),
            Choice(
                "closer",
                "also any marker's beginning, a closing one ('</tool_call') included",
                (
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE_LEXER,
                        "IncrementalLexer holds a prefix of every literal terminal",
                    ),
                    _engine(
                        "SGLang hermes",
                        _Source.SGLANG_HERMES,
                        "_clean_normal_text holds a </tool_call> prefix in normal text",
                    ),
                ),
            ),
        ),
        default="opener",
    ),
    Policy(
        "whitespace",
        "Whitespace between text and a call, or between calls: is it shown?",
        (
            Choice(
                "kept",
                "shown as written",
                (
                    _REFERENCE,
                    _engine(
                        "SGLang hermes",
                        _Source.SGLANG_HERMES,
                        "streaming: the text before the opener passes as it is",
                    ),
                ),
                aliases=("keep",),
            ),
            Choice(
                "leading",
                "white space alone before the first call is not shown; the rest is",
                (
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE,
                        "_events_to_delta: drop_whitespace_only_content_before_tools",
                    ),
                ),
                lossy=True,
            ),
            Choice(
                "trimmed",
                "the white space next to a call is not shown",
                (
                    _engine(
                        "SGLang pythonic", _Source.SGLANG_PYTHONIC, "detect_and_parse: text.strip()"
                    ),
                    _engine(
                        "llama.cpp qwen3_coder",
                        _Source.LLAMA_CPP_QWEN3_CODER,
                        "p.space() after </tool_call>",
                    ),
                ),
                lossy=True,
                aliases=("trim", "stripped"),
            ),
        ),
        default="kept",
    ),
    Policy(
        "trailing_text",
        "Text after the first call: is it shown?",
        (
            Choice(
                "kept",
                "shown, between and after calls alike",
                (
                    _REFERENCE,
                    _engine(
                        "SGLang hermes",
                        _Source.SGLANG_HERMES,
                        "streaming keeps the normal text after a call",
                    ),
                ),
                aliases=("keep", "shown"),
            ),
            Choice(
                "dropped",
                "only the text before the first call is shown",
                (
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "extract_tool_calls_streaming: "
                        "sendable_idx = current_text.index(tool_call_start_token)",
                    ),
                    _engine(
                        "vLLM internlm",
                        _Source.VLLM_INTERNLM,
                        "once the call is sent, an empty delta",
                    ),
                ),
                lossy=True,
                aliases=("drop",),
            ),
        ),
        default="kept",
    ),
    Policy(
        "opener_newline",
        "Must a newline follow the opener where the dialect writes one ('<tool_call>\\n')?",
        (
            Choice(
                "optional",
                "the block is read with or without it",
                (
                    _REFERENCE,
                    _engine(
                        "vLLM hermes",
                        _Source.VLLM_HERMES,
                        "the body is text[json_start:json_end].strip()",
                    ),
                    _engine("SGLang hermes", _Source.SGLANG_HERMES, "bot_token = '<tool_call>'"),
                ),
            ),
            Choice(
                "required",
                "a block without it is text",
                (
                    _engine(
                        "SGLang qwen25",
                        _Source.SGLANG_QWEN25,
                        "bot_token = '<tool_call>\\n', eot_token = '\\n</tool_call>'",
                    ),
                ),
            ),
        ),
        default="optional",
    ),
    Policy(
        "typed_arguments",
        "Values of name/value bodies (Qwen3-Coder XML, GLM pairs) carry no JSON types: "
        "how are they typed?",
        (
            Choice(
                "schema",
                "by the tool's parameter schema; without one, text or its JSON reading",
                (
                    _REFERENCE,
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE,
                        "_fix_arg_types: coerce_to_schema_type",
                    ),
                    _engine(
                        "llama.cpp qwen3_coder",
                        _Source.LLAMA_CPP_QWEN3_CODER,
                        "the grammar admits schema-typed values only",
                    ),
                ),
            ),
            Choice(
                "look",
                "by what the value looks like (JSON, else text)",
                (
                    _engine(
                        "SGLang glm45",
                        _Source.SGLANG_GLM4,
                        "_get_value_type: 'Improved auto-detection type from value'",
                    ),
                ),
            ),
            Choice(
                "strings",
                "every value stays text",
                (
                    _engine(
                        "vLLM 0.34 parser engine",
                        _Source.VLLM_ENGINE,
                        "_fix_arg_types: 'Without a schema, values stay as strings'",
                    ),
                ),
                aliases=("text",),
            ),
        ),
        default="schema",
    ),
)


def _variant(dialect: Dialect, variant: Variant) -> Policy:
    """A dialect's variant as a policy: whether a parser reads that form (``read``, as the
    reference does) or shows it as text."""
    return Policy(
        f"{dialect.id}.{variant.id}",
        f"{dialect.id}: does the parser read {variant.what}?",
        (
            Choice(
                "read",
                "read as the dialect's block",
                (_REFERENCE, *(Engine(name, source) for name, source in variant.reads)),
            ),
            Choice(
                "text",
                "shown as written, as text",
                tuple(Engine(name, source) for name, source in variant.skips),
                aliases=("shown",),
            ),
        ),
        default="read",
    )


POLICIES: tuple[Policy, ...] = (
    *_CHOICES,
    *(_variant(d, v) for d in DIALECTS for v in d.variants),
)
BY_ID: dict[str, Policy] = {p.id: p for p in POLICIES}
DEFAULTS: dict[str, str] = {p.id: p.default for p in POLICIES}


def policy(policy_id: str, *, where: str = "policy") -> Policy:
    """The policy ``policy_id``; an unknown id is a one-line ``TcrError`` (did you mean)."""
    found = BY_ID.get(policy_id)
    if found is None:
        hint = did_you_mean(policy_id, BY_ID)
        raise TcrError(f"{where}: unknown policy {policy_id!r}{hint}; known: {', '.join(BY_ID)}")
    return found


@dataclass(frozen=True, slots=True)
class Policies:
    """The choices one detector is judged with: pinned (the claim's), read (from probes).

    ``chosen`` holds every choice that is not the reference's, or is pinned, as sorted
    ``(policy id, choice id)`` pairs; a policy not in it has the reference's choice.
    ``pinned`` names the policies the claim pins (enforced, never read); ``read`` says
    whether the others were read from probe messages.
    """

    chosen: tuple[tuple[str, str], ...] = ()
    pinned: frozenset[str] = frozenset()
    read: bool = field(default=False, compare=False)

    @classmethod
    def of(cls, value: object, *, where: str = "policies") -> Policies:
        """Pinned choices from a user's map ``{policy id: choice}`` (``None``: none)."""
        if value is None:
            return NONE
        if isinstance(value, Policies):
            return value
        if not isinstance(value, Mapping):
            raise TcrError(
                f"{where}: must be a map of policy id to choice, not {type(value).__name__}"
            )
        chosen: dict[str, str] = {}
        for key, choice in value.items():
            if not isinstance(key, str):
                raise TcrError(f"{where}: policy id {key!r} is not a string")
            if not isinstance(choice, str):
                raise TcrError(f"{where}: {key} is a {type(choice).__name__}, not a choice id")
            chosen[policy(key, where=where).id] = policy(key).choice(choice, where=where).id
        return cls(tuple(sorted(chosen.items())), frozenset(chosen))

    def choice(self, policy_id: str) -> str:
        """The choice for ``policy_id`` (the reference's when none is set)."""
        for pid, chosen in self.chosen:
            if pid == policy_id:
                return chosen
        return DEFAULTS[policy_id]

    def as_dict(self) -> dict[str, str]:
        """Every policy's choice."""
        return {p.id: self.choice(p.id) for p in POLICIES}

    def pinning(self, choices: Mapping[str, str]) -> Policies:
        """These choices with ``choices`` (validated) pinned over them."""
        given = Policies.of(choices)
        merged = {**dict(self.chosen), **dict(given.chosen)}
        return Policies(_kept(merged, self.pinned | given.pinned), self.pinned | given.pinned)

    def reading(self, choices: Mapping[str, str]) -> Policies:
        """These choices with ``choices`` read from probes over the policies not pinned."""
        merged = dict(self.chosen)
        for pid, chosen in choices.items():
            if pid not in self.pinned:
                merged[pid] = chosen
        return Policies(_kept(merged, self.pinned), self.pinned, read=True)

    def unpinned(self, policy_ids: Iterable[str]) -> Policies:
        """These choices with ``policy_ids`` back to the reference's, not pinned."""
        gone = set(policy_ids)
        merged = {k: v for k, v in self.chosen if k not in gone}
        return Policies(_kept(merged, self.pinned - gone), self.pinned - gone, self.read)

    @property
    def everything_default(self) -> bool:
        """Whether every choice is the reference's (nothing to read differently)."""
        return all(DEFAULTS[k] == v for k, v in self.chosen)

    def lossy(self) -> list[str]:
        """The policies whose choice here is lossy."""
        return [k for k, v in self.chosen if BY_ID[k].choice(v).lossy]

    def to_map(self) -> dict[str, dict[str, Any]]:
        """Each policy's choice as judged, for a JSON report: read from probes, pinned, or
        the reference's, and whether the choice loses text (``lossy``)."""
        lossy = self.lossy()
        return {
            pid: {
                "choice": choice,
                "pinned": pid in self.pinned,
                "read": self.read and pid not in self.pinned,
                "lossy": pid in lossy,
            }
            for pid, choice in self.as_dict().items()
        }

    def pinned_map(self) -> dict[str, str]:
        """The pinned choices, as a claim map states them."""
        return {k: v for k, v in self.chosen if k in self.pinned} | {
            k: DEFAULTS[k] for k in self.pinned if k not in dict(self.chosen)
        }

    def restated(self) -> dict[str, str]:
        """What a reproducer restates: every pinned or non-reference choice."""
        return dict(self.chosen)

    def options(self, *, skip: Iterable[str] = ()) -> list[str]:
        """``--policy ID=CHOICE`` for each choice a reproducer must restate."""
        left = set(skip)
        shown: list[str] = []
        for pid, chosen in self.chosen:
            if pid not in left:
                shown += ["--policy", f"{pid}={chosen}"]
        return shown

    def line(self) -> str:
        """The choices as a report's first line says them: those that are not the
        reference's and those pinned, in the registry's order, lossy ones marked
        ``(lossy)``, pinned ones ``(pinned)``, then that the rest are the reference's:
        ``undeclared accepted, arguments strict; the rest as the reference``."""
        chosen = dict(self.chosen)
        parts: list[str] = []
        for p in POLICIES:
            if p.id not in chosen:
                continue
            c = p.choice(chosen[p.id])
            said = c.shown or f"{p.id} {c.id}"
            if c.lossy:
                said += " (lossy)"
            if p.id in self.pinned:
                said += " (pinned)"
            parts.append(said)
        if not parts:
            return "every choice as the reference's (tcr policies)"
        if len(parts) == len(POLICIES):
            return ", ".join(parts)
        return ", ".join(parts) + "; the rest as the reference"


def _kept(merged: Mapping[str, str], pinned: frozenset[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in merged.items() if k in pinned or DEFAULTS[k] != v))


NONE = Policies()
REFERENCE = NONE  # the reference's choices, none pinned


def parse_policy_options(values: Iterable[str], *, where: str = "--policy") -> dict[str, str]:
    """``--policy ID=CHOICE`` values as a map, validated (a later one wins)."""
    chosen: dict[str, str] = {}
    for value in values:
        if not isinstance(value, str) or "=" not in value:
            raise TcrError(f"{where}: {value!r} is not ID=CHOICE (see tcr policies)")
        key, _, choice = value.partition("=")
        found = policy(key.strip(), where=where)
        chosen[found.id] = found.choice(choice.strip(), where=where).id
    return chosen


def as_json() -> list[dict[str, Any]]:
    """The registry as JSON data (``tcr policies --json``)."""
    return [
        {
            "id": p.id,
            "question": p.question,
            "default": p.default,
            "probed": p.probed,
            "choices": [
                {
                    "id": c.id,
                    "meaning": c.meaning,
                    "lossy": c.lossy,
                    "aliases": list(c.aliases),
                    "engines": [{"name": e.name, "source": e.source} for e in c.engines],
                }
                for c in p.choices
            ],
        }
        for p in POLICIES
    ]
