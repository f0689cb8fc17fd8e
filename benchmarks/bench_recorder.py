"""Recorder throughput: ``record()`` against a local upstream writing SSE events as
fast as it can.

    python benchmarks/bench_recorder.py [--quick]

Target (ARCHITECTURE.md §17): the recorder keeps up with at least 50,000 chunks per second,
with arrival times in order and no reads merged by the recorder itself: every
event the upstream wrote (one HTTP chunk each) is at least one frame. Measured
beside a baseline in the same run: a bare aiohttp client reading the same
stream one chunk at a time, recording nothing. For contrast, the same bare
client with ``iter_any()``, which merges whatever is buffered into one read.

The upstream is an aiohttp server in a subprocess (``--serve`` runs it alone);
``bench_proxy.py`` uses it too. Each event carries the ``time.monotonic_ns()``
of its write (CLOCK_MONOTONIC is one clock for all processes of a machine).
Exit status 1 if the target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import aiohttp
from _results import write_section
from aiohttp import web

from tcr.corpus import RecordingReader
from tcr.recorder import record

TITLE = "Recorder: keeping up with a fast local upstream (bench_recorder.py)"
TARGET_CHUNKS_PER_SECOND = 50_000
DONE = b"data: [DONE]\n\n"


def event(index: int) -> bytes:
    return b'data: {"i":%d,"t":%d}\n\n' % (index, time.monotonic_ns())


async def _stream(request: web.Request) -> web.StreamResponse:
    """``n`` events; with ``tick_ms``, one event per event-loop tick of that length
    (asyncio sleeps in whole milliseconds), else as fast as the server can write."""
    count = min(int(request.query.get("n", 10_000)), 10_000_000)
    tick = float(request.query.get("tick_ms", 0)) / 1000
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for index in range(count):
        if tick:
            await asyncio.sleep(tick)
        await response.write(event(index))
    await response.write(DONE)
    await response.write_eof()
    return response


async def _serve() -> None:
    app = web.Application()
    app.router.add_route("*", "/v1/chat/completions", _stream)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()


@contextmanager
def upstream() -> Iterator[str]:
    """The upstream in a subprocess; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


async def bare_client(url: str, *, merge: bool = False) -> tuple[int, int, float]:
    """Reads, bytes and seconds of reading ``url`` without recording."""
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        started = time.perf_counter()
        async with session.post(url, json={}) as response:
            reads = nbytes = 0
            if merge:
                async for data in response.content.iter_any():
                    reads, nbytes = reads + 1, nbytes + len(data)
            else:
                while True:
                    data, end_of_chunk = await response.content.readchunk()
                    if data:
                        reads, nbytes = reads + 1, nbytes + len(data)
                    elif not end_of_chunk:
                        break
        return reads, nbytes, time.perf_counter() - started


def recorded_run(url: str, folder: Path) -> tuple[int, int, float, bool]:
    """Frames, bytes and seconds of ``record()``, and whether its times are in order."""
    path = folder / "run.msgpack"
    started = time.perf_counter()
    result = asyncio.run(record(url, {}, path))
    seconds = time.perf_counter() - started
    assert result.complete, result.error
    with RecordingReader(path) as reader:
        times = [frame.t_ns for frame in reader.frames()]
    ordered = all(a <= b for a, b in itertools.pairwise(times))
    return result.frame_count, result.byte_count, seconds, ordered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, no RESULTS.md")
    parser.add_argument("--serve", action="store_true", help="run the upstream alone")
    opts = parser.parse_args()
    if opts.serve:
        asyncio.run(_serve())
        return
    events = 50_000 if opts.quick else 200_000
    runs = 3
    chunks = events + 1  # and [DONE]
    bare, merged, recorded = [], [], []
    with upstream() as base, tempfile.TemporaryDirectory() as tmp:
        url = f"{base}/v1/chat/completions?n={events}"
        for _ in range(runs):
            bare.append(asyncio.run(bare_client(url)))
            merged.append(asyncio.run(bare_client(url, merge=True)))
            recorded.append(recorded_run(url, Path(tmp)))
    bare_rate = statistics.median(chunks / seconds for _, _, seconds in bare)
    rate = statistics.median(chunks / seconds for _, _, seconds, _ in recorded)
    frames = min(frames for frames, _, _, _ in recorded)
    ordered = all(ok for _, _, _, ok in recorded)
    same_bytes = {nbytes for _, nbytes, _, _ in recorded} == {n for _, n, _ in bare}
    merged_reads = statistics.median(reads for reads, _, _ in merged)
    met = rate >= TARGET_CHUNKS_PER_SECOND and frames >= chunks and ordered and same_bytes
    report = "\n".join(
        [
            f"An aiohttp upstream in a subprocess writes {events:,} small SSE events "
            f"(~{len(event(events)):,} bytes, one HTTP chunk each) as fast as it can; "
            f"median of {runs} runs.",
            "",
            "| reader | reads | chunks/s | vs bare |",
            "|---|---:|---:|---:|",
            f"| bare aiohttp, `readchunk()` (baseline) | {bare[0][0]:,} | "
            f"{bare_rate:,.0f} | 1.00x |",
            f"| bare aiohttp, `iter_any()` (merges) | {merged_reads:,.0f} | "
            f"{statistics.median(chunks / s for _, _, s in merged):,.0f} | |",
            f"| `tcr.recorder.record()` | {frames:,} | {rate:,.0f} | {rate / bare_rate:.2f}x |",
            "",
            f"Target at least {TARGET_CHUNKS_PER_SECOND:,} chunks/s: **{rate:,.0f}**, "
            f"{'met' if met else 'MISSED'}. Frames ≥ chunks written ({frames:,} ≥ {chunks:,}: "
            f"no read merged; a chunk split across TCP segments is two reads), arrival times "
            f"in order: **{'yes' if ordered else 'NO'}**, bytes identical to the bare "
            f"client's: **{'yes' if same_bytes else 'NO'}**.",
            "",
            f"Machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end.",
        ]
    )
    print(report)
    if not opts.quick:
        write_section(TITLE, report)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
