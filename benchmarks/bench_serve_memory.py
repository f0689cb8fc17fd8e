"""Peak memory of ``tcr serve --rechunk char`` on the 2 MB policy-13 recording, 1 and 4 clients.

    python benchmarks/bench_serve_memory.py [--save-json PATH] [--before PATH]
    python benchmarks/bench_serve_memory.py --stalled 5 [--before-tree DIR]

For each client count, starts ``tcr serve RECORDING --rechunk char --speed 0
--port 0`` in a fresh process, notes its resident memory once it listens, then
has that many clients (threads of this process) each read one streamed chat
completion to its end at the same time, and reads the server's peak resident
memory (``VmHWM`` of ``/proc/PID/status``) before stopping it. The recording
holds 1.06 million characters of content, so ``char`` makes about a million
SSE events per response.

Target (issue 14): memory per client does not grow with the recording: the
peak with 4 clients stays under 64 MB above the idle server. ``--save-json``
keeps this run's figures; ``--before`` adds a saved run (e.g. of the code
before a change) to the table. Writes the section "Serve: peak memory with
--rechunk char" of RESULTS.md; exit status 1 if the target is missed.

``--stalled N`` measures instead N clients that send their request and never read
(issue 36: five grew a server by 700 MB, kept after they left): the server's
resident memory idle, once its writes to them have stopped (it settles), and after
they closed their connections; ``--before-tree DIR`` measures a second server with
``PYTHONPATH=DIR`` (another tree's code) in the same run. Target: each such client
costs at most a write buffer, and nothing is kept after it leaves. Writes the
section "Serve: clients that do not read".
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

TITLE = "Serve: peak memory with --rechunk char (bench_serve_memory.py)"
RECORDING = Path(__file__).parents[1] / "corpora/regressions/policy_13_block_too_long.msgpack"
CLIENTS = (1, 4)
TARGET_MB = 64


def _kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    assert match, status
    return int(match.group(1))


def _read_stream(port: int, received: list[int]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"stream": True, "messages": []})
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200, response.status
    total = 0
    while data := response.read(1 << 16):
        total += len(data)
    received.append(total)
    connection.close()


def measure(clients: int) -> dict[str, float]:
    """One fresh server, ``clients`` concurrent streams: idle and peak RSS (MiB), seconds."""
    command = [sys.executable, "-m", "tcr.cli", "serve", str(RECORDING), "--rechunk", "char"]
    server = subprocess.Popen(
        [*command, "--speed", "0", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        assert match, "tcr serve did not start"
        idle = _kib(server.pid, "VmRSS")
        received: list[int] = []
        threads = [
            threading.Thread(target=_read_stream, args=(int(match.group(1)), received))
            for _ in range(clients)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        assert len(received) == clients and len(set(received)) == 1, received
        peak = _kib(server.pid, "VmHWM")
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=60)
    return {
        "clients": clients,
        "idle_mb": idle / 1024,
        "peak_mb": peak / 1024,
        "seconds": seconds,
        "body_mb": received[0] / 1e6,
    }


STALLED_TITLE = "Serve: clients that do not read (bench_serve_memory.py --stalled)"


def _settled_rss(pid: int, polls: int = 10) -> int:
    """The server's ``VmRSS`` (KiB) once it has not moved by 1 MiB for ``polls`` looks."""
    seen, same = _kib(pid, "VmRSS"), 0
    while same < polls:
        time.sleep(0.5)
        now = _kib(pid, "VmRSS")
        seen, same = now, same + 1 if abs(now - seen) < 1024 else 0
    return seen


