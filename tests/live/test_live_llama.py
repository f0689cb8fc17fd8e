"""Recording from a real llama-server running SmolLM2-135M (ARCHITECTURE.md §9), on loopback.

Nothing here is a stand-in: the server is llama.cpp's own, the model is real,
and the chunking is the one its tokenizer produced.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from dialects import NATIVE_MESSAGES, TOOL_SCHEMAS
from llama_server import Server, llama_server

from tcr.corpus import iter_recordings, read_recording
from tcr.recorder import record_sync, running_proxy
from tcr.replay import run
from tcr.stream import decode

SHORT_GRAMMAR = 'root ::= "Sure. <tool_call>" [A-Z] [a-z]{2,5} "</tool_call>"'
GRAMMAR = (
    'root ::= "Let me check. <tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": '
    '{\\"city\\": \\"" [A-Z] [a-z]{2,9} "\\"}}\\n</tool_call>"'
)


def chat(prompt: str, **extra: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0,
        "seed": 11,
        "max_tokens": 64,
        **extra,
    }


def post(server_url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        server_url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        data: bytes = response.read()
        return data


def test_round_trip_decoded_content_is_what_the_server_sent(llama: Server, tmp_path: Path) -> None:
    body = chat("What is the weather in Paris?", grammar=GRAMMAR)
    result = record_sync(
        llama.url + "/v1/chat/completions", {**body, "stream": True}, tmp_path / "r.msgpack"
    )
    assert result.complete and result.status == 200 and result.kind == "sse"
    recording = read_recording(result.path)
    decoded = decode(recording)
    # The same request without streaming: the server's own answer, whole.
    direct = json.loads(post(llama.url, {**body, "stream": False}))
    assert decoded.text == direct["choices"][0]["message"]["content"]
    assert decoded.text.startswith("Let me check. <tool_call>")
    # Raw first: the frames are the body bytes as they arrived, one read each.
    assert sum(len(f.data) for f in recording.frames) == result.byte_count
    assert [f.t_ns for f in recording.frames] == sorted(f.t_ns for f in recording.frames)
    # The tokenizer split the marker: no content delta holds it whole.
    assert not any("<tool_call>" in piece for piece in decoded.content)
    assert run([result.path], runs=20).exit_code == 0


def test_native_tool_calls_are_assembled_exactly(llama_native: Server, tmp_path: Path) -> None:
    caps = llama_native.props()["chat_template_caps"]
    assert isinstance(caps, dict) and caps["supports_tool_calls"]
    body = {"messages": NATIVE_MESSAGES, "tools": TOOL_SCHEMAS, "temperature": 0, "max_tokens": 64}
    result = record_sync(
        llama_native.url + "/v1/chat/completions", {**body, "stream": True}, tmp_path / "n.msgpack"
    )
    assert result.complete
    calls = decode(read_recording(result.path)).calls
    direct = json.loads(post(llama_native.url, {**body, "stream": False}))
    expected = direct["choices"][0]["message"]["tool_calls"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        (e["function"]["name"], json.loads(e["function"]["arguments"])) for e in expected
    ]
    assert calls and calls[0].name == "get_weather"


def test_twenty_concurrent_clients_through_the_proxy_get_the_upstream_bytes(
    llama: Server, tmp_path: Path
) -> None:
    cities = ["Paris", "Oslo", "Rome", "Lima", "Kyiv"]
    bodies = [
        chat(f"Client {n}: weather in {cities[n % 5]}?", grammar=SHORT_GRAMMAR, stream=True)
        for n in range(20)
    ]
    received: dict[int, bytes] = {}
    errors: list[BaseException] = []
    out = tmp_path / "proxied"
    # Twenty requests queue for llama-server's few slots: on a loaded 2-core machine
    # the last one waits longer for its first byte than the proxy's default 120 s
    # read timeout, and the proxy rightly answers 504. Waiting is not what is tested.
    with running_proxy(llama.url, out, timeout=600) as proxy:
        proxy_url = f"http://127.0.0.1:{proxy.port}"

        def client(n: int) -> None:
            try:
                received[n] = post(proxy_url, bodies[n])
            except BaseException as error:  # reported below, with the others
                errors.append(error)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
    assert not errors, errors
    recordings = [read_recording(p) for p in iter_recordings([out])]
    assert len(recordings) == 20 and all(r.complete for r in recordings)
    by_prompt = {r.header["request"]["messages"][0]["content"]: r for r in recordings}
    for n, body in enumerate(bodies):
        recording = by_prompt[body["messages"][0]["content"]]
        # What the client got is exactly what the proxy read from upstream.
        assert b"".join(f.data for f in recording.frames) == received[n]  # type: ignore[misc]
    # And it has the shape a direct connection gets. (Not the same words: with
    # four requests batched together llama.cpp's sampling is not bit-exact.)
    direct = decode_text(post(llama.url, bodies[0]))
    pattern = re.compile(r"Sure\. <tool_call>[A-Z][a-z]{2,5}</tool_call>")
    assert pattern.fullmatch(direct)
    assert all(pattern.fullmatch(decode_text(body)) for body in received.values())


def decode_text(body: bytes) -> str:
    from tcr.stream import decode_bytes

    return decode_bytes("sse", [body]).text


def test_server_dying_mid_stream_keeps_what_arrived_and_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "cut.msgpack"
    with llama_server() as server:
        body = tmp_path / "body.json"
        body.write_text(json.dumps(chat("Tell me a long story about Paris.", max_tokens=2000)))
        tcr = Path(sys.executable).with_name("tcr")
        recorder = subprocess.Popen(
            [str(tcr), "record", "--endpoint", server.url + "/v1/chat/completions",
             "--request", str(body), "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 4000):
            time.sleep(0.05)
        server.process.kill()  # the backend dies mid-stream
        _, stderr = recorder.communicate(timeout=120)
    assert recorder.returncode == 2
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr
    recording = read_recording(out)
    assert not recording.complete
    assert recording.incomplete_reason and "disconnect" in recording.incomplete_reason
    assert len(recording.frames) > 10
    assert decode(recording).text  # what arrived is still readable content


def test_refused_connection_is_a_one_line_error(tmp_path: Path) -> None:
    from llama_server import free_port

    tcr = Path(sys.executable).with_name("tcr")
    done = subprocess.run(
        [str(tcr), "record", "--endpoint", f"http://127.0.0.1:{free_port()}/v1/chat/completions",
         "--prompt", "hi", "--out", str(tmp_path / "x.msgpack")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
