"""Peak memory of ``tcr replay``, ``tcr show`` and ``tcr serve`` on a 50 MB recording.

    python benchmarks/bench_memory.py [--size-mb 50] [--save-json PATH] [--before PATH]
    python benchmarks/bench_memory.py --content-mb 50 [--before-tree DIR]

Writes an ``sse`` recording of OpenAI chat-completion chunks (plain text, a few
characters per event as engines send them, and a few native tool calls) with
``--size-mb`` MB of body to a temporary directory, then measures the peak
resident memory of fresh processes:

- ``replay``: ``tcr replay FILE`` with the default strategies;
- ``show``: ``tcr show FILE --frames 4``, its output thrown away;
- ``show --json``: ``tcr show FILE --json``, its output thrown away;
- ``serve``: ``tcr serve FILE --rechunk char --speed 0``, one client reading one
  streamed response to its end (``VmHWM`` of the server; ``VmRSS`` once it listens
  is the idle server);
- the constant: ``tcr replay`` of a small bundled recording (Python, tcr and its
  imports), which the replay target is counted from.

Peaks of replay and show are ``ru_maxrss`` of a child waited for by a fresh
helper process, so each is that command's own peak. Target (issue 14): replay
peaks under twice the decoded content plus a constant; show does not grow with
what it does not show. ``--save-json`` keeps this run's figures; ``--before``
adds a saved run (of the code before a change) to the table. Writes the section
"Reliability" of RESULTS.md, with the inputs the default test run tries on each
hostile-input surface (``INPUTS_TRIED``, from the tests' settings).

``--content-mb N`` measures instead the surfaces outside replay on a recording whose
*content* is N MB (events of 400 characters, as a long answer streams them; the
recording above holds 0.8 MB of content, which hid what grows with it, issue 36),
written at benchmark time, never committed: ``tcr show FILE --frames 4``, ``tcr
import`` of the same body as a dump, ``tcr record --endpoint`` of it from a local
upstream, and ``tcr serve FILE`` answering one client streamed (as recorded) and one
not streamed (``"stream": false``). ``--before-tree DIR`` runs each command a second
time with ``PYTHONPATH=DIR`` (a tree laid out as installed, e.g. the previous commit's
``git archive`` with the subpackage folders linked under ``tcr/``), for a before
column measured in the same run. Target: each at most twice the content above the
constant (``tcr replay`` of a small bundled recording). Writes the section "Memory
outside replay" of RESULTS.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_serve_memory
from _results import write_section

from tcr.corpora import bundled
from tcr.corpus import RecordingWriter, new_header

TITLE = "Reliability: hostile inputs tried, and peak memory on a 50 MB recording (bench_memory.py)"
TOKENS = ["The", " weather", " in", " Paris", " is", " sunny", ",", " 21", "°C", ".", "\n", " and"]
CALL_EVERY = 50_000  # events between two native tool calls

# (surface, inputs per default test run, where): the counts the tests' settings give;
# TCR_FUZZ_SCALE multiplies every count in CI (tests/corpus/fuzzing.py, .ci/run: 10).
INPUTS_TRIED = (
    (
        "recording reader: truncations of the 174 bundled recordings",
        "20,370 cut points",
        "tests/corpus/test_reader_hostile.py",
    ),
    ("recording reader: random truncations", "100", "tests/corpus/test_reader_hostile.py"),
    ("recording reader: byte flips", "200", "tests/corpus/test_reader_hostile.py"),
    (
        "recording reader: a small recording of each kind cut at every byte",
        "1,142 cut points",
        "tests/corpus/test_reader_hostile.py",
    ),
    (
        "recording reader: a small recording of each kind, every byte corrupted",
        "4,529 files",
        "tests/corpus/test_reader_hostile.py",
    ),
    ("SSE bodies, split anywhere", "200", "tests/stream/test_decoder_fuzz.py"),
    ("NDJSON bodies, split anywhere", "200", "tests/stream/test_decoder_fuzz.py"),
    ("arbitrary bytes, as SSE and as NDJSON", "200", "tests/stream/test_decoder_fuzz.py"),
    ("engine chunks with surrogates", "200", "tests/stream/test_decoder_fuzz.py"),
    ("HAR imports", "150", "tests/recorder/test_record_importers_hostile.py"),
    ("JSON lines imports", "150", "tests/recorder/test_record_importers_hostile.py"),
    ("curl dump imports", "150", "tests/recorder/test_record_importers_hostile.py"),
    ("importer reproducers (issue 14)", "14", "tests/recorder/test_record_importers_hostile.py"),
    (
        "redaction: planted secrets through tcr record",
        "40",
        "tests/recorder/test_record_secrets_fuzz.py",
    ),
    (
        "redaction: planted secrets through the proxy",
        "25",
        "tests/recorder/test_record_secrets_fuzz.py",
    ),
)

HELPER = r"""
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seconds = time.perf_counter() - started
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
print(json.dumps({"rc": done.returncode, "seconds": seconds, "peak_kb": peak_kb}))
"""


def _event(delta: dict[str, object]) -> bytes:
    chunk = {
        "id": "chatcmpl-8f2a",
        "object": "chat.completion.chunk",
        "created": 1732900000,
        "model": "qwen2.5-7b-instruct",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
    }
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def _tool_call(call: int) -> list[bytes]:
    arguments = json.dumps({"city": "Paris", "unit": "celsius", "call": call})
    head = {"index": call, "id": f"call_{call}", "type": "function"}
    first = {**head, "function": {"name": "get_weather", "arguments": ""}}
    pieces = [arguments[i : i + 8] for i in range(0, len(arguments), 8)]
    rest = [{"index": call, "function": {"arguments": piece}} for piece in pieces]
    return [_event({"tool_calls": [fragment]}) for fragment in (first, *rest)]


def write_recording(path: Path, size: int) -> dict[str, int]:
    """An SSE recording of about ``size`` body bytes: its frames, bytes and content chars."""
    frames = nbytes = chars = calls = 0
    with RecordingWriter(path, new_header("sse", labels={"note": "benchmark"})) as writer:
        writer.frame(0, _event({"role": "assistant", "content": ""}))
        while nbytes < size:
            if frames and frames % CALL_EVERY == 0:
                events = _tool_call(calls)
                calls += 1
            else:
                token = TOKENS[frames % len(TOKENS)]
                chars += len(token)
                events = [_event({"content": token})]
            for data in events:
                writer.frame(frames * 1_000_000, data)
                frames += 1
                nbytes += len(data)
        writer.frame(frames * 1_000_000, b"data: [DONE]\n\n")
    return {"frames": frames + 2, "bytes": nbytes, "chars": chars, "calls": calls}


def peak_of(command: list[str]) -> dict[str, float]:
    """Peak RSS (MiB) and seconds of one command, run by a fresh helper process."""
    out = subprocess.run(
        [sys.executable, "-c", HELPER, *command], check=True, capture_output=True, text=True
    ).stdout
    result = json.loads(out)
    return {"rc": result["rc"], "peak_mb": result["peak_kb"] / 1024, "seconds": result["seconds"]}


def serve_peak(path: Path) -> dict[str, float]:
    """One fresh ``tcr serve --rechunk char``, one client: the server's peak RSS (MiB)."""
    bench_serve_memory.RECORDING = path  # its measurement, on this recording
    return bench_serve_memory.measure(1)


