"""A stream the upstream cuts where the HTTP framing cannot tell (a body that ends when
the connection does): recorded as cut, never as complete (issue 36, item 11)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from record_upstreams import RawUpstream

from tcr.corpus import read_recording
from tcr.recorder import Recorded, record

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
UNTIL_CLOSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'


def recorded_from(parts: tuple[bytes, ...], tmp_path: Path, *, end: str = "reset") -> Recorded:
    with RawUpstream(parts, end=end) as server:
        url = f"{server.url}/v1/chat/completions"
        return asyncio.run(asyncio.wait_for(record(url, BODY, tmp_path, timeout=5), 30))


def test_a_reset_in_the_middle_of_an_sse_event_is_recorded_as_cut(tmp_path: Path) -> None:
    recorded = recorded_from((UNTIL_CLOSE, EVENT, EVENT[:20]), tmp_path)

    assert not recorded.complete
    assert recorded.error is not None and recorded.error.startswith("upstream disconnected: ")
    assert "inside an SSE event" in recorded.error
    recording = read_recording(recorded.path)
    assert recording.incomplete_reason == recorded.error
    assert b"".join(f.data for f in recording.frames) == EVENT + EVENT[:20]  # type: ignore[misc]


@pytest.mark.parametrize("tail", [b"\n", b"\r\n", b"\n: comment"], ids=["lf", "crlf", "comment"])
def test_a_body_closed_before_its_event_ends_is_recorded_as_cut(
    tmp_path: Path, tail: bytes
) -> None:
    recorded = recorded_from((UNTIL_CLOSE, EVENT, b"data: [DONE]" + tail), tmp_path, end="close")

    assert not recorded.complete and "inside an SSE event" in (recorded.error or "")


@pytest.mark.parametrize("end", ["reset", "close"])
def test_a_body_until_close_that_ends_between_events_is_complete(tmp_path: Path, end: str) -> None:
    recorded = recorded_from((UNTIL_CLOSE, EVENT, b"data: [DONE]\r\n\r\n"), tmp_path, end=end)

    assert recorded.complete, recorded.error
