"""One realistic message per dialect (and per body variant), read from ``tcr.dialects``.

Each dialect's record holds its regression cases; this module only says how
each model's backend frames and splits a stream (its special tokens arrive whole).
A new family describes its cases' backend in its own module (``tcr.dialects.Model``);
``MODELS`` names the backends that the older cases share.
"""

from __future__ import annotations

from tcr.dialects import DIALECTS, Model, RegressionCase

from ._cases import (
    GEMMA4,
    GEMMA4_TOKENS,
    GLM45_AIR,
    GLM_TOKENS,
    HERMES3,
    INTERN_S1,
    INTERNLM25,
    INTERNLM_TOKENS,
    KIMI_K2,
    KIMI_K2_TOKENS,
    LLAMA3_TOKENS,
    LLAMA32_3B,
    LLAMA_CPP_PYTHON,
    MISTRAL_SMALL,
    MISTRAL_TOKENS,
    MISTRAL_V03,
    MLX_QWEN3_CODER,
    QWEN3_8B,
    QWEN3_TOKENS,
    QWEN25_CODER,
    QWEN_TOKENS,
    SMOLLM2,
    Case,
    Expect,
    tokens,
)
from ._wire import Backend, engine_chunks, ndjson_ollama, sse_chat

__all__ = ["FORMAT_CASES", "MODELS"]

# DeepSeek V3 / V3.1's tool-call markers (full-width bars, U+2581 word breaks).
_DEEPSEEK_TOKENS = tuple(
    f"<｜{word}｜>"
    for word in (
        "tool▁calls▁begin",
        "tool▁calls▁end",
        "tool▁call▁begin",
        "tool▁sep",
        "tool▁call▁end",
    )
)

# A case's model: the backend that streamed it and the tokens its tokenizer keeps whole.
MODELS: dict[str, tuple[Backend, tuple[str, ...]]] = {
    "gemma4": (GEMMA4, GEMMA4_TOKENS),
    "hermes3": (HERMES3, QWEN_TOKENS),
    "qwen3_coder_mlx": (MLX_QWEN3_CODER, QWEN_TOKENS),
    "glm45_air": (GLM45_AIR, GLM_TOKENS),
    "qwen25_coder": (QWEN25_CODER, QWEN_TOKENS),
    "mistral_v03": (MISTRAL_V03, MISTRAL_TOKENS),
    "mistral_small": (MISTRAL_SMALL, MISTRAL_TOKENS),
    # What vLLM's mistral parser reads for a v11+ tokenizer: no [ARGS] in it (mistral_v11).
    "mistral_small_vllm": (
        engine_chunks("vllm", "mistralai/Mistral-Small-3.2-24B-Instruct-2506", ms_per_chunk=22.0),
        ("[TOOL_CALLS]",),
    ),
    "llama_cpp_python": (LLAMA_CPP_PYTHON, LLAMA3_TOKENS),
    "llama32_3b": (LLAMA32_3B, LLAMA3_TOKENS),
    "qwen3_8b": (QWEN3_8B, QWEN3_TOKENS),
    "kimi_k2": (KIMI_K2, KIMI_K2_TOKENS),
    "internlm2": (INTERNLM25, INTERNLM_TOKENS),
    "intern_s1": (INTERN_S1, INTERNLM_TOKENS),
    # A grammar makes a model without the dialect's special tokens spell them out.
    "smollm2": (SMOLLM2, ()),
    "minimax_m2": (
        sse_chat("MiniMax-M2-Q4_K_M.gguf"),
        ("<minimax:tool_call>", "</minimax:tool_call>"),
    ),
    "deepseek_v3": (
        engine_chunks("vllm", "deepseek-ai/DeepSeek-V3-0324", ms_per_chunk=35.0),
        _DEEPSEEK_TOKENS,
    ),
    "deepseek_v31": (
        engine_chunks("sglang", "deepseek-ai/DeepSeek-V3.1", ms_per_chunk=33.0),
        (*_DEEPSEEK_TOKENS, "<think>", "</think>"),
    ),
    "seed_oss": (
        sse_chat("Seed-OSS-36B-Instruct-Q4_K_M.gguf"),
        ("<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>"),
    ),
    "jamba": (
        engine_chunks("vllm", "ai21labs/AI21-Jamba-Mini-1.7", ms_per_chunk=24.0),
        ("<tool_calls>", "</tool_calls>"),
    ),
    "granite": (
        engine_chunks("vllm", "ibm-granite/granite-3.0-8b-instruct", ms_per_chunk=18.0),
        ("<|tool_call|>",),
    ),
    "granite_20b_fc": (
        engine_chunks("vllm", "ibm-granite/granite-20b-functioncalling", ms_per_chunk=30.0),
        (),
    ),
    "phi4_mini": (engine_chunks("vllm", "microsoft/Phi-4-mini-instruct", ms_per_chunk=14.0), ()),
    "functiongemma": (
        engine_chunks("vllm", "google/functiongemma-270m-it", ms_per_chunk=9.0),
        ("<start_function_call>", "<end_function_call>", "<escape>"),
    ),
    "command_r7b": (
        sse_chat("c4ai-command-r7b-12-2024-Q4_K_M.gguf"),
        ("<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>"),
    ),
}


def _backend(model: str | Model) -> tuple[Backend, tuple[str, ...]]:
    """A case's backend: one of ``MODELS`` by name, or as its family module describes it."""
    if isinstance(model, str):
        return MODELS[model]
    if model.engine == "llama-server":
        backend = sse_chat(model.name, ms_per_chunk=model.ms_per_chunk)
    elif model.engine == "ollama":
        backend = ndjson_ollama(model.name, ms_per_chunk=model.ms_per_chunk)
    else:
        backend = engine_chunks(model.engine, model.name, ms_per_chunk=model.ms_per_chunk)
    return backend, model.special_tokens


def _case(dialect_id: str, case: RegressionCase) -> Case:
    backend, special = _backend(case.model)
    return Case(
        file=case.file,
        bug=case.bug,
        note=case.note,
        dialect=dialect_id,
        via=backend,
        ask=case.ask,
        chunks=tokens(case.text, *special),
        tools=case.tools,
        expect=Expect(
            text=case.shown,
            calls=tuple(call.as_map() for call in case.calls),
            reasoning=case.reasoning,
        ),
        offered=case.offered,
        system=case.system,
        extra=dict(case.extra),
    )


FORMAT_CASES: tuple[Case, ...] = tuple(_case(d.id, c) for d in DIALECTS for c in d.cases)