def measure(path: Path) -> dict[str, dict[str, float]]:
    tcr = [sys.executable, "-m", "tcr.cli"]
    small = sorted(bundled())[0]
    return {
        "replay_small": peak_of([*tcr, "replay", str(small)]),
        "replay": peak_of([*tcr, "replay", str(path)]),
        "show": peak_of([*tcr, "show", str(path), "--frames", "4"]),
        "show_json": peak_of([*tcr, "show", str(path), "--json"]),
        "serve": serve_peak(path),
    }


# --- --content-mb: a recording whose content is large ----------------------------------------

CONTENT_TITLE = (
    "Memory outside replay: a recording with 50 MB of content (bench_memory.py --content-mb)"
)
PROSE = "The weather in Paris is sunny and warm today, with a light breeze from the west. "
PER_EVENT = 400  # characters of content per event

# An upstream for `tcr record --endpoint`: streams a dump (argv[1]) as its SSE body, one
# event per write, then ends; prints its port.
UPSTREAM = r"""
import asyncio, re, sys
from aiohttp import web
body = open(sys.argv[1], "rb").read()
events = [m.group() for m in re.finditer(rb"(?s).*?\n\n", body)]
async def chat(request):
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event in events:
        await response.write(event)
    await response.write_eof()
    return response
async def main():
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


def write_content_recording(path: Path, dump: Path, chars: int) -> dict[str, int]:
    """An SSE recording with ``chars`` characters of content, and its body as a dump."""
    text = PROSE * (PER_EVENT // len(PROSE) + 2)
    frames = total = nbytes = 0
    header = new_header("sse", labels={"note": "benchmark"})
    with RecordingWriter(path, header) as writer, dump.open("wb") as body:
        while total < chars:
            start = (frames * 7) % len(PROSE)
            piece = text[start : start + PER_EVENT]
            data = _event({"content": piece})
            writer.frame(frames * 1_000_000, data)
            body.write(data)
            frames, total, nbytes = frames + 1, total + len(piece), nbytes + len(data)
        writer.frame(frames * 1_000_000, b"data: [DONE]\n\n")
        body.write(b"data: [DONE]\n\n")
    return {"frames": frames + 1, "bytes": nbytes + 14, "chars": total}


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def tree_peak(command: list[str], tree: Path | None) -> dict[str, float]:
    """:func:`peak_of` with the code of ``tree`` (None: the installed tcr)."""
    out = subprocess.run(
        [sys.executable, "-c", HELPER, *command],
        check=True,
        capture_output=True,
        text=True,
        env=_env(tree),
        cwd=tempfile.gettempdir(),  # not the source tree: PYTHONPATH decides the code
    ).stdout
    result = json.loads(out)
    return {"rc": result["rc"], "peak_mb": result["peak_kb"] / 1024, "seconds": result["seconds"]}


def record_peak(dump: Path, out: Path, tree: Path | None) -> dict[str, float]:
    """``tcr record --endpoint`` of the dump, streamed by a local upstream."""
    upstream = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM, str(dump)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert upstream.stdout is not None
        port = int(upstream.stdout.readline())
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        command = ["record", "--endpoint", url, "--prompt", "hi", "--out", str(out)]
        return tree_peak([sys.executable, "-m", "tcr.cli", *command, "--timeout", "600"], tree)
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)


def _kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    assert match, status
    return int(match.group(1))


def _answer(port: int, stream: bool) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1200)
    body = json.dumps({"stream": stream, "messages": []})
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    total = 0
    while data := response.read(1 << 16):
        total += len(data)
    connection.close()
    return total


def serve_answers_peak(path: Path, tree: Path | None) -> dict[str, float]:
    """``tcr serve FILE``: idle, then one streamed answer, then one not streamed: the
    server's resident memory once it listens and its peak after each answer (MiB)."""
    command = [sys.executable, "-m", "tcr.cli", "serve", str(path), "--speed", "0", "--port", "0"]
    server = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(tree),
        cwd=tempfile.gettempdir(),
    )
    try:
        assert server.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        assert match, "tcr serve did not start"
        port = int(match.group(1))
        idle = _kib(server.pid, "VmRSS")
        started = time.perf_counter()
        _answer(port, stream=True)
        streamed = _kib(server.pid, "VmHWM")
        whole_bytes = _answer(port, stream=False)
        whole = _kib(server.pid, "VmHWM")
        seconds = time.perf_counter() - started
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=120)
    return {
        "idle_mb": idle / 1024,
        "streamed_mb": streamed / 1024,
        "peak_mb": whole / 1024,
        "answer_mb": whole_bytes / 1e6,
        "seconds": seconds,
    }


