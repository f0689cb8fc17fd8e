"""The recording proxy: passthrough byte for byte, one recording per streamed
response, non-streamed traffic untouched, and failures passed on as they were."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from record_upstreams import (
    MALFORMED_CHUNK,
    RawUpstream,
    Upstream,
    free_port,
    llm_app,
    ollama_lines,
    openai_events,
)
from yarl import URL

from tcr.corpus import read_recording
from tcr.recorder import RecordError, RecordingProxy, running_proxy, serve_proxy

BODY = {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


async def fetch(
    url: str, *, method: str = "POST", body: object = BODY, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the raw body bytes, as a client would read them."""
    async with (
        aiohttp.ClientSession(auto_decompress=False) as session,
        session.request(method, URL(url, encoded=True), json=body, headers=headers) as response,
    ):
        return response.status, dict(response.headers), await response.read()


def recordings(out: Path) -> list[Path]:
    return sorted(out.glob("*.msgpack"))


def test_client_receives_exactly_the_upstream_bytes_and_one_recording(
    upstream: Upstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        status, headers, body = asyncio.run(fetch(f"{proxy.url}/v1/chat/completions?n=25"))
        assert proxy.recordings[0].complete
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    assert body == b"".join(openai_events(25))
    [path] = recordings(tmp_path)
    recording = read_recording(path)
    assert recording.complete
    assert [frame.data for frame in recording.frames] == openai_events(25)
    times = [frame.t_ns for frame in recording.frames]
    assert times == sorted(times)
    assert recording.header["request"] == BODY
    assert recording.header["source"]["endpoint"] == f"{upstream.url}/v1/chat/completions?n=25"
    assert recording.header["labels"]["origin"] == "recorded"


def test_ndjson_streams_are_recorded_too(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        _, _, body = asyncio.run(fetch(f"{proxy.url}/api/chat?n=5"))
    assert body == b"".join(ollama_lines(5))
    [path] = recordings(tmp_path)
    assert read_recording(path).kind == "ndjson"


def test_non_streamed_requests_pass_through_unrecorded(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        status, headers, body = asyncio.run(
            fetch(
                f"{proxy.url}/echo?x=1",
                method="GET",
                body=None,
                headers={"Authorization": "Bearer pass-me-on", "X-Custom": "kept"},
            )
        )
        error_status, _, error_body = asyncio.run(fetch(f"{proxy.url}/error"))
    seen = json.loads(body)
    assert status == 200 and seen["method"] == "GET" and seen["path_qs"] == "/echo?x=1"
    assert seen["headers"]["Authorization"] == "Bearer pass-me-on"
    assert seen["headers"]["X-Custom"] == "kept"
    assert headers["Set-Cookie"] == "session=cookie-secret-123"  # the client gets it
    assert error_status == 500 and b"the model exploded" in error_body
    assert recordings(tmp_path) == []


def test_the_proxy_adds_no_headers_the_client_did_not_send(
    upstream: Upstream, tmp_path: Path
) -> None:
    async def bare_get(url: str) -> dict[str, str]:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
        writer.write(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        raw = await reader.read()
        writer.close()
        seen: dict[str, str] = json.loads(raw.split(b"\r\n\r\n", 1)[1])["headers"]
        return seen

    with running_proxy(upstream.url, tmp_path) as proxy:
        seen = asyncio.run(bare_get(proxy.url))
    assert "Accept-Encoding" not in seen and "User-Agent" not in seen


def test_secrets_pass_through_but_never_reach_the_disk(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        asyncio.run(
            fetch(
                f"{proxy.url}/v1/chat/completions?n=2&api_key=query-secret-43&cookie=1",
                body={**BODY, "api_key": "body-secret-44"},
                headers={"Authorization": "Bearer bearer-secret-42", "Cookie": "c=cookie-in-42"},
            )
        )
    _, path_qs, sent, _ = upstream.requests[-1]
    assert sent["Authorization"] == "Bearer bearer-secret-42" and "query-secret-43" in path_qs
    [path] = recordings(tmp_path)
    on_disk = path.read_bytes()
    for secret in ("bearer-secret-42", "query-secret-43", "body-secret-44", "cookie-secret-123"):
        assert secret.encode() not in on_disk, secret


def test_twenty_concurrent_clients_get_their_own_streams_and_recordings(
    upstream: Upstream, tmp_path: Path
) -> None:
    async def clients(url: str) -> list[bytes]:
        jobs = [fetch(f"{url}/v1/chat/completions?n={n}&delay=0.002") for n in range(1, 21)]
        return [body for _, _, body in await asyncio.gather(*jobs)]

    with running_proxy(upstream.url, tmp_path) as proxy:
        bodies = asyncio.run(clients(proxy.url))
    assert bodies == [b"".join(openai_events(n)) for n in range(1, 21)]
    paths = recordings(tmp_path)
    assert len(paths) == 20
    recorded = sorted(
        b"".join(frame.data for frame in read_recording(path).frames)  # type: ignore[misc]
        for path in paths
        if read_recording(path).complete
    )
    assert recorded == sorted(bodies)


def test_upstream_dropping_mid_stream_cuts_the_client_too(
    upstream: Upstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path) as proxy:
        with pytest.raises(aiohttp.ClientPayloadError):
            asyncio.run(fetch(f"{proxy.url}/drop?n=20"))
        [result] = proxy.recordings
    assert result.error is not None and result.error.startswith("upstream disconnected")
    recording = read_recording(result.path)
    events = openai_events(20)
    assert not recording.complete
    assert b"".join(f.data for f in recording.frames) == b"".join(events[: len(events) // 2])  # type: ignore[misc]


def test_upstream_stalling_mid_stream_times_out(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path, timeout=0.3) as proxy:
        with pytest.raises(aiohttp.ClientPayloadError):
            asyncio.run(fetch(f"{proxy.url}/stall"))
        [result] = proxy.recordings
    assert result.error == "timed out after 0.3s without data"
    assert result.frame_count == 2


def test_upstream_stalling_on_a_malformed_chunk_times_out(tmp_path: Path) -> None:
    with (
        RawUpstream(MALFORMED_CHUNK) as server,
        running_proxy(server.url, tmp_path, timeout=0.5) as proxy,
    ):
        with pytest.raises(aiohttp.ClientPayloadError):
            asyncio.run(asyncio.wait_for(fetch(f"{proxy.url}/v1/chat/completions"), 10))
        [result] = proxy.recordings
    assert result.error == "timed out after 0.5s without data"
    assert result.frame_count == 1


def test_unreachable_upstream_is_a_502_naming_it(tmp_path: Path) -> None:
    port = free_port()
    with running_proxy(f"http://127.0.0.1:{port}", tmp_path) as proxy:
        status, _, body = asyncio.run(fetch(f"{proxy.url}/v1/chat/completions"))
    assert status == 502
    assert f"upstream http://127.0.0.1:{port}/v1/chat/completions".encode() in body
    assert recordings(tmp_path) == []


def test_paths_and_queries_pass_through_as_sent(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/", tmp_path) as proxy:
        _, _, body = asyncio.run(fetch(f"{proxy.url}/echo?a=%2F&b=1", method="GET", body=None))
    assert json.loads(body)["raw_path"] == "/echo?a=%2F&b=1"


def test_an_upstream_base_path_is_kept(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/base", tmp_path) as proxy:
        _, _, body = asyncio.run(fetch(f"{proxy.url}/v1/models", method="GET", body=None))
    assert json.loads(body)["raw_path"] == "/base/v1/models"


def test_serve_proxy_reports_its_port_and_stopping_it_interrupts_streams(
    upstream: Upstream, tmp_path: Path
) -> None:
    async def main() -> None:
        ready = asyncio.Event()
        started: list[RecordingProxy] = []
        server = asyncio.create_task(
            serve_proxy(
                "127.0.0.1", 0, upstream.url, tmp_path, ready=ready, on_started=started.append
            )
        )
        await asyncio.wait_for(ready.wait(), 5)
        [proxy] = started
        assert proxy.port != 0

        async def slow_client() -> None:
            async with (
                aiohttp.ClientSession() as session,
                session.post(f"{proxy.url}/v1/chat/completions?n=500&delay=0.01", json=BODY) as r,
            ):
                await r.read()

        client = asyncio.create_task(slow_client())
        while not proxy.recordings and not any(tmp_path.glob("*.msgpack")):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        server.cancel()
        with pytest.raises(asyncio.CancelledError):
            await server
        with pytest.raises(aiohttp.ClientPayloadError):
            await client
        [result] = proxy.recordings
        assert result.error == "interrupted: proxy stopped" and result.frame_count > 0

    asyncio.run(asyncio.wait_for(main(), 20))


def test_a_port_in_use_is_one_clear_error(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path) as first:
        proxy = RecordingProxy(upstream.url, tmp_path, port=first.port)
        with pytest.raises(RecordError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            asyncio.run(proxy.start())
