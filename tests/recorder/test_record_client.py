"""``record()`` against small real servers: round trips, secrets, and every way a
stream goes wrong (each keeps what arrived, marked incomplete with the reason)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import aiohttp
import pytest
from aiohttp import web
from record_upstreams import (
    MALFORMED_CHUNK,
    RawUpstream,
    Upstream,
    free_port,
    llamacpp_events,
    llm_app,
    ollama_lines,
    openai_events,
)

from tcr.corpus import read_recording
from tcr.recorder import REDACTED, Recorded, RecordError, record, record_sync
from tcr.recorder.capture import Capture
from tcr.recorder.client import capture_body
from tcr.stream import decode

BODY = {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def body_of(path: Path) -> bytes:
    return b"".join(frame.data for frame in read_recording(path).frames)  # type: ignore[misc]


def test_round_trip_keeps_every_byte_in_order_with_its_arrival_time(
    upstream: Upstream, tmp_path: Path
) -> None:
    recorded = record_sync(f"{upstream.url}/v1/chat/completions?n=30", BODY, tmp_path / "r.msgpack")
    recording = read_recording(recorded.path)
    assert recorded.complete and recorded.error is None and recording.complete
    assert body_of(recorded.path) == b"".join(openai_events(30))
    times = [frame.t_ns for frame in recording.frames]
    assert times == sorted(times) and times[0] > 0
    assert recorded.ttfb_ns == times[0] and recorded.duration_ns >= times[-1]
    assert decode(recording).text == "".join(f"tok{i} " for i in range(30))


def test_reads_are_not_merged_one_frame_per_event(upstream: Upstream, tmp_path: Path) -> None:
    recorded = record_sync(f"{upstream.url}/v1/chat/completions?n=30", BODY, tmp_path)
    assert [frame.data for frame in read_recording(recorded.path).frames] == openai_events(30)


def test_header_holds_request_status_headers_source_and_tools(
    upstream: Upstream, tmp_path: Path
) -> None:
    body = {**BODY, "tools": [{"type": "function", "function": {"name": "get_weather"}}]}
    recorded = record_sync(
        f"{upstream.url}/v1/chat/completions?n=3", body, tmp_path, labels={"dialect": "hermes"}
    )
    header = read_recording(recorded.path).header
    assert header["kind"] == "sse"
    assert header["request"] == body
    assert header["response"]["status"] == 200
    assert header["response"]["headers"]["content-type"] == "text/event-stream"
    assert header["source"] == {
        "endpoint": f"{upstream.url}/v1/chat/completions?n=3",
        "backend": "openai",
        "model": "smollm2",
    }
    assert header["tools"] == ["get_weather"]
    assert header["labels"]["origin"] == "recorded" and header["labels"]["dialect"] == "hermes"


def test_a_directory_out_path_gets_a_new_file_each_time(upstream: Upstream, tmp_path: Path) -> None:
    first = record_sync(f"{upstream.url}/v1/chat/completions?n=1", BODY, tmp_path)
    second = record_sync(f"{upstream.url}/v1/chat/completions?n=1", BODY, tmp_path)
    assert first.path.parent == second.path.parent == tmp_path and first.path != second.path


def test_ollama_ndjson_round_trip(upstream: Upstream, tmp_path: Path) -> None:
    recorded = record_sync(f"{upstream.url}/api/chat?n=10", {"model": "m"}, tmp_path)
    assert recorded.kind == "ndjson" and recorded.complete
    assert body_of(recorded.path) == b"".join(ollama_lines(10))
    assert decode(read_recording(recorded.path)).done


def test_llamacpp_completion_round_trip(upstream: Upstream, tmp_path: Path) -> None:
    recorded = record_sync(f"{upstream.url}/completion?n=10", {"prompt": "p"}, tmp_path)
    assert recorded.kind == "sse" and recorded.complete
    assert body_of(recorded.path) == b"".join(llamacpp_events(10))
    assert read_recording(recorded.path).header["source"]["backend"] == "llamacpp"


def test_secrets_sent_never_reach_the_disk(upstream: Upstream, tmp_path: Path) -> None:
    secrets = ["bearer-secret-42", "query-secret-43", "body-secret-44", "cookie-secret-123"]
    recorded = record_sync(
        f"{upstream.url}/v1/chat/completions?n=3&api_key={secrets[1]}&cookie=1",
        {**BODY, "api_key": secrets[2]},
        tmp_path,
        headers={"Authorization": f"Bearer {secrets[0]}", "Cookie": "session=abc"},
    )
    _, path_qs, sent_headers, _ = upstream.requests[-1]
    assert sent_headers["Authorization"] == f"Bearer {secrets[0]}"  # the server did get them
    assert secrets[1] in path_qs
    on_disk = recorded.path.read_bytes()
    for secret in [*secrets, "session=abc"]:
        assert secret.encode() not in on_disk, secret
    header = read_recording(recorded.path).header
    assert header["response"]["headers"]["set-cookie"] == REDACTED
    assert header["request"]["api_key"] == REDACTED


def test_url_credentials_are_sent_but_not_recorded(upstream: Upstream, tmp_path: Path) -> None:
    host = upstream.url.removeprefix("http://")
    recorded = record_sync(
        f"http://alice-46:pw-secret-45@{host}/v1/chat/completions?n=1", BODY, tmp_path
    )
    assert upstream.requests[-1][2]["Authorization"].startswith("Basic ")
    assert b"pw-secret-45" not in recorded.path.read_bytes()
    assert b"alice-46" not in recorded.path.read_bytes()
    assert recorded.endpoint == f"{upstream.url}/v1/chat/completions?n=1"


def test_accept_encoding_identity_is_sent_unless_overridden(
    upstream: Upstream, tmp_path: Path
) -> None:
    record_sync(f"{upstream.url}/v1/chat/completions?n=1", BODY, tmp_path)
    assert upstream.requests[-1][2]["Accept-Encoding"] == "identity"
    record_sync(
        f"{upstream.url}/v1/chat/completions?n=1", BODY, tmp_path, headers={"accept-encoding": "br"}
    )
    assert upstream.requests[-1][2]["Accept-Encoding"] == "br"


def test_error_status_is_recorded_as_evidence_and_incomplete(
    upstream: Upstream, tmp_path: Path
) -> None:
    recorded = record_sync(f"{upstream.url}/error", BODY, tmp_path)
    assert (recorded.status, recorded.complete) == (500, False)
    assert recorded.error == "HTTP 500 Internal Server Error: the model exploded"
    recording = read_recording(recorded.path)
    assert recording.incomplete_reason == recorded.error
    assert b"the model exploded" in body_of(recorded.path)
    assert decode(recording).errors == ["the model exploded"]


def test_non_streaming_response_is_recorded_and_incomplete(
    upstream: Upstream, tmp_path: Path
) -> None:
    recorded = record_sync(f"{upstream.url}/json", BODY, tmp_path)
    assert recorded.status == 200 and not recorded.complete
    assert recorded.error is not None and recorded.error.startswith(
        "not a stream: the server answered application/json"
    )
    assert b'"chat.completion"' in body_of(recorded.path)


def test_upstream_dropping_mid_stream_keeps_what_arrived(
    upstream: Upstream, tmp_path: Path
) -> None:
    recorded = record_sync(f"{upstream.url}/drop?n=20", BODY, tmp_path)
    events = openai_events(20)
    assert not recorded.complete
    assert recorded.error is not None and recorded.error.startswith("upstream disconnected: ")
    assert body_of(recorded.path) == b"".join(events[: len(events) // 2])
    assert read_recording(recorded.path).incomplete_reason == recorded.error


def test_a_stream_that_stalls_times_out_and_keeps_what_arrived(
    upstream: Upstream, tmp_path: Path
) -> None:
    recorded = record_sync(f"{upstream.url}/stall", BODY, tmp_path, timeout=0.3)
    assert recorded.error == "timed out after 0.3s without data"
    assert body_of(recorded.path) == b"".join(openai_events(5)[:2])


def test_a_malformed_chunk_size_line_times_out_and_keeps_what_arrived(tmp_path: Path) -> None:
    # aiohttp's parser stalls on it and its own read timeout never fires: the recorder's
    # deadline holds all the same (it used to wait forever).
    with RawUpstream(MALFORMED_CHUNK) as server:
        started = time.monotonic()
        url = f"{server.url}/v1/chat/completions"
        recorded = asyncio.run(asyncio.wait_for(record(url, BODY, tmp_path, timeout=0.5), 10))
    assert time.monotonic() - started < 5
    assert recorded.error == "timed out after 0.5s without data"
    assert body_of(recorded.path) == b'data: {"a": 1}\n\n'


def test_a_server_that_never_answers_times_out_and_writes_nothing(
    upstream: Upstream, tmp_path: Path
) -> None:
    with pytest.raises(RecordError, match=r"/silent: no response after 0\.3s$"):
        record_sync(f"{upstream.url}/silent", BODY, tmp_path, timeout=0.3)
    assert list(tmp_path.iterdir()) == []


def test_refused_connection_is_one_clear_error(tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(RecordError, match=f"connection refused at 127.0.0.1:{port}"):
        record_sync(f"http://127.0.0.1:{port}/v1/chat/completions", BODY, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_unresolvable_host_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"cannot resolve host 'tcr-test\.invalid'"):
        record_sync("http://tcr-test.invalid/v1/chat/completions", BODY, tmp_path, timeout=5)


@pytest.mark.parametrize("endpoint", ["ftp://host/x", "127.0.0.1:8080/completion", "http://"])
def test_a_url_that_is_not_http_is_refused(endpoint: str, tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="is not an http"):
        record_sync(endpoint, BODY, tmp_path)


def test_cancelling_mid_stream_closes_the_recording_as_interrupted(
    upstream: Upstream, tmp_path: Path
) -> None:
    out = tmp_path / "r.msgpack"

    async def main() -> None:
        task = asyncio.create_task(
            record(f"{upstream.url}/v1/chat/completions?n=500&delay=0.01", BODY, out)
        )
        while not out.exists() or len(read_recording(out).frames) < 3:
            await asyncio.sleep(0.01)
        task.cancel("Ctrl-C (SIGINT)")
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(main(), 10))
    recording = read_recording(out)
    assert recording.incomplete_reason == "interrupted: Ctrl-C (SIGINT)"
    assert len(recording.frames) >= 3
    assert b"".join(openai_events(500)).startswith(body_of(out))


def test_concurrent_recordings_do_not_mix(upstream: Upstream, tmp_path: Path) -> None:
    async def main() -> list[Path]:
        jobs = [
            record(f"{upstream.url}/v1/chat/completions?n={n}", BODY, tmp_path / f"{n}.msgpack")
            for n in range(1, 11)
        ]
        return [result.path for result in await asyncio.gather(*jobs)]

    for n, path in enumerate(asyncio.run(main()), start=1):
        assert body_of(path) == b"".join(openai_events(n))


def test_reads_still_buffered_when_the_connection_fails_are_kept(tmp_path: Path) -> None:
    """aiohttp raises a stream's failure before handing out what it buffered; those
    bytes did arrive, so the recording keeps them."""

    async def main() -> Recorded:
        content = aiohttp.StreamReader(
            mock.Mock(_reading_paused=False), 2**16, loop=asyncio.get_running_loop()
        )
        content.feed_data(b"data: 1\n\n")
        content.feed_data(b"data: 2\n\n")
        content.set_exception(aiohttp.ClientPayloadError("Response payload is not completed"))
        capture = Capture(
            tmp_path / "r.msgpack",
            start_ns=time.monotonic_ns(),
            endpoint="http://127.0.0.1:1/v1/chat/completions",
            request={},
            status=200,
            reason="OK",
            headers=[("Content-Type", "text/event-stream")],
        )
        return await capture_body(content, capture)

    recorded = asyncio.run(main())
    assert (
        recorded.error
        == "upstream disconnected: ClientPayloadError: Response payload is not completed"
    )
    assert [f.data for f in read_recording(recorded.path).frames] == [
        b"data: 1\n\n",
        b"data: 2\n\n",
    ]


def test_the_first_bytes_still_decide_the_kind_the_headers_left_open(tmp_path: Path) -> None:
    """The header is written when the status arrives, as ``sse`` for an OpenAI path;
    an untyped body that starts as JSON turns it into ``ndjson`` before any frame."""

    async def untyped(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()  # aiohttp sends application/octet-stream
        await response.prepare(request)
        await response.write(b'{"a": 1}\n')
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", untyped)
    with Upstream(app) as server:
        recorded = record_sync(f"{server.url}/v1/chat/completions", BODY, tmp_path)
    recording = read_recording(recorded.path)
    assert recorded.kind == recording.kind == "ndjson"
    assert [frame.data for frame in recording.frames] == [b'{"a": 1}\n']
    assert recording.header["response"]["status"] == 200
