"""Crash safety in real processes: a recorder killed with SIGKILL leaves a readable
partial recording; Ctrl-C and SIGTERM close it as interrupted, with the reason."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from record_upstreams import STALL_SECONDS, Upstream, llm_app, openai_events

from tcr.corpus import read_recording
from tcr.errors import CorpusError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SLOW = "/v1/chat/completions?n=400&delay=0.02"  # 8 s if never interrupted
RECORD_CLI = "from tcr.commands.record import record; record()"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def wait_for_frames(path: Path, count: int, process: subprocess.Popen[bytes]) -> int:
    """Poll the file a recorder is writing until it holds ``count`` frames."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if path.exists():
            try:
                frames = len(read_recording(path).frames)
            except CorpusError:  # the header itself is still being written
                frames = 0
            if frames >= count:
                return frames
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {count} frames")


def headers_then_silence() -> web.Application:
    """An upstream that sends the status and headers, then no body byte."""

    async def stall(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            status=201, headers={"Content-Type": "text/event-stream", "X-Api-Key": "hidden"}
        )
        await response.prepare(request)  # sends the status line and headers
        await asyncio.sleep(STALL_SECONDS)
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", stall)
    return app


def test_sigkill_before_the_first_body_byte_keeps_the_status_and_headers(
    tmp_path: Path,
) -> None:
    out = tmp_path / "early.msgpack"
    with Upstream(headers_then_silence()) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", RECORD_CLI, "--endpoint", server.url + "/v1/chat/completions",
             "--prompt", "hi", "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + STALL_SECONDS / 2
        while not out.exists() and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
        process.kill()
        process.wait(timeout=10)
    recording = read_recording(out)
    assert recording.incomplete_reason == "interrupted: no trailer"
    assert recording.frames == []
    response = recording.header["response"]
    assert response["status"] == 201
    assert response["headers"]["content-type"] == "text/event-stream"
    assert response["headers"]["x-api-key"] == "<redacted>"
    assert recording.header["request"]["messages"] == [{"role": "user", "content": "hi"}]


def test_sigkill_mid_stream_leaves_a_readable_partial_recording(
    upstream: Upstream, tmp_path: Path
) -> None:
    out = tmp_path / "killed.msgpack"
    script = (
        "import sys; from tcr.recorder import record_sync; "
        "record_sync(sys.argv[1], {'messages': []}, sys.argv[2])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, upstream.url + SLOW, str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = wait_for_frames(out, 5, process)
    process.kill()
    process.wait(timeout=10)
    recording = read_recording(out)
    assert recording.end is None and not recording.complete
    assert recording.incomplete_reason == "interrupted: no trailer"
    assert len(recording.frames) >= seen
    received = b"".join(frame.data for frame in recording.frames)  # type: ignore[misc]
    assert b"".join(openai_events(400)).startswith(received)


@pytest.mark.parametrize(
    ("sig", "reason"), [(signal.SIGINT, "Ctrl-C (SIGINT)"), (signal.SIGTERM, "SIGTERM")]
)
def test_a_signal_closes_the_recording_as_interrupted_and_exits_2(
    upstream: Upstream, tmp_path: Path, sig: signal.Signals, reason: str
) -> None:
    out = tmp_path / "r.msgpack"
    process = subprocess.Popen(
        [sys.executable, "-c", RECORD_CLI, "--endpoint", upstream.url + SLOW,
         "--prompt", "hi", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    seen = wait_for_frames(out, 5, process)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 2
    assert stderr.decode().strip() == (
        f"tcr record: {upstream.url + SLOW}: interrupted by {reason}; "
        f"what arrived is kept in {out} (incomplete)"
    )
    recording = read_recording(out)
    assert recording.incomplete_reason == f"interrupted: {reason}"
    assert len(recording.frames) >= seen


def test_proxy_command_records_until_ctrl_c_and_exits_0(upstream: Upstream, tmp_path: Path) -> None:
    import asyncio

    import aiohttp

    process = subprocess.Popen(
        [sys.executable, "-c", RECORD_CLI, "--proxy", "127.0.0.1:0", "--upstream", upstream.url,
         "--out", str(tmp_path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    assert process.stderr is not None
    banner = process.stderr.readline().decode()
    assert banner.startswith("tcr record: proxying http://127.0.0.1:"), banner
    url = banner.split()[3]

    async def client() -> bytes:
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{url}/v1/chat/completions?n=3", json={}) as response,
        ):
            return await response.read()

    assert asyncio.run(client()) == b"".join(openai_events(3))
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=20)
    assert process.returncode == 0
    [summary] = json.loads(stdout)
    assert summary["complete"] and summary["frames"] == 5
    assert read_recording(summary["path"]).complete


def test_three_recorders_writing_one_file_leave_one_readable_recording_and_two_errors(
    upstream: Upstream, tmp_path: Path
) -> None:
    # They used to interleave: an unreadable file, or two recordings lost, all exit 0.
    out = tmp_path / "same.msgpack"
    url = f"{upstream.url}/v1/chat/completions?n=40&delay=0.02"
    command = [sys.executable, "-c", RECORD_CLI, "--endpoint", url, "--prompt", "hi"]
    command += ["--out", str(out)]
    processes = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)
    ]
    results = [(p.wait(timeout=60), p.communicate()[1].decode()) for p in processes]
    assert sorted(code for code, _ in results) == [0, 2, 2], results
    for code, err in results:
        if code == 2:
            assert err.count("\n") == 1 and "another writer has it open" in err, err
    recording = read_recording(out)
    assert recording.complete and len(recording.frames) > 0
