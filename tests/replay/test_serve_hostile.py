"""``tcr serve`` against hostile names and clients (issue 36, items 7 and 11)."""

from __future__ import annotations

import gc
import json
import os
import socket
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import traced_peak
from test_serve import _chunks, _loaded, _raw

from tcr.corpus import Recording, new_header, read_recording, write_recording
from tcr.rechunk import parse_strategy
from tcr.replay import serve as serve_module
from tcr.replay.playback import Playing, Write, playing
from tcr.replay.serve import running_server

DONE = b"data: [DONE]\n\n"
CHAR = parse_strategy("char")
CONTENT = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'


@pytest.mark.parametrize(
    ("stem", "named"),
    [
        (b"cut\r\nX-Injected: 1", "cut\\x0d\\x0aX-Injected: 1"),
        (b"tab\there\x7f", "tab\\x09here\\x7f"),
        (b"not-utf8-\xff", "not-utf8-\\xff"),
    ],
    ids=["crlf", "controls", "not-utf8"],
)
def test_a_recording_whose_file_name_cannot_be_a_header_is_served_by_its_escaped_name(
    tmp_path: Path, stem: bytes, named: str
) -> None:
    path = Path(os.fsdecode(bytes(tmp_path) + b"/" + stem + b".msgpack"))
    write_recording(path, new_header("sse", id="plain"), [(0, CONTENT), (1, DONE)])
    with running_server(_loaded(path), speed=0) as server:
        assert server.names == [named]
        response = _raw(server, "/v1/chat/completions", {"stream": True})
        asked = _raw(
            server,
            "/v1/chat/completions",
            {"stream": True},
            headers=f"X-Tcr-Recording: {named}\r\n",
        )
    assert response.startswith(b"HTTP/1.1 200 ") and asked.startswith(b"HTTP/1.1 200 "), response
    headers, chunks, ended = _chunks(response)
    assert headers["x-tcr-recording"] == named and "x-injected" not in headers
    assert b"".join(chunks) == CONTENT + DONE and ended
    assert json.loads(CONTENT[6:])  # the body is the recording's, unchanged


# --- memory: what one answer holds (item 7) ---------------------------------------------------------

EVENTS = 5_000  # one character each: a delta per event is a megabyte, the content 5 kB


@pytest.fixture(scope="module")
def many_events(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    path = tmp_path_factory.mktemp("many") / "many.msgpack"
    event = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    frames = [(n, event) for n in range(EVENTS)] + [(EVENTS, DONE)]
    write_recording(path, new_header("sse", id="many"), frames)
    return read_recording(path)


def taken(played: Playing) -> int:
    return sum(len(write.data) for write in played.writes)


@pytest.mark.slow  # traced: every allocation of a char-level answer of 5,000 events
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not-streamed"])
def test_an_answer_holds_no_delta_per_event_of_the_recording(
    many_events: Recording, stream: bool
) -> None:
    def answer() -> int:
        return taken(playing(many_events, "chat", strategy=CHAR, stream=stream))

    # A delta kept per event is over 100 bytes each, 0.5 to 1 MB here; the answer's own
    # state is under 100 kB whatever the recording's length.
    assert traced_peak(answer) < 300_000


def test_a_non_streamed_answer_is_the_whole_message_in_pieces(many_events: Recording) -> None:
    played = playing(many_events, "chat", stream=False)
    writes = list(played.writes)
    message = json.loads(b"".join(w.data for w in writes))["choices"][0]["message"]
    assert message["content"] == "x" * EVENTS and played.status == 200


def _settled(value: Callable[[], int], polls: int = 20) -> int:
    """``value()`` once it has not changed for ``polls`` looks in a row (no clock judged)."""
    seen, same = value(), 0
    while same < polls:
        time.sleep(0.05)
        now = value()
        seen, same = now, same + 1 if now == seen else 0
    return seen


def test_a_client_that_does_not_read_stops_the_writes_and_leaving_drops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]}
    event = f"data: {json.dumps(chunk)}\n\n".encode()
    path = tmp_path / "long.msgpack"
    write_recording(path, new_header("sse", id="long"), [(0, event)] * 1000 + [(0, DONE)])
    made: list[int] = []
    held: list[weakref.ref[Iterator[Write]]] = []
    next_batch = serve_module._next_batch

    def counted(writes: Iterator[Write]) -> list[Write]:
        if not held:
            held.append(weakref.ref(writes))
        batch = next_batch(writes)
        made.append(len(batch))
        return batch

    monkeypatch.setattr(serve_module, "_next_batch", counted)
    payload = json.dumps({"stream": True}).encode()
    request = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    with running_server(_loaded(path), rechunk="char", speed=0) as server:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(request)  # and never reads
        stalled = _settled(lambda: sum(made))
        # A million writes of about 100 bytes: it stops at what the socket buffers hold.
        assert 0 < stalled < 100_000, stalled
        sock.close()
        _settled(lambda: sum(made))
        gc.collect()
        assert held and held[0]() is None  # the answer's writes are gone with the client
