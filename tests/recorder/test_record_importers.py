"""``tcr import``: curl -N dumps, JSON lines of chunks and browser HAR files."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from record_upstreams import ollama_lines, openai_events

from tcr.commands.importer import import_command
from tcr.corpus import read_recording
from tcr.recorder import REDACTED, RecordError, import_file
from tcr.stream import decode

SSE = b"".join(openai_events(4))
NDJSON = b"".join(ollama_lines(3))


def frames(path: Path) -> list[bytes | str]:
    return [frame.data for frame in read_recording(path).frames]


def test_curl_sse_dump_becomes_one_frame_per_event(tmp_path: Path) -> None:
    dump = tmp_path / "stream.sse"
    dump.write_bytes(SSE)
    [imported] = import_file(dump)
    assert imported.path == tmp_path / "stream.msgpack" and imported.kind == "sse"
    recording = read_recording(imported.path)
    assert frames(imported.path) == openai_events(4)
    assert {frame.t_ns for frame in recording.frames} == {0}
    assert recording.complete and decode(recording).text == "tok0 tok1 tok2 tok3 "
    assert "arrival times were not captured" in recording.labels["note"]
    assert recording.labels["origin"] == "recorded"


def test_crlf_sse_dump_keeps_every_byte(tmp_path: Path) -> None:
    body = SSE.replace(b"\n", b"\r\n")
    (tmp_path / "s.txt").write_bytes(body)
    [imported] = import_file(tmp_path / "s.txt")
    assert b"".join(frames(imported.path)) == body  # type: ignore[arg-type]
    assert len(frames(imported.path)) == 6


def test_curl_ndjson_dump(tmp_path: Path) -> None:
    (tmp_path / "chat.ndjson").write_bytes(NDJSON)
    [imported] = import_file(tmp_path / "chat.ndjson")
    assert imported.kind == "ndjson"
    assert frames(imported.path) == ollama_lines(3)
    assert decode(read_recording(imported.path)).done


def test_curl_dump_with_headers_keeps_status_and_redacted_headers(tmp_path: Path) -> None:
    head = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Set-Cookie: session=cookie-secret-9\r\n\r\n"
    )
    (tmp_path / "dump.txt").write_bytes(head + SSE)
    [imported] = import_file(tmp_path / "dump.txt")
    recording = read_recording(imported.path)
    assert recording.header["response"]["status"] == 200
    assert recording.header["response"]["headers"] == {
        "content-type": "text/event-stream",
        "set-cookie": REDACTED,
    }
    assert b"".join(frames(imported.path)) == SSE  # type: ignore[arg-type]
    assert b"cookie-secret-9" not in imported.path.read_bytes()


def test_json_lines_of_strings_become_chunks(tmp_path: Path) -> None:
    chunks = ["<", "tool", "_call>", "{}", "</tool_call>"]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(c) for c in chunks) + "\n")
    [imported] = import_file(tmp_path / "c.jsonl")
    assert imported.kind == "chunks" and frames(imported.path) == chunks


def test_json_lines_of_chunk_objects_keep_their_times(tmp_path: Path) -> None:
    lines = [{"chunk": "Hel", "t": 0.5}, {"text": "lo", "t_ns": 600_000_000}]
    (tmp_path / "c.jsonl").write_text("\n".join(map(json.dumps, lines)))
    [imported] = import_file(tmp_path / "c.jsonl")
    recording = read_recording(imported.path)
    assert [(f.t_ns, f.data) for f in recording.frames] == [
        (500_000_000, "Hel"),
        (600_000_000, "lo"),
    ]
    assert recording.labels["note"] == "imported from c.jsonl: chunks"


def test_a_json_array_of_chunks(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps(["a", "b"]))
    [imported] = import_file(tmp_path / "c.json", tmp_path / "out.msgpack")
    assert imported.path == tmp_path / "out.msgpack" and frames(imported.path) == ["a", "b"]


def _entry(
    url: str,
    mime: str,
    text: str,
    *,
    method: str = "POST",
    post: dict[str, Any] | None = None,
    encoding: str | None = None,
) -> dict[str, Any]:
    """One HAR entry in the shape Chrome's DevTools exports."""
    content: dict[str, Any] = {"size": len(text), "mimeType": mime, "text": text}
    if encoding:
        content["encoding"] = encoding
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "httpVersion": "http/1.1",
        "headers": [
            {"name": "Authorization", "value": "Bearer har-bearer-secret"},
            {"name": "Cookie", "value": "sid=har-cookie-secret"},
            {"name": "Content-Type", "value": "application/json"},
        ],
        "queryString": [{"name": "key", "value": "har-query-secret"}],
        "cookies": [{"name": "sid", "value": "har-cookie-secret"}],
        "headersSize": -1,
        "bodySize": 0,
    }
    if post is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(post)}
    return {
        "_initiator": {"type": "script"},
        "_priority": "High",
        "_resourceType": "fetch",
        "cache": {},
        "connection": "5321",
        "request": request,
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "http/1.1",
            "headers": [
                {"name": "Content-Type", "value": mime},
                {"name": "Set-Cookie", "value": "sid=har-set-cookie-secret"},
            ],
            "cookies": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
            "_transferSize": 2048,
            "_error": None,
        },
        "serverIPAddress": "127.0.0.1",
        "startedDateTime": "2026-11-29T10:00:00.123Z",
        "time": 812.5,
        "timings": {
            "blocked": 1.5,
            "dns": -1,
            "ssl": -1,
            "connect": 0.5,
            "send": 0.25,
            "wait": 250.0,
            "receive": 560.25,
            "_blocked_queueing": 1.0,
        },
    }


