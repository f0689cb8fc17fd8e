"""tcr serve over real sockets: the official openai client, a raw socket, and the command."""

from __future__ import annotations

import gc
import json
import re
import signal
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT, bundled
from tcr.corpus import Recording, new_header, read_recording, write_recording
from tcr.replay.playback import Write
from tcr.replay.serve import _BATCH, ReplayServer, Served, load_recordings, running_server
from tcr.stream import decode

RECORDED = sorted((ROOT / "recorded").glob("*.msgpack"))
BIG = 200_000


def _loaded(*paths: Path) -> list[tuple[Path, Recording]]:
    return [(path, read_recording(path)) for path in paths]


def _post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    return urllib.request.urlopen(request, timeout=30)


def _raw(server: ReplayServer, path: str, body: dict[str, Any], headers: str = "") -> bytes:
    """A whole HTTP/1.1 exchange over a plain socket: what arrives, unparsed."""
    payload = json.dumps(body).encode()
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n{headers}\r\n"
    ).encode() + payload
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request)
        received = b""
        while data := sock.recv(65536):
            received += data
    return received


def _chunks(response: bytes) -> tuple[dict[str, str], list[bytes], bool]:
    """Headers, the HTTP chunks of a chunked body, and whether the last-chunk arrived."""
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")[1:]
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    assert headers["transfer-encoding"] == "chunked"
    chunks: list[bytes] = []
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return headers, chunks, True
        chunks.append(body[:size])
        assert body[size : size + 2] == b"\r\n"
        body = body[size + 2 :]
    return headers, chunks, False


def _snapshot(client: openai.OpenAI, model: str) -> Any:
    """The message as the client's own stream helper reassembles it from the deltas."""
    with client.chat.completions.stream(
        model=model, messages=[{"role": "user", "content": "replay"}]
    ) as stream:
        for _ in stream:
            pass
        return stream.current_completion_snapshot.choices[0].message


def _same_message(message: Any, recording: Recording) -> None:
    original = decode(recording)
    assert (message.content or "") == original.text, recording.id
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
    assert calls == [(c.name, c.arguments) for c in original.calls], recording.id


# --- the command, with the official client ---------------------------------------------------------


