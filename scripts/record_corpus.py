"""Regenerate ``corpora/recorded/``: real streams from a real llama-server.

    python scripts/record_corpus.py [--out corpora/recorded] [--dialect ID ...]

Starts llama-server with SmolLM2-135M-Instruct on loopback (ARCHITECTURE.md §9) and
records, through ``tcr.recorder.record``, one stream per dialect of
``scripts/dialects.py`` (grammar-constrained, so the model writes that markup
and the server streams it split the way its tokenizer splits it), plus native
``tool_calls`` streams from a server started with a Hermes template. Each
dialect recording gets the expectation its grammar implies; then every
recording is replayed through the reference detector and must pass. With
``--dialect`` only those dialects' grammars are recorded (a new family's, say),
the other recordings and the native ones left as they are; with ``--native
TEMPLATE`` only that template's native streams (a family whose markup
llama-server parses itself).
"""

from __future__ import annotations

import argparse
import sys
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


def native_request(choice: str) -> dict[str, Any]:
    """The request that records native ``tool_calls`` deltas (server started with a template)."""
    return {
        "model": MODEL,
        "messages": NATIVE_MESSAGES,
        "tools": TOOL_SCHEMAS,
        "tool_choice": choice,
        "stream": True,
        **SAMPLING,
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


# Templates that make llama-server parse a family's markup itself (scripts/templates),
# with the stem of the native recordings each one gives.
NATIVE_TEMPLATES = {
    "hermes.jinja": ("native_tool_calls", "Hermes <tool_call>"),
    "seed_oss.jinja": ("native_seed_oss", "Seed-OSS <seed:tool_call>"),
    "minimax_m2.jinja": ("native_minimax_m2", "MiniMax M2 <minimax:tool_call>"),
    "gpt_oss.jinja": ("native_gpt_oss", "Harmony to=functions.NAME"),
    "longcat.jinja": ("native_longcat", "LongCat-Flash <longcat_tool_call>"),
    "step3.jinja": ("native_step3", "Step-3 <｜tool_calls_begin｜>"),
    "deepseek_v32.jinja": ("native_deepseek_v32", "DeepSeek V3.2 <｜DSML｜function_calls>"),
}


def record_native(server: Server, out: Path, template: str) -> list[Path]:
    stem, markup = NATIVE_TEMPLATES[template]
    caps = server.props().get("chat_template_caps", {})
    if not isinstance(caps, dict) or not caps.get("supports_tool_calls"):
        raise SystemExit(f"llama-server did not accept {template} for tool calls")
    paths = []
    for choice in ("auto", "required"):
        body = native_request(choice)
        note = f"native tool_calls deltas, tool_choice={choice}"
        if stem != "native_tool_calls":
            note += f", llama-server parsing {markup} ({template})"
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
