"""The summary ``tcr record`` and ``tcr import`` print: numbers and a content preview."""

from __future__ import annotations

import json
from pathlib import Path

from tcr.corpus import Frame, new_header, write_recording
from tcr.recorder import summarize


def sse(*payloads: object) -> list[bytes]:
    return [f"data: {json.dumps(p)}\n\n".encode() for p in payloads] + [b"data: [DONE]\n\n"]


def test_numbers_and_preview_of_a_stream(tmp_path: Path) -> None:
    reads = sse(*({"choices": [{"delta": {"content": word}}]} for word in ("Hello", " world\n")))
    path = write_recording(
        tmp_path / "r.msgpack",
        new_header("sse", response={"status": 200}),
        [Frame(1_000_000 * (i + 1), data) for i, data in enumerate(reads)],
    )
    summary = summarize(path, duration_ns=9_000_000)
    assert (summary.frames, summary.bytes, summary.status) == (3, sum(map(len, reads)), 200)
    assert (summary.ttfb_ms, summary.duration_ms) == (1.0, 9.0)
    assert summary.preview == "Hello world↵" and summary.chars == 12 and summary.done
    assert summary.complete and summary.error is None


def test_native_tool_calls_and_reasoning_are_named(tmp_path: Path) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": "{}"}}
    reads = sse(
        {"choices": [{"delta": {"reasoning_content": "Think."}}]},
        {"choices": [{"delta": {"tool_calls": [call]}}]},
    )
    path = write_recording(tmp_path / "r.msgpack", new_header("sse"), [Frame(0, d) for d in reads])
    summary = summarize(path)
    assert summary.calls == ["get_weather"]
    assert summary.preview == "(reasoning) Think."


def test_a_body_that_does_not_decode_is_previewed_raw(tmp_path: Path) -> None:
    path = write_recording(
        tmp_path / "r.msgpack",
        new_header("sse", response={"status": 502}),
        [Frame(0, b"<html>Bad Gateway</html>")],
        complete=False,
        error="HTTP 502 Bad Gateway: <html>Bad Gateway</html>",
    )
    summary = summarize(path)
    assert summary.preview == "<html>Bad Gateway</html>" and summary.chars == 0
    assert summary.error == "HTTP 502 Bad Gateway: <html>Bad Gateway</html>"