@pytest.fixture
def served_char() -> Iterator[str]:
    """``tcr serve corpora/recorded --rechunk char`` as a user starts it; its base URL."""
    command = ["tcr.cli", "serve", str(ROOT / "recorded"), "--rechunk", "char"]
    process = subprocess.Popen(
        [sys.executable, "-m", *command, "--port", "0", "--speed", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    match = re.search(r"on (http://127\.0\.0\.1:\d+) ", first)
    assert match, first + (process.stderr.read() if process.stderr else "")
    try:
        yield match.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "tcr serve: stopped" in out


@pytest.mark.slow
def test_openai_client_reassembles_every_recorded_stream_served_char_by_char(
    served_char: str,
) -> None:
    client = openai.OpenAI(base_url=served_char + "/v1", api_key="unused", max_retries=0)
    assert len(RECORDED) >= 10
    for path in RECORDED:
        recording = read_recording(path)
        _same_message(_snapshot(client, recording.id), recording)


@pytest.mark.slow
def test_openai_client_sees_one_character_per_delta(served_char: str) -> None:
    client = openai.OpenAI(base_url=served_char + "/v1", api_key="unused", max_retries=0)
    recording = read_recording(ROOT / "recorded" / "tool_call_tag_json.msgpack")
    stream = client.chat.completions.create(
        model=recording.id, messages=[{"role": "user", "content": "replay"}], stream=True
    )
    pieces = [
        c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content
    ]
    assert "".join(pieces) == decode(recording).text
    assert {len(piece) for piece in pieces} == {1}
    assert len(pieces) > len(decode(recording).content)


@pytest.mark.parametrize("rechunk", ["random", "bytes-random:3"])
@pytest.mark.slow
def test_openai_client_reassembles_every_bundled_stream(rechunk: str) -> None:
    small = [p for p in bundled() if p.stat().st_size < BIG]
    with running_server(_loaded(*small), rechunk=rechunk, speed=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
        for path in small:
            recording = read_recording(path)
            _same_message(_snapshot(client, recording.id), recording)


def test_openai_client_without_streaming_gets_the_whole_message() -> None:
    path = ROOT / "recorded" / "native_tool_calls_required.msgpack"
    with running_server(_loaded(path), speed=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
        completion = client.chat.completions.create(
            model="anything", messages=[{"role": "user", "content": "replay"}]
        )
        _same_message(completion.choices[0].message, read_recording(path))
        assert completion.choices[0].message.tool_calls


# --- the wire ---------------------------------------------------------------------------------------


def test_a_raw_socket_sees_the_transport_re_chunking() -> None:
    path = ROOT / "regressions" / "split_marker_llama_server.msgpack"
    recording = read_recording(path)
    recorded = b"".join(f.data for f in recording.frames if isinstance(f.data, bytes))
    with running_server(_loaded(path), rechunk="bytes:7", speed=0) as server:
        response = _raw(server, "/v1/chat/completions", {"stream": True})
    headers, chunks, ended = _chunks(response)
    assert b"".join(chunks) == recorded
    assert [len(c) for c in chunks[:-1]] == [7] * (len(chunks) - 1)
    assert 0 < len(chunks[-1]) <= 7
    assert ended
    assert headers["x-tcr-chunking"] == "bytes:7"
    assert headers["content-type"].startswith("text/event-stream")


def test_a_raw_socket_sees_the_recorded_reads_as_recorded() -> None:
    path = ROOT / "recorded" / "think_then_call.msgpack"
    recording = read_recording(path)
    with running_server(_loaded(path), speed=0) as server:
        _, chunks, ended = _chunks(_raw(server, "/v1/chat/completions", {"stream": True}))
    assert chunks == [frame.data for frame in recording.frames]
    assert ended


def test_an_interrupted_recording_cuts_the_connection(tmp_path: Path) -> None:
    header = new_header("sse", id="cut")
    frames = [(0, b'data: {"choices":[{"index":0,"delta":{"content":"half"}}]}\n\n')]
    write_recording(tmp_path / "cut.msgpack", header, frames, complete=False)
    with running_server(_loaded(tmp_path / "cut.msgpack"), speed=0) as server:
        _, chunks, ended = _chunks(_raw(server, "/v1/chat/completions", {"stream": True}))
    assert chunks == [frames[0][1]]
    assert not ended


def test_completion_endpoint_streams_llama_cpp_chunks() -> None:
    path = ROOT / "recorded" / "tool_call_tag_json.msgpack"  # made on chat completions
    with running_server(_loaded(path), rechunk="fixed:5", speed=0) as server:
        _, chunks, _ = _chunks(_raw(server, "/completion", {"prompt": "x", "stream": True}))
    payloads = [json.loads(c.removeprefix(b"data: ")) for c in chunks]
    assert "".join(p["content"] for p in payloads) == decode(read_recording(path)).text
    assert payloads[-1]["stop"] is True
    assert {len(p["content"]) for p in payloads[:-2]} == {5}


def test_writes_are_paced_by_the_recorded_times_over_speed(tmp_path: Path) -> None:
    header = new_header("sse", id="slow")
    frames = [(0, b"data: [DONE]\n\n"[:6]), (400 * 10**9, b"data: [DONE]\n\n"[6:])]
    write_recording(tmp_path / "slow.msgpack", header, frames)
    delays: list[float] = []

    async def sleep(delay: float) -> None:  # records what the server waits for, waits not
        delays.append(delay)

    for speed, waits in ((2, [200.0]), (0, [])):
        delays.clear()
        loaded = _loaded(tmp_path / "slow.msgpack")
        with running_server(loaded, speed=speed, sleep=sleep) as server:
            _raw(server, "/v1/chat/completions", {"stream": True})
        # The first write is due at once; the second 400 s / speed after the request,
        # less the moments spent getting there.
        assert delays == pytest.approx(waits, abs=5)


def _long_recording(path: Path, frames: int, characters: int) -> Recording:
    """``frames`` content deltas of ``characters`` each, 1,000 s apart: every write after
    the first frame's waits, however slow the machine."""
    chunk = {"choices": [{"index": 0, "delta": {"content": "x" * characters}}]}
    data = f"data: {json.dumps(chunk)}\n\n".encode()
    timed = [(n * 10**12, data) for n in range(frames)] + [(frames * 10**12, b"data: [DONE]\n\n")]
    write_recording(path, new_header("sse", id=path.stem), timed)
    return read_recording(path)


@pytest.mark.slow
def test_a_response_is_sent_as_it_is_made_never_held_whole(tmp_path: Path) -> None:
    recording = _long_recording(tmp_path / "long.msgpack", frames=8, characters=500)
    sleeps: list[float] = []
    held: list[int] = []

    def writes_alive() -> int:
        gc.collect()
        return sum(isinstance(o, Write) for o in gc.get_objects())

    before = writes_alive()  # an earlier test's, if any

    async def sleep(delay: float) -> None:  # waits not; counts the writes alive, now and then
        if len(sleeps) % 500 == 0:
            held.append(writes_alive() - before)
        sleeps.append(delay)

    loaded = [(tmp_path / "long.msgpack", recording)]
    with running_server(loaded, rechunk="char", speed=1, sleep=sleep) as server:
        _, chunks, ended = _chunks(_raw(server, "/v1/chat/completions", {"stream": True}))
    assert ended and len(chunks) == 8 * 500 + 1 > 10 * _BATCH
    assert len(held) >= 7, held
    assert 0 < max(held) <= _BATCH, held  # one batch at a time, never the 4,001 writes


# --- which recording ---------------------------------------------------------------------------------


@pytest.fixture
def three() -> Iterator[ReplayServer]:
    paths = sorted((ROOT / "regressions").glob("format_*.msgpack"))[:3]
    served: list[Served] = []
    with running_server(_loaded(*paths), rechunk="random", speed=0, on_served=served.append) as s:
        s.served = served  # type: ignore[attr-defined]
        yield s


def _served(server: ReplayServer, body: dict[str, Any], **headers: str) -> tuple[str, str]:
    with _post(server.url + "/v1/chat/completions", body, headers) as response:
        response.read()
        return response.headers["X-Tcr-Recording"], response.headers["X-Tcr-Chunking"]


def _names(server: ReplayServer) -> list[str]:
    return server.names


def test_recordings_are_named_by_their_file_stem(three: ReplayServer) -> None:
    paths = sorted((ROOT / "regressions").glob("format_*.msgpack"))[:3]
    assert _names(three) == [path.stem for path in paths]


def test_a_header_names_the_recording_by_name_file_name_or_id(three: ReplayServer) -> None:
    name = _names(three)[2]
    for asked in (name, name + ".msgpack", three.recordings[2].id):
        assert _served(three, {"stream": True}, **{"X-Tcr-Recording": asked})[0] == name


def test_a_model_equal_to_a_recording_name_or_id_chooses_it(three: ReplayServer) -> None:
    name = _names(three)[1]
    assert _served(three, {"model": name, "stream": True})[0] == name
    assert _served(three, {"model": three.recordings[1].id, "stream": True})[0] == name


def test_otherwise_recordings_answer_in_turn(three: ReplayServer) -> None:
    got = [_served(three, {"model": "gpt-4o", "stream": True}) for _ in range(4)]
    names = _names(three)
    assert [name for name, _ in got] == [*names, names[0]]
    assert [chunking for _, chunking in got] == ["random:8#0"] * 3 + ["random:8#1"]
    assert [s.chosen_by for s in three.served] == ["turn"] * 4  # type: ignore[attr-defined]


def test_an_unknown_recording_is_a_404_naming_it_and_the_known_ones(three: ReplayServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as error:
        _post(three.url + "/v1/chat/completions", {}, {"X-Tcr-Recording": "nope"})
    assert error.value.code == 404
    message = json.loads(error.value.read())["error"]["message"]
    assert f"no recording 'nope'; known: {', '.join(_names(three))}" in message


def test_a_recorded_file_is_named_by_its_stem_not_its_id(tmp_path: Path) -> None:
    # Recordings made by tcr record have opaque ids; two stems alike take their folders.
    source = ROOT / "recorded"
    recorded = sorted(source.glob("*.msgpack"))[0]
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / recorded.name).write_bytes(recorded.read_bytes())
    paths = [tmp_path / "a" / recorded.name, tmp_path / "b" / recorded.name]
    with running_server(_loaded(*paths), speed=0) as server:
        assert _names(server) == [f"a/{recorded.stem}", f"b/{recorded.stem}"]
        assert server.recordings[0].id != recorded.stem
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
        assert [m.id for m in client.models.list()] == _names(server)


def test_a_body_that_is_not_json_is_a_400(three: ReplayServer) -> None:
    request = urllib.request.Request(three.url + "/v1/chat/completions", data=b"{oops")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=30)
    assert error.value.code == 400


def test_models_lists_the_recordings(three: ReplayServer) -> None:
    client = openai.OpenAI(base_url=three.url + "/v1", api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list()] == _names(three)
    with urllib.request.urlopen(three.url + "/health", timeout=30) as response:
        assert json.load(response) == {"status": "ok"}


def test_it_binds_loopback_by_default(three: ReplayServer) -> None:
    assert [host for host, _ in three.addresses] == ["127.0.0.1"]
    assert three.url == f"http://127.0.0.1:{three.port}"


# --- bad input ----------------------------------------------------------------------------------------


def test_unreadable_recordings_are_skipped_and_named(tmp_path: Path) -> None:
    (tmp_path / "bad.msgpack").write_bytes(b"\xc1 not msgpack")
    good = tmp_path / "good.msgpack"
    good.write_bytes((ROOT / "regressions" / "format_think.msgpack").read_bytes())
    skipped: list[str] = []
    loaded = load_recordings([tmp_path], on_skipped=skipped.append)
    assert [path.name for path, _ in loaded] == ["good.msgpack"]
    assert len(skipped) == 1 and "bad.msgpack" in skipped[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rechunk", "nope"], "unknown strategy 'nope'"),
        (["--speed", "-1"], "--speed must be 0"),
        (["/no/such/dir"], "/no/such/dir"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", "0", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_directory_of_only_bad_recordings_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.msgpack").write_bytes(b"\xc1")
    result = CliRunner().invoke(main, ["serve", str(tmp_path), "--port", "0"])
    assert result.exit_code == 2
    assert "no readable recordings to serve" in result.output


def test_a_port_in_use_is_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = str(ROOT / "regressions" / "format_think.msgpack")
        result = CliRunner().invoke(main, ["serve", path, "--port", str(port)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output


BAD_REQUESTS = [  # each after "POST /v1/chat/completions HTTP/1.1"; each connection is reset
    b"X-Bad: a\x00b\r\nContent-Length: 2\r\n\r\n{}",  # a NUL in a header
    b"Content-Length: -5\r\n\r\n{}",
    b"Content-Length: 100\r\n\r\n{",  # reset before the body is whole
]


def test_each_bad_request_is_one_line_on_stderr_without_a_traceback() -> None:
    path = ROOT / "regressions" / "format_think.msgpack"
    process = subprocess.Popen(
        [sys.executable, "-m", "tcr.cli", "serve", str(path), "--port", "0", "--speed", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    lines: list[str] = []
    try:
        match = re.search(r":(\d+) ", process.stdout.readline())
        assert match, process.stderr.read()
        for rest in BAD_REQUESTS:
            with socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=30) as sock:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + rest)
                # SO_LINGER 0: closing sends a reset, not an orderly end.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            lines.append(process.stderr.readline())  # the server's line about it, awaited
    finally:
        process.send_signal(signal.SIGINT)
        _, rest_of_stderr = process.communicate(timeout=30)
    lines += rest_of_stderr.splitlines(keepends=True)
    assert len(lines) == len(BAD_REQUESTS), lines
    assert all(line.startswith("tcr serve: ") for line in lines), lines
    assert "Traceback" not in "".join(lines)
    assert "Invalid header value char" in lines[0]
    assert "Content-Length" in lines[1]
    assert "ConnectionResetError" in lines[2]
