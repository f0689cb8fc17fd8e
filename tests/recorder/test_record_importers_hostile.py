"""``tcr import`` on hostile captures: every one is a clean import, or one line on
stderr naming what and where with exit status 2, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from corpus.fuzzing import clean_or_one_line_error, fuzz_settings
from hypothesis import example, given
from hypothesis import strategies as st

from tcr.commands.importer import import_command
from tcr.corpus import read_recording
from tcr.recorder import import_file
from tcr.stream import decode

URL = "http://127.0.0.1:8080/v1/chat/completions"
SSE_TEXT = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'


def har(
    *,
    url: str = URL,
    post: str | None = None,
    text: str = SSE_TEXT,
    timings: dict[str, Any] | None = None,
) -> str:
    """A HAR of one streamed entry, with only the fields tcr reads."""
    request: dict[str, Any] = {"method": "POST", "url": url}
    if post is not None:
        request["postData"] = {"mimeType": "application/json", "text": post}
    response = {
        "status": 200,
        "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
        "content": {"mimeType": "text/event-stream", "text": text},
    }
    entry = {"request": request, "response": response, "timings": timings or {"wait": 5}}
    return json.dumps({"log": {"entries": [entry]}})


HOSTILE = {
    "t-nan.jsonl": ('{"chunk":"a","t":NaN}\n', r"chunk 0: 't' is nan"),
    "t-infinity.jsonl": ('{"chunk":"a","t":Infinity}\n', r"chunk 0: 't' is inf"),
    "t-1e300.jsonl": ('{"chunk":"a","t":1e300}\n', r"chunk 0: 't' is 1e\+300"),
    "t-ns-huge.jsonl": ('{"chunk":"a","t_ns":99999999999999999999}\n', r"chunk 0: 't_ns' is"),
    "brackets.json": ("[" * 100_000, r"brackets\.json: JSON nested too deeply"),
    "brackets-lines.jsonl": ('"a"\n' + "[" * 100_000 + "\n", r"line 2: JSON nested too deeply"),
    "timing-1e308.har": (har(timings={"wait": 1e308}), r"entry 0: timings\.wait is 1e\+308"),
    "post-600-deep.har": (
        har(post='{"a":' * 600 + "1" + "}" * 600),
        r"entry 0: request\.postData\.text nests deeper than",
    ),
    "post-100000-deep.har": (
        har(post="[" * 100_000),
        r"entry 0: request\.postData\.text nests deeper than",
    ),
    "url-ipv6.har": (har(url="http://[::1"), r"entry 0: request\.url 'http://\[::1' is not"),
    "url-port.har": (har(url="http://127.0.0.1:99999999/v1"), r"entry 0: request\.url .* is not"),
    "url-idna.har": (har(url="http://a\u3002\u3002b/v1"), r"entry 0: request\.url .* is not"),
    "tools-function-5.har": (
        har(post=json.dumps({"model": "m", "tools": [{"function": 5}]})),
        r"entry 0: request 'tools\[0\]\.function' is int, not an object",
    ),
    "content-surrogate.har": (
        har(text=SSE_TEXT + "\ud800"),
        r"entry 0: response\.content\.text holds a lone surrogate \(U\+D800\) at character 72",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_capture_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    content, message = HOSTILE[name]
    (tmp_path / name).write_text(content, encoding="utf-8", errors="surrogatepass")
    result = CliRunner().invoke(import_command, [str(tmp_path / name)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("tcr import: ")
    assert name in result.stderr
    assert re.search(message, result.stderr), result.stderr


def test_a_har_mime_type_that_is_not_a_string_is_ignored(tmp_path: Path) -> None:
    document = json.loads(har())
    response = document["log"]["entries"][0]["response"]
    response["headers"], response["content"]["mimeType"] = None, 1
    (tmp_path / "mime.har").write_text(json.dumps(document))
    [imported] = import_file(tmp_path / "mime.har")
    assert decode(read_recording(imported.path)).text == "hi"


def test_a_surrogate_pair_split_between_two_chunks_is_rejoined(tmp_path: Path) -> None:
    lines = ['{"chunk":"hi \\ud83d"}', '{"chunk":"\\ude00!"}', '{"chunk":"\\udc00"}']
    (tmp_path / "emoji.jsonl").write_text("\n".join(lines) + "\n")
    [imported] = import_file(tmp_path / "emoji.jsonl")
    chunks = [frame.data for frame in read_recording(imported.path).frames]
    assert chunks == ["hi ", "\U0001f600!", "\ufffd"]


# --- fuzzing ----------------------------------------------------------------------

TEXTS = st.text(
    st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    max_size=10,
)
NUMBERS = st.one_of(st.integers(), st.floats(), st.sampled_from([1e308, -1.0, 2**64]))
JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXTS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=8,
)
URLS = st.one_of(
    st.just(URL),
    TEXTS,
    st.builds(lambda host, port: f"http://{host}:{port}/v1/chat/completions", TEXTS, NUMBERS),
    st.sampled_from(["http://[::1", "http://xn--/", "http://a\u3002\u3002b/", "//", ":"]),
)
STREAM_TEXTS = st.one_of(
    st.just(SSE_TEXT), TEXTS, st.builds(lambda a, b: a + b, st.just(SSE_TEXT), TEXTS)
)


@st.composite
def hars(draw: st.DrawFn) -> str:
    post = draw(
        st.none()
        | TEXTS
        | st.builds(json.dumps, JSON)
        | st.builds(lambda t: json.dumps({"model": "m", "tools": t}), JSON)
        | st.integers(0, 3000).map(lambda n: "[" * n + "]" * n)
    )
    timings = draw(st.dictionaries(st.sampled_from(["wait", "dns", "send"]), NUMBERS))
    document = json.loads(
        har(url=draw(URLS), post=post, text=draw(STREAM_TEXTS), timings=timings or None)
    )
    entry = document["log"]["entries"][0]
    for path, value in draw(st.lists(st.tuples(st.sampled_from(FIELDS), JSON), max_size=3)):
        *parents, leaf = path
        target = entry
        for key in parents:
            target = target[key] if isinstance(target, dict) else None
        if isinstance(target, dict):
            target[leaf] = value
    return json.dumps(document)


FIELDS = [
    ("request", "method"),
    ("request", "url"),
    ("request", "postData"),
    ("response", "status"),
    ("response", "statusText"),
    ("response", "headers"),
    ("response", "content"),
    ("response", "content", "encoding"),
    ("response", "content", "mimeType"),
    ("timings",),
    ("startedDateTime",),
]

CHUNK_LINES = st.one_of(
    st.builds(json.dumps, JSON),
    st.builds(
        lambda text, t, key: json.dumps({"chunk": text, key: t}),
        TEXTS,
        NUMBERS,
        st.sampled_from(["t", "t_ns"]),
    ),
    TEXTS,
)
CURL_DUMPS = st.builds(
    lambda status, headers, body: (
        f"HTTP/1.1 {status}\r\n{headers}\r\n\r\n".encode("utf-8", "surrogatepass") + body
    ),
    st.one_of(st.integers(), TEXTS, st.sampled_from(["200 OK", "100 Continue\r\n\r\n", "²"])),
    st.one_of(TEXTS, st.just("Content-Type: text/event-stream")),
    st.one_of(st.binary(max_size=60), st.just(SSE_TEXT.encode())),
)


def import_and_read(path: Path, out: Path) -> None:
    for imported in import_file(path, out):
        decode(read_recording(imported.path))


def fuzz_import(tmp_path: Path, content: bytes, suffix: str) -> None:
    source = tmp_path / f"capture{suffix}"
    source.write_bytes(content)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    clean_or_one_line_error(lambda: import_and_read(source, out))


@pytest.mark.slow
@fuzz_settings(150)
@given(document=hars())
def test_hostile_hars_import_cleanly_or_fail_in_one_line(tmp_path: Path, document: str) -> None:
    fuzz_import(tmp_path, document.encode("utf-8", "surrogatepass"), ".har")


@pytest.mark.slow
@fuzz_settings(150)
@given(lines=st.lists(CHUNK_LINES, min_size=1, max_size=5))
# seconds that are finite but infinite in nanoseconds (CI found it: OverflowError)
@example(lines=['{"chunk": "", "t": -1.797693134862316e+299}'])
def test_hostile_json_lines_import_cleanly_or_fail_in_one_line(
    tmp_path: Path, lines: list[str]
) -> None:
    fuzz_import(tmp_path, "\n".join(lines).encode("utf-8", "surrogatepass"), ".jsonl")


@pytest.mark.slow
@fuzz_settings(150)
@given(dump=st.one_of(CURL_DUMPS, st.binary(max_size=200)))
def test_hostile_curl_dumps_import_cleanly_or_fail_in_one_line(tmp_path: Path, dump: bytes) -> None:
    fuzz_import(tmp_path, dump, ".txt")