CONTENT_ROWS = {
    "constant": "`tcr replay` of a small bundled recording (the constant)",
    "show": "`tcr show FILE --frames 4`",
    "import": "`tcr import DUMP` (the same body as a dump)",
    "record": "`tcr record --endpoint URL` (a local upstream streaming the body)",
    "serve_streamed": "`tcr serve FILE`: idle, then one streamed answer (as recorded)",
    "serve_whole": '`tcr serve FILE`: then one `"stream": false` answer',
}


def measure_content(workdir: Path, chars: int, tree: Path | None) -> dict[str, dict[str, float]]:
    path, dump = workdir / "content.msgpack", workdir / "content.sse"
    tcr = [sys.executable, "-m", "tcr.cli"]
    small = sorted(bundled())[0]
    serve = serve_answers_peak(path, tree)
    return {
        "constant": tree_peak([*tcr, "replay", str(small)], tree),
        "show": tree_peak([*tcr, "show", str(path), "--frames", "4"], tree),
        "import": tree_peak([*tcr, "import", str(dump), "--out", str(workdir / "i.msgpack")], tree),
        "record": record_peak(dump, workdir / "r.msgpack", tree),
        "serve_streamed": {**serve, "peak_mb": serve["streamed_mb"]},
        "serve_whole": serve,
    }