def measure_stalled(clients: int, tree: Path | None = None) -> dict[str, float]:
    """``clients`` that never read: the server's RSS (MiB) idle, stalled, after they left."""
    env = dict(os.environ, **({"PYTHONPATH": str(tree)} if tree else {}))
    command = [sys.executable, "-m", "tcr.cli", "serve", str(RECORDING), "--rechunk", "char"]
    server = subprocess.Popen(
        [*command, "--speed", "0", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    sockets: list[socket.socket] = []
    try:
        assert server.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        assert match, "tcr serve did not start"
        idle = _kib(server.pid, "VmRSS")
        body = json.dumps({"stream": True, "messages": []}).encode()
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        for _ in range(clients):
            sock = socket.create_connection(("127.0.0.1", int(match.group(1))))
            sock.sendall(request)  # and never reads
            sockets.append(sock)
        stalled = _settled_rss(server.pid)
        for sock in sockets:
            sock.close()
        sockets.clear()
        left = _settled_rss(server.pid)
        peak = _kib(server.pid, "VmHWM")
    finally:
        for sock in sockets:
            sock.close()
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=120)
    return {
        "clients": clients,
        "idle_mb": idle / 1024,
        "stalled_mb": stalled / 1024,
        "left_mb": left / 1024,
        "peak_mb": peak / 1024,
    }


def stalled_main(clients: int, tree: Path | None) -> int:
    runs = [("now", measure_stalled(clients))]
    if tree is not None:
        runs.insert(0, ("before", measure_stalled(clients, tree)))
    table = [
        "| code | clients | idle server | writes stopped | after they left | peak |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {label} | {run['clients']:.0f} | {run['idle_mb']:.0f} MB | "
            f"{run['stalled_mb']:.0f} MB | {run['left_mb']:.0f} MB | {run['peak_mb']:.0f} MB |"
            for label, run in runs
        ),
    ]
    now = runs[-1][1]
    per_client = (now["stalled_mb"] - now["idle_mb"]) / clients
    body = "\n".join(
        [
            f"`tcr serve {RECORDING.relative_to(RECORDING.parents[2])} --rechunk char --speed 0`, "
            f"{clients} clients that each send a streamed request and never read (a million "
            "writes each); resident memory (`VmRSS`) once it stops moving.",
            "",
            *table,
            "",
            f"Now {per_client:.1f} MB per client that does not read, above the idle server: "
            "its writes stop when the socket's buffers are full (aiohttp's `drain`), and "
            "what it held goes when it leaves.",
        ]
    )
    print(body)
    write_section(STALLED_TITLE, body)
    return 0


def _rows(label: str, runs: list[dict[str, float]]) -> list[str]:
    return [
        f"| {label} | {run['clients']:.0f} | {run['idle_mb']:.0f} MB | {run['peak_mb']:.0f} MB | "
        f"{run['peak_mb'] - run['idle_mb']:.0f} MB | {run['body_mb']:.0f} MB | "
        f"{run['seconds']:.1f} s |"
        for run in runs
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save-json", type=Path, help="keep this run's figures here")
    parser.add_argument("--before", type=Path, help="a run saved with --save-json, to compare")
    parser.add_argument(
        "--before-label", default="before", help="what the --before run was (its code)"
    )
    parser.add_argument("--stalled", type=int, help="measure this many clients that never read")
    parser.add_argument("--before-tree", type=Path, help="with --stalled: the code before")
    args = parser.parse_args(argv)
    if args.stalled:
        return stalled_main(args.stalled, args.before_tree)

    runs = [measure(clients) for clients in CLIENTS]
    if args.save_json:
        args.save_json.write_text(json.dumps(runs, indent=1))
    table = [
        "| code | clients | idle server | peak | above idle | body per client | time |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    if args.before:
        table += _rows(args.before_label, json.loads(args.before.read_text()))
    table += _rows("now", runs)
    above = runs[-1]["peak_mb"] - runs[-1]["idle_mb"]
    passed = above < TARGET_MB
    body = "\n".join(
        [
            f"`tcr serve {RECORDING.relative_to(RECORDING.parents[2])} --rechunk char --speed 0`, "
            "a fresh server per row, its clients reading one streamed chat completion each "
            "at the same time; peak is the server's `VmHWM`, idle its `VmRSS` once it listens.",
            "",
            *table,
            "",
            f"Target: with {CLIENTS[-1]} clients, under {TARGET_MB} MB above the idle server: "
            f"**{above:.0f} MB, {'met' if passed else 'MISSED'}**. What a client holds is "
            "each channel's text and 256 writes: the recording is decoded as its writes "
            "are made (once before, to find each channel's text), and its chunking is "
            "cut as it is sent (`Strategy.nth`).",
        ]
    )
    print(body)
    write_section(TITLE, body)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
