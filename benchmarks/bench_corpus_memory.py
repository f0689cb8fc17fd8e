"""Peak memory of streaming a 100 MB recording, against a baseline in the same run.

    python benchmarks/bench_corpus_memory.py [--size-mb 100]

Writes an ``sse`` recording of realistic chat-completion chunks to a temporary
directory, then measures the peak RSS (``ru_maxrss``) of fresh subprocesses:

- ``baseline``: only imports ``tcr.corpus``;
- ``stream``: reads every frame with ``RecordingReader``, summing their bytes;
- ``load``: ``read_recording`` (every frame in one list), for scale only;
- ``control``: only holds 32 MiB, to show the instrument sees 32 MiB.

Target (ARCHITECTURE.md §3, "readers stream"): ``stream`` stays under 64 MB above the
baseline. At the default size, the section "Corpus: reading a 100 MB recording"
of RESULTS.md is replaced with this run's figures. Exit status 1 if the target
is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.corpus import RecordingWriter, new_header

TITLE = "Corpus: reading a 100 MB recording"
TARGET_MB = 64
RUNS = 3
TOKENS = ["The", " weather", " in", " Paris", " is", " sunny", ",", " 21", "°C", ".", "\n", " <"]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from tcr.corpus import RecordingReader, read_recording
mode, path = sys.argv[1], Path(sys.argv[2])
started = time.perf_counter()
frames = nbytes = 0
if mode == "stream":
    with RecordingReader(path) as reader:
        for frame in reader.frames():
            frames += 1
            nbytes += len(frame.data)
        assert reader.end is not None and reader.end["complete"], reader.end
elif mode == "control":
    held = bytearray(32 << 20)  # zero-filled, so every page is touched
elif mode == "load":
    recording = read_recording(path)
    frames = len(recording.frames)
    nbytes = sum(len(frame.data) for frame in recording.frames)
seconds = time.perf_counter() - started
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(json.dumps({"frames": frames, "bytes": nbytes, "seconds": seconds, "peak_kb": peak_kb}))
"""


def sse_frame(i: int) -> bytes:
    token = json.dumps(TOKENS[i % len(TOKENS)])
    return (
        'data: {"id":"chatcmpl-8f2a","object":"chat.completion.chunk","created":1732900000,'
        f'"model":"qwen2.5-7b-instruct","choices":[{{"index":0,"delta":{{"content":{token}}},'
        '"logprobs":null,"finish_reason":null}]}\n\n'
    ).encode()


def write_recording_of(path: Path, size: int) -> tuple[int, int, float]:
    started = time.perf_counter()
    frames = nbytes = 0
    with RecordingWriter(path, new_header("sse", labels={"note": "benchmark"})) as writer:
        while nbytes < size:
            data = sse_frame(frames)
            writer.frame(frames * 25_000_000, data)
            frames += 1
            nbytes += len(data)
    return frames, nbytes, time.perf_counter() - started


def run_child(mode: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def median_run(mode: str, path: Path) -> dict[str, float]:
    runs = [run_child(mode, path) for _ in range(RUNS)]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100, help="frame bytes to write")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="tcr-bench-") as tmp:
        path = Path(tmp) / "big.msgpack"
        frames, nbytes, write_s = write_recording_of(path, args.size_mb * 1_000_000)
        file_mb = path.stat().st_size / 1e6
        base = median_run("baseline", path)
        stream = median_run("stream", path)
        load = median_run("load", path)
        control = median_run("control", path)

    assert stream["frames"] == load["frames"] == frames, (stream, load, frames)
    assert stream["bytes"] == load["bytes"] == nbytes, (stream, load, nbytes)

    def mb(kb: float) -> float:
        return kb / 1024

    above = mb(stream["peak_kb"] - base["peak_kb"])
    passed = above < TARGET_MB
    rows = [
        ("baseline: import tcr.corpus", base, ""),
        ("RecordingReader, every frame", stream, f"{file_mb / stream['seconds']:.0f} MB/s"),
        ("read_recording (one list; for scale)", load, f"{file_mb / load['seconds']:.0f} MB/s"),
        ("control: holds 32 MiB, reads nothing", control, ""),
    ]
    table = [
        "| process | peak RSS | above baseline | time | rate |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, run, rate in rows:
        extra = "" if run is base else f"{mb(run['peak_kb'] - base['peak_kb']):.1f} MB"
        table.append(
            f"| {name} | {mb(run['peak_kb']):.1f} MB | {extra} | {run['seconds']:.2f} s | {rate} |"
        )
    body = "\n".join(
        [
            "Written by `benchmarks/bench_corpus_memory.py`. An `sse` recording of "
            f"{frames:,} frames ({nbytes / 1e6:.0f} MB of SSE bytes, {file_mb:.0f} MB on disk; "
            f"written with a flush per frame in {write_s:.1f} s), read in fresh subprocesses; "
            f"peak RSS is `ru_maxrss`, median of {RUNS} runs.",
            "",
            *table,
            "",
            f"Target: streaming stays under {TARGET_MB} MB above the baseline: "
            f"**{above:.1f} MB, {'met' if passed else 'MISSED'}**.",
        ]
    )
    print(body)
    if args.size_mb == 100:  # the section's title promises 100 MB
        write_section(TITLE, body)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