def content_main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="tcr-bench-") as tmp:
        workdir = Path(tmp)
        written = write_content_recording(
            workdir / "content.msgpack", workdir / "content.sse", args.content_mb * 1_000_000
        )
        now = measure_content(workdir, written["chars"], None)
        before = (
            measure_content(workdir, written["chars"], args.before_tree)
            if args.before_tree
            else None
        )
    content_mb = written["chars"] / 1e6
    constant = now["constant"]["peak_mb"]
    table = [
        f"An SSE recording of {written['bytes'] / 1e6:.0f} MB of body: {written['frames']:,} "
        f"frames, {written['chars']:,} characters of content ({PER_EVENT} per event), written "
        "at benchmark time. Peaks are the resident memory of the whole process (a fresh one "
        "per row; for serve, the server's `VmHWM` after each answer, the idle server "
        f"{now['serve_whole']['idle_mb']:.0f} MB now, the recording loaded). Target: at most "
        f"twice the content ({2 * content_mb:.0f} MB) above the constant (for serve: above "
        "the idle server, what an answer costs).",
        "",
        "| command | before | now | now above the constant (serve: the idle server) | target "
        "| seconds now |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for key, name in CONTENT_ROWS.items():
        was = f"{before[key]['peak_mb']:.0f} MB" if before else "-"
        peak = now[key]["peak_mb"]
        above = peak - now[key].get("idle_mb", constant)
        met = "-" if key == "constant" else ("met" if above <= 2 * content_mb else "**not met**")
        table.append(
            f"| {name} | {was} | {peak:.0f} MB | {above:.0f} MB | {met} | "
            f"{now[key]['seconds']:.1f} s |"
        )
    body = "\n".join(table)
    write_section(CONTENT_TITLE.replace("50 MB", f"{args.content_mb} MB"), body)
    print(body)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--content-mb", type=int, help="measure show, import, record, serve on this much content"
    )
    parser.add_argument(
        "--before-tree", type=Path, help="with --content-mb: the code to measure before"
    )
    parser.add_argument("--size-mb", type=int, default=50, help="body bytes to write")
    parser.add_argument("--save-json", type=Path, help="keep this run's figures here")
    parser.add_argument("--before", type=Path, help="a run saved with --save-json, to compare")
    parser.add_argument("--keep", type=Path, help="also write the recording here")
    args = parser.parse_args(argv)
    if args.content_mb is not None:
        return content_main(args)

    with tempfile.TemporaryDirectory(prefix="tcr-bench-") as tmp:
        path = args.keep or Path(tmp) / "big.msgpack"
        written = write_recording(path, args.size_mb * 1_000_000)
        peaks = measure(path)
    if args.save_json:
        args.save_json.write_text(json.dumps({"recording": written, **peaks}, indent=1))
    before = json.loads(args.before.read_text()) if args.before else None
    content_mb = written["chars"] / 1e6
    table = [
        f"An SSE recording of {written['bytes'] / 1e6:.0f} MB of body: {written['frames']:,} "
        f"frames, {written['chars']:,} characters of content, {written['calls']} tool calls.",
        "",
        "| command | before | now | seconds now |",
        "|---|---|---|---|",
    ]
    names = {
        "replay_small": "`tcr replay` of a small bundled recording (the constant)",
        "replay": "`tcr replay FILE` (default strategies)",
        "show": "`tcr show FILE --frames 4`",
        "show_json": "`tcr show FILE --json`",
        "serve": "`tcr serve FILE --rechunk char`, 1 client",
    }
    for key, name in names.items():
        was = f"{before[key]['peak_mb']:.0f} MB" if before and key in before else "-"
        now = peaks[key]
        table.append(f"| {name} | {was} | {now['peak_mb']:.0f} MB | {now['seconds']:.1f} s |")
    over = peaks["replay"]["peak_mb"] - peaks["replay_small"]["peak_mb"]
    met = "met" if over <= 2 * content_mb else "**not met**"
    table += [
        "",
        f"Decoded content: {content_mb:.1f} MB. Peaks are resident memory of the whole "
        f"process. Replay peaks {over:.1f} MB over the constant, where the target allows "
        f"{2 * content_mb:.1f} MB (twice the content): {met}. The idle server (the "
        f"recording loaded, no client) holds {peaks['serve']['idle_mb']:.0f} MB.",
        "",
        "Inputs tried per hostile-input surface in the default test run (CI's, with "
        "`TCR_FUZZ_SCALE=10`, tries ten times as many: 52,758 cut points of the bundled "
        "recordings, and every bit flip and type byte at each byte of the small ones, "
        "40,568 files); each must give a clean result or one `TcrError` of one line:",
        "",
        "| surface | inputs | test |",
        "|---|---:|---|",
        *(f"| {surface} | {count} | `{test}` |" for surface, count, test in INPUTS_TRIED),
    ]
    write_section(TITLE, "\n".join(table))
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
