"""What a recording cannot hold never costs the recording, nor the client's stream.

A request may hold what msgpack or the format cannot: an integer beyond 64 bits,
a lone surrogate (legal JSON), nesting deeper than ``MAX_NESTING``. The header
then keeps what fits, says so in the ``altered`` label, and the stream is
recorded whole; through the proxy the client gets the upstream's bytes unchanged.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from record_upstreams import Upstream, llm_app, openai_events

from tcr.corpus import MAX_NESTING, Recording, read_recording
from tcr.recorder import running_proxy

RECORD_CLI = "from tcr.commands.record import record; record()"
BIG = 2**64
DEEP = 600


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def nested(depth: int) -> str:
    return '{"messages": [], "deep": ' + "[" * depth + "]" * depth + "}"


def depth_of(value: object) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth + isinstance(value, list)


def record_cli(upstream: Upstream, request: str, tmp_path: Path, events: int) -> Recording:
    """``tcr record --request`` of the JSON text ``request``, in a subprocess: it must
    succeed without a traceback and write a complete recording of every event."""
    request_file = tmp_path / "request.json"
    request_file.write_text(request)
    out = tmp_path / "out.msgpack"
    done = subprocess.run(
        [sys.executable, "-c", RECORD_CLI, "--endpoint",
         f"{upstream.url}/v1/chat/completions?n={events}", "--request", str(request_file),
         "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    recording = read_recording(out)
    assert recording.complete
    assert [frame.data for frame in recording.frames] == openai_events(events)
    return recording


def test_cli_records_a_request_holding_an_integer_beyond_64_bits(
    upstream: Upstream, tmp_path: Path
) -> None:
    recording = record_cli(upstream, f'{{"messages": [], "seed": {BIG}, "small": -3}}', tmp_path, 3)
    stored = recording.header["request"]
    assert stored == {
        "messages": [],
        "seed": str(BIG),
        "small": -3,
        "stream": True,
        "max_tokens": 1024,
    }
    assert recording.labels["altered"] == (
        "request: 1 integer beyond 64 bits kept as its decimal string"
    )
    sent = upstream.requests[-1][3]
    assert f'"seed": {BIG}'.encode() in sent  # the server got the number itself


def test_cli_sends_and_records_a_lone_surrogate(upstream: Upstream, tmp_path: Path) -> None:
    recording = record_cli(upstream, '{"messages": [], "x": "a\\ud800b"}', tmp_path, 2)
    assert recording.header["request"]["x"] == "a\\ud800b"
    assert recording.labels["altered"] == (
        "request: 1 string with a lone surrogate kept with \\u escapes"
    )
    assert b'"a\\ud800b"' in upstream.requests[-1][3]  # sent as JSON escapes, valid UTF-8


async def post_raw(url: str, body: bytes) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession(auto_decompress=False) as session,
        session.post(url, data=body, headers={"Content-Type": "application/json"}) as response,
    ):
        return response.status, await response.read()


PROXY_BODIES = {
    "integer beyond 64 bits": f'{{"messages": [], "seed": {BIG}}}'.encode(),
    "lone surrogate": b'{"messages": [], "x": "\\ud800"}',
    f"nesting {DEEP} deep": nested(DEEP).encode(),
    f"nesting just past {MAX_NESTING}": nested(MAX_NESTING).encode(),
    "nesting too deep to parse": b"[" * 100_000,
}


@pytest.mark.parametrize("body", PROXY_BODIES.values(), ids=PROXY_BODIES)
def test_proxy_forwards_and_records_what_it_cannot_store_as_sent(
    upstream: Upstream, tmp_path: Path, body: bytes
) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        status, received = asyncio.run(post_raw(f"{proxy.url}/v1/chat/completions?n=4", body))
        assert [recorded.complete for recorded in proxy.recordings] == [True]
    assert status == 200
    assert received == b"".join(openai_events(4))
    assert upstream.requests[-1][3] == body
    [path] = tmp_path.glob("*.msgpack")
    recording = read_recording(path)
    assert recording.complete
    assert [frame.data for frame in recording.frames] == openai_events(4)


def test_proxy_keeps_a_deep_request_down_to_the_limit(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        asyncio.run(post_raw(f"{proxy.url}/v1/chat/completions?n=1", nested(DEEP).encode()))
    [path] = tmp_path.glob("*.msgpack")
    header = read_recording(path).header
    # header, request and the list levels that fit: MAX_NESTING levels in all
    assert depth_of(header["request"]["deep"]) == MAX_NESTING - 2
    assert header["labels"]["altered"] == (
        f"request: 1 value nested deeper than {MAX_NESTING} levels not kept"
    )


def test_proxy_notes_a_request_too_deep_to_read(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        asyncio.run(post_raw(f"{proxy.url}/v1/chat/completions?n=1", b"[" * 100_000))
    [path] = tmp_path.glob("*.msgpack")
    assert read_recording(path).header["request"] == {
        "_body": "100000 bytes of application/json, JSON nested too deep to read"
    }


def test_proxy_says_in_one_stderr_line_why_it_cannot_record_and_still_forwards(
    upstream: Upstream, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gone" / "out"
    with running_proxy(upstream.url, out) as proxy:
        shutil.rmtree(tmp_path / "gone")
        (tmp_path / "gone").write_text("a file where the directory was")
        status, received = asyncio.run(post_raw(f"{proxy.url}/v1/chat/completions?n=3", b"{}"))
        assert proxy.recordings == []
    assert status == 200 and received == b"".join(openai_events(3))
    lines = capfd.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"tcr proxy: {upstream.url}/v1/chat/completions?n=3: not recorded: "
    ), lines
    assert "cannot write" in lines[0]


def test_proxy_forwards_and_records_a_response_header_that_is_not_utf8(tmp_path: Path) -> None:
    """aiohttp reads header bytes with ``surrogateescape`` and writes a header as UTF-8,
    dropping a lone surrogate: the proxy must send the head byte for byte, and the
    recording keeps such a value as the bytes received (the corpus format holds bytes)."""
    event = b"data: hello\n\n"
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Odd: a\xffb\xe9\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + f"{len(event):x}\r\n".encode() + event + b"\r\n0\r\n\r\n"
    )  # fmt: skip
    with socket.create_server(("127.0.0.1", 0)) as server:

        def answer_once() -> None:
            connection, _ = server.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(answer)

        threading.Thread(target=answer_once, daemon=True).start()
        upstream_url = f"http://127.0.0.1:{server.getsockname()[1]}"
        with running_proxy(upstream_url, tmp_path) as proxy:
            head, body = raw_post(proxy.url, "/v1/chat/completions", b"{}")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"\r\nX-Odd: a\xffb\xe9\r\n" in head  # as the upstream sent it
    assert body == f"{len(event):x}\r\n".encode() + event + b"\r\n0\r\n\r\n"
    [path] = tmp_path.glob("*.msgpack")
    recording = read_recording(path)
    assert recording.complete
    assert recording.header["response"]["headers"]["x-odd"] == b"a\xffb\xe9"
    assert "altered" not in recording.labels


def raw_post(url: str, path: str, body: bytes) -> tuple[bytes, bytes]:
    """One request on a raw socket, ``Connection: close``: the response's head and body
    bytes as they came (an HTTP client library would decode the head)."""
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(request)
        received = b""
        while data := connection.recv(65536):
            received += data
    head, _, rest = received.partition(b"\r\n\r\n")
    return head + b"\r\n", rest
