"""An upstream that echoes the request's own credentials in its body: the frames keep
none of them, and the header's ``labels.altered`` says what was replaced (issue 36,
item 11)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from record_upstreams import Upstream, llm_app

from tcr.corpus import read_recording
from tcr.recorder import REDACTED, record_sync
from tcr.recorder.capture import Capture

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
SECRETS = ("ECHOEDKEY123", "XAPIKEY456", "QUERYKEY789")


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def body_of(path: Path) -> bytes:
    return b"".join(frame.data for frame in read_recording(path).frames)  # type: ignore[misc]


def test_a_401_body_echoing_the_request_key_is_recorded_without_it(
    upstream: Upstream, tmp_path: Path
) -> None:
    headers = {"Authorization": "Bearer ECHOEDKEY123", "X-Api-Key": "XAPIKEY456"}
    url = f"{upstream.url}/unauthorized?key=QUERYKEY789"

    recorded = record_sync(url, BODY, tmp_path / "r.msgpack", headers=headers)

    on_disk = (tmp_path / "r.msgpack").read_bytes()
    assert [secret for secret in SECRETS if secret.encode() in on_disk] == []
    assert b"invalid credentials " + REDACTED.encode() in body_of(recorded.path)
    altered = read_recording(recorded.path).header["labels"]["altered"]
    assert altered == "body: 3 echoes of the request's credentials replaced by <redacted>"
    assert recorded.error is not None and recorded.error.startswith("HTTP 401")


def test_a_body_without_an_echo_is_recorded_unaltered(upstream: Upstream, tmp_path: Path) -> None:
    headers = {"Authorization": "Bearer SOMEKEY12345"}
    recorded = record_sync(
        f"{upstream.url}/v1/chat/completions?n=2", BODY, tmp_path / "r.msgpack", headers=headers
    )

    assert recorded.complete and "altered" not in read_recording(recorded.path).header["labels"]


def capture_of(tmp_path: Path, key: str) -> Capture:
    return Capture(
        tmp_path / "r.msgpack",
        start_ns=time.monotonic_ns(),
        endpoint="http://127.0.0.1:1/v1/chat/completions",
        request={},
        status=200,
        reason="OK",
        headers=[("Content-Type", "text/event-stream")],
        request_headers=[("Authorization", f"Bearer {key}")],
    )


@pytest.mark.parametrize("cut", range(1, len("SPLITKEY98765")))
def test_an_echo_split_between_two_reads_loses_its_second_part(tmp_path: Path, cut: int) -> None:
    # The first read is on disk before the second arrives: what can go is the rest.
    key = "SPLITKEY98765"
    capture = capture_of(tmp_path, key)
    body = f'data: {{"error": "bad key {key}"}}\n\n'.encode()
    at = body.index(key.encode()) + cut
    capture.feed([body[:at]])
    capture.feed([body[at:]])
    recorded = capture.close()

    frames = [f.data for f in read_recording(recorded.path).frames]
    assert frames[0] == body[:at] and frames[1].startswith(REDACTED.encode())  # type: ignore[union-attr]
    assert key.encode() not in b"".join(frames)  # type: ignore[arg-type]
    assert "1 echo" in read_recording(recorded.path).header["labels"]["altered"]