def write_har(path: Path) -> None:
    post = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "api_key": "har-body-secret",
        "tools": [{"type": "function", "function": {"name": "get_weather"}}],
    }
    har = {
        "log": {
            "version": "1.2",
            "creator": {"name": "WebInspector", "version": "537.36"},
            "pages": [],
            "entries": [
                _entry("http://127.0.0.1:8080/", "text/html", "<html></html>", method="GET"),
                _entry(
                    "http://127.0.0.1:8080/v1/chat/completions?key=har-query-secret",
                    "text/event-stream",
                    SSE.decode(),
                    post=post,
                ),
                _entry(
                    "http://127.0.0.1:11434/api/chat",
                    "application/x-ndjson",
                    base64.b64encode(NDJSON).decode(),
                    post={"model": "qwen3", "messages": []},
                    encoding="base64",
                ),
            ],
        }
    }
    path.write_text(json.dumps(har, indent=2))


def test_har_gives_one_recording_per_streamed_response(tmp_path: Path) -> None:
    write_har(tmp_path / "session.har")
    sse, ndjson = import_file(tmp_path / "session.har", tmp_path / "out")
    assert (sse.format, sse.kind, ndjson.kind) == ("har", "sse", "ndjson")
    assert sse.path == tmp_path / "out" / "session-00.msgpack"
    first = read_recording(sse.path)
    assert b"".join(frames(sse.path)) == SSE  # type: ignore[arg-type]
    assert {f.t_ns for f in first.frames} == {252_250_000}  # blocked + connect + send + wait
    assert first.header["created"] == "2026-11-29T10:00:00.123000Z"
    assert first.header["tools"] == ["get_weather"]
    assert first.header["source"]["backend"] == "openai"
    assert first.header["source"]["model"] == "smollm2"
    assert first.header["response"]["status"] == 200
    assert b"".join(frames(ndjson.path)) == NDJSON  # type: ignore[arg-type]
    assert read_recording(ndjson.path).header["source"]["backend"] == "ollama"


def test_har_secrets_never_reach_the_disk(tmp_path: Path) -> None:
    write_har(tmp_path / "session.har")
    for imported in import_file(tmp_path / "session.har", tmp_path / "out"):
        on_disk = imported.path.read_bytes()
        for secret in (
            "bearer",
            "cookie-secret",
            "query-secret",
            "body-secret",
            "set-cookie-secret",
        ):
            assert f"har-{secret}".encode() not in on_disk, secret


