"""The vocabulary of the regression table: cases, expectations, models and message bodies.

A :class:`Case` is one regression: what the user asked, what the model wrote
(split the way its backend split it) and what the reference detector must make
of it. The tables themselves are in ``_seed_cases``, ``_policy_cases`` and
``_format_cases``; ``build_regressions`` joins and writes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._wire import Backend, engine_chunks, ndjson_ollama, sse_chat, sse_completion


def call(name: str, **arguments: object) -> dict[str, Any]:
    """One expected call: its name and its parsed arguments."""
    return {"name": name, "arguments": arguments}


@dataclass(frozen=True, slots=True)
class Expect:
    """What the user must be shown (``Text`` + ``Rejected.content``), the calls and reasoning."""

    text: str = ""
    calls: tuple[dict[str, Any], ...] = ()
    reasoning: str = ""

    def as_map(self) -> dict[str, Any]:
        return {"text": self.text, "calls": list(self.calls), "reasoning": self.reasoning}


@dataclass(frozen=True, slots=True)
class Case:
    """One regression: a recording file, the bug it pins, and the stream that shows it."""

    file: str
    bug: str  # short kebab-case name; policy cases start with "policy-N-"
    note: str  # one sentence: what went wrong where, citing the seed or the policy
    dialect: str  # the dialect id the output is (or nearly is) written in
    via: Backend
    ask: str  # the user's message
    chunks: tuple[str, ...]  # as the backend split it
    tools: tuple[str, ...] | None  # declared to the detector (None: any name)
    expect: Expect
    offered: tuple[str, ...] | None = None  # tools in the request, when not the declared ones
    system: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # more request fields
    finish: str = "stop"

    @property
    def kind(self) -> str:
        return self.via.wire.kind

    @property
    def text(self) -> str:
        return "".join(self.chunks)


# --- tokenizer-like splitting --------------------------------------------------------

# GPT-2 style pre-tokenisation: contractions, words (with a leading space or "_"),
# up to three digits, punctuation runs, white space.
_PRETOKEN = re.compile(
    r"'(?:[sdmt]|ll|ve|re)|(?: |_)?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|_+|\s+(?!\S)|\s+"
)
_LONG_WORD = 10  # longer words are split into sub-word pieces, as BPE merges stop short
_PIECE = 5


def tokens(text: str, *keep: str) -> tuple[str, ...]:
    """``text`` split roughly the way a BPE tokenizer streams it.

    ``keep`` lists the model's special tokens (``<tool_call>`` for Qwen,
    ``[TOOL_CALLS]`` for Mistral…): each arrives whole, as one token. The split
    is deterministic; the detector must not care about it anyway (policy 1).
    """
    if keep:
        special = re.compile("|".join(re.escape(k) for k in sorted(keep, key=len, reverse=True)))
        out: list[str] = []
        pos = 0
        for match in special.finditer(text):
            out += _words(text[pos : match.start()])
            out.append(match.group())
            pos = match.end()
        out += _words(text[pos:])
        return tuple(out)
    return tuple(_words(text))


def _words(text: str) -> list[str]:
    out: list[str] = []
    for match in _PRETOKEN.finditer(text):
        piece = match.group()
        while len(piece.strip()) > _LONG_WORD:
            cut = len(piece) - len(piece.lstrip()) + _PIECE
            out.append(piece[:cut])
            piece = piece[cut:]
        out.append(piece)
    return out


# --- models: special tokens arrive whole, everything else as BPE pieces ----------------

QWEN_TOKENS = ("<tool_call>", "</tool_call>")
QWEN3_TOKENS = (*QWEN_TOKENS, "<think>", "</think>")
GEMMA4_TOKENS = ("<|tool_call>", "<tool_call|>", '<|"|>')
MISTRAL_TOKENS = ("[TOOL_CALLS]", "[ARGS]")
LLAMA3_TOKENS = ("<|python_tag|>", "<|eom_id|>", "<|eot_id|>")
GLM_TOKENS = (*QWEN_TOKENS, "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
KIMI_K2_TOKENS = (
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
)
INTERNLM_TOKENS = ("<|action_start|>", "<|plugin|>", "<|interpreter|>", "<|action_end|>")

# llama-server's SmolLM2 tokenizer has no tool tokens: a grammar makes it spell
# <tool_call> out, and it streams as nine pieces (ARCHITECTURE.md §9).
SMOL_TOOL_CALL = ("<", "t", "oo", "l", "_", "c", "al", "l", ">")
SMOL_TOOL_CALL_END = ("</", "t", "oo", "l", "_", "c", "al", "l", ">")

SMOLLM2 = sse_chat("SmolLM2-135M-Instruct.Q4_1.gguf", ms_per_chunk=6.5)
QWEN25 = sse_chat("Qwen2.5-7B-Instruct-Q4_K_M.gguf")
QWEN25_NO_TEMPLATE = sse_chat("qwen2.5-7b-instruct")
QWEN25_SMALL = sse_chat("Qwen2.5-0.5B-Instruct-Q8_0.gguf", ms_per_chunk=7.0)
QWEN25_CODER = sse_chat("Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf")
QWEN3_8B = sse_chat("Qwen3-8B-Q4_K_M.gguf", ms_per_chunk=24.0)
R1_DISTILL = sse_chat("DeepSeek-R1-Distill-Qwen-7B-Q4_K_M.gguf")
HERMES3 = sse_chat("Hermes-3-Llama-3.1-8B.Q4_K_M.gguf", ms_per_chunk=25.0)
GLM45_AIR = sse_chat("GLM-4.5-Air-Q4_K_M.gguf", ms_per_chunk=48.0)
LLAMA32_1B = sse_chat("Llama-3.2-1B-Instruct-Q8_0.gguf", ms_per_chunk=9.0)
LLAMA32_3B = sse_chat("Llama-3.2-3B-Instruct-Q4_K_M.gguf", ms_per_chunk=13.0)
LLAMA31_8B = sse_chat("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ms_per_chunk=25.0)
GEMMA3 = sse_chat("gemma-3-12b-it-Q4_K_M.gguf", ms_per_chunk=34.0)
GEMMA4 = sse_chat("gemma-4-12b-it-Q4_K_M.gguf", ms_per_chunk=34.0)
MISTRAL_V03 = sse_chat("Mistral-7B-Instruct-v0.3-Q4_K_M.gguf")
MISTRAL_SMALL = sse_completion("Mistral-Small-3.2-24B-Instruct-2506-Q4_K_M.gguf")
OLLAMA_GEMMA3 = ndjson_ollama("gemma3:12b", ms_per_chunk=33.0)
OLLAMA_LLAMA32 = ndjson_ollama("llama3.2:3b", ms_per_chunk=14.0)
MLX_QWEN25 = engine_chunks("mlx-lm", "mlx-community/Qwen2.5-7B-Instruct-4bit")
MLX_QWEN3_CODER = engine_chunks("mlx-lm", "mlx-community/Qwen3-Coder-30B-A3B-Instruct-4bit")
MLX_LLAMA31 = engine_chunks("mlx-lm", "mlx-community/Meta-Llama-3.1-8B-Instruct-4bit")
LLAMA_CPP_PYTHON = engine_chunks(
    "llama-cpp-python", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ms_per_chunk=27.0
)
KIMI_K2 = engine_chunks("vllm", "moonshotai/Kimi-K2-Instruct", ms_per_chunk=30.0)
INTERNLM25 = engine_chunks("vllm", "internlm/internlm2_5-7b-chat", ms_per_chunk=18.0)
INTERN_S1 = engine_chunks("sglang", "internlm/Intern-S1", ms_per_chunk=28.0)
# SGLang with --stream-interval 1024: one chunk per ~1024 tokens.
SGLANG_QWEN3_CODER = engine_chunks(
    "sglang", "Qwen/Qwen3-Coder-30B-A3B-Instruct", ms_per_chunk=21_000.0
)


# --- message bodies ------------------------------------------------------------------


def as_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def hermes(name: str, **arguments: object) -> str:
    """A Hermes/Qwen ``<tool_call>`` block as Qwen2.5 writes it."""
    return f"<tool_call>\n{as_json({'name': name, 'arguments': arguments})}\n</tool_call>"


TIMES = "\N{MULTIPLICATION SIGN}"  # real UTF-8 in the stream, two bytes

WEATHER_PARIS = call("get_weather", city="Paris")
PARIS_JSON = as_json({"name": "get_weather", "arguments": {"city": "Paris"}})


def tools_in_prompt(name: str, *params: str) -> str:
    """A system prompt that describes one tool in prose, for models run without a tool template."""
    example = as_json({"name": name, "arguments": dict.fromkeys(params, "...")})
    return (
        f"You can call one tool, {name}({', '.join(params)}). To call it, reply with "
        f"{example} in a ```json code block."
    )


TOOLS_IN_PROMPT = tools_in_prompt("get_weather", "city")
