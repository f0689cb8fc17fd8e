"""The recording proxy against a direct connection: added latency per chunk and throughput.

    python benchmarks/bench_proxy.py [--quick]

Targets (ARCHITECTURE.md §17): against a local upstream streaming 10,000 small SSE events,
the proxy adds under 0.3 ms per chunk at p50 and under 2 ms at p99, and keeps
at least 90% of the direct throughput.

Three processes: the upstream of ``bench_recorder.py``, ``tcr record --proxy``
(recording every stream, as in use), and this client. Latency: each event
carries the ``time.monotonic_ns()`` of its write; the client notes its own on
receipt (CLOCK_MONOTONIC is one clock for every process of a machine). The
upstream paces events one per event-loop tick (~1 ms, asyncio's sleep
granularity), so each chunk travels alone, in five streams per side, direct
and proxied interleaved; the added latency is the proxy's percentile minus the
direct one. Throughput: the upstream writes as fast as it
can, the client reads with ``iter_any()``; events per second over many runs,
each proxied run right after a direct one, so the two see the same machine; the
ratio is the median of the pairs' ratios. Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from bench_recorder import bare_client, upstream

from tcr.corpus import read_recording

TITLE = "Recording proxy: latency and throughput against a direct connection (bench_proxy.py)"
TARGET_P50_MS = 0.3
TARGET_P99_MS = 2.0
TARGET_THROUGHPUT = 0.9
PROXY = "from tcr.commands.record import record; record()"
SEGMENTS = 5


@contextmanager
def proxy(upstream_url: str, out: Path) -> Iterator[str]:
    """``tcr record --proxy`` in a subprocess; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", PROXY, "--proxy", "127.0.0.1:0", "--upstream", upstream_url,
         "--out", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        assert banner.startswith("tcr record: proxying http://"), banner
        yield banner.split()[3]
    finally:
        process.terminate()
        process.wait(timeout=20)


async def latencies(url: str) -> list[int]:
    """Nanoseconds from each event's write upstream to its receipt here."""
    found: list[int] = []
    async with (
        aiohttp.ClientSession(auto_decompress=False) as session,
        session.post(url, json={}) as response,
    ):
        pending = b""
        async for data in response.content.iter_any():
            received = time.monotonic_ns()
            pending += data
            *events, pending = pending.split(b"\n\n")
            for item in events:
                if b'"t":' in item:
                    found.append(received - int(item.rsplit(b'"t":', 1)[1].rstrip(b"}")))
    return found


def percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, no RESULTS.md")
    opts = parser.parse_args()
    events = 1_000 if opts.quick else 10_000
    runs = 5 if opts.quick else 21
    with upstream() as base, tempfile.TemporaryDirectory() as tmp, proxy(base, Path(tmp)) as via:
        paced = f"/v1/chat/completions?n={events // SEGMENTS}&tick_ms=1"
        direct_lat: list[int] = []
        proxy_lat: list[int] = []
        for _ in range(SEGMENTS):  # interleaved, so both sides see the same machine
            direct_lat += asyncio.run(latencies(base + paced))
            proxy_lat += asyncio.run(latencies(via + paced))
        fast = f"/v1/chat/completions?n={events}"
        direct_rates, proxy_rates = [], []
        for _ in range(runs):
            for target, rates in ((base, direct_rates), (via, proxy_rates)):
                _, _, seconds = asyncio.run(bare_client(target + fast, merge=True))
                rates.append((events + 1) / seconds)
        time.sleep(0.5)
        recordings = [read_recording(path) for path in sorted(Path(tmp).glob("*.msgpack"))]
    complete = sum(r.complete for r in recordings)
    frames_ok = all(len(r.frames) >= 1 for r in recordings)
    rows = [(name, fraction, percentile(direct_lat, fraction), percentile(proxy_lat, fraction))
            for name, fraction in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))]  # fmt: skip
    added = {name: via_ms - direct_ms for name, _, direct_ms, via_ms in rows}
    direct_rate, proxy_rate = statistics.median(direct_rates), statistics.median(proxy_rates)
    ratio = statistics.median(p / d for p, d in zip(proxy_rates, direct_rates, strict=True))
    met = (
        added["p50"] < TARGET_P50_MS
        and added["p99"] < TARGET_P99_MS
        and ratio >= TARGET_THROUGHPUT
        and complete == len(recordings) == runs + SEGMENTS
        and frames_ok
    )
    lines = [
        f"### Latency per chunk: {events:,} events, one per ~1 ms tick",
        "",
        "| | direct | via proxy | added |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {direct_ms:.3f} ms | {via_ms:.3f} ms | **{via_ms - direct_ms:.3f} ms** |"
            for name, _, direct_ms, via_ms in rows
        ),
        "",
        f"Targets: added p50 under {TARGET_P50_MS} ms, p99 under {TARGET_P99_MS} ms.",
        "",
        f"### Throughput: {events:,} events as fast as the upstream writes, {runs} runs each",
        "",
        "| | median events/s | best events/s |",
        "|---|---:|---:|",
        f"| direct (baseline) | {direct_rate:,.0f} | {max(direct_rates):,.0f} |",
        f"| via proxy, recording | {proxy_rate:,.0f} | {max(proxy_rates):,.0f} |",
        "",
        f"Proxy keeps **{ratio:.0%}** of the direct throughput (median of the "
        f"{runs} pairs' ratios; target at least "
        f"{TARGET_THROUGHPUT:.0%}). The proxy recorded {len(recordings)} streams, "
        f"{complete} complete. All targets {'met' if met else 'NOT met'}.",
        "",
        f"Machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end "
        "(upstream, proxy and client are three busy processes).",
    ]
    report = "\n".join(lines)
    print(report)
    print(json.dumps({"added_ms": added, "throughput_ratio": ratio}))
    if not opts.quick:
        write_section(TITLE, report)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