def test_a_har_without_streams_is_one_clear_error(tmp_path: Path) -> None:
    har = {"log": {"entries": [_entry("http://h/", "text/html", "<p>")]}}
    (tmp_path / "x.har").write_text(json.dumps(har))
    with pytest.raises(RecordError, match="the HAR holds no streamed response"):
        import_file(tmp_path / "x.har")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"hello world\n", "not a format tcr imports"),
        (b'{"foo": 1}\n', "neither stream payloads"),
        (b'"a"\n{oops\n', "line 2: not JSON"),
        (b"[1, 2]", "chunk 0: not a chunk"),
    ],
)
def test_unreadable_inputs_are_one_clear_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "in.txt").write_bytes(content)
    with pytest.raises(RecordError, match=message):
        import_file(tmp_path / "in.txt")


def test_forced_kind_reads_the_body_as_told(tmp_path: Path) -> None:
    (tmp_path / "dump.txt").write_bytes(NDJSON)
    [imported] = import_file(tmp_path / "dump.txt", kind="ndjson")
    assert imported.kind == "ndjson"
    with pytest.raises(RecordError, match="--kind chunks, but the file is a sse body"):
        (tmp_path / "s.txt").write_bytes(SSE)
        import_file(tmp_path / "s.txt", kind="chunks")


def test_import_never_overwrites_its_source(tmp_path: Path) -> None:
    (tmp_path / "x.msgpack").write_bytes(SSE)
    with pytest.raises(RecordError, match="would overwrite its source"):
        import_file(tmp_path / "x.msgpack")


def test_import_command_prints_a_summary(tmp_path: Path) -> None:
    (tmp_path / "stream.sse").write_bytes(SSE)
    result = CliRunner().invoke(
        import_command, [str(tmp_path / "stream.sse"), "--label", "dialect=hermes"]
    )
    assert result.exit_code == 0, result.output
    assert "imported sse" in result.output and "tok0 tok1 tok2 tok3" in result.output
    assert read_recording(tmp_path / "stream.msgpack").labels["dialect"] == "hermes"


def test_import_command_json_output(tmp_path: Path) -> None:
    write_har(tmp_path / "s.har")
    result = CliRunner().invoke(
        import_command, [str(tmp_path / "s.har"), "--out", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert [item["kind"] for item in json.loads(result.stdout)] == ["sse", "ndjson"]


def test_import_command_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_text("hello\n")
    result = CliRunner().invoke(import_command, [str(tmp_path / "bad.txt")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("tcr import: ")
    missing = CliRunner().invoke(import_command, [str(tmp_path / "nope.sse")])
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def test_import_help_ends_with_examples() -> None:
    result = CliRunner().invoke(import_command, ["--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output and result.output.rstrip().endswith("--kind ndjson")


@pytest.mark.parametrize("kind", ["device", "fifo"])  # a folder: click refuses it
def test_anything_but_a_regular_file_is_one_error_before_it_is_read(
    tmp_path: Path, kind: str
) -> None:
    # /dev/zero was read without end (3.5 GB in 30 s), a FIFO blocked forever.
    source = tmp_path / "source"
    if kind == "device":
        source = Path("/dev/zero")
    else:
        os.mkfifo(source)
    result = CliRunner().invoke(import_command, [str(source), "--out", str(tmp_path / "o.msgpack")])
    assert result.exit_code == 2
    assert "not a regular file" in result.output and result.output.count("\n") == 1
    assert not (tmp_path / "o.msgpack").exists()


def test_a_file_over_the_limit_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tcr.recorder.importers.MAX_IMPORT_BYTES", 10)
    source = tmp_path / "dump.txt"
    source.write_bytes(b"data: 0123456789\n\n")
    with pytest.raises(RecordError, match="18 bytes; import reads at most 10"):
        import_file(source)
